//===- RepeatedLayersTest.cpp - Finding N identical layers ----------------===//

#include "IPU/Planning/RepeatedLayers.h"

#include <gtest/gtest.h>

#include <random>

using namespace ipu;

namespace {

/// Builds a sequence: ops appended in order, arguments added with a type.
struct Builder {
  Sequence sequence;

  SequenceValue argument(uint32_t type) {
    sequence.argumentTypes.push_back(type);
    return SequenceValue::argument(uint32_t(sequence.argumentTypes.size() - 1));
  }
  SequenceValue op(uint32_t signature, std::vector<SequenceValue> operands) {
    sequence.ops.push_back({signature, std::move(operands)});
    return SequenceValue::resultOf(uint32_t(sequence.ops.size() - 1));
  }
};

/// A small transformer-like layer: a normalisation, two weighted ops and a
/// residual add; returns its output.
SequenceValue layer(Builder &b, SequenceValue x) {
  SequenceValue w0 = b.argument(10), w1 = b.argument(11), bias = b.argument(12);
  SequenceValue n = b.op(1, {x});
  SequenceValue h = b.op(2, {n, w0});
  SequenceValue g = b.op(3, {h, w1, bias});
  return b.op(4, {x, g});
}

TEST(RepeatedLayersTest, FindsTheLayersBetweenAPrefixAndASuffix) {
  Builder b;
  SequenceValue image = b.argument(0), patch = b.argument(1);
  SequenceValue x = b.op(20, {image, patch});
  const uint32_t firstWeight = 2;
  for (int i = 0; i < 6; ++i)
    x = layer(b, x);
  SequenceValue pooled = b.op(21, {x});
  b.sequence.returned = {pooled};

  std::optional<RepeatedLayers> found = findRepeatedLayers(b.sequence);
  ASSERT_TRUE(found);
  EXPECT_EQ(found->first, 1u);
  EXPECT_EQ(found->opsPerLayer, 4u);
  EXPECT_EQ(found->layers, 6u);
  EXPECT_EQ(found->input, SequenceValue::resultOf(0));
  EXPECT_EQ(found->output, SequenceValue::resultOf(3));
  ASSERT_EQ(found->weights.size(), 3u);
  for (uint32_t slot = 0; slot < 3; ++slot) {
    ASSERT_EQ(found->weights[slot].size(), 6u);
    for (uint32_t i = 0; i < 6; ++i)
      EXPECT_EQ(found->weights[slot][i], firstWeight + 3 * i + slot);
  }
}

TEST(RepeatedLayersTest, AnInputArgumentIsTheInputNotAWeight) {
  Builder b;
  SequenceValue x = b.argument(0);
  for (int i = 0; i < 3; ++i)
    x = layer(b, x);
  b.sequence.returned = {x};
  std::optional<RepeatedLayers> found = findRepeatedLayers(b.sequence);
  ASSERT_TRUE(found);
  EXPECT_EQ(found->first, 0u);
  EXPECT_EQ(found->layers, 3u);
  EXPECT_EQ(found->input, SequenceValue::argument(0));
  EXPECT_EQ(found->weights.size(), 3u);
}

TEST(RepeatedLayersTest, APrefixOpLikeTheLayersLastDoesNotShiftTheLayers) {
  // The position embedding's add looks like the residual add that ends
  // each layer: the layers still start after it (another start would carry
  // two values from layer to layer).
  Builder b;
  SequenceValue patches = b.argument(0), positions = b.argument(1);
  SequenceValue x = b.op(4, {patches, positions});
  for (int i = 0; i < 4; ++i)
    x = layer(b, x);
  b.sequence.returned = {b.op(1, {x})}; // The post norm, like a layer's first op.
  std::optional<RepeatedLayers> found = findRepeatedLayers(b.sequence);
  ASSERT_TRUE(found);
  EXPECT_EQ(found->first, 1u);
  EXPECT_EQ(found->layers, 4u);
  EXPECT_EQ(found->opsPerLayer, 4u);
}

TEST(RepeatedLayersTest, SharedValuesAreReadAlikeByEveryLayer) {
  // A mask computed once and read by every layer is not a weight.
  Builder b;
  SequenceValue x = b.argument(0);
  SequenceValue mask = b.op(30, {b.argument(1)});
  for (int i = 0; i < 3; ++i) {
    SequenceValue w = b.argument(10);
    SequenceValue h = b.op(2, {x, w, mask});
    x = b.op(4, {x, h});
  }
  b.sequence.returned = {x};
  std::optional<RepeatedLayers> found = findRepeatedLayers(b.sequence);
  ASSERT_TRUE(found);
  EXPECT_EQ(found->layers, 3u);
  EXPECT_EQ(found->weights.size(), 1u);
}

TEST(RepeatedLayersTest, RefusesWhatOneBodyCannotCompute) {
  // Two values carried from layer to layer.
  {
    Builder b;
    SequenceValue x = b.argument(0), y = b.argument(1);
    for (int i = 0; i < 4; ++i) {
      SequenceValue w = b.argument(10);
      SequenceValue nx = b.op(2, {x, y, w});
      y = b.op(3, {y, nx});
      x = nx;
    }
    b.sequence.returned = {x, y};
    EXPECT_FALSE(findRepeatedLayers(b.sequence));
  }
  // A weight of another type in the third layer: only two layers repeat.
  {
    Builder b;
    SequenceValue x = b.argument(0);
    for (int i = 0; i < 4; ++i)
      x = b.op(2, {x, b.argument(i == 2 ? 11 : 10)});
    b.sequence.returned = {x};
    std::optional<RepeatedLayers> found = findRepeatedLayers(b.sequence);
    ASSERT_TRUE(found);
    EXPECT_EQ(found->layers, 2u);
  }
  // A middle layer's value read after the layers.
  {
    Builder b;
    SequenceValue x = b.argument(0), middle;
    for (int i = 0; i < 3; ++i) {
      SequenceValue h = b.op(2, {x, b.argument(10)});
      x = b.op(4, {x, h});
      if (i == 1)
        middle = h;
    }
    b.sequence.returned = {b.op(5, {x, middle})};
    std::optional<RepeatedLayers> found = findRepeatedLayers(b.sequence);
    EXPECT_TRUE(!found || found->layers < 3);
  }
  // One weight read by two layers is not either layer's own.
  {
    Builder b;
    SequenceValue x = b.argument(0);
    SequenceValue shared = b.argument(10);
    x = b.op(2, {x, b.argument(10)});
    x = b.op(2, {x, shared});
    x = b.op(2, {x, shared});
    b.sequence.returned = {x};
    std::optional<RepeatedLayers> found = findRepeatedLayers(b.sequence);
    EXPECT_TRUE(!found || found->first >= 1);
  }
}

/// Random layers planted between a random prefix and suffix are found
/// exactly: their start, length, count, input, output and every weight.
TEST(RepeatedLayersTest, RandomLayersAreFoundExactly) {
  std::mt19937 random(7);
  for (int trial = 0; trial < 200; ++trial) {
    Builder b;
    // Signatures: 100+ for the layer's ops (distinct), 1000+ elsewhere.
    std::vector<SequenceValue> outside{b.argument(0)};
    const int prefixOps = int(random() % 4);
    for (int i = 0; i < prefixOps; ++i)
      outside.push_back(b.op(1000 + i, {outside[random() % outside.size()]}));
    const SequenceValue input = outside.back();
    const uint32_t first = uint32_t(b.sequence.ops.size());
    const uint32_t opsPerLayer = 1 + uint32_t(random() % 12);
    const uint32_t layers = 2 + uint32_t(random() % 29);
    // The template: each op reads earlier ops of the layer, the input, a
    // value from before the layers, or a weight of its own.
    struct Read { int kind; uint32_t index; };
    std::vector<std::vector<Read>> reads(opsPerLayer);
    for (uint32_t j = 0; j < opsPerLayer; ++j) {
      const int count = 1 + int(random() % 3);
      for (int r = 0; r < count; ++r) {
        int kind = int(random() % 4);
        if (kind == 0 && j == 0)
          kind = 1;
        reads[j].push_back({kind, kind == 0 ? uint32_t(random() % j)
                                  : kind == 2 ? uint32_t(random() % outside.size())
                                              : 0});
      }
      if (j == 0)
        reads[j].push_back({1, 0}); // The layer reads its input.
    }
    const uint32_t weightType = 50 + uint32_t(random() % 3);
    SequenceValue x = input;
    std::vector<std::vector<uint32_t>> plantedWeights;
    for (uint32_t layer = 0; layer < layers; ++layer) {
      const uint32_t base = uint32_t(b.sequence.ops.size());
      std::vector<uint32_t> ownWeights;
      for (uint32_t j = 0; j < opsPerLayer; ++j) {
        std::vector<SequenceValue> operands;
        for (const Read &read : reads[j]) {
          if (read.kind == 0)
            operands.push_back(SequenceValue::resultOf(base + read.index));
          else if (read.kind == 1)
            operands.push_back(x);
          else if (read.kind == 2)
            operands.push_back(outside[read.index]);
          else {
            operands.push_back(b.argument(weightType));
            ownWeights.push_back(operands.back().index);
          }
        }
        b.op(100 + j, operands);
      }
      plantedWeights.push_back(ownWeights);
      x = SequenceValue::resultOf(base + opsPerLayer - 1);
    }
    SequenceValue result = b.op(2000, {x});
    b.sequence.returned = {result};

    std::optional<RepeatedLayers> found = findRepeatedLayers(b.sequence);
    ASSERT_TRUE(found) << "trial " << trial;
    EXPECT_EQ(found->first, first) << "trial " << trial;
    EXPECT_EQ(found->opsPerLayer, opsPerLayer) << "trial " << trial;
    EXPECT_EQ(found->layers, layers) << "trial " << trial;
    EXPECT_EQ(found->input, input) << "trial " << trial;
    EXPECT_EQ(found->output, SequenceValue::resultOf(opsPerLayer - 1)) << "trial " << trial;
    ASSERT_EQ(found->weights.size(), plantedWeights.front().size()) << "trial " << trial;
    for (size_t slot = 0; slot < found->weights.size(); ++slot)
      for (uint32_t layer = 0; layer < layers; ++layer)
        EXPECT_EQ(found->weights[slot][layer], plantedWeights[layer][slot])
            << "trial " << trial;
  }
}

} // namespace
