//===- SeparateImages.cpp - A batch compiled as one image ------------------===//
//
// Follows the batch through the function's ops: which value carries it, on
// which dim and with how many elements per image along that dim. When every
// op keeps images apart, the function is rewritten to one image's share of
// every such value and marked `ipu.images`; otherwise it is left as it is
// and a remark names the op that mixes images.
//
//===----------------------------------------------------------------------===//

#include "IPU/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Verifier.h"

#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SmallBitVector.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/FormatVariadic.h"

#include <optional>
#include <string>

namespace mlir::ipu_compiler {
#define GEN_PASS_DEF_IPUSEPARATEIMAGES
#include "IPU/Transforms/Passes.h.inc"
} // namespace mlir::ipu_compiler

using namespace mlir;

namespace {

/// Where a value holds the batch: along `dim`, image i owns indices
/// [i * inner, (i + 1) * inner).
struct BatchDim {
  unsigned dim = 0;
  int64_t inner = 1;
  bool operator==(const BatchDim &other) const {
    return dim == other.dim && inner == other.inner;
  }
};

class ImageSeparation {
public:
  ImageSeparation(func::FuncOp func, int64_t images) : func(func), images(images) {}

  /// Every batched value's BatchDim, or why the images cannot be separated.
  std::optional<std::string> analyse();
  /// Shrinks every batched value to one image.
  void rewrite();
  size_t batchedValues() const { return batched.size(); }

private:
  std::optional<std::string> visit(Operation *op);
  std::optional<std::string> visitLinalg(linalg::LinalgOp op);
  std::optional<std::string> visitCollapse(tensor::CollapseShapeOp op, BatchDim source);
  std::optional<std::string> visitExpand(tensor::ExpandShapeOp op, BatchDim source);
  std::optional<std::string> visitExtractSlice(tensor::ExtractSliceOp op, BatchDim source);
  /// Marks `value` batched at `where`; an error when it already is
  /// elsewhere, or when its dim is not B * inner long.
  std::optional<std::string> mark(Value value, BatchDim where);
  /// Whether `value`, which no image owns, holds the same block for every
  /// image at `where` (a tensor.empty, a broadcast of a weight, what ops
  /// compute from such blocks alone: the pooling head's query), so that
  /// one image's share holds all it says. With `mark`, marks it and what
  /// it is made from batched (only after a check without).
  bool invariant(Value value, BatchDim where, bool mark);
  /// Whether every reader of a batched value reads it image by image.
  std::optional<std::string> checkReaders() const;
  std::optional<BatchDim> batchOf(Value value) const {
    auto it = batched.find(value);
    return it == batched.end() ? std::nullopt : std::optional<BatchDim>(it->second);
  }
  static RankedTensorType shareType(Value value, BatchDim where) {
    auto type = cast<RankedTensorType>(value.getType());
    SmallVector<int64_t> shape(type.getShape());
    shape[where.dim] = where.inner;
    return type.clone(shape);
  }

  func::FuncOp func;
  int64_t images;
  /// In the order values were marked, so that the rewrite is deterministic.
  llvm::MapVector<Value, BatchDim> batched;
  /// Ops that read or write values image by image.
  llvm::SmallPtrSet<Operation *, 32> separated;
};

std::string describeOp(Operation *op) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "'" << op->getName() << "' at " << op->getLoc();
  return text;
}

/// Whether `op`'s body reads the index of `loop` (linalg.index): what it
/// computes then depends on the position along the images, not only on
/// the operands.
bool readsLoopIndex(linalg::LinalgOp op, unsigned loop) {
  bool reads = false;
  op->walk([&](linalg::IndexOp index) { reads |= index.getDim() == loop; });
  return reads;
}

/// A reshape's group of fine dims `dims` (of `fineShape`) that a coarse dim
/// holding the batch in blocks of `inner` splits into: the batch goes to
/// the group's first dim longer than 1, if the dims after it fit inside
/// one image's block.
std::optional<BatchDim> batchIntoGroup(ArrayRef<int64_t> fineShape,
                                       const ReassociationIndices &dims, int64_t inner) {
  for (auto [at, dim] : llvm::enumerate(dims)) {
    if (fineShape[dim] == 1 && at + 1 < dims.size())
      continue;
    int64_t trailing = 1;
    for (int64_t after : ArrayRef<int64_t>(dims).drop_front(at + 1))
      trailing *= fineShape[after];
    if (inner % trailing != 0)
      return std::nullopt;
    return BatchDim{unsigned(dim), inner / trailing};
  }
  return std::nullopt;
}

