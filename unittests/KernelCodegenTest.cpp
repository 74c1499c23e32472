//===- KernelCodegenTest.cpp - Generated kernels, compiled and run --------===//
//
// Parses ipu_tile.kernel ops from text, takes their bodies as a package
// carries them, compiles them with compileKernelObject (MLIR's LLVM
// conversions, LLVM's x86-64 back end, LLD), loads them as ipu-run does
// (TestKernels: compiled from the bodies, memfd + dlopen) and calls
// each kernel's entry on host buffers. The f8 conversions of the
// generated code must equal ElementType.cpp's bit for bit; a fused GELU must
// stay within an f16 ulp of evaluateBody and leave row padding alone; the
// object must be reproducible, export its symbols and import nothing.
//
//===----------------------------------------------------------------------===//

#include "IPU/KernelCompiler/KernelCompiler.h"
#include "IPU/Device/Elementwise.h"
#include "IPU/Dialect/Tile/IR/Tile.h"
#include "IPU/Package/Package.h"
#include "IPU/Support/ElementType.h"
#include "IPU/Target/TargetModel.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <elf.h>
#include <functional>
#include <sys/stat.h>
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

uint32_t bitsOf(float value) { return ipu::floatBits(value); }
float floatOf(uint32_t bits) { return ipu::bitsFloat(bits); }

/// Row pitch of a block: rows padded to 32-bit words.
size_t pitch(int64_t cols, ipu::ElementType type) {
  return (static_cast<size_t>(cols) * ipu::elementBytes(type) + 3) / 4 * 4;
}

