//===- NestingTest.cpp - The bracket nesting bound of textual IR ---------===//

#include "IPU/Support/Nesting.h"

#include <gtest/gtest.h>

using namespace ipu;

TEST(NestingTest, CountsEveryBracketKind) {
  EXPECT_FALSE(checkNesting("([{<>}])", 4));
  EXPECT_TRUE(checkNesting("([{<>}])", 3));
  EXPECT_EQ(*checkNesting("a\nb\n((((", 3),
            "line 3: brackets nest more than 3 deep");
  // Closing brackets free depth: many shallow groups are fine.
  std::string flat;
  for (int i = 0; i < 10000; ++i)
    flat += "(x)";
  EXPECT_FALSE(checkNesting(flat, 1));
}

TEST(NestingTest, IgnoresStringsCommentsAndArrows) {
  EXPECT_FALSE(checkNesting("\"((((((\" // [[[[[[[\n", 1));
  EXPECT_FALSE(checkNesting("\"a \\\" ((((\"", 0));
  // `->` closes nothing: (a) -> (b) nests one deep, twice.
  EXPECT_FALSE(checkNesting("(a) -> (b)", 1));
  EXPECT_TRUE(checkNesting("((a) -> (b))", 1));
  // Unbalanced closers are the parser's to report, not a negative depth.
  EXPECT_FALSE(checkNesting(")))(((", 3));
}

TEST(NestingTest, RealIrIsFarBelowTheBound) {
  const char *ir = "func.func @f(%a: tensor<4x4xf32, #ipu_tile.layout<grid = "
                   "[2, 2], base = 0, strides = [2, 1]>>) -> tensor<4x4xf32> "
                   "{\n  return %a : tensor<4x4xf32>\n}\n";
  EXPECT_FALSE(checkNesting(ir));
  EXPECT_FALSE(checkNesting(ir, 4));
  EXPECT_TRUE(checkNesting(ir, 3));
}

TEST(LinalgDimensionListsTest, RefusesOnlyMalformedLists) {
  // The custom forms: the list follows `outs(...)`.
  EXPECT_FALSE(checkLinalgDimensionLists("outs(%e) permutation = [0, 2, 1]"));
  EXPECT_FALSE(checkLinalgDimensionLists("outs(%e)\n  dimensions = []"));
  EXPECT_FALSE(checkLinalgDimensionLists("outs(%e) dimensions = [ -1 ,2 ]"));
  // Other names, and attribute dictionaries, are the parser's to check.
  EXPECT_FALSE(checkLinalgDimensionLists("outs(%e) my_permutation = [x]"));
  EXPECT_FALSE(checkLinalgDimensionLists("outs(%e) permutation : [x]"));
  EXPECT_FALSE(checkLinalgDimensionLists("<{permutation = array<i64: 1, 0>}>"));
  EXPECT_FALSE(checkLinalgDimensionLists("{dimensions = [1a]}"));
  EXPECT_EQ(*checkLinalgDimensionLists("a\nb\n outs(%e) permutation = [0, 2, 1a"),
            "line 3: malformed 'permutation' list (LLVM 22's linalg parser "
            "would crash on it)");
  EXPECT_TRUE(checkLinalgDimensionLists("outs(%e) dimensions = [1,]"));
  EXPECT_TRUE(checkLinalgDimensionLists("outs(%e) dimensions = [1 2]"));
  EXPECT_TRUE(checkLinalgDimensionLists("outs(%e) dimensions = [-]"));
  EXPECT_TRUE(checkLinalgDimensionLists("outs(%e) dimensions = [1"));
  // Not a list at all (the second crash the fuzzer found).
  EXPECT_TRUE(checkLinalgDimensionLists("outs(%e) permutation =\xf1X}"));
  EXPECT_TRUE(checkLinalgDimensionLists("outs(%e) permutation = "));
  EXPECT_TRUE(checkTextualIr("outs(%e) permutation = [0, 2, 1a"));
}