/// The coarse dim of a reshape whose group holds the fine dim `fine` (of
/// `fineShape`): the batch stays outermost if the group's dims before it
/// are 1, and its blocks take in the dims after it.
std::optional<BatchDim> batchOutOfGroup(ArrayRef<int64_t> fineShape,
                                        ArrayRef<ReassociationIndices> groups, BatchDim fine) {
  for (auto [group, dims] : llvm::enumerate(groups)) {
    if (!llvm::is_contained(dims, int64_t(fine.dim)))
      continue;
    int64_t inner = fine.inner;
    for (int64_t dim : dims) {
      if (dim < int64_t(fine.dim) && fineShape[dim] != 1)
        return std::nullopt;
      if (dim > int64_t(fine.dim))
        inner *= fineShape[dim];
    }
    return BatchDim{unsigned(group), inner};
  }
  return std::nullopt;
}

/// Where `map` reads with `loop`: the one result that is that loop alone,
/// none, or failure when the loop takes part in another expression or in
/// two results (which would mix images).
FailureOr<std::optional<unsigned>> positionOfLoop(AffineMap map, unsigned loop) {
  std::optional<unsigned> position;
  for (auto [index, expr] : llvm::enumerate(map.getResults())) {
    if (!expr.isFunctionOfDim(loop))
      continue;
    if (position || !isa<AffineDimExpr>(expr))
      return failure();
    position = index;
  }
  return position;
}

std::optional<std::string> ImageSeparation::mark(Value value, BatchDim where) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!type || !type.hasStaticShape() || where.dim >= type.getRank() ||
      type.getDimSize(where.dim) != images * where.inner)
    return std::string("a value of type ") + llvm::formatv("{0}", value.getType()).str() +
           " would carry the batch on dim " + std::to_string(where.dim) + " in blocks of " +
           std::to_string(where.inner);
  auto [it, inserted] = batched.try_emplace(value, where);
  if (!inserted && !(it->second == where))
    return std::string("a value carries the batch on two dims (") +
           std::to_string(it->second.dim) + " and " + std::to_string(where.dim) + ")";
  return std::nullopt;
}

bool ImageSeparation::invariant(Value value, BatchDim where, bool markIt) {
  auto result = dyn_cast<OpResult>(value);
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!result || !type || !type.hasStaticShape() || where.dim >= type.getRank() ||
      type.getDimSize(where.dim) != images * where.inner)
    return false;
  if (std::optional<BatchDim> marked = batchOf(value))
    return *marked == where;
  if (markIt) {
    if (mark(value, where))
      return false;
    separated.insert(result.getOwner());
  }
  Operation *def = result.getOwner();
  if (isa<tensor::EmptyOp>(def))
    return true;
  // A splat (SDPA's zeros for wholly masked rows) is the same everywhere.
  if (auto constant = dyn_cast<arith::ConstantOp>(def))
    return isa<SplatElementsAttr>(constant.getValue());
  // Reshapes, the other way round from visitCollapse and visitExpand.
  if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(def)) {
    std::optional<BatchDim> source =
        batchIntoGroup(collapse.getSrcType().getShape(),
                       collapse.getReassociationIndices()[where.dim], where.inner);
    return source && invariant(collapse.getSrc(), *source, markIt);
  }
  if (auto expand = dyn_cast<tensor::ExpandShapeOp>(def)) {
    std::optional<BatchDim> source = batchOutOfGroup(
        expand.getResultType().getShape(), expand.getReassociationIndices(), where);
    return source && invariant(expand.getSrc(), *source, markIt);
  }
  // One result: the loop ranges of an op follow all of them.
  auto op = dyn_cast<linalg::LinalgOp>(def);
  if (!op || def->getNumResults() != 1)
    return false;
  OpOperand *init = op.getDpsInitOperand(result.getResultNumber());
  auto loop = dyn_cast<AffineDimExpr>(op.getMatchingIndexingMap(init).getResult(where.dim));
  if (!loop || op.getIteratorTypesArray()[loop.getPosition()] != utils::IteratorType::parallel ||
      readsLoopIndex(op, loop.getPosition()))
    return false;
  // Each operand the loop walks walks it on one dim, whose blocks must be
  // the same for every image too; an operand it does not walk is
  // broadcast over the images.
  for (OpOperand &operand : op->getOpOperands()) {
    FailureOr<std::optional<unsigned>> position =
        positionOfLoop(op.getMatchingIndexingMap(&operand), loop.getPosition());
    if (failed(position) ||
        (*position && !invariant(operand.get(), {**position, where.inner}, markIt)))
      return false;
  }
  return true;
}

