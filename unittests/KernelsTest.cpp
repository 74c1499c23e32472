//===- KernelsTest.cpp - Kernel registry, gemm execution and estimator ----===//

#include "IPU/Device/AmpMeasurements.h"
#include "IPU/Device/Kernels.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <tuple>
#include <vector>

using namespace ipu;

namespace {

constexpr uint8_t kSentinel = 0xA5;
constexpr size_t kGuardBytes = 16;

int64_t typeParam(ElementType type) { return static_cast<int64_t>(type); }

const KernelSpec &gemm() {
  const KernelSpec *spec = lookupKernel("gemm");
  EXPECT_NE(spec, nullptr);
  return *spec;
}

/// One gemm vertex with operands laid out as the kernel documents, each
/// followed by guard bytes that must stay untouched.
struct GemmCase {
  int64_t params[8];
  std::vector<uint8_t> lhs, rhs, out;
  uint64_t lhsPitch, rhsPitch, outPitch;

  GemmCase(int64_t m, int64_t k, int64_t n, ElementType in, ElementType acc,
           ElementType outType)
      : params{m,
               k,
               n,
               typeParam(in),
               typeParam(acc),
               typeParam(outType),
               static_cast<int64_t>(MemoryClass::Interleaved),
               0} {
    lhs.assign(kernelOperandBytes(gemm(), params, 0) + kGuardBytes, 0);
    rhs.assign(kernelOperandBytes(gemm(), params, 1) + kGuardBytes, 0);
    out.assign(kernelOperandBytes(gemm(), params, 2) + kGuardBytes,
               kSentinel);
    lhsPitch = (k * elementBytes(in) + 3) / 4 * 4;
    rhsPitch = (n * elementBytes(in) + 3) / 4 * 4;
    outPitch = (n * elementBytes(outType) + 3) / 4 * 4;
  }
  int64_t m() const { return params[0]; }
  int64_t k() const { return params[1]; }
  int64_t n() const { return params[2]; }
  ElementType in() const { return static_cast<ElementType>(params[3]); }
  ElementType outType() const { return static_cast<ElementType>(params[5]); }

  uint8_t *lhsAt(int64_t i, int64_t kk) {
    return &lhs[i * lhsPitch + kk * elementBytes(in())];
  }
  uint8_t *rhsAt(int64_t kk, int64_t j) {
    return &rhs[kk * rhsPitch + j * elementBytes(in())];
  }
  uint8_t *outAt(int64_t i, int64_t j) {
    return &out[i * outPitch + j * elementBytes(outType())];
  }
  void setLhs(int64_t i, int64_t kk, float v) {
    storeElement(in(), v, lhsAt(i, kk));
  }
  void setRhs(int64_t kk, int64_t j, float v) {
    storeElement(in(), v, rhsAt(kk, j));
  }
  float result(int64_t i, int64_t j) { return loadElement(outType(), outAt(i, j)); }

  void run() {
    uint8_t *operands[] = {lhs.data(), rhs.data(), out.data()};
    executeKernel(gemm(), params, TargetModel::ipu21(), operands);
  }
};

/// Runs a single-output dot product: lhs row `a`, rhs column `b`.
float dot(ElementType in, ElementType acc, const std::vector<float> &a,
          const std::vector<float> &b) {
  int64_t k = static_cast<int64_t>(a.size());
  GemmCase c(1, k, 1, in, acc, ElementType::F32);
  for (int64_t kk = 0; kk < k; ++kk) {
    c.setLhs(0, kk, a[kk]);
    c.setRhs(kk, 0, b[kk]);
  }
  c.run();
  return c.result(0, 0);
}

const ElementType kAllTypes[] = {ElementType::F32, ElementType::F16,
                                 ElementType::F8E4M3FN, ElementType::F8E5M2};
const ElementType kAccTypes[] = {ElementType::F32, ElementType::F16};

} // namespace

TEST(KernelsTest, Registry) {
  ASSERT_EQ(allKernels().size(), 8u);
  for (const KernelSpec &kernel : allKernels())
    EXPECT_EQ(lookupKernel(kernel.name), &kernel);
  const KernelSpec *spec = lookupKernel("gemm");
  ASSERT_NE(spec, nullptr);
  EXPECT_EQ(spec->name, "gemm");
  EXPECT_EQ(spec->operandNames,
            (std::vector<std::string_view>{"lhs", "rhs", "out"}));
  EXPECT_EQ(spec->paramNames,
            (std::vector<std::string_view>{"m", "k", "n", "inType", "accType",
                                           "outType", "weightClass", "inputScale"}));
  EXPECT_EQ(lookupKernel("gemm2"), nullptr);
  EXPECT_EQ(lookupKernel(""), nullptr);
}

TEST(KernelsTest, OperandBytesArePaddedRows) {
  // 5 x 7 x 3: f8 rows of 7 bytes pad to 8, rows of 3 pad to 4.
  int64_t f8[] = {5, 7, 3, 2, 0, 1, 1, 0};
  EXPECT_EQ(kernelOperandBytes(gemm(), f8, 0), 5u * 8);
  EXPECT_EQ(kernelOperandBytes(gemm(), f8, 1), 7u * 4);
  EXPECT_EQ(kernelOperandBytes(gemm(), f8, 2), 5u * 8); // f16 out: 6 -> 8.
  int64_t f16[] = {5, 7, 3, 1, 1, 0, 1, 0};
  EXPECT_EQ(kernelOperandBytes(gemm(), f16, 0), 5u * 16); // 14 -> 16.
  EXPECT_EQ(kernelOperandBytes(gemm(), f16, 1), 7u * 8);  // 6 -> 8.
  EXPECT_EQ(kernelOperandBytes(gemm(), f16, 2), 5u * 12); // f32: 12.
  int64_t f32[] = {2, 3, 4, 0, 0, 0, 0, 0};
  EXPECT_EQ(kernelOperandBytes(gemm(), f32, 0), 2u * 12);
  EXPECT_EQ(kernelOperandBytes(gemm(), f32, 1), 3u * 16);
  EXPECT_EQ(kernelOperandBytes(gemm(), f32, 2), 2u * 16);
}

