//===- TileUtils.h - Bridges between the IR and plain C++ models -*- C++ -*-===//
//
// Passes adapt IR to the plain C++ libraries; these are the adapters.
//
//===----------------------------------------------------------------------===//

#ifndef IPU_DIALECT_TILE_IR_TILEUTILS_H
#define IPU_DIALECT_TILE_IR_TILEUTILS_H

#include "IPU/Dialect/Tile/IR/Tile.h"
#include "IPU/Layout/BlockLayout.h"
#include "IPU/Target/TargetModel.h"

#include <optional>

namespace mlir::ipu_tile {

/// The machine's memory class of the IR's, and back (the same numbering).
inline ipu::MemoryClass toMachineClass(MemoryClass memoryClass) {
  return static_cast<ipu::MemoryClass>(memoryClass);
}
inline MemoryClass toIRClass(ipu::MemoryClass memoryClass) {
  return static_cast<MemoryClass>(memoryClass);
}
static_assert(static_cast<int>(MemoryClass::interleaved) ==
              static_cast<int>(ipu::MemoryClass::Interleaved));

/// The target named by the nearest enclosing `ipu_tile.target` attribute.
std::optional<ipu::TargetModel> lookupTarget(Operation *op);
/// Like lookupTarget, but emits an error on `op` when there is none.
FailureOr<ipu::TargetModel> requireTarget(Operation *op);

/// Whether `value` is an argument of the function it is in.
bool isFunctionArgument(Value value);
/// Whether `value` is streamed from the host: an argument of its function,
/// or a weight argument of an ipu_tile.repeat's body (every layer's tensor
/// of that weight slot, streamed in at load).
bool isStreamedArgument(Value value);
/// The ipu_tile.repeat whose body reads `value` as the previous layer's
/// value, or null.
RepeatOp carriedBy(Value value);
/// The weight a weight expansion expands into `value`, or null. A weight
/// expansion is an ipu_tile.elementwise of one streamed argument (a weight
/// stored in f8, say) whose result one op reads (f8 expanded to f16 and
/// scaled, before the matmul that reads it): it runs where its reader
/// wants the weight resident, so the weight streams in there in its stored
/// type and no exchange moves it.
Value expandedWeight(Value value);

/// The value of an integer attribute as int64_t, honouring its signedness,
/// or nothing when it does not fit.
std::optional<int64_t> toInt64(IntegerAttr attr);

/// The element type of an MLIR type, if the machine handles it.
std::optional<ipu::ElementType> toElementType(Type type);
Type fromElementType(MLIRContext *context, ipu::ElementType type);

/// The buffer `ref` names in the program `user` is in (buffers are symbols
/// of the ipu_tile.program, also for steps inside a loop, which is a symbol
/// table of its own steps), or null.
BufferOp lookupBuffer(Operation *user, FlatSymbolRefAttr ref);

/// When each buffer of a program is live, in program steps (every op of the
/// program but its buffers is a step, numbered from 0): from the first step
/// that reads or writes it to the last, inclusive. Weights (resident
/// streams) are live at every step. --ipu-place-storage places by this and
/// the program's verifier checks placements against it.
struct ProgramLiveness {
  SmallVector<BufferOp> buffers; ///< In program order.
  DenseMap<StringAttr, unsigned> indexOf;
  /// Per buffer: first and last step; [0, 0] for a buffer no step uses.
  SmallVector<std::pair<uint32_t, uint32_t>> live;
  SmallVector<bool> used;
  /// Every step in the order it first runs: a loop, then its body's steps.
  SmallVector<Operation *> steps;
};
/// Buffer liveness over the program's steps. A loop's body counts once; a
/// buffer it shares with steps outside the loop, or that a step directly in
/// its body reads or writes a chunk of per iteration, is live over the
/// whole loop (from the loop step to its body's last), since every
/// iteration needs it. Loops nest: each applies the rule to its own body.
ProgramLiveness computeLiveness(ProgramOp program);

/// How deep ipu_tile.loop ops nest at most (a serial split inside a
/// repeated layer needs 2): the package's PackageLimits::kMaxLoopDepth.
constexpr unsigned kMaxLoopDepth = 4;

/// The batches of a tensor of `shape` under a layout: the product of its
/// leading dimensions (1 for a 2-D tensor), or nothing for a rank below 2,
/// a negative extent or a product that overflows.
std::optional<int64_t> layoutBatches(ArrayRef<int64_t> shape);
/// The block layout of a static tensor type of rank 2 or more with a
/// `#ipu_tile.layout` encoding, for a target whose exchange moves words of
/// `wordBytes` (exchangeWordBytes); its leading dimensions become the
/// batches.
std::optional<ipu::BlockLayout> toBlockLayout(RankedTensorType type,
                                              uint32_t wordBytes);
/// The exchange word of the target `scope` is compiled for (lookupTarget),
/// which every layout there pads its rows to; without a target, ipu21's.
uint32_t exchangeWordBytes(Operation *scope);
/// The encoding that describes `layout` (shape and type come from the
/// tensor, whose leading dimensions must multiply to layout.batches).
LayoutAttr toLayoutAttr(MLIRContext *context, const ipu::BlockLayout &layout);
/// The encoding of `layout` on a tensor of `type`: a 2-D layout on a tensor
/// of rank above 2 folds its leading dimensions into the rows.
LayoutAttr toLayoutAttr(RankedTensorType type, const ipu::BlockLayout &layout);

/// The plain C++ form of an elementwise body `block` of `owner` (an
/// ipu_tile.elementwise or ipu_tile.kernel), its inputs broadcast as given;
/// emits an error naming the first op no tile kernel can run.
FailureOr<ipu::ElementwiseBody>
buildElementwiseBody(Operation *owner, Block &block,
                     ArrayRef<ipu::Broadcast> broadcasts,
                     ipu::RowReduction reduction = ipu::RowReduction::None,
                     double init = 0);
/// The plain C++ reduction of an op's optional `reduce` attribute.
ipu::RowReduction toRowReduction(std::optional<RowReduction> reduce);

/// The kernel a compute set runs: a device/ kernel, or the ipu_tile.kernel
/// of its program it names (built into `holder`). Null when there is none.
const ipu::KernelSpec *
lookupComputeSetKernel(ComputeSetOp computeSet,
                       std::unique_ptr<ipu::ElementwiseKernel> &holder);

/// The bytes of a constant's elements, row-major and little-endian as the
/// host holds them (a splat repeated); failure for a resource whose blob is
/// missing or of the wrong size, or elements that are not dense.
FailureOr<std::vector<char>> constantBytes(ElementsAttr value);
/// The same for a constant that is either an elements attribute or a block
/// of the data file (#ipu_tile.data); a failure is reported at `user`.
FailureOr<std::vector<char>> constantBytes(Attribute value, Operation *user);
/// The tensor type of such a constant, or null for any other attribute.
ShapedType constantType(Attribute value);
/// The bytes of block `data` in the data file `user`'s module names, read
/// and checked once per context. Failure, reported at `user`, when the
/// module names no data file, the file is missing, is another compile's or
/// does not hold the block.
FailureOr<ArrayRef<char>> dataBlockBytes(DataAttr data, Operation *user);

/// Whether `op` reads its source's elements in order, whole: every dim of
/// its view in place and no window, so its result only reshapes them.
bool readsInOrder(PermuteOp op);

} // namespace mlir::ipu_tile

#endif // IPU_DIALECT_TILE_IR_TILEUTILS_H
