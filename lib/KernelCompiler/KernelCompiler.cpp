//===- KernelCompiler.cpp - Kernel bodies to an ELF shared object ---------===//
//
// A kernel's function walks its vertex's output block row by row (rows are
// padded to 32-bit words, as every block is) and evaluates the body on each
// element: inputs are loaded by their broadcast, f8 values are converted
// with integer code matching ElementType.cpp (round to nearest even, OCP
// saturation), every other body op is the arith/math op it is named after.
// MLIR's conversions take it to the LLVM dialect (math through its
// polynomial approximations, so the object needs no C library), LLVM
// compiles it at -O2 for x86-64-v3 with no library calls assumed (a fill
// stays a loop, not memset), and LLD links every object into one shared
// object with no undefined symbols.
//
//===----------------------------------------------------------------------===//

#include "IPU/KernelCompiler/KernelCompiler.h"
#include "IPU/Device/Kernels.h"
#include "IPU/Support/ElementType.h"
#include "IPU/Support/Escape.h"

#include "lld/Common/Driver.h"
#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/TargetParser/Triple.h"

#include <array>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmath>
#include <limits>
#include <mutex>
#include <thread>

LLD_HAS_DRIVER(elf)

using namespace mlir;
using namespace ipu;

namespace {

constexpr const char *kTriple = "x86_64-unknown-linux-gnu";

double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
      .count();
}

/// The f8 formats as integer code: exponent and mantissa bits, bias, the
/// largest finite magnitude's code and the NaN code.
struct F8Format {
  unsigned mantissaBits;
  int bias;
  uint32_t maxCode, nanCode;
  float maxFinite;
};

F8Format f8Format(Type type) {
  if (isa<Float8E4M3FNType>(type))
    return {3, 7, 0x7E, 0x7F, 448.0f};
  return {2, 15, 0x7B, 0x7E, 57344.0f}; // f8E5M2
}

bool isF8Type(Type type) { return isa<Float8E4M3FNType, Float8E5M2Type>(type); }

/// Builds one kernel function in a module of its own.
class KernelBuilder {
public:
  KernelBuilder(OpBuilder &builder, Location loc) : b(builder), loc(loc) {}
  OpBuilder &b_() { return b; }

  Value i32(int64_t value) {
    return arith::ConstantIntOp::create(b, loc, value, 32);
  }
  Value f32(float value) {
    return arith::ConstantFloatOp::create(b, loc, b.getF32Type(),
                                          APFloat(value));
  }