// The AMP's input scale multiplies every product by 2^e as it is formed:
// with f32 partials the result is the unscaled one times 2^e exactly, and
// with f16 partials the partial sums stay in real units, so products of f8
// values that overflow f16 in f8 units (448 x 448) do not.
TEST(KernelsTest, GemmInputScaleMultipliesEveryProduct) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> dist(-300.0f, 300.0f);
  for (ElementType in : {ElementType::F8E4M3FN, ElementType::F8E5M2})
    for (int scale : {-16, -3, 0, 5}) {
      GemmCase plain(6, 40, 9, in, ElementType::F32, ElementType::F32);
      GemmCase scaled(6, 40, 9, in, ElementType::F32, ElementType::F32);
      scaled.params[7] = scale;
      ASSERT_FALSE(checkKernelParams(gemm(), scaled.params));
      for (int64_t i = 0; i < 6; ++i)
        for (int64_t kk = 0; kk < 40; ++kk) {
          const float v = dist(rng);
          plain.setLhs(i, kk, v);
          scaled.setLhs(i, kk, v);
        }
      for (int64_t kk = 0; kk < 40; ++kk)
        for (int64_t j = 0; j < 9; ++j) {
          const float v = dist(rng) / 8;
          plain.setRhs(kk, j, v);
          scaled.setRhs(kk, j, v);
        }
      plain.run();
      scaled.run();
      for (int64_t i = 0; i < 6; ++i)
        for (int64_t j = 0; j < 9; ++j)
          EXPECT_EQ(scaled.result(i, j), std::ldexp(plain.result(i, j), scale))
              << elementTypeName(in) << " scale " << scale;
    }
  // 448 x 448 x 2 = 401,408 overflows f16 partials; at 2^-8 it is 1,568.
  GemmCase big(1, 2, 1, ElementType::F8E4M3FN, ElementType::F16, ElementType::F32);
  for (int64_t kk = 0; kk < 2; ++kk) {
    big.setLhs(0, kk, 448.0f);
    big.setRhs(kk, 0, 448.0f);
  }
  big.run();
  EXPECT_TRUE(std::isinf(big.result(0, 0)));
  big.params[7] = -8;
  big.run();
  EXPECT_EQ(big.result(0, 0), 1568.0f);
}

TEST(KernelsTest, GemmInputScaleOnlyScalesF8WithinTheRegistersRange) {
  auto check = [](std::initializer_list<int64_t> values) {
    std::vector<int64_t> params(values);
    return checkKernelParams(gemm(), params.data());
  };
  EXPECT_FALSE(check({5, 7, 3, 2, 1, 0, 1, -32}).has_value());
  EXPECT_FALSE(check({5, 7, 3, 3, 1, 0, 1, 31}).has_value());
  EXPECT_EQ(check({5, 7, 3, 1, 1, 0, 1, -4}),
            "gemm: parameter 'inputScale' = -4 is not 0: only f8 inputs are scaled");
  EXPECT_EQ(check({5, 7, 3, 2, 1, 0, 1, 32}),
            "gemm: parameter 'inputScale' = 32 is not in [-32, 31]");
  EXPECT_EQ(check({5, 7, 3, 2, 1, 0, 1, -33}),
            "gemm: parameter 'inputScale' = -33 is not in [-32, 31]");
}

TEST(KernelsTest, ParamValidation) {
  auto check = [](std::initializer_list<int64_t> values) {
    std::vector<int64_t> params(values);
    return checkKernelParams(gemm(), params.data());
  };
  EXPECT_FALSE(check({5, 7, 3, 2, 1, 0, 1, 0}).has_value());
  EXPECT_FALSE(check({1, 1, 1, 0, 0, 0, 1, 0}).has_value());
  EXPECT_FALSE(check({(1 << 24) - 1, 1, 1, 3, 0, 1, 1, 0}).has_value());

  EXPECT_EQ(check({5, 7, 3, 1, 2, 0, 1, 0}),
            "gemm: parameter 'accType' = 2 is not f32 or f16");
  EXPECT_EQ(check({5, 7, 3, 1, 0, 3, 1, 0}),
            "gemm: parameter 'outType' = 3 is not f32 or f16");
  EXPECT_EQ(check({0, 7, 3, 1, 0, 0, 1, 0}),
            "gemm: parameter 'm' = 0 is not in [1, 2^24)");
  EXPECT_EQ(check({5, 1 << 24, 3, 1, 0, 0, 1, 0}),
            "gemm: parameter 'k' = 16777216 is not in [1, 2^24)");
  EXPECT_EQ(check({5, 7, -1, 1, 0, 0, 1, 0}),
            "gemm: parameter 'n' = -1 is not in [1, 2^24)");
  auto badIn = check({5, 7, 3, 4, 0, 0, 1, 0});
  ASSERT_TRUE(badIn.has_value());
  EXPECT_EQ(badIn->rfind("gemm: parameter 'inType' = 4 is not", 0), 0u)
      << *badIn;
  badIn = check({5, 7, 3, -1, 0, 0, 1, 0});
  ASSERT_TRUE(badIn.has_value());
  EXPECT_NE(badIn->find("'inType' = -1"), std::string::npos) << *badIn;
  std::vector<int64_t> badClass = {5, 7, 3, 1, 0, 0, 2, 0};
  EXPECT_EQ(checkKernelParams(gemm(), badClass.data()),
            "gemm: parameter 'weightClass' = 2 is not a memory class "
            "(standard=0, interleaved=1)");
}

