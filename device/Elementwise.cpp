//===- Elementwise.cpp - Bodies of generated kernels: check, cost, evaluate ===//
//
// The generated code itself comes from MLIR (lib/KernelCompiler);
// this file holds what the compiler, the validator, the simulator and the
// host reference need without it: the body's rules, its cycle estimate and
// its value on one element.
//
//===----------------------------------------------------------------------===//

#include "IPU/Device/Elementwise.h"

#include "IPU/Support/ElementType.h"
#include "KernelImpls.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace ipu {

namespace {

/// What cost a body op's row asks about: the op in its body, the vector it
/// runs on (`lanes` elements, `share` vectors of its own type).
struct CostContext {
  const TargetModel &t;
  const ElementwiseBody &body;
  const BodyOp &op;
  unsigned lanes;
  double share;
  bool half;
  /// `share` vectors at the f16 or f32 rate.
  double pick(double f16, double f32) const {
    return share * (half ? f16 : f32);
  }
};

/// Everything this file knows of one kind of body op, in one row of
/// kBodyOps: a new scalar op is a row there (and its MLIR emission in
/// lib/KernelCompiler, which runs on the host).
struct BodyOpModel {
  BodyOpKind kind;
  std::string_view name; ///< Its arith/math spelling.
  unsigned arity;
  /// Its exact value on operands a, b, c (before rounding to its type).
  double (*value)(const BodyOp &op, double a, double b, double c);
  /// How far that value can move when the operands move by their bounds
  /// ea, eb, ec: the op's own conditioning, over the whole interval where
  /// that is cheap.
  double (*propagated)(double a, double b, double c, double value, double ea, double eb,
                       double ec);
  /// For an op the device approximates (a transcendental): |x f'(x)| +
  /// |f(x)| at its operands, what an f32 approximation's error scales with
  /// (the result's last place, and the argument's carried through the
  /// function). Null for an exactly rounded op.
  double (*approximationScale)(double a, double b, double value);
  /// Worker instructions on one vector of `lanes` elements (TargetModel
  /// fields, poplibs' rates).
  double (*instructions)(const CostContext &c);
};

const BodyOpModel &modelOf(BodyOpKind kind);


/// arith::CmpFPredicate: false, oeq, ogt, oge, olt, ole, one, ord, ueq, ugt,
/// uge, ult, ule, une, uno, true.
constexpr uint8_t kPredicates = 16;

bool compare(uint8_t predicate, double a, double b) {
  const bool unordered = std::isnan(a) || std::isnan(b);
  auto ordered = [&](bool value) { return !unordered && value; };
  auto orUnordered = [&](bool value) { return unordered || value; };
  switch (predicate) {
  case 0: return false;
  case 1: return ordered(a == b);
  case 2: return ordered(a > b);
  case 3: return ordered(a >= b);
  case 4: return ordered(a < b);
  case 5: return ordered(a <= b);
  case 6: return ordered(a != b);
  case 7: return !unordered;
  case 8: return orUnordered(a == b);
  case 9: return orUnordered(a > b);
  case 10: return orUnordered(a >= b);
  case 11: return orUnordered(a < b);
  case 12: return orUnordered(a <= b);
  case 13: return orUnordered(a != b);
  case 14: return unordered;
  default: return true;
  }
}

/// `value` rounded to `type` (round to nearest even; f8 saturating).
double roundTo(ElementType type, double value) {
  // Rounding a double to f32 first cannot change the f16 or f8 result of a
  // value that was computed exactly (double rounding is innocuous here:
  // f32 keeps more than twice their precision plus two bits).
  float single = static_cast<float>(value);
  uint8_t bytes[4];
  storeElement(type, single, bytes);
  return loadElement(type, bytes);
}

std::string opText(const ElementwiseBody &body, size_t index) {
  return "body op " + std::to_string(index) + " '" +
         std::string(bodyOpName(body.ops[index].kind)) + "'";
}

unsigned bits(ElementType type) { return elementBytes(type) * 8; }

} // namespace

std::string_view bodyOpName(BodyOpKind kind) { return modelOf(kind).name; }

std::optional<BodyOpKind> parseBodyOpName(std::string_view name) {
  for (unsigned k = 0; k < kBodyOpKinds; ++k)
    if (modelOf(BodyOpKind(k)).name == name)
      return BodyOpKind(k);
  return std::nullopt;
}

unsigned bodyOpArity(BodyOpKind kind) { return modelOf(kind).arity; }

std::string_view broadcastName(Broadcast broadcast) {
  switch (broadcast) {
  case Broadcast::Full: return "full";
  case Broadcast::Row: return "row";
  case Broadcast::Scalar: return "scalar";
  case Broadcast::Column: return "column";
  }
  return "?";
}

std::optional<Broadcast> parseBroadcastName(std::string_view name) {
  for (unsigned b = 0; b < kBroadcasts; ++b)
    if (broadcastName(static_cast<Broadcast>(b)) == name)
      return static_cast<Broadcast>(b);
  return std::nullopt;
}

std::string_view rowReductionName(RowReduction reduction) {
  switch (reduction) {
  case RowReduction::None: return "none";
  case RowReduction::Add: return "add";
  case RowReduction::Max: return "max";
  case RowReduction::MaxNum: return "maxnum";
  }
  return "?";
}

std::optional<RowReduction> parseRowReductionName(std::string_view name) {
  for (unsigned r = 0; r < kRowReductions; ++r)
    if (rowReductionName(static_cast<RowReduction>(r)) == name)
      return static_cast<RowReduction>(r);
  return std::nullopt;
}

std::optional<std::string> columnReductionKernel(RowReduction reduction) {
  if (reduction == RowReduction::None)
    return std::nullopt;
  return "reduce_columns_" + std::string(rowReductionName(reduction));
}

bool combinesByColumns(RowReduction reduction, double init) {
  return reduction != RowReduction::None &&
         (reduction != RowReduction::Add || init == reductionIdentity(reduction));
}

