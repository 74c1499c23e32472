//===- Escape.cpp - The one way to print text that came from input --------===//

#include "IPU/Support/Escape.h"

#include <cstdint>
#include <cstdio>

using namespace ipu;

namespace {

/// The length of the valid UTF-8 sequence starting at `text[i]` (1 for
/// ASCII), or 0 when the bytes there are not one; its code point in
/// `codePoint`.
size_t utf8Length(std::string_view text, size_t i, uint32_t &codePoint) {
  const auto byte = [&](size_t k) { return static_cast<uint8_t>(text[k]); };
  const uint8_t lead = byte(i);
  codePoint = lead;
  if (lead < 0x80)
    return 1;
  size_t length;
  if (lead >= 0xC2 && lead <= 0xDF)
    length = 2, codePoint = lead & 0x1F;
  else if (lead >= 0xE0 && lead <= 0xEF)
    length = 3, codePoint = lead & 0x0F;
  else if (lead >= 0xF0 && lead <= 0xF4)
    length = 4, codePoint = lead & 0x07;
  else
    return 0;
  if (i + length > text.size())
    return 0;
  for (size_t k = 1; k < length; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80)
      return 0;
    codePoint = (codePoint << 6) | (byte(i + k) & 0x3F);
  }
  // Overlong forms, surrogates and code points past U+10FFFF.
  static const uint32_t kSmallest[] = {0, 0, 0x80, 0x800, 0x10000};
  if (codePoint < kSmallest[length] || (codePoint >= 0xD800 && codePoint <= 0xDFFF) ||
      codePoint > 0x10FFFF)
    return 0;
  return length;
}

/// Code points that print as nothing or as a space, or that reorder what
/// follows: every format character (category Cf, Unicode 15: the bidi
/// embeddings, overrides and isolates U+202A-U+202E and U+2066-U+2069,
/// the marks U+200E, U+200F and U+061C, zero-width U+200B-U+200D, U+2060,
/// U+FEFF, tags...), the line and paragraph separators, every space but
/// U+0020, and the invisible fillers and variation selectors. A name
/// holding one can reverse or split a report line on a terminal, or look
/// like another name. Other look-alikes (Cyrillic 'a' for Latin 'a') stay:
/// they can only spell a different name, never change a line's tokens
/// (keys are ASCII and ours, '=' and '"' inside a value are escaped), and
/// escaping all non-ASCII would garble every non-English name.
bool isInvisible(uint32_t codePoint) {
  static const uint32_t kRanges[][2] = {
      {0xA0, 0xA0},       {0xAD, 0xAD},       {0x34F, 0x34F},     {0x600, 0x605},
      {0x61C, 0x61C},     {0x6DD, 0x6DD},     {0x70F, 0x70F},     {0x890, 0x891},
      {0x8E2, 0x8E2},     {0x115F, 0x1160},   {0x1680, 0x1680},   {0x17B4, 0x17B5},
      {0x180B, 0x180F},   {0x2000, 0x200F},   {0x2028, 0x202F},   {0x205F, 0x206F},
      {0x3000, 0x3000},   {0x3164, 0x3164},   {0xFE00, 0xFE0F},   {0xFEFF, 0xFEFF},
      {0xFFA0, 0xFFA0},   {0xFFF9, 0xFFFB},   {0x110BD, 0x110BD}, {0x110CD, 0x110CD},
      {0x13430, 0x1343F}, {0x1BCA0, 0x1BCA3}, {0x1D173, 0x1D17A}, {0xE0001, 0xE0001},
      {0xE0020, 0xE007F}, {0xE0100, 0xE01EF}};
  for (const auto &range : kRanges)
    if (codePoint >= range[0] && codePoint <= range[1])
      return true;
  return false;
}