// Every input type x accumulator x output type on odd shapes, against a
// double reference computed from the stored (already rounded) inputs.
TEST(KernelsTest, GemmMatchesReference) {
  const int64_t shapes[][3] = {{1, 1, 1},  {5, 7, 3},  {3, 33, 17},
                               {8, 40, 19}, {2, 64, 31}, {4, 17, 1}};
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
  for (ElementType in : kAllTypes)
    for (ElementType acc : kAccTypes)
      for (ElementType outType : kAccTypes)
        for (const auto &shape : shapes) {
          int64_t m = shape[0], k = shape[1], n = shape[2];
          SCOPED_TRACE(::testing::Message()
                       << elementTypeName(in) << " acc " << elementTypeName(acc)
                       << " out " << elementTypeName(outType) << " " << m
                       << "x" << k << "x" << n);
          GemmCase c(m, k, n, in, acc, outType);
          for (int64_t i = 0; i < m; ++i)
            for (int64_t kk = 0; kk < k; ++kk)
              c.setLhs(i, kk, dist(rng));
          for (int64_t kk = 0; kk < k; ++kk)
            for (int64_t j = 0; j < n; ++j)
              c.setRhs(kk, j, dist(rng));
          std::vector<uint8_t> lhsBefore = c.lhs, rhsBefore = c.rhs;
          c.run();
          EXPECT_EQ(c.lhs, lhsBefore);
          EXPECT_EQ(c.rhs, rhsBefore);

          // Error bound relative to sum |a*b|: f32 accumulation is near
          // exact; each f16 rounding (per grain, and on output) adds at most
          // 2^-11 relative to the partial sum.
          int64_t roundings = (acc == ElementType::F16 ? k / 8 + 1 : 0) +
                              (outType == ElementType::F16 ? 1 : 0);
          double relative = 1e-5 + roundings * std::ldexp(1.0, -11);
          for (int64_t i = 0; i < m; ++i)
            for (int64_t j = 0; j < n; ++j) {
              double sum = 0, magnitude = 0;
              for (int64_t kk = 0; kk < k; ++kk) {
                double p = static_cast<double>(loadElement(in, c.lhsAt(i, kk))) *
                           loadElement(in, c.rhsAt(kk, j));
                sum += p;
                magnitude += std::fabs(p);
              }
              EXPECT_NEAR(c.result(i, j), sum, relative * magnitude + 1e-30)
                  << "at " << i << "," << j;
            }

          // Row padding and the bytes after the operand stay untouched.
          uint64_t dataBytes = n * elementBytes(outType);
          for (int64_t i = 0; i < m; ++i)
            for (uint64_t b = dataBytes; b < c.outPitch; ++b)
              EXPECT_EQ(c.out[i * c.outPitch + b], kSentinel)
                  << "row " << i << " byte " << b;
          for (size_t b = m * c.outPitch; b < c.out.size(); ++b)
            EXPECT_EQ(c.out[b], kSentinel) << "guard byte " << b;
        }
}

// f32 accumulation of exactly representable values is exact, whatever the
// input type; a check that does not depend on any tolerance.
TEST(KernelsTest, GemmExactSmallIntegers) {
  for (ElementType in : kAllTypes) {
    GemmCase c(3, 5, 2, in, ElementType::F32, ElementType::F32);
    for (int64_t i = 0; i < 3; ++i)
      for (int64_t kk = 0; kk < 5; ++kk)
        c.setLhs(i, kk, static_cast<float>(i + kk - 2));
    for (int64_t kk = 0; kk < 5; ++kk)
      for (int64_t j = 0; j < 2; ++j)
        c.setRhs(kk, j, static_cast<float>(j ? -kk : kk + 1) / 2);
    c.run();
    for (int64_t i = 0; i < 3; ++i)
      for (int64_t j = 0; j < 2; ++j) {
        double expected = 0;
        for (int64_t kk = 0; kk < 5; ++kk)
          expected += (i + kk - 2) * (j ? -kk : kk + 1) / 2.0;
        EXPECT_EQ(c.result(i, j), expected) << elementTypeName(in);
      }
  }
}

// The f16 accumulator is rounded once per AMP grain of k: 8 for f32 inputs,
// 16 for f16, 32 for f8. Sums above 2048 expose it, since the f16 ulp
// there is 2.
TEST(KernelsTest, HalfAccumulatorRoundsPerGrain) {
  // f16 in, k = 32: 2048 + 15 ones, then 15 ones and a zero.
  {
    std::vector<float> a(32, 1.0f), b(32, 1.0f);
    b[0] = 2048.0f;
    b[31] = 0.0f;
    // f32: 2048 + 30 = 2078. Per 16-grain: 2063 -> 2064 (tie to even),
    // + 15 = 2079 -> 2080. Per element: 2049 -> 2048 forever.
    EXPECT_EQ(dot(ElementType::F16, ElementType::F32, a, b), 2078.0f);
    EXPECT_EQ(dot(ElementType::F16, ElementType::F16, a, b), 2080.0f);
  }
  // f8 in (grain 32): the same data (2048 = 8 * 256) rounds only once.
  for (ElementType f8 : {ElementType::F8E4M3FN, ElementType::F8E5M2}) {
    std::vector<float> a(32, 1.0f), b(32, 1.0f);
    a[0] = 8.0f;
    b[0] = 256.0f;
    b[31] = 0.0f;
    EXPECT_EQ(dot(f8, ElementType::F16, a, b), 2078.0f) << elementTypeName(f8);
    // A second grain: 2078 + 31 = 2109, a tie, -> 2108 (even mantissa).
    a.resize(64, 1.0f);
    b.resize(64, 1.0f);
    b[63] = 0.0f;
    EXPECT_EQ(dot(f8, ElementType::F16, a, b), 2108.0f) << elementTypeName(f8);
    EXPECT_EQ(dot(f8, ElementType::F32, a, b), 2109.0f) << elementTypeName(f8);
  }
  // f32 in (grain 8), k = 16: 2048 + 7 = 2055 -> 2056, + 7 = 2063 -> 2064.
  // With a 16 grain it would be 2062.
  {
    std::vector<float> a(16, 1.0f), b(16, 1.0f);
    b[0] = 2048.0f;
    b[15] = 0.0f;
    EXPECT_EQ(dot(ElementType::F32, ElementType::F16, a, b), 2064.0f);
    EXPECT_EQ(dot(ElementType::F32, ElementType::F32, a, b), 2062.0f);
  }
}

// With k = 1 the f16 accumulator holds exactly one rounded product, so the
// kernel's accumulator rounding must agree bit for bit with the scalar
// conversion, across normal, subnormal, overflow and non-finite values.
TEST(KernelsTest, HalfAccumulatorRoundingIsExact) {
  std::vector<float> values = {65504.0f,
                               std::nextafter(65520.0f, 0.0f),
                               65520.0f,
                               -65520.0f,
                               0x1p-14f,
                               std::nextafter(0x1p-14f, 0.0f),
                               -std::nextafter(0x1p-14f, 0.0f),
                               0x1p-25f,
                               3 * 0x1p-25f,
                               1.0f + 0x1p-11f,
                               1.0f + 3 * 0x1p-11f,
                               std::numeric_limits<float>::infinity(),
                               -std::numeric_limits<float>::infinity(),
                               std::numeric_limits<float>::quiet_NaN(),
                               1e30f,
                               -0.0f};
  std::mt19937 rng(3);
  std::uniform_int_distribution<uint32_t> anyBits;
  while (values.size() < 4000) {
    uint32_t bits = anyBits(rng);
    // Mostly exponents around the f16 range, some anywhere.
    if (values.size() % 4)
      bits = (bits & 0x807FFFFFu) | ((95u + (bits >> 23) % 60u) << 23);
    float value;
    std::memcpy(&value, &bits, sizeof(value));
    values.push_back(value);
  }
  int64_t n = static_cast<int64_t>(values.size());
  GemmCase c(1, 1, n, ElementType::F32, ElementType::F16, ElementType::F32);
  c.setLhs(0, 0, 1.0f);
  for (int64_t j = 0; j < n; ++j)
    c.setRhs(0, j, values[j]);
  c.run();
  for (int64_t j = 0; j < n; ++j) {
    float expected = halfToFloat(floatToHalf(0.0f + values[j]));
    float got = c.result(0, j);
    if (std::isnan(expected)) {
      EXPECT_TRUE(std::isnan(got)) << "value " << values[j];
      continue;
    }
    uint32_t expectedBits, gotBits;
    std::memcpy(&expectedBits, &expected, sizeof(expectedBits));
    std::memcpy(&gotBits, &got, sizeof(gotBits));
    ASSERT_EQ(gotBits, expectedBits) << "value " << values[j];
  }
}