uint64_t estimateSplitRowCombine(const TargetModel &target, RowReduction reduction,
                                 double init, int64_t batches, int64_t rows,
                                 int64_t parts, ElementType resultType) {
  if (combinesByColumns(reduction, init))
    return estimateReduceCycles(target, batches, rows, parts, ElementType::F32, resultType);
  ElementwiseBody combine;
  combine.inputs = {{ElementType::F32, Broadcast::Full}};
  combine.resultType = resultType;
  combine.reduction = reduction;
  combine.init = init;
  return estimateElementwise(target, combine, batches * rows, parts).total;
}

double reductionIdentity(RowReduction reduction) {
  return reduction == RowReduction::Add ? 0.0 : -INFINITY;
}

double combineReduction(RowReduction reduction, double acc, double value) {
  switch (reduction) {
  case RowReduction::None: return value;
  case RowReduction::Add: return acc + value;
  case RowReduction::Max:
    // arith.maximumf: NaN wins, +0 above -0.
    if (std::isnan(acc) || std::isnan(value))
      return NAN;
    if (acc == value)
      return std::signbit(acc) ? value : acc;
    return std::max(acc, value);
  case RowReduction::MaxNum: return std::fmax(acc, value);
  }
  return value;
}

std::optional<ElementType> ElementwiseBody::valueType(uint32_t value) const {
  if (value < inputs.size())
    return inputs[value].type;
  const BodyOp &op = ops[value - inputs.size()];
  if (op.kind == BodyOpKind::CmpF)
    return std::nullopt;
  return op.type;
}

std::optional<std::string> verifyBody(const ElementwiseBody &body) {
  if (body.inputs.empty())
    return std::string("the body has no inputs");
  for (const ElementwiseInput &input : body.inputs)
    if (static_cast<unsigned>(input.type) > 3 ||
        static_cast<unsigned>(input.broadcast) >= kBroadcasts)
      return std::string("an input has an unknown type or broadcast");
  if (static_cast<unsigned>(body.reduction) >= kRowReductions)
    return std::string("the body has an unknown row reduction");
  if (body.reduction != RowReduction::None) {
    if (body.resultType != ElementType::F32)
      return "a " + std::string(rowReductionName(body.reduction)) +
             " reduction accumulates in f32, not " +
             std::string(elementTypeName(body.resultType));
    if (!std::isnan(body.init) && roundTo(ElementType::F32, body.init) != body.init)
      return "the reduction's init is not an f32 value";
  }
  const size_t inputs = body.inputs.size();
  for (size_t i = 0; i < body.ops.size(); ++i) {
    const BodyOp &op = body.ops[i];
    if (static_cast<unsigned>(op.kind) >= kBodyOpKinds)
      return "body op " + std::to_string(i) + " has an unknown kind";
    if (static_cast<unsigned>(op.type) > 3)
      return opText(body, i) + " has an unknown type";
    const unsigned arity = bodyOpArity(op.kind);
    // Slots past the arity are never read; zero keeps one encoding (and one
    // hash) per body, and no reader can mistake them for values.
    for (unsigned o = arity; o < 3; ++o)
      if (op.operands[o] != 0)
        return opText(body, i) + " takes " + std::to_string(arity) + " operand" +
               (arity == 1 ? "" : "s") + ", but its unused operand slot " +
               std::to_string(o) + " holds " + std::to_string(op.operands[o]) +
               " (unused slots must be 0)";
    std::optional<ElementType> operandTypes[3];
    for (unsigned o = 0; o < arity; ++o) {
      if (op.operands[o] >= inputs + i)
        return opText(body, i) + " uses value " +
               std::to_string(op.operands[o]) + ", which is not defined before it";
      operandTypes[o] = body.valueType(op.operands[o]);
    }
    auto want = [&](unsigned o, std::optional<ElementType> type) -> std::optional<std::string> {
      if (operandTypes[o] == type)
        return std::nullopt;
      return opText(body, i) + ": operand " + std::to_string(o) + " is " +
             (operandTypes[o] ? std::string(elementTypeName(*operandTypes[o]))
                              : std::string("a boolean")) +
             ", expected " +
             (type ? std::string(elementTypeName(*type)) : std::string("a boolean"));
    };
    const bool f8 = isF8(op.type);
    switch (op.kind) {
    case BodyOpKind::Constant:
      if (!std::isnan(op.constant) && roundTo(op.type, op.constant) != op.constant) {
        char text[32];
        std::snprintf(text, sizeof(text), "%.9g", op.constant);
        return opText(body, i) + ": " + text + " is not a " +
               std::string(elementTypeName(op.type)) + " value";
      }
      break;
    case BodyOpKind::ExtF:
    case BodyOpKind::TruncF: {
      if (!operandTypes[0])
        return want(0, ElementType::F32);
      const bool wider = bits(op.type) > bits(*operandTypes[0]);
      // Between the two f8 formats arith has no cast (same width).
      if ((op.kind == BodyOpKind::ExtF) != wider || *operandTypes[0] == op.type ||
          bits(op.type) == bits(*operandTypes[0]))
        return opText(body, i) + " cannot convert " +
               std::string(elementTypeName(*operandTypes[0])) + " to " +
               std::string(elementTypeName(op.type));
      break;
    }
    case BodyOpKind::CmpF:
      if (op.predicate >= kPredicates)
        return opText(body, i) + " has predicate " + std::to_string(op.predicate);
      if (auto error = want(0, op.type))
        return error;
      if (auto error = want(1, op.type))
        return error;
      break;
    case BodyOpKind::Select:
      if (auto error = want(0, std::nullopt))
        return error;
      if (auto error = want(1, op.type))
        return error;
      if (auto error = want(2, op.type))
        return error;
      break;
    default:
      // Arithmetic happens in f16 or f32; f8 values are only stored.
      if (f8)
        return opText(body, i) + " computes in " +
               std::string(elementTypeName(op.type)) +
               "; extend f8 values to f16 or f32 first";
      for (unsigned o = 0; o < arity; ++o)
        if (auto error = want(o, op.type))
          return error;
      break;
    }
  }
  if (body.result >= inputs + body.ops.size())
    return "the body's result names value " + std::to_string(body.result) +
           ", which does not exist";
  std::optional<ElementType> resultType = body.valueType(body.result);
  if (resultType != body.resultType)
    return (body.result >= inputs ? opText(body, body.result - inputs) + ": "
                                  : "input " + std::to_string(body.result) + ": ") +
           "the body yields " +
           (resultType ? std::string(elementTypeName(*resultType))
                       : std::string("a boolean")) +
           " but its result is " + std::string(elementTypeName(body.resultType));
  return std::nullopt;
}