  /// f32 `value` to the f8 code of `format` (an i8), as floatToF8E4M3FN /
  /// floatToF8E5M2 do: NaN to the NaN code, magnitudes saturated at the
  /// largest finite, normals rounded to nearest even on the bits,
  /// subnormals by roundeven of the scaled magnitude.
  Value encodeF8(Value value, const F8Format &format) {
    Type i32Type = b.getI32Type();
    Value bits = arith::BitcastOp::create(b, loc, i32Type, value);
    Value sign = arith::AndIOp::create(
        b, loc, arith::ShRUIOp::create(b, loc, bits, i32(24)), i32(0x80));
    Value magnitude = math::AbsFOp::create(b, loc, value);
    Value isNan = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNO, value, value);
    Value clamped = arith::MinimumFOp::create(b, loc, magnitude, f32(format.maxFinite));
    Value clampedBits = arith::BitcastOp::create(b, loc, i32Type, clamped);
    // Normal: round the f32 mantissa to `mantissaBits` at its bits.
    const unsigned drop = 23 - format.mantissaBits;
    Value lsb = arith::AndIOp::create(
        b, loc, arith::ShRUIOp::create(b, loc, clampedBits, i32(drop)), i32(1));
    Value rounded = arith::AddIOp::create(
        b, loc, clampedBits,
        arith::AddIOp::create(b, loc, i32((1u << (drop - 1)) - 1), lsb));
    Value shifted = arith::ShRUIOp::create(b, loc, rounded, i32(drop));
    // Rebias the exponent: (e - 127 + bias) at the f8 exponent position.
    Value normal = arith::SubIOp::create(
        b, loc, shifted, i32((127 - format.bias) << format.mantissaBits));
    // Subnormal: the magnitude in units of the smallest subnormal.
    const int minExponent = 1 - format.bias;
    const float scale = std::ldexp(1.0f, format.mantissaBits - minExponent);
    Value scaled = arith::MulFOp::create(b, loc, clamped, f32(scale));
    Value subnormal = arith::FPToUIOp::create(
        b, loc, i32Type, math::RoundEvenOp::create(b, loc, scaled));
    Value isSubnormal = arith::CmpFOp::create(
        b, loc, arith::CmpFPredicate::OLT, clamped,
        f32(std::ldexp(1.0f, minExponent)));
    Value code = arith::SelectOp::create(b, loc, isSubnormal, subnormal, normal);
    code = arith::SelectOp::create(b, loc, isNan, i32(format.nanCode), code);
    code = arith::OrIOp::create(b, loc, code, sign);
    return arith::TruncIOp::create(b, loc, b.getI8Type(), code);
  }

  /// The f8 code `code` (an i8) of `format` as f32, as f8E4M3FNToFloat /
  /// f8E5M2ToFloat decode it.
  Value decodeF8(Value code, const F8Format &format, bool e5m2) {
    Type i32Type = b.getI32Type();
    Value bits = arith::ExtUIOp::create(b, loc, i32Type, code);
    Value sign = arith::ShLIOp::create(
        b, loc, arith::AndIOp::create(b, loc, bits, i32(0x80)), i32(24));
    Value magnitude = arith::AndIOp::create(b, loc, bits, i32(0x7F));
    const unsigned m = format.mantissaBits;
    Value exponent = arith::ShRUIOp::create(b, loc, magnitude, i32(m));
    Value mantissa = arith::AndIOp::create(b, loc, magnitude, i32((1 << m) - 1));
    Value normalBits = arith::OrIOp::create(
        b, loc,
        arith::ShLIOp::create(
            b, loc, arith::AddIOp::create(b, loc, exponent, i32(127 - format.bias)),
            i32(23)),
        arith::ShLIOp::create(b, loc, mantissa, i32(23 - m)));
    Value normal = arith::BitcastOp::create(b, loc, b.getF32Type(), normalBits);
    const float unit = std::ldexp(1.0f, 1 - format.bias - static_cast<int>(m));
    Value subnormal = arith::MulFOp::create(
        b, loc, arith::UIToFPOp::create(b, loc, b.getF32Type(), mantissa), f32(unit));
    Value isSubnormal = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                              exponent, i32(0));
    Value value = arith::SelectOp::create(b, loc, isSubnormal, subnormal, normal);
    if (e5m2) {
      // Exponent 31: infinity (mantissa 0) or NaN.
      Value special = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                            exponent, i32(31));
      Value isInf = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                          mantissa, i32(0));
      Value inf = f32(std::numeric_limits<float>::infinity());
      Value nan = f32(std::numeric_limits<float>::quiet_NaN());
      value = arith::SelectOp::create(
          b, loc, special, arith::SelectOp::create(b, loc, isInf, inf, nan), value);
    } else {
      Value isNan = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                          magnitude, i32(0x7F));
      value = arith::SelectOp::create(
          b, loc, isNan, f32(std::numeric_limits<float>::quiet_NaN()), value);
    }
    Value valueBits = arith::BitcastOp::create(b, loc, i32Type, value);
    return arith::BitcastOp::create(b, loc, b.getF32Type(),
                                    arith::OrIOp::create(b, loc, valueBits, sign));
  }

  /// `value` of float type `from` (f8 as its i8 code) converted to `to`.
  Value convert(Value value, Type from, Type to) {
    if (from == to)
      return value;
    if (isF8Type(from)) {
      Value wide = decodeF8(value, f8Format(from), isa<Float8E5M2Type>(from));
      return to.isF32() ? wide : convert(wide, b.getF32Type(), to);
    }
    if (isF8Type(to)) {
      Value wide = from.isF32() ? value : arith::ExtFOp::create(b, loc, b.getF32Type(), value);
      return encodeF8(wide, f8Format(to));
    }
    if (to.getIntOrFloatBitWidth() > from.getIntOrFloatBitWidth())
      return arith::ExtFOp::create(b, loc, to, value);
    return arith::TruncFOp::create(b, loc, to, value);
  }

  /// maxnum / minnum as compare and select: NaN loses to a number. (LLVM
  /// would call libm's fmaxf for f16, which the object must not import.)
  Value maxNum(Value a, Value b, bool maximum) {
    Value aNan = arith::CmpFOp::create(b_(), loc, arith::CmpFPredicate::UNO, a, a);
    Value bNan = arith::CmpFOp::create(b_(), loc, arith::CmpFPredicate::UNO, b, b);
    Value aWins = arith::CmpFOp::create(
        b_(), loc, maximum ? arith::CmpFPredicate::OGT : arith::CmpFPredicate::OLT, a, b);
    Value pick = arith::SelectOp::create(b_(), loc, aWins, a, b);
    pick = arith::SelectOp::create(b_(), loc, bNan, a, pick);
    return arith::SelectOp::create(b_(), loc, aNan, b, pick);
  }

  /// C's pow in the body's type, through f32: exp(y log |x|) with the sign
  /// of an odd integer power of a negative base, NaN for a negative base
  /// and a non-integer exponent, 1 for a zero exponent, and x = 0 giving 0
  /// or +inf by the exponent's sign.
  Value pow(Value x, Value y) {
    Type type = x.getType();
    Type f32Type = b_().getF32Type();
    if (!type.isF32()) {
      x = arith::ExtFOp::create(b_(), loc, f32Type, x);
      y = arith::ExtFOp::create(b_(), loc, f32Type, y);
    }
    Value magnitude = math::AbsFOp::create(b_(), loc, x);
    Value r = math::ExpOp::create(
        b_(), loc, arith::MulFOp::create(b_(), loc, y, log(magnitude)));
    Value yInteger = arith::CmpFOp::create(
        b_(), loc, arith::CmpFPredicate::OEQ, math::TruncOp::create(b_(), loc, y), y);
    Value half = arith::MulFOp::create(b_(), loc, y, f32(0.5f));
    Value yOdd = arith::AndIOp::create(
        b_(), loc, yInteger,
        arith::CmpFOp::create(b_(), loc, arith::CmpFPredicate::UNE,
                              math::TruncOp::create(b_(), loc, half), half));
    Value negative = arith::CmpFOp::create(b_(), loc, arith::CmpFPredicate::OLT, x, f32(0));
    Value negated = arith::NegFOp::create(b_(), loc, r);
    Value signed_ = arith::SelectOp::create(b_(), loc, yOdd, negated, r);
    Value forNegative = arith::SelectOp::create(
        b_(), loc, yInteger, signed_, f32(std::numeric_limits<float>::quiet_NaN()));
    r = arith::SelectOp::create(b_(), loc, negative, forNegative, r);
    Value zero = arith::CmpFOp::create(b_(), loc, arith::CmpFPredicate::OEQ, x, f32(0));
    Value yNegative = arith::CmpFOp::create(b_(), loc, arith::CmpFPredicate::OLT, y, f32(0));
    Value atZero = arith::SelectOp::create(
        b_(), loc, yNegative, f32(std::numeric_limits<float>::infinity()), f32(0));
    r = arith::SelectOp::create(b_(), loc, zero, atZero, r);
    Value yZero = arith::CmpFOp::create(b_(), loc, arith::CmpFPredicate::OEQ, y, f32(0));
    r = arith::SelectOp::create(b_(), loc, yZero, f32(1), r);
    return type.isF32() ? r : arith::TruncFOp::create(b_(), loc, type, r).getResult();
  }

  /// log, subnormal f32 inputs scaled into the normal range first (MLIR's
  /// polynomial reads the exponent bits, which a subnormal lacks).
  Value log(Value x) {
    if (!x.getType().isF32())
      return math::LogOp::create(b_(), loc, x);
    Value small = arith::CmpFOp::create(b_(), loc, arith::CmpFPredicate::OLT,
                                        math::AbsFOp::create(b_(), loc, x),
                                        f32(std::numeric_limits<float>::min()));
    Value scaled = arith::SelectOp::create(
        b_(), loc, small, arith::MulFOp::create(b_(), loc, x, f32(0x1p24f)), x);
    Value r = math::LogOp::create(b_(), loc, scaled);
    Value corrected = arith::SubFOp::create(b_(), loc, r, f32(24.0f * 0.69314718f));
    return arith::SelectOp::create(b_(), loc, small, corrected, r);
  }

  /// The type a value of element type `type` has in the generated code.
  Type storageType(Type type) { return isF8Type(type) ? b.getI8Type() : type; }

