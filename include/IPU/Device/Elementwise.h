//===- Elementwise.h - Generated elementwise kernels, in plain C++ -------===//
//
// A fused chain of elementwise ops (bias, GELU, SiLU, casts) is one
// ElementwiseBody: a straight-line scalar program over the inputs of one
// element. The compiler builds it from the IR's body, the package carries
// it next to the kernel's generated code, the simulator costs the kernel
// from it and the host reference evaluates it. Nothing here runs the
// generated code: that is the loaded kernel object's job.
//
//===----------------------------------------------------------------------===//

#ifndef IPU_DEVICE_ELEMENTWISE_H
#define IPU_DEVICE_ELEMENTWISE_H

#include "IPU/Device/Kernels.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ipu {

/// The scalar operations a body may hold, named after the arith and math
/// ops they come from.
enum class BodyOpKind : uint8_t {
  Constant,
  AddF,
  SubF,
  MulF,
  DivF,
  NegF,
  MaximumF,
  MinimumF,
  MaxNumF,
  MinNumF,
  AbsF,
  Exp,
  Log,
  Tanh,
  Erf,
  Sqrt,
  Rsqrt,
  Fma,
  PowF,
  ExtF,
  TruncF,
  CmpF,   ///< Yields a boolean; `predicate` is arith::CmpFPredicate's value.
  Select, ///< operands: condition (a CmpF), true value, false value.
};
constexpr unsigned kBodyOpKinds = static_cast<unsigned>(BodyOpKind::Select) + 1;

/// The arith/math spelling of a kind ("arith.addf", "math.tanh").
std::string_view bodyOpName(BodyOpKind kind);
std::optional<BodyOpKind> parseBodyOpName(std::string_view name);
/// Operands a kind takes.
unsigned bodyOpArity(BodyOpKind kind);

/// How an input of the kernel maps onto the block a vertex iterates over:
/// the whole block, one row repeated over the block's rows (a bias over the
/// last dimension), one value for every element, or one value per row
/// repeated along it (a row's statistic: softmax's max, layer norm's mean).
enum class Broadcast : uint8_t { Full = 0, Row = 1, Scalar = 2, Column = 3 };
constexpr unsigned kBroadcasts = 4;
std::string_view broadcastName(Broadcast broadcast);
std::optional<Broadcast> parseBroadcastName(std::string_view name);

/// What a kernel does with the body's values along each row: store them
/// (an elementwise kernel), or combine them into one value per row (a row
/// reduction: sum, arith.maximumf's max, arith.maxnumf's max).
enum class RowReduction : uint8_t { None = 0, Add = 1, Max = 2, MaxNum = 3 };
constexpr unsigned kRowReductions = 4;
std::string_view rowReductionName(RowReduction reduction);
std::optional<RowReduction> parseRowReductionName(std::string_view name);
/// The built-in kernel (Kernels.h) that combines a split row reduction's
/// gathered partials, a row per part: "reduce_columns_" and the reduction's
/// name; nothing for None.
std::optional<std::string> columnReductionKernel(RowReduction reduction);
/// Whether a split row reduction (`reduction` from `init`) combines its
/// gathered partials with columnReductionKernel, which starts from the
/// identity: every max, and a sum from 0. A sum from another init combines
/// them with its body's combiner, which adds the init.
bool combinesByColumns(RowReduction reduction, double init);
/// Cycles of one tile's combine of a split row reduction: `parts` f32
/// partials for each of `batches` x `rows` rows into a `resultType` value,
/// by the kernel combinesByColumns chooses.
uint64_t estimateSplitRowCombine(const TargetModel &target, RowReduction reduction,
                                 double init, int64_t batches, int64_t rows,
                                 int64_t parts, ElementType resultType);
/// The value that leaves any other unchanged under `reduction`: 0 for a
/// sum, -inf for a max.
double reductionIdentity(RowReduction reduction);
/// `acc` combined with `value` under `reduction` (not None), exactly.
double combineReduction(RowReduction reduction, double acc, double value);

struct BodyOp {
  BodyOpKind kind = BodyOpKind::Constant;
  /// The type of the result (for CmpF, of its operands: it yields a bool).
  ElementType type = ElementType::F32;
  uint8_t predicate = 0;
  /// Values: 0 .. inputs-1 are the inputs, inputs + i the result of op i.
  uint32_t operands[3] = {0, 0, 0};
  double constant = 0; ///< The value of a Constant, exact in its type.
};

struct ElementwiseInput {
  ElementType type = ElementType::F32;
  Broadcast broadcast = Broadcast::Full;
};

struct ElementwiseBody {
  std::vector<ElementwiseInput> inputs;
  std::vector<BodyOp> ops;
  uint32_t result = 0; ///< The value the kernel stores (or reduces).
  ElementType resultType = ElementType::F32;
  /// With a reduction, each row's values are combined, starting from
  /// `init`, in resultType (f32: reductions accumulate in f32), and the
  /// kernel stores one value per row.
  RowReduction reduction = RowReduction::None;
  double init = 0;