/// Whether the UTF-8 sequence of `length` bytes at `text[i]` is a C1
/// control character (U+0080-U+009F: 0xC2 0x80-0x9F).
bool isC1Control(std::string_view text, size_t i, size_t length) {
  return length == 2 && static_cast<uint8_t>(text[i]) == 0xC2 &&
         static_cast<uint8_t>(text[i + 1]) <= 0x9F;
}

std::string hexEscape(const char *format, unsigned value) {
  char escaped[16];
  std::snprintf(escaped, sizeof(escaped), format, value);
  return escaped;
}

/// Appends `text` to `out`: valid UTF-8 other than C1 controls and
/// invisible code points as it is; each invisible code point as
/// `escapeCodePoint` spells it, each other unit (one byte, or a C1
/// control's two) as `escape` does.
template <typename Escape, typename EscapeCodePoint>
void appendEscaped(std::string_view text, std::string &out, Escape escape,
                   EscapeCodePoint escapeCodePoint) {
  for (size_t i = 0; i < text.size();) {
    uint32_t codePoint = 0;
    const size_t length = utf8Length(text, i, codePoint);
    if (length > 1 && isInvisible(codePoint))
      escapeCodePoint(codePoint, out);
    else if (length > 1 && !isC1Control(text, i, length))
      out.append(text.substr(i, length));
    else
      escape(text.substr(i, length > 1 ? length : 1), out);
    i += length > 1 ? length : 1;
  }
}

} // namespace

std::string ipu::escapeText(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  appendEscaped(text, out, [](std::string_view unit, std::string &out) {
    const uint8_t c = static_cast<uint8_t>(unit[0]);
    switch (unit.size() == 1 ? c : 0) {
    case '\\': out += "\\\\"; return;
    case '\n': out += "\\n"; return;
    case '\r': out += "\\r"; return;
    case '\t': out += "\\t"; return;
    default: break;
    }
    if (unit.size() == 1 && c >= 0x20 && c < 0x7F) {
      out += static_cast<char>(c);
      return;
    }
    for (char byte : unit) // Control bytes, stray bytes, a C1 control's two.
      out += hexEscape("\\x%02x", static_cast<uint8_t>(byte));
  }, [](uint32_t codePoint, std::string &out) {
    out += hexEscape("\\u{%04x}", codePoint);
  });
  return out;
}

std::string ipu::reportValue(std::string_view value) {
  // No value holds '=': no `key=value` can hide inside one.
  std::string escaped;
  for (char c : escapeText(value))
    escaped += c == '=' ? std::string("\\x3d") : std::string(1, c);
  bool plain = !escaped.empty();
  for (char c : escaped)
    if (c == ' ' || c == '"')
      plain = false;
  if (plain)
    return escaped;
  std::string quoted = "\"";
  for (char c : escaped) {
    if (c == '"')
      quoted += '\\';
    quoted += c;
  }
  return quoted + "\"";
}

std::string ipu::jsonString(std::string_view text) {
  std::string out = "\"";
  appendEscaped(text, out, [](std::string_view unit, std::string &out) {
    // A C1 control as the code point it is; a byte outside valid UTF-8 as
    // the Latin-1 character it would be.
    const uint8_t c = static_cast<uint8_t>(unit.size() == 2 ? unit[1] : unit[0]);
    if (unit.size() == 1 && (c == '"' || c == '\\')) {
      out += '\\';
      out += static_cast<char>(c);
    } else if (unit.size() == 2 || c < 0x20 || c >= 0x7F || c == '<' || c == '>' ||
               c == '&') {
      out += hexEscape("\\u%04x", c);
    } else {
      out += static_cast<char>(c);
    }
  }, [](uint32_t codePoint, std::string &out) {
    if (codePoint < 0x10000) {
      out += hexEscape("\\u%04x", codePoint);
      return;
    }
    const uint32_t offset = codePoint - 0x10000; // A surrogate pair.
    out += hexEscape("\\u%04x", 0xD800 + (offset >> 10));
    out += hexEscape("\\u%04x", 0xDC00 + (offset & 0x3FF));
  });
  return out + "\"";
}