private:
  OpBuilder &b;
  Location loc;
};

/// The MLIR type of element type `type`.
Type mlirType(MLIRContext *context, ipu::ElementType type) {
  switch (type) {
  case ipu::ElementType::F32: return Float32Type::get(context);
  case ipu::ElementType::F16: return Float16Type::get(context);
  case ipu::ElementType::F8E4M3FN: return Float8E4M3FNType::get(context);
  case ipu::ElementType::F8E5M2: return Float8E5M2Type::get(context);
  }
  return Float32Type::get(context);
}

/// The kernel function `symbol` for `plain` (which verifyBody accepted) in
/// `module`: body op by body op, each the arith or math op it is named
/// after, f8 conversions and comparisons as integer code.
LogicalResult buildKernelFunction(const ipu::ElementwiseBody &plain,
                                  StringRef symbol, ModuleOp module) {
  MLIRContext *context = module.getContext();
  Location loc = UnknownLoc::get(context);
  OpBuilder b(context);
  b.setInsertionPointToEnd(module.getBody());
  auto ptr = LLVM::LLVMPointerType::get(context);
  auto func = func::FuncOp::create(b, loc, symbol,
                                   b.getFunctionType({ptr, ptr}, {}));
  Block *entry = func.addEntryBlock();
  b.setInsertionPointToStart(entry);
  KernelBuilder k(b, loc);
  Type i64 = b.getI64Type();
  Value operands = entry->getArgument(0), params = entry->getArgument(1);

  auto loadAt = [&](Type type, Value base, int64_t index, Type elementType) {
    Value address = LLVM::GEPOp::create(b, loc, ptr, elementType, base,
                                        ArrayRef<LLVM::GEPArg>{index});
    return LLVM::LoadOp::create(b, loc, type, address).getResult();
  };
  Value rows = loadAt(i64, params, 0, i64);
  Value cols = loadAt(i64, params, 1, i64);

  const size_t inputs = plain.inputs.size();
  auto typeOf = [&](ipu::ElementType type) { return mlirType(context, type); };
  Type resultType = typeOf(plain.resultType);

  // Each operand's block and row pitch (rows padded to exchange words; a
  // column input's and a reduction's output rows hold one element).
  const bool reduces = plain.reduction != ipu::RowReduction::None;
  SmallVector<Value> bases, pitches;
  SmallVector<Type> elementTypes;
  for (size_t o = 0; o <= inputs; ++o) {
    bases.push_back(loadAt(ptr, operands, static_cast<int64_t>(o), ptr));
    Type type = o < inputs ? typeOf(plain.inputs[o].type) : resultType;
    elementTypes.push_back(type);
    const int64_t bytes = (type.getIntOrFloatBitWidth() + 7) / 8;
    const bool oneColumn = o < inputs
                               ? plain.inputs[o].broadcast == ipu::Broadcast::Column
                               : reduces;
    Value rowBytes = arith::MulIOp::create(
        b, loc, oneColumn ? arith::ConstantIntOp::create(b, loc, 1, 64).getResult() : cols,
        arith::ConstantIntOp::create(b, loc, bytes, 64));
    constexpr int64_t word = ipu::kDeviceWordBytes;
    static_assert((word & (word - 1)) == 0, "rows pad to a power of two");
    Value padded = arith::AndIOp::create(
        b, loc,
        arith::AddIOp::create(b, loc, rowBytes,
                              arith::ConstantIntOp::create(b, loc, word - 1, 64)),
        arith::ConstantIntOp::create(b, loc, ~(word - 1), 64));
    pitches.push_back(padded);
  }
  auto index = [&](Value value) {
    return arith::IndexCastOp::create(b, loc, b.getIndexType(), value).getResult();
  };
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  auto rowLoop = scf::ForOp::create(b, loc, zero, index(rows), one);
  b.setInsertionPointToStart(rowLoop.getBody());
  Value row = arith::IndexCastOp::create(b, loc, i64, rowLoop.getInductionVar());
  // A reduction carries its accumulator (f32) through the row. A max whose
  // last ops never decrease its value (opsAfterRowMax) takes the max of the
  // input from the identity and applies them, and then the init, once a
  // row, as estimateElementwise charges it.
  const std::vector<bool> afterMax = ipu::opsAfterRowMax(plain);
  const bool maxOfInput = !afterMax.empty();
  SmallVector<Value> accumulator;
  if (reduces)
    accumulator.push_back(k.f32(static_cast<float>(
        maxOfInput ? ipu::reductionIdentity(plain.reduction) : plain.init)));
  Value col;

  auto address = [&](size_t o, ipu::Broadcast broadcast) -> Value {
    Type type = elementTypes[o];
    const int64_t bytes = (type.getIntOrFloatBitWidth() + 7) / 8;
    Value offset = arith::ConstantIntOp::create(b, loc, 0, 64);
    if (broadcast == ipu::Broadcast::Full || broadcast == ipu::Broadcast::Row)
      offset = arith::MulIOp::create(b, loc, col,
                                     arith::ConstantIntOp::create(b, loc, bytes, 64));
    if (broadcast == ipu::Broadcast::Full || broadcast == ipu::Broadcast::Column)
      offset = arith::AddIOp::create(
          b, loc, offset, arith::MulIOp::create(b, loc, row, pitches[o]));
    return LLVM::GEPOp::create(b, loc, ptr, b.getI8Type(), bases[o],
                               ArrayRef<LLVM::GEPArg>{offset});
  };

  // Values as the body numbers them: inputs, then each op's result (f8
  // values as their i8 code). Those the same all along a row (column and
  // scalar inputs, ops of them only) are computed once a row, before the
  // column loop, as estimateElementwise charges them.
  const std::vector<bool> invariant = ipu::rowInvariantValues(plain);
  SmallVector<Value> values(inputs + plain.ops.size());
  auto loadInput = [&](size_t o) {
    values[o] = LLVM::LoadOp::create(b, loc, k.storageType(elementTypes[o]),
                                     address(o, plain.inputs[o].broadcast));
  };
  Type f32 = b.getF32Type();
  auto emitOp = [&](size_t index) {
    const ipu::BodyOp &op = plain.ops[index];
    Type type = typeOf(op.type);
    auto operand = [&](unsigned i) { return values[op.operands[i]]; };
    Value result;
    switch (op.kind) {
    case ipu::BodyOpKind::Constant:
      if (isF8Type(type)) {
        uint8_t code = 0;
        ipu::storeElement(op.type, static_cast<float>(op.constant), &code);
        result = arith::ConstantIntOp::create(b, loc, code, 8);
      } else {
        bool losesInfo = false;
        APFloat value(op.constant);
        value.convert(cast<FloatType>(type).getFloatSemantics(),
                      APFloat::rmNearestTiesToEven, &losesInfo);
        result = arith::ConstantFloatOp::create(b, loc, cast<FloatType>(type), value);
      }
      break;
    // maxnum / minnum as compare and select: LLVM would call libm's fmaxf
    // for f16, which the object must not import.
    case ipu::BodyOpKind::MaxNumF: result = k.maxNum(operand(0), operand(1), true); break;
    case ipu::BodyOpKind::MinNumF: result = k.maxNum(operand(0), operand(1), false); break;
    case ipu::BodyOpKind::Log: result = k.log(operand(0)); break;
    case ipu::BodyOpKind::PowF: result = k.pow(operand(0), operand(1)); break;
    case ipu::BodyOpKind::Fma:
      if (type.isF16()) {
        // LLVM computes an f16 fma in f64 and rounds it with a libcall; in
        // f64 then through f32 (each rounding innocuous: 53 >= 2 * 24 + 2
        // and 24 >= 2 * 11 + 2 bits) it rounds once, as fma must.
        Type f64 = b.getF64Type();
        auto wide = [&](unsigned i) { return arith::ExtFOp::create(b, loc, f64, operand(i)); };
        Value r = math::FmaOp::create(b, loc, wide(0), wide(1), wide(2));
        r = arith::TruncFOp::create(b, loc, f32, r);
        result = arith::TruncFOp::create(b, loc, type, r);
      } else {
        result = math::FmaOp::create(b, loc, operand(0), operand(1), operand(2));
      }
      break;
    case ipu::BodyOpKind::ExtF:
    case ipu::BodyOpKind::TruncF: {
      // Conversions to or from f8 are integer code (ElementType.cpp's).
      result = k.convert(operand(0), typeOf(*plain.valueType(op.operands[0])), type);
      break;
    }
    case ipu::BodyOpKind::CmpF: {
      // f8 operands compare as the f32 values they encode (exactly).
      Value lhs = operand(0), rhs = operand(1);
      if (isF8Type(type)) {
        lhs = k.convert(lhs, type, f32);
        rhs = k.convert(rhs, type, f32);
      }
      result = arith::CmpFOp::create(
          b, loc, static_cast<arith::CmpFPredicate>(op.predicate), lhs, rhs);
      break;
    }
    case ipu::BodyOpKind::Select:
      result = arith::SelectOp::create(b, loc, operand(0), operand(1), operand(2));
      break;
    default: {
      // Every other kind is its arith or math op (bodyOpName, the body op
      // table's spelling) on the same operands and of the same type, which
      // the math expansion and the LLVM lowering below take as they come:
      // a new such op is a row of that table.
      OperationState state(loc, ipu::bodyOpName(op.kind));
      for (unsigned i = 0; i < ipu::bodyOpArity(op.kind); ++i)
        state.addOperands(operand(i));
      state.addTypes(type);
      result = b.create(state)->getResult(0);
      break;
    }
    }
    values[inputs + index] = result;
  };
  for (size_t o = 0; o < inputs; ++o)
    if (invariant[o])
      loadInput(o);
  for (size_t i = 0; i < plain.ops.size(); ++i)
    if (invariant[inputs + i])
      emitOp(i);
  auto colLoop = scf::ForOp::create(b, loc, zero, index(cols), one, accumulator);
  b.setInsertionPointToStart(colLoop.getBody());
  col = arith::IndexCastOp::create(b, loc, i64, colLoop.getInductionVar());
  for (size_t o = 0; o < inputs; ++o)
    if (!invariant[o])
      loadInput(o);
  for (size_t i = 0; i < plain.ops.size(); ++i)
    if (!invariant[inputs + i] && !(maxOfInput && afterMax[i]))
      emitOp(i);
  // (Its one input, widened exactly.)
  Value result = maxOfInput ? k.convert(values[0], elementTypes[0], f32) : values[plain.result];
  if (!reduces) {
    LLVM::StoreOp::create(b, loc, result, address(inputs, ipu::Broadcast::Full));
  } else {
    Value acc = colLoop.getRegionIterArgs().front();
    Value combined;
    switch (plain.reduction) {
    case ipu::RowReduction::Add:
      combined = arith::AddFOp::create(b, loc, acc, result);
      break;
    case ipu::RowReduction::Max:
      combined = arith::MaximumFOp::create(b, loc, acc, result);
      break;
    default:
      combined = k.maxNum(acc, result, /*maximum=*/true);
      break;
    }
    scf::YieldOp::create(b, loc, combined);
    // The row's value, after its loop.
    b.setInsertionPointAfter(colLoop);
    Value rowValue = colLoop.getResult(0);
    if (maxOfInput) {
      // The input's max is a value of its type (exactly): the ops after
      // it, then the init; a row without columns is the init alone.
      values[0] = k.convert(rowValue, f32, elementTypes[0]);
      for (size_t i = 0; i < plain.ops.size(); ++i)
        if (afterMax[i])
          emitOp(i);
      Value init = k.f32(static_cast<float>(plain.init));
      Value chained = values[plain.result];
      Value withInit = plain.reduction == ipu::RowReduction::Max
                           ? arith::MaximumFOp::create(b, loc, init, chained).getResult()
                           : k.maxNum(init, chained, /*maximum=*/true);
      Value empty = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, cols,
                                          arith::ConstantIntOp::create(b, loc, 0, 64));
      rowValue = arith::SelectOp::create(b, loc, empty, init, withInit);
    }
    LLVM::StoreOp::create(b, loc, rowValue, address(inputs, ipu::Broadcast::Column));
  }
  b.setInsertionPointAfter(rowLoop);
  func::ReturnOp::create(b, loc);
  return success();
}