  /// The type of value `value` (std::nullopt for a CmpF's boolean).
  std::optional<ElementType> valueType(uint32_t value) const;
};

/// Checks that every operand names an earlier value of the right type, that
/// constants and predicates are valid and that the result has resultType.
/// The message names the op by index and spelling.
std::optional<std::string> verifyBody(const ElementwiseBody &body);

/// Reduces one row of `cols` values of a reduction body: `valueAt(c)` is the
/// body's value at column c; the result is combined exactly from `init` and
/// rounded to the body's result type, as the graph defines it.
template <typename ValueAt>
float reduceRow(const ElementwiseBody &body, int64_t cols, ValueAt valueAt) {
  double acc = body.init;
  for (int64_t c = 0; c < cols; ++c)
    acc = combineReduction(body.reduction, acc, valueAt(c));
  return static_cast<float>(acc);
}

/// The body on one element, as the graph defines it: each op computed
/// exactly (in double) from its operands and rounded to its type, transcen-
/// dentals by the C library. `inputs` holds one value per input, already of
/// the input's type. For the host reference.
float evaluateBody(const ElementwiseBody &body, const float *inputs);

/// f32 ulps (of |f(x)| + |x f'(x)|) by which the device's polynomial
/// approximations of exp, log, tanh, erf, rsqrt and pow (MLIR's, in f32)
/// may differ from the C library's value. An assumption, checked by
/// KernelCodegenTest's sweeps of the generated code against evaluateBody.
constexpr double kTranscendentalUlps = 8;

/// evaluateBody, and in `bound` (when not null) how far a correct device
/// evaluation of the same body on the same inputs may be from that value:
/// a running forward error bound through the body. Inputs are exact;
/// each op carries its operands' bounds through its own conditioning (over
/// the whole interval: exp(a + e) - exp(a), a quotient whose divisor may
/// reach zero is unbounded); a transcendental adds kTranscendentalUlps of
/// its approximation and the smallest normal f32 (below which it may
/// flush to zero); an op whose operands or value may differ may round
/// to either neighbour (two ulps of its type either way); a comparison
/// that may flip makes a select's bound the distance between its choices.
/// Exactly rounded ops on exact operands add nothing: both sides agree.
float evaluateBodyWithBound(const ElementwiseBody &body, const float *inputs,
                            double *bound);

/// The exact value of one op of `kind` (with `op`'s constant or predicate)
/// on operands a, b, c, and how far it can move when they move by at most
/// ea, eb, ec: the conditioning evaluateBodyWithBound carries through each
/// op (its row of the body-op table).
double bodyOpValue(const BodyOp &op, double a, double b, double c);
double bodyOpPropagatedBound(BodyOpKind kind, double a, double b, double c, double value,
                             double ea, double eb, double ec);

/// A stable 64-bit hash of the body (FNV-1a of a canonical encoding):
/// equal bodies share one kernel, and the kernel's symbol carries it.
uint64_t bodyHash(const ElementwiseBody &body);
/// FNV-1a 64 of `bytes`, the package's check on kernel objects.
uint64_t fnv1a64(const uint8_t *bytes, size_t size, uint64_t seed = 0xcbf29ce484222325ull);

/// What compiling `body` into host code (lib/KernelCompiler) costs, in
/// units of about 0.1 ms of one core of the machine the weights were
/// measured on (docs/ThreatModel.md has the figures): a fixed part per
/// kernel, a weight per op by kind (math.powf, math.log, math.erf, math.exp
/// and math.tanh expand to polynomials; arithmetic is a few instructions),
/// and the square of the ops' weights over kKernelCompileQuadratic: LLVM's
/// scheduling and register allocation of one long straight-line body grow
/// faster than its length (512 chained powf take 2.8 times 256's time).
/// For the validator's bound on a package's kernels (each accepted by
/// verifyBody), before any compiles.
uint64_t kernelCompileCost(const ElementwiseBody &body);
constexpr uint64_t kKernelCompileOverhead = 100;
constexpr uint64_t kKernelCompileQuadratic = 20000;
/// The most a package's kernels may cost in all: about 30 s of compiling
/// on that machine, ten times what the kernels of any real model cost.
constexpr uint64_t kMaxKernelCompileCost = 300000;

/// Where the cycles of one elementwise vertex go (estimateElementwise).
struct ElementwiseCycles {
  unsigned lanes = 0;            ///< Elements per 64-bit vector.
  double instructionsPerVector = 0; ///< Worker instructions, loads and stores included.
  uint64_t vectors = 0;          ///< Vectors of the block, rows padded to vectors.
  uint64_t rowsPerWorker = 0;
  /// A reduction over fewer rows than workers splits each row into this
  /// many contiguous parts, one worker each; a second worker pass folds a
  /// row's parts in order (1: rows are split over the workers whole).
  uint64_t rowParts = 1;
  /// The vectors of each part but the last (0 when rows are not split).
  uint64_t rowPartVectors = 0;
  /// The user's measured rate for a GELU body (0 for any other body); the
  /// total is at least this.
  uint64_t measuredRateCycles = 0;
  uint64_t total = 0;
};

