//===- EscapeTest.cpp - Untrusted text on one printable line -------------===//

#include "IPU/Support/Escape.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <map>
#include <random>
#include <string>
#include <vector>

using namespace ipu;

namespace {

/// Whether `text` holds no control character (C0, DEL, C1 as UTF-8) and
/// no line break.
bool printableLine(const std::string &text) {
  for (size_t i = 0; i < text.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c < 0x20 || c == 0x7F)
      return false;
    if (c == 0xC2 && i + 1 < text.size() &&
        static_cast<unsigned char>(text[i + 1]) <= 0x9F)
      return false;
  }
  return true;
}

TEST(Escape, NewlinesAndEscapesAreSpelledOut) {
  EXPECT_EQ(escapeText("mm0\nnumericalTest=PASS"), "mm0\\nnumericalTest=PASS");
  EXPECT_EQ(escapeText("a\x1b[31mred"), "a\\x1b[31mred");
  EXPECT_EQ(escapeText("tab\there\r"), "tab\\there\\r");
  EXPECT_EQ(escapeText("back\\slash"), "back\\\\slash");
  EXPECT_EQ(escapeText(std::string("nul\0x", 5)), "nul\\x00x");
  EXPECT_EQ(escapeText("del\x7f"), "del\\x7f");
  // Valid UTF-8 stays; a C1 control (CSI, U+009B) and stray bytes do not.
  EXPECT_EQ(escapeText("caf\xc3\xa9"), "caf\xc3\xa9");
  EXPECT_EQ(escapeText("\xc2\x9b" "2J"), "\\xc2\\x9b2J");
  EXPECT_EQ(escapeText("\xff\xc3"), "\\xff\\xc3");
  EXPECT_EQ(escapeText("\xe0\x80\x80"), "\\xe0\\x80\\x80"); // Overlong.
}

TEST(Escape, ReportValuesAreOneToken) {
  EXPECT_EQ(reportValue("mm0"), "mm0");
  EXPECT_EQ(reportValue(""), "\"\"");
  EXPECT_EQ(reportValue("a b"), "\"a b\"");
  EXPECT_EQ(reportValue("x=1"), "x\\x3d1");
  EXPECT_EQ(reportValue("x = 1"), "\"x \\x3d 1\"");
  EXPECT_EQ(reportValue("say \"hi\""), "\"say \\\"hi\\\"\"");
  EXPECT_EQ(reportValue("w\nnumericalTest=PASS"), "w\\nnumericalTest\\x3dPASS");
  EXPECT_EQ(reportValue("ends\\"), "ends\\\\");
}

TEST(Escape, JsonStringsAreValidAndScriptSafe) {
  EXPECT_EQ(jsonString("a\"b\\c"), "\"a\\\"b\\\\c\"");
  EXPECT_EQ(jsonString("x\ny\x1b"), "\"x\\u000ay\\u001b\"");
  EXPECT_EQ(jsonString("</script>"), "\"\\u003c/script\\u003e\"");
  EXPECT_EQ(jsonString("caf\xc3\xa9"), "\"caf\xc3\xa9\"");
  EXPECT_EQ(jsonString("\xc2\x9b"), "\"\\u009b\"");
  EXPECT_EQ(jsonString("\xff"), "\"\\u00ff\"");
}

TEST(Escape, AnyBytesBecomeOnePrintableLine) {
  // Property: whatever the bytes, each form is one printable line, a report
  // value has no unquoted space or '=', and escapeText is injective on
  // the samples (distinct inputs, distinct outputs).
  std::mt19937 random(7);
  std::map<std::string, std::string> seen;
  for (int trial = 0; trial < 20000; ++trial) {
    std::string text(random() % 12, '\0');
    for (char &c : text)
      c = static_cast<char>(random() % 4 == 0 ? random() % 0x20 : random() % 256);
    const std::string escaped = escapeText(text);
    ASSERT_TRUE(printableLine(escaped)) << escaped;
    ASSERT_TRUE(printableLine(reportValue(text)));
    ASSERT_TRUE(printableLine(jsonString(text)));
    const std::string value = reportValue(text);
    ASSERT_EQ(value.find('='), std::string::npos) << value;
    if (value.front() != '"')
      ASSERT_EQ(value.find(' '), std::string::npos) << value;
    auto [at, inserted] = seen.emplace(escaped, text);
    ASSERT_TRUE(inserted || at->second == text) << "two inputs escape to " << escaped;
  }
}

/// Every format character (category Cf), from Python's unicodedata
/// (Unicode 14.0) plus Unicode 15's U+13439-U+1343F: kept apart from the
/// escaper's own table, so that a gap in it shows.
const std::vector<std::pair<uint32_t, uint32_t>> kFormatCharacters = {
    {0xAD, 0xAD},     {0x600, 0x605},     {0x61C, 0x61C},     {0x6DD, 0x6DD},
    {0x70F, 0x70F},   {0x890, 0x891},     {0x8E2, 0x8E2},     {0x180E, 0x180E},
    {0x200B, 0x200F}, {0x202A, 0x202E},   {0x2060, 0x2064},   {0x2066, 0x206F},
    {0xFEFF, 0xFEFF}, {0xFFF9, 0xFFFB},   {0x110BD, 0x110BD}, {0x110CD, 0x110CD},
    {0x13430, 0x1343F}, {0x1BCA0, 0x1BCA3}, {0x1D173, 0x1D17A}, {0xE0001, 0xE0001},
    {0xE0020, 0xE007F}};