/// Lowers `module` (kernel functions on scf/arith/math) to the LLVM dialect.
LogicalResult lowerToLLVMDialect(ModuleOp module) {
  MLIRContext *context = module.getContext();
  {
    RewritePatternSet patterns(context);
    // tanh, erf, exp, log, ... as polynomials in f32 (f16 extended to f32):
    // no libm call is left for the object to import.
    // Only the approximations: MLIR's other expansions would turn fma into
    // a multiply and an add and roundeven into trunc(x + 0.5), both wrong,
    // where LLVM has instructions for them on x86-64-v3.
    populateMathPolynomialApproximationPatterns(patterns);
    if (failed(applyPatternsGreedily(module, std::move(patterns))))
      return module.emitError("kernel: the math approximations did not converge");
  }
  PassManager pm(context);
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  return pm.run(module);
}

llvm::TargetMachine *kernelTargetMachine(std::string &error) {
  static std::once_flag once;
  std::call_once(once, [] {
    LLVMInitializeX86TargetInfo();
    LLVMInitializeX86Target();
    LLVMInitializeX86TargetMC();
    LLVMInitializeX86AsmPrinter();
  });
  llvm::Triple triple(kTriple);
  const llvm::Target *target = llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return nullptr;
  llvm::TargetOptions options;
  return target->createTargetMachine(triple, kKernelTargetCpu, "", options,
                                     llvm::Reloc::PIC_, std::nullopt,
                                     llvm::CodeGenOptLevel::Default);
}