std::optional<std::string> ImageSeparation::checkReaders() const {
  for (const auto &[value, where] : batched)
    for (Operation *user : value.getUsers())
      if (!separated.contains(user) && !isa<func::ReturnOp>(user))
        return describeOp(user) + " reads a value of the batch but not image by image";
  return std::nullopt;
}

std::optional<std::string> ImageSeparation::analyse() {
  for (BlockArgument argument : func.getArguments())
    if (auto error = mark(argument, {0, 1}))
      return "argument " + std::to_string(argument.getArgNumber()) + ": " + *error;
  for (Operation &op : func.getBody().front())
    if (auto error = visit(&op))
      return error;
  return checkReaders();
}

std::optional<std::string> ImageSeparation::visit(Operation *op) {
  if (auto ret = dyn_cast<func::ReturnOp>(op)) {
    for (auto [index, value] : llvm::enumerate(ret.getOperands())) {
      std::optional<BatchDim> where = batchOf(value);
      if (!where || where->dim != 0)
        return "result " + std::to_string(index) +
               " does not hold the images one after another along its leading dim";
    }
    return std::nullopt;
  }
  bool readsBatch = llvm::any_of(op->getOperands(), [&](Value v) { return batchOf(v).has_value(); });
  // Weights and constants, the same for every image; what a reader takes
  // image by image of them is marked by that reader (invariant).
  if (!readsBatch)
    return std::nullopt;
  separated.insert(op);
  if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op))
    return visitLinalg(linalgOp);
  if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(op))
    return visitCollapse(collapse, *batchOf(collapse.getSrc()));
  if (auto expand = dyn_cast<tensor::ExpandShapeOp>(op))
    return visitExpand(expand, *batchOf(expand.getSrc()));
  if (auto slice = dyn_cast<tensor::ExtractSliceOp>(op))
    return visitExtractSlice(slice, *batchOf(slice.getSource()));
  return describeOp(op) + " reads a batched value and is not known to keep images apart";
}