float evaluateBody(const ElementwiseBody &body, const float *inputs) {
  return evaluateBodyWithBound(body, inputs, nullptr);
}

float evaluateBodyWithBound(const ElementwiseBody &body, const float *inputs,
                            double *bound) {
  std::vector<double> values(body.inputs.size() + body.ops.size());
  std::vector<double> bounds(bound ? values.size() : 0, 0.0);
  for (size_t i = 0; i < body.inputs.size(); ++i)
    values[i] = inputs[i];
  for (size_t i = 0; i < body.ops.size(); ++i) {
    const BodyOp &op = body.ops[i];
    // Only the op's own operands: verifyBody bounds those, not the rest.
    const unsigned arity = bodyOpArity(op.kind);
    auto operandOf = [&](const std::vector<double> &of, unsigned slot) {
      return slot < arity ? of[op.operands[slot]] : 0.0;
    };
    const double a = operandOf(values, 0), b = operandOf(values, 1),
                 c = operandOf(values, 2);
    const BodyOpModel &model = modelOf(op.kind);
    const double value = model.value(op, a, b, c);
    const size_t index = body.inputs.size() + i;
    values[index] = op.kind == BodyOpKind::CmpF ? value : roundTo(op.type, value);
    if (!bound)
      continue;
    const double ea = operandOf(bounds, 0), eb = operandOf(bounds, 1),
                 ec = operandOf(bounds, 2);
    const double rounded = values[index];
    if (op.kind == BodyOpKind::CmpF) {
      // 1: the comparison may come out either way on the device.
      bounds[index] = (ea > 0 || eb > 0) && !(std::fabs(a - b) > ea + eb) ? 1 : 0;
      continue;
    }
    if (op.kind == BodyOpKind::Select) {
      bounds[index] = ea > 0 ? std::fabs(b - c) + std::max(eb, ec) : (a != 0 ? eb : ec);
      continue;
    }
    double e = model.propagated(a, b, c, rounded, ea, eb, ec);
    const double scale = model.approximationScale ? model.approximationScale(a, b, rounded) : -1;
    // An f32 approximation is relative down to the smallest normal f32;
    // below it, it may flush to zero.
    if (scale >= 0)
      e += kTranscendentalUlps * 0x1p-23 * scale + 0x1p-126;
    // Operands that may differ, or an approximation, may round to either
    // neighbour of the exact value: up to an ulp of the type either way.
    if (e > 0)
      e += 4 * unitRoundoff(op.type) * std::fabs(rounded) + smallestSubnormal(op.type);
    // A non-finite value only matches itself: it carries no bound.
    bounds[index] = !std::isfinite(rounded) ? 0 : std::isnan(e) ? HUGE_VAL : e;
  }
  if (bound)
    *bound = bounds[body.result];
  return static_cast<float>(values[body.result]);
}

uint64_t kernelCompileCost(const ElementwiseBody &body) {
  // Measured: chains of 128 to 2,048 ops of one kind in one kernel, and
  // 100 to 400 kernels of one op, compiled by ipu-run (wall time, 2 cores).
  auto weight = [&](const BodyOp &op) -> uint64_t {
    switch (op.kind) {
    case BodyOpKind::Constant: return 1;
    case BodyOpKind::PowF: return 100; // 10 ms: log, exp and their guards.
    case BodyOpKind::Log: return 53;
    case BodyOpKind::Erf: return 51;
    case BodyOpKind::Exp: return 27;
    case BodyOpKind::Tanh: return 23;
    case BodyOpKind::ExtF:
    case BodyOpKind::TruncF: {
      // To or from f8: integer code (rounding, saturation, subnormals).
      const bool known = op.operands[0] < body.inputs.size() + body.ops.size();
      const bool fromF8 = known && isF8(body.valueType(op.operands[0]).value_or(op.type));
      return isF8(op.type) || fromF8 ? 8 : 2;
    }
    default: return 2; // 0.15 to 0.2 ms: arithmetic, sqrt, rsqrt, compares.
    }
  };
  uint64_t ops = body.inputs.size();
  for (const BodyOp &op : body.ops)
    ops += weight(op);
  return kKernelCompileOverhead + ops + ops * ops / kKernelCompileQuadratic;
}

uint64_t fnv1a64(const uint8_t *bytes, size_t size, uint64_t seed) {
  uint64_t hash = seed;
  for (size_t i = 0; i < size; ++i) {
    hash ^= bytes[i];
    hash *= 0x100000001b3ull;
  }
  return hash;
}

uint64_t bodyHash(const ElementwiseBody &body) {
  std::vector<uint8_t> encoding;
  auto put = [&](uint64_t value, unsigned bytes) {
    for (unsigned b = 0; b < bytes; ++b)
      encoding.push_back(static_cast<uint8_t>(value >> (8 * b)));
  };
  put(body.inputs.size(), 4);
  for (const ElementwiseInput &input : body.inputs) {
    put(static_cast<uint8_t>(input.type), 1);
    put(static_cast<uint8_t>(input.broadcast), 1);
  }
  put(body.ops.size(), 4);
  for (const BodyOp &op : body.ops) {
    put(static_cast<uint8_t>(op.kind), 1);
    put(static_cast<uint8_t>(op.type), 1);
    put(op.predicate, 1);
    for (uint32_t operand : op.operands)
      put(operand, 4);
    uint64_t constant;
    std::memcpy(&constant, &op.constant, sizeof(constant));
    put(op.kind == BodyOpKind::Constant ? constant : 0, 8);
  }
  put(body.result, 4);
  put(static_cast<uint8_t>(body.resultType), 1);
  // Elementwise bodies hash as they did before reductions existed.
  if (body.reduction != RowReduction::None) {
    put(static_cast<uint8_t>(body.reduction), 1);
    uint64_t init;
    std::memcpy(&init, &body.init, sizeof(init));
    put(init, 8);
  }
  return fnv1a64(encoding.data(), encoding.size());
}

