//===- KernelCodegenTest.cpp - Generated kernels, compiled and run --------===//
//
// Parses ipu_tile.kernel ops from text, builds the kernel object with
// buildKernelObject (MLIR's LLVM conversions, LLVM's x86-64 back end, LLD),
// loads it as ipu-run does (a Package and LoadedKernels: memfd + dlopen) and
// calls each kernel's entry on host buffers. The f8 conversions of the
// generated code must equal ElementType.cpp's bit for bit; a fused GELU must
// stay within an f16 ulp of evaluateBody and leave row padding alone; the
// object must be reproducible, export its symbols and import nothing.
//
//===----------------------------------------------------------------------===//

#include "IPU/Translate/KernelCodegen.h"
#include "IPU/Device/Elementwise.h"
#include "IPU/Dialect/Tile/IR/Tile.h"
#include "IPU/Package/Package.h"
#include "IPU/Runtime/KernelLoader.h"
#include "IPU/Support/ElementType.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <elf.h>
#include <limits>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

using namespace mlir;

namespace {

uint32_t bitsOf(float value) { return ::ipu::floatBits(value); }
float floatOf(uint32_t bits) { return ::ipu::bitsFloat(bits); }

/// Row pitch of a block: rows padded to 32-bit words.
size_t pitch(int64_t cols, ::ipu::ElementType type) {
  return (static_cast<size_t>(cols) * ::ipu::elementBytes(type) + 3) / 4 * 4;
}

/// A module of kernels compiled into one kernel object and loaded.
class CompiledKernels {
public:
  /// Parses `programBody` (ipu_tile.kernel ops) into a program, builds the
  /// kernel object and, when `load` is set, loads it. A failure clears
  /// ok() and leaves its diagnostics in `error`.
  explicit CompiledKernels(const std::string &programBody, bool load = true)
      : context(registry(), MLIRContext::Threading::DISABLED) {
    ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diagnostic) {
      error += diagnostic.str() + "\n";
      return success();
    });
    const std::string text = "module attributes {ipu_tile.target = "
                             "#ipu_tile.target<\"ipu21-4\">} {\n"
                             "  ipu_tile.program @p {\n" +
                             programBody + "\n  }\n}\n";
    module = parseSourceString<ModuleOp>(text, &context);
    if (!module) {
      error = "cannot parse:\n" + error;
      return;
    }
    SmallVector<ipu_tile::KernelOp> kernels;
    module->walk([&](ipu_tile::KernelOp kernel) { kernels.push_back(kernel); });
    for (ipu_tile::KernelOp kernel : kernels) {
      FailureOr<std::unique_ptr<::ipu::ElementwiseKernel>> built =
          kernel.buildKernel();
      if (failed(built)) {
        error = "buildKernel failed:\n" + error;
        return;
      }
      package.kernels.push_back(
          std::shared_ptr<::ipu::ElementwiseKernel>(std::move(*built)));
    }
    ipu_tile::KernelCodegenStats stats;
    if (failed(ipu_tile::buildKernelObject(kernels, package.kernelObject,
                                           stats))) {
      error = "buildKernelObject failed:\n" + error;
      return;
    }
    package.kernelAbiVersion = ::ipu::kKernelAbiVersion;
    package.kernelObjectHash = ::ipu::fnv1a64(package.kernelObject.data(),
                                              package.kernelObject.size());
    kernelCount = stats.kernels;
    if (load) {
      loaded = std::make_unique<::ipu::LoadedKernels>();
      if (std::optional<std::string> failure = loaded->load(package)) {
        error = "load failed: " + *failure;
        return;
      }
    }
    good = true;
  }

  bool ok() const { return good; }

  const ::ipu::ElementwiseKernel &kernel(const std::string &name) const {
    for (const auto &kernel : package.kernels)
      if (kernel->name() == name)
        return *kernel;
    ADD_FAILURE() << "no kernel " << name;
    return *package.kernels.front();
  }

  MLIRContext context;
  OwningOpRef<ModuleOp> module;
  ::ipu::Package package;
  std::unique_ptr<::ipu::LoadedKernels> loaded;
  std::string error;
  unsigned kernelCount = 0;

private:
  bool good = false;

  static DialectRegistry registry() {
    DialectRegistry registry;
    registry.insert<ipu_tile::IPUTileDialect, arith::ArithDialect,
                    math::MathDialect>();
    return registry;
  }
};

/// Runs `kernel` on a rows x cols block: `inputs[i]` is input i's block (as
/// its broadcast sizes it, rows padded), `output` the output block.
void run(const ::ipu::ElementwiseKernel &kernel, int64_t rows, int64_t cols,
         std::vector<std::vector<uint8_t>> &inputs,
         std::vector<uint8_t> &output) {
  ASSERT_NE(kernel.entry, nullptr) << kernel.name() << " is not loaded";
  std::vector<uint8_t *> operands;
  for (std::vector<uint8_t> &input : inputs)
    operands.push_back(input.data());
  operands.push_back(output.data());
  const int64_t params[] = {rows, cols};
  kernel.entry(operands.data(), params);
}

/// The bytes of `kernel`'s output block (1 x cols of `outType`, filled with
/// 0xA5 before) on a one-input block holding `inputBytes`.
std::vector<uint8_t> runRow(const ::ipu::ElementwiseKernel &kernel,
                            const std::vector<uint8_t> &inputBytes,
                            int64_t cols, ::ipu::ElementType outType) {
  std::vector<std::vector<uint8_t>> inputs = {inputBytes};
  inputs[0].resize(
      std::max(inputs[0].size(), pitch(cols, kernel.body().inputs[0].type)));
  std::vector<uint8_t> output(pitch(cols, outType), 0xA5);
  run(kernel, 1, cols, inputs, output);
  return output;
}

/// A kernel converting `from` to `to` with `op` (arith.extf or truncf).
std::string castKernel(const std::string &name, const std::string &op,
                       const std::string &from, const std::string &to) {
  return "    ipu_tile.kernel @" + name + " broadcasts [\"full\"] {\n" +
         "    ^bb0(%x: " + from + "):\n" + "      %y = " + op + " %x : " + from +
         " to " + to + "\n      ipu_tile.yield %y : " + to + "\n    }\n";
}

/// f8 to f32 and f16 (dec_*), and f32 and f16 to f8 (enc_*).
const std::string kConversionKernels =
    castKernel("dec_e4m3", "arith.extf", "f8E4M3FN", "f32") +
    castKernel("dec_e5m2", "arith.extf", "f8E5M2", "f32") +
    castKernel("dec_e4m3_f16", "arith.extf", "f8E4M3FN", "f16") +
    castKernel("dec_e5m2_f16", "arith.extf", "f8E5M2", "f16") +
    castKernel("enc_e4m3", "arith.truncf", "f32", "f8E4M3FN") +
    castKernel("enc_e5m2", "arith.truncf", "f32", "f8E5M2") +
    castKernel("enc_e4m3_f16", "arith.truncf", "f16", "f8E4M3FN") +
    castKernel("enc_e5m2_f16", "arith.truncf", "f16", "f8E5M2");

/// Bias add and GELU's tanh form in f16, as torch-mlir writes it (examples/
/// exporters/torch-gelu-tanh-f16.mlir, x^3 as two multiplies).
const char *const kGeluKernel = R"mlir(
    ipu_tile.kernel @gelu broadcasts ["full", "row"] {
    ^bb0(%x: f16, %b: f16):
      %c0 = arith.constant 4.470830e-02 : f16
      %c1 = arith.constant 7.978520e-01 : f16
      %one = arith.constant 1.000000e+00 : f16
      %half = arith.constant 5.000000e-01 : f16
      %y = arith.addf %x, %b : f16
      %y2 = arith.mulf %y, %y : f16
      %y3 = arith.mulf %y2, %y : f16
      %t0 = arith.mulf %y3, %c0 : f16
      %t1 = arith.addf %y, %t0 : f16
      %t2 = arith.mulf %t1, %c1 : f16
      %t3 = math.tanh %t2 : f16
      %t4 = arith.addf %t3, %one : f16
      %t5 = arith.mulf %t4, %half : f16
      %out = arith.mulf %y, %t5 : f16
      ipu_tile.yield %out : f16
    }
)mlir";