TEST(KernelsTest, OutputRoundsToNearestEven) {
  // 1 + 2^-11 is an f16 tie: rounds to 1.0 on an f16 output.
  GemmCase c(1, 1, 3, ElementType::F32, ElementType::F32, ElementType::F16);
  c.setLhs(0, 0, 1.0f);
  c.setRhs(0, 0, 1.0f + 0x1p-11f);
  c.setRhs(0, 1, 1.0f + 3 * 0x1p-11f);
  c.setRhs(0, 2, 1e6f); // Overflows f16.
  c.run();
  EXPECT_EQ(c.result(0, 0), 1.0f);
  EXPECT_EQ(c.result(0, 1), 1.0f + 0x1p-9f);
  EXPECT_TRUE(std::isinf(c.result(0, 2)));
  EXPECT_EQ(c.out[6], kSentinel); // Pitch 8 for 3 f16 values.
  EXPECT_EQ(c.out[7], kSentinel);
}

/// The estimate of one block: the held operand in interleaved memory, rows
/// streamed from standard memory, f32 partials and result unless told
/// otherwise.
uint64_t est(const TargetModel &t, ElementType in, int64_t m, int64_t k,
             int64_t n, MemoryClass held = MemoryClass::Interleaved,
             ElementType out = ElementType::F32,
             ElementType partials = ElementType::F32,
             MemoryClass streamed = MemoryClass::Standard) {
  return estimateGemmCycles(
      t, GemmCostShape(m, k, n, in, partials, out, held, streamed));
}

GemmCycles terms(const TargetModel &t, ElementType in, ElementType partials,
                 ElementType out, int64_t m, int64_t k, int64_t n,
                 MemoryClass held = MemoryClass::Interleaved,
                 MemoryClass streamed = MemoryClass::Standard) {
  return estimateGemm(t, GemmCostShape(m, k, n, in, partials, out, held, streamed));
}

// The calibration anchor (shared/machine-model.md): one ConvPartial1x1
// vertex, [N x 16] x [16 x 16], f16 in, f16 partials, measured on hardware
// at 4.0 N + ~320 cycles. The estimate stays within 10% for every N.
TEST(KernelsTest, EstimatorMatchesTheMeasuredAmpLine) {
  TargetModel t = TargetModel::ipu21();
  double worst = 0;
  for (int64_t n = 16; n <= 2048; ++n) {
    double measured = 4.0 * double(n) + 320.0;
    double estimate = double(est(t, ElementType::F16, n, 16, 16,
                                 MemoryClass::Interleaved, ElementType::F16,
                                 ElementType::F16));
    double error = std::fabs(estimate - measured) / measured;
    worst = std::max(worst, error);
    ASSERT_LE(error, 0.10) << "N = " << n << ": estimate " << estimate
                           << ", measured line " << measured;
  }
  // Not a loose bound that happens to hold: the worst N (19, where the
  // busiest worker takes a fourth row) is 5.3% off.
  EXPECT_LT(worst, 0.06);
}

// Against the measurements themselves (128 sizes, tessellate-ipu's published
// TFLOP/s converted back to cycles), not the line fitted to them.
TEST(KernelsTest, EstimatorMatchesTheMeasuredAmpVertex) {
  TargetModel t = TargetModel::ipu21();
  double worst = 0;
  int compared = 0;
  for (int64_t n = 16; n <= 2048; n += 16) {
    std::optional<double> measured = measuredAmpVertexCycles(n);
    ASSERT_TRUE(measured.has_value()) << n;
    double estimate = double(est(t, ElementType::F16, n, 16, 16,
                                 MemoryClass::Interleaved, ElementType::F16,
                                 ElementType::F16));
    double error = std::fabs(estimate - *measured) / *measured;
    worst = std::max(worst, error);
    EXPECT_LE(error, 0.10) << "N = " << n << ": estimate " << estimate
                           << ", measured " << *measured;
    ++compared;
  }
  EXPECT_EQ(compared, 128);
  EXPECT_LT(worst, 0.05);
  EXPECT_FALSE(measuredAmpVertexCycles(8).has_value());
  EXPECT_FALSE(measuredAmpVertexCycles(2064).has_value());
  // N = 16 is 402 measured cycles, exactly what the published TFLOP/s say.
  EXPECT_NEAR(*measuredAmpVertexCycles(16), 402.0, 0.01);
}

// f32 partials use 8 conv units, so each pass covers half the columns: the
// streaming cycles double against f16 partials for the same block.
TEST(KernelsTest, FloatPartialsStreamTwiceAsLong) {
  TargetModel t = TargetModel::ipu21();
  for (auto [m, k, n] : {std::tuple{512, 64, 64}, std::tuple{135, 1152, 16},
                         std::tuple{729, 32, 48}}) {
    GemmCycles half = terms(t, ElementType::F16, ElementType::F16,
                            ElementType::F16, m, k, n);
    GemmCycles full = terms(t, ElementType::F16, ElementType::F32,
                            ElementType::F32, m, k, n);
    EXPECT_EQ(full.passesN, 2 * half.passesN);
    EXPECT_EQ(full.streaming, 2 * half.streaming) << m << "x" << k << "x" << n;
    EXPECT_GT(full.total, half.total * 17 / 10);
  }
}