std::string elementwiseSymbol(const ElementwiseBody &body) {
  char text[32];
  std::snprintf(text, sizeof(text), "ipu_ew_%016llx",
                static_cast<unsigned long long>(bodyHash(body)));
  return text;
}

static double castInstructions(const TargetModel &t, ElementType from,
                               ElementType to) {
  auto step = [&](ElementType a, ElementType b) -> double {
    if (a == b)
      return 0;
    if (isF8(a) != isF8(b) && (a == ElementType::F32 || b == ElementType::F32))
      return t.ewCastF32F16Instructions + t.ewCastF16F8Instructions;
    if (isF8(a) || isF8(b))
      return t.ewCastF16F8Instructions;
    return t.ewCastF32F16Instructions;
  };
  return step(from, to);
}

namespace {

// Shared rows' pieces.
double exactlyMoves(double, double, double, double, double ea, double, double) {
  return ea;
}
double eitherMoves(double, double, double, double, double ea, double eb, double) {
  return std::max(ea, eb);
}
double sumMoves(double, double, double, double, double ea, double eb, double) {
  return ea + eb;
}
double nothingMoves(double, double, double, double, double, double, double) { return 0; }
double arithmetic(const CostContext &c) {
  return c.pick(c.t.ewArithInstructionsF16, c.t.ewArithInstructionsF32);
}
/// Per 4 elements at the cast codelet's rates; between f32 and f8 the
/// value goes through f16.
double cast(const CostContext &c) {
  std::optional<ElementType> from = c.body.valueType(c.op.operands[0]);
  return c.lanes / 4.0 * castInstructions(c.t, from.value_or(c.op.type), c.op.type);
}
constexpr double kTwoOverSqrtPi = 1.1283791670955126;
constexpr double kInf = HUGE_VAL;

constexpr BodyOpModel kBodyOps[] = {
    {BodyOpKind::Constant, "arith.constant", 0,
     [](const BodyOp &op, double, double, double) { return op.constant; }, nothingMoves,
     nullptr, [](const CostContext &) { return 0.0; }}, // Hoisted out of the loop.
    {BodyOpKind::AddF, "arith.addf", 2,
     [](const BodyOp &, double a, double b, double) { return a + b; }, sumMoves, nullptr,
     arithmetic},
    {BodyOpKind::SubF, "arith.subf", 2,
     [](const BodyOp &, double a, double b, double) { return a - b; }, sumMoves, nullptr,
     arithmetic},
    {BodyOpKind::MulF, "arith.mulf", 2,
     [](const BodyOp &, double a, double b, double) { return a * b; },
     [](double a, double b, double, double, double ea, double eb, double) {
       return std::fabs(a) * eb + std::fabs(b) * ea + ea * eb;
     },
     nullptr, arithmetic},
    {BodyOpKind::DivF, "arith.divf", 2,
     [](const BodyOp &, double a, double b, double) { return a / b; },
     [](double, double b, double, double value, double ea, double eb, double) {
       if (ea == 0 && eb == 0)
         return 0.0;
       return std::fabs(b) > eb ? (ea + std::fabs(value) * eb) / (std::fabs(b) - eb) : kInf;
     },
     nullptr,
     [](const CostContext &c) {
       return c.pick(c.t.ewDivideInstructionsF16, c.t.ewDivideInstructionsF32);
     }},
    {BodyOpKind::NegF, "arith.negf", 1,
     [](const BodyOp &, double a, double, double) { return -a; }, exactlyMoves, nullptr,
     arithmetic},
    {BodyOpKind::MaximumF, "arith.maximumf", 2,
     [](const BodyOp &, double a, double b, double) {
       return combineReduction(RowReduction::Max, a, b);
     },
     eitherMoves, nullptr, arithmetic},
    {BodyOpKind::MinimumF, "arith.minimumf", 2,
     [](const BodyOp &, double a, double b, double) {
       return std::isnan(a) || std::isnan(b) ? NAN
              : a == b                      ? (std::signbit(a) ? a : b)
                                            : std::min(a, b);
     },
     eitherMoves, nullptr, arithmetic},
    {BodyOpKind::MaxNumF, "arith.maxnumf", 2,
     [](const BodyOp &, double a, double b, double) {
       return combineReduction(RowReduction::MaxNum, a, b);
     },
     eitherMoves, nullptr, arithmetic},
    {BodyOpKind::MinNumF, "arith.minnumf", 2,
     [](const BodyOp &, double a, double b, double) { return std::fmin(a, b); },
     eitherMoves, nullptr, arithmetic},
    {BodyOpKind::AbsF, "math.absf", 1,
     [](const BodyOp &, double a, double, double) { return std::fabs(a); }, exactlyMoves,
     nullptr, arithmetic},
    {BodyOpKind::Exp, "math.exp", 1,
     [](const BodyOp &, double a, double, double) { return std::exp(a); },
     [](double, double, double, double value, double ea, double, double) {
       return ea == 0 ? 0 : std::fabs(value) * std::expm1(ea);
     },
     [](double a, double, double value) { return std::fabs(value) * (1 + std::fabs(a)); },
     [](const CostContext &c) {
       return c.pick(c.t.ewExpInstructionsF16, c.t.ewExpInstructionsF32);
     }},
    {BodyOpKind::Log, "math.log", 1,
     [](const BodyOp &, double a, double, double) { return std::log(a); },
     [](double a, double, double, double, double ea, double, double) {
       if (ea == 0)
         return 0.0;
       return a > ea ? -std::log1p(-ea / a) : kInf;
     },
     [](double, double, double value) { return std::fabs(value) + 1; },
     [](const CostContext &c) {
       return c.pick(c.t.ewLogInstructionsF16, c.t.ewLogInstructionsF32);
     }},
    {BodyOpKind::Tanh, "math.tanh", 1,
     [](const BodyOp &, double a, double, double) { return std::tanh(a); },
     [](double, double, double, double, double ea, double, double) {
       return std::min(ea, 2.0); // |tanh'| <= 1.
     },
     [](double a, double, double value) {
       return std::fabs(value) + std::fabs(a) * (1 - value * value);
     },
     [](const CostContext &c) {
       return c.pick(c.t.ewTanhInstructionsF16, c.t.ewTanhInstructionsF32);
     }},
    {BodyOpKind::Erf, "math.erf", 1,
     [](const BodyOp &, double a, double, double) { return std::erf(a); },
     [](double, double, double, double, double ea, double, double) {
       return std::min(ea * kTwoOverSqrtPi, 2.0);
     },
     [](double a, double, double value) {
       return std::fabs(value) + std::fabs(a) * kTwoOverSqrtPi * std::exp(-a * a);
     },
     [](const CostContext &c) {
       return c.pick(c.t.ewErfInstructionsF16, c.t.ewErfInstructionsF32);
     }},
    {BodyOpKind::Sqrt, "math.sqrt", 1,
     [](const BodyOp &, double a, double, double) { return std::sqrt(a); },
     [](double a, double, double, double, double ea, double, double) {
       if (ea == 0)
         return 0.0;
       return std::sqrt(std::max(a, 0.0)) - std::sqrt(std::max(a - ea, 0.0));
     },
     nullptr,
     [](const CostContext &c) {
       return c.pick(c.t.ewSqrtInstructionsF16, c.t.ewSqrtInstructionsF32);
     }},
    {BodyOpKind::Rsqrt, "math.rsqrt", 1,
     [](const BodyOp &, double a, double, double) { return 1.0 / std::sqrt(a); },
     [](double a, double, double, double, double ea, double, double) {
       if (ea == 0)
         return 0.0;
       return a > ea ? 1.0 / std::sqrt(a - ea) - 1.0 / std::sqrt(a) : kInf;
     },
     [](double, double, double value) { return 1.5 * std::fabs(value); },
     [](const CostContext &c) {
       return c.pick(c.t.ewRsqrtInstructionsF16, c.t.ewRsqrtInstructionsF32);
     }},
    {BodyOpKind::Fma, "math.fma", 3,
     [](const BodyOp &, double a, double b, double c) { return a * b + c; },
     [](double a, double b, double, double, double ea, double eb, double ec) {
       return std::fabs(a) * eb + std::fabs(b) * ea + ea * eb + ec;
     },
     nullptr,
     [](const CostContext &c) {
       return c.pick(c.t.ewFmaInstructionsF16, c.t.ewFmaInstructionsF32);
     }},
    {BodyOpKind::PowF, "math.powf", 2,
     [](const BodyOp &, double a, double b, double) { return std::pow(a, b); },
     [](double a, double b, double, double value, double ea, double eb, double) {
       if (ea == 0 && eb == 0)
         return 0.0;
       if (a <= ea)
         return kInf;
       // x^y = exp(y log x): the exponent moves by at most this much.
       return std::fabs(value) * std::expm1(eb * std::fabs(std::log(a)) +
                                           (std::fabs(b) + eb) * -std::log1p(-ea / a));
     },
     [](double a, double b, double value) {
       return std::fabs(value) * (1 + std::fabs(b) + std::fabs(b * std::log(std::fabs(a))));
     },
     [](const CostContext &c) { // exp(b * log(a)).
       return c.pick(c.t.ewLogInstructionsF16 + c.t.ewArithInstructionsF16 +
                         c.t.ewExpInstructionsF16,
                     c.t.ewLogInstructionsF32 + c.t.ewArithInstructionsF32 +
                         c.t.ewExpInstructionsF32);
     }},
    {BodyOpKind::ExtF, "arith.extf", 1,
     [](const BodyOp &, double a, double, double) { return a; }, exactlyMoves, nullptr,
     cast},
    {BodyOpKind::TruncF, "arith.truncf", 1,
     [](const BodyOp &, double a, double, double) { return a; }, exactlyMoves, nullptr,
     cast},
    // 1 or 0; whether it can flip is the bound evaluateBodyWithBound gives
    // it, which Select reads.
    {BodyOpKind::CmpF, "arith.cmpf", 2,
     [](const BodyOp &op, double a, double b, double) {
       return compare(op.predicate, a, b) ? 1.0 : 0.0;
     },
     nothingMoves, nullptr, arithmetic},
    {BodyOpKind::Select, "arith.select", 3,
     [](const BodyOp &, double a, double b, double c) { return a != 0 ? b : c; },
     nothingMoves, nullptr, arithmetic},
};
static_assert(sizeof(kBodyOps) / sizeof(kBodyOps[0]) == kBodyOpKinds,
              "a row per BodyOpKind");
constexpr bool rowsInKindOrder() {
  for (unsigned k = 0; k < kBodyOpKinds; ++k)
    if (kBodyOps[k].kind != static_cast<BodyOpKind>(k))
      return false;
  return true;
}
static_assert(rowsInKindOrder(), "kBodyOps rows follow BodyOpKind's order");

const BodyOpModel &modelOf(BodyOpKind kind) {
  return kBodyOps[static_cast<unsigned>(kind)];
}

} // namespace