class KernelCodegenTest : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    conversions = new CompiledKernels(kConversionKernels);
    gelu = new CompiledKernels(kGeluKernel);
  }
  static void TearDownTestSuite() {
    delete conversions;
    delete gelu;
    conversions = gelu = nullptr;
  }
  void SetUp() override {
    ASSERT_TRUE(conversions->ok()) << conversions->error;
    ASSERT_TRUE(gelu->ok()) << gelu->error;
  }
  static CompiledKernels *conversions, *gelu;
};
CompiledKernels *KernelCodegenTest::conversions = nullptr;
CompiledKernels *KernelCodegenTest::gelu = nullptr;

//===----------------------------------------------------------------------===//
// f8 decode: all 256 codes
//===----------------------------------------------------------------------===//

TEST_F(KernelCodegenTest, DecodeF8AllCodes) {
  // Bit for bit, NaNs included: the reference's copysign(NaN, sign) and the
  // kernel's NaN | sign are both 0x7FC00000 with the code's sign.
  std::vector<uint8_t> codes(256);
  for (unsigned c = 0; c < 256; ++c)
    codes[c] = static_cast<uint8_t>(c);
  struct Case {
    const char *kernel;
    float (*reference)(uint8_t);
  };
  for (const Case &c : {Case{"dec_e4m3", ::ipu::f8E4M3FNToFloat},
                        Case{"dec_e5m2", ::ipu::f8E5M2ToFloat}}) {
    SCOPED_TRACE(c.kernel);
    std::vector<uint8_t> out = runRow(conversions->kernel(c.kernel), codes, 256,
                                      ::ipu::ElementType::F32);
    int mismatches = 0;
    for (unsigned code = 0; code < 256; ++code) {
      float actual =
          ::ipu::loadElement(::ipu::ElementType::F32, &out[4 * code]);
      float expected = c.reference(static_cast<uint8_t>(code));
      if (bitsOf(expected) != bitsOf(actual) && ++mismatches <= 10)
        ADD_FAILURE() << "code 0x" << std::hex << code << ": expected bits 0x"
                      << bitsOf(expected) << ", kernel 0x" << bitsOf(actual);
    }
    EXPECT_EQ(mismatches, 0);
  }
}

TEST_F(KernelCodegenTest, DecodeF8ToF16AllCodes) {
  // extf f8 -> f16: the decoded value is exact in f16 (and so its f16 bits
  // are floatToHalf of the f32 reference).
  std::vector<uint8_t> codes(256);
  for (unsigned c = 0; c < 256; ++c)
    codes[c] = static_cast<uint8_t>(c);
  struct Case {
    const char *kernel;
    float (*reference)(uint8_t);
  };
  for (const Case &c : {Case{"dec_e4m3_f16", ::ipu::f8E4M3FNToFloat},
                        Case{"dec_e5m2_f16", ::ipu::f8E5M2ToFloat}}) {
    SCOPED_TRACE(c.kernel);
    std::vector<uint8_t> out = runRow(conversions->kernel(c.kernel), codes, 256,
                                      ::ipu::ElementType::F16);
    int mismatches = 0;
    for (unsigned code = 0; code < 256; ++code) {
      uint16_t actual =
          static_cast<uint16_t>(out[2 * code] | (out[2 * code + 1] << 8));
      float reference = c.reference(static_cast<uint8_t>(code));
      uint16_t expected = ::ipu::floatToHalf(reference);
      bool same = std::isnan(reference)
                      ? (actual & 0x7C00) == 0x7C00 && (actual & 0x3FF) != 0 &&
                            (actual >> 15) == (expected >> 15)
                      : actual == expected;
      if (!same && ++mismatches <= 10)
        ADD_FAILURE() << "code 0x" << std::hex << code << ": expected 0x"
                      << expected << ", kernel 0x" << actual;
    }
    EXPECT_EQ(mismatches, 0);
  }
}

//===----------------------------------------------------------------------===//
// f8 encode
//===----------------------------------------------------------------------===//

/// f32 inputs for the encoders: every f16 value, random bit patterns
/// (uniform, f32 subnormals, dense in the f8 range), specials, and every
/// midpoint between neighbouring f8 codes of both formats with the f32
/// values just beside it.
std::vector<float> encodeInputs() {
  std::vector<float> values;
  for (uint32_t h = 0; h < 65536; ++h)
    values.push_back(::ipu::halfToFloat(static_cast<uint16_t>(h)));
  std::mt19937 rng(20240613);
  for (int i = 0; i < 100000; ++i)
    values.push_back(floatOf(static_cast<uint32_t>(rng())));
  for (int i = 0; i < 5000; ++i) // f32 subnormals, both signs.
    values.push_back(floatOf(static_cast<uint32_t>(rng()) & 0x807FFFFFu));
  for (int i = 0; i < 100000; ++i) { // 2^-30 .. 2^20, both signs.
    uint32_t exponent = 127 - 30 + static_cast<uint32_t>(rng() % 51);
    uint32_t bits =
        (static_cast<uint32_t>(rng()) & 0x807FFFFFu) | (exponent << 23);
    values.push_back(floatOf(bits));
  }
  const float inf = std::numeric_limits<float>::infinity();
  for (float special : {0.0f,
                        -0.0f,
                        inf,
                        -inf,
                        std::numeric_limits<float>::max(),
                        -std::numeric_limits<float>::max(),
                        std::numeric_limits<float>::min(),
                        std::numeric_limits<float>::denorm_min(),
                        -std::numeric_limits<float>::denorm_min(),
                        448.0f,
                        464.0f,
                        480.0f,
                        1e30f,
                        -1e30f,
                        57344.0f,
                        61440.0f,
                        65504.0f,
                        65520.0f,
                        1e6f,
                        -1e6f,
                        floatOf(0x7FC00000u),
                        floatOf(0xFFC00000u),
                        floatOf(0x7F800001u),
                        floatOf(0xFF800001u),
                        floatOf(0x7FFFFFFFu),
                        floatOf(0xFFFFFFFFu),
                        floatOf(0x7FA00000u)})
    values.push_back(special);
  for (float (*decode)(uint8_t) :
       {::ipu::f8E4M3FNToFloat, ::ipu::f8E5M2ToFloat}) {
    std::vector<float> finite;
    for (unsigned code = 0; code < 0x80; ++code) {
      float value = decode(static_cast<uint8_t>(code));
      if (std::isfinite(value))
        finite.push_back(value);
    }
    std::sort(finite.begin(), finite.end());
    // The tie above the largest finite value: max + half its ulp.
    float max = finite.back(), belowMax = finite[finite.size() - 2];
    finite.push_back(max + (max - belowMax));
    for (size_t i = 0; i + 1 < finite.size(); ++i) {
      float mid = (finite[i] + finite[i + 1]) / 2; // Exact in f32.
      for (float value :
           {mid, std::nextafter(mid, 0.0f), std::nextafter(mid, inf)}) {
        values.push_back(value);
        values.push_back(-value);
      }
    }
  }
  return values;
}

std::vector<uint8_t> f32Bytes(const std::vector<float> &values) {
  std::vector<uint8_t> bytes(values.size() * 4);
  std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}