/// Optimises `module` at -O2 and emits its object code.
std::optional<std::string> compileModule(llvm::Module &module,
                                         llvm::TargetMachine &machine,
                                         llvm::SmallVectorImpl<char> &object) {
  module.setTargetTriple(machine.getTargetTriple());
  module.setDataLayout(machine.createDataLayout());
  // No C library behind the object: LLVM must not turn a loop into a call
  // to memset or memcpy (a constant result is a fill).
  for (llvm::Function &function : module)
    function.addFnAttr("no-builtins");
  {
    llvm::LoopAnalysisManager lam;
    llvm::FunctionAnalysisManager fam;
    llvm::CGSCCAnalysisManager cgam;
    llvm::ModuleAnalysisManager mam;
    llvm::PassBuilder builder(&machine);
    builder.registerModuleAnalyses(mam);
    builder.registerCGSCCAnalyses(cgam);
    builder.registerFunctionAnalyses(fam);
    builder.registerLoopAnalyses(lam);
    builder.crossRegisterProxies(lam, fam, cgam, mam);
    llvm::ModulePassManager passes =
        builder.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O2);
    passes.run(module, mam);
  }
  llvm::raw_svector_ostream stream(object);
  llvm::legacy::PassManager codegen;
  if (machine.addPassesToEmitFile(codegen, stream, nullptr,
                                  llvm::CodeGenFileType::ObjectFile))
    return std::string("the x86-64 target cannot emit an object file");
  codegen.run(module);
  return std::nullopt;
}