std::optional<std::string> ImageSeparation::visitLinalg(linalg::LinalgOp op) {
  // The one loop that walks the images.
  std::optional<unsigned> imageLoop;
  int64_t inner = 0;
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  for (OpOperand &operand : op->getOpOperands()) {
    std::optional<BatchDim> where = batchOf(operand.get());
    if (!where)
      continue;
    AffineMap map = maps[operand.getOperandNumber()];
    auto dimExpr = dyn_cast<AffineDimExpr>(map.getResult(where->dim));
    if (!dimExpr)
      return describeOp(op) + " indexes the batch of operand " +
             std::to_string(operand.getOperandNumber()) + " with " +
             llvm::formatv("{0}", map.getResult(where->dim)).str() + ", not a loop of its own";
    if (imageLoop && (*imageLoop != dimExpr.getPosition() || inner != where->inner))
      return describeOp(op) + " reads images along two different loops";
    imageLoop = dimExpr.getPosition();
    inner = where->inner;
  }
  if (!imageLoop)
    return std::nullopt;
  if (op.getIteratorTypesArray()[*imageLoop] != utils::IteratorType::parallel)
    return describeOp(op) + " reduces over the images";
  if (readsLoopIndex(op, *imageLoop))
    return describeOp(op) + " computes from its position along the images (linalg.index)";
  // The image loop indexes exactly the batched dim of batched operands and
  // the results, and nothing of the others (a weight per image).
  bool writesImages = false;
  for (OpOperand &operand : op->getOpOperands()) {
    FailureOr<std::optional<unsigned>> found =
        positionOfLoop(maps[operand.getOperandNumber()], *imageLoop);
    if (failed(found))
      return describeOp(op) + " indexes operand " + std::to_string(operand.getOperandNumber()) +
             " by the image loop in a way that mixes images";
    std::optional<unsigned> position = *found;
    std::optional<BatchDim> where = batchOf(operand.get());
    bool isInit = op.isDpsInit(&operand);
    if (!position) {
      if (where)
        return describeOp(op) + " reads batched operand " +
               std::to_string(operand.getOperandNumber()) + " without its images";
      continue; // The same for every image (a weight, a bias).
    }
    if (where) {
      if (where->dim != *position)
        return describeOp(op) + " reads images of operand " +
               std::to_string(operand.getOperandNumber()) + " on another dim";
    } else if (!invariant(operand.get(), {*position, inner}, /*mark=*/false)) {
      return describeOp(op) + " reads operand " + std::to_string(operand.getOperandNumber()) +
             ", which is not batched, image by image";
    } else if (!invariant(operand.get(), {*position, inner}, /*mark=*/true)) {
      // What it is made from is shared two ways (one value at two dims).
      return describeOp(op) + " reads operand " + std::to_string(operand.getOperandNumber()) +
             ", made from a value that would hold the batch on two dims";
    }
    if (isInit) {
      writesImages = true;
      if (auto error = mark(op.getTiedOpResult(&operand), {*position, inner}))
        return describeOp(op) + ": " + *error;
    }
  }
  if (!writesImages)
    return describeOp(op) + " reads images but writes no result per image";
  return std::nullopt;
}

std::optional<std::string> ImageSeparation::visitCollapse(tensor::CollapseShapeOp op,
                                                          BatchDim source) {
  std::optional<BatchDim> result =
      batchOutOfGroup(op.getSrcType().getShape(), op.getReassociationIndices(), source);
  if (!result)
    return describeOp(op) + " folds dims outside the batch into it: images would interleave";
  return mark(op.getResult(), *result);
}

std::optional<std::string> ImageSeparation::visitExpand(tensor::ExpandShapeOp op,
                                                        BatchDim source) {
  std::optional<BatchDim> result = batchIntoGroup(
      op.getResultType().getShape(), op.getReassociationIndices()[source.dim], source.inner);
  if (!result)
    return describeOp(op) + " splits the batch dim so that an image's block straddles "
                            "its leading dim";
  return mark(op.getResult(), *result);
}

std::optional<std::string> ImageSeparation::visitExtractSlice(tensor::ExtractSliceOp op,
                                                              BatchDim source) {
  if (op.isDynamicOffset(source.dim) || op.isDynamicSize(source.dim) ||
      op.isDynamicStride(source.dim) || op.getStaticOffset(source.dim) != 0 ||
      op.getStaticStride(source.dim) != 1 ||
      op.getStaticSize(source.dim) != op.getSourceType().getDimSize(source.dim))
    return describeOp(op) + " slices the batch dim";
  // Dims dropped before the batch dim shift it.
  llvm::SmallBitVector dropped = op.getDroppedDims();
  unsigned dim = source.dim;
  for (unsigned d = 0; d < source.dim; ++d)
    dim -= dropped.test(d) ? 1 : 0;
  if (dropped.test(source.dim))
    return describeOp(op) + " drops the batch dim";
  return mark(op.getResult(), {dim, source.inner});
}