TEST_F(KernelCodegenTest, EncodeF32ToF8) {
  const std::vector<float> values = encodeInputs();
  const int64_t cols = static_cast<int64_t>(values.size());
  struct Case {
    const char *kernel;
    uint8_t (*reference)(float);
    ::ipu::ElementType type;
  };
  for (const Case &c :
       {Case{"enc_e4m3", ::ipu::floatToF8E4M3FN, ::ipu::ElementType::F8E4M3FN},
        Case{"enc_e5m2", ::ipu::floatToF8E5M2, ::ipu::ElementType::F8E5M2}}) {
    SCOPED_TRACE(c.kernel);
    std::vector<uint8_t> out =
        runRow(conversions->kernel(c.kernel), f32Bytes(values), cols, c.type);
    int mismatches = 0;
    for (size_t i = 0; i < values.size(); ++i) {
      uint8_t expected = c.reference(values[i]);
      if (out[i] != expected && ++mismatches <= 10)
        ADD_FAILURE() << "f32 0x" << std::hex << bitsOf(values[i]) << " ("
                      << values[i] << "): expected 0x" << int(expected)
                      << ", kernel 0x" << int(out[i]);
    }
    EXPECT_EQ(mismatches, 0) << "of " << values.size();
    // The padding after the last code is left alone.
    for (size_t i = values.size(); i < out.size(); ++i)
      EXPECT_EQ(out[i], 0xA5) << "padding byte " << i;
  }
}

// encodeF8 rounds a subnormal with math.roundeven of the magnitude in
// units of the smallest subnormal; buildKernelObject's
// math::populateExpansionPatterns expands roundeven through math.round,
// itself trunc(x + copysign(0.5, x)). For x = 0.5 - 2^-25, the largest f32
// below 0.5, x + 0.5 rounds to 1.0 in f32, so roundeven gives 1, not 0:
//   f32 0x3A7FFFFF (2^-10 - 2^-34 = 9.7656244e-4) -> f8E4M3FN: expected
//   0x00 (floatToF8E4M3FN, below the tie at 2^-10), kernel 0x01 (2^-9);
//   0xBA7FFFFF: expected 0x80, kernel 0x81;
//   f32 0x36FFFFFF (2^-17 - 2^-41 = 7.6293940e-6) -> f8E5M2: expected
//   0x00, kernel 0x01 (2^-16); 0xB6FFFFFF: expected 0x80, kernel 0x81.
// No other f32 value is affected (for 1.5 - ulp and up, x + 0.5 is exact),
// and the f16 -> f8 kernels never see these values. (Found by this test and fixed; it keeps it fixed.)
TEST_F(KernelCodegenTest, EncodeF32JustBelowHalfTheSmallestSubnormal) {
  const std::vector<float> values = {floatOf(0x3A7FFFFFu), floatOf(0xBA7FFFFFu),
                                     floatOf(0x36FFFFFFu),
                                     floatOf(0xB6FFFFFFu)};
  struct Case {
    const char *kernel;
    uint8_t (*reference)(float);
    ::ipu::ElementType type;
  };
  for (const Case &c :
       {Case{"enc_e4m3", ::ipu::floatToF8E4M3FN, ::ipu::ElementType::F8E4M3FN},
        Case{"enc_e5m2", ::ipu::floatToF8E5M2, ::ipu::ElementType::F8E5M2}}) {
    std::vector<uint8_t> out =
        runRow(conversions->kernel(c.kernel), f32Bytes(values), 4, c.type);
    for (size_t i = 0; i < values.size(); ++i)
      EXPECT_EQ(int(out[i]), int(c.reference(values[i])))
          << c.kernel << " of f32 0x" << std::hex << bitsOf(values[i]);
  }
}

TEST_F(KernelCodegenTest, EncodeF16ToF8AllCodes) {
  std::vector<uint8_t> halves(2 * 65536);
  for (uint32_t h = 0; h < 65536; ++h) {
    halves[2 * h] = static_cast<uint8_t>(h);
    halves[2 * h + 1] = static_cast<uint8_t>(h >> 8);
  }
  struct Case {
    const char *kernel;
    uint8_t (*reference)(float);
    ::ipu::ElementType type;
  };
  for (const Case &c : {Case{"enc_e4m3_f16", ::ipu::floatToF8E4M3FN,
                             ::ipu::ElementType::F8E4M3FN},
                        Case{"enc_e5m2_f16", ::ipu::floatToF8E5M2,
                             ::ipu::ElementType::F8E5M2}}) {
    SCOPED_TRACE(c.kernel);
    std::vector<uint8_t> out =
        runRow(conversions->kernel(c.kernel), halves, 65536, c.type);
    int mismatches = 0;
    for (uint32_t h = 0; h < 65536; ++h) {
      uint8_t expected =
          c.reference(::ipu::halfToFloat(static_cast<uint16_t>(h)));
      if (out[h] != expected && ++mismatches <= 10)
        ADD_FAILURE() << "f16 0x" << std::hex << h << ": expected 0x"
                      << int(expected) << ", kernel 0x" << int(out[h]);
    }
    EXPECT_EQ(mismatches, 0);
  }
}

//===----------------------------------------------------------------------===//
// A fused GELU on a block with padded rows
//===----------------------------------------------------------------------===//

/// f16 bits as a number line: neighbouring f16 values differ by 1, -0 and
/// +0 are both 0.
int32_t orderedHalf(uint16_t bits) {
  int32_t magnitude = bits & 0x7FFF;
  return (bits & 0x8000) ? -magnitude : magnitude;
}

uint16_t halfAt(const std::vector<uint8_t> &bytes, size_t offset) {
  return static_cast<uint16_t>(bytes[offset] | (bytes[offset + 1] << 8));
}

void putHalf(std::vector<uint8_t> &bytes, size_t offset, float value) {
  ::ipu::storeElement(::ipu::ElementType::F16, value, &bytes[offset]);
}

TEST_F(KernelCodegenTest, GeluTanhF16RowBiasPaddedRows) {
  constexpr int64_t rows = 3, cols = 5;
  constexpr size_t rowPitch = 12; // 5 f16 = 10 bytes, padded to 12.
  ASSERT_EQ(pitch(cols, ::ipu::ElementType::F16), rowPitch);
  constexpr uint8_t canary = 0xA5;
  constexpr size_t guard = 16;
  const ::ipu::ElementwiseKernel &kernel = gelu->kernel("gelu");
  // x from -3.5 to 3.5 with a bias of -0.25 .. 0.25: y spans GELU's bend.
  std::vector<std::vector<uint8_t>> inputs(2);
  inputs[0].assign(rows * rowPitch, 0x7E); // Padding holds f16 NaN bits.
  inputs[1].assign(rowPitch, 0x7E);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      putHalf(inputs[0], r * rowPitch + 2 * c, -3.5f + 0.5f * (r * cols + c));
  for (int64_t c = 0; c < cols; ++c)
    putHalf(inputs[1], 2 * c, -0.25f + 0.125f * c);
  std::vector<uint8_t> output(rows * rowPitch + guard, canary);
  run(kernel, rows, cols, inputs, output);

  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) {
      const float in[] = {
          ::ipu::loadElement(::ipu::ElementType::F16,
                             &inputs[0][r * rowPitch + 2 * c]),
          ::ipu::loadElement(::ipu::ElementType::F16, &inputs[1][2 * c])};
      const uint16_t expected =
          ::ipu::floatToHalf(::ipu::evaluateBody(kernel.body(), in));
      const uint16_t actual = halfAt(output, r * rowPitch + 2 * c);
      EXPECT_LE(std::abs(orderedHalf(expected) - orderedHalf(actual)), 1)
          << "element (" << r << ", " << c << "), x = " << in[0]
          << ", b = " << in[1] << ": evaluateBody "
          << ::ipu::halfToFloat(expected) << ", kernel "
          << ::ipu::halfToFloat(actual);
    }
    for (size_t byte = 2 * cols; byte < rowPitch; ++byte)
      EXPECT_EQ(output[r * rowPitch + byte], canary)
          << "row " << r << " padding byte " << byte;
  }
  for (size_t byte = rows * rowPitch; byte < output.size(); ++byte)
    EXPECT_EQ(output[byte], canary) << "guard byte " << byte;
}