double bodyOpValue(const BodyOp &op, double a, double b, double c) {
  return modelOf(op.kind).value(op, a, b, c);
}

double bodyOpPropagatedBound(BodyOpKind kind, double a, double b, double c, double value,
                             double ea, double eb, double ec) {
  return modelOf(kind).propagated(a, b, c, value, ea, eb, ec);
}

double bodyOpInstructions(const TargetModel &t, const ElementwiseBody &body,
                          size_t index, unsigned lanes) {
  const BodyOp &op = body.ops[index];
  // Costs are per vector of the op's own type (4 x f16, 2 x f32); a body
  // working on `lanes` elements a vector pays for that many.
  const bool half = op.type == ElementType::F16;
  const double perOwnVector = half ? 4.0 : 2.0;
  const double share = lanes / perOwnVector;
  return modelOf(op.kind).instructions({t, body, op, lanes, share, half});
}

std::vector<bool> rowInvariantValues(const ElementwiseBody &body) {
  const size_t inputs = body.inputs.size();
  std::vector<bool> invariant(inputs + body.ops.size(), false);
  for (size_t v = 0; v < inputs; ++v)
    invariant[v] = body.inputs[v].broadcast == Broadcast::Column ||
                   body.inputs[v].broadcast == Broadcast::Scalar;
  for (size_t i = 0; i < body.ops.size(); ++i) {
    const BodyOp &op = body.ops[i];
    bool all = true;
    for (unsigned k = 0; k < bodyOpArity(op.kind); ++k)
      all = all && op.operands[k] < inputs + i && invariant[op.operands[k]];
    invariant[inputs + i] = all;
  }
  return invariant;
}