TEST(KernelsTest, EstimatorHandComputed) {
  TargetModel t = TargetModel::ipu21();
  // Vertex: call 25 + supervisor 50 + loops 24 + 6 workers x 7 state = 141.
  // f16/f16, 25 x 16 x 16: one pass; its overhead 25; the 16 x 16 f16 block
  // (512 bytes) loads at 16 B/cycle: 32. 25 rows over 6 workers: one has 5,
  // five have 4; a worker runs 18 set-up instructions and 4 a row, each 6
  // tile cycles: 6 x (18 + 20) = 228, of which 6 x 18 = 108 set-up and 120
  // rows (the load path needs 25 x 32 B / 8 = 100).
  GemmCycles one = terms(t, ElementType::F16, ElementType::F16,
                         ElementType::F16, 25, 16, 16);
  EXPECT_EQ(one.passesK, 1u);
  EXPECT_EQ(one.passesN, 1u);
  EXPECT_EQ(one.rowsPerWorker, 5u);
  EXPECT_EQ(one.vertex, 141u);
  EXPECT_EQ(one.passOverhead, 25u);
  EXPECT_EQ(one.weightLoad, 32u);
  EXPECT_EQ(one.workerOverhead, 108u);
  EXPECT_EQ(one.streaming, 120u);
  EXPECT_EQ(one.epilogue, 0u);
  EXPECT_EQ(one.total, 141u + 25 + 32 + 108 + 120);
  // The held block from standard memory loads at 8 B/cycle: 64.
  EXPECT_EQ(terms(t, ElementType::F16, ElementType::F16, ElementType::F16, 25,
                  16, 16, MemoryClass::Standard)
                .weightLoad,
            64u);
  // Several passes: k = 40 is 3 passes of 16, n = 24 is 2 of 16 columns;
  // later k passes add 39 each. 13 rows: one worker has 3, five have 2, and
  // poplibs' two-row path (34 instructions) is the slowest: 6 x 34 = 204.
  GemmCycles six = terms(t, ElementType::F16, ElementType::F16,
                         ElementType::F16, 13, 40, 24);
  EXPECT_EQ(six.passesK * six.passesN, 6u);
  EXPECT_EQ(six.passOverhead, 6u * 25 + 2 * 39);
  EXPECT_EQ(six.weightLoad, 6u * 32);
  EXPECT_EQ(six.workerOverhead, 6u * 108);
  EXPECT_EQ(six.streaming, 6u * (204 - 108));
  EXPECT_EQ(six.total, 141u + 228 + 192 + 648 + 576);
  // f16 in, f32 partials: 2 passes of 8 columns, each a 256-byte block (16).
  GemmCycles wide = terms(t, ElementType::F16, ElementType::F32,
                          ElementType::F32, 25, 16, 16);
  EXPECT_EQ(wide.weightLoad, 2u * 16);
  EXPECT_EQ(wide.total, 141u + 2 * 25 + 2 * 16 + 2 * 108 + 2 * 120);
  // An f16 result from f32 partials is converted by the workers: 100
  // vectors of 4, 17 per worker, 2 instructions each, after a
  // 17-instruction prologue: 6 x (17 + 34) = 306.
  GemmCycles cast = terms(t, ElementType::F16, ElementType::F32,
                          ElementType::F16, 25, 16, 16);
  EXPECT_EQ(cast.epilogue, 306u);
  EXPECT_EQ(cast.total, wide.total + 306);
  // f8 in, f16 partials: poplibs' quarter path. Vertex 25 + 46 + 21; per
  // pass 108 and per column pass 69; a 32 x 16 f8 block (512 bytes) in 32;
  // workers 37 set-up + 4 a row: 6 x (37 + 20) = 342, 222 of it set-up.
  GemmCycles quarter = terms(t, ElementType::F8E4M3FN, ElementType::F16,
                             ElementType::F16, 25, 32, 16);
  EXPECT_EQ(quarter.vertex, 92u);
  EXPECT_EQ(quarter.passOverhead, 108u + 69);
  EXPECT_EQ(quarter.weightLoad, 32u);
  EXPECT_EQ(quarter.workerOverhead, 222u);
  EXPECT_EQ(quarter.streaming, 120u);
  EXPECT_EQ(quarter.total, 92u + 177 + 32 + 222 + 120);
  EXPECT_EQ(est(t, ElementType::F8E5M2, 25, 32, 16, MemoryClass::Interleaved,
                ElementType::F16, ElementType::F16),
            quarter.total);
  // f32 in: 8-deep, 8-wide passes, 64 MAC a row at 16 per cycle; the block is
  // 256 bytes; f16 partials are not available and fall back to f32.
  EXPECT_EQ(est(t, ElementType::F32, 25, 8, 8), 141u + 25 + 16 + 108 + 120);
  EXPECT_EQ(est(t, ElementType::F32, 25, 8, 8, MemoryClass::Interleaved,
                ElementType::F32, ElementType::F16),
            est(t, ElementType::F32, 25, 8, 8));
  // No work, no vertex.
  EXPECT_EQ(est(t, ElementType::F16, 0, 16, 16), 0u);
}

// poplibs gives workers with 0, 1 and 2 rows code paths of their own, and
// tags 14 cycles onto the least loaded worker, so the pass time is not
// monotonic in the rows below 3 per worker.
TEST(KernelsTest, FewRowsPerWorkerFollowPoplibs) {
  TargetModel t = TargetModel::ipu21();
  auto workerTime = [&](int64_t m) {
    GemmCycles c = terms(t, ElementType::F16, ElementType::F16,
                         ElementType::F16, m, 16, 16);
    return c.workerOverhead + c.streaming;
  };
  // 1 row: only one worker busy (25 instructions), the others idle (0).
  EXPECT_EQ(workerTime(1), 6u * 25);
  // 6 rows, one each: every worker equal, so the tag sets the time.
  EXPECT_EQ(workerTime(6), 6u * 25 + 14);
  // 12 rows, two each: poplibs' two-row path, 34 instructions, plus the tag.
  EXPECT_EQ(workerTime(12), 6u * 34 + 14);
  // 18 rows, three each: 18 + 3 x 4 = 30, plus the tag: cheaper than 12.
  EXPECT_EQ(workerTime(18), 6u * 30 + 14);
  EXPECT_LT(workerTime(18), workerTime(12));
  // 19 rows: one worker has 4 (34), the least loaded 30 + the tag is less.
  EXPECT_EQ(workerTime(19), 6u * 34);
  // f8: an idle worker still runs its 20-instruction overhead; the one busy
  // worker's 37 decide, and the one row's 32 bytes take 4 load cycles.
  GemmCycles idle = terms(t, ElementType::F8E4M3FN, ElementType::F16,
                          ElementType::F16, 1, 32, 16);
  EXPECT_EQ(idle.workerOverhead, 6u * 37);
  EXPECT_EQ(idle.streaming, 4u);
}