void ImageSeparation::rewrite() {
  for (auto &[value, where] : batched) {
    RankedTensorType share = shareType(value, where);
    value.setType(share);
    Operation *def = value.getDefiningOp();
    if (auto constant = dyn_cast_or_null<arith::ConstantOp>(def))
      constant.setValueAttr(cast<SplatElementsAttr>(constant.getValue()).resizeSplat(share));
    if (auto expand = dyn_cast_or_null<tensor::ExpandShapeOp>(def))
      expand.setStaticOutputShape(share.getShape());
    if (auto slice = dyn_cast_or_null<tensor::ExtractSliceOp>(def)) {
      // The slice's sizes name the source's dims, the dropped ones too.
      SmallVector<int64_t> sizes(slice.getStaticSizes());
      auto sourceWhere = batched.find(slice.getSource());
      sizes[sourceWhere->second.dim] = sourceWhere->second.inner;
      slice.setStaticSizes(sizes);
    }
  }
  // A broadcast over the images ((d0, d1) -> (0, d1) of a weight) is, over
  // one image, a plain read: said as one, importers take it as they take
  // any other.
  for (Operation *op : separated) {
    auto generic = dyn_cast<linalg::GenericOp>(op);
    if (!generic || generic.getNumDpsInits() != 1)
      continue;
    SmallVector<int64_t> ranges = generic.getStaticLoopRanges();
    AffineMap output = generic.getMatchingIndexingMap(generic.getDpsInitOperand(0));
    SmallVector<AffineMap> maps = generic.getIndexingMapsArray();
    bool changed = false;
    for (OpOperand *input : generic.getDpsInputOperands()) {
      auto type = dyn_cast<RankedTensorType>(input->get().getType());
      AffineMap &map = maps[input->getOperandNumber()];
      if (!type || map.getNumResults() != output.getNumResults())
        continue;
      SmallVector<AffineExpr> results(map.getResults());
      for (auto [position, expr] : llvm::enumerate(results)) {
        auto constant = dyn_cast<AffineConstantExpr>(expr);
        auto loop = dyn_cast<AffineDimExpr>(output.getResult(position));
        if (constant && constant.getValue() == 0 && loop && type.getDimSize(position) == 1 &&
            ranges[loop.getPosition()] == 1) {
          expr = loop;
          changed = true;
        }
      }
      map = AffineMap::get(map.getNumDims(), map.getNumSymbols(), results, map.getContext());
    }
    if (changed)
      generic.setIndexingMapsAttr(Builder(generic.getContext()).getAffineMapArrayAttr(maps));
  }
  func.setFunctionType(FunctionType::get(func.getContext(),
                                         func.getBody().front().getArgumentTypes(),
                                         func.getBody().front().getTerminator()->getOperandTypes()));
}

struct IPUSeparateImagesPass
    : public ipu_compiler::impl::IPUSeparateImagesBase<IPUSeparateImagesPass> {
  using IPUSeparateImagesBase::IPUSeparateImagesBase;
  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (func.isExternal() || func.getNumArguments() == 0 ||
          !func.getBody().hasOneBlock())
        continue;
      // Every argument a batch: ranked, of minimumRank or more, and of one
      // leading dim.
      std::optional<int64_t> images;
      bool alike = true, ranked = true;
      for (Type type : func.getArgumentTypes()) {
        auto tensor = dyn_cast<RankedTensorType>(type);
        ranked &= tensor && tensor.getRank() >= std::max<int64_t>(1, minimumRank) &&
                  !tensor.isDynamicDim(0);
        if (!ranked)
          break;
        alike &= !images || *images == tensor.getDimSize(0);
        images = tensor.getDimSize(0);
      }
      if (!ranked)
        continue;
      if (*images <= 1)
        continue;
      if (!alike) {
        emitRemark(func.getLoc()) << "keeps the batch together: its arguments' leading dims differ";
        continue;
      }
      ImageSeparation separation(func, *images);
      if (std::optional<std::string> why = separation.analyse()) {
        emitRemark(func.getLoc()) << "keeps the batch of " << *images
                                  << " images together: " << *why;
        continue;
      }
      separation.rewrite();
      func->setAttr("ipu.images", IntegerAttr::get(IntegerType::get(func.getContext(), 64),
                                                   *images));
      if (failed(verify(func))) {
        signalPassFailure();
        return;
      }
      emitRemark(func.getLoc()) << "runs the batch of " << *images
                        << " images one after another: images=" << *images
                        << " batchedValues=" << separation.batchedValues()
                        << " (each argument and result holds one image)";
    }
  }
};

} // namespace
