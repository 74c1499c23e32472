//===- Escape.cpp - The one way to print text that came from input --------===//

#include "IPU/Support/Escape.h"

#include <cstdint>
#include <cstdio>

using namespace ipu;

namespace {

/// The length of the valid UTF-8 sequence starting at `text[i]` (1 for
/// ASCII), or 0 when the bytes there are not one.
size_t utf8Length(std::string_view text, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<uint8_t>(text[k]); };
  const uint8_t lead = byte(i);
  if (lead < 0x80)
    return 1;
  size_t length;
  uint32_t codePoint;
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

/// Whether the UTF-8 sequence of `length` bytes at `text[i]` is a C1
/// control character (U+0080-U+009F: 0xC2 0x80-0x9F).
bool isC1Control(std::string_view text, size_t i, size_t length) {
  return length == 2 && static_cast<uint8_t>(text[i]) == 0xC2 &&
         static_cast<uint8_t>(text[i + 1]) <= 0x9F;
}

std::string hexEscape(const char *format, unsigned value) {
  char escaped[8];
  std::snprintf(escaped, sizeof(escaped), format, value);
  return escaped;
}

/// Appends `text` to `out`: valid UTF-8 other than C1 controls as it is,
/// and each other unit (one byte, or a C1 control's two) as `escape`
/// spells it.
template <typename Escape>
void appendEscaped(std::string_view text, std::string &out, Escape escape) {
  for (size_t i = 0; i < text.size();) {
    const size_t length = utf8Length(text, i);
    if (length > 1 && !isC1Control(text, i, length))
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
  });
  return out + "\"";
}