TEST_F(KernelCodegenTest, GeluTanhF16SweepStaysNearTheReference) {
  // Every finite f16 x with a zero bias, as one row: how far the generated
  // code (MLIR's f32 polynomial tanh) strays from evaluateBody (the C
  // library's tanh). Where 1 + tanh cancels (large negative y) an error of
  // one f32 ulp of tanh is many f16 ulps of the result, so the bound here
  // is on the absolute error, relative to the largest of |y| and 1.
  const ::ipu::ElementwiseKernel &kernel = gelu->kernel("gelu");
  std::vector<float> xs;
  for (uint32_t h = 0; h < 65536; ++h) {
    float x = ::ipu::halfToFloat(static_cast<uint16_t>(h));
    if (std::isfinite(x))
      xs.push_back(x);
  }
  const int64_t cols = static_cast<int64_t>(xs.size());
  std::vector<std::vector<uint8_t>> inputs(2);
  inputs[0].assign(pitch(cols, ::ipu::ElementType::F16), 0);
  inputs[1].assign(pitch(cols, ::ipu::ElementType::F16), 0);
  for (size_t i = 0; i < xs.size(); ++i)
    putHalf(inputs[0], 2 * i, xs[i]);
  std::vector<uint8_t> output(pitch(cols, ::ipu::ElementType::F16), 0xA5);
  run(kernel, 1, cols, inputs, output);
  int far = 0, offByMoreThanOneUlp = 0;
  for (size_t i = 0; i < xs.size(); ++i) {
    const float in[] = {xs[i], 0.0f};
    float expected = ::ipu::evaluateBody(kernel.body(), in);
    uint16_t actualBits = halfAt(output, 2 * i);
    float actual = ::ipu::halfToFloat(actualBits);
    if (std::isnan(expected) || std::isnan(actual)) {
      // Past the f16 range y^3 overflows: inf * 0 style NaNs must agree.
      EXPECT_EQ(std::isnan(expected), std::isnan(actual)) << "x = " << xs[i];
      continue;
    }
    if (std::abs(orderedHalf(::ipu::floatToHalf(expected)) -
                 orderedHalf(actualBits)) > 1)
      ++offByMoreThanOneUlp;
    double scale = std::max(1.0, std::fabs(static_cast<double>(xs[i])));
    if (std::isinf(expected) || std::isinf(actual)) {
      EXPECT_EQ(expected, actual) << "x = " << xs[i];
      continue;
    }
    if (std::fabs(static_cast<double>(expected) - actual) >
            scale * std::ldexp(1.0, -9) &&
        ++far <= 10)
      ADD_FAILURE() << "x = " << xs[i] << ": evaluateBody " << expected
                    << ", kernel " << actual;
  }
  EXPECT_EQ(far, 0);
  // Today no input is more than one f16 ulp off; the bound above is what
  // ipu-run's check relies on, this one what the kernel achieves.
  EXPECT_EQ(offByMoreThanOneUlp, 0) << "of " << xs.size() << " f16 inputs";
}

//===----------------------------------------------------------------------===//
// Correctly rounded ops: bit for bit against evaluateBody
//===----------------------------------------------------------------------===//

/// A kernel `name` applying `op` (of `arity` operands) to full inputs of
/// `type`.
std::string singleOpKernel(const std::string &name, const std::string &op,
                           unsigned arity, const std::string &type) {
  std::string broadcasts, arguments, operands;
  for (unsigned i = 0; i < arity; ++i) {
    const std::string value = std::string("%") + char('a' + i);
    broadcasts += std::string(i ? ", " : "") + "\"full\"";
    arguments += (i ? ", " : "") + value + ": " + type;
    operands += (i ? ", " : "") + value;
  }
  return "    ipu_tile.kernel @" + name + " broadcasts [" + broadcasts +
         "] {\n" + "    ^bb0(" + arguments + "):\n" + "      %r = " + op + " " +
         operands + " : " + type + "\n      ipu_tile.yield %r : " + type +
         "\n    }\n";
}

/// The correctly rounded ops, each alone, and bodies that combine them.
std::string exactKernels() {
  std::string text;
  for (auto [name, op] : {std::pair<const char *, const char *>{"add16", "arith.addf"}, {"sub16", "arith.subf"}, {"mul16", "arith.mulf"}, {"div16", "arith.divf"}, {"minimum16", "arith.minimumf"}})
    text += singleOpKernel(name, op, 2, "f16");
  return text + R"mlir(
    ipu_tile.kernel @relu16 broadcasts ["full", "full"] {
    ^bb0(%a: f16, %b: f16):
      %zero = arith.constant 0.000000e+00 : f16
      %c = arith.cmpf ugt, %a, %b : f16
      %r = arith.select %c, %a, %zero : f16
      ipu_tile.yield %r : f16
    }
    ipu_tile.kernel @muladd32 broadcasts ["full", "full"] {
    ^bb0(%a: f16, %b: f16):
      %x = arith.extf %a : f16 to f32
      %y = arith.extf %b : f16 to f32
      %p = arith.mulf %x, %y : f32
      %s = arith.addf %p, %x : f32
      %r = arith.truncf %s : f32 to f16
      ipu_tile.yield %r : f16
    }
)mlir";
}

TEST(KernelCodegenExactTest, CorrectlyRoundedOpsMatchBitForBit) {
  CompiledKernels exact(exactKernels());
  ASSERT_TRUE(exact.ok()) << exact.error;
  // Random f16 pairs (finite and not) plus hand-picked rounding cases.
  std::mt19937 rng(7);
  std::vector<std::pair<uint16_t, uint16_t>> pairs;
  for (int i = 0; i < 50000; ++i)
    pairs.push_back(
        {static_cast<uint16_t>(rng()), static_cast<uint16_t>(rng())});
  pairs.push_back({0x3C00, 0x1000}); // 1 + 2^-11: ties to 1.
  pairs.push_back({0x7BFF, 0x4C00}); // 65504 + 16: ties to inf.
  pairs.push_back({0x3C00, 0x4200}); // 1 / 3.
  const int64_t cols = static_cast<int64_t>(pairs.size());
  std::vector<std::vector<uint8_t>> inputs(
      2, std::vector<uint8_t>(pitch(cols, ::ipu::ElementType::F16)));
  for (size_t i = 0; i < pairs.size(); ++i) {
    inputs[0][2 * i] = static_cast<uint8_t>(pairs[i].first);
    inputs[0][2 * i + 1] = static_cast<uint8_t>(pairs[i].first >> 8);
    inputs[1][2 * i] = static_cast<uint8_t>(pairs[i].second);
    inputs[1][2 * i + 1] = static_cast<uint8_t>(pairs[i].second >> 8);
  }
  for (const auto &kernel : exact.package.kernels) {
    SCOPED_TRACE(kernel->name());
    std::vector<uint8_t> output(pitch(cols, ::ipu::ElementType::F16));
    run(*kernel, 1, cols, inputs, output);
    int mismatches = 0;
    for (size_t i = 0; i < pairs.size(); ++i) {
      const float in[] = {::ipu::halfToFloat(pairs[i].first),
                          ::ipu::halfToFloat(pairs[i].second)};
      float expected = ::ipu::evaluateBody(kernel->body(), in);
      uint16_t actual = halfAt(output, 2 * i);
      bool same;
      if (std::isnan(expected))
        same = (actual & 0x7C00) == 0x7C00 && (actual & 0x3FF) != 0;
      else if (expected == 0.0f)
        same = (actual & 0x7FFF) == 0; // Zero signs: see the test below.
      else
        same = actual == ::ipu::floatToHalf(expected);
      if (!same && ++mismatches <= 10)
        ADD_FAILURE() << "a 0x" << std::hex << pairs[i].first << ", b 0x"
                      << pairs[i].second << ": evaluateBody " << expected
                      << ", kernel f16 0x" << actual;
    }
    EXPECT_EQ(mismatches, 0);
  }
}