// Rows cannot stream faster than their memory class loads them. On ipu21
// the AMP and the standard load path are balanced (32 bytes of a row in 4
// cycles at 8 B/cycle); with a slower path the load rate binds.
TEST(KernelsTest, StreamingIsBoundedByTheLoadPath) {
  TargetModel t = TargetModel::ipu21();
  GemmCycles balanced = terms(t, ElementType::F16, ElementType::F16,
                              ElementType::F16, 18, 16, 16);
  // 6 x 3 x 4 = 72 = 18 x 32 / 8, and poplibs' tag of 14 on equal workers.
  EXPECT_EQ(balanced.streaming, 86u);
  t.loadBytesPerCycleStandard = 4;
  GemmCycles slow = terms(t, ElementType::F16, ElementType::F16,
                          ElementType::F16, 18, 16, 16);
  EXPECT_EQ(slow.streaming, 144u); // 18 rows x 32 bytes / 4.
  // Streaming from interleaved memory is not limited then.
  EXPECT_EQ(terms(t, ElementType::F16, ElementType::F16, ElementType::F16, 18,
                  16, 16, MemoryClass::Interleaved, MemoryClass::Interleaved)
                .streaming,
            86u);
}

TEST(KernelsTest, ReduceAndCopyEstimators) {
  TargetModel t = TargetModel::ipu21();
  // The user's stack charges a complete (one-epoch) reduction of `count`
  // partials (count - 1 + 1) x partial bytes at 1 byte a cycle, plus an
  // 11-cycle launch (cost.rs reduction_work, a3efe02/90cec57).
  EXPECT_EQ(t.reducePartialBytesPerCycle, 1.0);
  EXPECT_EQ(t.kernelLaunchCycles, 11u);
  // 12 rows of 10 f32 partials, 3 of them: 3 x 480 bytes + 11.
  EXPECT_EQ(estimateReduceCycles(t, 12, 10, 3, ElementType::F32,
                                 ElementType::F32),
            3u * 480 + 11);
  // The result type does not change the bytes read.
  EXPECT_EQ(estimateReduceCycles(t, 12, 10, 3, ElementType::F32,
                                 ElementType::F16),
            3u * 480 + 11);
  // f16 partials are half the bytes.
  EXPECT_EQ(estimateReduceCycles(t, 12, 10, 3, ElementType::F16,
                                 ElementType::F16),
            3u * 240 + 11);
  // The MLP's 4-way reduce of 4,320-byte partials: the 17,291.
  EXPECT_EQ(estimateReduceCycles(t, 1, 1080, 4, ElementType::F32,
                                 ElementType::F16),
            17291u);
  // Property: the larger of the per-partial-byte charge and the worker loop
  // (call 25 + supervisor 11 + 6 x (17 + vectors x instructions), the
  // estimate with the charge made free), which only binds on small blocks.
  TargetModel loopOnly = t;
  loopOnly.reducePartialBytesPerCycle = 1u << 30;
  loopOnly.kernelLaunchCycles = 0;
  for (int64_t m : {1, 7, 64})
    for (int64_t n : {3, 46, 1024})
      for (int64_t count : {1, 2, 4, 46}) {
        const uint64_t partial = uint64_t(m) * n * 4;
        const uint64_t cycles =
            estimateReduceCycles(t, m, n, count, ElementType::F32, ElementType::F32);
        const uint64_t loop =
            estimateReduceCycles(loopOnly, m, n, count, ElementType::F32, ElementType::F32);
        EXPECT_EQ(cycles, std::max(count * partial + 11, loop))
            << m << "x" << n << "x" << count;
        if (m * n >= 64 * 46)
          EXPECT_EQ(cycles, count * partial + 11) << m << "x" << n << "x" << count;
      }
  // A copy: the measured 288-cycle call, then 8 bytes a cycle.
  EXPECT_EQ(estimateCopyCycles(t, 100), 288u + 13);
  EXPECT_EQ(estimateCopyCycles(t, 8192), 288u + 1024);
  EXPECT_EQ(estimateCopyCycles(t, 0), 0u);
}

TEST(KernelsTest, ColumnReductionsCombinePartsRowByRow) {
  // 2 matrices of 3 parts (rows) of 4 f32 values: out holds one value per
  // (matrix, column), its rows padded to words (an f16 value per 4 bytes).
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float in[2][3][4] = {{{1, -2, 0.5f, 7}, {3, 5, nan, -1}, {-4, 1, 2, 6}},
                             {{0, 0, 0, -0.0f}, {1e30f, 1e30f, -1, -8}, {-1e30f, 2, -3, -9}}};
  std::vector<uint8_t> inBytes(sizeof in);
  std::memcpy(inBytes.data(), in, sizeof in);
  for (ElementType outType : {ElementType::F32, ElementType::F16}) {
    int64_t params[] = {2, 3, 4, static_cast<int64_t>(outType)};
    for (const std::string name :
         {"reduce_columns_add", "reduce_columns_max", "reduce_columns_maxnum"}) {
      SCOPED_TRACE(name + " " + std::string(elementTypeName(outType)));
      const KernelSpec *kernel = lookupKernel(name);
      ASSERT_NE(kernel, nullptr);
      ASSERT_FALSE(checkKernelParams(*kernel, params));
      EXPECT_EQ(kernelOperandBytes(*kernel, params, 0), sizeof in);
      EXPECT_EQ(kernelOperandBytes(*kernel, params, 1), 8u * 4);
      KernelOperandShape shape = kernelOperandShape(*kernel, params, 1);
      EXPECT_EQ(shape.rows, 8);
      EXPECT_EQ(shape.cols, 1);
      std::vector<uint8_t> out(32 + kGuardBytes, kSentinel);
      uint8_t *operands[] = {inBytes.data(), out.data()};
      executeKernel(*kernel, params, TargetModel::ipu21(), operands);
      const bool sum = name == "reduce_columns_add";
      const bool maxNum = name == "reduce_columns_maxnum";
      for (int t = 0; t < 2; ++t)
        for (int c = 0; c < 4; ++c) {
          // From the identity, each step rounded to f32, rows in order.
          float expected = sum ? 0.0f : -INFINITY;
          for (int b = 0; b < 3; ++b) {
            const float v = in[t][b][c];
            if (sum)
              expected += v;
            else if (maxNum)
              expected = std::fmax(expected, v);
            else
              expected = std::isnan(v) || std::isnan(expected) ? nan : std::max(expected, v);
          }
          const float got = loadElement(outType, &out[(t * 4 + c) * 4]);
          const float want = outType == ElementType::F16
                                 ? halfToFloat(floatToHalf(expected))
                                 : expected;
          if (std::isnan(want))
            EXPECT_TRUE(std::isnan(got)) << t << "," << c;
          else
            EXPECT_EQ(got, want) << t << "," << c;
        }
      EXPECT_EQ(out[32], kSentinel);
      if (outType == ElementType::F16)
        EXPECT_EQ(out[2], kSentinel); // the padding of out's first row
    }
  }
  const KernelSpec *add = lookupKernel("reduce_columns_add");
  int64_t bad[] = {2, 0, 4, 0};
  EXPECT_EQ(checkKernelParams(*add, bad),
            "reduce_columns_add: parameter 'count' = 0 is not in [1, 2^24)");
  int64_t badType[] = {2, 3, 4, 2};
  EXPECT_EQ(checkKernelParams(*lookupKernel("reduce_columns_max"), badType),
            "reduce_columns_max: parameter 'outType' = 2 is not f32 or f16");
  // The reduce kernel's cost for the same data.
  const TargetModel target = TargetModel::ipu21();
  int64_t params[] = {16, 5, 46, 0};
  EXPECT_EQ(estimateKernelCycles(*add, params, target),
            estimateReduceCycles(target, 16, 46, 5, ElementType::F32, ElementType::F32));
}

