//===- TileLowering.h - Lowering graph ops to program steps ----*- C++ -*-===//
//
// --ipu-lower-to-tile is a driver over TileLowerableOpInterface: every op
// lowers itself through a ProgramBuilder, which owns what all ops share (the
// program, the buffer of every value, host streams, exchange phases, compute
// sets and the host reference that --check recomputes).
//
//===----------------------------------------------------------------------===//

#ifndef IPU_TRANSFORMS_TILELOWERING_H
#define IPU_TRANSFORMS_TILELOWERING_H

#include "IPU/Dialect/Tile/IR/Tile.h"
#include "IPU/Layout/BlockLayout.h"
#include "IPU/Target/TargetModel.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

namespace ipu {
struct GemmProblem;
} // namespace ipu

namespace mlir {
class DialectRegistry;
namespace ipu_exchange {
class StreamInOp;
} // namespace ipu_exchange
} // namespace mlir

namespace mlir::ipu_tile {

/// Where an op wants an operand: in `layout` and `memoryClass`. For a
/// function argument streamed from the host, also `transpose` when the
/// layout's tensor is the argument transposed, and `weight` when it stays
/// resident for the whole program (else it is an input, live from its
/// stream to its last use).
struct OperandLayout {
  ipu::BlockLayout layout;
  ipu::MemoryClass memoryClass = ipu::MemoryClass::Standard;
  bool transpose = false;
  bool weight = true;
};

/// The shape of a buffer holding a value of `type` in `layout`: the value's
/// leading dims and the layout's matrix when the layout has batches, else
/// the layout's matrix alone (leading dims folded into its rows).
SmallVector<int64_t> bufferShape(RankedTensorType type,
                                 const ipu::BlockLayout &layout);

/// Whether `op` (after --ipu-assign-layouts) only reshapes a value whose
/// layout already holds the result: the lowering gives the result its
/// source's buffer, and nothing moves.
bool isInPlaceReshape(PermuteOp op);

/// Where a repeated layer's row weight (a layer norm's scale: one row a
/// layer) stays between layers: its columns in blocks of at most
/// `rowHomeBlockBytes` on consecutive tiles from one its slot picks, each
/// layer's block after the last. Each layer's row is broadcast from there
/// to the tiles that read it: replicated for good, every layer's whole row
/// would sit on every tile. Rows of one block or less stay replicated.
constexpr uint64_t rowHomeBlockBytes = 256;
/// Says in `problem` what a matmul's B (`rhs`) is: a weight (a streamed
/// argument, or one a weight expansion reads, then `expandedFrom` its
/// stored type) or an activation.
void describeRhs(Value rhs, ipu::GemmProblem &problem);

/// Whether a repeated layer's row weight of `type` stays in its home: rows
/// of one home block or less stay replicated, as they cost every tile no
/// more than a home would.
bool rowStaysInHome(RankedTensorType type);
ipu::BlockLayout rowHomeLayout(int64_t cols, ipu::ElementType type, unsigned slot,
                               const ipu::TargetModel &target);

/// A source and a destination buffer of one exchange phase.
using BufferCopy = std::pair<BufferOp, BufferOp>;

class ProgramBuilder {
public:
  ProgramBuilder(func::FuncOp func, ProgramOp program,
                 const ipu::TargetModel &target);

  const ipu::TargetModel &getTarget() const { return target; }
  OpBuilder &getBuilder() { return builder; }
  MLIRContext *getContext() { return builder.getContext(); }