const std::string kMinMaxKernels =
    singleOpKernel("maximum32", "arith.maximumf", 2, "f32") +
    singleOpKernel("minimum32", "arith.minimumf", 2, "f32");

/// Runs a two-input f32 kernel on (a, b) pairs.
std::vector<float> runPairs(const ::ipu::ElementwiseKernel &kernel,
                            const std::vector<std::pair<float, float>> &pairs) {
  const int64_t cols = static_cast<int64_t>(pairs.size());
  std::vector<std::vector<uint8_t>> inputs(
      2, std::vector<uint8_t>(4 * pairs.size()));
  for (size_t i = 0; i < pairs.size(); ++i) {
    std::memcpy(&inputs[0][4 * i], &pairs[i].first, 4);
    std::memcpy(&inputs[1][4 * i], &pairs[i].second, 4);
  }
  std::vector<uint8_t> output(4 * pairs.size());
  run(kernel, 1, cols, inputs, output);
  std::vector<float> results(pairs.size());
  std::memcpy(results.data(), output.data(), output.size());
  return results;
}

const std::vector<std::pair<float, float>> kSignedZeros = {
    {-0.0f, 0.0f}, {0.0f, -0.0f}, {-0.0f, -0.0f}, {0.0f, 0.0f}};

TEST(KernelCodegenExactTest, GeneratedMaximumMinimumOrderSignedZeros) {
  // The generated code follows arith.maximumf / minimumf: -0 < +0.
  CompiledKernels kernels(kMinMaxKernels);
  ASSERT_TRUE(kernels.ok()) << kernels.error;
  std::vector<float> max = runPairs(kernels.kernel("maximum32"), kSignedZeros);
  std::vector<float> min = runPairs(kernels.kernel("minimum32"), kSignedZeros);
  const bool maxNegative[] = {false, false, true, false};
  const bool minNegative[] = {true, true, true, false};
  for (size_t i = 0; i < kSignedZeros.size(); ++i) {
    EXPECT_EQ(std::signbit(max[i]), maxNegative[i]) << "maximumf pair " << i;
    EXPECT_EQ(std::signbit(min[i]), minNegative[i]) << "minimumf pair " << i;
  }
}

// The host reference disagrees with the generated code on signed zeros:
// evaluateBody computes maximumf(-0, +0) as -0 and minimumf(+0, -0) as +0
// (std::max / std::min keep the first of two equal operands), the kernel
// gives +0 and -0 as arith defines. (Found by this test and fixed; it keeps it fixed.)
TEST(KernelCodegenExactTest,
     ReferenceMaximumMinimumMatchKernelOnSignedZeros) {
  CompiledKernels kernels(kMinMaxKernels);
  ASSERT_TRUE(kernels.ok()) << kernels.error;
  for (const char *name : {"maximum32", "minimum32"}) {
    const ::ipu::ElementwiseKernel &kernel = kernels.kernel(name);
    std::vector<float> results = runPairs(kernel, kSignedZeros);
    for (size_t i = 0; i < kSignedZeros.size(); ++i) {
      const float in[] = {kSignedZeros[i].first, kSignedZeros[i].second};
      EXPECT_EQ(bitsOf(::ipu::evaluateBody(kernel.body(), in)),
                bitsOf(results[i]))
          << name << " pair " << i;
    }
  }
}

//===----------------------------------------------------------------------===//
// The object: reproducible, exporting its symbols, importing nothing
//===----------------------------------------------------------------------===//

/// The section headers of an ELF64 object, by name.
std::map<std::string, Elf64_Shdr> sections(const std::vector<uint8_t> &object) {
  std::map<std::string, Elf64_Shdr> result;
  if (object.size() < sizeof(Elf64_Ehdr))
    return result;
  Elf64_Ehdr header;
  std::memcpy(&header, object.data(), sizeof(header));
  if (header.e_shoff == 0 || header.e_shentsize != sizeof(Elf64_Shdr) ||
      header.e_shoff + header.e_shnum * sizeof(Elf64_Shdr) > object.size())
    return result;
  std::vector<Elf64_Shdr> all(header.e_shnum);
  std::memcpy(all.data(), object.data() + header.e_shoff,
              all.size() * sizeof(Elf64_Shdr));
  if (header.e_shstrndx >= all.size())
    return result;
  const Elf64_Shdr &names = all[header.e_shstrndx];
  for (const Elf64_Shdr &section : all) {
    if (names.sh_offset + section.sh_name >= object.size())
      continue;
    const char *name = reinterpret_cast<const char *>(object.data()) +
                       names.sh_offset + section.sh_name;
    result[std::string(name, strnlen(name, object.size() - names.sh_offset -
                                               section.sh_name))] = section;
  }
  return result;
}

struct DynamicSymbol {
  std::string name;
  Elf64_Sym symbol;
};

std::vector<DynamicSymbol> dynamicSymbols(const std::vector<uint8_t> &object) {
  std::vector<DynamicSymbol> result;
  std::map<std::string, Elf64_Shdr> all = sections(object);
  if (!all.count(".dynsym") || !all.count(".dynstr"))
    return result;
  const Elf64_Shdr &symtab = all[".dynsym"], &strtab = all[".dynstr"];
  for (uint64_t offset = symtab.sh_offset;
       offset + sizeof(Elf64_Sym) <= symtab.sh_offset + symtab.sh_size;
       offset += sizeof(Elf64_Sym)) {
    Elf64_Sym symbol;
    std::memcpy(&symbol, object.data() + offset, sizeof(symbol));
    const char *name = reinterpret_cast<const char *>(object.data()) +
                       strtab.sh_offset + symbol.st_name;
    result.push_back({name, symbol});
  }
  return result;
}

TEST_F(KernelCodegenTest, ObjectIsReproducible) {
  // The same kernels built again, in a context of their own, give the same
  // bytes; so does the GELU module.
  CompiledKernels again(kConversionKernels, /*load=*/false);
  ASSERT_TRUE(again.ok()) << again.error;
  EXPECT_FALSE(conversions->package.kernelObject.empty());
  EXPECT_TRUE(again.package.kernelObject == conversions->package.kernelObject)
      << again.package.kernelObject.size() << " vs "
      << conversions->package.kernelObject.size() << " bytes";
  EXPECT_EQ(again.package.kernelObjectHash,
            conversions->package.kernelObjectHash);
  CompiledKernels geluAgain(kGeluKernel, /*load=*/false);
  ASSERT_TRUE(geluAgain.ok()) << geluAgain.error;
  EXPECT_TRUE(geluAgain.package.kernelObject == gelu->package.kernelObject);
  // Different kernels give a different object.
  EXPECT_FALSE(geluAgain.package.kernelObject == again.package.kernelObject);
}

