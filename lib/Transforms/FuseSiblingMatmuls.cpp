//===- FuseSiblingMatmuls.cpp - One matmul for the projections of a value ===//
//
// Attention's Q, K and V projections read one value with three weights of
// their own. As three matmuls, each gathers that value into its plan's
// layout, reduces its own partial sums and pays its phases; as one, with the
// weights side by side, it gathers the value once, and its plan has three
// times the columns to spread. Each projection becomes a column window of
// the one result, and what they compute next (the same bias add and cast on
// each) is computed once on the whole, with the constants side by side: a
// window moves only where its reader needs it, and a head split of a window
// reads it from the whole (timm's fused qkv, as it is exported).
//
//===----------------------------------------------------------------------===//

#include "IPU/Dialect/Gemm/IR/Gemm.h"
#include "IPU/Dialect/Tile/IR/TileUtils.h"
#include "IPU/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/OperationSupport.h"

#include "llvm/ADT/MapVector.h"

namespace mlir::ipu_compiler {
#define GEN_PASS_DEF_IPUFUSESIBLINGMATMULS
#include "IPU/Transforms/Passes.h.inc"
} // namespace mlir::ipu_compiler

using namespace mlir;

namespace {

/// A frozen weight: an argument of the function's entry block that carries
/// its value (ImportFrozen), read once, by `user`.
ElementsAttr frozenValue(Value value, Operation *user) {
  auto argument = dyn_cast<BlockArgument>(value);
  if (!argument || !argument.hasOneUse() || *argument.getUsers().begin() != user)
    return {};
  auto func = dyn_cast<func::FuncOp>(argument.getOwner()->getParentOp());
  if (!func || argument.getOwner() != &func.getBody().front())
    return {};
  return func.getArgAttrOfType<ElementsAttr>(
      argument.getArgNumber(), ipu_tile::IPUTileDialect::getConstantAttrName());
}

/// A frozen weight holding `parts` side by side along dim `axis` (the
/// same extents in every other dim), as a new argument of `func`.
FailureOr<Value> concatenatedWeight(func::FuncOp func, ArrayRef<Value> parts, Location loc,
                                    unsigned axis) {
  auto first = cast<RankedTensorType>(parts.front().getType());
  const int64_t element = first.getElementTypeBitWidth() / 8;
  int64_t leading = 1, trailing = element;
  for (int64_t extent : first.getShape().take_front(axis))
    leading *= extent;
  for (int64_t extent : first.getShape().drop_front(axis + 1))
    trailing *= extent;
  int64_t width = 0;
  SmallVector<std::vector<char>> bytes;
  for (Value part : parts) {
    FailureOr<std::vector<char>> data =
        ipu_tile::constantBytes(frozenValue(part, *part.getUsers().begin()));
    if (failed(data))
      return failure();
    bytes.push_back(std::move(*data));
    width += cast<RankedTensorType>(part.getType()).getDimSize(axis);
  }
  std::vector<char> joined;
  joined.reserve(leading * width * trailing);
  for (int64_t row = 0; row < leading; ++row)
    for (auto [part, data] : llvm::zip(parts, bytes)) {
      const int64_t run = cast<RankedTensorType>(part.getType()).getDimSize(axis) * trailing;
      joined.insert(joined.end(), data.begin() + row * run, data.begin() + (row + 1) * run);
    }
  SmallVector<int64_t> shape(first.getShape());
  shape[axis] = width;
  auto type = RankedTensorType::get(shape, first.getElementType());
  NamedAttribute value(
      StringAttr::get(func.getContext(), ipu_tile::IPUTileDialect::getConstantAttrName()),
      DenseElementsAttr::getFromRawBuffer(type, joined));
  const unsigned index = func.getNumArguments();
  if (failed(func.insertArgument(index, type, DictionaryAttr::get(func.getContext(), {value}),
                                 loc)))
    return failure();
  return func.getArgument(index);
}

/// The column window [offset, offset + size) of every row of a rank-2
/// value, as a permute.
struct ColumnWindow {
  Value source;
  int64_t offset = 0, size = 0;
};

std::optional<ColumnWindow> columnWindow(ipu_tile::PermuteOp op) {
  auto source = cast<RankedTensorType>(op.getSource().getType());
  if (source.getRank() != 2 || op.getView() != source.getShape() ||
      op.getPermutation() != ArrayRef<int64_t>{0, 1} || !op.getOffsets() || !op.getSizes())
    return std::nullopt;
  ArrayRef<int64_t> offsets = *op.getOffsets(), sizes = *op.getSizes();
  if (offsets[0] != 0 || sizes[0] != source.getDimSize(0))
    return std::nullopt;
  return ColumnWindow{op.getSource(), offsets[1], sizes[1]};
}

Value windowOf(OpBuilder &builder, Location loc, Value source, int64_t offset, int64_t size) {
  auto type = cast<RankedTensorType>(source.getType());
  auto result = RankedTensorType::get({type.getDimSize(0), size}, type.getElementType());
  return ipu_tile::PermuteOp::create(builder, loc, result, source,
                                     builder.getDenseI64ArrayAttr(type.getShape()),
                                     builder.getDenseI64ArrayAttr({0, 1}),
                                     builder.getDenseI64ArrayAttr({0, offset}),
                                     builder.getDenseI64ArrayAttr({type.getDimSize(0), size}));
}

/// Matmuls of one value by frozen weights ([n_i, k], transposed), alike in
/// all else, become one matmul by the weights side by side; each result is
/// a column window of its result. Returns how many matmuls it fused.
unsigned fuseMatmuls(func::FuncOp func) {
  // By what they read, the weights' element type and inner extent, and
  // what they compute in: weights of any number of rows join.
  llvm::MapVector<std::tuple<Value, Type, int64_t, Type, Attribute, Attribute>,
                  SmallVector<ipu_gemm::MatmulOp>>
      groups;
  func.walk([&](ipu_gemm::MatmulOp op) {
    auto lhs = cast<RankedTensorType>(op.getLhs().getType());
    auto rhs = cast<RankedTensorType>(op.getRhs().getType());
    if (lhs.getRank() != 2 || rhs.getRank() != 2 || !op.getTransposeRhs() ||
        op.getTransposeLhs() || op.getPlan() || op.getConstraints() ||
        !frozenValue(op.getRhs(), op))
      return;
    groups[{op.getLhs(), rhs.getElementType(), rhs.getDimSize(1),
            op.getResult().getType().getElementType(),
            op.getAccTypeAttr(), op.getInputScaleAttr()}]
        .push_back(op);
  });
  unsigned fused = 0;
  for (auto &entry : groups) {
    SmallVector<ipu_gemm::MatmulOp> &matmuls = entry.second;
    if (matmuls.size() < 2)
      continue;
    ipu_gemm::MatmulOp first = matmuls.front();
    SmallVector<Value> weights;
    for (ipu_gemm::MatmulOp op : matmuls)
      weights.push_back(op.getRhs());
    FailureOr<Value> joined = concatenatedWeight(func, weights, first.getLoc(), /*axis=*/0);
    if (failed(joined))
      continue;
    OpBuilder builder(first);
    Operation *whole = builder.clone(*first);
    whole->setOperand(1, *joined);
    const int64_t rows = first.getResult().getType().getDimSize(0);
    const int64_t cols = cast<RankedTensorType>(joined->getType()).getDimSize(0);
    whole->getResult(0).setType(
        RankedTensorType::get({rows, cols}, first.getResult().getType().getElementType()));
    builder.setInsertionPointAfter(whole);
    int64_t offset = 0;
    SmallVector<Value> windows;
    for (ipu_gemm::MatmulOp op : matmuls) {
      const int64_t size = op.getResult().getType().getDimSize(1);
      windows.push_back(windowOf(builder, op.getLoc(), whole->getResult(0), offset, size));
      offset += size;
    }
    const Location loc = first.getLoc();
    const int64_t inner = cast<RankedTensorType>(first.getLhs().getType()).getDimSize(1);
    for (auto [op, window] : llvm::zip(matmuls, windows)) {
      op.getResult().replaceAllUsesWith(window);
      op.erase();
    }
    mlir::emitRemark(loc, "computes ")
        << matmuls.size() << " matmuls of one value by frozen weights as one, " << rows
        << "x" << inner << "x" << cols << ", the weights side by side";
    fused += matmuls.size();
  }
  return fused;
}

/// Whether every op of `ops` reads one value as input `index`.
bool sameEverywhere(ArrayRef<ipu_tile::ElementwiseOp> ops, unsigned index) {
  Value first = ipu_tile::ElementwiseOp(ops.front()).getInputs()[index];
  for (ipu_tile::ElementwiseOp op : ops)
    if (op.getInputs()[index] != first)
      return false;
  return true;
}

bool alike(ipu_tile::ElementwiseOp a, ipu_tile::ElementwiseOp b) {
  return a.getReduceAttr() == b.getReduceAttr() && a.getInitAttr() == b.getInitAttr() &&
         a.getInputs().size() == b.getInputs().size() &&
         a.getResult().getType().getElementType() == b.getResult().getType().getElementType() &&
         OperationEquivalence::isRegionEquivalentTo(&a.getBody(), &b.getBody(),
                                                    OperationEquivalence::IgnoreLocations);
}

/// Whether `parts` can stand side by side along their last dim: each a
/// frozen weight, or each an elementwise op (one reader) alike of parts
/// that can.
bool joinable(ArrayRef<Value> parts) {
  auto type = cast<RankedTensorType>(parts.front().getType());
  for (Value part : parts) {
    auto partType = cast<RankedTensorType>(part.getType());
    if (!part.hasOneUse() || partType.getRank() != type.getRank() ||
        partType.getElementType() != type.getElementType() ||
        partType.getShape().drop_back() != type.getShape().drop_back())
      return false;
  }
  if (llvm::all_of(parts, [](Value part) {
        return static_cast<bool>(frozenValue(part, *part.getUsers().begin()));
      }))
    return true;
  auto first = parts.front().getDefiningOp<ipu_tile::ElementwiseOp>();
  if (!first || first.getReduce())
    return false;
  for (Value part : parts) {
    auto op = part.getDefiningOp<ipu_tile::ElementwiseOp>();
    if (!op || !alike(op, first))
      return false;
  }
  for (unsigned i = 0; i < first.getInputs().size(); ++i) {
    SmallVector<Value> inputParts;
    for (Value part : parts)
      inputParts.push_back(part.getDefiningOp<ipu_tile::ElementwiseOp>().getInputs()[i]);
    if (!joinable(inputParts))
      return false;
  }
  return true;
}

/// `parts` (joinable) side by side along their last dim: a new frozen
/// weight, or one elementwise op of the joined inputs where the first
/// part's op was.
FailureOr<Value> joinParts(func::FuncOp func, ArrayRef<Value> parts, OpBuilder &builder,
                           SmallVectorImpl<Operation *> &replaced) {
  if (frozenValue(parts.front(), *parts.front().getUsers().begin()))
    return concatenatedWeight(func, parts, parts.front().getLoc(),
                              cast<RankedTensorType>(parts.front().getType()).getRank() - 1);
  SmallVector<ipu_tile::ElementwiseOp> ops;
  for (Value part : parts)
    ops.push_back(part.getDefiningOp<ipu_tile::ElementwiseOp>());
  SmallVector<Value> inputs;
  for (unsigned i = 0; i < ops.front().getInputs().size(); ++i) {
    SmallVector<Value> inputParts;
    for (ipu_tile::ElementwiseOp op : ops)
      inputParts.push_back(op.getInputs()[i]);
    FailureOr<Value> joined = joinParts(func, inputParts, builder, replaced);
    if (failed(joined))
      return failure();
    inputs.push_back(*joined);
  }
  auto type = cast<RankedTensorType>(parts.front().getType());
  int64_t width = 0;
  for (Value part : parts)
    width += cast<RankedTensorType>(part.getType()).getShape().back();
  SmallVector<int64_t> shape(type.getShape());
  shape.back() = width;
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPoint(ops.front());
  Operation *whole = builder.clone(*ops.front());
  whole->setOperands(inputs);
  whole->getResult(0).setType(RankedTensorType::get(shape, type.getElementType()));
  // Erased once their readers are, after the parts they read.
  for (ipu_tile::ElementwiseOp op : ops)
    replaced.push_back(op);
  return whole->getResult(0);
}

/// Alike elementwise ops, each the one reader of a column window of one
/// value (the windows side by side from column 0 to its last), become one
/// op on that value, their other inputs side by side (or one for all);
/// each op's result is a window of its result. Returns whether it fused.
bool fuseWindowReaders(func::FuncOp func) {
  llvm::MapVector<Value, SmallVector<ipu_tile::PermuteOp>> windowsOf;
  func.walk([&](ipu_tile::PermuteOp op) {
    if (std::optional<ColumnWindow> window = columnWindow(op))
      windowsOf[window->source].push_back(op);
  });
  for (auto &[source, windows] : windowsOf) {
    if (windows.size() < 2)
      continue;
    // In column order, covering the whole from its first column to its last.
    llvm::sort(windows, [](ipu_tile::PermuteOp a, ipu_tile::PermuteOp b) {
      return columnWindow(a)->offset < columnWindow(b)->offset;
    });
    int64_t next = 0;
    SmallVector<ipu_tile::ElementwiseOp> readers;
    std::optional<unsigned> at;
    bool ok = true;
    for (ipu_tile::PermuteOp window : windows) {
      ColumnWindow w = *columnWindow(window);
      ok &= w.offset == next && window.getResult().hasOneUse();
      next = w.offset + w.size;
      auto reader = ok ? dyn_cast<ipu_tile::ElementwiseOp>(*window.getResult().getUsers().begin())
                       : nullptr;
      if (!reader || reader.getReduce() || (!readers.empty() && !alike(reader, readers.front()))) {
        ok = false;
        break;
      }
      const unsigned index =
          window.getResult().getUses().begin()->getOperandNumber();
      if ((at && *at != index) || reader.getBroadcast(index) != ipu::Broadcast::Full ||
          llvm::count(reader.getInputs(), window.getResult()) != 1) {
        ok = false;
        break;
      }
      at = index;
      readers.push_back(reader);
    }
    if (!ok || next != cast<RankedTensorType>(source.getType()).getDimSize(1))
      continue;
    // Every input other than the window: one value for all (a column or a
    // scalar), or parts that can stand side by side. Checked before any
    // change.
    const unsigned inputCount = readers.front().getInputs().size();
    SmallVector<bool> shared(inputCount, false);
    for (unsigned i = 0; i < inputCount && ok; ++i) {
      if (i == *at)
        continue;
      const ipu::Broadcast broadcast = *readers.front().getBroadcast(i);
      shared[i] = sameEverywhere(readers, i) &&
                  (broadcast == ipu::Broadcast::Column || broadcast == ipu::Broadcast::Scalar);
      SmallVector<Value> parts;
      for (ipu_tile::ElementwiseOp reader : readers)
        parts.push_back(reader.getInputs()[i]);
      // Only what varies along the row stands side by side: a column (a
      // value per row) of each would not be one column of the whole.
      ok = shared[i] ||
           ((broadcast == ipu::Broadcast::Full || broadcast == ipu::Broadcast::Row) &&
            joinable(parts));
    }
    if (!ok)
      continue;
    OpBuilder builder(readers.front());
    SmallVector<Value> inputs;
    SmallVector<Operation *> replaced;
    for (unsigned i = 0; i < inputCount; ++i) {
      if (i == *at || shared[i]) {
        inputs.push_back(i == *at ? source : readers.front().getInputs()[i]);
        continue;
      }
      SmallVector<Value> parts;
      for (ipu_tile::ElementwiseOp reader : readers)
        parts.push_back(reader.getInputs()[i]);
      FailureOr<Value> joined = joinParts(func, parts, builder, replaced);
      if (failed(joined))
        return false;
      inputs.push_back(*joined);
    }
    // Where the first reader was: its other inputs are frozen, computed
    // from frozen parts there, or read by the first reader already.
    builder.setInsertionPoint(readers.front());
    Operation *whole = builder.clone(*readers.front());
    whole->setOperands(inputs);
    auto sourceType = cast<RankedTensorType>(source.getType());
    whole->getResult(0).setType(RankedTensorType::get(
        sourceType.getShape(), readers.front().getResult().getType().getElementType()));
    builder.setInsertionPointAfter(whole);
    SmallVector<Value> results;
    for (auto [reader, window] : llvm::zip(readers, windows)) {
      ColumnWindow w = *columnWindow(window);
      results.push_back(windowOf(builder, reader.getLoc(), whole->getResult(0), w.offset, w.size));
    }
    for (auto [reader, window, result] : llvm::zip(readers, windows, results)) {
      reader.getResult().replaceAllUsesWith(result);
      reader.erase();
      window.erase();
    }
    for (Operation *op : llvm::reverse(replaced))
      op->erase();
    return true;
  }
  return false;
}

/// A one-input elementwise op of a reshaped column window runs on the
/// window itself and its result is reshaped instead (an elementwise op
/// commutes with a reshape), so that it becomes a reader of the window
/// (fuseWindowReaders): attention's quantised query, key and value.
/// Returns whether it moved any.
bool hoistElementwiseAboveReshapes(func::FuncOp func) {
  SmallVector<ipu_tile::ElementwiseOp> moved;
  func.walk([&](ipu_tile::ElementwiseOp op) {
    if (op.getReduce() || op.getInputs().size() != 1 ||
        op.getBroadcast(0) != ipu::Broadcast::Full)
      return;
    auto reshape = op.getInputs()[0].getDefiningOp<ipu_tile::PermuteOp>();
    if (!reshape || !reshape.getResult().hasOneUse() || !ipu_tile::readsInOrder(reshape))
      return;
    auto window = reshape.getSource().getDefiningOp<ipu_tile::PermuteOp>();
    if (window && columnWindow(window))
      moved.push_back(op);
  });
  for (ipu_tile::ElementwiseOp op : moved) {
    auto reshape = op.getInputs()[0].getDefiningOp<ipu_tile::PermuteOp>();
    OpBuilder builder(op);
    Operation *onWindow = builder.clone(*op);
    onWindow->setOperands(reshape.getSource());
    auto windowType = cast<RankedTensorType>(reshape.getSource().getType());
    onWindow->getResult(0).setType(
        windowType.clone(op.getResult().getType().getElementType()));
    auto reshaped = ipu_tile::PermuteOp::create(
        builder, reshape.getLoc(), op.getResult().getType(), onWindow->getResult(0),
        reshape.getViewAttr(), reshape.getPermutationAttr(), nullptr, nullptr);
    op.getResult().replaceAllUsesWith(reshaped.getResult());
    op.erase();
    reshape.erase();
  }
  return !moved.empty();
}

/// A permute of a reshape's only result reads the reshape's source: a
/// reshape keeps the elements in order, so the permute's view of either is
/// the same.
bool readThroughReshape(ipu_tile::PermuteOp op) {
  auto reshape = op.getSource().getDefiningOp<ipu_tile::PermuteOp>();
  if (!reshape || !reshape.getResult().hasOneUse() || !ipu_tile::readsInOrder(reshape))
    return false;
  op.getSourceMutable().assign(reshape.getSource());
  reshape.erase();
  return true;
}

/// A permute of a column window reads the whole: the window's columns are
/// a range of the permute's leading column dim when the view splits rows
/// and columns apart and the window starts and ends on that dim's steps.
bool foldWindowIntoPermute(ipu_tile::PermuteOp op) {
  auto inner = op.getSource().getDefiningOp<ipu_tile::PermuteOp>();
  std::optional<ColumnWindow> window = inner ? columnWindow(inner) : std::nullopt;
  if (!window || !inner.getResult().hasOneUse())
    return false;
  auto sourceType = cast<RankedTensorType>(window->source.getType());
  const int64_t rows = sourceType.getDimSize(0), cols = sourceType.getDimSize(1);
  SmallVector<int64_t> view(op.getView());
  // The view's dims [0, split) hold the rows, [split, end) the columns.
  size_t split = 0;
  for (int64_t product = 1; split < view.size() && product < rows; ++split)
    product *= view[split];
  int64_t rowProduct = 1;
  for (size_t d = 0; d < split; ++d)
    rowProduct *= view[d];
  if (rowProduct != rows || split >= view.size())
    return false;
  int64_t step = 1;
  for (size_t d = split + 1; d < view.size(); ++d)
    step *= view[d];
  if (window->offset % step || cols % step)
    return false;
  // The window is of the permuted view (the result may reshape it): by
  // default all of the permuted view as it was.
  ArrayRef<int64_t> permutation = op.getPermutation();
  SmallVector<int64_t> offsets(view.size(), 0), sizes;
  for (int64_t dim : permutation)
    sizes.push_back(view[dim]);
  if (op.getOffsets()) {
    offsets.assign(op.getOffsets()->begin(), op.getOffsets()->end());
    sizes.assign(op.getSizes()->begin(), op.getSizes()->end());
  }
  view[split] = cols / step;
  auto resultType = op.getResult().getType();
  for (auto [k, dim] : llvm::enumerate(permutation))
    if (dim == static_cast<int64_t>(split))
      offsets[k] += window->offset / step;
  OpBuilder builder(op);
  auto folded = ipu_tile::PermuteOp::create(
      builder, op.getLoc(), resultType, window->source, builder.getDenseI64ArrayAttr(view),
      op.getPermutationAttr(), builder.getDenseI64ArrayAttr(offsets),
      builder.getDenseI64ArrayAttr(sizes));
  op.getResult().replaceAllUsesWith(folded.getResult());
  op.erase();
  inner.erase();
  return true;
}

struct FuseSiblingMatmulsPass
    : public mlir::ipu_compiler::impl::IPUFuseSiblingMatmulsBase<FuseSiblingMatmulsPass> {
  void runOnOperation() override {
    getOperation().walk([&](func::FuncOp func) {
      if (func.isExternal() || !fuseMatmuls(func))
        return;
      while (fuseWindowReaders(func) || hoistElementwiseAboveReshapes(func)) {
      }
      SmallVector<ipu_tile::PermuteOp> permutes;
      func.walk([&](ipu_tile::PermuteOp op) { permutes.push_back(op); });
      for (ipu_tile::PermuteOp op : permutes)
        readThroughReshape(op);
      permutes.clear();
      func.walk([&](ipu_tile::PermuteOp op) { permutes.push_back(op); });
      for (ipu_tile::PermuteOp op : permutes)
        foldWindowIntoPermute(op);
      // The parts' own arguments, now unread.
      llvm::BitVector unread(func.getNumArguments());
      for (BlockArgument argument : func.getArguments())
        if (argument.use_empty() &&
            func.getArgAttr(argument.getArgNumber(),
                            ipu_tile::IPUTileDialect::getConstantAttrName()))
          unread.set(argument.getArgNumber());
      if (failed(func.eraseArguments(unread)))
        signalPassFailure();
    });
  }
};

} // namespace