/// Links `objects` into one shared object with LLD, in a scratch directory.
std::optional<std::string> link(ArrayRef<llvm::SmallVector<char, 0>> objects,
                                ArrayRef<std::string> names,
                                std::vector<uint8_t> &shared) {
  llvm::SmallString<128> directory;
  if (std::error_code error =
          llvm::sys::fs::createUniqueDirectory("ipu-kernels", directory))
    return "cannot create a scratch directory: " + error.message();
  std::vector<std::string> paths;
  auto cleanUp = [&] {
    for (const std::string &path : paths)
      llvm::sys::fs::remove(path);
    llvm::sys::fs::remove(directory);
  };
  for (auto [object, name] : llvm::zip(objects, names)) {
    llvm::SmallString<128> path(directory);
    llvm::sys::path::append(path, name + ".o");
    paths.push_back(std::string(path));
    std::error_code error;
    llvm::raw_fd_ostream file(path, error);
    if (error) {
      cleanUp();
      return "cannot write " + std::string(path) + ": " + error.message();
    }
    file.write(object.data(), object.size());
  }
  llvm::SmallString<128> output(directory);
  llvm::sys::path::append(output, "kernels.so");
  std::vector<const char *> args = {"ld.lld", "-shared", "--build-id=none",
                                    "--hash-style=gnu", "-z", "defs", "-z",
                                    "noexecstack", "--strip-all", "-soname",
                                    "ipu-kernels.so", "-o", output.c_str()};
  for (const std::string &path : paths)
    args.push_back(path.c_str());
  std::string messages;
  llvm::raw_string_ostream out(messages), err(messages);
  lld::Result result = lld::lldMain(args, out, err, {{lld::Gnu, &lld::elf::link}});
  paths.push_back(std::string(output));
  if (result.retCode != 0) {
    cleanUp();
    return "LLD failed: " + messages;
  }
  auto buffer = llvm::MemoryBuffer::getFile(output);
  if (!buffer) {
    cleanUp();
    return "cannot read the linked kernel object: " + buffer.getError().message();
  }
  shared.assign((*buffer)->getBufferStart(), (*buffer)->getBufferEnd());
  cleanUp();
  return std::nullopt;
}

} // namespace


std::string ipu::compiledKernelSymbol(size_t index) {
  return "ipu_kernel_" + std::to_string(index);
}

std::optional<std::string>
ipu::compileKernelObject(const std::vector<const ElementwiseBody *> &bodies,
                         std::vector<uint8_t> &object, KernelCompileStats &stats) {
  object.clear();
  stats = KernelCompileStats();
  if (bodies.empty())
    return std::nullopt;
  uint64_t cost = 0;
  for (size_t i = 0; i < bodies.size(); ++i) {
    if (std::optional<std::string> error = verifyBody(*bodies[i]))
      return "kernel " + std::to_string(i) + ": " + *error;
    cost += kernelCompileCost(*bodies[i]);
  }
  // The validator's bound, kept by every caller: nothing long compiles.
  if (cost > kMaxKernelCompileCost)
    return "compiling the kernels would cost " + std::to_string(cost) +
           " units, more than the " + std::to_string(kMaxKernelCompileCost) +
           " a package may take";
  auto start = std::chrono::steady_clock::now();
  DialectRegistry registry;
  registry.insert<func::FuncDialect, scf::SCFDialect, arith::ArithDialect,
                  math::MathDialect, LLVM::LLVMDialect>();
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  MLIRContext context(registry, MLIRContext::Threading::DISABLED);
  context.loadAllAvailableDialects();
  std::string diagnostics;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diagnostic) {
    diagnostics += diagnostic.str() + "\n";
    return success();
  });

  // MLIR, one module per kernel, in order; then each is compiled in its own
  // LLVM context, in parallel: the objects do not depend on the threads.
  std::vector<std::unique_ptr<llvm::LLVMContext>> llvmContexts;
  std::vector<std::unique_ptr<llvm::Module>> modules;
  std::vector<std::string> names;
  for (size_t i = 0; i < bodies.size(); ++i) {
    const std::string symbol = compiledKernelSymbol(i);
    OwningOpRef<ModuleOp> module = ModuleOp::create(UnknownLoc::get(&context));
    if (failed(buildKernelFunction(*bodies[i], symbol, *module)) ||
        failed(verify(*module)) || failed(lowerToLLVMDialect(*module)))
      return "kernel " + std::to_string(i) + " cannot be lowered to LLVM: " +
             diagnostics;
    llvmContexts.push_back(std::make_unique<llvm::LLVMContext>());
    std::unique_ptr<llvm::Module> llvmModule =
        translateModuleToLLVMIR(*module, *llvmContexts.back(), symbol);
    if (!llvmModule)
      return "kernel " + std::to_string(i) + " cannot be translated to LLVM IR: " +
             diagnostics;
    modules.push_back(std::move(llvmModule));
    names.push_back(symbol);
  }
  stats.lowerSeconds = secondsSince(start);
  start = std::chrono::steady_clock::now();

  std::vector<llvm::SmallVector<char, 0>> objects(modules.size());
  std::vector<std::string> errors(modules.size());
  auto compileRange = [&](size_t first, size_t stride) {
    std::string error;
    std::unique_ptr<llvm::TargetMachine> machine(kernelTargetMachine(error));
    for (size_t i = first; i < modules.size(); i += stride) {
      if (!machine) {
        errors[i] = "no x86-64 target: " + error;
        continue;
      }
      if (std::optional<std::string> failure =
              compileModule(*modules[i], *machine, objects[i]))
        errors[i] = *failure;
    }
  };
  const size_t threads = std::max<size_t>(
      1, std::min<size_t>(modules.size(), std::thread::hardware_concurrency()));
  std::vector<std::thread> pool;
  for (size_t t = 1; t < threads; ++t)
    pool.emplace_back(compileRange, t, threads);
  compileRange(0, threads);
  for (std::thread &thread : pool)
    thread.join();
  for (size_t i = 0; i < errors.size(); ++i)
    if (!errors[i].empty())
      return "kernel " + std::to_string(i) + ": " + errors[i];
  stats.compileSeconds = secondsSince(start);
  start = std::chrono::steady_clock::now();

  if (std::optional<std::string> error = link(objects, names, object))
    return "linking the kernel object: " + *error;
  stats.linkSeconds = secondsSince(start);
  stats.kernels = static_cast<unsigned>(bodies.size());
  stats.objectBytes = object.size();
  return std::nullopt;
}