TEST_F(KernelCodegenTest, ObjectExportsEverySymbolAndImportsNothing) {
  const std::vector<uint8_t> &object = conversions->package.kernelObject;
  ASSERT_GE(object.size(), sizeof(Elf64_Ehdr));
  Elf64_Ehdr header;
  std::memcpy(&header, object.data(), sizeof(header));
  EXPECT_EQ(header.e_type, ET_DYN);
  EXPECT_EQ(header.e_machine, EM_X86_64);
  std::vector<DynamicSymbol> symbols = dynamicSymbols(object);
  ASSERT_FALSE(symbols.empty());
  std::set<std::string> exported;
  for (size_t i = 1; i < symbols.size(); ++i) { // Entry 0 is the null symbol.
    const DynamicSymbol &s = symbols[i];
    // -z defs and no C library: every dynamic symbol is defined here.
    EXPECT_NE(s.symbol.st_shndx, SHN_UNDEF) << "imports '" << s.name << "'";
    if (ELF64_ST_TYPE(s.symbol.st_info) == STT_FUNC &&
        ELF64_ST_BIND(s.symbol.st_info) == STB_GLOBAL)
      exported.insert(s.name);
  }
  EXPECT_EQ(conversions->kernelCount, conversions->package.kernels.size());
  for (const auto &kernel : conversions->package.kernels) {
    EXPECT_TRUE(exported.count(kernel->symbol()))
        << kernel->name() << ": " << kernel->symbol() << " is not exported";
    EXPECT_NE(kernel->entry, nullptr) << kernel->name();
    EXPECT_EQ(kernel->symbol(), ::ipu::elementwiseSymbol(kernel->body()));
  }
  EXPECT_EQ(exported.size(), conversions->package.kernels.size());
  // The sections a loaded object needs, and nothing asking for an
  // executable stack or an interpreter.
  std::map<std::string, Elf64_Shdr> all = sections(object);
  EXPECT_TRUE(all.count(".text"));
  EXPECT_FALSE(all.count(".interp"));
}

//===----------------------------------------------------------------------===//
// A tampered object
//===----------------------------------------------------------------------===//

/// What a child process saw when it loaded `object` for `kernels` and ran
/// the GELU kernel on the blocks of geluBlocks().
struct TamperOutcome {
  bool exited = false; ///< The child ended normally (else: a signal).
  int signal = 0;
  bool loaded = false;
  std::string message; ///< The loader's message when it refused.
  std::vector<uint8_t> output;
};

/// GELU inputs and outputs of one block.
struct GeluBlock {
  int64_t rows, cols;
  std::vector<std::vector<uint8_t>> inputs;
  std::vector<uint8_t> output;
};

/// A 3 x 5 block (padded rows, the scalar loop) and a 4 x 100 block (the
/// vectorised loop and its remainder), so that every path of the kernel
/// runs.
std::vector<GeluBlock> geluBlocks() {
  std::vector<GeluBlock> blocks;
  for (auto [rows, cols] : {std::pair<int64_t, int64_t>{3, 5}, {4, 100}}) {
    const size_t rowPitch = pitch(cols, ::ipu::ElementType::F16);
    GeluBlock block{rows, cols, {}, {}};
    block.inputs.resize(2);
    block.inputs[0].assign(rows * rowPitch, 0);
    block.inputs[1].assign(rowPitch, 0);
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c)
        putHalf(block.inputs[0], r * rowPitch + 2 * c,
                -4.0f +
                    8.0f * static_cast<float>(r * cols + c) / (rows * cols));
    for (int64_t c = 0; c < cols; ++c)
      putHalf(block.inputs[1], 2 * c, 0.01f * c);
    block.output.assign(rows * rowPitch, 0xA5);
    blocks.push_back(std::move(block));
  }
  return blocks;
}

/// Loads and runs in a child, so that code that faults cannot take the
/// test binary down with it.
TamperOutcome loadAndRunInChild(const ::ipu::Package &original,
                                const std::vector<uint8_t> &object) {
  TamperOutcome outcome;
  int fds[2];
  if (pipe(fds) != 0) {
    ADD_FAILURE() << "pipe failed";
    return outcome;
  }
  fflush(nullptr);
  pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    ::ipu::Package package;
    for (const auto &kernel : original.kernels)
      package.kernels.push_back(std::make_shared<::ipu::ElementwiseKernel>(
          kernel->name(), kernel->symbol(), kernel->body()));
    package.kernelObject = object;
    package.kernelAbiVersion = original.kernelAbiVersion;
    package.kernelObjectHash = ::ipu::fnv1a64(object.data(), object.size());
    ::ipu::LoadedKernels loaded;
    std::string reply;
    if (std::optional<std::string> error = loaded.load(package)) {
      reply = "E" + *error;
    } else {
      reply = "O";
      for (GeluBlock &block : geluBlocks()) {
        uint8_t *operands[] = {block.inputs[0].data(), block.inputs[1].data(),
                               block.output.data()};
        const int64_t params[] = {block.rows, block.cols};
        package.kernels.front()->entry(operands, params);
        reply += std::string(block.output.begin(), block.output.end());
      }
    }
    size_t written = 0;
    while (written < reply.size()) {
      ssize_t n = write(fds[1], reply.data() + written, reply.size() - written);
      if (n <= 0)
        break;
      written += static_cast<size_t>(n);
    }
    _exit(0);
  }
  close(fds[1]);
  std::string reply;
  char buffer[4096];
  ssize_t n;
  while ((n = read(fds[0], buffer, sizeof(buffer))) > 0)
    reply.append(buffer, static_cast<size_t>(n));
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  outcome.exited =
      WIFEXITED(status) && WEXITSTATUS(status) == 0 && !reply.empty();
  outcome.signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
  if (!outcome.exited)
    return outcome;
  outcome.loaded = reply[0] == 'O';
  if (outcome.loaded)
    outcome.output.assign(reply.begin() + 1, reply.end());
  else
    outcome.message = reply.substr(1);
  return outcome;
}

/// The file range of the object's .text section.
bool textRange(const std::vector<uint8_t> &object, size_t &offset,
               size_t &size) {
  std::map<std::string, Elf64_Shdr> all = sections(object);
  if (!all.count(".text"))
    return false;
  offset = all[".text"].sh_offset;
  size = all[".text"].sh_size;
  return size > 64 && offset + size <= object.size();
}

/// The object with 8 bytes in the middle of .text inverted.
std::vector<uint8_t> invertMiddleOfText(const std::vector<uint8_t> &object) {
  size_t offset = 0, size = 0;
  std::vector<uint8_t> tampered = object;
  if (!textRange(object, offset, size))
    return tampered;
  const size_t middle = offset + size / 2;
  for (size_t i = middle - 4; i < middle + 4; ++i)
    tampered[i] ^= 0xFF;
  return tampered;
}

TEST_F(KernelCodegenTest, TamperedObjectIsCaughtByThePackageHash) {
  // A package altered on disk keeps the hash of the object it was built
  // with: validatePackage, which runs before LoadedKernels, refuses it.
  const std::vector<uint8_t> tampered =
      invertMiddleOfText(gelu->package.kernelObject);
  ASSERT_FALSE(tampered == gelu->package.kernelObject);
  const ::ipu::TargetModel target = ::ipu::TargetModel::ipu21WithTiles(4);
  ::ipu::Package package;
  package.target = target.name;
  package.tiles = target.tiles;
  package.kernels = gelu->package.kernels;
  package.kernelObject = gelu->package.kernelObject;
  package.kernelAbiVersion = gelu->package.kernelAbiVersion;
  package.kernelObjectHash = gelu->package.kernelObjectHash;
  EXPECT_EQ(::ipu::validatePackage(package, target), std::nullopt);
  package.kernelObject = tampered;
  std::optional<std::string> error = ::ipu::validatePackage(package, target);
  ASSERT_TRUE(error);
  EXPECT_NE(error->find("kernel object (" + std::to_string(tampered.size()) +
                        " bytes) has hash"),
            std::string::npos)
      << *error;
  EXPECT_NE(error->find("it was altered"), std::string::npos) << *error;
}

/// The untampered GELU object's values on geluBlocks(), run in a child too.
const TamperOutcome &cleanGeluOutcome(const ::ipu::Package &package) {
  static const TamperOutcome outcome =
      loadAndRunInChild(package, package.kernelObject);
  return outcome;
}

