//===- ElementwiseTest.cpp - Elementwise bodies: cost, checks, values -----===//
//
// The plain C++ side of generated kernels (IPU/Device/Elementwise.h): the
// cycle estimate against totals counted by hand from the TargetModel
// fields, verifyBody's refusals, evaluateBody's rounding and NaN rules,
// bodyHash and the KernelSpec an ElementwiseKernel hands out.
//
//===----------------------------------------------------------------------===//

#include "IPU/Device/Elementwise.h"
#include "IPU/Device/Kernels.h"
#include "IPU/Support/ElementType.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <initializer_list>
#include <limits>
#include <random>
#include <regex>
#include <string>

using namespace ipu;

namespace {

::testing::AssertionResult contains(const std::string &text,
                                    const std::string &part) {
  if (text.find(part) != std::string::npos)
    return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << "\"" << text << "\" does not contain \"" << part << "\"";
}

constexpr ElementType F32 = ElementType::F32;
constexpr ElementType F16 = ElementType::F16;
constexpr ElementType E4M3 = ElementType::F8E4M3FN;
constexpr ElementType E5M2 = ElementType::F8E5M2;
const float kNaN = std::numeric_limits<float>::quiet_NaN();
const float kInf = std::numeric_limits<float>::infinity();

/// arith::CmpFPredicate values.
enum Predicate : uint8_t {
  AlwaysFalse = 0,
  OEQ,
  OGT,
  OGE,
  OLT,
  OLE,
  ONE,
  ORD,
  UEQ,
  UGT,
  UGE,
  ULT,
  ULE,
  UNE,
  UNO,
  AlwaysTrue
};

BodyOp makeOp(BodyOpKind kind, ElementType type,
              std::initializer_list<uint32_t> operands = {}) {
  BodyOp op;
  op.kind = kind;
  op.type = type;
  unsigned i = 0;
  for (uint32_t operand : operands)
    op.operands[i++] = operand;
  return op;
}

BodyOp constantOp(ElementType type, double value) {
  BodyOp op = makeOp(BodyOpKind::Constant, type);
  op.constant = value;
  return op;
}

BodyOp cmpOp(uint8_t predicate, ElementType type, uint32_t a, uint32_t b) {
  BodyOp op = makeOp(BodyOpKind::CmpF, type, {a, b});
  op.predicate = predicate;
  return op;
}

/// Builds a body op by op; add() returns the value the op defines.
struct BodyBuilder {
  ElementwiseBody body;

  explicit BodyBuilder(std::initializer_list<ElementwiseInput> inputs) {
    body.inputs = inputs;
  }
  uint32_t add(const BodyOp &op) {
    body.ops.push_back(op);
    return static_cast<uint32_t>(body.inputs.size() + body.ops.size() - 1);
  }
  uint32_t op(BodyOpKind kind, ElementType type,
              std::initializer_list<uint32_t> operands) {
    return add(makeOp(kind, type, operands));
  }
  uint32_t constant(ElementType type, double value) {
    return add(constantOp(type, value));
  }
  ElementwiseBody yield(uint32_t value, ElementType type) {
    body.result = value;
    body.resultType = type;
    return body;
  }
};

double f16Value(double value) {
  return halfToFloat(floatToHalf(static_cast<float>(value)));
}

/// Bias add and GELU's tanh form in f16, as torch-mlir writes it (examples/
/// exporters/torch-gelu-tanh-f16.mlir after the importer expands fpowi):
/// in0 the matmul's result (full), in1 the bias (one row).
ElementwiseBody biasGeluTanhF16() {
  BodyBuilder b({{F16, Broadcast::Full}, {F16, Broadcast::Row}});
  uint32_t y = b.op(BodyOpKind::AddF, F16, {0, 1});
  uint32_t y2 = b.op(BodyOpKind::MulF, F16, {y, y});
  uint32_t y3 = b.op(BodyOpKind::MulF, F16, {y2, y});
  uint32_t c0 = b.constant(F16, f16Value(0.044715));
  uint32_t t0 = b.op(BodyOpKind::MulF, F16, {y3, c0});
  uint32_t t1 = b.op(BodyOpKind::AddF, F16, {y, t0});
  uint32_t c1 = b.constant(F16, f16Value(0.7977240352174656));
  uint32_t t2 = b.op(BodyOpKind::MulF, F16, {t1, c1});
  uint32_t t3 = b.op(BodyOpKind::Tanh, F16, {t2});
  uint32_t one = b.constant(F16, 1.0);
  uint32_t t4 = b.op(BodyOpKind::AddF, F16, {t3, one});
  uint32_t half = b.constant(F16, 0.5);
  uint32_t t5 = b.op(BodyOpKind::MulF, F16, {t4, half});
  uint32_t out = b.op(BodyOpKind::MulF, F16, {y, t5});
  return b.yield(out, F16);
}

/// SiLU in f16 as torch-mlir decomposes it: x * (1 / (exp(-x) + 1)).
ElementwiseBody siluF16() {
  BodyBuilder b({{F16, Broadcast::Full}});
  uint32_t n = b.op(BodyOpKind::NegF, F16, {0});
  uint32_t e = b.op(BodyOpKind::Exp, F16, {n});
  uint32_t one = b.constant(F16, 1.0);
  uint32_t s = b.op(BodyOpKind::AddF, F16, {e, one});
  uint32_t r = b.op(BodyOpKind::DivF, F16, {one, s});
  uint32_t out = b.op(BodyOpKind::MulF, F16, {r, 0});
  return b.yield(out, F16);
}

/// x.to(float16).to(float8_e4m3fn) on an f32 input: two truncf.
ElementwiseBody castChainF32F16E4M3() {
  BodyBuilder b({{F32, Broadcast::Full}});
  uint32_t h = b.op(BodyOpKind::TruncF, F16, {0});
  uint32_t q = b.op(BodyOpKind::TruncF, E4M3, {h});
  return b.yield(q, E4M3);
}

//===----------------------------------------------------------------------===//
// estimateElementwise, counted by hand
//===----------------------------------------------------------------------===//
//
// The formula (Elementwise.h, estimateElementwise):
//   lanes     = 8 vectorBytes / (bits of the widest input or op type, at
//               least 16); vectorBytes is 8 on ipu21
//   I         = sum over ops of their instructions on one vector of `lanes`
//               (an op of type T costs lanes / (lanes of T) times its
//               per-T-vector field; constants 0; a cast lanes / 4 times
//               its per-4-elements field) + ewLoadStoreInstructions per
//               full or row input + one for the store
//   contiguous when every input is full or scalar and no row is padded;
//   then the block is one loop of rows * cols elements, else `rows` loops
//   of `cols`
//   vectorsPerRow = ceil(loop length / lanes), vectors = loops * that
//   perWorker = ceil(vectors / workersPerTile)
//   rowsPerWorker = min(loops, ceil(perWorker / vectorsPerRow) + (loops > 1))
//   total = vertexCallCycles + workerSupervisorCycles
//         + workersPerTile * (workerPrologueInstructions
//             + rowsPerWorker * ewRowOverheadInstructions
//             + ceil(perWorker * I))
//
// ipu21: vertexCallCycles 25, workerSupervisorCycles 11, workersPerTile 6,
// workerPrologueInstructions 17, ewRowOverheadInstructions 15,
// ewLoadStoreInstructions 1, ewArithInstructionsF16 1, ewTanhInstructionsF16
// 4, ewExpInstructionsF16 4, ewDivideInstructionsF16 21,
// ewCastF32F16Instructions 2, ewCastF16F8Instructions 1. Fixed part of every
// total: 25 + 11 = 36.

class EstimateTest : public ::testing::Test {
protected:
  const TargetModel target = TargetModel::ipu21();