std::vector<bool> opsAfterRowMax(const ElementwiseBody &body) {
  if (body.reduction != RowReduction::Max && body.reduction != RowReduction::MaxNum)
    return {};
  const size_t inputs = body.inputs.size();
  // A constant operand's value, if `value` is one.
  auto constant = [&](uint32_t value) -> std::optional<double> {
    if (value < inputs || body.ops[value - inputs].kind != BodyOpKind::Constant)
      return std::nullopt;
    return body.ops[value - inputs].constant;
  };
  auto positive = [&](uint32_t value) {
    std::optional<double> c = constant(value);
    return c && std::isfinite(*c) && *c > 0;
  };
  auto finite = [&](uint32_t value) {
    std::optional<double> c = constant(value);
    return c && std::isfinite(*c);
  };
  std::vector<bool> after(body.ops.size(), false);
  uint32_t value = body.result;
  while (value >= inputs) {
    const size_t index = value - inputs;
    const BodyOp &op = body.ops[index];
    const uint32_t a = op.operands[0], b = op.operands[1];
    // The operand carried past a constant that passes `test` (either side
    // when the op commutes).
    auto pastConstant = [&](auto test, bool commutes) -> std::optional<uint32_t> {
      if (test(b) && !constant(a))
        return a;
      if (commutes && test(a) && !constant(b))
        return b;
      return std::nullopt;
    };
    std::optional<uint32_t> carried;
    switch (op.kind) {
    case BodyOpKind::ExtF:
      carried = a;
      break;
    case BodyOpKind::TruncF:
      // Not to f8: E4M3FN has no infinity, out of range is not monotone.
      if (op.type == ElementType::F16 || op.type == ElementType::F32)
        carried = a;
      break;
    case BodyOpKind::MulF:
      carried = pastConstant(positive, /*commutes=*/true);
      break;
    case BodyOpKind::DivF:
      carried = pastConstant(positive, /*commutes=*/false);
      break;
    case BodyOpKind::AddF:
      carried = pastConstant(finite, /*commutes=*/true);
      break;
    case BodyOpKind::SubF:
      carried = pastConstant(finite, /*commutes=*/false);
      break;
    default:
      break;
    }
    if (!carried || after[index])
      return {};
    after[index] = true;
    value = *carried;
  }
  const ElementwiseInput &input = body.inputs[value];
  if (inputs != 1 || input.broadcast != Broadcast::Full ||
      (input.type != ElementType::F16 && input.type != ElementType::F32))
    return {};
  bool any = false;
  for (size_t i = 0; i < body.ops.size(); ++i) {
    if (!after[i] && body.ops[i].kind != BodyOpKind::Constant)
      return {};
    any = any || after[i];
  }
  if (!any)
    return {};
  return after;
}

bool sumsWidenedHalves(const ElementwiseBody &body) {
  const size_t inputs = body.inputs.size();
  if (body.reduction != RowReduction::Add || inputs != 1 || body.ops.size() != 1 ||
      body.result != inputs)
    return false;
  const BodyOp &op = body.ops[0];
  return op.kind == BodyOpKind::ExtF && op.type == ElementType::F32 &&
         op.operands[0] == 0 && body.inputs[0].type == ElementType::F16 &&
         body.inputs[0].broadcast == Broadcast::Full;
}

std::optional<size_t> gatingTranscendental(const ElementwiseBody &body) {
  if (body.reduction != RowReduction::None)
    return std::nullopt;
  const size_t inputs = body.inputs.size();
  const size_t values = inputs + body.ops.size();
  // sources[v]: the non-constant values v is computed from, v included.
  std::vector<std::vector<bool>> sources(values, std::vector<bool>(values, false));
  for (size_t v = 0; v < inputs; ++v)
    sources[v][v] = true;
  for (size_t i = 0; i < body.ops.size(); ++i) {
    const BodyOp &op = body.ops[i];
    std::vector<bool> &own = sources[inputs + i];
    if (op.kind != BodyOpKind::Constant)
      own[inputs + i] = true;
    for (unsigned k = 0; k < bodyOpArity(op.kind); ++k)
      if (op.operands[k] < inputs + i)
        for (size_t v = 0; v < values; ++v)
          if (sources[op.operands[k]][v])
            own[v] = true;
  }
  for (size_t i = 0; i < body.ops.size(); ++i) {
    const BodyOp &gate = body.ops[i];
    if (gate.kind != BodyOpKind::Tanh && gate.kind != BodyOpKind::Erf)
      continue;
    const size_t gated = inputs + i;
    const std::vector<bool> &argument = sources[gate.operands[0]];
    for (size_t j = i + 1; j < body.ops.size(); ++j) {
      const BodyOp &mul = body.ops[j];
      if (mul.kind != BodyOpKind::MulF)
        continue;
      for (unsigned side = 0; side < 2; ++side) {
        const std::vector<bool> &fromGate = sources[mul.operands[side]];
        const std::vector<bool> &other = sources[mul.operands[1 - side]];
        if (!fromGate[gated] || other[gated])
          continue;
        for (size_t v = 0; v < values; ++v)
          if (other[v] && argument[v])
            return i;
      }
    }
  }
  return std::nullopt;
}

