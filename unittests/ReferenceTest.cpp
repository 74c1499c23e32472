//===- ReferenceTest.cpp - Per-element tolerances of the host reference ---===//
//
// The property the check must have: a wrong element is caught by its own
// tolerance, however large the other elements are. Each case builds the
// reference op of a package, takes its values as a perfect device's
// results, and checks that they PASS as they are (and within an ulp), and
// FAIL once one element of a small row (or dot product, or operand) among
// large ones is off by 1%.
//
//===----------------------------------------------------------------------===//

#include "IPU/Reference/Reference.h"
#include "IPU/Reference/Check.h"
#include "IPU/Device/Elementwise.h"
#include "IPU/Support/ElementType.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

using namespace ipu;

namespace {

HostTensor tensorOf(const std::vector<int64_t> &shape, const std::vector<float> &values,
                    ElementType type = ElementType::F32) {
  HostTensor tensor;
  tensor.type = type;
  tensor.shape = shape;
  tensor.bytes.resize(values.size() * elementBytes(type));
  for (size_t e = 0; e < values.size(); ++e)
    storeElement(type, values[e], &tensor.bytes[e * elementBytes(type)]);
  return tensor;
}

HostStream outputStream(uint32_t index, std::vector<int64_t> shape,
                        ElementType type = ElementType::F32) {
  HostStream stream;
  stream.name = "result" + std::to_string(index);
  stream.toDevice = false;
  stream.index = index;
  stream.type = type;
  stream.shape = std::move(shape);
  return stream;
}

/// Evaluates reference op 0 of `package` on `inputs`.
Reference evaluate(const Package &package, const std::vector<HostTensor> &inputs) {
  Reference reference;
  std::vector<bool> generated(inputs.size(), true);
  std::optional<std::string> error =
      evaluateReference(package, TargetModel::ipu21WithTiles(16), 0, inputs, generated,
                        {}, {}, reference);
  EXPECT_EQ(error, std::nullopt);
  return reference;
}

/// Mismatches when the device returns `device` for `reference`.
uint64_t mismatches(const Reference &reference, const std::vector<float> &device) {
  std::vector<HostTensor> outputs(reference.result + 1);
  outputs[reference.result] = tensorOf(reference.shape, device);
  Comparison comparison;
  EXPECT_EQ(compareWithReference(reference, outputs, comparison), std::nullopt);
  EXPECT_EQ(comparison.elementsCompared, device.size());
  return comparison.mismatches;
}

/// Random values: rows in `smallRows` of magnitude about 1e-3, the others
/// about 1e4.
std::vector<float> mixedRows(std::mt19937 &random, int64_t rows, int64_t cols,
                             const std::vector<int64_t> &smallRows) {
  std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
  std::vector<float> values(size_t(rows * cols));
  for (int64_t r = 0; r < rows; ++r) {
    const bool small = std::find(smallRows.begin(), smallRows.end(), r) != smallRows.end();
    for (int64_t c = 0; c < cols; ++c)
      values[size_t(r * cols + c)] = (small ? 1e-3f : 1e4f) * unit(random);
  }
  return values;
}

/// Checks the property on `reference`: its values PASS, and so do values
/// one f32 ulp away; each element of `watched`, off alone by 1% of its own
/// scale (`scale[i]`, or its value), FAILs.
void expectPerElement(const Reference &reference, const std::vector<size_t> &watched,
                      const std::vector<double> &scale = {}) {
  EXPECT_EQ(mismatches(reference, reference.values), 0u);
  std::vector<float> nudged = reference.values;
  for (float &value : nudged)
    value = std::nextafter(value, HUGE_VALF);
  EXPECT_EQ(mismatches(reference, nudged), 0u);
  for (size_t i = 0; i < watched.size(); ++i) {
    const size_t e = watched[i];
    std::vector<float> wrong = reference.values;
    const double own = scale.empty() ? std::fabs(wrong[e]) : scale[i];
    ASSERT_NE(own, 0.0) << "element " << e;
    wrong[e] = float(wrong[e] + 0.01 * own);
    EXPECT_EQ(mismatches(reference, wrong), 1u)
        << "element " << e << " = " << reference.values[e] << " off by 1% of "
        << own << " passes";
  }
}

TEST(ReferenceTolerance, RowSumOfASmallRowAmongLargeRows) {
  // Property over random shapes and positions: a row sum's tolerance is
  // its own row's, not the largest row's.
  ElementwiseBody body;
  body.inputs = {{ElementType::F32, Broadcast::Full}};
  body.result = 0;
  body.resultType = ElementType::F32;
  body.reduction = RowReduction::Add;
  body.init = 0;
  std::mt19937 random(11);
  for (int trial = 0; trial < 50; ++trial) {
    const int64_t rows = 2 + random() % 7, cols = 1 + random() % 300;
    const int64_t small = random() % rows;
    Package package;
    package.kernels.push_back(std::make_shared<ElementwiseKernel>(
        "sum", elementwiseSymbol(body), body));
    package.streams.push_back(outputStream(0, {rows, 1}));
    ReferenceOp op;
    op.kind = ReferenceKind::Elementwise;
    op.arguments = {0};
    op.result = 0;
    op.kernel = 0;
    package.reference.push_back(op);
    std::vector<float> x = mixedRows(random, rows, cols, {small});
    Reference reference = evaluate(package, {tensorOf({rows, cols}, x)});
    ASSERT_EQ(reference.values.size(), size_t(rows));
    // A sum may cancel to almost nothing: its scale is its terms' mean size.
    double meanMagnitude = 0;
    for (int64_t c = 0; c < cols; ++c)
      meanMagnitude += std::fabs(x[size_t(small * cols + c)]) / double(cols);
    expectPerElement(reference, {size_t(small)}, {meanMagnitude});
  }
}

TEST(ReferenceTolerance, MatmulOfASmallDotProductAmongLargeOnes) {
  // The rows of A in `small` are 1e7 times smaller: their dot products
  // carry their own tolerance.
  std::mt19937 random(12);
  for (int trial = 0; trial < 20; ++trial) {
    const int64_t m = 2 + random() % 6, k = 1 + random() % 200, n = 1 + random() % 9;
    const int64_t small = random() % m;
    Package package;
    package.streams.push_back(outputStream(0, {m, n}));
    ReferenceOp op;
    op.kind = ReferenceKind::Matmul;
    op.arguments = {0, 1};
    op.result = 0;
    package.reference.push_back(op);
    std::vector<float> a = mixedRows(random, m, k, {small});
    std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
    std::vector<float> b(size_t(k * n));
    for (float &value : b)
      value = unit(random);
    Reference reference = evaluate(package, {tensorOf({m, k}, a), tensorOf({k, n}, b)});
    std::vector<size_t> watched;
    for (int64_t j = 0; j < n; ++j)
      if (reference.values[size_t(small * n + j)] != 0)
        watched.push_back(size_t(small * n + j));
    expectPerElement(reference, watched);
  }
}

TEST(ReferenceTolerance, ElementwiseProductOfSmallOperandsAmongLargeOnes) {
  // x * y + tanh(x): each element's tolerance follows its own operands.
  ElementwiseBody body;
  body.inputs = {{ElementType::F32, Broadcast::Full}, {ElementType::F32, Broadcast::Full}};
  BodyOp mul{BodyOpKind::MulF, ElementType::F32, 0, {0, 1, 0}, 0};
  BodyOp tanh{BodyOpKind::Tanh, ElementType::F32, 0, {0, 0, 0}, 0};
  BodyOp add{BodyOpKind::AddF, ElementType::F32, 0, {2, 3, 0}, 0};
  body.ops = {mul, tanh, add};
  body.result = 4;
  body.resultType = ElementType::F32;
  ASSERT_EQ(verifyBody(body), std::nullopt);
  std::mt19937 random(13);
  for (int trial = 0; trial < 20; ++trial) {
    const int64_t rows = 2 + random() % 5, cols = 1 + random() % 50;
    const int64_t small = random() % rows;
    Package package;
    package.kernels.push_back(std::make_shared<ElementwiseKernel>(
        "fma", elementwiseSymbol(body), body));
    package.streams.push_back(outputStream(0, {rows, cols}));
    ReferenceOp op;
    op.kind = ReferenceKind::Elementwise;
    op.arguments = {0, 1};
    op.result = 0;
    op.kernel = 0;
    package.reference.push_back(op);
    std::vector<float> x = mixedRows(random, rows, cols, {small});
    std::vector<float> y = mixedRows(random, rows, cols, {small});
    Reference reference =
        evaluate(package, {tensorOf({rows, cols}, x), tensorOf({rows, cols}, y)});
    std::vector<size_t> watched;
    for (int64_t c = 0; c < cols; ++c)
      watched.push_back(size_t(small * cols + c));
    expectPerElement(reference, watched);
  }
}

TEST(ReferencePermute, MovesEveryElementExactly) {
  // Property over random 3-D views and all six permutations: element
  // (i0, i1, i2) of the permuted value is element (j0, j1, j2) of the
  // operand with j[permutation[k]] = i[k], and the check allows nothing.
  std::mt19937 random(5);
  const std::vector<std::vector<int64_t>> permutations = {
      {0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
  for (int trial = 0; trial < 30; ++trial) {
    const std::vector<int64_t> view = {1 + int64_t(random() % 4), 1 + int64_t(random() % 5),
                                       1 + int64_t(random() % 6)};
    const std::vector<int64_t> &permutation = permutations[trial % 6];
    std::vector<int64_t> shape(3);
    for (size_t k = 0; k < 3; ++k)
      shape[k] = view[size_t(permutation[k])];
    Package package;
    package.streams.push_back(outputStream(0, shape));
    ReferenceOp op;
    op.kind = ReferenceKind::Permute;
    op.arguments = {0};
    op.result = 0;
    op.view = view;
    op.permutation = permutation;
    op.shape = shape;
    package.reference.push_back(op);
    std::vector<float> x(size_t(view[0] * view[1] * view[2]));
    for (float &value : x)
      value = float(random() % 1000) / 7.0f;
    Reference reference = evaluate(package, {tensorOf(view, x)});
    ASSERT_EQ(reference.values.size(), x.size());
    for (int64_t i0 = 0; i0 < shape[0]; ++i0)
      for (int64_t i1 = 0; i1 < shape[1]; ++i1)
        for (int64_t i2 = 0; i2 < shape[2]; ++i2) {
          const int64_t i[3] = {i0, i1, i2};
          int64_t j[3];
          for (size_t k = 0; k < 3; ++k)
            j[permutation[k]] = i[k];
          EXPECT_EQ(reference.values[size_t((i0 * shape[1] + i1) * shape[2] + i2)],
                    x[size_t((j[0] * view[1] + j[1]) * view[2] + j[2])]);
        }
    // Exact: the values pass, any element one ulp off fails.
    EXPECT_EQ(mismatches(reference, reference.values), 0u);
    std::vector<float> off = reference.values;
    const size_t e = random() % off.size();
    off[e] = std::nextafter(off[e], HUGE_VALF);
    EXPECT_EQ(mismatches(reference, off), 1u) << "element " << e;
  }
}

TEST(ReferenceTolerance, ExactOpsAllowNothingAndUnboundedOnesSayNothing) {
  // Exactly rounded ops on exact operands: both sides agree to the bit.
  ElementwiseBody body;
  body.inputs = {{ElementType::F16, Broadcast::Full}};
  BodyOp twice{BodyOpKind::AddF, ElementType::F16, 0, {0, 0, 0}, 0};
  body.ops = {twice};
  body.result = 1;
  body.resultType = ElementType::F16;
  const float x = 0.3330078125f; // An f16 value.
  double bound = -1;
  EXPECT_EQ(evaluateBodyWithBound(body, &x, &bound), 0.666015625f);
  EXPECT_EQ(bound, 0.0);
  // exp's approximation carries a bound, relative to its value.
  body.inputs[0].type = ElementType::F32;
  body.ops = {{BodyOpKind::Exp, ElementType::F32, 0, {0, 0, 0}, 0}};
  body.resultType = ElementType::F32;
  const float two = 2.0f;
  const float value = evaluateBodyWithBound(body, &two, &bound);
  EXPECT_GT(bound, 0.0);
  EXPECT_LT(bound, 1e-5 * value);
  // A quotient whose divisor may reach zero has no bound: 1 / (exp(x) - 1)
  // at x = 1e-7, where exp's own bound exceeds exp(x) - 1.
  body.inputs = {{ElementType::F32, Broadcast::Full}};
  body.ops = {{BodyOpKind::Exp, ElementType::F32, 0, {0, 0, 0}, 0},
              {BodyOpKind::Constant, ElementType::F32, 0, {0, 0, 0}, 1.0},
              {BodyOpKind::SubF, ElementType::F32, 0, {1, 2, 0}, 0},
              {BodyOpKind::DivF, ElementType::F32, 0, {2, 3, 0}, 0}};
  body.result = 4;
  const float tiny = 1e-7f;
  EXPECT_TRUE(std::isfinite(evaluateBodyWithBound(body, &tiny, &bound)));
  EXPECT_TRUE(std::isinf(bound));
}

/// A chain of two transposes, both streamed out: x (2x3) -> result 0 (3x2)
/// -> result 1 (2x3).
Package transposeChain() {
  Package package;
  package.streams.push_back(outputStream(0, {3, 2}));
  package.streams.push_back(outputStream(1, {2, 3}));
  ReferenceOp first;
  first.kind = ReferenceKind::Permute;
  first.arguments = {0};
  first.result = 0;
  first.view = {2, 3};
  first.permutation = {1, 0};
  first.shape = {3, 2};
  ReferenceOp second = first;
  second.arguments = {ReferenceOp::kReferenceValue + 0};
  second.result = 1;
  second.view = {3, 2};
  second.shape = {2, 3};
  package.reference = {first, second};
  return package;
}

TEST(ReferenceCheck, ChecksEachOpOnTheDevicesOwnOperands) {
  const Package package = transposeChain();
  const std::vector<float> x = {1, 2, 3, 4, 5, 6};
  const std::vector<HostTensor> inputs = {tensorOf({2, 3}, x)};
  const std::vector<bool> generated = {true};
  const TargetModel target = TargetModel::ipu21WithTiles(16);
  auto checkWith = [&](std::vector<float> device0, std::vector<float> device1,
                       uint64_t samples = 0) {
    CheckReport report;
    std::vector<size_t> seen;
    EXPECT_EQ(checkPackage(package, target, inputs, generated,
                           {tensorOf({3, 2}, device0), tensorOf({2, 3}, device1)}, samples,
                           report,
                           [&](const CheckpointReport &checkpoint) {
                             seen.push_back(checkpoint.index);
                           }),
              std::nullopt);
    EXPECT_EQ(seen, (std::vector<size_t>{0, 1}));
    return report;
  };
  const std::vector<float> transposed = {1, 4, 2, 5, 3, 6};

  // A perfect device passes, every element of both results compared; the
  // first result is also a diagnostic checkpoint (the second op reads it).
  CheckReport report = checkWith(transposed, x);
  EXPECT_TRUE(report.passed());
  EXPECT_EQ(report.total.elementsCompared, 12u);
  EXPECT_EQ(report.diagnosticCheckpoints, 1u);
  ASSERT_EQ(report.checkpoints.size(), 2u);
  EXPECT_EQ(report.checkpoints[0].detail, "exact");
  EXPECT_NE(checkSummaryLine(report).find("numericalTest=PASS"), std::string::npos);

  // A wrong element of the last result fails there alone.
  report = checkWith(transposed, {1, 2, 3, 4, 5, 7});
  EXPECT_FALSE(report.passed());
  EXPECT_EQ(report.total.mismatches, 1u);
  EXPECT_EQ(report.total.worstCheckpoint, 1u);
  EXPECT_EQ(report.checkpoints[1].comparison.worstElement, "[1,2]");
  EXPECT_NE(checkSummaryLine(report).find("numericalTest=FAIL"), std::string::npos);

  // A wrong intermediate fails at its own checkpoint, and the op after it is
  // checked on the device's wrong value: it moved that value faithfully.
  report = checkWith({1, 4, 2, 5, 3, 9}, {1, 2, 3, 4, 5, 9});
  EXPECT_EQ(report.checkpoints[0].comparison.mismatches, 1u);
  EXPECT_EQ(report.checkpoints[1].comparison.mismatches, 0u);

  // Sampled diagnostic checkpoints compare fewer elements of the
  // intermediate only.
  report = checkWith(transposed, x, 2);
  EXPECT_EQ(report.checkpoints[0].comparison.elementsCompared, 2u);
  EXPECT_EQ(report.checkpoints[1].comparison.elementsCompared, 6u);
  EXPECT_NE(checkSummaryLine(report).find("sampleLimit=2"), std::string::npos);
}

TEST(ReferenceCheck, RefusesWhatItCannotVouchFor) {
  const TargetModel target = TargetModel::ipu21WithTiles(16);
  CheckReport report;
  Package noReference;
  EXPECT_NE(checkableByReference(noReference), std::nullopt);
  EXPECT_NE(checkPackage(noReference, target, {}, {}, {}, 0, report), std::nullopt);
  // An output no op produces is named.
  Package unchecked = transposeChain();
  unchecked.reference.pop_back();
  std::optional<std::string> error = checkableByReference(unchecked);
  ASSERT_NE(error, std::nullopt);
  EXPECT_NE(error->find("result1"), std::string::npos) << *error;
}

} // namespace

TEST(ReferenceCheck, AStreamedValueIsTheDevicesOwnAndOnlyItsReadersAreChecked) {
  // Result 0 is the device's value as streamed out (what a repeated layer
  // carried into its last layer); result 1 transposes it.
  Package package;
  package.streams.push_back(outputStream(0, {2, 3}));
  package.streams.push_back(outputStream(1, {3, 2}));
  ReferenceOp streamed;
  streamed.kind = ReferenceKind::Streamed;
  streamed.result = 0;
  ReferenceOp transpose;
  transpose.kind = ReferenceKind::Permute;
  transpose.arguments = {ReferenceOp::kReferenceValue + 0};
  transpose.result = 1;
  transpose.view = {2, 3};
  transpose.permutation = {1, 0};
  transpose.shape = {3, 2};
  package.reference = {streamed, transpose};
  const TargetModel target = TargetModel::ipu21WithTiles(16);
  auto check = [&](std::vector<float> device0, std::vector<float> device1) {
    CheckReport report;
    EXPECT_EQ(checkPackage(package, target, {}, {},
                           {tensorOf({2, 3}, device0), tensorOf({3, 2}, device1)}, 0, report),
              std::nullopt);
    return report;
  };
  // Whatever the device carried, its transpose passes: only the permute is
  // a checkpoint.
  CheckReport report = check({7, 8, 9, 10, 11, 12}, {7, 10, 8, 11, 9, 12});
  EXPECT_TRUE(report.passed());
  ASSERT_EQ(report.checkpoints.size(), 1u);
  EXPECT_EQ(report.checkpoints[0].index, 1u);
  EXPECT_EQ(report.total.elementsCompared, 6u);
  // A reader that did not read what the device carried fails.
  report = check({7, 8, 9, 10, 11, 12}, {1, 4, 2, 5, 3, 6});
  EXPECT_FALSE(report.passed());
  EXPECT_EQ(report.total.mismatches, 6u);
}