TEST(KernelsTest, ReduceSumsBlocksAndCopyMoves) {
  const KernelSpec *reduce = lookupKernel("reduce");
  ASSERT_NE(reduce, nullptr);
  // 2 rows of 3 blocks of 3 f32 values, summed into an f16 result (pitch 8).
  int64_t params[] = {2, 3, 3, 0, 1};
  ASSERT_FALSE(checkKernelParams(*reduce, params));
  EXPECT_EQ(kernelOperandBytes(*reduce, params, 0), 2u * 36);
  EXPECT_EQ(kernelOperandBytes(*reduce, params, 1), 2u * 8);
  std::vector<float> in(18);
  for (int i = 0; i < 18; ++i)
    in[i] = float(i);
  std::vector<uint8_t> inBytes(72), out(16 + kGuardBytes, kSentinel);
  std::memcpy(inBytes.data(), in.data(), 72);
  uint8_t *operands[] = {inBytes.data(), out.data()};
  executeKernel(*reduce, params, TargetModel::ipu21(), operands);
  for (int r = 0; r < 2; ++r)
    for (int c = 0; c < 3; ++c) {
      float expected = in[r * 9 + c] + in[r * 9 + 3 + c] + in[r * 9 + 6 + c];
      EXPECT_EQ(loadElement(ElementType::F16, &out[r * 8 + c * 2]), expected);
    }
  // Row padding and guard bytes stay untouched.
  EXPECT_EQ(out[6], kSentinel);
  EXPECT_EQ(out[16], kSentinel);
  int64_t badCount[] = {2, 3, 0, 0, 1};
  EXPECT_EQ(checkKernelParams(*reduce, badCount),
            "reduce: parameter 'count' = 0 is not in [1, 2^24)");
  int64_t badType[] = {2, 3, 3, 2, 1};
  EXPECT_EQ(checkKernelParams(*reduce, badType),
            "reduce: parameter 'inType' = 2 is not f32 or f16");

  const KernelSpec *copy = lookupKernel("copy");
  ASSERT_NE(copy, nullptr);
  int64_t bytes[] = {5};
  std::vector<uint8_t> src = {1, 2, 3, 4, 5, 6}, dst(6, 0);
  uint8_t *copyOperands[] = {src.data(), dst.data()};
  executeKernel(*copy, bytes, TargetModel::ipu21(), copyOperands);
  EXPECT_EQ(dst, (std::vector<uint8_t>{1, 2, 3, 4, 5, 0}));
  int64_t none[] = {0};
  EXPECT_TRUE(checkKernelParams(*copy, none).has_value());
}

TEST(KernelsTest, EstimatorMonotonic) {
  TargetModel t = TargetModel::ipu21();
  for (ElementType in : kAllTypes) {
    uint64_t previous = 0;
    // From 3 rows a worker on (below, poplibs' own row paths and its tag
    // break monotonicity: FewRowsPerWorkerFollowPoplibs). Rows split over
    // 6 workers: a row more can cost nothing.
    for (int64_t m = 18; m <= 300; ++m) {
      uint64_t cycles = est(t, in, m, 40, 24);
      EXPECT_GE(cycles, previous) << elementTypeName(in) << " m " << m;
      previous = cycles;
    }
    previous = 0;
    for (int64_t k = 1; k <= 200; ++k) {
      uint64_t cycles = est(t, in, 16, k, 24);
      EXPECT_GE(cycles, previous) << elementTypeName(in) << " k " << k;
      previous = cycles;
    }
    previous = 0;
    for (int64_t n = 1; n <= 200; ++n) {
      uint64_t cycles = est(t, in, 16, 40, n);
      EXPECT_GE(cycles, previous) << elementTypeName(in) << " n " << n;
      previous = cycles;
    }
  }
  // For large blocks the faster AMP modes win.
  uint64_t f32 = est(t, ElementType::F32, 256, 256, 256);
  uint64_t f16 = est(t, ElementType::F16, 256, 256, 256);
  uint64_t f8 = est(t, ElementType::F8E4M3FN, 256, 256, 256);
  EXPECT_GT(f32, f16);
  EXPECT_GT(f16, f8);
}

TEST(KernelsTest, KernelEstimateUsesGemmEstimator) {
  TargetModel t = TargetModel::ipu21();
  for (ElementType in : kAllTypes)
    for (ElementType acc : kAccTypes) {
      int64_t params[] = {37, 100, 45, typeParam(in), typeParam(acc), 1, 0, 0};
      EXPECT_EQ(estimateKernelCycles(gemm(), params, t),
                est(t, in, 37, 100, 45, MemoryClass::Standard,
                    ElementType::F16, acc));
    }
  int64_t bad[] = {37, 100, 45, 1, 3, 1, 0, 0};
  EXPECT_EQ(estimateKernelCycles(gemm(), bad, t), 0u);
}