ElementwiseCycles estimateElementwise(const TargetModel &target,
                                      const ElementwiseBody &body, int64_t rows,
                                      int64_t cols) {
  ElementwiseCycles cycles;
  if (rows <= 0 || cols <= 0)
    return cycles;
  // The lanes of a vector (target.vectorBytes) are those of the widest
  // arithmetic type: 2 x f32, else 4 x f16 on ipu21 (f8 values are only
  // loaded, stored and converted).
  // A row max of a value that only ops never decreasing it carry from its
  // input is the max of that input, those ops applied once a row after the
  // loop (opsAfterRowMax); the generated kernel does the same.
  const std::vector<bool> afterMax = opsAfterRowMax(body);
  auto appliedAfterMax = [&](size_t i) { return !afterMax.empty() && afterMax[i]; };
  // A sum of one full f16 input widened to f32 (nothing else in the body)
  // adds 4 halves a load into the f32 accumulators, as poplibs' continuous
  // reductions do (CycleEstimationFunctions.cpp, ALL_REGIONS_CONTINUOUS:
  // min(accumulator width 8 for half, data path 64 / 16) elements a
  // cycle); the widening costs nothing apart.
  const bool widenedSum = sumsWidenedHalves(body);
  unsigned widest = 16;
  for (const ElementwiseInput &input : body.inputs)
    widest = std::max(widest, bits(input.type));
  for (size_t i = 0; i < body.ops.size() && !widenedSum; ++i)
    if (!appliedAfterMax(i))
      widest = std::max(widest, bits(body.ops[i].type));
  cycles.lanes = std::max(1u, target.vectorBytes * 8 / widest);
  // An op of values that do not change along a row (column and scalar
  // inputs, constants, such ops) runs once a row, before its loop, on one
  // vector of its type; the generated kernel hoists it there too.
  const std::vector<bool> invariant = rowInvariantValues(body);
  const size_t inputs = body.inputs.size();
  double instructions = 0, invariantPerRow = 0;
  for (size_t i = 0; i < body.ops.size() && !widenedSum; ++i) {
    if (invariant[inputs + i] || appliedAfterMax(i))
      invariantPerRow += bodyOpInstructions(
          target, body, i, body.ops[i].type == ElementType::F16 ? 4 : 2);
    else
      instructions += bodyOpInstructions(target, body, i, cycles.lanes);
  }
  // A vector load per vector of each input that varies along the row
  // (scalars are loaded once, column values once per row), a vector store
  // per output vector, or for a reduction the combine into a vector
  // accumulator; narrower types move fewer bytes but still a whole
  // instruction.
  const bool reduces = body.reduction != RowReduction::None;
  double perRow = (widenedSum ? target.reduceWidenedRowOverheadInstructions
                   : reduces  ? target.reduceRowOverheadInstructions
                              : target.ewRowOverheadInstructions) +
                  invariantPerRow;
  // A reduction's combine issues with the load of one full input (poplibs'
  // {ld64step; op} bundle).
  bool bundledLoad = reduces;
  for (const ElementwiseInput &input : body.inputs) {
    if (input.broadcast == Broadcast::Column)
      perRow += target.ewLoadStoreInstructions;
    else if (input.broadcast == Broadcast::Full && bundledLoad)
      bundledLoad = false;
    else if (input.broadcast != Broadcast::Scalar)
      instructions += target.ewLoadStoreInstructions;
  }
  instructions += reduces ? target.reduceVectorInstructions
                          : target.ewLoadStoreInstructions;
  cycles.instructionsPerVector = instructions;

  // A block whose operands are all whole rows without padding is one
  // contiguous run; otherwise each row is a loop of its own (always for a
  // reduction, which ends each row with its value).
  bool contiguous = !reduces && detail::rowPitch(cols, body.resultType) ==
                                    static_cast<uint64_t>(cols) * elementBytes(body.resultType);
  for (const ElementwiseInput &input : body.inputs)
    contiguous &= input.broadcast == Broadcast::Scalar ||
                  (input.broadcast == Broadcast::Full &&
                   detail::rowPitch(cols, input.type) ==
                       static_cast<uint64_t>(cols) * elementBytes(input.type));
  const uint64_t loopRows = contiguous ? 1 : static_cast<uint64_t>(rows);
  const uint64_t loopLength =
      contiguous ? static_cast<uint64_t>(rows) * cols : static_cast<uint64_t>(cols);
  const uint64_t vectorsPerRow = (loopLength + cycles.lanes - 1) / cycles.lanes;
  cycles.vectors = loopRows * vectorsPerRow;
  // The block's vectors, row after row, are split evenly over the workers
  // (as poplibs splits a 2-D vertex's regions); a worker pays the row
  // overhead for every row its share touches. A reduction's rows are split
  // over the workers whole, or in parts (below).
  const uint64_t workers = std::max<uint32_t>(target.workersPerTile, 1);
  auto workerPass = [&](uint64_t workerInstructions) {
    return target.workerSupervisorCycles +
           workers * (target.workerPrologueInstructions + workerInstructions);
  };
  if (reduces) {
    // Rows are split over the workers whole; with fewer rows than workers,
    // each row may instead be split into parts of whole vectors, one
    // worker each, which a second worker pass folds in order (a load and a
    // combine per part, a row's overhead), as poplibs' two-stage
    // reductions do. The cheaper of the two is taken.
    cycles.rowsPerWorker = (loopRows + workers - 1) / workers;
    cycles.total = target.vertexCallCycles +
                   workerPass(static_cast<uint64_t>(std::ceil(cycles.rowsPerWorker * perRow)) +
                              static_cast<uint64_t>(std::ceil(cycles.rowsPerWorker *
                                                              vectorsPerRow * instructions)));
    // (A sum from a non-zero init is not split: each part would add it.)
    const uint64_t mostParts =
        combinesByColumns(body.reduction, body.init)
            ? std::min<uint64_t>(workers / loopRows, vectorsPerRow)
            : 1;
    for (uint64_t wanted = 2; wanted <= mostParts; ++wanted) {
      const uint64_t partVectors = (vectorsPerRow + wanted - 1) / wanted;
      const uint64_t parts = (vectorsPerRow + partVectors - 1) / partVectors;
      const uint64_t split =
          target.vertexCallCycles +
          workerPass(static_cast<uint64_t>(std::ceil(perRow)) +
                     static_cast<uint64_t>(std::ceil(partVectors * instructions))) +
          workerPass(target.reduceRowOverheadInstructions +
                     static_cast<uint64_t>(std::ceil(
                         parts * (target.ewLoadStoreInstructions +
                                  target.reduceVectorInstructions))));
      if (split < cycles.total) {
        cycles.total = split;
        cycles.rowParts = parts;
        cycles.rowPartVectors = partVectors;
        cycles.rowsPerWorker = 1;
      }
    }
  } else {
    const uint64_t perWorker = (cycles.vectors + workers - 1) / workers;
    cycles.rowsPerWorker = std::min<uint64_t>(
        loopRows, (perWorker + vectorsPerRow - 1) / vectorsPerRow + (loopRows > 1 ? 1 : 0));
    cycles.total = target.vertexCallCycles +
                   workerPass(static_cast<uint64_t>(std::ceil(cycles.rowsPerWorker * perRow)) +
                              static_cast<uint64_t>(std::ceil(perWorker * instructions)));
  }
  // A GELU costs no less than the user's measured kernel: its rate covers
  // the whole call, so the fused bias add and cast are taken to fit within
  // it (the user's kernel loads, computes and stores each element too).
  if (std::optional<size_t> gate = gatingTranscendental(body)) {
    const double rate = body.ops[*gate].kind == BodyOpKind::Tanh
                            ? target.geluTanhCyclesPerElement
                            : target.geluErfCyclesPerElement;
    cycles.measuredRateCycles =
        static_cast<uint64_t>(std::ceil(static_cast<double>(rows) * static_cast<double>(cols) * rate)) +
        target.kernelLaunchCycles;
    cycles.total = std::max(cycles.total, cycles.measuredRateCycles);
  }
  return cycles;
}