bool isFormatCharacter(uint32_t codePoint) {
  for (const auto &[first, last] : kFormatCharacters)
    if (codePoint >= first && codePoint <= last)
      return true;
  return false;
}

std::string utf8(uint32_t codePoint) {
  std::string out;
  if (codePoint < 0x80) {
    out += char(codePoint);
  } else if (codePoint < 0x800) {
    out += char(0xC0 | codePoint >> 6);
    out += char(0x80 | (codePoint & 0x3F));
  } else if (codePoint < 0x10000) {
    out += char(0xE0 | codePoint >> 12);
    out += char(0x80 | (codePoint >> 6 & 0x3F));
    out += char(0x80 | (codePoint & 0x3F));
  } else {
    out += char(0xF0 | codePoint >> 18);
    out += char(0x80 | (codePoint >> 12 & 0x3F));
    out += char(0x80 | (codePoint >> 6 & 0x3F));
    out += char(0x80 | (codePoint & 0x3F));
  }
  return out;
}

/// The code points of `text`, which is valid UTF-8 (each escaped form is:
/// it is ASCII plus the valid sequences it kept).
std::vector<uint32_t> codePoints(const std::string &text) {
  std::vector<uint32_t> points;
  for (size_t i = 0; i < text.size();) {
    const unsigned char lead = static_cast<unsigned char>(text[i]);
    const size_t length = lead < 0x80 ? 1 : lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : 4;
    uint32_t point = length == 1 ? lead : lead & (0x7F >> length);
    for (size_t k = 1; k < length && i + k < text.size(); ++k)
      point = point << 6 | (static_cast<unsigned char>(text[i + k]) & 0x3F);
    points.push_back(point);
    i += length;
  }
  return points;
}

TEST(Escape, FormatCharactersAreSpelledOut) {
  // A right-to-left override would show "PASS=tseTlacirem" reversed.
  EXPECT_EQ(escapeText("k\xe2\x80\xae" "SSAP"), "k\\u{202e}SSAP");
  EXPECT_EQ(escapeText("a\xe2\x81\xa6" "b\xe2\x81\xa9"), "a\\u{2066}b\\u{2069}");
  EXPECT_EQ(escapeText("\xef\xbb\xbfx"), "\\u{feff}x");
  EXPECT_EQ(escapeText("\xf3\xa0\x80\x81"), "\\u{e0001}");
  // Look-alike spaces split a value where none shows; a value with one is
  // one token.
  EXPECT_EQ(reportValue("a\xc2\xa0numericalTest=PASS"), "a\\u{00a0}numericalTest\\x3dPASS");
  EXPECT_EQ(escapeText("a\xe2\x80\xa8" "b"), "a\\u{2028}b");
  EXPECT_EQ(jsonString("\xe2\x80\xae"), "\"\\u202e\"");
  EXPECT_EQ(jsonString("\xf3\xa0\x80\x81"), "\"\\udb40\\udc01\"");
  // Other non-ASCII text, look-alike letters included, stays readable.
  EXPECT_EQ(escapeText("caf\xc3\xa9 \xd0\xb0"), "caf\xc3\xa9 \xd0\xb0");
  // The escape is injective: its own spelling is escaped again.
  EXPECT_EQ(escapeText("\\u{202e}"), "\\\\u{202e}");
}

// Property: every format character, alone or between other text, leaves
// each escaped form without any format character, and escapeText and
// jsonString name its code point.
TEST(Escape, NoFormatCharacterSurvivesAnyForm) {
  std::mt19937 random(11);
  size_t checked = 0;
  for (const auto &[first, last] : kFormatCharacters)
    for (uint32_t point = first; point <= last; ++point) {
      const std::string text = "x" + utf8(point) + utf8(0x20 + random() % 0x5F) +
                               utf8(0xA1 + random() % 0x5E);
      for (const std::string &escaped :
           {escapeText(text), reportValue(text), jsonString(text)})
        for (uint32_t kept : codePoints(escaped))
          ASSERT_FALSE(isFormatCharacter(kept))
              << std::hex << "U+" << point << " left U+" << kept << " in " << escaped;
      char name[16];
      std::snprintf(name, sizeof(name), "\\u{%04x}", point);
      EXPECT_NE(escapeText(text).find(name), std::string::npos) << escapeText(text);
      if (point < 0x10000) {
        std::snprintf(name, sizeof(name), "\\u%04x", point);
        EXPECT_NE(jsonString(text).find(name), std::string::npos) << jsonString(text);
      }
      ++checked;
    }
  EXPECT_EQ(checked, 170u); // Unicode 15's Cf count.
}

// Property: random valid UTF-8 over the whole code space never lets a
// format character through escapeText or jsonString.
TEST(Escape, RandomTextKeepsNoFormatCharacter) {
  std::mt19937 random(13);
  for (int trial = 0; trial < 20000; ++trial) {
    std::string text;
    for (int k = random() % 8; k > 0; --k) {
      uint32_t point = random() % 0x110000;
      if (point >= 0xD800 && point <= 0xDFFF)
        point = 0x202E; // No surrogates in UTF-8; a likely attack instead.
      text += utf8(point);
    }
    for (const std::string &escaped : {escapeText(text), jsonString(text)})
      for (uint32_t kept : codePoints(escaped))
        ASSERT_FALSE(isFormatCharacter(kept)) << escaped;
  }
}

} // namespace
