//===- EscapeTest.cpp - Untrusted text on one printable line -------------===//

#include "IPU/Support/Escape.h"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <string>

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

} // namespace