void executeElementwise(const ElementwiseKernel &kernel, const int64_t *params,
                        const TargetModel &target, uint8_t *const *operands) {
  if (!kernel.entry)
    return;
  const ElementwiseBody &body = kernel.body();
  if (body.reduction == RowReduction::None) {
    kernel.entry(operands, params);
    return;
  }
  const int64_t rows = params[ElementwiseRows], cols = params[ElementwiseCols];
  const ElementwiseCycles cycles = estimateElementwise(target, body, rows, cols);
  if (cycles.rowParts <= 1) {
    kernel.entry(operands, params);
    return;
  }
  // Each row in the parts the estimate charged, each part the kernel on a
  // one-row block, then the parts folded in order (as the second worker
  // pass does).
  const size_t inputs = body.inputs.size();
  const int64_t partCols = static_cast<int64_t>(cycles.rowPartVectors * cycles.lanes);
  std::vector<uint8_t *> part(inputs + 1);
  for (int64_t row = 0; row < rows; ++row) {
    float folded = 0;
    for (int64_t first = 0; first < cols; first += partCols) {
      for (size_t i = 0; i < inputs; ++i) {
        const ElementType type = body.inputs[i].type;
        const uint64_t skip = static_cast<uint64_t>(first) * elementBytes(type);
        switch (body.inputs[i].broadcast) {
        case Broadcast::Full:
          part[i] = operands[i] + static_cast<uint64_t>(row) * detail::rowPitch(cols, type) + skip;
          break;
        case Broadcast::Row: part[i] = operands[i] + skip; break;
        case Broadcast::Column:
          part[i] = operands[i] + static_cast<uint64_t>(row) * detail::rowPitch(1, type);
          break;
        case Broadcast::Scalar: part[i] = operands[i]; break;
        }
      }
      float value = 0;
      part[inputs] = reinterpret_cast<uint8_t *>(&value);
      const int64_t partParams[] = {1, std::min(partCols, cols - first)};
      kernel.entry(part.data(), partParams);
      folded = first == 0 ? value
                          : static_cast<float>(combineReduction(body.reduction, folded, value));
    }
    std::memcpy(operands[inputs] + static_cast<uint64_t>(row) * detail::rowPitch(1, ElementType::F32),
                &folded, sizeof folded);
  }
}

uint64_t elementwiseCodeBytes(const TargetModel &target,
                              const ElementwiseBody &body) {
  uint64_t ops = body.inputs.size() + 1;
  for (size_t i = 0; i < body.ops.size(); ++i)
    ops += static_cast<uint64_t>(std::ceil(bodyOpInstructions(target, body, i, 4)));
  return target.ewKernelCodeBytes + ops * target.ewCodeBytesPerInstruction;
}

namespace detail {

std::optional<std::string> checkElementwiseParams(const ElementwiseKernel &kernel,
                                                  const int64_t *params) {
  static const char *const names[] = {"rows", "cols"};
  for (unsigned p : {ElementwiseRows, ElementwiseCols})
    if (params[p] <= 0 || params[p] >= kMaxExtent)
      return kernel.name() + ": parameter '" + names[p] + "' = " +
             std::to_string(params[p]) + " is not in [1, 2^24)";
  return std::nullopt;
}

KernelOperandShape elementwiseOperandShape(const ElementwiseKernel &kernel,
                                           const int64_t *params, unsigned operand) {
  const ElementwiseBody &body = kernel.body();
  const int64_t rows = params[ElementwiseRows], cols = params[ElementwiseCols];
  if (operand == body.inputs.size())
    return {rows, body.reduction == RowReduction::None ? cols : 1,
            body.resultType};
  if (operand > body.inputs.size())
    return {};
  const ElementwiseInput &input = body.inputs[operand];
  switch (input.broadcast) {
  case Broadcast::Full: return {rows, cols, input.type};
  case Broadcast::Row: return {1, cols, input.type};
  case Broadcast::Scalar: return {1, 1, input.type};
  case Broadcast::Column: return {rows, 1, input.type};
  }
  return {};
}

} // namespace detail

ElementwiseKernel::ElementwiseKernel(std::string name, std::string symbol,
                                     ElementwiseBody body)
    : name_(std::move(name)), symbol_(std::move(symbol)), body_(std::move(body)) {
  for (size_t i = 0; i < body_.inputs.size(); ++i)
    operandNames_.push_back("in" + std::to_string(i));
  operandNames_.push_back("out");
  spec_.name = name_;
  for (const std::string &operand : operandNames_)
    spec_.operandNames.push_back(operand);
  spec_.paramNames = {"rows", "cols"};
  spec_.functions = &detail::elementwiseFunctions;
  spec_.elementwise = this;
}

} // namespace ipu