namespace {

/// Appends `value`'s bytes (little-endian on this x86-64 host).
template <typename T> void appendBytes(std::string &out, T value) {
  char bytes[sizeof(T)];
  std::memcpy(bytes, &value, sizeof(T));
  out.append(bytes, sizeof(T));
}

/// Whether `path` is a directory (or, with `directory` false, a regular
/// file) owned by this user that nobody else may write.
bool ownedByUserAlone(const std::string &path, bool directory) {
  struct stat info;
  if (lstat(path.c_str(), &info) != 0)
    return false;
  const bool kind = directory ? S_ISDIR(info.st_mode) : S_ISREG(info.st_mode);
  return kind && info.st_uid == geteuid() && (info.st_mode & (S_IWGRP | S_IWOTH)) == 0;
}

/// Creates `path` and its missing parents, each new one private to the user.
bool makePrivateDirectories(const std::string &path) {
  if (path.empty())
    return false;
  struct stat info;
  if (stat(path.c_str(), &info) == 0)
    return S_ISDIR(info.st_mode);
  const size_t slash = path.find_last_of('/');
  if (slash != std::string::npos && slash > 0 &&
      !makePrivateDirectories(path.substr(0, slash)))
    return false;
  return mkdir(path.c_str(), 0700) == 0 || errno == EEXIST;
}

bool readWholeFile(const std::string &path, std::vector<uint8_t> &bytes) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer)
    return false;
  bytes.assign((*buffer)->getBufferStart(), (*buffer)->getBufferEnd());
  return true;
}

/// Writes `bytes` to `path` through a private temporary file, synced to
/// disk before it is renamed into place (and the directory after), so that
/// neither a reader nor a crash ever leaves a partial entry under the name.
bool writeCacheEntry(const std::string &path, const std::vector<uint8_t> &bytes) {
  std::string temporary = path + ".tmp." + std::to_string(getpid());
  int fd = open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0)
    return false;
  size_t written = 0;
  while (written < bytes.size()) {
    ssize_t n = write(fd, bytes.data() + written, bytes.size() - written);
    if (n <= 0)
      break;
    written += static_cast<size_t>(n);
  }
  const bool synced = written == bytes.size() && fsync(fd) == 0;
  const bool complete = close(fd) == 0 && synced;
  if (!complete || rename(temporary.c_str(), path.c_str()) != 0) {
    unlink(temporary.c_str());
    return false;
  }
  const std::string directory = path.substr(0, path.find_last_of('/'));
  int directoryFd = open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (directoryFd >= 0) {
    (void)fsync(directoryFd); // The entry is whole either way; this keeps it.
    close(directoryFd);
  }
  return true;
}

/// A cache entry: kEntryMagic, the object's size (8 bytes, little-endian),
/// its SHA-256, then the object.
constexpr char kEntryMagic[8] = {'i', 'p', 'u', 'k', 'o', 'b', 'j', '1'};
constexpr size_t kEntryHeaderBytes = sizeof(kEntryMagic) + 8 + 32;

} // namespace

std::vector<uint8_t> ipu::kernelCacheEntry(const std::vector<uint8_t> &object) {
  std::vector<uint8_t> entry(kEntryMagic, kEntryMagic + sizeof(kEntryMagic));
  const uint64_t size = object.size();
  for (unsigned b = 0; b < 8; ++b)
    entry.push_back(static_cast<uint8_t>(size >> (8 * b)));
  std::array<uint8_t, 32> digest = llvm::SHA256::hash(object);
  entry.insert(entry.end(), digest.begin(), digest.end());
  entry.insert(entry.end(), object.begin(), object.end());
  return entry;
}

std::optional<std::string>
ipu::kernelObjectOfCacheEntry(const std::vector<uint8_t> &entry,
                              std::vector<uint8_t> &object) {
  object.clear();
  if (entry.size() < kEntryHeaderBytes ||
      std::memcmp(entry.data(), kEntryMagic, sizeof(kEntryMagic)) != 0)
    return "it is " + std::to_string(entry.size()) +
           " bytes without the header of an entry";
  uint64_t size = 0;
  for (unsigned b = 0; b < 8; ++b)
    size |= uint64_t(entry[sizeof(kEntryMagic) + b]) << (8 * b);
  if (size != entry.size() - kEntryHeaderBytes)
    return "it holds " + std::to_string(entry.size() - kEntryHeaderBytes) +
           " bytes of an object of " + std::to_string(size);
  llvm::ArrayRef<uint8_t> bytes(entry.data() + kEntryHeaderBytes, size);
  std::array<uint8_t, 32> digest = llvm::SHA256::hash(bytes);
  if (std::memcmp(digest.data(), entry.data() + sizeof(kEntryMagic) + 8, 32) != 0)
    return std::string("its object does not have the SHA-256 it was stored with");
  object.assign(bytes.begin(), bytes.end());
  return std::nullopt;
}

std::string
ipu::kernelCacheKey(const std::vector<const ElementwiseBody *> &bodies) {
  // Format 2: entries carry their object's digest (kernelCacheEntry).
  // Format 3: ops the same along a row are computed once a row.
  // Format 4: a max takes its input's max, then the ops after it
  // (opsAfterRowMax).
  std::string encoding = "ipu-kernel-cache 4 abi " +
                         std::to_string(kKernelAbiVersion) + " llvm " +
                         LLVM_VERSION_STRING + " cpu " + kKernelTargetCpu;
  appendBytes<uint64_t>(encoding, bodies.size());
  for (const ElementwiseBody *body : bodies) {
    appendBytes<uint64_t>(encoding, body->inputs.size());
    for (const ElementwiseInput &input : body->inputs) {
      appendBytes<uint8_t>(encoding, static_cast<uint8_t>(input.type));
      appendBytes<uint8_t>(encoding, static_cast<uint8_t>(input.broadcast));
    }
    appendBytes<uint64_t>(encoding, body->ops.size());
    for (const BodyOp &op : body->ops) {
      appendBytes<uint8_t>(encoding, static_cast<uint8_t>(op.kind));
      appendBytes<uint8_t>(encoding, static_cast<uint8_t>(op.type));
      appendBytes<uint8_t>(encoding, op.predicate);
      for (uint32_t operand : op.operands)
        appendBytes<uint32_t>(encoding, operand);
      appendBytes<double>(encoding, op.constant);
    }
    appendBytes<uint32_t>(encoding, body->result);
    appendBytes<uint8_t>(encoding, static_cast<uint8_t>(body->resultType));
    appendBytes<uint8_t>(encoding, static_cast<uint8_t>(body->reduction));
    appendBytes<double>(encoding, body->init);
  }
  std::array<uint8_t, 32> digest =
      llvm::SHA256::hash(llvm::ArrayRef<uint8_t>(
          reinterpret_cast<const uint8_t *>(encoding.data()), encoding.size()));
  static const char kHex[] = "0123456789abcdef";
  std::string key;
  for (uint8_t byte : digest) {
    key += kHex[byte >> 4];
    key += kHex[byte & 15];
  }
  return key;
}