TEST_F(KernelCodegenTest, TamperedObjectFailsOrComputesOtherValues) {
  // Past the hash (a package whose hash was recomputed for the altered
  // bytes), LoadedKernels checks only the ELF header, so a change inside
  // .text loads. The middle of .text is the GELU's vectorised loop, which
  // the 4 x 100 block runs: one bit changed in its vmulps makes it a
  // vaddps, which decodes and computes other values. (Inverting bytes
  // there instead faults: see the next test.)
  const TamperOutcome &clean = cleanGeluOutcome(gelu->package);
  ASSERT_TRUE(clean.exited) << "signal " << clean.signal;
  ASSERT_TRUE(clean.loaded) << clean.message;

  const std::vector<uint8_t> &object = gelu->package.kernelObject;
  size_t offset = 0, size = 0;
  ASSERT_TRUE(textRange(object, offset, size));
  // The register-to-register vmulps (VEX.0F 59 /r, no SIMD prefix) that
  // starts nearest the middle of .text.
  auto vmulpsAt = [&](size_t i) -> std::optional<size_t> {
    if (object[i] == 0xC5 && i + 3 < offset + size &&
        (object[i + 1] & 3) == 0 && object[i + 2] == 0x59 &&
        object[i + 3] >= 0xC0)
      return i + 2;
    if (object[i] == 0xC4 && i + 4 < offset + size &&
        (object[i + 1] & 0x1F) == 1 && (object[i + 2] & 3) == 0 &&
        object[i + 3] == 0x59 && object[i + 4] >= 0xC0)
      return i + 3;
    return std::nullopt;
  };
  const size_t middle = offset + size / 2;
  std::optional<size_t> opcode;
  for (size_t distance = 0; !opcode && distance < size / 2; ++distance) {
    if (middle + distance < offset + size)
      opcode = vmulpsAt(middle + distance);
    if (!opcode && middle >= offset + distance)
      opcode = vmulpsAt(middle - distance);
  }
  ASSERT_TRUE(opcode) << "no vmulps in .text";
  std::vector<uint8_t> tampered = object;
  tampered[*opcode] ^= 0x01; // 0x59 vmulps -> 0x58 vaddps.

  TamperOutcome outcome = loadAndRunInChild(gelu->package, tampered);
  RecordProperty("outcome", !outcome.exited
                                ? "signal " + std::to_string(outcome.signal)
                            : outcome.loaded ? std::string("loaded")
                                             : "refused: " + outcome.message);
  ASSERT_TRUE(outcome.exited)
      << "the tampered kernel died of signal " << outcome.signal;
  if (!outcome.loaded) {
    EXPECT_NE(outcome.message.find("kernel object"), std::string::npos)
        << outcome.message;
  } else {
    ASSERT_EQ(outcome.output.size(), clean.output.size());
    EXPECT_FALSE(outcome.output == clean.output)
        << "the tampered object computes the same values";
  }
}

TEST_F(KernelCodegenTest, InvertedBytesInTheMiddleOfTextNeverPassUnnoticed) {
  // Inverting 8 bytes in the middle of .text (the vectorised loop): the
  // object still loads (nothing but the header is checked past the hash)
  // and the altered code faults (SIGILL today) or computes other values;
  // the one outcome that must not happen is the original values.
  const TamperOutcome &clean = cleanGeluOutcome(gelu->package);
  ASSERT_TRUE(clean.exited && clean.loaded);
  const std::vector<uint8_t> tampered =
      invertMiddleOfText(gelu->package.kernelObject);
  TamperOutcome outcome = loadAndRunInChild(gelu->package, tampered);
  RecordProperty("outcome", !outcome.exited
                                ? "signal " + std::to_string(outcome.signal)
                            : outcome.loaded ? std::string("loaded")
                                             : "refused: " + outcome.message);
  if (!outcome.exited) {
    EXPECT_NE(outcome.signal, 0);
    return;
  }
  if (!outcome.loaded)
    EXPECT_NE(outcome.message.find("kernel object"), std::string::npos)
        << outcome.message;
  else
    EXPECT_FALSE(outcome.output == clean.output)
        << "the tampered object computes the same values";
}

TEST_F(KernelCodegenTest, CorruptHeaderIsRefusedWithAMessage) {
  // Bytes that are no x86-64 ELF shared object never reach dlopen.
  std::vector<uint8_t> object = gelu->package.kernelObject;
  object[18] = 0xB7; // e_machine: AArch64.
  TamperOutcome outcome = loadAndRunInChild(gelu->package, object);
  ASSERT_TRUE(outcome.exited) << "signal " << outcome.signal;
  EXPECT_FALSE(outcome.loaded);
  EXPECT_NE(outcome.message.find("not an x86-64 ELF shared object"),
            std::string::npos)
      << outcome.message;
  // A truncated object: the dynamic loader refuses it.
  std::vector<uint8_t> truncated(gelu->package.kernelObject.begin(),
                                 gelu->package.kernelObject.begin() + 200);
  outcome = loadAndRunInChild(gelu->package, truncated);
  ASSERT_TRUE(outcome.exited) << "signal " << outcome.signal;
  EXPECT_FALSE(outcome.loaded);
  EXPECT_NE(outcome.message.find("kernel object (200 bytes)"),
            std::string::npos)
      << outcome.message;
}

TEST_F(KernelCodegenTest, MissingSymbolNamesTheKernel) {
  // A package whose kernel names a symbol the object does not export.
  ::ipu::Package package;
  ::ipu::ElementwiseBody body = gelu->kernel("gelu").body();
  package.kernels.push_back(std::make_shared<::ipu::ElementwiseKernel>(
      "renamed", "ipu_ew_0000000000000000", body));
  package.kernelObject = gelu->package.kernelObject;
  package.kernelAbiVersion = ::ipu::kKernelAbiVersion;
  package.kernelObjectHash = gelu->package.kernelObjectHash;
  ::ipu::LoadedKernels loaded;
  std::optional<std::string> error = loaded.load(package);
  ASSERT_TRUE(error);
  EXPECT_NE(
      error->find("kernel 'renamed' needs symbol 'ipu_ew_0000000000000000', "
                  "which it does not export"),
      std::string::npos)
      << *error;
}

//===----------------------------------------------------------------------===//
// Every body op the verifier accepts builds, links and loads
//===----------------------------------------------------------------------===//


struct OpCase {
  const char *op;
  unsigned arity;
};
const OpCase kArithmeticOps[] = {
    {"arith.addf", 2},     {"arith.subf", 2},    {"arith.mulf", 2},
    {"arith.divf", 2},     {"arith.negf", 1},    {"arith.maximumf", 2},
    {"arith.minimumf", 2}, {"arith.maxnumf", 2}, {"arith.minnumf", 2},
    {"math.absf", 1},      {"math.exp", 1},      {"math.log", 1},
    {"math.tanh", 1},      {"math.erf", 1},      {"math.sqrt", 1},
    {"math.rsqrt", 1},     {"math.fma", 3},      {"math.powf", 2}};

bool linksInF16(const std::string &) { return true; }

TEST(KernelCodegenOpsTest, EveryArithmeticOpBuildsLinksAndLoads) {
  // One object of every op in f32 and f16 (two inputs differ, so nothing
  // folds away): LLD links it with -z defs, so a libm call would fail here.
  std::string kernels;
  unsigned count = 0;
  for (const char *type : {"f32", "f16"})
    for (const OpCase &c : kArithmeticOps) {
      if (std::string(type) == "f16" && !linksInF16(c.op))
        continue;
      kernels +=
          singleOpKernel("k" + std::to_string(count++), c.op, c.arity, type);
    }
  CompiledKernels compiled(kernels);
  ASSERT_TRUE(compiled.ok()) << compiled.error;
  ASSERT_EQ(compiled.package.kernels.size(), count);
  for (const auto &kernel : compiled.package.kernels)
    EXPECT_NE(kernel->entry, nullptr) << kernel->name();
}