// The swapped orientation computes the same product as gemm, bit for bit,
// from B stored transposed; only its cost differs (the AMP holds lhs).
TEST(KernelsTest, GemmTransposedMatchesGemm) {
  const KernelSpec *gemmT = lookupKernel("gemm_t");
  ASSERT_NE(gemmT, nullptr);
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
  for (ElementType in : kAllTypes)
    for (ElementType acc : kAccTypes)
      for (auto [m, k, n] : {std::tuple{5, 7, 3}, std::tuple{3, 33, 17},
                             std::tuple{8, 40, 19}}) {
        GemmCase c(m, k, n, in, acc, ElementType::F32);
        for (int64_t i = 0; i < m; ++i)
          for (int64_t kk = 0; kk < k; ++kk)
            c.setLhs(i, kk, dist(rng));
        for (int64_t kk = 0; kk < k; ++kk)
          for (int64_t j = 0; j < n; ++j)
            c.setRhs(kk, j, dist(rng));
        c.run();
        // rhsT: n rows of k elements.
        uint64_t pitch = (k * elementBytes(in) + 3) / 4 * 4;
        std::vector<uint8_t> rhsT(n * pitch, 0);
        for (int64_t kk = 0; kk < k; ++kk)
          for (int64_t j = 0; j < n; ++j)
            std::memcpy(&rhsT[j * pitch + kk * elementBytes(in)], c.rhsAt(kk, j),
                        elementBytes(in));
        std::vector<uint8_t> out(c.out.size(), kSentinel);
        int64_t params[] = {m, k, n, typeParam(in), typeParam(acc),
                            typeParam(ElementType::F32), 0, 0};
        ASSERT_FALSE(checkKernelParams(*gemmT, params));
        EXPECT_EQ(kernelOperandBytes(*gemmT, params, 1), uint64_t(n) * pitch);
        uint8_t *operands[] = {c.lhs.data(), rhsT.data(), out.data()};
        executeKernel(*gemmT, params, TargetModel::ipu21(), operands);
        EXPECT_EQ(out, c.out) << elementTypeName(in) << " acc "
                              << elementTypeName(acc) << " " << m << "x" << k
                              << "x" << n;
      }
  // Its estimate is gemm's with m and n exchanged.
  TargetModel t = TargetModel::ipu21();
  int64_t params[] = {27, 1152, 80, 1, 0, 0, 0, 0};
  EXPECT_EQ(estimateKernelCycles(*gemmT, params, t),
            est(t, ElementType::F16, 80, 1152, 27, MemoryClass::Standard));
  int64_t bad[] = {27, 1152, 80, 1, 5, 0, 0, 0};
  EXPECT_EQ(checkKernelParams(*gemmT, bad),
            "gemm_t: parameter 'accType' = 5 is not f32 or f16");
}

// The simulator passes each vertex's operand addresses: the streamed
// operand's memory class comes from where it lives, not from a parameter.
TEST(KernelsTest, KernelEstimateReadsTheStreamedClassFromItsAddress) {
  TargetModel t = TargetModel::ipu21();
  t.loadBytesPerCycleStandard = 4; // Slow enough for the load path to bind.
  int64_t params[] = {18, 16, 16, typeParam(ElementType::F16),
                      typeParam(ElementType::F16), typeParam(ElementType::F16),
                      int64_t(MemoryClass::Interleaved), 0};
  const uint32_t inStandard[] = {t.standard.base, t.interleaved.base,
                                 t.standard.base + 4096};
  const uint32_t inInterleaved[] = {t.interleaved.base + 4096,
                                    t.interleaved.base, t.standard.base};
  EXPECT_EQ(estimateKernelCycles(gemm(), params, t, inStandard),
            est(t, ElementType::F16, 18, 16, 16, MemoryClass::Interleaved,
                ElementType::F16, ElementType::F16, MemoryClass::Standard));
  EXPECT_EQ(estimateKernelCycles(gemm(), params, t, inInterleaved),
            est(t, ElementType::F16, 18, 16, 16, MemoryClass::Interleaved,
                ElementType::F16, ElementType::F16, MemoryClass::Interleaved));
  EXPECT_GT(estimateKernelCycles(gemm(), params, t, inStandard),
            estimateKernelCycles(gemm(), params, t, inInterleaved));
  // Without addresses, streamed rows are taken to be in standard memory.
  EXPECT_EQ(estimateKernelCycles(gemm(), params, t),
            estimateKernelCycles(gemm(), params, t, inStandard));
}

TEST(KernelsTest, TransposeMovesEveryElementAcross) {
  // A 5 x 3 f16 block (rows padded to 8 bytes) into its 3 x 5 transpose
  // (rows padded to 12): dst[c][r] = src[r][c], padding untouched.
  const KernelSpec *kernel = lookupKernel("transpose");
  ASSERT_NE(kernel, nullptr);
  const int64_t params[] = {5, 3, static_cast<int64_t>(ElementType::F16)};
  ASSERT_FALSE(checkKernelParams(*kernel, params));
  EXPECT_EQ(kernelOperandBytes(*kernel, params, 0), 5u * 8u);
  EXPECT_EQ(kernelOperandBytes(*kernel, params, 1), 3u * 12u);
  std::vector<uint8_t> src(40), dst(36, 0xAB);
  for (int r = 0; r < 5; ++r)
    for (int c = 0; c < 3; ++c) {
      uint16_t value = static_cast<uint16_t>(100 * r + c);
      std::memcpy(src.data() + r * 8 + c * 2, &value, 2);
    }
  uint8_t *operands[] = {src.data(), dst.data()};
  executeKernel(*kernel, params, TargetModel::ipu21(), operands);
  for (int c = 0; c < 3; ++c) {
    for (int r = 0; r < 5; ++r) {
      uint16_t value;
      std::memcpy(&value, dst.data() + c * 12 + r * 2, 2);
      EXPECT_EQ(value, 100 * r + c) << "dst[" << c << "][" << r << "]";
    }
    EXPECT_EQ(dst[c * 12 + 10], 0xAB);
  }
  const int64_t bad[] = {0, 3, 1};
  EXPECT_EQ(*checkKernelParams(*kernel, bad),
            "transpose: parameter 'rows' = 0 is not in [1, 2^24)");
}

TEST(KernelsTest, TransposeEstimateIsAWorkerKernelPerElement) {
  // The user's measured panel pack (transposeInstructionsPerElement, 4 an
  // element), built on the worker-kernel model: 1152 elements at 4 each.
  TargetModel target = TargetModel::ipu21();
  const int64_t params[] = {72, 16, static_cast<int64_t>(ElementType::F16)};
  EXPECT_EQ(estimateKernelCycles(*lookupKernel("transpose"), params, target),
            estimateWorkerKernelCycles(target, 72 * 16,
                                       target.transposeInstructionsPerElement));
  EXPECT_EQ(estimateTransposeCycles(target, 72, 16),
            estimateWorkerKernelCycles(target, 1152, 4));
  EXPECT_GT(estimateTransposeCycles(target, 72, 32),
            estimateTransposeCycles(target, 72, 16));
}