  void SetUp() override {
    // The hand counts below use these ipu21 values; if the model changes,
    // this says which number moved rather than failing on a total.
    EXPECT_EQ(target.vertexCallCycles, 25u);
    EXPECT_EQ(target.workerSupervisorCycles, 11u);
    EXPECT_EQ(target.workersPerTile, 6u);
    EXPECT_EQ(target.workerPrologueInstructions, 17u);
    EXPECT_EQ(target.ewRowOverheadInstructions, 15u);
    EXPECT_EQ(target.ewLoadStoreInstructions, 1.0);
    EXPECT_EQ(target.ewArithInstructionsF16, 1.0);
    EXPECT_EQ(target.ewTanhInstructionsF16, 4.0);
    EXPECT_EQ(target.ewExpInstructionsF16, 4.0);
    EXPECT_EQ(target.ewDivideInstructionsF16, 21.0);
    EXPECT_EQ(target.ewCastF32F16Instructions, 2.0);
    EXPECT_EQ(target.ewCastF16F8Instructions, 1.0);
  }
};

// (a) bias + GELU tanh, f16. Every op is f16 and so is every input: lanes
// = 64 / 16 = 4, and an f16 op pays its per-4-x-f16 field once a vector.
//   addf (bias)     ewArithInstructionsF16            1
//   mulf y*y        ewArithInstructionsF16            1
//   mulf *y         ewArithInstructionsF16            1
//   constant        hoisted                           0
//   mulf 0.044715   ewArithInstructionsF16            1
//   addf            ewArithInstructionsF16            1
//   constant        hoisted                           0
//   mulf 0.79785    ewArithInstructionsF16            1
//   tanh            ewTanhInstructionsF16             4
//   constant        hoisted                           0
//   addf 1          ewArithInstructionsF16            1
//   constant        hoisted                           0
//   mulf 0.5        ewArithInstructionsF16            1
//   mulf y          ewArithInstructionsF16            1
//   load in0 (full) ewLoadStoreInstructions           1
//   load in1 (row)  ewLoadStoreInstructions           1
//   store           ewLoadStoreInstructions           1
//   I = 9 x 1 + 4 + 3 = 16 per vector.
TEST_F(EstimateTest, BiasGeluTanhF16RowInput2x1076) {
  // The row input makes every row its own loop: loops = 2, loop length
  // 1076. vectorsPerRow = ceil(1076 / 4) = 269; vectors = 2 x 269 = 538.
  // perWorker = ceil(538 / 6) = 90 (6 x 89 = 534 < 538).
  // rowsPerWorker = min(2, ceil(90 / 269) + 1) = min(2, 2) = 2.
  // Worker: 2 x 15 + 90 x 16 = 30 + 1440 = 1470.
  // total = 36 + 6 x (17 + 1470) = 36 + 6 x 1487 = 36 + 8922 = 8958,
  // below the user's measured GELU (tanh) rate: 2 x 1076 x 10 + 11 = 21,531.
  ElementwiseCycles cycles =
      estimateElementwise(target, biasGeluTanhF16(), 2, 1076);
  EXPECT_EQ(cycles.lanes, 4u);
  EXPECT_DOUBLE_EQ(cycles.instructionsPerVector, 16.0);
  EXPECT_EQ(cycles.vectors, 538u);
  EXPECT_EQ(cycles.rowsPerWorker, 2u);
  EXPECT_EQ(cycles.measuredRateCycles, 21531u);
  EXPECT_EQ(cycles.total, 21531u);
}

TEST_F(EstimateTest, LanesFollowTheTargetsVectorWidth) {
  // A target with 128-bit vectors holds 8 f16 lanes, so half the vectors.
  // Without the measured GELU rate, which does not depend on the lanes.
  TargetModel narrowTarget = target;
  narrowTarget.geluTanhCyclesPerElement = 0;
  TargetModel wide = narrowTarget;
  wide.vectorBytes = 16;
  ElementwiseCycles narrow = estimateElementwise(narrowTarget, biasGeluTanhF16(), 2, 1076);
  ElementwiseCycles doubled = estimateElementwise(wide, biasGeluTanhF16(), 2, 1076);
  EXPECT_EQ(narrow.lanes, 4u);
  EXPECT_EQ(doubled.lanes, 8u);
  EXPECT_EQ(doubled.vectors, 2u * ((1076 + 7) / 8));
  EXPECT_LT(doubled.total, narrow.total);
  // The reduce's worker loop follows the lanes too, where it binds rather
  // than the per-partial-byte charge (made fast here to expose the loop).
  TargetModel fastNarrow = target;
  fastNarrow.reducePartialBytesPerCycle = 1u << 20;
  TargetModel fastWide = wide;
  fastWide.reducePartialBytesPerCycle = 1u << 20;
  EXPECT_LT(estimateReduceCycles(fastWide, 64, 256, 4, ElementType::F32, ElementType::F16),
            estimateReduceCycles(fastNarrow, 64, 256, 4, ElementType::F32, ElementType::F16));
}

TEST_F(EstimateTest, BiasGeluTanhF16RowInput16x64) {
  // Still one loop per row (the bias repeats): loops = 16 of 64.
  // vectorsPerRow = 64 / 4 = 16; vectors = 256; perWorker = ceil(256 / 6)
  // = 43 (6 x 42 = 252). rowsPerWorker = min(16, ceil(43 / 16) + 1) =
  // min(16, 3 + 1) = 4. Worker: 4 x 15 + 43 x 16 = 60 + 688 = 748.
  // total = 36 + 6 x (17 + 748) = 36 + 6 x 765 = 36 + 4590 = 4626, below
  // the measured GELU rate 16 x 64 x 10 + 11 = 10,251.
  ElementwiseCycles cycles =
      estimateElementwise(target, biasGeluTanhF16(), 16, 64);
  EXPECT_EQ(cycles.lanes, 4u);
  EXPECT_DOUBLE_EQ(cycles.instructionsPerVector, 16.0);
  EXPECT_EQ(cycles.vectors, 256u);
  EXPECT_EQ(cycles.rowsPerWorker, 4u);
  EXPECT_EQ(cycles.total, 10251u);
}

// (b) SiLU, f16: lanes 4.
//   negf            ewArithInstructionsF16            1
//   exp             ewExpInstructionsF16              4
//   constant 1      hoisted                           0
//   addf 1          ewArithInstructionsF16            1
//   divf 1/(...)    ewDivideInstructionsF16          21
//   mulf x          ewArithInstructionsF16            1
//   load in0        ewLoadStoreInstructions           1
//   store           ewLoadStoreInstructions           1
//   I = 1 + 4 + 1 + 21 + 1 + 2 = 30 per vector.
TEST_F(EstimateTest, SiluF16Contiguous16x64) {
  // 64 f16 = 128 bytes a row, no padding, one full input: contiguous, one
  // loop of 16 x 64 = 1024 elements. vectorsPerRow = vectors = 1024 / 4 =
  // 256; perWorker = ceil(256 / 6) = 43; rowsPerWorker = min(1, ceil(43 /
  // 256) + 0) = 1. Worker: 15 + 43 x 30 = 15 + 1290 = 1305.
  // total = 36 + 6 x (17 + 1305) = 36 + 6 x 1322 = 36 + 7932 = 7968.
  ElementwiseCycles cycles = estimateElementwise(target, siluF16(), 16, 64);
  EXPECT_EQ(cycles.lanes, 4u);
  EXPECT_DOUBLE_EQ(cycles.instructionsPerVector, 30.0);
  EXPECT_EQ(cycles.vectors, 256u);
  EXPECT_EQ(cycles.rowsPerWorker, 1u);
  EXPECT_EQ(cycles.total, 7968u);
}

TEST_F(EstimateTest, SiluF16Contiguous2x1076) {
  // 1076 f16 = 2152 bytes, a whole number of words: contiguous, one loop
  // of 2152. vectors = 2152 / 4 = 538; perWorker = 90; rowsPerWorker = 1.
  // Worker: 15 + 90 x 30 = 2715. total = 36 + 6 x (17 + 2715) = 36 + 6 x
  // 2732 = 36 + 16392 = 16428.
  ElementwiseCycles cycles = estimateElementwise(target, siluF16(), 2, 1076);
  EXPECT_EQ(cycles.vectors, 538u);
  EXPECT_EQ(cycles.rowsPerWorker, 1u);
  EXPECT_EQ(cycles.total, 16428u);
}

TEST_F(EstimateTest, SiluF16PaddedRows3x5) {
  // 5 f16 = 10 bytes, padded to 12: not contiguous, 3 loops of 5.
  // vectorsPerRow = ceil(5 / 4) = 2; vectors = 6; perWorker = 1;
  // rowsPerWorker = min(3, ceil(1 / 2) + 1) = 2. Worker: 2 x 15 + 30 = 60.
  // total = 36 + 6 x (17 + 60) = 36 + 462 = 498.
  ElementwiseCycles cycles = estimateElementwise(target, siluF16(), 3, 5);
  EXPECT_EQ(cycles.vectors, 6u);
  EXPECT_EQ(cycles.rowsPerWorker, 2u);
  EXPECT_EQ(cycles.total, 498u);
}

// (c) f32 -> f16 -> f8E4M3FN. The f32 input makes lanes = 64 / 32 = 2; a
// cast costs lanes / 4 = 0.5 times its per-4-elements figure.
//   truncf f32->f16  0.5 x ewCastF32F16Instructions (2)    1
//   truncf f16->f8   0.5 x ewCastF16F8Instructions  (1)    0.5
//   load in0         ewLoadStoreInstructions               1
//   store            ewLoadStoreInstructions               1
//   I = 3.5 per vector.
TEST_F(EstimateTest, CastChainContiguous16x64) {
  // Output rows 64 x 1 byte = 64 (words), input 64 x 4 = 256: contiguous,
  // one loop of 1024. vectors = 1024 / 2 = 512; perWorker = ceil(512 / 6)
  // = 86 (6 x 85 = 510); rowsPerWorker = 1.
  // Worker: 15 + ceil(86 x 3.5) = 15 + 301 = 316.
  // total = 36 + 6 x (17 + 316) = 36 + 6 x 333 = 36 + 1998 = 2034.
  ElementwiseCycles cycles =
      estimateElementwise(target, castChainF32F16E4M3(), 16, 64);
  EXPECT_EQ(cycles.lanes, 2u);
  EXPECT_DOUBLE_EQ(cycles.instructionsPerVector, 3.5);
  EXPECT_EQ(cycles.vectors, 512u);
  EXPECT_EQ(cycles.rowsPerWorker, 1u);
  EXPECT_EQ(cycles.total, 2034u);
}

TEST_F(EstimateTest, CastChainContiguous2x1076) {
  // 1076 f8 bytes a row is 269 words: contiguous, one loop of 2152.
  // vectors = 2152 / 2 = 1076; perWorker = ceil(1076 / 6) = 180 (6 x 179 =
  // 1074); Worker: 15 + ceil(180 x 3.5) = 15 + 630 = 645.
  // total = 36 + 6 x (17 + 645) = 36 + 6 x 662 = 36 + 3972 = 4008.
  ElementwiseCycles cycles =
      estimateElementwise(target, castChainF32F16E4M3(), 2, 1076);
  EXPECT_EQ(cycles.vectors, 1076u);
  EXPECT_EQ(cycles.rowsPerWorker, 1u);
  EXPECT_EQ(cycles.total, 4008u);
}

TEST_F(EstimateTest, CastChainPaddedRows2x5) {
  // 5 f8 bytes pad to 8: 2 loops of 5. vectorsPerRow = ceil(5 / 2) = 3;
  // vectors = 6; perWorker = 1; rowsPerWorker = min(2, ceil(1 / 3) + 1) =
  // 2. Worker: 2 x 15 + ceil(1 x 3.5) = 30 + 4 = 34.
  // total = 36 + 6 x (17 + 34) = 36 + 306 = 342.
  ElementwiseCycles cycles =
      estimateElementwise(target, castChainF32F16E4M3(), 2, 5);
  EXPECT_EQ(cycles.vectors, 6u);
  EXPECT_EQ(cycles.rowsPerWorker, 2u);
  EXPECT_EQ(cycles.total, 342u);
}

TEST_F(EstimateTest, DirectF32ToF8CastGoesThroughF16) {
  // truncf f32 -> f8E4M3FN in one op is charged both steps: lanes 2,
  // 0.5 x (2 + 1) = 1.5, plus load and store: 3.5, as the two-op chain.
  BodyBuilder b({{F32, Broadcast::Full}});
  uint32_t q = b.op(BodyOpKind::TruncF, E4M3, {0});
  ElementwiseCycles cycles =
      estimateElementwise(target, b.yield(q, E4M3), 16, 64);
  EXPECT_DOUBLE_EQ(cycles.instructionsPerVector, 3.5);
  EXPECT_EQ(cycles.total, 2034u);
}

TEST_F(EstimateTest, ScalarInputsAreNotLoadedPerVector) {
  // x * s, f16, s a scalar: 1 (mulf) + 1 (load x) + 1 (store) = 3; the
  // scalar keeps the block contiguous. 16 x 64: 256 vectors, perWorker 43,
  // worker 15 + 43 x 3 = 144, total = 36 + 6 x 161 = 1002.
  BodyBuilder b({{F16, Broadcast::Full}, {F16, Broadcast::Scalar}});
  uint32_t p = b.op(BodyOpKind::MulF, F16, {0, 1});
  ElementwiseCycles cycles =
      estimateElementwise(target, b.yield(p, F16), 16, 64);
  EXPECT_DOUBLE_EQ(cycles.instructionsPerVector, 3.0);
  EXPECT_EQ(cycles.rowsPerWorker, 1u);
  EXPECT_EQ(cycles.total, 1002u);
}

TEST_F(EstimateTest, EmptyBlockCostsNothing) {
  EXPECT_EQ(estimateElementwise(target, siluF16(), 0, 64).total, 0u);
  EXPECT_EQ(estimateElementwise(target, siluF16(), 16, 0).total, 0u);
}

TEST_F(EstimateTest, KernelSpecCostsTheBody) {
  ElementwiseKernel kernel("gelu", elementwiseSymbol(biasGeluTanhF16()),
                           biasGeluTanhF16());
  const int64_t params[] = {2, 1076};
  EXPECT_EQ(estimateKernelCycles(kernel.spec(), params, target), 21531u);
}

/// GELU's erf form in f32, as torch-mlir writes it: x * 0.5 * (1 + erf(x /
/// sqrt(2))), on a bias-added input.
ElementwiseBody biasGeluErfF32() {
  BodyBuilder b({{F32, Broadcast::Full}, {F32, Broadcast::Row}});
  uint32_t x = b.op(BodyOpKind::AddF, F32, {0, 1});
  uint32_t half = b.constant(F32, 0.5);
  uint32_t hx = b.op(BodyOpKind::MulF, F32, {x, half});
  uint32_t r = b.constant(F32, 0.7071067811865476);
  uint32_t s = b.op(BodyOpKind::MulF, F32, {x, r});
  uint32_t e = b.op(BodyOpKind::Erf, F32, {s});
  uint32_t one = b.constant(F32, 1.0);
  uint32_t t = b.op(BodyOpKind::AddF, F32, {e, one});
  uint32_t out = b.op(BodyOpKind::MulF, F32, {hx, t});
  return b.yield(out, F32);
}

TEST_F(EstimateTest, GeluIsRecognisedByItsStructure) {
  // tanh form: the tanh is op 8; erf form (0.5 x on the other side): op 5.
  EXPECT_EQ(gatingTranscendental(biasGeluTanhF16()), std::optional<size_t>(8));
  EXPECT_EQ(gatingTranscendental(biasGeluErfF32()), std::optional<size_t>(5));
  // No tanh or erf: SiLU gates by exp, not recognised.
  EXPECT_EQ(gatingTranscendental(siluF16()), std::nullopt);
  // A tanh alone, or a tanh times an unrelated input, is not a GELU.
  {
    BodyBuilder b({{F16, Broadcast::Full}, {F16, Broadcast::Full}});
    uint32_t t = b.op(BodyOpKind::Tanh, F16, {0});
    ElementwiseBody alone = b.yield(t, F16);
    EXPECT_EQ(gatingTranscendental(alone), std::nullopt);
    BodyBuilder c({{F16, Broadcast::Full}, {F16, Broadcast::Full}});
    uint32_t u = c.op(BodyOpKind::Tanh, F16, {0});
    uint32_t m = c.op(BodyOpKind::MulF, F16, {u, 1});
    EXPECT_EQ(gatingTranscendental(c.yield(m, F16)), std::nullopt);
    // tanh(x) times tanh(x) again is not x times a gate.
    BodyBuilder d({{F16, Broadcast::Full}});
    uint32_t v = d.op(BodyOpKind::Tanh, F16, {0});
    uint32_t w = d.op(BodyOpKind::MulF, F16, {v, v});
    EXPECT_EQ(gatingTranscendental(d.yield(w, F16)), std::nullopt);
  }
  // A row reduction over a GELU is a reduction kernel, costed as one.
  ElementwiseBody reduced = biasGeluTanhF16();
  reduced.reduction = RowReduction::Add;
  EXPECT_EQ(gatingTranscendental(reduced), std::nullopt);
}

TEST_F(EstimateTest, GeluCostsAtLeastTheMeasuredRate) {
  // The user's tanh GELU: 10 tile cycles an element + 11 a call (ada233b);
  // erf: 17, our assumption from the op counts.
  EXPECT_EQ(target.geluTanhCyclesPerElement, 10.0);
  EXPECT_EQ(target.geluErfCyclesPerElement, 17.0);
  EXPECT_EQ(target.kernelLaunchCycles, 11u);
  for (int64_t rows : {1, 2, 7, 16, 135})
    for (int64_t cols : {1, 3, 64, 1076, 1152}) {
      const uint64_t elements = uint64_t(rows) * cols;
      ElementwiseCycles tanhForm = estimateElementwise(target, biasGeluTanhF16(), rows, cols);
      ElementwiseCycles erfForm = estimateElementwise(target, biasGeluErfF32(), rows, cols);
      EXPECT_EQ(tanhForm.measuredRateCycles, elements * 10 + 11) << rows << "x" << cols;
      EXPECT_GE(tanhForm.total, elements * 10 + 11) << rows << "x" << cols;
      EXPECT_EQ(erfForm.measuredRateCycles, elements * 17 + 11) << rows << "x" << cols;
      EXPECT_GE(erfForm.total, elements * 17 + 11) << rows << "x" << cols;
      // Any other body is costed by its instructions alone.
      EXPECT_EQ(estimateElementwise(target, siluF16(), rows, cols).measuredRateCycles, 0u);
    }
  // When the instruction count is slower, it stands: a tanh GELU with a
  // much dearer tanh.
  TargetModel slowTanh = target;
  slowTanh.ewTanhInstructionsF16 = 400;
  ElementwiseCycles slow = estimateElementwise(slowTanh, biasGeluTanhF16(), 16, 64);
  EXPECT_GT(slow.total, slow.measuredRateCycles);
}

//===----------------------------------------------------------------------===//
// verifyBody
//===----------------------------------------------------------------------===//

TEST(VerifyBodyTest, AcceptsTheExporterBodies) {
  EXPECT_EQ(verifyBody(biasGeluTanhF16()), std::nullopt);
  EXPECT_EQ(verifyBody(siluF16()), std::nullopt);
  EXPECT_EQ(verifyBody(castChainF32F16E4M3()), std::nullopt);
  // ReLU as cmpf + select, and f8 widened before arithmetic.
  BodyBuilder b({{E5M2, Broadcast::Full}});
  uint32_t x = b.op(BodyOpKind::ExtF, F32, {0});
  uint32_t zero = b.constant(F32, 0.0);
  uint32_t positive = b.add(cmpOp(OGT, F32, x, zero));
  uint32_t relu = b.op(BodyOpKind::Select, F32, {positive, x, zero});
  EXPECT_EQ(verifyBody(b.yield(relu, F32)), std::nullopt);
}

TEST(VerifyBodyTest, OperandDefinedLater) {
  // Op 1 reads value 4, the result of op 3 (values 0 and 1 are inputs).
  BodyBuilder b({{F16, Broadcast::Full}, {F16, Broadcast::Row}});
  b.op(BodyOpKind::AddF, F16, {0, 1});
  b.op(BodyOpKind::MulF, F16, {2, 4});
  b.op(BodyOpKind::NegF, F16, {0});
  uint32_t last = b.op(BodyOpKind::NegF, F16, {0});
  std::optional<std::string> error = verifyBody(b.yield(last, F16));
  ASSERT_TRUE(error);
  EXPECT_TRUE(contains(*error, "body op 1 'arith.mulf'"));
  EXPECT_TRUE(contains(*error, "uses value 4, which is not defined before it"));
}

TEST(VerifyBodyTest, OperandIsItsOwnResult) {
  BodyBuilder b({{F16, Broadcast::Full}});
  uint32_t self = b.op(BodyOpKind::Tanh, F16, {1});
  std::optional<std::string> error = verifyBody(b.yield(self, F16));
  ASSERT_TRUE(error);
  EXPECT_TRUE(contains(*error, "body op 0 'math.tanh' uses value 1"));
}

TEST(VerifyBodyTest, WrongOperandType) {
  BodyBuilder b({{F16, Broadcast::Full}, {F32, Broadcast::Row}});
  uint32_t n = b.op(BodyOpKind::NegF, F16, {0});
  uint32_t s = b.op(BodyOpKind::SubF, F16, {n, 1});
  std::optional<std::string> error = verifyBody(b.yield(s, F16));
  ASSERT_TRUE(error);
  EXPECT_EQ(*error, "body op 1 'arith.subf': operand 1 is f32, expected f16");
}

TEST(VerifyBodyTest, SelectNeedsABooleanCondition) {
  BodyBuilder b({{F32, Broadcast::Full}});
  uint32_t s = b.op(BodyOpKind::Select, F32, {0, 0, 0});
  std::optional<std::string> error = verifyBody(b.yield(s, F32));
  ASSERT_TRUE(error);
  EXPECT_EQ(*error,
            "body op 0 'arith.select': operand 0 is f32, expected a boolean");
}

TEST(VerifyBodyTest, BooleanIsNotAFloatOperand) {
  BodyBuilder b({{F32, Broadcast::Full}});
  uint32_t c = b.add(cmpOp(OLT, F32, 0, 0));
  uint32_t e = b.op(BodyOpKind::Exp, F32, {c});
  std::optional<std::string> error = verifyBody(b.yield(e, F32));
  ASSERT_TRUE(error);
  EXPECT_EQ(*error,
            "body op 1 'math.exp': operand 0 is a boolean, expected f32");
}

TEST(VerifyBodyTest, ArithmeticOnF8) {
  for (ElementType type : {E4M3, E5M2}) {
    BodyBuilder b({{type, Broadcast::Full}});
    uint32_t h = b.op(BodyOpKind::ExtF, F16, {0});
    uint32_t q = b.op(BodyOpKind::TruncF, type, {h});
    uint32_t sum = b.op(BodyOpKind::AddF, type, {q, q});
    std::optional<std::string> error = verifyBody(b.yield(sum, type));
    ASSERT_TRUE(error);
    EXPECT_EQ(*error, "body op 2 'arith.addf' computes in " +
                          std::string(elementTypeName(type)) +
                          "; extend f8 values to f16 or f32 first");
  }
}

TEST(VerifyBodyTest, ExtfNarrowingAndTruncfWidening) {
  {
    BodyBuilder b({{F32, Broadcast::Full}});
    uint32_t h = b.op(BodyOpKind::ExtF, F16, {0});
    std::optional<std::string> error = verifyBody(b.yield(h, F16));
    ASSERT_TRUE(error);
    EXPECT_EQ(*error, "body op 0 'arith.extf' cannot convert f32 to f16");
  }
  {
    BodyBuilder b({{E4M3, Broadcast::Full}});
    uint32_t h = b.op(BodyOpKind::TruncF, F16, {0});
    std::optional<std::string> error = verifyBody(b.yield(h, F16));
    ASSERT_TRUE(error);
    EXPECT_EQ(*error,
              "body op 0 'arith.truncf' cannot convert f8E4M3FN to f16");
  }
  {
    // Same width both ways is neither an extension nor a truncation.
    BodyBuilder b({{F16, Broadcast::Full}});
    uint32_t n = b.op(BodyOpKind::NegF, F16, {0});
    uint32_t h = b.op(BodyOpKind::ExtF, F16, {n});
    std::optional<std::string> error = verifyBody(b.yield(h, F16));
    ASSERT_TRUE(error);
    EXPECT_EQ(*error, "body op 1 'arith.extf' cannot convert f16 to f16");
  }
}

// arith.truncf must narrow and arith.extf widen, strictly: mlir-opt-22
// refuses `arith.truncf %x : f8E4M3FN to f8E5M2` ("cast incompatible"), so
// no importer can build it. verifyBody compares bit widths only and lets a
// conversion between the two 8-bit formats through (as truncf or extf), so
// validatePackage accepts a package body that arith cannot express and the
// code generator was never written for. (Found by this test and fixed; it keeps it fixed.)
TEST(VerifyBodyTest, NoConversionBetweenF8Formats) {
  for (BodyOpKind kind : {BodyOpKind::TruncF, BodyOpKind::ExtF}) {
    BodyBuilder b({{E4M3, Broadcast::Full}});
    uint32_t q = b.op(kind, E5M2, {0});
    std::optional<std::string> error = verifyBody(b.yield(q, E5M2));
    ASSERT_TRUE(error) << bodyOpName(kind);
    EXPECT_EQ(*error, "body op 0 '" + std::string(bodyOpName(kind)) +
                          "' cannot convert f8E4M3FN to f8E5M2");
  }
}

TEST(VerifyBodyTest, BadPredicate) {
  BodyBuilder b({{F16, Broadcast::Full}});
  uint32_t n = b.op(BodyOpKind::NegF, F16, {0});
  uint32_t c = b.add(cmpOp(16, F16, 0, n));
  uint32_t s = b.op(BodyOpKind::Select, F16, {c, 0, n});
  std::optional<std::string> error = verifyBody(b.yield(s, F16));
  ASSERT_TRUE(error);
  EXPECT_EQ(*error, "body op 1 'arith.cmpf' has predicate 16");
  // 15 (true) is the last valid one.
  b.body.ops[1].predicate = AlwaysTrue;
  EXPECT_EQ(verifyBody(b.body), std::nullopt);
}

TEST(VerifyBodyTest, CmpfOperandsOfItsType) {
  BodyBuilder b({{F16, Broadcast::Full}, {F32, Broadcast::Scalar}});
  uint32_t c = b.add(cmpOp(OLT, F16, 0, 1));
  uint32_t s = b.op(BodyOpKind::Select, F16, {c, 0, 0});
  std::optional<std::string> error = verifyBody(b.yield(s, F16));
  ASSERT_TRUE(error);
  EXPECT_EQ(*error, "body op 0 'arith.cmpf': operand 1 is f32, expected f16");
}

TEST(VerifyBodyTest, ResultTypeMismatch) {
  BodyBuilder b({{F16, Broadcast::Full}});
  uint32_t n = b.op(BodyOpKind::NegF, F16, {0});
  std::optional<std::string> error = verifyBody(b.yield(n, F32));
  ASSERT_TRUE(error);
  EXPECT_EQ(*error, "body op 0 'arith.negf': the body yields f16 but its result is f32");
  // A boolean is never a result.
  BodyBuilder c({{F16, Broadcast::Full}});
  uint32_t cmp = c.add(cmpOp(OLT, F16, 0, 0));
  error = verifyBody(c.yield(cmp, F16));
  ASSERT_TRUE(error);
  EXPECT_EQ(*error,
            "body op 0 'arith.cmpf': the body yields a boolean but its result is f16");
}

// verifyBody's contract (Elementwise.h) is that "the message names the op
// by index and spelling"; the result check names only the types, not the
// op that defines the result (here op 0, 'arith.negf'). (Found by this test and fixed; it keeps it fixed.)
TEST(VerifyBodyTest, ResultTypeMismatchNamesTheOp) {
  BodyBuilder b({{F16, Broadcast::Full}});
  uint32_t n = b.op(BodyOpKind::NegF, F16, {0});
  std::optional<std::string> error = verifyBody(b.yield(n, F32));
  ASSERT_TRUE(error);
  EXPECT_TRUE(contains(*error, "body op 0 'arith.negf'"));
}

TEST(VerifyBodyTest, ResultOutOfRange) {
  BodyBuilder b({{F16, Broadcast::Full}});
  b.op(BodyOpKind::NegF, F16, {0});
  std::optional<std::string> error = verifyBody(b.yield(2, F16));
  ASSERT_TRUE(error);
  EXPECT_EQ(*error, "the body's result names value 2, which does not exist");
}

TEST(VerifyBodyTest, InexactConstant) {
  {
    // 0.1 is no f16 value (nor an f32 one).
    BodyBuilder b({{F16, Broadcast::Full}});
    uint32_t c = b.constant(F16, 0.1);
    uint32_t p = b.op(BodyOpKind::MulF, F16, {0, c});
    std::optional<std::string> error = verifyBody(b.yield(p, F16));
    ASSERT_TRUE(error);
    EXPECT_EQ(*error,
              "body op 0 'arith.constant': 0.1 is not a f16 value");
  }
  {
    // 1 + 2^-11 is exact in f32, not in f16; 0.1f is an f32 value.
    BodyBuilder b({{F32, Broadcast::Full}});
    uint32_t c0 = b.constant(F32, 1.0 + std::ldexp(1.0, -11));
    uint32_t c1 = b.constant(F32, static_cast<double>(0.1f));
    uint32_t c2 = b.constant(F16, 1.0 + std::ldexp(1.0, -11));
    uint32_t p = b.op(BodyOpKind::AddF, F32, {c0, c1});
    std::optional<std::string> error = verifyBody(b.yield(p, F32));
    ASSERT_TRUE(error);
    EXPECT_TRUE(contains(*error, "body op 2 'arith.constant'"));
    EXPECT_TRUE(contains(*error, "is not a f16 value"));
    (void)c2;
  }
  {
    // Past the f16 range, and an f8 constant beyond 448.
    BodyBuilder b({{F16, Broadcast::Full}});
    b.constant(F16, 65520.0);
    std::optional<std::string> error = verifyBody(b.yield(0, F16));
    ASSERT_TRUE(error);
    EXPECT_TRUE(contains(*error, "body op 0 'arith.constant': 65520"));
  }
  {
    BodyBuilder b({{E4M3, Broadcast::Full}});
    b.constant(E4M3, 480.0);
    std::optional<std::string> error = verifyBody(b.yield(0, E4M3));
    ASSERT_TRUE(error);
    EXPECT_TRUE(contains(*error, "body op 0 'arith.constant': 480"));
    EXPECT_TRUE(contains(*error, "is not a f8E4M3FN value"));
  }
  {
    // NaN and infinity are f16 values.
    BodyBuilder b({{F16, Broadcast::Full}});
    b.constant(F16, std::nan(""));
    b.constant(F16, HUGE_VAL);
    EXPECT_EQ(verifyBody(b.yield(0, F16)), std::nullopt);
  }
}

// The constant's value is printed with std::to_string's six decimals, so a
// small inexact constant reads as a value that is exact: 1e-9 as an f16
// constant gives "0.000000 is not a f16 value", and 0 is an f16 value.
// (Found by this test and fixed; it keeps it fixed.)
TEST(VerifyBodyTest, InexactSmallConstantIsPrintedDistinctly) {
  BodyBuilder b({{F16, Broadcast::Full}});
  b.constant(F16, 1e-9);
  std::optional<std::string> error = verifyBody(b.yield(0, F16));
  ASSERT_TRUE(error);
  EXPECT_FALSE(contains(*error, "0.000000 is not"));
}

TEST(VerifyBodyTest, UnknownKindTypeAndEmptyInputs) {
  ElementwiseBody empty;
  EXPECT_EQ(verifyBody(empty), std::string("the body has no inputs"));
  BodyBuilder b({{F16, Broadcast::Full}});
  BodyOp bad = makeOp(static_cast<BodyOpKind>(kBodyOpKinds), F16, {0});
  b.add(bad);
  std::optional<std::string> error = verifyBody(b.yield(0, F16));
  ASSERT_TRUE(error);
  EXPECT_EQ(*error, "body op 0 has an unknown kind");
  b.body.ops[0] = makeOp(BodyOpKind::NegF, static_cast<ElementType>(9), {0});
  error = verifyBody(b.body);
  ASSERT_TRUE(error);
  EXPECT_EQ(*error, "body op 0 'arith.negf' has an unknown type");
}

/// A valid body whose op `target` is of `kind` (on an f32 input; a cast on
/// f16 or to f16; a select after its comparison), as the last op.
ElementwiseBody bodyWithOp(BodyOpKind kind, size_t &target) {
  const bool extends = kind == BodyOpKind::ExtF;
  BodyBuilder b({{extends ? F16 : F32, Broadcast::Full}});
  uint32_t x = 0;
  if (kind == BodyOpKind::Select) {
    uint32_t positive = b.add(cmpOp(OGT, F32, x, x));
    target = b.body.ops.size();
    return b.yield(b.op(kind, F32, {positive, x, x}), F32);
  }
  if (kind == BodyOpKind::CmpF) {
    target = b.body.ops.size();
    uint32_t positive = b.add(cmpOp(OGT, F32, x, x));
    return b.yield(b.op(BodyOpKind::Select, F32, {positive, x, x}), F32);
  }
  target = b.body.ops.size();
  if (kind == BodyOpKind::Constant)
    return b.yield(b.constant(F32, 1.0), F32);
  const ElementType type = kind == BodyOpKind::TruncF ? F16 : F32;
  uint32_t value = b.op(kind, type, {x, x, x});
  // makeOp filled every slot: leave the unused ones zero.
  for (unsigned o = bodyOpArity(kind); o < 3; ++o)
    b.body.ops[target].operands[o] = 0;
  return b.yield(value, type);
}

TEST(VerifyBodyTest, UnusedOperandSlotsMustBeZero) {
  // Every kind, every slot past its arity: a small index the evaluator
  // once read past the values, and 4e9 that crashed it.
  for (unsigned k = 0; k < kBodyOpKinds; ++k) {
    const auto kind = static_cast<BodyOpKind>(k);
    size_t target = 0;
    const ElementwiseBody valid = bodyWithOp(kind, target);
    ASSERT_EQ(verifyBody(valid), std::nullopt) << bodyOpName(kind);
    const unsigned arity = bodyOpArity(kind);
    for (unsigned slot = arity; slot < 3; ++slot) {
      for (uint32_t value : {1u, 4000000000u}) {
        ElementwiseBody body = valid;
        body.ops[target].operands[slot] = value;
        std::optional<std::string> error = verifyBody(body);
        ASSERT_TRUE(error) << bodyOpName(kind) << " slot " << slot;
        EXPECT_EQ(*error, "body op " + std::to_string(target) + " '" +
                              std::string(bodyOpName(kind)) + "' takes " +
                              std::to_string(arity) + " operand" +
                              (arity == 1 ? "" : "s") + ", but its unused operand slot " +
                              std::to_string(slot) + " holds " + std::to_string(value) +
                              " (unused slots must be 0)");
      }
    }
  }
}

TEST(EvaluateBodyTest, ReadsOnlyTheOpsOwnOperands) {
  // Unverified bodies with junk past each op's arity evaluate as the clean
  // body does: the evaluator never indexes with an unused slot.
  for (unsigned k = 0; k < kBodyOpKinds; ++k) {
    const auto kind = static_cast<BodyOpKind>(k);
    size_t target = 0;
    const ElementwiseBody valid = bodyWithOp(kind, target);
    ElementwiseBody junk = valid;
    for (unsigned o = bodyOpArity(kind); o < 3; ++o)
      junk.ops[target].operands[o] = 4000000000u;
    for (float x : {-1.5f, 0.25f, 2.0f}) {
      double validBound = 0, junkBound = 0;
      const float want = evaluateBodyWithBound(valid, &x, &validBound);
      const float got = evaluateBodyWithBound(junk, &x, &junkBound);
      EXPECT_TRUE(want == got || (std::isnan(want) && std::isnan(got)))
          << bodyOpName(kind) << " at " << x;
      EXPECT_EQ(validBound, junkBound) << bodyOpName(kind) << " at " << x;
    }
  }
}

TEST(KernelCompileCostTest, EveryOpAddsAndLongBodiesGrowFaster) {
  // Property: appending any op costs more; transcendentals cost more than
  // arithmetic; doubling a long body more than doubles its cost above the
  // fixed part (LLVM's time on one straight-line body grows faster).
  for (unsigned k = 0; k < kBodyOpKinds; ++k) {
    const auto kind = static_cast<BodyOpKind>(k);
    size_t target = 0;
    ElementwiseBody body = bodyWithOp(kind, target);
    ElementwiseBody shorter = body;
    shorter.ops.erase(shorter.ops.begin() + target, shorter.ops.end());
    shorter.result = 0;
    shorter.resultType = shorter.inputs[0].type;
    EXPECT_GT(kernelCompileCost(body), kernelCompileCost(shorter)) << bodyOpName(kind);
  }
  auto chain = [](BodyOpKind kind, uint32_t count) {
    BodyBuilder b({{F32, Broadcast::Full}});
    uint32_t value = 0;
    for (uint32_t i = 0; i < count; ++i)
      value = b.op(kind, F32, {value, 0});
    return b.yield(value, F32);
  };
  for (BodyOpKind expensive : {BodyOpKind::Exp, BodyOpKind::Log, BodyOpKind::Tanh,
                               BodyOpKind::Erf, BodyOpKind::PowF})
    EXPECT_GT(kernelCompileCost(chain(expensive, 1)),
              kernelCompileCost(chain(BodyOpKind::AddF, 8)))
        << bodyOpName(expensive);
  for (uint32_t count : {64u, 256u, 1024u}) {
    const uint64_t once = kernelCompileCost(chain(BodyOpKind::PowF, count)) -
                          kKernelCompileOverhead;
    const uint64_t twice = kernelCompileCost(chain(BodyOpKind::PowF, 2 * count)) -
                           kKernelCompileOverhead;
    EXPECT_GT(twice, 2 * once) << count;
  }
  // The package, one kernel of 1,024 chained powf (69 s to
  // compile), is past the limit alone; the SigLIP tower's largest kernel
  // is a few dozen ops.
  EXPECT_GT(kernelCompileCost(chain(BodyOpKind::PowF, 1024)), kMaxKernelCompileCost);
  EXPECT_LT(kernelCompileCost(chain(BodyOpKind::Tanh, 40)), kMaxKernelCompileCost / 100);
}

TEST(VerifyBodyTest, OpNamesRoundTrip) {
  for (unsigned k = 0; k < kBodyOpKinds; ++k) {
    auto kind = static_cast<BodyOpKind>(k);
    EXPECT_EQ(parseBodyOpName(bodyOpName(kind)), kind);
  }
  EXPECT_EQ(parseBodyOpName("math.fpowi"), std::nullopt);
  EXPECT_EQ(bodyOpArity(BodyOpKind::Constant), 0u);
  EXPECT_EQ(bodyOpArity(BodyOpKind::Tanh), 1u);
  EXPECT_EQ(bodyOpArity(BodyOpKind::CmpF), 2u);
  EXPECT_EQ(bodyOpArity(BodyOpKind::Select), 3u);
  EXPECT_EQ(bodyOpArity(BodyOpKind::Fma), 3u);
}

//===----------------------------------------------------------------------===//
// evaluateBody
//===----------------------------------------------------------------------===//

/// A body of one binary op on two full inputs of `type`.
ElementwiseBody binary(BodyOpKind kind, ElementType type) {
  BodyBuilder b({{type, Broadcast::Full}, {type, Broadcast::Full}});
  return b.yield(b.op(kind, type, {0, 1}), type);
}

float eval2(const ElementwiseBody &body, float a, float b) {
  const float inputs[] = {a, b};
  return evaluateBody(body, inputs);
}

TEST(EvaluateBodyTest, RoundsToEachOpsType) {
  const float tiny = std::ldexp(1.0f, -11);
  // 1 + 2^-11 is halfway between the f16 values 1 and 1 + 2^-10: ties to
  // even give 1. In f32 it is exact.
  EXPECT_EQ(eval2(binary(BodyOpKind::AddF, F16), 1.0f, tiny), 1.0f);
  EXPECT_EQ(eval2(binary(BodyOpKind::AddF, F32), 1.0f, tiny), 1.0f + tiny);
  // 1 + 3 x 2^-11 is halfway between 1 + 2^-10 (odd) and 1 + 2^-9 (even).
  EXPECT_EQ(eval2(binary(BodyOpKind::AddF, F16), 1.0f, 3 * tiny),
            1.0f + std::ldexp(1.0f, -9));
  // Just above the tie rounds up.
  EXPECT_EQ(
      eval2(binary(BodyOpKind::AddF, F16), 1.0f, tiny + std::ldexp(1.0f, -20)),
      1.0f + std::ldexp(1.0f, -10));
  // f16 overflow: 65504 + 16 = 65520 is the tie with 65536, which is inf;
  // 65504 + 15 stays 65504.
  EXPECT_EQ(eval2(binary(BodyOpKind::AddF, F16), 65504.0f, 16.0f), kInf);
  EXPECT_EQ(eval2(binary(BodyOpKind::AddF, F16), 65504.0f, 15.0f), 65504.0f);
  // mulf: (1 + 2^-10)^2 = 1 + 2^-9 + 2^-20 rounds to 1 + 2^-9 in f16.
  const float x = 1.0f + std::ldexp(1.0f, -10);
  EXPECT_EQ(eval2(binary(BodyOpKind::MulF, F16), x, x),
            1.0f + std::ldexp(1.0f, -9));
  // divf f16: 1 / 3 is 0x3555 = 0.333251953125.
  EXPECT_EQ(eval2(binary(BodyOpKind::DivF, F16), 1.0f, 3.0f),
            halfToFloat(0x3555));
  // f32 divf: as the f32 division.
  EXPECT_EQ(eval2(binary(BodyOpKind::DivF, F32), 1.0f, 3.0f), 1.0f / 3.0f);
}

TEST(EvaluateBodyTest, ChainRoundsAtEveryStep) {
  // f32 -> f16 -> f8E4M3FN of 272.1: f16 has 0.25 steps there, so f16 gives
  // 272, the exact tie between the f8 values 256 (even) and 288: 256.
  // Straight to f8, 272.1 is above the tie: 288.
  const float in[] = {272.1f};
  EXPECT_EQ(evaluateBody(castChainF32F16E4M3(), in), 256.0f);
  BodyBuilder b({{F32, Broadcast::Full}});
  uint32_t q = b.op(BodyOpKind::TruncF, E4M3, {0});
  EXPECT_EQ(evaluateBody(b.yield(q, E4M3), in), 288.0f);
  // Widening then narrowing a value keeps it; extf f16 -> f32 -> add in f32
  // -> truncf keeps the f32 sum's bits until the truncf.
  BodyBuilder c({{F16, Broadcast::Full}, {F16, Broadcast::Row}});
  uint32_t a = c.op(BodyOpKind::ExtF, F32, {0});
  uint32_t d = c.op(BodyOpKind::ExtF, F32, {1});
  uint32_t s = c.op(BodyOpKind::AddF, F32, {a, d});
  uint32_t h = c.op(BodyOpKind::TruncF, F16, {s});
  const float in2[] = {1.0f, std::ldexp(1.0f, -11)};
  EXPECT_EQ(evaluateBody(c.yield(s, F32), in2), 1.0f + std::ldexp(1.0f, -11));
  EXPECT_EQ(evaluateBody(c.yield(h, F16), in2), 1.0f);
}

TEST(EvaluateBodyTest, MaximumMinimumPropagateNaN) {
  for (ElementType type : {F32, F16}) {
    for (auto [kind, propagates] : {std::pair{BodyOpKind::MaximumF, true},
                                    std::pair{BodyOpKind::MinimumF, true},
                                    std::pair{BodyOpKind::MaxNumF, false},
                                    std::pair{BodyOpKind::MinNumF, false}}) {
      ElementwiseBody body = binary(kind, type);
      SCOPED_TRACE(std::string(bodyOpName(kind)) + " " +
                   std::string(elementTypeName(type)));
      if (propagates) {
        EXPECT_TRUE(std::isnan(eval2(body, kNaN, 1.0f)));
        EXPECT_TRUE(std::isnan(eval2(body, 1.0f, kNaN)));
      } else {
        EXPECT_EQ(eval2(body, kNaN, 1.0f), 1.0f);
        EXPECT_EQ(eval2(body, 1.0f, kNaN), 1.0f);
      }
      EXPECT_TRUE(std::isnan(eval2(body, kNaN, kNaN)));
    }
    EXPECT_EQ(eval2(binary(BodyOpKind::MaximumF, type), -2.0f, 3.0f), 3.0f);
    EXPECT_EQ(eval2(binary(BodyOpKind::MinimumF, type), -2.0f, 3.0f), -2.0f);
    EXPECT_EQ(eval2(binary(BodyOpKind::MaxNumF, type), -kInf, -3.0f), -3.0f);
    EXPECT_EQ(eval2(binary(BodyOpKind::MinNumF, type), kInf, -3.0f), -3.0f);
  }
}

// arith.maximumf / arith.minimumf (and LLVM's llvm.maximum / llvm.minimum,
// which the generated code uses) order -0.0 below +0.0. evaluateBody uses
// std::max / std::min, which return the first operand when the two compare
// equal: maximumf(-0, +0) gives -0 and minimumf(+0, -0) gives +0.
// (Found by this test and fixed; it keeps it fixed.)
TEST(EvaluateBodyTest, MaximumMinimumOrderSignedZeros) {
  for (ElementType type : {F32, F16}) {
    EXPECT_FALSE(
        std::signbit(eval2(binary(BodyOpKind::MaximumF, type), -0.0f, 0.0f)));
    EXPECT_FALSE(
        std::signbit(eval2(binary(BodyOpKind::MaximumF, type), 0.0f, -0.0f)));
    EXPECT_TRUE(
        std::signbit(eval2(binary(BodyOpKind::MinimumF, type), 0.0f, -0.0f)));
    EXPECT_TRUE(
        std::signbit(eval2(binary(BodyOpKind::MinimumF, type), -0.0f, 0.0f)));
  }
}

TEST(EvaluateBodyTest, CmpfPredicatesAndSelect) {
  // select(cmpf p, a, b), 1.0, 0.0) for every predicate on ordered and
  // unordered pairs.
  struct Pair {
    float a, b;
    bool lt, eq, gt, unordered;
  };
  const Pair pairs[] = {{1, 2, true, false, false, false},
                        {2, 1, false, false, true, false},
                        {1, 1, false, true, false, false},
                        {kNaN, 1, false, false, false, true},
                        {1, kNaN, false, false, false, true}};
  for (uint8_t p = 0; p < 16; ++p) {
    BodyBuilder b({{F32, Broadcast::Full}, {F32, Broadcast::Full}});
    uint32_t c = b.add(cmpOp(p, F32, 0, 1));
    uint32_t one = b.constant(F32, 1.0);
    uint32_t zero = b.constant(F32, 0.0);
    uint32_t s = b.op(BodyOpKind::Select, F32, {c, one, zero});
    ElementwiseBody body = b.yield(s, F32);
    ASSERT_EQ(verifyBody(body), std::nullopt);
    for (const Pair &pair : pairs) {
      bool ordered = !pair.unordered;
      bool expected = false;
      switch (p) {
      case AlwaysFalse:
        expected = false;
        break;
      case OEQ:
        expected = ordered && pair.eq;
        break;
      case OGT:
        expected = ordered && pair.gt;
        break;
      case OGE:
        expected = ordered && (pair.gt || pair.eq);
        break;
      case OLT:
        expected = ordered && pair.lt;
        break;
      case OLE:
        expected = ordered && (pair.lt || pair.eq);
        break;
      case ONE:
        expected = ordered && !pair.eq;
        break;
      case ORD:
        expected = ordered;
        break;
      case UEQ:
        expected = !ordered || pair.eq;
        break;
      case UGT:
        expected = !ordered || pair.gt;
        break;
      case UGE:
        expected = !ordered || pair.gt || pair.eq;
        break;
      case ULT:
        expected = !ordered || pair.lt;
        break;
      case ULE:
        expected = !ordered || pair.lt || pair.eq;
        break;
      case UNE:
        expected = !ordered || !pair.eq;
        break;
      case UNO:
        expected = !ordered;
        break;
      case AlwaysTrue:
        expected = true;
        break;
      }
      EXPECT_EQ(eval2(body, pair.a, pair.b), expected ? 1.0f : 0.0f)
          << "predicate " << int(p) << " on " << pair.a << ", " << pair.b;
    }
  }
}

TEST(EvaluateBodyTest, ReluBySelect) {
  BodyBuilder b({{F16, Broadcast::Full}});
  uint32_t zero = b.constant(F16, 0.0);
  uint32_t c = b.add(cmpOp(OGT, F16, 0, zero));
  uint32_t s = b.op(BodyOpKind::Select, F16, {c, 0, zero});
  ElementwiseBody body = b.yield(s, F16);
  for (float x : {-3.0f, -0.5f, 0.0f, 0.25f, 7.0f}) {
    const float in[] = {x};
    EXPECT_EQ(evaluateBody(body, in), x > 0 ? x : 0.0f);
  }
  const float nan[] = {kNaN};
  EXPECT_EQ(evaluateBody(body, nan), 0.0f); // ogt is false on NaN.
}

TEST(EvaluateBodyTest, F8TruncationSaturates) {
  BodyBuilder b({{F32, Broadcast::Full}});
  uint32_t q = b.op(BodyOpKind::TruncF, E4M3, {0});
  ElementwiseBody e4m3 = b.yield(q, E4M3);
  auto eval1 = [](const ElementwiseBody &body, float x) {
    const float in[] = {x};
    return evaluateBody(body, in);
  };
  EXPECT_EQ(eval1(e4m3, 448.0f), 448.0f);
  EXPECT_EQ(eval1(e4m3, 464.0f), 448.0f); // The tie with "480" (NaN code).
  EXPECT_EQ(eval1(e4m3, 1000.0f), 448.0f);
  EXPECT_EQ(eval1(e4m3, 1e30f), 448.0f);
  EXPECT_EQ(eval1(e4m3, kInf), 448.0f);
  EXPECT_EQ(eval1(e4m3, -kInf), -448.0f);
  EXPECT_EQ(eval1(e4m3, -500.0f), -448.0f);
  EXPECT_TRUE(std::isnan(eval1(e4m3, kNaN)));
  // Ordinary rounding: 0.3 lies between 0.28125 and 0.3125 (steps of
  // 2^-5), nearer 0.3125; the smallest subnormal is 2^-9, half of it ties
  // to 0.
  EXPECT_EQ(eval1(e4m3, 0.3f), 0.3125f);
  EXPECT_EQ(eval1(e4m3, std::ldexp(1.0f, -10)), 0.0f);
  EXPECT_EQ(eval1(e4m3, std::ldexp(1.5f, -10)), std::ldexp(1.0f, -9));

  BodyBuilder c({{F16, Broadcast::Full}});
  uint32_t r = c.op(BodyOpKind::TruncF, E5M2, {0});
  ElementwiseBody e5m2 = c.yield(r, E5M2);
  EXPECT_EQ(eval1(e5m2, 57344.0f), 57344.0f);
  EXPECT_EQ(eval1(e5m2, 65504.0f), 57344.0f);
  EXPECT_EQ(eval1(e5m2, kInf), 57344.0f);
  EXPECT_EQ(eval1(e5m2, -kInf), -57344.0f);
}

TEST(EvaluateBodyTest, EveryOpsBoundCoversWhereItsOperandsCanMove) {
  // Property of each row of the body-op table: when the operands move by
  // at most ea, eb, ec, the exact value moves by at most the propagated
  // bound. Sampled on a grid over the whole box of operands (its corners
  // included), on each op's own domain, for small and large moves.
  std::mt19937 random(11);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  const std::vector<double> moves = {1e-7, 1e-3, 0.05};
  unsigned checked = 0;
  for (unsigned k = 0; k < kBodyOpKinds; ++k) {
    const BodyOpKind kind = BodyOpKind(k);
    // Constants carry nothing; a comparison and a select are bounded by
    // whether the comparison can flip (evaluateBodyWithBound).
    if (kind == BodyOpKind::Constant || kind == BodyOpKind::CmpF ||
        kind == BodyOpKind::Select)
      continue;
    const bool positiveA = kind == BodyOpKind::Log || kind == BodyOpKind::Sqrt ||
                           kind == BodyOpKind::Rsqrt || kind == BodyOpKind::PowF;
    const unsigned arity = bodyOpArity(kind);
    for (int trial = 0; trial < 40; ++trial) {
      const double relative = moves[trial % moves.size()];
      double x[3], e[3];
      for (unsigned i = 0; i < 3; ++i) {
        x[i] = -4 + 8 * unit(random);
        e[i] = i < arity ? relative * (1 + std::fabs(x[i])) * unit(random) : 0;
      }
      if (positiveA) {
        x[0] = 0.25 + 4 * unit(random);
        e[0] = std::min(e[0], x[0] / 2);
      }
      if (kind == BodyOpKind::PowF)
        x[1] = -3 + 6 * unit(random);
      if (kind == BodyOpKind::DivF) { // A divisor kept away from zero.
        x[1] = (unit(random) < 0.5 ? -1 : 1) * (0.5 + 3.5 * unit(random));
        e[1] = std::min(e[1], std::fabs(x[1]) / 2);
      }
      BodyOp op{kind, ElementType::F32, 0, {0, 1, 2}, 0};
      const double value = bodyOpValue(op, x[0], x[1], x[2]);
      const double bound =
          bodyOpPropagatedBound(kind, x[0], x[1], x[2], value, e[0], e[1], e[2]);
      const int steps = 8;
      double worst = 0;
      for (int i = 0; i <= steps; ++i)
        for (int j = 0; j <= (arity > 1 ? steps : 0); ++j)
          for (int l = 0; l <= (arity > 2 ? steps : 0); ++l) {
            const double a = x[0] - e[0] + 2 * e[0] * i / steps;
            const double b = x[1] - e[1] + 2 * e[1] * j / steps;
            const double c = x[2] - e[2] + 2 * e[2] * l / steps;
            worst = std::max(worst, std::fabs(bodyOpValue(op, a, b, c) - value));
          }
      // Slack for the double arithmetic of the check itself.
      EXPECT_LE(worst, bound + 1e-14 * (1 + std::fabs(value)))
          << bodyOpName(kind) << " at (" << x[0] << ", " << x[1] << ", " << x[2]
          << ") moved by (" << e[0] << ", " << e[1] << ", " << e[2] << ")";
      ++checked;
    }
  }
  EXPECT_EQ(checked, 40u * (kBodyOpKinds - 3));
}

TEST(EvaluateBodyTest, GeluTanhValues) {
  // GELU(y) at y = x + b in f16; tanh by the C library then rounded. At
  // y = 0 the result is 0; for large |y| it is y or -0.
  ElementwiseBody body = biasGeluTanhF16();
  EXPECT_EQ(eval2(body, 0.5f, -0.5f), 0.0f);
  EXPECT_EQ(eval2(body, 8.0f, 2.0f), 10.0f);
  EXPECT_EQ(eval2(body, -8.0f, -2.0f), 0.0f);
  // At y = 1 GELU is 0.841192; the f16 roundings of every step keep it
  // within a few f16 steps (2^-11 near 0.84).
  float v = eval2(body, 1.0f, 0.0f);
  EXPECT_NEAR(v, 0.8412f, 2e-3f);
}

//===----------------------------------------------------------------------===//
// bodyHash and symbols
//===----------------------------------------------------------------------===//

TEST(BodyHashTest, EqualBodiesEqualHashes) {
  EXPECT_EQ(bodyHash(biasGeluTanhF16()), bodyHash(biasGeluTanhF16()));
  EXPECT_EQ(bodyHash(siluF16()), bodyHash(siluF16()));
  EXPECT_NE(bodyHash(siluF16()), bodyHash(biasGeluTanhF16()));
  EXPECT_NE(bodyHash(siluF16()), bodyHash(castChainF32F16E4M3()));
  // The `constant` of an op that is no Constant is not part of the body.
  ElementwiseBody a = siluF16(), b = siluF16();
  b.ops[0].constant = 42.0;
  EXPECT_EQ(bodyHash(a), bodyHash(b));
}

TEST(BodyHashTest, EveryFieldChangesIt) {
  const ElementwiseBody base = biasGeluTanhF16();
  const uint64_t hash = bodyHash(base);
  auto changed = [&](auto mutate) {
    ElementwiseBody body = base;
    mutate(body);
    return bodyHash(body);
  };
  // Op 3 is the constant 0.044715; op 8 the tanh.
  EXPECT_NE(changed([](ElementwiseBody &b) {
              b.ops[3].constant =
                  halfToFloat(floatToHalf(b.ops[3].constant) + 1);
            }),
            hash);
  EXPECT_NE(changed([](ElementwiseBody &b) {
              b.ops[3].constant = -b.ops[3].constant;
            }),
            hash);
  EXPECT_NE(changed([](ElementwiseBody &b) {
              b.inputs[1].broadcast = Broadcast::Full;
            }),
            hash);
  EXPECT_NE(changed([](ElementwiseBody &b) {
              b.inputs[1].broadcast = Broadcast::Scalar;
            }),
            hash);
  EXPECT_NE(changed([](ElementwiseBody &b) { b.inputs[0].type = F32; }), hash);
  EXPECT_NE(changed([](ElementwiseBody &b) { b.ops[0].operands[1] = 0; }),
            hash);
  EXPECT_NE(changed([](ElementwiseBody &b) {
              std::swap(b.ops[0].operands[0], b.ops[0].operands[1]);
            }),
            hash);
  EXPECT_NE(
      changed([](ElementwiseBody &b) { b.ops[8].kind = BodyOpKind::Erf; }),
      hash);
  EXPECT_NE(changed([](ElementwiseBody &b) { b.ops[8].type = F32; }), hash);
  EXPECT_NE(changed([](ElementwiseBody &b) { b.ops[8].predicate = 1; }), hash);
  EXPECT_NE(changed([](ElementwiseBody &b) { b.resultType = F32; }), hash);
  EXPECT_NE(changed([](ElementwiseBody &b) { b.result -= 1; }), hash);
  EXPECT_NE(changed([](ElementwiseBody &b) { b.ops.pop_back(); }), hash);
  EXPECT_NE(changed([](ElementwiseBody &b) { b.inputs.pop_back(); }), hash);
}

TEST(BodyHashTest, SymbolFormat) {
  for (const ElementwiseBody &body :
       {biasGeluTanhF16(), siluF16(), castChainF32F16E4M3()}) {
    std::string symbol = elementwiseSymbol(body);
    EXPECT_TRUE(std::regex_match(symbol, std::regex("ipu_ew_[0-9a-f]{16}")))
        << symbol;
    char expected[32];
    std::snprintf(expected, sizeof(expected), "ipu_ew_%016llx",
                  static_cast<unsigned long long>(bodyHash(body)));
    EXPECT_EQ(symbol, expected);
  }
  // A hash with leading zero nibbles still prints 16 digits.
  EXPECT_EQ(std::string("ipu_ew_").size() + 16,
            elementwiseSymbol(siluF16()).size());
}

TEST(BodyHashTest, Fnv1a64KnownVectors) {
  // The FNV-1a 64 test vectors (offset basis, "a", "foobar").
  EXPECT_EQ(fnv1a64(nullptr, 0), 0xcbf29ce484222325ull);
  const uint8_t a[] = {'a'};
  EXPECT_EQ(fnv1a64(a, 1), 0xaf63dc4c8601ec8cull);
  const uint8_t foobar[] = {'f', 'o', 'o', 'b', 'a', 'r'};
  EXPECT_EQ(fnv1a64(foobar, 6), 0x85944171f73967e8ull);
}

//===----------------------------------------------------------------------===//
// The KernelSpec of an ElementwiseKernel
//===----------------------------------------------------------------------===//

/// in0 f16 full, in1 f32 row, in2 f8E4M3FN scalar; out f8E5M2:
/// truncf(in0 + truncf(in1)) * extf(in2)).
ElementwiseBody mixedBody() {
  BodyBuilder b({{F16, Broadcast::Full},
                 {F32, Broadcast::Row},
                 {E4M3, Broadcast::Scalar}});
  uint32_t row = b.op(BodyOpKind::TruncF, F16, {1});
  uint32_t scale = b.op(BodyOpKind::ExtF, F16, {2});
  uint32_t sum = b.op(BodyOpKind::AddF, F16, {0, row});
  uint32_t product = b.op(BodyOpKind::MulF, F16, {sum, scale});
  uint32_t out = b.op(BodyOpKind::TruncF, E5M2, {product});
  return b.yield(out, E5M2);
}

TEST(ElementwiseKernelTest, Spec) {
  ElementwiseBody body = mixedBody();
  ASSERT_EQ(verifyBody(body), std::nullopt);
  ElementwiseKernel kernel("mixed", elementwiseSymbol(body), body);
  const KernelSpec &spec = kernel.spec();
  EXPECT_EQ(spec.name, "mixed");
  EXPECT_EQ(spec.elementwise, &kernel);
  ASSERT_EQ(spec.operandNames.size(), 4u);
  EXPECT_EQ(spec.operandNames[0], "in0");
  EXPECT_EQ(spec.operandNames[1], "in1");
  EXPECT_EQ(spec.operandNames[2], "in2");
  EXPECT_EQ(spec.operandNames[3], "out");
  ASSERT_EQ(spec.paramNames.size(), 2u);
  EXPECT_EQ(spec.paramNames[0], "rows");
  EXPECT_EQ(spec.paramNames[1], "cols");
  EXPECT_EQ(kernel.symbol(), elementwiseSymbol(body));
  EXPECT_EQ(kernel.entry, nullptr);
  // A generated kernel is not in the device/ registry.
  EXPECT_EQ(lookupKernel("mixed"), nullptr);
}

TEST(ElementwiseKernelTest, OperandShapesAndBytes) {
  ElementwiseBody body = mixedBody();
  ElementwiseKernel kernel("mixed", elementwiseSymbol(body), body);
  const KernelSpec &spec = kernel.spec();
  struct Case {
    int64_t rows, cols;
    uint64_t bytes[4]; ///< in0 (rows x cols f16), in1 (cols f32), in2 (one
                       ///< f8), out (rows x cols f8E5M2), rows padded.
  };
  const Case cases[] = {
      // 5 f16 = 10 -> 12 bytes a row; 5 f32 = 20; one f8 -> 4; 5 f8 -> 8.
      {3, 5, {3 * 12, 20, 4, 3 * 8}},
      // 4 f16 = 8; 4 f32 = 16; 4; 4 f8 = 4: no padding.
      {3, 4, {3 * 8, 16, 4, 3 * 4}},
      // 1 f16 -> 4; 1 f32 = 4; 4; 1 f8 -> 4.
      {7, 1, {7 * 4, 4, 4, 7 * 4}},
      // 1076 f16 = 2152; 1076 f32 = 4304; 4; 1076 f8 = 1076.
      {2, 1076, {2 * 2152, 4304, 4, 2 * 1076}},
      // 1077: 2154 -> 2156; 4308; 4; 1077 -> 1080.
      {2, 1077, {2 * 2156, 4308, 4, 2 * 1080}},
  };
  for (const Case &c : cases) {
    const int64_t params[] = {c.rows, c.cols};
    SCOPED_TRACE(std::to_string(c.rows) + " x " + std::to_string(c.cols));
    ASSERT_EQ(checkKernelParams(spec, params), std::nullopt);
    KernelOperandShape in0 = kernelOperandShape(spec, params, 0);
    EXPECT_EQ(in0.rows, c.rows);
    EXPECT_EQ(in0.cols, c.cols);
    EXPECT_EQ(in0.type, F16);
    KernelOperandShape in1 = kernelOperandShape(spec, params, 1);
    EXPECT_EQ(in1.rows, 1);
    EXPECT_EQ(in1.cols, c.cols);
    EXPECT_EQ(in1.type, F32);
    KernelOperandShape in2 = kernelOperandShape(spec, params, 2);
    EXPECT_EQ(in2.rows, 1);
    EXPECT_EQ(in2.cols, 1);
    EXPECT_EQ(in2.type, E4M3);
    KernelOperandShape out = kernelOperandShape(spec, params, 3);
    EXPECT_EQ(out.rows, c.rows);
    EXPECT_EQ(out.cols, c.cols);
    EXPECT_EQ(out.type, E5M2);
    for (unsigned o = 0; o < 4; ++o)
      EXPECT_EQ(kernelOperandBytes(spec, params, o), c.bytes[o])
          << "operand " << o;
  }
  // Past the last operand there is no shape.
  const int64_t params[] = {3, 5};
  KernelOperandShape none = kernelOperandShape(spec, params, 4);
  EXPECT_EQ(none.rows, 0);
  EXPECT_EQ(none.type, std::nullopt);
}

TEST(ElementwiseKernelTest, ParamChecks) {
  ElementwiseKernel kernel("silu", elementwiseSymbol(siluF16()), siluF16());
  const int64_t zeroRows[] = {0, 4};
  std::optional<std::string> error = checkKernelParams(kernel.spec(), zeroRows);
  ASSERT_TRUE(error);
  EXPECT_EQ(*error, "silu: parameter 'rows' = 0 is not in [1, 2^24)");
  const int64_t hugeCols[] = {1, int64_t(1) << 24};
  error = checkKernelParams(kernel.spec(), hugeCols);
  ASSERT_TRUE(error);
  EXPECT_EQ(*error, "silu: parameter 'cols' = 16777216 is not in [1, 2^24)");
  const int64_t largest[] = {(int64_t(1) << 24) - 1, 1};
  EXPECT_EQ(checkKernelParams(kernel.spec(), largest), std::nullopt);
  // Invalid parameters cost nothing.
  EXPECT_EQ(estimateKernelCycles(kernel.spec(), zeroRows, TargetModel::ipu21()),
            0u);
}

TEST(ElementwiseKernelTest, ExecuteWithoutEntryDoesNothing) {
  // Before the kernel object is loaded, executeKernel has no code to run
  // and leaves the output alone.
  ElementwiseKernel kernel("silu", elementwiseSymbol(siluF16()), siluF16());
  uint8_t in[4] = {0, 0x3C, 0, 0x3C}, out[4] = {0xA5, 0xA5, 0xA5, 0xA5};
  uint8_t *operands[] = {in, out};
  const int64_t params[] = {1, 2};
  executeKernel(kernel.spec(), params, TargetModel::ipu21(), operands);
  for (uint8_t byte : out)
    EXPECT_EQ(byte, 0xA5);
}


TEST(RowInvariantValuesTest, ColumnScalarConstantsAndTheirOpsOnly) {
  // in0 full, in1 column, in2 scalar; ops: 3 = const, 4 = in1 + in2,
  // 5 = 3 / 4, 6 = in0 * 5, 7 = in0 + in0.
  BodyBuilder b({{F32, Broadcast::Full}, {F32, Broadcast::Column}, {F32, Broadcast::Scalar}});
  uint32_t one = b.constant(F32, 1.0);
  uint32_t sum = b.op(BodyOpKind::AddF, F32, {1, 2});
  uint32_t reciprocal = b.op(BodyOpKind::DivF, F32, {one, sum});
  uint32_t scaled = b.op(BodyOpKind::MulF, F32, {0, reciprocal});
  uint32_t twice = b.op(BodyOpKind::AddF, F32, {0, 0});
  ElementwiseBody body = b.yield(scaled, F32);
  (void)twice;
  EXPECT_EQ(rowInvariantValues(body),
            (std::vector<bool>{false, true, true, true, true, true, false, false}));
}

TEST_F(EstimateTest, RowInvariantOpsRunOnceARow) {
  // Softmax's normalisation on a tile's 32 x 183 block of f32 exps, into
  // f16: x / s against x * (1 / s), s a column input. lanes 2; not
  // contiguous (a column input): 32 loops of 92 vectors, 2944 vectors,
  // perWorker ceil(2944 / 6) = 491, rowsPerWorker min(32, 6 + 1) = 7.
  //   x / s: I = divide 10 + truncf 1 + load 1 + store 1 = 13,
  //          R = 15 + the column's load 1 = 16:
  //          36 + 6 x (17 + 7 x 16 + 491 x 13) = 39108 (the tower's ew15).
  //   x * r: I = mulf 1 + truncf 1 + load 1 + store 1 = 4,
  //          R = 16 + the divide, once a row, 10 = 26:
  //          36 + 6 x (17 + 7 x 26 + 491 x 4) = 13014.
  EXPECT_EQ(target.ewDivideInstructionsF32, 10.0);
  EXPECT_EQ(target.ewCastF32F16Instructions, 2.0);
  BodyBuilder divide({{F32, Broadcast::Full}, {F32, Broadcast::Column}});
  uint32_t q = divide.op(BodyOpKind::DivF, F32, {0, 1});
  uint32_t h = divide.op(BodyOpKind::TruncF, F16, {q});
  ElementwiseCycles byDivide = estimateElementwise(target, divide.yield(h, F16), 32, 183);
  BodyBuilder multiply({{F32, Broadcast::Full}, {F32, Broadcast::Column}});
  uint32_t one = multiply.constant(F32, 1.0);
  uint32_t r = multiply.op(BodyOpKind::DivF, F32, {one, 1});
  uint32_t p = multiply.op(BodyOpKind::MulF, F32, {0, r});
  uint32_t h2 = multiply.op(BodyOpKind::TruncF, F16, {p});
  ElementwiseCycles byReciprocal =
      estimateElementwise(target, multiply.yield(h2, F16), 32, 183);
  EXPECT_EQ(byDivide.rowsPerWorker, 7u);
  EXPECT_DOUBLE_EQ(byDivide.instructionsPerVector, 13.0);
  EXPECT_EQ(byDivide.total, 39108u);
  EXPECT_EQ(byReciprocal.rowsPerWorker, 7u);
  EXPECT_DOUBLE_EQ(byReciprocal.instructionsPerVector, 4.0);
  EXPECT_EQ(byReciprocal.total, 13014u);
}

//===----------------------------------------------------------------------===//
// Row reductions: verifyBody, combineReduction, bodyHash, the estimate
//===----------------------------------------------------------------------===//

/// sum(x) of an f32 row: the body is its input.
ElementwiseBody identitySumF32() {
  BodyBuilder b({{F32, Broadcast::Full}});
  ElementwiseBody body = b.yield(0, F32);
  body.reduction = RowReduction::Add;
  body.init = 0.0;
  return body;
}

/// softmax's sum: exp(x - m) with m one value per row (a column input).
ElementwiseBody softmaxSumF32() {
  BodyBuilder b({{F32, Broadcast::Full}, {F32, Broadcast::Column}});
  uint32_t d = b.op(BodyOpKind::SubF, F32, {0, 1});
  uint32_t e = b.op(BodyOpKind::Exp, F32, {d});
  ElementwiseBody body = b.yield(e, F32);
  body.reduction = RowReduction::Add;
  body.init = 0.0;
  return body;
}

/// max over an f16 row, extended to f32 (f16 reductions accumulate in f32).
ElementwiseBody maxF16() {
  BodyBuilder b({{F16, Broadcast::Full}});
  uint32_t w = b.op(BodyOpKind::ExtF, F32, {0});
  ElementwiseBody body = b.yield(w, F32);
  body.reduction = RowReduction::Max;
  body.init = -INFINITY;
  return body;
}

TEST(ReductionVerifyTest, AcceptsF32Reductions) {
  EXPECT_EQ(verifyBody(identitySumF32()), std::nullopt);
  EXPECT_EQ(verifyBody(softmaxSumF32()), std::nullopt);
  EXPECT_EQ(verifyBody(maxF16()), std::nullopt);
  ElementwiseBody maxnum = maxF16();
  maxnum.reduction = RowReduction::MaxNum;
  EXPECT_EQ(verifyBody(maxnum), std::nullopt);
  // A NaN init is an f32 value too (it is not compared with itself).
  ElementwiseBody nanInit = identitySumF32();
  nanInit.init = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(verifyBody(nanInit), std::nullopt);
  // Values at the ends of f32: the largest finite, the smallest subnormal.
  for (double init : {double(std::numeric_limits<float>::max()),
                      double(std::numeric_limits<float>::denorm_min()), -0.0,
                      double(-kInf)}) {
    ElementwiseBody body = identitySumF32();
    body.init = init;
    EXPECT_EQ(verifyBody(body), std::nullopt) << "init " << init;
  }
}

TEST(ReductionVerifyTest, RefusesAnF16Result) {
  // An f16 body yielding f16 is a fine elementwise body, but a reduction
  // accumulates in f32.
  BodyBuilder b({{F16, Broadcast::Full}});
  uint32_t n = b.op(BodyOpKind::NegF, F16, {0});
  ElementwiseBody body = b.yield(n, F16);
  EXPECT_EQ(verifyBody(body), std::nullopt);
  for (RowReduction reduction :
       {RowReduction::Add, RowReduction::Max, RowReduction::MaxNum}) {
    body.reduction = reduction;
    body.init = reduction == RowReduction::Add ? 0.0 : -INFINITY;
    std::optional<std::string> error = verifyBody(body);
    ASSERT_TRUE(error.has_value()) << rowReductionName(reduction);
    EXPECT_TRUE(contains(*error, "accumulates in f32, not f16"));
    EXPECT_TRUE(contains(*error, std::string(rowReductionName(reduction))));
  }
  // An f8 result likewise.
  BodyBuilder q({{F16, Broadcast::Full}});
  uint32_t t = q.op(BodyOpKind::TruncF, E4M3, {0});
  ElementwiseBody f8 = q.yield(t, E4M3);
  f8.reduction = RowReduction::Max;
  f8.init = -INFINITY;
  ASSERT_TRUE(verifyBody(f8).has_value());
  EXPECT_TRUE(contains(*verifyBody(f8), "not f8E4M3FN"));
}

TEST(ReductionVerifyTest, RefusesAnInitNotExactInF32) {
  // 0.1 and 1 + 2^-30 round in f32; 1e39 overflows it; half the smallest
  // subnormal underflows to 0.
  for (double init : {0.1, 1.0 + std::ldexp(1.0, -30), 1e39, -1e39,
                      std::ldexp(1.0, -150)}) {
    ElementwiseBody body = identitySumF32();
    body.init = init;
    std::optional<std::string> error = verifyBody(body);
    ASSERT_TRUE(error.has_value()) << "init " << init;
    EXPECT_TRUE(contains(*error, "init is not an f32 value")) << "init " << init;
  }
  // Without a reduction init means nothing and is not checked.
  BodyBuilder b({{F32, Broadcast::Full}});
  ElementwiseBody plain = b.yield(0, F32);
  plain.init = 0.1;
  EXPECT_EQ(verifyBody(plain), std::nullopt);
}

TEST(CombineReductionTest, AddIsExactInDouble) {
  EXPECT_EQ(combineReduction(RowReduction::Add, 1.0, 2.0), 3.0);
  // Exact in double where f32 would round: 2^24 + 1.
  EXPECT_EQ(combineReduction(RowReduction::Add, 16777216.0, 1.0), 16777217.0);
  // Signed zeros: -0 + -0 = -0, -0 + +0 = +0 (round to nearest).
  EXPECT_TRUE(std::signbit(combineReduction(RowReduction::Add, -0.0, -0.0)));
  EXPECT_FALSE(std::signbit(combineReduction(RowReduction::Add, -0.0, 0.0)));
  EXPECT_FALSE(std::signbit(combineReduction(RowReduction::Add, 0.0, -0.0)));
  EXPECT_TRUE(std::isnan(combineReduction(RowReduction::Add, 1.0, NAN)));
  EXPECT_TRUE(std::isnan(combineReduction(RowReduction::Add, INFINITY, -INFINITY)));
  EXPECT_EQ(combineReduction(RowReduction::Add, INFINITY, 1e308), INFINITY);
}

TEST(CombineReductionTest, MaxLetsNaNWinAndOrdersSignedZeros) {
  const RowReduction max = RowReduction::Max;
  EXPECT_EQ(combineReduction(max, 1.0, 2.0), 2.0);
  EXPECT_EQ(combineReduction(max, 2.0, 1.0), 2.0);
  EXPECT_EQ(combineReduction(max, -INFINITY, -1e30), -1e30);
  EXPECT_EQ(combineReduction(max, -INFINITY, -INFINITY), -INFINITY);
  // arith.maximumf: NaN in either place gives NaN.
  EXPECT_TRUE(std::isnan(combineReduction(max, NAN, 1.0)));
  EXPECT_TRUE(std::isnan(combineReduction(max, 1.0, NAN)));
  EXPECT_TRUE(std::isnan(combineReduction(max, -INFINITY, NAN)));
  EXPECT_TRUE(std::isnan(combineReduction(max, NAN, INFINITY)));
  // +0 is above -0, in either order.
  EXPECT_FALSE(std::signbit(combineReduction(max, -0.0, 0.0)));
  EXPECT_FALSE(std::signbit(combineReduction(max, 0.0, -0.0)));
  EXPECT_TRUE(std::signbit(combineReduction(max, -0.0, -0.0)));
  EXPECT_EQ(combineReduction(max, -0.0, -1.0), 0.0);
  EXPECT_TRUE(std::signbit(combineReduction(max, -0.0, -1.0)));
}

TEST(CombineReductionTest, MaxNumLetsNaNLose) {
  const RowReduction maxnum = RowReduction::MaxNum;
  EXPECT_EQ(combineReduction(maxnum, 1.0, 2.0), 2.0);
  EXPECT_EQ(combineReduction(maxnum, NAN, 1.0), 1.0);
  EXPECT_EQ(combineReduction(maxnum, 1.0, NAN), 1.0);
  EXPECT_EQ(combineReduction(maxnum, -INFINITY, NAN), -INFINITY);
  EXPECT_TRUE(std::isnan(combineReduction(maxnum, NAN, NAN)));
  // arith.maxnumf leaves the sign of a zero result open: either zero.
  EXPECT_EQ(combineReduction(maxnum, -0.0, 0.0), 0.0);
  EXPECT_EQ(combineReduction(maxnum, 0.0, -0.0), 0.0);
  EXPECT_TRUE(std::signbit(combineReduction(maxnum, -0.0, -0.0)));
}

TEST(CombineReductionTest, IdentitiesLeaveValuesUnchanged) {
  for (RowReduction reduction :
       {RowReduction::Add, RowReduction::Max, RowReduction::MaxNum})
    for (double value : {-1e30, -1.0, 0.5, 3e38, double(kInf), double(-kInf)})
      EXPECT_EQ(combineReduction(reduction, reductionIdentity(reduction), value),
                value)
          << rowReductionName(reduction) << " " << value;
  EXPECT_EQ(reductionIdentity(RowReduction::Add), 0.0);
  EXPECT_EQ(reductionIdentity(RowReduction::Max), -INFINITY);
  EXPECT_EQ(reductionIdentity(RowReduction::MaxNum), -INFINITY);
}

TEST(ReductionNamesTest, RoundTrip) {
  for (unsigned r = 0; r < kRowReductions; ++r) {
    const RowReduction reduction = static_cast<RowReduction>(r);
    EXPECT_EQ(parseRowReductionName(rowReductionName(reduction)), reduction);
  }
  EXPECT_EQ(rowReductionName(RowReduction::MaxNum), "maxnum");
  EXPECT_EQ(parseRowReductionName("sum"), std::nullopt);
  EXPECT_EQ(parseBroadcastName("column"), Broadcast::Column);
  EXPECT_EQ(broadcastName(Broadcast::Column), "column");
}

TEST(ReductionHashTest, InitCountsOnlyWithAReduction) {
  // Without a reduction, init is not part of the body: elementwise bodies
  // hash as they did before reductions existed.
  ElementwiseBody a = siluF16(), b = siluF16();
  b.init = 1.5;
  EXPECT_EQ(bodyHash(a), bodyHash(b));
  b.init = -INFINITY;
  EXPECT_EQ(bodyHash(a), bodyHash(b));
  EXPECT_EQ(elementwiseSymbol(a), elementwiseSymbol(b));
}

TEST(ReductionHashTest, ReductionAndInitChangeIt) {
  const ElementwiseBody sum = identitySumF32();
  ElementwiseBody plain = sum;
  plain.reduction = RowReduction::None;
  ElementwiseBody max = sum, maxnum = sum;
  max.reduction = RowReduction::Max;
  maxnum.reduction = RowReduction::MaxNum;
  EXPECT_NE(bodyHash(sum), bodyHash(plain));
  EXPECT_NE(bodyHash(sum), bodyHash(max));
  EXPECT_NE(bodyHash(max), bodyHash(maxnum));
  EXPECT_NE(bodyHash(sum), bodyHash(maxnum));
  // Same reduction, two inits (-0 and +0 included: they are different
  // sums of a row of -0).
  for (double other : {1.0, double(-INFINITY), -0.0}) {
    ElementwiseBody body = sum;
    body.init = other;
    EXPECT_NE(bodyHash(body), bodyHash(sum)) << "init " << other;
    EXPECT_NE(elementwiseSymbol(body), elementwiseSymbol(sum));
  }
  ElementwiseBody max2 = max;
  max2.init = -INFINITY;
  EXPECT_NE(bodyHash(max), bodyHash(max2));
  // Equal reduction bodies share a hash.
  EXPECT_EQ(bodyHash(identitySumF32()), bodyHash(identitySumF32()));
}

TEST(ReductionShapeTest, OutputIsOneColumnAndColumnInputsOneValueARow) {
  ElementwiseKernel kernel("sum", elementwiseSymbol(softmaxSumF32()),
                           softmaxSumF32());
  const int64_t params[] = {6, 24};
  KernelOperandShape x = kernelOperandShape(kernel.spec(), params, 0);
  KernelOperandShape m = kernelOperandShape(kernel.spec(), params, 1);
  KernelOperandShape out = kernelOperandShape(kernel.spec(), params, 2);
  EXPECT_EQ(x.rows, 6);
  EXPECT_EQ(x.cols, 24);
  EXPECT_EQ(m.rows, 6);
  EXPECT_EQ(m.cols, 1);
  EXPECT_EQ(out.rows, 6);
  EXPECT_EQ(out.cols, 1);
  EXPECT_EQ(out.type, F32);
}

// estimateElementwise with a reduction (Elementwise.cpp):
//   lanes = 64 / widest bits, as for an elementwise body
//   I     = the body's ops + ewLoadStoreInstructions per full or row input
//           except the first full input (its load issues with the combine)
//           + reduceVectorInstructions (the combine; no store per vector)
//   R     = reduceRowOverheadInstructions + ewLoadStoreInstructions per
//           column input (its value is loaded once a row)
//   never contiguous: `rows` loops of `cols`
//   vectorsPerRow = ceil(cols / lanes)
//   rowsPerWorker = ceil(rows / workersPerTile) (rows split whole)
//   perWorker     = rowsPerWorker * vectorsPerRow
//   total = vertexCallCycles + workerSupervisorCycles
//         + workersPerTile * (workerPrologueInstructions
//             + ceil(rowsPerWorker * R) + ceil(perWorker * I))
class ReductionEstimateTest : public EstimateTest {
protected:
  uint64_t fixed() const {
    return target.vertexCallCycles + target.workerSupervisorCycles;
  }
  uint64_t workers() const { return target.workersPerTile; }
  void SetUp() override {
    EstimateTest::SetUp();
    // ipu21, docs/research/poplibs-reduce.md.
    EXPECT_EQ(target.reduceRowOverheadInstructions, 12u);
    EXPECT_EQ(target.reduceVectorInstructions, 1.0);
    EXPECT_EQ(target.ewArithInstructionsF32, 1.0);
    EXPECT_EQ(target.ewExpInstructionsF32, 6.0);
  }
};

TEST_F(ReductionEstimateTest, IdentitySumF32Rows8x729) {
  // lanes = 64 / 32 = 2. No ops; the one full input's load is bundled with
  // the combine: I = reduceVectorInstructions = 1. R = 12.
  // vectorsPerRow = ceil(729 / 2) = 365; vectors = 8 x 365 = 2920.
  // rowsPerWorker = ceil(8 / 6) = 2; perWorker = 2 x 365 = 730.
  // Worker: 2 x 12 + 730 x 1 = 754. total = 36 + 6 x (17 + 754) = 4662.
  const double I = target.reduceVectorInstructions;
  const double R = target.reduceRowOverheadInstructions;
  const uint64_t vectorsPerRow = (729 + 1) / 2;
  const uint64_t rowsPerWorker = (8 + workers() - 1) / workers();
  const uint64_t perWorker = rowsPerWorker * vectorsPerRow;
  const uint64_t expected =
      fixed() + workers() * (target.workerPrologueInstructions +
                             static_cast<uint64_t>(std::ceil(rowsPerWorker * R)) +
                             static_cast<uint64_t>(std::ceil(perWorker * I)));
  EXPECT_EQ(expected, 4662u); // The hand count above.
  ElementwiseCycles cycles = estimateElementwise(target, identitySumF32(), 8, 729);
  EXPECT_EQ(cycles.lanes, 2u);
  EXPECT_DOUBLE_EQ(cycles.instructionsPerVector, I);
  EXPECT_EQ(cycles.vectors, 8u * vectorsPerRow);
  EXPECT_EQ(cycles.rowsPerWorker, rowsPerWorker);
  EXPECT_EQ(cycles.total, expected);
}

TEST_F(ReductionEstimateTest, SumOfWidenedF16Rows8x729) {
  // extf f16 -> f32 alone, summed (sumsWidenedHalves): 4 halves a load
  // into the f32 accumulators, the widening free. lanes = 4,
  // I = reduceVectorInstructions = 1, R = reduceWidenedRowOverhead-
  // Instructions = 18. vectorsPerRow = ceil(729 / 4) = 183; rowsPerWorker
  // = 2; perWorker = 366. Worker: 36 + 366 = 402. total = 36 + 6 x (17 +
  // 402) = 2550 (at f32's lanes with a cast a vector, as before: 36 + 6 x
  // (17 + 24 + 730 x 2) = 9042).
  EXPECT_EQ(target.reduceWidenedRowOverheadInstructions, 18u);
  BodyBuilder b({{F16, Broadcast::Full}});
  uint32_t wide = b.op(BodyOpKind::ExtF, F32, {0});
  ElementwiseBody body = b.yield(wide, F32);
  body.reduction = RowReduction::Add;
  body.init = 0.0;
  ASSERT_TRUE(sumsWidenedHalves(body));
  ElementwiseCycles cycles = estimateElementwise(target, body, 8, 729);
  EXPECT_EQ(cycles.lanes, 4u);
  EXPECT_DOUBLE_EQ(cycles.instructionsPerVector, target.reduceVectorInstructions);
  EXPECT_EQ(cycles.vectors, 8u * 183);
  EXPECT_EQ(cycles.total, 2550u);
  // Anything more in the body, a max, an f8 input or a column input keeps
  // the f32 lanes.
  ElementwiseBody scaled = body;
  scaled.ops.push_back({BodyOpKind::MulF, F32, 0, {1, 1, 0}, 0});
  scaled.result = 2;
  EXPECT_FALSE(sumsWidenedHalves(scaled));
  ElementwiseBody max = body;
  max.reduction = RowReduction::Max;
  EXPECT_FALSE(sumsWidenedHalves(max));
  ElementwiseBody column = body;
  column.inputs[0].broadcast = Broadcast::Column;
  EXPECT_FALSE(sumsWidenedHalves(column));
  ElementwiseBody f32Input = identitySumF32();
  EXPECT_FALSE(sumsWidenedHalves(f32Input));
}

TEST_F(ReductionEstimateTest, SoftmaxSumWithAColumnInput6x24) {
  // lanes 2. subf f32 1 (ewArithInstructionsF32 x 2/2), exp f32 6, the
  // full input's load bundled, the combine 1: I = 1 + 6 + 1 = 8.
  // R = 12 + 1 (the column value, once a row) = 13.
  // vectorsPerRow = 24 / 2 = 12; rowsPerWorker = ceil(6 / 6) = 1;
  // perWorker = 12. Worker: 13 + 12 x 8 = 109.
  // total = 36 + 6 x (17 + 109) = 36 + 756 = 792.
  const double I = target.ewArithInstructionsF32 + target.ewExpInstructionsF32 +
                   target.reduceVectorInstructions;
  const double R =
      target.reduceRowOverheadInstructions + target.ewLoadStoreInstructions;
  const uint64_t vectorsPerRow = 24 / 2, rowsPerWorker = 1;
  const uint64_t perWorker = rowsPerWorker * vectorsPerRow;
  const uint64_t expected =
      fixed() + workers() * (target.workerPrologueInstructions +
                             static_cast<uint64_t>(std::ceil(rowsPerWorker * R)) +
                             static_cast<uint64_t>(std::ceil(perWorker * I)));
  EXPECT_EQ(expected, 792u);
  ElementwiseCycles cycles = estimateElementwise(target, softmaxSumF32(), 6, 24);
  EXPECT_EQ(cycles.lanes, 2u);
  EXPECT_DOUBLE_EQ(cycles.instructionsPerVector, I);
  EXPECT_EQ(cycles.vectors, 6u * vectorsPerRow);
  EXPECT_EQ(cycles.rowsPerWorker, rowsPerWorker);
  EXPECT_EQ(cycles.total, expected);
}

TEST_F(ReductionEstimateTest, MaxOfF16Rows7x5) {
  // The max of extf f16 -> f32 is the extf of the f16 max (opsAfterRowMax):
  // lanes = 4, I = 1 (the combine, the load bundled); the extf runs once a
  // row on one f32 vector, 2 / 4 x ewCastF32F16Instructions = 1, so
  // R = 12 + 1 = 13. vectorsPerRow = ceil(5 / 4) = 2; rowsPerWorker =
  // ceil(7 / 6) = 2; perWorker = 4. Worker: 26 + 4 = 30.
  // total = 36 + 6 x (17 + 30) = 36 + 282 = 318 (354 when the max ran on
  // the widened f32 values).
  const double I = target.reduceVectorInstructions;
  const double R = target.reduceRowOverheadInstructions +
                   2.0 / 4.0 * target.ewCastF32F16Instructions;
  const uint64_t vectorsPerRow = 2, rowsPerWorker = 2;
  const uint64_t perWorker = rowsPerWorker * vectorsPerRow;
  const uint64_t expected =
      fixed() + workers() * (target.workerPrologueInstructions +
                             static_cast<uint64_t>(std::ceil(rowsPerWorker * R)) +
                             static_cast<uint64_t>(std::ceil(perWorker * I)));
  EXPECT_EQ(expected, 318u);
  ElementwiseCycles cycles = estimateElementwise(target, maxF16(), 7, 5);
  EXPECT_EQ(cycles.lanes, 4u);
  EXPECT_DOUBLE_EQ(cycles.instructionsPerVector, I);
  EXPECT_EQ(cycles.rowsPerWorker, rowsPerWorker);
  EXPECT_EQ(cycles.total, expected);
}

TEST_F(ReductionEstimateTest, SecondFullInputIsLoaded) {
  // sum(x * y) over two full f32 inputs: only the first load is bundled.
  // I = mulf 1 + load of y 1 + combine 1 = 3. 1 x 2: vectorsPerRow 1,
  // rowsPerWorker 1, perWorker 1. Worker 12 + 3 = 15.
  // total = 36 + 6 x (17 + 15) = 228.
  BodyBuilder b({{F32, Broadcast::Full}, {F32, Broadcast::Full}});
  uint32_t p = b.op(BodyOpKind::MulF, F32, {0, 1});
  ElementwiseBody body = b.yield(p, F32);
  body.reduction = RowReduction::Add;
  const double I = target.ewArithInstructionsF32 + target.ewLoadStoreInstructions +
                   target.reduceVectorInstructions;
  const uint64_t expected =
      fixed() + workers() * (target.workerPrologueInstructions +
                             target.reduceRowOverheadInstructions +
                             static_cast<uint64_t>(std::ceil(I)));
  EXPECT_EQ(expected, 228u);
  ElementwiseCycles cycles = estimateElementwise(target, body, 1, 2);
  EXPECT_DOUBLE_EQ(cycles.instructionsPerVector, I);
  EXPECT_EQ(cycles.total, expected);
}

TEST_F(ReductionEstimateTest, RowsFewerThanWorkersAreSplitInParts) {
  // A layer norm's sum: one f32 row of 1152 on a tile. Whole rows: one
  // worker does it, I = 1, R = 12, 576 vectors:
  //   25 + 11 + 6 x (17 + 12 + 576) = 3666.
  // In p parts of ceil(576 / p) vectors, then a pass folding them (a load
  // and a combine each, R):
  //   25 + [11 + 6 x (17 + 12 + ceil(576 / p))] + [11 + 6 x (17 + 12 + 2p)]
  // p = 6: 25 + (11 + 6 x 125) + (11 + 6 x 41) = 25 + 761 + 257 = 1043.
  auto split = [&](uint64_t rows, uint64_t parts) {
    const uint64_t vectors = (576 + parts - 1) / parts;
    const uint64_t row = target.reduceRowOverheadInstructions;
    return target.vertexCallCycles +
           (target.workerSupervisorCycles +
            workers() * (target.workerPrologueInstructions + row + vectors)) +
           (target.workerSupervisorCycles +
            workers() * (target.workerPrologueInstructions + row +
                         parts * static_cast<uint64_t>(target.ewLoadStoreInstructions +
                                                       target.reduceVectorInstructions)));
  };
  EXPECT_EQ(split(1, 6), 1043u);
  ElementwiseCycles one = estimateElementwise(target, identitySumF32(), 1, 1152);
  EXPECT_EQ(one.rowParts, 6u);
  EXPECT_EQ(one.rowsPerWorker, 1u);
  EXPECT_EQ(one.total, 1043u);
  // Two rows: at most 3 parts each; 3 is the cheapest.
  ElementwiseCycles two = estimateElementwise(target, identitySumF32(), 2, 1152);
  EXPECT_EQ(two.rowParts, 3u);
  EXPECT_EQ(two.total, split(2, 3));
  EXPECT_LT(two.total, split(2, 2));
  // Six rows or more: each worker has a row, as before.
  EXPECT_EQ(estimateElementwise(target, identitySumF32(), 6, 1152).rowParts, 1u);
  // A one-vector row cannot be split; neither can a sum from a non-zero
  // init (each part would add it): 3666 as a whole row.
  EXPECT_EQ(estimateElementwise(target, identitySumF32(), 1, 2).rowParts, 1u);
  ElementwiseBody fromInit = identitySumF32();
  fromInit.init = 1.5;
  ElementwiseCycles whole = estimateElementwise(target, fromInit, 1, 1152);
  EXPECT_EQ(whole.rowParts, 1u);
  EXPECT_EQ(whole.total, 3666u);
  // A short row is cheaper whole: the fold pass costs more than it saves.
  EXPECT_EQ(estimateElementwise(target, identitySumF32(), 1, 24).rowParts, 1u);
}

TEST_F(ReductionEstimateTest, AReductionIsNeverContiguous) {
  // 16 x 64 f32 rows have no padding: the elementwise body runs them as
  // one loop, the reduction still pays a row overhead per row of a worker.
  // Reduction: lanes 2, I = 1, vectorsPerRow 32, rowsPerWorker ceil(16 / 6)
  // = 3, perWorker 96: worker 3 x 12 + 96 = 132; total = 36 + 6 x 149 = 930.
  ElementwiseCycles cycles = estimateElementwise(target, identitySumF32(), 16, 64);
  EXPECT_EQ(cycles.vectors, 16u * 32u);
  EXPECT_EQ(cycles.rowsPerWorker, 3u);
  EXPECT_EQ(cycles.total,
            fixed() + workers() * (target.workerPrologueInstructions +
                                   3 * target.reduceRowOverheadInstructions +
                                   96 * target.reduceVectorInstructions));
  EXPECT_EQ(cycles.total, 930u);
  EXPECT_EQ(estimateElementwise(target, identitySumF32(), 0, 64).total, 0u);
}

} // namespace