// arith.maxnumf and arith.minnumf are body ops (Elementwise.h, verifyBody
// accepts them in f16), but an f16 kernel of either does not link: LLVM
// lowers the f16 llvm.maxnum / llvm.minnum to calls to fmaxf / fminf, and
// LLD (-z defs, no C library) refuses the object: "linking the kernel
// object: LLD failed: ld.lld: error: undefined symbol: fmaxf" (fminf). An
// f32 maxnumf between an extf from f16 and a truncf back fails the same
// way (LLVM narrows it to the f16 op). (Found by this test and fixed; it keeps it fixed.)
TEST(KernelCodegenOpsTest, MaxNumMinNumLinkInF16) {
  for (const char *op : {"arith.maxnumf", "arith.minnumf"}) {
    CompiledKernels compiled(singleOpKernel("k", op, 2, "f16"));
    EXPECT_TRUE(compiled.ok()) << op << ": " << compiled.error;
    CompiledKernels widened(std::string(R"mlir(
    ipu_tile.kernel @k broadcasts ["full", "full"] {
    ^bb0(%a: f16, %b: f16):
      %x = arith.extf %a : f16 to f32
      %y = arith.extf %b : f16 to f32
      %m = )mlir") + op + R"mlir( %x, %y : f32
      %r = arith.truncf %m : f32 to f16
      ipu_tile.yield %r : f16
    }
)mlir");
    EXPECT_TRUE(widened.ok())
        << op << " in f32 between f16 casts: " << widened.error;
  }
}

/// Runs the one kernel of `compiled` on single elements: inputs[i][j] is
/// input i of element j.
std::vector<float> runElements(const CompiledKernels &compiled,
                               const std::vector<std::vector<float>> &inputs) {
  const ::ipu::ElementwiseKernel &kernel = *compiled.package.kernels.front();
  const ::ipu::ElementType type = kernel.body().resultType;
  const unsigned bytes = ::ipu::elementBytes(type);
  const int64_t cols = static_cast<int64_t>(inputs.front().size());
  std::vector<std::vector<uint8_t>> blocks;
  for (size_t i = 0; i < inputs.size(); ++i) {
    blocks.emplace_back(pitch(cols, kernel.body().inputs[i].type));
    for (int64_t j = 0; j < cols; ++j)
      ::ipu::storeElement(
          kernel.body().inputs[i].type, inputs[i][j],
          &blocks
               .back()[j * ::ipu::elementBytes(kernel.body().inputs[i].type)]);
  }
  std::vector<uint8_t> output(pitch(cols, type));
  run(kernel, 1, cols, blocks, output);
  std::vector<float> results(cols);
  for (int64_t j = 0; j < cols; ++j)
    results[j] = ::ipu::loadElement(type, &output[j * bytes]);
  return results;
}

/// evaluateBody of the one kernel of `compiled` on element j of `inputs`.
float reference(const CompiledKernels &compiled,
                const std::vector<std::vector<float>> &inputs, size_t j) {
  float element[3] = {0, 0, 0};
  for (size_t i = 0; i < inputs.size(); ++i)
    element[i] = inputs[i][j];
  return ::ipu::evaluateBody(compiled.package.kernels.front()->body(), element);
}

// math.fma is one rounding (evaluateBody: a * b + c exact, then rounded),
// but buildKernelObject's math::populateExpansionPatterns rewrites it into
// mulf + addf, two roundings:
//   f32 fma(1 + 2^-12, 1 + 2^-12, -(1 + 2^-11)): expected 2^-24 (5.96e-8),
//   kernel 0 (the product rounds to 1 + 2^-11 first);
//   f16 fma(1 + 2^-6, 1 + 2^-6, -(1 + 2^-5)): expected 2^-12, kernel 0;
//   f16 fma(256, 256, -65504): expected 32, kernel inf (256 x 256 = 65536
//   overflows f16 before the add).
// (Found by this test and fixed; it keeps it fixed.)
TEST(KernelCodegenOpsTest, FmaRoundsOnce) {
  for (const char *type : {"f32", "f16"}) {
    CompiledKernels compiled(singleOpKernel("fma", "math.fma", 3, type));
    ASSERT_TRUE(compiled.ok()) << compiled.error;
    const bool half = std::string(type) == "f16";
    const float a =
        half ? 1.0f + std::ldexp(1.0f, -6) : 1.0f + std::ldexp(1.0f, -12);
    const float c =
        half ? -(1.0f + std::ldexp(1.0f, -5)) : -(1.0f + std::ldexp(1.0f, -11));
    std::vector<std::vector<float>> inputs = {{a}, {a}, {c}};
    if (half) {
      inputs[0].push_back(256.0f);
      inputs[1].push_back(256.0f);
      inputs[2].push_back(-65504.0f);
    }
    std::vector<float> results = runElements(compiled, inputs);
    for (size_t j = 0; j < results.size(); ++j)
      EXPECT_EQ(results[j], reference(compiled, inputs, j))
          << type << " element " << j;
    EXPECT_EQ(reference(compiled, inputs, 0),
              half ? std::ldexp(1.0f, -12) : std::ldexp(1.0f, -24));
  }
}

// math.powf is expanded to exp(b * log(a)): a negative base gives NaN where
// evaluateBody (std::pow) gives a real power for an integral exponent, and
// a zero exponent gives NaN for a = 0 or inf (0 x -inf, 0 x inf) where pow
// gives 1:
//   f32 powf(-2, 2): expected 4, kernel NaN;  powf(-2, 3): expected -8;
//   powf(0, 0) and powf(inf, 0): expected 1, kernel NaN.
// (Found by this test and fixed; it keeps it fixed.)
TEST(KernelCodegenOpsTest,
     PowfMatchesPowOnNegativeBasesAndZeroExponents) {
  CompiledKernels compiled(singleOpKernel("pow", "math.powf", 2, "f32"));
  ASSERT_TRUE(compiled.ok()) << compiled.error;
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<std::vector<float>> inputs = {{-2.0f, -2.0f, 0.0f, inf},
                                            {2.0f, 3.0f, 0.0f, 0.0f}};
  std::vector<float> results = runElements(compiled, inputs);
  const float expected[] = {4.0f, -8.0f, 1.0f, 1.0f};
  for (size_t j = 0; j < results.size(); ++j) {
    EXPECT_EQ(reference(compiled, inputs, j), expected[j]);
    EXPECT_EQ(results[j], expected[j])
        << "powf(" << inputs[0][j] << ", " << inputs[1][j] << ")";
  }
}

// math.log's f32 polynomial treats an f32 subnormal as the smallest normal:
// log(1e-40) is -92.1034 (evaluateBody, the C library), the kernel gives
// -87.3365 = log(FLT_MIN). ipu-run's f32 tolerance (1e-5 absolute and
// relative) refuses the difference. (Found by this test and fixed; it keeps it fixed.)
TEST(KernelCodegenOpsTest, LogOfF32Subnormals) {
  CompiledKernels compiled(singleOpKernel("log", "math.log", 1, "f32"));
  ASSERT_TRUE(compiled.ok()) << compiled.error;
  std::vector<std::vector<float>> inputs = {
      {1e-40f, std::numeric_limits<float>::denorm_min(), 1e-39f}};
  std::vector<float> results = runElements(compiled, inputs);
  for (size_t j = 0; j < results.size(); ++j) {
    float expected = reference(compiled, inputs, j);
    EXPECT_NEAR(results[j], expected, 1e-5 * std::fabs(expected))
        << "log(" << inputs[0][j] << ")";
  }
}

} // namespace