class ElementwiseKernel;

/// Runs `kernel`'s compiled entry (nothing before CompiledKernels loads
/// it) on a `rows` x `cols` block: once, or for a reduction the estimate
/// splits in row parts (ElementwiseCycles::rowParts), once a part, folding
/// a row's parts in order.
void executeElementwise(const ElementwiseKernel &kernel, const int64_t *params,
                        const TargetModel &target, uint8_t *const *operands);

/// Which of the body's values (inputs, then ops) are the same all along a
/// row: column and scalar inputs, constants (arity 0) and ops of such values
/// only. The kernel computes them once a row.
std::vector<bool> rowInvariantValues(const ElementwiseBody &body);

/// For a max reduction (max or maxnum) of one full f16 or f32 input carried
/// to the reduced value by ops that never decrease it (extf, truncf to f16
/// or f32, a multiply or divide by a positive finite constant, an add or
/// subtract of a finite constant) and no other op but constants: those ops,
/// marked by index. Rounding is monotone, so the row's max of their values
/// is their value at the row's max input: the kernel takes the max of the
/// input (a vector of its own type an instruction) and applies the ops
/// once a row. Empty for any other body. (Softmax's row max of its scaled
/// f16 scores is the case: max(ext(x * c)) = ext(max(x) * c).)
std::vector<bool> opsAfterRowMax(const ElementwiseBody &body);

/// Whether the body sums one full f16 input widened to f32 and does
/// nothing else (softmax's row sums of its f16 exponentials, layer norm's
/// of its f16 input): the kernel adds 4 halves a load into f32
/// accumulators, at f16's lanes.
bool sumsWidenedHalves(const ElementwiseBody &body);

/// The tanh or erf op that gates a GELU body: a product of a value derived
/// from that op's result with a value that does not depend on it but shares
/// a non-constant source with the op's argument (x times f(tanh(g(x))) or
/// f(erf(g(x)))), in the op's own kernel; the index of the op, or nullopt.
/// Recognised by its structure, whatever the kernel is called.
std::optional<size_t> gatingTranscendental(const ElementwiseBody &body);

/// The estimate of one vertex on a `rows` x `cols` output block: the body's
/// worker instructions per vector (TargetModel "elementwise" fields, by op
/// kind and type; a 64-bit load per full or row input and a store per
/// output vector), the rows split over the workers, each row a loop of its
/// vectors with its own overhead, plus the vertex call, the supervisor and
/// each worker's loop prologue (a reduction over fewer rows than workers
/// splits its rows in parts when that is cheaper: rowParts); a GELU body (gatingTranscendental) at least
/// the user's measured rate per element of the block.
ElementwiseCycles estimateElementwise(const TargetModel &target,
                                      const ElementwiseBody &body, int64_t rows,
                                      int64_t cols);
/// Bytes of the kernel's code in a tile's standard memory: a fixed part
/// (vertex entry, worker split, loops) and a part per body op.
uint64_t elementwiseCodeBytes(const TargetModel &target, const ElementwiseBody &body);

/// Worker instructions of op `index` of `body` on one vector of `lanes`
/// elements.
double bodyOpInstructions(const TargetModel &target, const ElementwiseBody &body,
                          size_t index, unsigned lanes);

/// The kernel entry point every generated kernel object exports, one per
/// body: operands[i] is input i's block on the tile (rows x cols, 1 x cols,
/// one element or rows x 1, by its broadcast), operands[inputs] the output
/// block (rows x cols; rows x 1 for a reduction); params = {rows, cols}, the
/// block the vertex iterates over. Rows are padded to 32-bit words.
using ElementwiseEntry = void (*)(uint8_t *const *operands, const int64_t *params);

/// Version of the calling convention above and of the kernel object's
/// format; a package built for another is refused.
constexpr uint32_t kKernelAbiVersion = 2;

/// One generated kernel: its body and the KernelSpec the verifier, the
/// validator and the simulator use like any device/ kernel's.
class ElementwiseKernel {
public:
  ElementwiseKernel(std::string name, std::string symbol, ElementwiseBody body);
  ElementwiseKernel(const ElementwiseKernel &) = delete;
  ElementwiseKernel &operator=(const ElementwiseKernel &) = delete;

  const std::string &name() const { return name_; }
  const std::string &symbol() const { return symbol_; }
  const ElementwiseBody &body() const { return body_; }
  const KernelSpec &spec() const { return spec_; }

  /// The generated code, once the kernel object is loaded.
  ElementwiseEntry entry = nullptr;

private:
  std::string name_, symbol_;
  ElementwiseBody body_;
  std::vector<std::string> operandNames_;
  KernelSpec spec_;
};

/// The parameters of an elementwise vertex.
enum ElementwiseParam : unsigned { ElementwiseRows, ElementwiseCols };

/// The symbol of the kernel for `body`: "ipu_ew_" and the body's hash.
std::string elementwiseSymbol(const ElementwiseBody &body);

} // namespace ipu

#endif // IPU_DEVICE_ELEMENTWISE_H