  /// A buffer at `loc`, the op (or argument) whose value it holds, so that
  /// diagnostics about it (a memory map) point at the source. Buffers go
  /// before the program's first step.
  BufferOp createBuffer(Location loc, StringRef name, Type elementType,
                        ArrayRef<int64_t> shape, const ipu::BlockLayout &layout,
                        ipu::MemoryClass memoryClass);
  /// The buffer holding the value of type `type` that `current` holds, in
  /// `layout` and `memoryClass`: `current` when it matches, else a new
  /// buffer `name` with a copy into it appended to `copies` (for a phase
  /// the caller creates).
  BufferOp bufferIn(BufferOp current, RankedTensorType type, Location loc,
                    const ipu::BlockLayout &layout, StringRef name,
                    SmallVectorImpl<BufferCopy> &copies,
                    ipu::MemoryClass memoryClass);
  /// One kernel on `tiles`, its parameters derived from the operands'
  /// blocks on each tile, `accType` (for kernels that accumulate) and
  /// `inputScale` (an f8 GEMM's).
  ComputeSetOp createComputeSet(Location loc, StringRef name, StringRef kernel,
                                ArrayRef<BufferOp> operands, ArrayRef<int32_t> tiles,
                                Type accType = Type(),
                                std::optional<int32_t> inputScale = std::nullopt);
  /// A `copy` of `from` into `to` on every tile that holds a block of
  /// `layout` (replicas included): a local copy between two buffers whose
  /// blocks share those tiles.
  ComputeSetOp createCopy(Location loc, StringRef name, BufferOp from, BufferOp to,
                          const ipu::BlockLayout &layout);
  /// The ipu_tile.kernel running elementwise `body` with inputs broadcast
  /// as given (and its values reduced along rows from `init`, with a
  /// reduction): one per distinct body in the program, named after the
  /// first op (`name`.kernel) that needs it.
  FailureOr<KernelOp> getOrCreateKernel(
      Location loc, StringRef name, Block &body,
      ArrayRef<ipu::Broadcast> broadcasts,
      ipu::RowReduction reduction = ipu::RowReduction::None, double init = 0);
  /// A sync, one exchange phase running `copies`, and a sync: BSP, the
  /// compute that uses the phase's result starts after a sync too. With
  /// `permutation`, each copy permutes (an ipu_tile.permute); with
  /// `permutations`, copy i permutes by permutations[i] when it is not null.
  void createPhase(Location loc, StringRef name, ArrayRef<BufferCopy> copies,
                   const ipu::Permutation *permutation = nullptr,
                   ArrayRef<const ipu::Permutation *> permutations = {});

  /// The buffer holding operand `operand` of `op` where `wanted` says it
  /// must be (its layout and memory class), or an error on the op saying
  /// what is missing: --ipu-assign-layouts put every operand in place.
  FailureOr<BufferOp> operandBuffer(Operation *op, unsigned operand,
                                    const OperandLayout &wanted);
  /// The buffer that holds `value` (null when none does yet).
  BufferOp lookupBuffer(Value value) const { return bufferOf.lookup(value); }
  /// Records that `buffer` holds the op result `value`. A value the function
  /// does not return is streamed out as a checkpoint, after the results, so
  /// that `ipu-run --check` checks every op on the operands the device
  /// really used (host streams cost no device cycles).
  /// A value held in serial chunks streams out in the host shape of
  /// `shapeLike` (the operand it follows: a matmul's A, an elementwise op's
  /// first full input) with its own last dim, as the host reference computes
  /// it; without one, as its matrix.
  void setResultBuffer(Value value, BufferOp buffer, Value shapeLike = nullptr);
  /// Records that `value` is `source`'s elements in `source`'s buffer (a
  /// reshape that moves nothing): the same buffer, host shape and reference.
  void aliasResult(Value value, Value source);
  /// The shape the host sees `value` in: its stream's.
  SmallVector<int64_t> hostShapeOf(Value value) const;
  /// Whether `value` holds its function argument transposed (by the host
  /// stream of an ipu_tile.from_host, through any relayouts since).
  bool isTransposedFromHost(Value value) const {
    return transposedFromHost.contains(value);
  }
  /// From here on the host reference reads `value`, a matrix its stream
  /// transposed, as the device holds it: a transpose of the host's value
  /// (a reference op with no result of its own), so that an op computing
  /// on it elementwise gives its result in the device's orientation.
  void referenceAsDeviceHolds(Value value);

  /// Appends a host reference op for `--check` computing `result` from
  /// `operands` (function arguments or results of earlier reference ops),
  /// with op-specific fields in `fields`.
  void addReference(StringRef opName, ValueRange operands, Value result,
                    ArrayRef<NamedAttribute> fields);
  /// Useful FLOPs and the planner's cycles, summed for the program.
  void addFlops(int64_t value) { flops += value; }
  void addEstimatedCycles(int64_t value) { estimatedCycles += value; }
  /// The plan finalists of the op lowered under `name` (a re-ranked
  /// matmul's), kept on the program for the package and its report.
  void addPlanFinalists(StringRef name, ArrayAttr finalists) {
    planFinalists.push_back(builder.getNamedAttr(name, finalists));
  }