std::string ipu::defaultKernelCacheDirectory() {
  if (const char *explicitDirectory = std::getenv("IPU_KERNEL_CACHE"))
    return explicitDirectory;
  if (const char *cache = std::getenv("XDG_CACHE_HOME"); cache && *cache == '/')
    return std::string(cache) + "/ipu-run/kernels";
  if (const char *home = std::getenv("HOME"); home && *home == '/')
    return std::string(home) + "/.cache/ipu-run/kernels";
  return "";
}

CompiledKernels::~CompiledKernels() { unmap(); }

void CompiledKernels::unmap() {
  if (handle)
    dlclose(handle);
  handle = nullptr;
  if (fd >= 0)
    close(fd);
  fd = -1;
}

std::optional<std::string> CompiledKernels::map(Package &package,
                                                const std::vector<uint8_t> &object) {
  unmap();
  fd = memfd_create("ipu-kernels", MFD_CLOEXEC);
  if (fd < 0)
    return std::string("memfd_create failed: ") + std::strerror(errno);
  size_t written = 0;
  while (written < object.size()) {
    ssize_t n = write(fd, object.data() + written, object.size() - written);
    if (n <= 0)
      return std::string("writing the object to memory failed: ") + std::strerror(errno);
    written += static_cast<size_t>(n);
  }
  std::string path = "/proc/self/fd/" + std::to_string(fd);
  handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char *error = dlerror();
    return "the dynamic loader refuses the compiled object: " +
           std::string(error ? error : "unknown error");
  }
  for (size_t i = 0; i < package.kernels.size(); ++i) {
    const std::string symbol = compiledKernelSymbol(i);
    dlerror();
    void *address = dlsym(handle, symbol.c_str());
    if (!address)
      return "kernel " + std::to_string(i) + " has no symbol '" + symbol +
             "' in the compiled object";
    package.kernels[i]->entry = reinterpret_cast<ElementwiseEntry>(address);
  }
  return std::nullopt;
}

std::optional<std::string> CompiledKernels::load(Package &package,
                                                 const std::string &cacheDirectory,
                                                 KernelCompileStats &stats) {
  stats = KernelCompileStats();
  if (package.kernels.empty())
    return std::nullopt;
  // The code is built for x86-64-v3: refuse a host that would fault on its
  // first AVX2 or F16C instruction.
  __builtin_cpu_init();
  if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("f16c") ||
      !__builtin_cpu_supports("fma"))
    return "generated kernels: built for x86-64-v3 (AVX2, F16C, FMA), which "
           "this host does not support";
  std::vector<const ElementwiseBody *> bodies;
  for (const std::shared_ptr<ElementwiseKernel> &kernel : package.kernels)
    bodies.push_back(&kernel->body());

  std::vector<uint8_t> object;
  std::string entry;
  std::vector<std::string> warnings;
  if (!cacheDirectory.empty()) {
    if (!makePrivateDirectories(cacheDirectory) ||
        !ownedByUserAlone(cacheDirectory, /*directory=*/true)) {
      warnings.push_back("kernel cache directory is not a directory of this "
                         "user's that only it may write; compiling without it");
    } else {
      entry = cacheDirectory + "/" + kernelCacheKey(bodies) + ".so";
      // Only an entry this user alone could have written is trusted, and
      // only when it holds the object it was written with: a damaged one
      // (a short write, a bad disk) is discarded and compiled again.
      std::vector<uint8_t> bytes;
      if (ownedByUserAlone(entry, /*directory=*/false) && readWholeFile(entry, bytes)) {
        std::optional<std::string> damage = kernelObjectOfCacheEntry(bytes, object);
        if (!damage) {
          damage = map(package, object);
          if (!damage)
            stats.cached = true;
        }
        if (damage) {
          warnings.push_back("kernel cache entry '" + escapeText(entry) +
                             "' is damaged (" + *damage +
                             "); discarding it and compiling again");
          unmap();
          for (const std::shared_ptr<ElementwiseKernel> &kernel : package.kernels)
            kernel->entry = nullptr;
          unlink(entry.c_str());
        }
      }
    }
  }
  if (!stats.cached) {
    if (std::optional<std::string> error = compileKernelObject(bodies, object, stats))
      return "generated kernels: " + *error;
    if (!entry.empty() && !writeCacheEntry(entry, kernelCacheEntry(object)))
      warnings.push_back("cannot write the kernel cache entry '" + escapeText(entry) +
                         "'; it is compiled again next time");
    if (std::optional<std::string> error = map(package, object))
      return "generated kernels: " + *error;
  }
  for (const std::string &warning : warnings)
    stats.cacheWarning += (stats.cacheWarning.empty() ? "" : "; ") + warning;
  stats.kernels = static_cast<unsigned>(bodies.size());
  stats.objectBytes = object.size();
  return std::nullopt;
}