/// A module of kernels compiled into one kernel object and loaded.
class TestKernels {
public:
  /// Parses `programBody` (ipu_tile.kernel ops) into a program, builds the
  /// kernel object and, when `load` is set, loads it. A failure clears
  /// ok() and leaves its diagnostics in `error`.
  explicit TestKernels(const std::string &programBody, bool load = true)
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
      FailureOr<std::unique_ptr<ipu::ElementwiseKernel>> built =
          kernel.buildKernel();
      if (failed(built)) {
        error = "buildKernel failed:\n" + error;
        return;
      }
      package.kernels.push_back(
          std::shared_ptr<ipu::ElementwiseKernel>(std::move(*built)));
    }
    std::vector<const ipu::ElementwiseBody *> bodies;
    for (const auto &kernel : package.kernels)
      bodies.push_back(&kernel->body());
    ipu::KernelCompileStats stats;
    if (std::optional<std::string> failure =
            ipu::compileKernelObject(bodies, object, stats)) {
      error = "compileKernelObject failed: " + *failure;
      return;
    }
    package.kernelAbiVersion = ipu::kKernelAbiVersion;
    kernelCount = stats.kernels;
    if (load) {
      loaded = std::make_unique<ipu::CompiledKernels>();
      if (std::optional<std::string> failure = loaded->load(package, "", stats)) {
        error = "load failed: " + *failure;
        return;
      }
    }
    good = true;
  }

  bool ok() const { return good; }

  const ipu::ElementwiseKernel &kernel(const std::string &name) const {
    for (const auto &kernel : package.kernels)
      if (kernel->name() == name)
        return *kernel;
    ADD_FAILURE() << "no kernel " << name;
    return *package.kernels.front();
  }

  MLIRContext context;
  OwningOpRef<ModuleOp> module;
  ipu::Package package;
  std::vector<uint8_t> object; ///< What compileKernelObject made.
  std::unique_ptr<ipu::CompiledKernels> loaded;
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
void run(const ipu::ElementwiseKernel &kernel, int64_t rows, int64_t cols,
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
std::vector<uint8_t> runRow(const ipu::ElementwiseKernel &kernel,
                            const std::vector<uint8_t> &inputBytes,
                            int64_t cols, ipu::ElementType outType) {
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
    conversions = new TestKernels(kConversionKernels);
    gelu = new TestKernels(kGeluKernel);
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
  static TestKernels *conversions, *gelu;
};
TestKernels *KernelCodegenTest::conversions = nullptr;
TestKernels *KernelCodegenTest::gelu = nullptr;

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
  for (const Case &c : {Case{"dec_e4m3", ipu::f8E4M3FNToFloat},
                        Case{"dec_e5m2", ipu::f8E5M2ToFloat}}) {
    SCOPED_TRACE(c.kernel);
    std::vector<uint8_t> out = runRow(conversions->kernel(c.kernel), codes, 256,
                                      ipu::ElementType::F32);
    int mismatches = 0;
    for (unsigned code = 0; code < 256; ++code) {
      float actual =
          ipu::loadElement(ipu::ElementType::F32, &out[4 * code]);
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
  for (const Case &c : {Case{"dec_e4m3_f16", ipu::f8E4M3FNToFloat},
                        Case{"dec_e5m2_f16", ipu::f8E5M2ToFloat}}) {
    SCOPED_TRACE(c.kernel);
    std::vector<uint8_t> out = runRow(conversions->kernel(c.kernel), codes, 256,
                                      ipu::ElementType::F16);
    int mismatches = 0;
    for (unsigned code = 0; code < 256; ++code) {
      uint16_t actual =
          static_cast<uint16_t>(out[2 * code] | (out[2 * code + 1] << 8));
      float reference = c.reference(static_cast<uint8_t>(code));
      uint16_t expected = ipu::floatToHalf(reference);
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
    values.push_back(ipu::halfToFloat(static_cast<uint16_t>(h)));
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
       {ipu::f8E4M3FNToFloat, ipu::f8E5M2ToFloat}) {
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
    ipu::ElementType type;
  };
  for (const Case &c :
       {Case{"enc_e4m3", ipu::floatToF8E4M3FN, ipu::ElementType::F8E4M3FN},
        Case{"enc_e5m2", ipu::floatToF8E5M2, ipu::ElementType::F8E5M2}}) {
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
    ipu::ElementType type;
  };
  for (const Case &c :
       {Case{"enc_e4m3", ipu::floatToF8E4M3FN, ipu::ElementType::F8E4M3FN},
        Case{"enc_e5m2", ipu::floatToF8E5M2, ipu::ElementType::F8E5M2}}) {
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
    ipu::ElementType type;
  };
  for (const Case &c : {Case{"enc_e4m3_f16", ipu::floatToF8E4M3FN,
                             ipu::ElementType::F8E4M3FN},
                        Case{"enc_e5m2_f16", ipu::floatToF8E5M2,
                             ipu::ElementType::F8E5M2}}) {
    SCOPED_TRACE(c.kernel);
    std::vector<uint8_t> out =
        runRow(conversions->kernel(c.kernel), halves, 65536, c.type);
    int mismatches = 0;
    for (uint32_t h = 0; h < 65536; ++h) {
      uint8_t expected =
          c.reference(ipu::halfToFloat(static_cast<uint16_t>(h)));
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
  ipu::storeElement(ipu::ElementType::F16, value, &bytes[offset]);
}

TEST_F(KernelCodegenTest, GeluTanhF16RowBiasPaddedRows) {
  constexpr int64_t rows = 3, cols = 5;
  constexpr size_t rowPitch = 12; // 5 f16 = 10 bytes, padded to 12.
  ASSERT_EQ(pitch(cols, ipu::ElementType::F16), rowPitch);
  constexpr uint8_t canary = 0xA5;
  constexpr size_t guard = 16;
  const ipu::ElementwiseKernel &kernel = gelu->kernel("gelu");
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
          ipu::loadElement(ipu::ElementType::F16,
                             &inputs[0][r * rowPitch + 2 * c]),
          ipu::loadElement(ipu::ElementType::F16, &inputs[1][2 * c])};
      const uint16_t expected =
          ipu::floatToHalf(ipu::evaluateBody(kernel.body(), in));
      const uint16_t actual = halfAt(output, r * rowPitch + 2 * c);
      EXPECT_LE(std::abs(orderedHalf(expected) - orderedHalf(actual)), 1)
          << "element (" << r << ", " << c << "), x = " << in[0]
          << ", b = " << in[1] << ": evaluateBody "
          << ipu::halfToFloat(expected) << ", kernel "
          << ipu::halfToFloat(actual);
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
  const ipu::ElementwiseKernel &kernel = gelu->kernel("gelu");
  std::vector<float> xs;
  for (uint32_t h = 0; h < 65536; ++h) {
    float x = ipu::halfToFloat(static_cast<uint16_t>(h));
    if (std::isfinite(x))
      xs.push_back(x);
  }
  const int64_t cols = static_cast<int64_t>(xs.size());
  std::vector<std::vector<uint8_t>> inputs(2);
  inputs[0].assign(pitch(cols, ipu::ElementType::F16), 0);
  inputs[1].assign(pitch(cols, ipu::ElementType::F16), 0);
  for (size_t i = 0; i < xs.size(); ++i)
    putHalf(inputs[0], 2 * i, xs[i]);
  std::vector<uint8_t> output(pitch(cols, ipu::ElementType::F16), 0xA5);
  run(kernel, 1, cols, inputs, output);
  int far = 0, offByMoreThanOneUlp = 0;
  for (size_t i = 0; i < xs.size(); ++i) {
    const float in[] = {xs[i], 0.0f};
    float expected = ipu::evaluateBody(kernel.body(), in);
    uint16_t actualBits = halfAt(output, 2 * i);
    float actual = ipu::halfToFloat(actualBits);
    if (std::isnan(expected) || std::isnan(actual)) {
      // Past the f16 range y^3 overflows: inf * 0 style NaNs must agree.
      EXPECT_EQ(std::isnan(expected), std::isnan(actual)) << "x = " << xs[i];
      continue;
    }
    if (std::abs(orderedHalf(ipu::floatToHalf(expected)) -
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
  TestKernels exact(exactKernels());
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
      2, std::vector<uint8_t>(pitch(cols, ipu::ElementType::F16)));
  for (size_t i = 0; i < pairs.size(); ++i) {
    inputs[0][2 * i] = static_cast<uint8_t>(pairs[i].first);
    inputs[0][2 * i + 1] = static_cast<uint8_t>(pairs[i].first >> 8);
    inputs[1][2 * i] = static_cast<uint8_t>(pairs[i].second);
    inputs[1][2 * i + 1] = static_cast<uint8_t>(pairs[i].second >> 8);
  }
  for (const auto &kernel : exact.package.kernels) {
    SCOPED_TRACE(kernel->name());
    std::vector<uint8_t> output(pitch(cols, ipu::ElementType::F16));
    run(*kernel, 1, cols, inputs, output);
    int mismatches = 0;
    for (size_t i = 0; i < pairs.size(); ++i) {
      const float in[] = {ipu::halfToFloat(pairs[i].first),
                          ipu::halfToFloat(pairs[i].second)};
      float expected = ipu::evaluateBody(kernel->body(), in);
      uint16_t actual = halfAt(output, 2 * i);
      bool same;
      if (std::isnan(expected))
        same = (actual & 0x7C00) == 0x7C00 && (actual & 0x3FF) != 0;
      else if (expected == 0.0f)
        same = (actual & 0x7FFF) == 0; // Zero signs: see the test below.
      else
        same = actual == ipu::floatToHalf(expected);
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
std::vector<float> runPairs(const ipu::ElementwiseKernel &kernel,
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
  TestKernels kernels(kMinMaxKernels);
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
  TestKernels kernels(kMinMaxKernels);
  ASSERT_TRUE(kernels.ok()) << kernels.error;
  for (const char *name : {"maximum32", "minimum32"}) {
    const ipu::ElementwiseKernel &kernel = kernels.kernel(name);
    std::vector<float> results = runPairs(kernel, kSignedZeros);
    for (size_t i = 0; i < kSignedZeros.size(); ++i) {
      const float in[] = {kSignedZeros[i].first, kSignedZeros[i].second};
      EXPECT_EQ(bitsOf(ipu::evaluateBody(kernel.body(), in)),
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
  TestKernels again(kConversionKernels, /*load=*/false);
  ASSERT_TRUE(again.ok()) << again.error;
  EXPECT_FALSE(conversions->object.empty());
  EXPECT_TRUE(again.object == conversions->object)
      << again.object.size() << " vs " << conversions->object.size() << " bytes";
  TestKernels geluAgain(kGeluKernel, /*load=*/false);
  ASSERT_TRUE(geluAgain.ok()) << geluAgain.error;
  EXPECT_TRUE(geluAgain.object == gelu->object);
  // Different kernels give a different object.
  EXPECT_FALSE(geluAgain.object == again.object);
}

TEST_F(KernelCodegenTest, ObjectExportsEverySymbolAndImportsNothing) {
  const std::vector<uint8_t> &object = conversions->object;
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
  for (size_t i = 0; i < conversions->package.kernels.size(); ++i) {
    const auto &kernel = conversions->package.kernels[i];
    EXPECT_TRUE(exported.count(ipu::compiledKernelSymbol(i)))
        << kernel->name() << ": " << ipu::compiledKernelSymbol(i)
        << " is not exported";
    EXPECT_NE(kernel->entry, nullptr) << kernel->name();
  }
  EXPECT_EQ(exported.size(), conversions->package.kernels.size());
  // The sections a loaded object needs, and nothing asking for an
  // executable stack or an interpreter.
  std::map<std::string, Elf64_Shdr> all = sections(object);
  EXPECT_TRUE(all.count(".text"));
  EXPECT_FALSE(all.count(".interp"));
}

//===----------------------------------------------------------------------===//
// The cache: keyed by every field of every body, trusted only when private
//===----------------------------------------------------------------------===//

TEST_F(KernelCodegenTest, CacheKeyChangesWithEveryFieldOfABody) {
  const ipu::ElementwiseBody &gelu16 = gelu->kernel("gelu").body();
  const std::string key = ipu::kernelCacheKey({&gelu16});
  EXPECT_EQ(key.size(), 64u);
  ipu::ElementwiseBody same = gelu16;
  EXPECT_EQ(ipu::kernelCacheKey({&same}), key);
  // One change to any field, op or operand makes another key.
  std::vector<std::function<void(ipu::ElementwiseBody &)>> changes = {
      [](auto &b) { b.inputs[1].broadcast = ipu::Broadcast::Scalar; },
      [](auto &b) { b.inputs[0].type = ipu::ElementType::F32; },
      [](auto &b) { b.ops[0].constant = 0.5; },
      [](auto &b) { b.ops[4].kind = ipu::BodyOpKind::SubF; },
      [](auto &b) { b.ops[5].operands[1] = 2; },
      [](auto &b) { b.ops[5].type = ipu::ElementType::F32; },
      [](auto &b) { b.ops[5].predicate = 1; },
      [](auto &b) { b.result = 3; },
      [](auto &b) { b.resultType = ipu::ElementType::F32; },
      [](auto &b) { b.reduction = ipu::RowReduction::Add; },
      [](auto &b) { b.init = 1.0; },
  };
  std::set<std::string> keys = {key};
  for (size_t c = 0; c < changes.size(); ++c) {
    ipu::ElementwiseBody changed = gelu16;
    changes[c](changed);
    EXPECT_TRUE(keys.insert(ipu::kernelCacheKey({&changed})).second)
        << "change " << c << " keeps a key seen before";
  }
  // Order and count matter too.
  const ipu::ElementwiseBody &other = conversions->kernel("dec_e4m3").body();
  EXPECT_NE(ipu::kernelCacheKey({&gelu16, &other}),
            ipu::kernelCacheKey({&other, &gelu16}));
  EXPECT_NE(ipu::kernelCacheKey({&gelu16, &gelu16}), key);
}

/// The GELU kernel's output blocks on a 3 x 5 block (padded rows, the
/// scalar loop) and a 4 x 100 block (the vectorised loop and its remainder).
using GeluBlockOutputs = std::vector<std::vector<uint8_t>>;
GeluBlockOutputs geluOutputs(const ipu::ElementwiseKernel &kernel) {
  GeluBlockOutputs outputs;
  for (auto [rows, cols] : {std::pair<int64_t, int64_t>{3, 5}, {4, 100}}) {
    const size_t rowPitch = pitch(cols, ipu::ElementType::F16);
    std::vector<std::vector<uint8_t>> inputs(2);
    inputs[0].assign(rows * rowPitch, 0);
    inputs[1].assign(rowPitch, 0);
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c)
        putHalf(inputs[0], r * rowPitch + 2 * c,
                -4.0f + 8.0f * static_cast<float>(r * cols + c) / (rows * cols));
    for (int64_t c = 0; c < cols; ++c)
      putHalf(inputs[1], 2 * c, 0.01f * c);
    std::vector<uint8_t> output(rows * rowPitch, 0xA5);
    run(kernel, rows, cols, inputs, output);
    outputs.push_back(std::move(output));
  }
  return outputs;
}

/// A fresh directory under the test's temporary directory, removed with
/// everything in it when the test ends.
struct ScratchDirectory {
  explicit ScratchDirectory(const std::string &name)
      : path(::testing::TempDir() + "ipu-kernel-cache-" + std::to_string(getpid()) +
             "-" + name) {
    remove();
  }
  ~ScratchDirectory() { remove(); }
  void remove() const {
    std::string command = "rm -rf '" + path + "'";
    EXPECT_EQ(std::system(command.c_str()), 0);
  }
  const std::string path;
};

/// A package of the GELU kernel alone, as ipu-run would read it.
ipu::Package geluPackage(const TestKernels &gelu) {
  ipu::Package package;
  package.kernelAbiVersion = ipu::kKernelAbiVersion;
  const ipu::ElementwiseKernel &kernel = gelu.kernel("gelu");
  package.kernels.push_back(std::make_shared<ipu::ElementwiseKernel>(
      kernel.name(), kernel.symbol(), kernel.body()));
  return package;
}

TEST_F(KernelCodegenTest, CacheEntryIsReusedAndHoldsTheCompiledBodies) {
  const ScratchDirectory scratch("reuse");
  const std::string &directory = scratch.path;
  ipu::KernelCompileStats stats;
  ipu::Package first = geluPackage(*gelu);
  ipu::CompiledKernels compiled;
  ASSERT_EQ(compiled.load(first, directory, stats), std::nullopt);
  EXPECT_FALSE(stats.cached);
  EXPECT_EQ(stats.cacheWarning, "");
  // The directory is created private to the user.
  struct stat info;
  ASSERT_EQ(stat(directory.c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 077, 0u);
  // The entry is the object compileKernelObject makes for the same body.
  const std::string entry =
      directory + "/" + ipu::kernelCacheKey({&first.kernels[0]->body()}) + ".so";
  std::vector<uint8_t> cachedBytes, fresh;
  {
    FILE *file = std::fopen(entry.c_str(), "rb");
    ASSERT_NE(file, nullptr) << entry;
    int c;
    while ((c = std::fgetc(file)) != EOF)
      cachedBytes.push_back(static_cast<uint8_t>(c));
    std::fclose(file);
  }
  ipu::KernelCompileStats freshStats;
  ASSERT_EQ(ipu::compileKernelObject({&first.kernels[0]->body()}, fresh, freshStats),
            std::nullopt);
  // With its size and SHA-256 in front.
  EXPECT_TRUE(cachedBytes == ipu::kernelCacheEntry(fresh));
  std::vector<uint8_t> object;
  EXPECT_EQ(ipu::kernelObjectOfCacheEntry(cachedBytes, object), std::nullopt);
  EXPECT_TRUE(object == fresh);
  // Loaded again: from the cache, and it computes what the first did.
  ipu::Package second = geluPackage(*gelu);
  ipu::CompiledKernels again;
  ASSERT_EQ(again.load(second, directory, stats), std::nullopt);
  EXPECT_TRUE(stats.cached);
  for (GeluBlockOutputs outputs : {geluOutputs(*first.kernels[0]),
                                   geluOutputs(*second.kernels[0])})
    EXPECT_TRUE(outputs == geluOutputs(gelu->kernel("gelu")));
}

TEST_F(KernelCodegenTest, CacheThatOthersMayWriteIsNeverUsed) {
  // A directory others may write: compiled without it, nothing written.
  const ScratchDirectory openScratch("open");
  const std::string &open = openScratch.path;
  ASSERT_EQ(mkdir(open.c_str(), 0777), 0);
  ASSERT_EQ(chmod(open.c_str(), 0777), 0);
  ipu::Package package = geluPackage(*gelu);
  ipu::KernelCompileStats stats;
  ipu::CompiledKernels compiled;
  ASSERT_EQ(compiled.load(package, open, stats), std::nullopt);
  EXPECT_FALSE(stats.cached);
  EXPECT_NE(stats.cacheWarning.find("not a directory of this user's"), std::string::npos)
      << stats.cacheWarning;
  EXPECT_TRUE(geluOutputs(*package.kernels[0]) == geluOutputs(gelu->kernel("gelu")));
  std::string list = "test -z \"$(ls -A '" + open + "')\"";
  EXPECT_EQ(std::system(list.c_str()), 0) << "the open directory was written";

  // An entry others may write is not trusted: planted garbage is compiled
  // over, never mapped.
  const ScratchDirectory plantedScratch("planted");
  const std::string &directory = plantedScratch.path;
  ASSERT_EQ(mkdir(directory.c_str(), 0700), 0);
  const std::string entry =
      directory + "/" + ipu::kernelCacheKey({&package.kernels[0]->body()}) + ".so";
  {
    FILE *file = std::fopen(entry.c_str(), "wb");
    ASSERT_NE(file, nullptr);
    std::fputs("not an object", file);
    std::fclose(file);
  }
  ASSERT_EQ(chmod(entry.c_str(), 0666), 0);
  ipu::Package planted = geluPackage(*gelu);
  ipu::CompiledKernels again;
  ASSERT_EQ(again.load(planted, directory, stats), std::nullopt);
  EXPECT_FALSE(stats.cached);
  EXPECT_TRUE(geluOutputs(*planted.kernels[0]) == geluOutputs(gelu->kernel("gelu")));
}

namespace {

std::vector<uint8_t> readFile(const std::string &path) {
  std::vector<uint8_t> bytes;
  FILE *file = std::fopen(path.c_str(), "rb");
  if (!file)
    return bytes;
  int c;
  while ((c = std::fgetc(file)) != EOF)
    bytes.push_back(static_cast<uint8_t>(c));
  std::fclose(file);
  return bytes;
}

void writeFile(const std::string &path, const std::vector<uint8_t> &bytes) {
  FILE *file = std::fopen(path.c_str(), "wb");
  ASSERT_NE(file, nullptr) << path;
  ASSERT_EQ(std::fwrite(bytes.data(), 1, bytes.size(), file), bytes.size());
  std::fclose(file);
}

} // namespace

TEST_F(KernelCodegenTest, DamagedCacheEntryIsCompiledAgain) {
  // A damaged entry was mapped as is (truncated to 500 bytes: a crash on
  // every run) or failed every run naming no file (0 to 100 bytes). Each
  // is now discarded with a warning that names it, compiled again and
  // rewritten whole; the kernel computes what a fresh compile does.
  const ScratchDirectory scratch("damaged");
  const std::string &directory = scratch.path;
  ipu::KernelCompileStats stats;
  {
    ipu::Package package = geluPackage(*gelu);
    ipu::CompiledKernels compiled;
    ASSERT_EQ(compiled.load(package, directory, stats), std::nullopt);
  }
  const std::string entry = directory + "/" +
                            ipu::kernelCacheKey({&gelu->kernel("gelu").body()}) + ".so";
  const std::vector<uint8_t> good = readFile(entry);
  ASSERT_GT(good.size(), 500u);
  auto truncated = [&](size_t bytes) {
    return std::vector<uint8_t>(good.begin(), good.begin() + bytes);
  };
  std::vector<std::pair<std::string, std::vector<uint8_t>>> damages = {
      {"truncated to 500 bytes", truncated(500)},
      {"empty", truncated(0)},
      {"truncated to 50 bytes", truncated(50)},
      {"the header alone", truncated(48)},
      {"a byte short", truncated(good.size() - 1)},
      {"a byte long", good},
  };
  damages.back().second.push_back(0);
  // One byte flipped in the header's size, its digest, the ELF header and
  // the code.
  for (size_t at : {size_t(9), size_t(20), size_t(48 + 4), good.size() / 2,
                    good.size() - 1}) {
    std::vector<uint8_t> flipped = good;
    flipped[at] ^= 0x40;
    damages.push_back({"byte " + std::to_string(at) + " flipped", flipped});
  }
  for (const auto &[what, bytes] : damages) {
    SCOPED_TRACE(what);
    writeFile(entry, bytes);
    ipu::Package package = geluPackage(*gelu);
    ipu::CompiledKernels compiled;
    ASSERT_EQ(compiled.load(package, directory, stats), std::nullopt);
    EXPECT_FALSE(stats.cached);
    EXPECT_NE(stats.cacheWarning.find("kernel cache entry '" + entry + "' is damaged ("),
              std::string::npos)
        << stats.cacheWarning;
    EXPECT_NE(stats.cacheWarning.find("discarding it and compiling again"),
              std::string::npos)
        << stats.cacheWarning;
    EXPECT_TRUE(geluOutputs(*package.kernels[0]) == geluOutputs(gelu->kernel("gelu")));
    // Rewritten whole: the next run takes it from the cache, silently.
    EXPECT_TRUE(readFile(entry) == good);
    ipu::Package again = geluPackage(*gelu);
    ipu::CompiledKernels cached;
    ASSERT_EQ(cached.load(again, directory, stats), std::nullopt);
    EXPECT_TRUE(stats.cached);
    EXPECT_EQ(stats.cacheWarning, "");
    EXPECT_TRUE(geluOutputs(*again.kernels[0]) == geluOutputs(gelu->kernel("gelu")));
  }
}

TEST(KernelCompileBoundTest, CostlyBodiesAreRefusedBeforeCompiling) {
  // One kernel of 1,024 chained powf took 69 s to compile: refused at
  // once, whoever calls the compiler.
  ipu::ElementwiseBody body;
  body.inputs = {{ipu::ElementType::F32, ipu::Broadcast::Full}};
  for (uint32_t i = 0; i < 1024; ++i) {
    ipu::BodyOp pow;
    pow.kind = ipu::BodyOpKind::PowF;
    pow.operands[0] = i;
    body.ops.push_back(pow);
  }
  body.result = 1024;
  ASSERT_EQ(ipu::verifyBody(body), std::nullopt);
  std::vector<uint8_t> object;
  ipu::KernelCompileStats stats;
  const auto start = std::chrono::steady_clock::now();
  std::optional<std::string> error = ipu::compileKernelObject({&body}, object, stats);
  ASSERT_TRUE(error);
  EXPECT_EQ(*error, "compiling the kernels would cost " +
                        std::to_string(ipu::kernelCompileCost(body)) +
                        " units, more than the 300000 a package may take");
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(),
            1.0);
  EXPECT_TRUE(object.empty());
}

TEST(KernelCacheEntryTest, EveryTruncationAndByteFlipIsRefused) {
  // Property: the object comes back only from the entry it was stored in.
  std::vector<uint8_t> object(300);
  for (size_t i = 0; i < object.size(); ++i)
    object[i] = static_cast<uint8_t>(i * 37 + 11);
  const std::vector<uint8_t> entry = ipu::kernelCacheEntry(object);
  std::vector<uint8_t> read;
  ASSERT_EQ(ipu::kernelObjectOfCacheEntry(entry, read), std::nullopt);
  EXPECT_TRUE(read == object);
  for (size_t size = 0; size < entry.size(); ++size) {
    std::vector<uint8_t> part(entry.begin(), entry.begin() + size);
    EXPECT_NE(ipu::kernelObjectOfCacheEntry(part, read), std::nullopt) << size;
    EXPECT_TRUE(read.empty());
  }
  for (size_t at = 0; at < entry.size(); ++at)
    for (uint8_t bit = 1; bit; bit <<= 1) {
      std::vector<uint8_t> flipped = entry;
      flipped[at] ^= bit;
      EXPECT_NE(ipu::kernelObjectOfCacheEntry(flipped, read), std::nullopt)
          << "byte " << at << " bit " << unsigned(bit);
    }
  // An empty object is an entry too.
  EXPECT_EQ(ipu::kernelObjectOfCacheEntry(ipu::kernelCacheEntry({}), read), std::nullopt);
  EXPECT_TRUE(read.empty());
}

//===----------------------------------------------------------------------===//
// Constant results: fills with no C library behind them
//===----------------------------------------------------------------------===//

TEST(KernelCodegenConstantsTest, EveryConstantFormCompilesLinksAndFills) {
  // A result that is a constant makes the row loop a fill, which LLVM would
  // turn into memset; the object imports nothing, so it must stay a loop.
  struct Case {
    const char *type;
    const char *body;
    float expected;
  };
  const Case cases[] = {
      {"f32", "%c = arith.constant 0.000000e+00 : f32\n      ipu_tile.yield %c : f32", 0.0f},
      {"f32", "%c = arith.constant -0.000000e+00 : f32\n      ipu_tile.yield %c : f32", -0.0f},
      {"f32", "%c = arith.constant 1.500000e+00 : f32\n      ipu_tile.yield %c : f32", 1.5f},
      {"f16", "%c = arith.constant 0.000000e+00 : f16\n      ipu_tile.yield %c : f16", 0.0f},
      {"f16", "%c = arith.constant 2.000000e+00 : f16\n      ipu_tile.yield %c : f16", 2.0f},
      {"f32", "%z = arith.mulf %x, %x : f32\n      %c = arith.constant 0.000000e+00 : f32\n"
              "      %p = arith.cmpf false, %x, %z : f32\n"
              "      %s = arith.select %p, %z, %c : f32\n      ipu_tile.yield %s : f32", 0.0f},
      {"f16", "%c = arith.constant 0.000000e+00 : f16\n"
              "      %p = arith.cmpf false, %x, %x : f16\n"
              "      %s = arith.select %p, %x, %c : f16\n      ipu_tile.yield %s : f16", 0.0f},
  };
  for (const Case &c : cases) {
    const std::string type = c.type;
    TestKernels compiled("    ipu_tile.kernel @k broadcasts [\"full\"] {\n    ^bb0(%x: " +
                         type + "):\n      " + c.body + "\n    }\n");
    ASSERT_TRUE(compiled.ok()) << c.body << "\n" << compiled.error;
    const ipu::ElementType elementType =
        type == "f32" ? ipu::ElementType::F32 : ipu::ElementType::F16;
    // 3 rows of 37 (odd: padded rows) and 2 rows of 1000 (long fills).
    for (auto [rows, cols] : {std::pair<int64_t, int64_t>{3, 37}, {2, 1000}}) {
      const size_t rowPitch = pitch(cols, elementType);
      std::vector<std::vector<uint8_t>> inputs = {std::vector<uint8_t>(rows * rowPitch, 0x3C)};
      std::vector<uint8_t> output(rows * rowPitch, 0xA5);
      run(compiled.kernel("k"), rows, cols, inputs, output);
      const size_t bytes = ipu::elementBytes(elementType);
      for (int64_t r = 0; r < rows; ++r) {
        for (int64_t col = 0; col < cols; ++col) {
          float value = ipu::loadElement(elementType, &output[r * rowPitch + col * bytes]);
          ASSERT_EQ(ipu::floatBits(value), ipu::floatBits(c.expected))
              << c.body << " at " << r << "," << col;
        }
        // Row padding is left alone.
        for (size_t pad = cols * bytes; pad < rowPitch; ++pad)
          ASSERT_EQ(output[r * rowPitch + pad], 0xA5) << c.body;
      }
    }
    // Nothing imported, memset and memcpy included (entry 0 is the null
    // symbol).
    std::vector<DynamicSymbol> symbols = dynamicSymbols(compiled.object);
    for (size_t i = 1; i < symbols.size(); ++i)
      EXPECT_NE(symbols[i].symbol.st_shndx, SHN_UNDEF)
          << c.body << " imports '" << symbols[i].name << "'";
  }
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
  TestKernels compiled(kernels);
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
    TestKernels compiled(singleOpKernel("k", op, 2, "f16"));
    EXPECT_TRUE(compiled.ok()) << op << ": " << compiled.error;
    TestKernels widened(std::string(R"mlir(
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
std::vector<float> runElements(const TestKernels &compiled,
                               const std::vector<std::vector<float>> &inputs) {
  const ipu::ElementwiseKernel &kernel = *compiled.package.kernels.front();
  const ipu::ElementType type = kernel.body().resultType;
  const unsigned bytes = ipu::elementBytes(type);
  const int64_t cols = static_cast<int64_t>(inputs.front().size());
  std::vector<std::vector<uint8_t>> blocks;
  for (size_t i = 0; i < inputs.size(); ++i) {
    blocks.emplace_back(pitch(cols, kernel.body().inputs[i].type));
    for (int64_t j = 0; j < cols; ++j)
      ipu::storeElement(
          kernel.body().inputs[i].type, inputs[i][j],
          &blocks
               .back()[j * ipu::elementBytes(kernel.body().inputs[i].type)]);
  }
  std::vector<uint8_t> output(pitch(cols, type));
  run(kernel, 1, cols, blocks, output);
  std::vector<float> results(cols);
  for (int64_t j = 0; j < cols; ++j)
    results[j] = ipu::loadElement(type, &output[j * bytes]);
  return results;
}

/// evaluateBody of the one kernel of `compiled` on element j of `inputs`.
float reference(const TestKernels &compiled,
                const std::vector<std::vector<float>> &inputs, size_t j) {
  float element[3] = {0, 0, 0};
  for (size_t i = 0; i < inputs.size(); ++i)
    element[i] = inputs[i][j];
  return ipu::evaluateBody(compiled.package.kernels.front()->body(), element);
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
    TestKernels compiled(singleOpKernel("fma", "math.fma", 3, type));
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
  TestKernels compiled(singleOpKernel("pow", "math.powf", 2, "f32"));
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
  TestKernels compiled(singleOpKernel("log", "math.log", 1, "f32"));
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

//===----------------------------------------------------------------------===//
// Row reductions: sums and maxima against scalar references in double
//===----------------------------------------------------------------------===//

namespace {

const char *const kReductionKernels = R"mlir(
    ipu_tile.kernel @sum32 broadcasts ["full"] reduce add init 0.000000e+00 {
    ^bb0(%x: f32):
      ipu_tile.yield %x : f32
    }
    ipu_tile.kernel @sum32_init broadcasts ["full"] reduce add init 1.500000e+00 {
    ^bb0(%x: f32):
      ipu_tile.yield %x : f32
    }
    ipu_tile.kernel @max32 broadcasts ["full"] reduce max init 0xFFF0000000000000 {
    ^bb0(%x: f32):
      ipu_tile.yield %x : f32
    }
    ipu_tile.kernel @max32_init broadcasts ["full"] reduce max init 5.000000e+00 {
    ^bb0(%x: f32):
      ipu_tile.yield %x : f32
    }
    ipu_tile.kernel @maxnum32 broadcasts ["full"] reduce maxnum init 0xFFF0000000000000 {
    ^bb0(%x: f32):
      ipu_tile.yield %x : f32
    }
    ipu_tile.kernel @softmax_sum broadcasts ["full", "column"] reduce add init 0.000000e+00 {
    ^bb0(%x: f32, %m: f32):
      %d = arith.subf %x, %m : f32
      %e = math.exp %d : f32
      ipu_tile.yield %e : f32
    }
    ipu_tile.kernel @var_sum broadcasts ["full", "column"] reduce add init 0.000000e+00 {
    ^bb0(%x: f32, %mean: f32):
      %d = arith.subf %x, %mean : f32
      %s = arith.mulf %d, %d : f32
      ipu_tile.yield %s : f32
    }
    ipu_tile.kernel @sum16 broadcasts ["full"] reduce add init 0.000000e+00 {
    ^bb0(%x: f16):
      %w = arith.extf %x : f16 to f32
      ipu_tile.yield %w : f32
    }
    ipu_tile.kernel @max16 broadcasts ["full"] reduce max init 0xFFF0000000000000 {
    ^bb0(%x: f16):
      %w = arith.extf %x : f16 to f32
      ipu_tile.yield %w : f32
    }
    ipu_tile.kernel @softmax_sum16 broadcasts ["full", "column"] reduce add init 0.000000e+00 {
    ^bb0(%x: f16, %m: f16):
      %d = arith.subf %x, %m : f16
      %w = arith.extf %d : f16 to f32
      %e = math.exp %w : f32
      ipu_tile.yield %e : f32
    }
    ipu_tile.kernel @scaled_max16 broadcasts ["full"] reduce max init 0xFFF0000000000000 {
    ^bb0(%x: f16):
      %c = arith.constant 1.178590e-01 : f16
      %s = arith.mulf %x, %c : f16
      %w = arith.extf %s : f16 to f32
      ipu_tile.yield %w : f32
    }
    ipu_tile.kernel @shifted_maxnum32_init broadcasts ["full"] reduce maxnum init 5.000000e+00 {
    ^bb0(%x: f32):
      %c = arith.constant 3.000000e+00 : f32
      %d = arith.constant 2.500000e+00 : f32
      %s = arith.mulf %c, %x : f32
      %t = arith.subf %s, %d : f32
      %h = arith.truncf %t : f32 to f16
      %w = arith.extf %h : f16 to f32
      ipu_tile.yield %w : f32
    }
    ipu_tile.kernel @negated_max16 broadcasts ["full"] reduce max init 0xFFF0000000000000 {
    ^bb0(%x: f16):
      %c = arith.constant -1.178590e-01 : f16
      %s = arith.mulf %x, %c : f16
      %w = arith.extf %s : f16 to f32
      ipu_tile.yield %w : f32
    }
    ipu_tile.kernel @times_reciprocal broadcasts ["full", "column"] {
    ^bb0(%x: f32, %s: f32):
      %one = arith.constant 1.000000e+00 : f32
      %r = arith.divf %one, %s : f32
      %y = arith.mulf %x, %r : f32
      ipu_tile.yield %y : f32
    }
)mlir";

using ipu::ElementType;
constexpr ElementType kF32 = ElementType::F32;
constexpr ElementType kF16 = ElementType::F16;
constexpr double kU = 0x1p-24; // Unit roundoff of f32.
const float kInfF = std::numeric_limits<float>::infinity();
const float kNaNF = std::numeric_limits<float>::quiet_NaN();

/// Garbage for padding: 0xFF bytes are NaN in f16 and in f32, which would
/// poison a sum or a max read from them.
constexpr uint8_t kPadGarbage = 0xFF;
constexpr uint8_t kCanary = 0xA5;
constexpr size_t kGuard = 32;

/// One input of a reduction run: its type, whether it is a column input
/// (rows x 1) or full (rows x cols), and its values row by row (already of
/// its type).
struct ReductionInput {
  ElementType type;
  bool column;
  std::vector<float> values;
};

/// Runs `kernel` on a rows x cols block. Input rows are padded to words
/// with kPadGarbage; the output block (rows x 1 f32) sits between two
/// guards of kCanary bytes, which must be left alone. Returns each row's
/// value.
std::vector<float> runReduction(const ipu::ElementwiseKernel &kernel,
                                int64_t rows, int64_t cols,
                                const std::vector<ReductionInput> &in,
                                bool asTheTargetSplitsIt = false) {
  std::vector<std::vector<uint8_t>> inputs;
  for (const ReductionInput &input : in) {
    const int64_t width = input.column ? 1 : cols;
    const size_t rowPitch = pitch(width, input.type);
    std::vector<uint8_t> bytes(rows * rowPitch, kPadGarbage);
    EXPECT_EQ(input.values.size(), static_cast<size_t>(rows * width));
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < width; ++c)
        ipu::storeElement(input.type, input.values[r * width + c],
                            &bytes[r * rowPitch + c * ipu::elementBytes(input.type)]);
    inputs.push_back(std::move(bytes));
  }
  // Output: guard, rows words, guard. run() passes output.data(), so the
  // block is an offset into a larger buffer here.
  std::vector<uint8_t> buffer(kGuard + rows * 4 + kGuard, kCanary);
  std::vector<uint8_t *> operands;
  for (std::vector<uint8_t> &input : inputs)
    operands.push_back(input.data());
  operands.push_back(buffer.data() + kGuard);
  const int64_t params[] = {rows, cols};
  EXPECT_NE(kernel.entry, nullptr);
  if (!kernel.entry)
    return std::vector<float>(rows, kNaNF);
  if (asTheTargetSplitsIt)
    ipu::executeElementwise(kernel, params, ipu::TargetModel::ipu21(), operands.data());
  else
    kernel.entry(operands.data(), params);
  for (size_t byte = 0; byte < kGuard; ++byte) {
    EXPECT_EQ(buffer[byte], kCanary) << kernel.name() << ": guard byte "
                                     << byte << " before the output";
    EXPECT_EQ(buffer[kGuard + rows * 4 + byte], kCanary)
        << kernel.name() << ": guard byte " << byte << " after the output";
  }
  std::vector<float> result(rows);
  for (int64_t r = 0; r < rows; ++r)
    std::memcpy(&result[r], &buffer[kGuard + r * 4], 4);
  return result;
}

/// A sum's reference: the row's terms summed in double from `init`, and
/// the bound on an f32 recursive sum of them, (n - 1) u sum |t| (n terms
/// and a nonzero init make n additions), plus `termError` times sum |t|
/// for terms the kernel computes approximately.
struct SumReference {
  double value = 0, bound = 0;
};

SumReference sumReference(const std::vector<double> &terms, double init,
                          double termError = 0) {
  SumReference ref;
  ref.value = init;
  double magnitude = std::fabs(init);
  for (double t : terms) {
    ref.value += t;
    magnitude += std::fabs(t);
  }
  const double additions =
      static_cast<double>(terms.size()) - (init == 0 ? 1.0 : 0.0);
  // gamma_k = k u / (1 - k u), a little more than k u.
  const double k = std::max(additions, 0.0);
  ref.bound = k * kU / (1 - k * kU) * magnitude + termError * magnitude;
  return ref;
}

/// Checks a kernel's sum against its reference: an f32 overflow of the
/// reference gives the infinity of its sign, a NaN a NaN, else the bound.
void expectSum(float actual, const SumReference &ref, const std::string &what) {
  const float rounded = static_cast<float>(ref.value);
  if (std::isnan(ref.value)) {
    EXPECT_TRUE(std::isnan(actual)) << what << ": expected NaN, got " << actual;
  } else if (std::isinf(rounded)) {
    EXPECT_EQ(actual, rounded) << what << ": the reference " << ref.value
                               << " overflows f32";
  } else {
    EXPECT_LE(std::fabs(static_cast<double>(actual) - ref.value), ref.bound)
        << what << ": kernel " << actual << ", reference " << ref.value
        << ", bound " << ref.bound;
  }
}

/// arith.maximumf on doubles, written here: NaN wins, -0 < +0.
double maximumRef(double a, double b) {
  if (std::isnan(a) || std::isnan(b))
    return std::numeric_limits<double>::quiet_NaN();
  if (a == b && a == 0)
    return std::signbit(a) ? b : a;
  return a > b ? a : b;
}

/// arith.maxnumf on doubles: NaN loses.
double maxnumRef(double a, double b) {
  if (std::isnan(a))
    return b;
  if (std::isnan(b))
    return a;
  return a > b ? a : b;
}

/// The max of each row of `values` from `init`, `nanWins` for maximumf.
std::vector<double> maxReference(const std::vector<float> &values, int64_t rows,
                                 int64_t cols, double init, bool nanWins) {
  std::vector<double> result(rows);
  for (int64_t r = 0; r < rows; ++r) {
    double acc = init;
    for (int64_t c = 0; c < cols; ++c)
      acc = nanWins ? maximumRef(acc, values[r * cols + c])
                    : maxnumRef(acc, values[r * cols + c]);
    result[r] = acc;
  }
  return result;
}

/// Exact for maxima: NaN for NaN, else the same bits (for maxnum, whose
/// zero's sign is open, the same value).
void expectMax(float actual, double expected, bool bits, const std::string &what) {
  if (std::isnan(expected)) {
    EXPECT_TRUE(std::isnan(actual)) << what << ": expected NaN, got " << actual;
  } else if (bits) {
    EXPECT_EQ(bitsOf(actual), bitsOf(static_cast<float>(expected)))
        << what << ": kernel " << actual << ", reference " << expected;
  } else {
    EXPECT_EQ(actual, static_cast<float>(expected))
        << what << ": kernel " << actual << ", reference " << expected;
  }
}

float f16(float value) { return ipu::halfToFloat(ipu::floatToHalf(value)); }

const int64_t kLengths[] = {1, 3, 7, 729, 1152};
constexpr int64_t kRows = 5;

} // namespace

class KernelCodegenReductionTest : public ::testing::Test {
protected:
  static void SetUpTestSuite() { kernels = new TestKernels(kReductionKernels); }
  static void TearDownTestSuite() {
    delete kernels;
    kernels = nullptr;
  }
  void SetUp() override { ASSERT_TRUE(kernels->ok()) << kernels->error; }
  const ipu::ElementwiseKernel &kernel(const std::string &name) {
    return kernels->kernel(name);
  }
  static TestKernels *kernels;
};
TestKernels *KernelCodegenReductionTest::kernels = nullptr;

TEST_F(KernelCodegenReductionTest, KernelsCarryTheirReduction) {
  EXPECT_EQ(kernels->kernelCount, 14u);
  EXPECT_EQ(kernel("sum32").body().reduction, ipu::RowReduction::Add);
  EXPECT_EQ(kernel("sum32_init").body().init, 1.5);
  EXPECT_EQ(kernel("max32").body().reduction, ipu::RowReduction::Max);
  EXPECT_EQ(kernel("max32").body().init, -std::numeric_limits<double>::infinity());
  EXPECT_EQ(kernel("maxnum32").body().reduction, ipu::RowReduction::MaxNum);
  EXPECT_EQ(kernel("softmax_sum").body().inputs[1].broadcast,
            ipu::Broadcast::Column);
  EXPECT_EQ(kernel("max16").body().inputs[0].type, kF16);
}

/// Random f32 rows: values of both signs over a few binades; each test's
/// seed is its own.
std::vector<float> randomRows(int64_t rows, int64_t cols, unsigned seed,
                              float lo = -4.0f, float hi = 4.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> values(rows * cols);
  for (float &v : values)
    v = dist(rng);
  return values;
}

TEST_F(KernelCodegenReductionTest, SumOfF32Rows) {
  for (int64_t cols : kLengths) {
    std::vector<float> x = randomRows(kRows, cols, 100 + cols);
    // Row 1: all equal (0.1f does not sum exactly); row 3: one large value
    // and small ones, cancelling.
    for (int64_t c = 0; c < cols; ++c) {
      x[1 * cols + c] = 0.1f;
      x[3 * cols + c] = c == 0 ? 1e7f : (c % 2 ? -1.25e-3f : 3.0f);
    }
    for (const char *name : {"sum32", "sum32_init"}) {
      const double init = kernel(name).body().init;
      std::vector<float> out = runReduction(kernel(name), kRows, cols, {{kF32, false, x}});
      for (int64_t r = 0; r < kRows; ++r) {
        std::vector<double> terms(x.begin() + r * cols, x.begin() + (r + 1) * cols);
        expectSum(out[r], sumReference(terms, init),
                  std::string(name) + " cols " + std::to_string(cols) + " row " +
                      std::to_string(r));
      }
    }
  }
}

TEST_F(KernelCodegenReductionTest, SumOfAllEqualRowsIsCloseToNTimesTheValue) {
  // n x v in double: for v = 1 the f32 sum is exact (n < 2^24).
  for (int64_t cols : kLengths) {
    for (float v : {1.0f, 0.1f, -3.0f, 1e-30f}) {
      std::vector<float> x(2 * cols, v);
      std::vector<float> out = runReduction(kernel("sum32"), 2, cols, {{kF32, false, x}});
      const double exact = static_cast<double>(v) * cols;
      const double bound = (cols - 1) * kU * std::fabs(exact) * (1 + 1e-6);
      for (int r = 0; r < 2; ++r)
        EXPECT_LE(std::fabs(out[r] - exact), bound)
            << "cols " << cols << " v " << v << ": " << out[r] << " vs " << exact;
      if (v == 1.0f)
        EXPECT_EQ(out[0], static_cast<float>(cols));
    }
  }
}

TEST_F(KernelCodegenReductionTest, MaxAndMaxNumOfF32Rows) {
  for (int64_t cols : kLengths) {
    std::vector<float> x = randomRows(kRows, cols, 200 + cols, -1e3f, 1e3f);
    for (int64_t c = 0; c < cols; ++c)
      x[2 * cols + c] = -7.5f; // All equal.
    // The maximum at the last column of row 4, at the first of row 0.
    x[4 * cols + cols - 1] = 2e3f;
    x[0] = 3e3f;
    for (const char *name : {"max32", "max32_init", "maxnum32"}) {
      const ipu::ElementwiseBody &body = kernel(name).body();
      const bool nanWins = body.reduction == ipu::RowReduction::Max;
      std::vector<float> out = runReduction(kernel(name), kRows, cols, {{kF32, false, x}});
      std::vector<double> ref = maxReference(x, kRows, cols, body.init, nanWins);
      for (int64_t r = 0; r < kRows; ++r)
        expectMax(out[r], ref[r], nanWins,
                  std::string(name) + " cols " + std::to_string(cols) + " row " +
                      std::to_string(r));
    }
  }
}

TEST_F(KernelCodegenReductionTest, RowsSplitInPartsAddEachPartThenTheParts) {
  // Fewer rows than workers: the simulator runs each row in the parts its
  // estimate charged (rowParts), each summed in column order, then adds the
  // parts in order. The same f32 additions here, bit for bit; and the
  // whole-row bound still holds (the reference's allowance assumes it).
  const ipu::TargetModel target = ipu::TargetModel::ipu21();
  for (int64_t rows : {1, 2, 3}) {
    for (int64_t cols : {7, 729, 1152}) {
      std::vector<float> x = randomRows(rows, cols, 300 + rows * cols);
      const ipu::ElementwiseBody &body = kernel("sum32").body();
      const ipu::ElementwiseCycles cycles = ipu::estimateElementwise(target, body, rows, cols);
      if (cols >= 729)
        EXPECT_GT(cycles.rowParts, 1u) << rows << " x " << cols;
      // Parts of ceil(vectors / rowParts) vectors, the last one shorter.
      const int64_t vectors = (cols + cycles.lanes - 1) / cycles.lanes;
      const int64_t partCols =
          (vectors + static_cast<int64_t>(cycles.rowParts) - 1) /
          static_cast<int64_t>(cycles.rowParts) * cycles.lanes;
      if (cycles.rowParts > 1)
        EXPECT_EQ(cycles.rowPartVectors * cycles.lanes, static_cast<uint64_t>(partCols));
      std::vector<float> out =
          runReduction(kernel("sum32"), rows, cols, {{kF32, false, x}}, true);
      for (int64_t r = 0; r < rows; ++r) {
        float folded = 0;
        for (int64_t first = 0; first < cols; first += partCols) {
          float part = 0;
          for (int64_t c = first; c < std::min(cols, first + partCols); ++c)
            part += x[r * cols + c];
          folded = first == 0 ? part : folded + part;
        }
        const std::string what = std::to_string(rows) + " x " + std::to_string(cols) +
                                 " row " + std::to_string(r);
        EXPECT_EQ(bitsOf(out[r]), bitsOf(folded)) << what;
        std::vector<double> terms(x.begin() + r * cols, x.begin() + (r + 1) * cols);
        expectSum(out[r], sumReference(terms, 0.0), what);
      }
    }
  }
}

TEST_F(KernelCodegenReductionTest, SplitMaximaAreTheWholeRowsMaxima) {
  // A max does not depend on the order: split or whole, the same bits,
  // NaN included (maximumf's NaN wins in any part).
  for (int64_t cols : {729, 1152}) {
    std::vector<float> x = randomRows(2, cols, 400 + cols, -1e3f, 1e3f);
    x[cols - 1] = 2e3f;                 // Row 0's max in its last part.
    x[cols + cols / 2] = kNaNF;         // Row 1: a NaN in a middle part.
    for (const char *name : {"max32", "maxnum32"}) {
      const ipu::ElementwiseBody &body = kernel(name).body();
      const bool nanWins = body.reduction == ipu::RowReduction::Max;
      EXPECT_GT(ipu::estimateElementwise(ipu::TargetModel::ipu21(), body, 2, cols).rowParts, 1u);
      std::vector<float> out = runReduction(kernel(name), 2, cols, {{kF32, false, x}}, true);
      std::vector<double> ref = maxReference(x, 2, cols, body.init, nanWins);
      for (int64_t r = 0; r < 2; ++r)
        expectMax(out[r], ref[r], nanWins,
                  std::string(name) + " cols " + std::to_string(cols) + " row " +
                      std::to_string(r));
    }
  }
}

TEST_F(KernelCodegenReductionTest, RowInvariantOpsHoistedGiveTheSameBits) {
  // 1 / s depends on the row only: the kernel computes it before the
  // row's loop. Each element is still x * (1 / s), rounded as f32 does.
  const int64_t rows = 3, cols = 5;
  std::vector<float> x = randomRows(rows, cols, 500);
  const float s[rows] = {3.0f, 7.0f, 0.1f};
  std::vector<std::vector<uint8_t>> inputs = {
      std::vector<uint8_t>(rows * cols * 4), std::vector<uint8_t>(rows * 4)};
  std::memcpy(inputs[0].data(), x.data(), inputs[0].size());
  std::memcpy(inputs[1].data(), s, inputs[1].size());
  std::vector<uint8_t> output(rows * cols * 4, 0xA5);
  run(kernel("times_reciprocal"), rows, cols, inputs, output);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) {
      float actual;
      std::memcpy(&actual, &output[(r * cols + c) * 4], 4);
      const float expected = x[r * cols + c] * (1.0f / s[r]);
      EXPECT_EQ(bitsOf(actual), bitsOf(expected)) << "row " << r << " col " << c;
    }
}

TEST_F(KernelCodegenReductionTest, MaxInitCounts) {
  // Every value below the init 5: the init is the max.
  std::vector<float> x = {1.0f, -2.0f, 4.5f, 4.999f, -1e30f, 0.0f};
  std::vector<float> out = runReduction(kernel("max32_init"), 2, 3, {{kF32, false, x}});
  EXPECT_EQ(out[0], 5.0f);
  EXPECT_EQ(out[1], 5.0f);
  std::vector<float> sum = runReduction(kernel("sum32_init"), 2, 3, {{kF32, false, x}});
  EXPECT_EQ(sum[0], 1.5f + 1.0f - 2.0f + 4.5f);
}

TEST_F(KernelCodegenReductionTest, SumsNearTheTopOfF32) {
  const float big = 3e38f, top = std::numeric_limits<float>::max();
  struct Row {
    std::vector<float> values;
    const char *what;
  };
  const std::vector<Row> cases = {
      {{big}, "one 3e38"},
      {{big, big}, "3e38 + 3e38 overflows"},
      {{big, big, big, big, big, big, big}, "7 x 3e38"},
      {{-big, -big, -big}, "3 x -3e38"},
      {{top, top}, "max + max"},
      {{top, 1e30f}, "max + 1e30 rounds back to max"},
      {{top, -top, top}, "max - max + max"},
      {{1e38f, 1e38f, 1e38f}, "3e38 from three 1e38"},
      {{kInfF, 1.0f, 2.0f}, "+inf"},
      {{kInfF, -kInfF}, "inf - inf"},
  };
  for (const Row &row : cases) {
    const int64_t cols = static_cast<int64_t>(row.values.size());
    // Two rows: the row and its negation.
    std::vector<float> x = row.values;
    for (float v : row.values)
      x.push_back(-v);
    std::vector<float> out = runReduction(kernel("sum32"), 2, cols, {{kF32, false, x}});
    for (int r = 0; r < 2; ++r) {
      std::vector<double> terms(x.begin() + r * cols, x.begin() + (r + 1) * cols);
      expectSum(out[r], sumReference(terms, 0.0),
                std::string(row.what) + (r ? " (negated)" : ""));
    }
  }
}

TEST_F(KernelCodegenReductionTest, VeryNegativeRowsAndInfinities) {
  const float ninf = -kInfF;
  struct Row {
    std::vector<float> values;
    const char *what;
  };
  const std::vector<Row> cases = {
      {{-1e30f, -1e30f, -1e30f}, "all -1e30"},
      {{-1e30f, -3e38f, -1e30f}, "-1e30 above -3e38"},
      {{ninf, ninf, ninf}, "all -inf"},
      {{ninf}, "one -inf"},
      {{ninf, -1e30f, ninf}, "-1e30 among -inf"},
      {{-0.0f, -0.0f, -0.0f}, "-0 only"},
      {{-0.0f, 0.0f, -0.0f}, "+0 above -0"},
      {{0.0f, -0.0f}, "+0 first"},
      {{kInfF, ninf}, "+inf"},
  };
  for (const Row &row : cases) {
    const int64_t cols = static_cast<int64_t>(row.values.size());
    for (const char *name : {"max32", "maxnum32"}) {
      const ipu::ElementwiseBody &body = kernel(name).body();
      const bool nanWins = body.reduction == ipu::RowReduction::Max;
      std::vector<float> out =
          runReduction(kernel(name), 1, cols, {{kF32, false, row.values}});
      expectMax(out[0], maxReference(row.values, 1, cols, body.init, nanWins)[0],
                nanWins, std::string(name) + ": " + row.what);
    }
    std::vector<float> sum = runReduction(kernel("sum32"), 1, cols, {{kF32, false, row.values}});
    std::vector<double> terms(row.values.begin(), row.values.end());
    expectSum(sum[0], sumReference(terms, 0.0), std::string("sum32: ") + row.what);
  }
  // A max of -inf rows with a -inf init is -inf, not NaN or the lowest
  // finite value.
  std::vector<float> x(3 * 7, ninf);
  for (float v : runReduction(kernel("max32"), 3, 7, {{kF32, false, x}}))
    EXPECT_EQ(bitsOf(v), bitsOf(ninf));
  for (float v : runReduction(kernel("maxnum32"), 3, 7, {{kF32, false, x}}))
    EXPECT_EQ(bitsOf(v), bitsOf(ninf));
}

TEST_F(KernelCodegenReductionTest, NaNWinsMaxAndLosesMaxNum) {
  for (int64_t cols : kLengths) {
    std::vector<float> x = randomRows(kRows, cols, 300 + cols);
    // NaN at the first column of row 0, the last of row 1, the middle of
    // row 2; row 3 all NaN; row 4 none.
    x[0 * cols] = kNaNF;
    x[1 * cols + cols - 1] = kNaNF;
    x[2 * cols + cols / 2] = kNaNF;
    for (int64_t c = 0; c < cols; ++c)
      x[3 * cols + c] = kNaNF;
    for (const char *name : {"max32", "maxnum32"}) {
      const ipu::ElementwiseBody &body = kernel(name).body();
      const bool nanWins = body.reduction == ipu::RowReduction::Max;
      std::vector<float> out = runReduction(kernel(name), kRows, cols, {{kF32, false, x}});
      std::vector<double> ref = maxReference(x, kRows, cols, body.init, nanWins);
      for (int64_t r = 0; r < kRows; ++r)
        expectMax(out[r], ref[r], nanWins,
                  std::string(name) + " cols " + std::to_string(cols) + " row " +
                      std::to_string(r));
      if (nanWins) {
        for (int64_t r = 0; r < 4; ++r)
          EXPECT_TRUE(std::isnan(out[r])) << name << " cols " << cols << " row " << r;
      } else {
        EXPECT_EQ(bitsOf(out[3]), bitsOf(-kInfF)) << "maxnum of NaNs is its init";
        if (cols > 1)
          for (int64_t r = 0; r < 3; ++r)
            EXPECT_FALSE(std::isnan(out[r])) << name << " cols " << cols << " row " << r;
      }
    }
    // A NaN in a row makes its sum NaN.
    std::vector<float> sum = runReduction(kernel("sum32"), kRows, cols, {{kF32, false, x}});
    for (int64_t r = 0; r < 4; ++r)
      EXPECT_TRUE(std::isnan(sum[r])) << "sum cols " << cols << " row " << r;
  }
}

TEST_F(KernelCodegenReductionTest, SoftmaxSumWithAColumnMax) {
  for (int64_t cols : kLengths) {
    std::vector<float> x = randomRows(kRows, cols, 400 + cols, -20.0f, 20.0f);
    for (int64_t c = 0; c < cols; ++c)
      x[1 * cols + c] = 2.5f; // All equal: n x exp(0) = n.
    std::vector<float> m(kRows);
    for (int64_t r = 0; r < kRows; ++r)
      m[r] = *std::max_element(x.begin() + r * cols, x.begin() + (r + 1) * cols);
    m[4] -= 1.0f; // A column value that is not the row's max: terms above 1.
    std::vector<float> out = runReduction(kernel("softmax_sum"), kRows, cols,
                                          {{kF32, false, x}, {kF32, true, m}});
    for (int64_t r = 0; r < kRows; ++r) {
      std::vector<double> terms;
      for (int64_t c = 0; c < cols; ++c) {
        const float d = x[r * cols + c] - m[r]; // arith.subf in f32.
        terms.push_back(std::exp(static_cast<double>(d)));
      }
      // MLIR's polynomial exp: within a few f32 ulps (8 allowed, 2^-20).
      expectSum(out[r], sumReference(terms, 0.0, 0x1p-20),
                "cols " + std::to_string(cols) + " row " + std::to_string(r));
    }
    EXPECT_NEAR(out[1], static_cast<float>(cols), cols * 0x1p-20 * 2);
  }
}

TEST_F(KernelCodegenReductionTest, LayerNormVarianceWithAColumnMean) {
  for (int64_t cols : kLengths) {
    std::vector<float> x = randomRows(kRows, cols, 500 + cols, -3.0f, 5.0f);
    for (int64_t c = 0; c < cols; ++c)
      x[2 * cols + c] = -1.75f; // All equal to the mean: variance 0.
    std::vector<float> mean(kRows);
    for (int64_t r = 0; r < kRows; ++r) {
      double s = 0;
      for (int64_t c = 0; c < cols; ++c)
        s += x[r * cols + c];
      mean[r] = static_cast<float>(s / cols);
    }
    mean[2] = -1.75f;
    std::vector<float> out = runReduction(kernel("var_sum"), kRows, cols,
                                          {{kF32, false, x}, {kF32, true, mean}});
    for (int64_t r = 0; r < kRows; ++r) {
      std::vector<double> terms;
      for (int64_t c = 0; c < cols; ++c) {
        const float d = x[r * cols + c] - mean[r]; // f32 subf, then mulf.
        terms.push_back(static_cast<float>(d * d));
      }
      expectSum(out[r], sumReference(terms, 0.0),
                "cols " + std::to_string(cols) + " row " + std::to_string(r));
    }
    EXPECT_EQ(bitsOf(out[2]), bitsOf(0.0f)) << "cols " << cols;
  }
}

TEST_F(KernelCodegenReductionTest, F16RowsExtendedToF32) {
  // f16 rows padded to words (odd lengths leave 2 bytes of garbage a row):
  // sums exact in f32 for these values are compared exactly by the bound.
  for (int64_t cols : kLengths) {
    std::vector<float> x = randomRows(kRows, cols, 600 + cols, -60000.0f, 60000.0f);
    for (float &v : x)
      v = f16(v);
    for (int64_t c = 0; c < cols; ++c)
      x[1 * cols + c] = f16(0.1f);
    x[3 * cols + cols - 1] = 65504.0f; // The largest f16, last in its row.
    std::vector<float> sum = runReduction(kernel("sum16"), kRows, cols, {{kF16, false, x}});
    std::vector<float> max = runReduction(kernel("max16"), kRows, cols, {{kF16, false, x}});
    std::vector<double> maxRef = maxReference(x, kRows, cols, -INFINITY, true);
    for (int64_t r = 0; r < kRows; ++r) {
      const std::string what = "cols " + std::to_string(cols) + " row " + std::to_string(r);
      std::vector<double> terms(x.begin() + r * cols, x.begin() + (r + 1) * cols);
      expectSum(sum[r], sumReference(terms, 0.0), "sum16 " + what);
      expectMax(max[r], maxRef[r], true, "max16 " + what);
    }
    EXPECT_EQ(max[3], 65504.0f);
    // An f16 row summed in f32 goes beyond f16's range: 1152 x 60000-ish.
  }
  // Accumulating in f32, not f16: 4096 ones sum to 4096 (an f16 sum would
  // stop at 2048, where 2048 + 1 rounds back to 2048).
  std::vector<float> ones(4096, 1.0f);
  EXPECT_EQ(runReduction(kernel("sum16"), 1, 4096, {{kF16, false, ones}})[0], 4096.0f);
  // And past f16's largest value.
  std::vector<float> large(3, 65504.0f);
  EXPECT_EQ(runReduction(kernel("sum16"), 1, 3, {{kF16, false, large}})[0],
            3 * 65504.0f);
  // f16 infinities and NaN.
  std::vector<float> special = {kInfF, 1.0f, -kInfF, kNaNF, 2.0f, -kInfF};
  std::vector<float> maxOut = runReduction(kernel("max16"), 2, 3, {{kF16, false, special}});
  EXPECT_EQ(maxOut[0], kInfF);
  EXPECT_TRUE(std::isnan(maxOut[1]));
}

TEST_F(KernelCodegenReductionTest, MaxOfInputThenOpsAfterItGivesTheSameBits) {
  // opsAfterRowMax: the kernel takes the row's max of the input and applies
  // the ops after it; the graph's value is the max of every element's ops.
  // Every f16 value, in rows of several lengths (each row a window of the
  // codes), plus rows of one repeated special value.
  std::vector<float> codes;
  for (uint32_t code = 0; code < 0x10000; ++code)
    codes.push_back(ipu::halfToFloat(static_cast<uint16_t>(code)));
  std::mt19937 rng(1234);
  std::shuffle(codes.begin(), codes.end(), rng);
  const std::vector<float> specials = {0.0f, -0.0f, kInfF, -kInfF, kNaNF, 65504.0f,
                                       -65504.0f, 0x1p-24f, -0x1p-24f, 1.0f};
  for (const char *name : {"scaled_max16", "shifted_maxnum32_init", "negated_max16"}) {
    const ipu::ElementwiseKernel &k = kernel(name);
    const ipu::ElementwiseBody &body = k.body();
    const bool hoisted = !ipu::opsAfterRowMax(body).empty();
    EXPECT_EQ(hoisted, std::string(name) != "negated_max16") << name;
    const ElementType inType = body.inputs[0].type;
    const bool nanWins = body.reduction == ipu::RowReduction::Max;
    for (int64_t cols : {1, 2, 7, 729, 4096}) {
      std::vector<float> x;
      for (int64_t r = 0; r < kRows; ++r)
        for (int64_t c = 0; c < cols; ++c)
          x.push_back(codes[(r * 7919 + c) % codes.size()]);
      // Rows without NaN, so that the max is decided by order alone.
      for (int64_t c = 0; c < cols; ++c)
        for (int64_t r : {1, 3})
          if (std::isnan(x[r * cols + c]))
            x[r * cols + c] = -0.0f;
      for (float special : specials) {
        std::vector<float> row(cols, special);
        if (cols > 1)
          row[cols / 2] = special == 0.0f ? -0.0f : 0.0f;
        x.insert(x.end(), row.begin(), row.end());
      }
      const int64_t rows = static_cast<int64_t>(x.size()) / cols;
      std::vector<float> out = runReduction(k, rows, cols, {{inType, false, x}});
      for (int64_t r = 0; r < rows; ++r) {
        double acc = body.init;
        for (int64_t c = 0; c < cols; ++c) {
          const float in = x[r * cols + c];
          acc = ipu::combineReduction(body.reduction, acc, ipu::evaluateBody(body, &in));
        }
        expectMax(out[r], acc, nanWins,
                  std::string(name) + " cols " + std::to_string(cols) + " row " +
                      std::to_string(r));
      }
    }
  }
}

TEST(ElementwiseEstimateTest, MaxOfScaledF16RunsOnF16Vectors) {
  // Softmax's row max of its scaled f16 scores costs the max of f16
  // vectors and the scale once a row: as little as the max of the plain
  // f16 values, and less than a body whose scale is negative (which the
  // max does not commute with).
  auto body = [](double scale) {
    ipu::ElementwiseBody b;
    b.inputs = {{ElementType::F16, ipu::Broadcast::Full}};
    ipu::BodyOp c;
    c.kind = ipu::BodyOpKind::Constant;
    c.type = ElementType::F16;
    c.constant = scale;
    ipu::BodyOp mul;
    mul.kind = ipu::BodyOpKind::MulF;
    mul.type = ElementType::F16;
    mul.operands[0] = 0;
    mul.operands[1] = 1;
    ipu::BodyOp ext;
    ext.kind = ipu::BodyOpKind::ExtF;
    ext.type = ElementType::F32;
    ext.operands[0] = 2;
    b.ops = {c, mul, ext};
    b.result = 3;
    b.resultType = ElementType::F32;
    b.reduction = ipu::RowReduction::Max;
    b.init = -INFINITY;
    return b;
  };
  const ipu::TargetModel target = ipu::TargetModel::ipu21();
  const ipu::ElementwiseBody scaled = body(0.125), negated = body(-0.125);
  ipu::ElementwiseBody plain = scaled;
  plain.ops = {scaled.ops[2]};
  plain.ops[0].operands[0] = 0;
  plain.result = 1;
  ASSERT_FALSE(ipu::verifyBody(scaled)) << *ipu::verifyBody(scaled);
  ASSERT_FALSE(ipu::verifyBody(plain)) << *ipu::verifyBody(plain);
  EXPECT_EQ(ipu::opsAfterRowMax(scaled), std::vector<bool>({false, true, true}));
  EXPECT_TRUE(ipu::opsAfterRowMax(negated).empty());
  for (int64_t cols : {7, 366, 729}) {
    const ipu::ElementwiseCycles s = ipu::estimateElementwise(target, scaled, 16, cols);
    const ipu::ElementwiseCycles p = ipu::estimateElementwise(target, plain, 16, cols);
    const ipu::ElementwiseCycles n = ipu::estimateElementwise(target, negated, 16, cols);
    EXPECT_EQ(s.lanes, 4u);
    EXPECT_EQ(n.lanes, 2u);
    EXPECT_EQ(s.instructionsPerVector, p.instructionsPerVector);
    EXPECT_GE(s.total, p.total);
    EXPECT_LT(s.total, n.total) << "cols " << cols;
  }
}

TEST_F(KernelCodegenReductionTest, F16ColumnInputPaddingIsNotData) {
  // An f16 column input holds one value a row in a 4-byte word: the 2 pad
  // bytes hold f16 NaN (kPadGarbage), which must not reach any row.
  for (int64_t cols : kLengths) {
    const int64_t rows = 7;
    std::vector<float> x = randomRows(rows, cols, 700 + cols, -8.0f, 8.0f);
    for (float &v : x)
      v = f16(v);
    std::vector<float> m(rows);
    for (int64_t r = 0; r < rows; ++r)
      m[r] = *std::max_element(x.begin() + r * cols, x.begin() + (r + 1) * cols);
    std::vector<float> out = runReduction(kernel("softmax_sum16"), rows, cols,
                                          {{kF16, false, x}, {kF16, true, m}});
    for (int64_t r = 0; r < rows; ++r) {
      std::vector<double> terms;
      for (int64_t c = 0; c < cols; ++c) {
        const float d = f16(x[r * cols + c] - m[r]); // arith.subf in f16.
        terms.push_back(std::exp(static_cast<double>(d)));
      }
      ASSERT_FALSE(std::isnan(out[r])) << "cols " << cols << " row " << r
                                       << ": the column's padding was read";
      expectSum(out[r], sumReference(terms, 0.0, 0x1p-20),
                "cols " + std::to_string(cols) + " row " + std::to_string(r));
    }
  }
}

TEST_F(KernelCodegenReductionTest, OutputIsOneWordARowAndNothingElse) {
  // Row r's value lands in word r, whatever the row length: a kernel that
  // stored at the row pitch of its input or wrote a whole row would hit
  // the following rows or the guards (runReduction checks those).
  for (int64_t cols : kLengths) {
    const int64_t rows = 9;
    std::vector<float> x(rows * cols, 0.0f);
    for (int64_t r = 0; r < rows; ++r)
      x[r * cols + (r % cols)] = static_cast<float>(r + 1);
    std::vector<float> sum = runReduction(kernel("sum32"), rows, cols, {{kF32, false, x}});
    std::vector<float> max = runReduction(kernel("max32"), rows, cols, {{kF32, false, x}});
    for (int64_t r = 0; r < rows; ++r) {
      EXPECT_EQ(sum[r], static_cast<float>(r + 1)) << "cols " << cols << " row " << r;
      EXPECT_EQ(max[r], static_cast<float>(r + 1)) << "cols " << cols << " row " << r;
    }
  }
  // A block of one row writes one word.
  std::vector<float> one = {1.0f, 2.0f, 3.0f};
  EXPECT_EQ(runReduction(kernel("sum32"), 1, 3, {{kF32, false, one}})[0], 6.0f);
}

TEST(KernelCodegenReductionRefusalTest, InitNotExactInF32IsRefused) {
  // 0.1 is a double that f32 cannot hold: the kernel is not built.
  TestKernels kernels(R"mlir(
    ipu_tile.kernel @sum broadcasts ["full"] reduce add init 1.000000e-01 {
    ^bb0(%x: f32):
      ipu_tile.yield %x : f32
    }
)mlir",
                          /*load=*/false);
  EXPECT_FALSE(kernels.ok());
  EXPECT_NE(kernels.error.find("init is not an f32 value"), std::string::npos)
      << kernels.error;
}

TEST(KernelCodegenReductionRefusalTest, F16ResultIsRefused) {
  TestKernels kernels(R"mlir(
    ipu_tile.kernel @max16 broadcasts ["full"] reduce max init 0xFFF0000000000000 {
    ^bb0(%x: f16):
      ipu_tile.yield %x : f16
    }
)mlir",
                          /*load=*/false);
  EXPECT_FALSE(kernels.ok());
  EXPECT_NE(kernels.error.find("accumulates in f32, not f16"), std::string::npos)
      << kernels.error;
}