  /// A buffer `name` in the op's layout and class, and its host stream.
  LogicalResult lowerFromHost(FromHostOp op, StringRef name);
  /// One exchange phase `phaseName` moving each relayout's source into a
  /// new buffer (named by `bufferNames`) in its result's layout and class.
  LogicalResult lowerRelayouts(ArrayRef<RelayoutOp> ops,
                               ArrayRef<std::string> bufferNames,
                               StringRef phaseName);
  /// Opens the loop of `repeat` (named `name`): a buffer per weight slot
  /// holding every layer's block on the tiles of the slot's layout, each
  /// layer's argument streamed into its block; the buffer every layer reads
  /// and writes, the input copied into it; and the loop, into which the
  /// body's ops then lower. The host reference checks the last layer (its
  /// weights, and the value the device carried into it).
  LogicalResult beginRepeat(RepeatOp repeat, StringRef name);
  /// Closes it: what the body passes on is copied into the layers' buffer,
  /// the body's compute sets read each layer's block of the weights, and
  /// the repeat's result is that buffer.
  LogicalResult endRepeat(RepeatOp repeat);
  /// Streams out the function's results.
  LogicalResult lowerReturn(func::ReturnOp ret);
  /// Sets the program's reference, flops and estimate attributes.
  void finish();

private:
  /// What every stream of argument `arg` carries besides its buffer: the
  /// argument's value when the package holds it; and the point before
  /// which buffers go, set by the first stream.
  void finishArgumentStream(ipu_exchange::StreamInOp stream, BlockArgument arg);

  func::FuncOp func;
  ProgramOp program;
  const ipu::TargetModel &target;
  OpBuilder builder;
  Block::iterator bufferInsertPoint;
  DenseMap<Value, BufferOp> bufferOf;
  /// The shape each value's stream carries (its buffer's, or host_shape).
  DenseMap<Value, SmallVector<int64_t>> hostShapes;
  llvm::DenseSet<Value> transposedFromHost;
  /// Stream index of each value that leaves the device: a result, or a
  /// checkpoint after the results.
  DenseMap<Value, int32_t> streamOf;
  int32_t checkpoints = 0;
  /// The reference op computing a value: an argument number (>= 0) or
  /// -1 - index of the reference op.
  DenseMap<Value, int32_t> referenceOf;
  SmallVector<Attribute> reference;
  /// Generated kernels by the hash of their body.
  DenseMap<uint64_t, KernelOp> kernels;
  int64_t flops = 0;
  int64_t estimatedCycles = 0;
  /// The repeated layer being lowered: its loop, the buffers of its weight
  /// slots, the buffer it carries, and the sums before its body.
  struct OpenRepeat {
    RepeatOp op;
    LoopOp loop;
    llvm::DenseSet<Operation *> weightBuffers;
    BufferOp carried;
    int64_t flopsBefore = 0, estimatedCyclesBefore = 0;
    std::optional<OpBuilder::InsertPoint> after;
  };
  std::optional<OpenRepeat> openRepeat;
  SmallVector<NamedAttribute> planFinalists;
  /// Whether the body's last value `passed` can be written straight into
  /// the layers' buffer: of its type and class, named only in the body,
  /// and first named after the body's last read of the layer's input.
  bool canCarryInPlace(OpenRepeat &state, BufferOp passed);
};

/// The functions of `module` with a body, each of one block (control flow
/// is refused with an error on the function).
FailureOr<SmallVector<func::FuncOp>> functionsToCompile(ModuleOp module);

/// The error on an op that no tile lowering takes: it names the op, what
/// the compiler compiles and the way out.
InFlightDiagnostic emitNotLowerable(Operation *op);

/// Attaches TileLowerableOpInterface to the ops that lower through it.
void registerTileLoweringModels(DialectRegistry &registry);
/// The part of it for ipu_tile.elementwise (ElementwiseLowering.cpp).
void registerElementwiseLoweringModel(DialectRegistry &registry);
/// The part of it for ipu_tile.permute (PermuteLowering.cpp).
void registerPermuteLoweringModel(DialectRegistry &registry);

} // namespace mlir::ipu_tile

#endif // IPU_TRANSFORMS_TILELOWERING_H
