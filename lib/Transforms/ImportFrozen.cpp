//===- ImportFrozen.cpp - What a frozen exported model adds --------------===//
//
// torch-mlir freezes a model: its parameters are `arith.constant`
// dense_resource blobs, a position embedding is a gather generic reading a
// constant arange (with cf.assert checks of each index), and
// scaled-dot-product attention guards the rows a mask could hide wholly.
// Before the rest of the import each becomes what the compiler takes:
// the gather of an arange is the table itself, assertions on constants
// fold away, the guard of an unmasked attention is dropped, and the
// weights become function arguments that carry their values
// (`ipu_tile.constant`), streamed from the host at load like any weight.
//
//===----------------------------------------------------------------------===//

#include "ImportFrozen.h"

#include "IPU/Dialect/Tile/IR/TileUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;

namespace {

/// The values of an integer constant tensor, row-major; nothing when
/// `value` is not one (or its blob is elided).
std::optional<SmallVector<int64_t>> integerValues(Value value) {
  auto constant = value.getDefiningOp<arith::ConstantOp>();
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!constant || !type || !type.getElementType().isSignlessInteger())
    return std::nullopt;
  auto elements = dyn_cast<ElementsAttr>(constant.getValue());
  if (!elements)
    return std::nullopt;
  FailureOr<std::vector<char>> bytes = ipu_tile::constantBytes(elements);
  const unsigned width = type.getElementTypeBitWidth();
  if (failed(bytes) || (width != 32 && width != 64))
    return std::nullopt;
  SmallVector<int64_t> values;
  for (size_t offset = 0; offset < bytes->size(); offset += width / 8) {
    if (width == 64) {
      int64_t v;
      std::memcpy(&v, bytes->data() + offset, sizeof v);
      values.push_back(v);
    } else {
      int32_t v;
      std::memcpy(&v, bytes->data() + offset, sizeof v);
      values.push_back(v);
    }
  }
  return values;
}

/// Whether `op` reads a table at indices taken from its one integer input:
/// its body yields a tensor.extract of a tensor defined outside it.
tensor::ExtractOp gatherOf(linalg::GenericOp op) {
  if (op.getNumDpsInputs() != 1 || op.getNumDpsInits() != 1 ||
      !isa<IntegerType>(getElementTypeOrSelf(op.getDpsInputs()[0].getType())))
    return nullptr;
  Operation *yield = op.getBody()->getTerminator();
  auto extract = yield->getNumOperands() == 1
                     ? yield->getOperand(0).getDefiningOp<tensor::ExtractOp>()
                     : nullptr;
  if (!extract || extract.getTensor().getParentRegion() == &op.getRegion())
    return nullptr;
  return extract;
}

/// A gather of a constant arange reads the table in order: it is the table,
/// reshaped to the result (torch-mlir's position embedding reads
/// `table[position_ids[0, i], j]` with position_ids = arange). Any other
/// gather is refused, naming what does not fit.
LogicalResult foldArangeGather(linalg::GenericOp op, tensor::ExtractOp extract,
                               OpBuilder &builder) {
  auto fail = [&](const Twine &why) {
    return op.emitError("a gather (tensor.extract at indices read from a "
                        "tensor) is imported only as the read of a constant "
                        "arange, which is the table itself: ")
           << why;
  };
  Block *body = op.getBody();
  auto resultType = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  auto tableType = dyn_cast<RankedTensorType>(extract.getTensor().getType());
  if (!resultType || !tableType || !resultType.hasStaticShape() ||
      !tableType.hasStaticShape())
    return fail("its shapes are not static");
  if (op.getNumReductionLoops() != 0 || !op.getIndexingMapsArray()[1].isIdentity() ||
      !op.getIndexingMapsArray()[0].isProjectedPermutation())
    return fail("it is not all-parallel, or its index map is not a projection");
  // Each table index: the gathered one (the input, cast to an index) or a
  // loop dim.
  Value gathered = body->getArgument(0);
  std::optional<unsigned> gatheredPosition;
  SmallVector<int64_t> loopOfPosition;
  for (auto [position, index] : llvm::enumerate(extract.getIndices())) {
    Value source = index;
    if (auto cast = index.getDefiningOp<arith::IndexCastOp>())
      source = cast.getIn();
    if (source == gathered && !gatheredPosition) {
      gatheredPosition = position;
      loopOfPosition.push_back(-1);
    } else if (auto loop = index.getDefiningOp<linalg::IndexOp>()) {
      loopOfPosition.push_back(loop.getDim());
    } else {
      return fail("table index " + Twine(position) +
                  " is neither the gathered index nor a loop index");
    }
  }
  if (!gatheredPosition)
    return fail("it does not read the table at the gathered index");
  std::optional<SmallVector<int64_t>> indices = integerValues(op.getDpsInputs()[0]);
  if (!indices)
    return fail("its indices are not a constant");
  // The gathered loop dim: the one the index tensor spans (its other dims
  // have one element).
  AffineMap indexMap = op.getIndexingMapsArray()[0];
  ArrayRef<int64_t> shape = resultType.getShape();
  auto indexType = cast<RankedTensorType>(op.getDpsInputs()[0].getType());
  unsigned gatheredResult = indexMap.getNumResults() - 1;
  for (unsigned r = 0; r < indexMap.getNumResults(); ++r)
    if (indexType.getDimSize(r) > 1)
      gatheredResult = r;
  for (unsigned r = 0; r < indexMap.getNumResults(); ++r)
    if (r != gatheredResult && indexType.getDimSize(r) != 1)
      return fail("its indices span more than one dim");
  if (indexMap.getNumResults() == 0)
    return fail("it has no index dims");
  // The values must count 0, 1, ... along that dim.
  for (auto [i, v] : llvm::enumerate(*indices))
    if (v != int64_t(i))
      return fail("index " + Twine(i) + " is " + Twine(v) + ", not " + Twine(i) +
                  ": the indices are not an arange");
  loopOfPosition[*gatheredPosition] =
      cast<AffineDimExpr>(indexMap.getResult(gatheredResult)).getPosition();
  // The table's dims, in order, are increasing loop dims of the result's
  // extents, and the other loop dims have one element: the same elements in
  // the same order.
  SmallVector<bool> covered(shape.size(), false);
  for (auto [position, loop] : llvm::enumerate(loopOfPosition)) {
    if (position > 0 && loop <= loopOfPosition[position - 1])
      return fail("it reads the table's dims out of order (a transpose)");
    if (tableType.getDimSize(position) != shape[loop])
      return fail("it reads " + Twine(shape[loop]) + " of table dim " +
                  Twine(position) + "'s " + Twine(tableType.getDimSize(position)) +
                  " elements");
    covered[loop] = true;
  }
  for (auto [loop, extent] : llvm::enumerate(shape))
    if (!covered[loop] && extent != 1)
      return fail("it repeats the table along dim " + Twine(loop));
  builder.setInsertionPoint(op);
  Value table = extract.getTensor();
  Value result = table;
  if (tableType.getShape() != resultType.getShape()) {
    std::optional<SmallVector<ReassociationIndices>> groups =
        getReassociationIndicesForReshape(tableType, resultType);
    if (!groups)
      return fail("the table cannot be reshaped to the result");
    result = tensor::ExpandShapeOp::create(builder, op.getLoc(), resultType, table,
                                           *groups);
  }
  op->getResult(0).replaceAllUsesWith(result);
  op->erase();
  return success();
}

/// Whether `condition` is "every element of the row is -inf" of some
/// value: an and-reduction (from true) of a compare-equal to -inf, as
/// scaled-dot-product attention tests for a fully masked row.
bool isWhollyNegativeInfinityTest(Value condition) {
  auto reduction = condition.getDefiningOp<linalg::GenericOp>();
  if (!reduction || reduction.getNumDpsInputs() != 1 ||
      reduction.getNumReductionLoops() == 0)
    return false;
  Block *reduce = reduction.getBody();
  auto conjunction =
      dyn_cast<arith::AndIOp>(reduce->getTerminator()->getOperand(0).getDefiningOp());
  if (!conjunction || reduce->getOperations().size() != 2)
    return false;
  std::optional<Value> start;
  if (auto fill = reduction.getDpsInits()[0].getDefiningOp<linalg::FillOp>())
    start = fill.getDpsInputs()[0];
  if (!start || !matchPattern(*start, m_One()))
    return false;
  auto test = reduction.getDpsInputs()[0].getDefiningOp<linalg::GenericOp>();
  if (!test || test.getNumDpsInputs() != 1 || test.getNumReductionLoops() != 0)
    return false;
  auto compare = dyn_cast_or_null<arith::CmpFOp>(
      test.getBody()->getTerminator()->getOperand(0).getDefiningOp());
  if (!compare || compare.getPredicate() != arith::CmpFPredicate::OEQ)
    return false;
  Value compared = compare.getLhs();
  if (auto widened = compared.getDefiningOp<arith::ExtFOp>())
    compared = widened.getIn();
  FloatAttr bound;
  return compared == test.getBody()->getArgument(0) &&
         matchPattern(compare.getRhs(), m_Constant(&bound)) &&
         bound.getValue().isInfinity() && bound.getValue().isNegative();
}

/// Whether `value` is a tensor of zeros.
bool isZeros(Value value) {
  if (matchPattern(value, m_AnyZeroFloat()))
    return true;
  if (auto fill = value.getDefiningOp<linalg::FillOp>())
    return matchPattern(fill.getDpsInputs()[0], m_AnyZeroFloat());
  return false;
}

/// scaled_dot_product_attention without a mask writes its softmax as
/// `select(all(row == -inf), 0, softmax)`: a guard for rows a mask hides
/// wholly. Without a mask a row is all -inf only when every score
/// overflows, so the guard is dropped and the softmax kept. Returns whether
/// `op` was such a select.
bool dropMaskedRowGuard(linalg::GenericOp op) {
  if (op.getNumDpsInputs() != 3 || op.getNumReductionLoops() != 0)
    return false;
  Block *body = op.getBody();
  auto select = dyn_cast_or_null<arith::SelectOp>(
      body->getTerminator()->getOperand(0).getDefiningOp());
  if (!select || body->getOperations().size() != 2 ||
      select.getCondition() != body->getArgument(0) ||
      select.getTrueValue() != body->getArgument(1) ||
      select.getFalseValue() != body->getArgument(2))
    return false;
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  Value kept = op.getDpsInputs()[2];
  if (!maps[2].isIdentity() || !maps[3].isIdentity() ||
      kept.getType() != op->getResult(0).getType() ||
      !isZeros(op.getDpsInputs()[1]) ||
      !isWhollyNegativeInfinityTest(op.getDpsInputs()[0]))
    return false;
  op->getResult(0).replaceAllUsesWith(kept);
  op->erase();
  return true;
}

/// Erases the ops of `func` left without users that have no effects.
void eraseDead(func::FuncOp func) {
  for (bool erased = true; erased;) {
    erased = false;
    SmallVector<Operation *> dead;
    for (Operation &op : func.getBody().front())
      if (isOpTriviallyDead(&op))
        dead.push_back(&op);
    for (Operation *op : llvm::reverse(dead)) {
      op->erase();
      erased = true;
    }
  }
}

/// Frozen parameters: float tensor constants whose elements are not all
/// one value (those stay constants, which kernels take as scalars).
bool isFrozenParameter(arith::ConstantOp constant) {
  auto type = dyn_cast<RankedTensorType>(constant.getType());
  if (!type || !isa<FloatType>(type.getElementType()))
    return false;
  if (isa<DenseResourceElementsAttr>(constant.getValue()))
    return true;
  auto dense = dyn_cast<DenseElementsAttr>(constant.getValue());
  return dense && !dense.isSplat();
}

/// A static slice of a frozen parameter is a frozen parameter of its own
/// (nn.MultiheadAttention slices its packed in_proj weight into Q, K and
/// V): the slice's elements become a constant. Returns whether it folded.
bool foldConstantSlice(tensor::ExtractSliceOp slice, OpBuilder &builder) {
  auto constant = slice.getSource().getDefiningOp<arith::ConstantOp>();
  auto sourceType = slice.getSourceType();
  auto resultType = dyn_cast<RankedTensorType>(slice.getResult().getType());
  if (!constant || !isFrozenParameter(constant) || !sourceType.hasStaticShape() ||
      !resultType || !resultType.hasStaticShape() ||
      ShapedType::isDynamicShape(slice.getStaticSizes()) ||
      ShapedType::isDynamicShape(slice.getStaticStrides()) ||
      ShapedType::isDynamicShape(slice.getStaticOffsets()))
    return false;
  FailureOr<std::vector<char>> bytes =
      ipu_tile::constantBytes(cast<ElementsAttr>(constant.getValue()));
  if (failed(bytes))
    return false;
  ArrayRef<int64_t> offsets = slice.getStaticOffsets(), sizes = slice.getStaticSizes(),
                    strides = slice.getStaticStrides();
  ArrayRef<int64_t> shape = sourceType.getShape();
  const size_t rank = shape.size();
  // A rank-reducing slice drops unit sizes: the same elements in order.
  if (sizes.size() != rank || offsets.size() != rank || strides.size() != rank)
    return false;
  for (size_t d = 0; d < rank; ++d)
    if (offsets[d] < 0 || sizes[d] < 1 || strides[d] < 1 ||
        offsets[d] + (sizes[d] - 1) * strides[d] >= shape[d])
      return false;
  const int64_t element = sourceType.getElementTypeBitWidth() / 8;
  SmallVector<int64_t> pitch(rank, element);
  for (size_t d = rank - 1; d-- > 0;)
    pitch[d] = pitch[d + 1] * shape[d + 1];
  std::vector<char> sliced;
  sliced.reserve(resultType.getNumElements() * element);
  SmallVector<int64_t> index(rank, 0);
  for (int64_t e = 0; e < resultType.getNumElements(); ++e) {
    int64_t offset = 0;
    for (size_t d = 0; d < rank; ++d)
      offset += (offsets[d] + index[d] * strides[d]) * pitch[d];
    sliced.insert(sliced.end(), bytes->begin() + offset, bytes->begin() + offset + element);
    for (size_t d = rank; d-- > 0;) {
      if (++index[d] < sizes[d])
        break;
      index[d] = 0;
    }
  }
  builder.setInsertionPoint(slice);
  auto value = DenseElementsAttr::getFromRawBuffer(resultType, sliced);
  Value folded = arith::ConstantOp::create(builder, slice.getLoc(), resultType, value);
  slice.getResult().replaceAllUsesWith(folded);
  slice->erase();
  return true;
}

/// A frozen parameter (through reshapes) that an elementwise generic reads
/// broadcast along loop dims the kernels do not broadcast (a batch of
/// images adding one position embedding, `(d0, d1, d2) -> (0, d1, d2)`;
/// the pooling head's probe repeated per image, `(d0, d1, d2) -> (d1,
/// d2)`) becomes a parameter of the loops' shape, its elements repeated
/// along those dims, read whole: a weight resident as the batch reads it,
/// streamed once at load. Returns whether it folded one.
bool foldBroadcastParameter(linalg::GenericOp op, OpBuilder &builder) {
  if (op.getNumReductionLoops() != 0 || op.getNumDpsInits() != 1)
    return false;
  SmallVector<int64_t> loops = op.getStaticLoopRanges();
  if (ShapedType::isDynamicShape(loops))
    return false;
  bool folded = false;
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  for (OpOperand *operand : op.getDpsInputOperands()) {
    AffineMap map = maps[operand->getOperandNumber()];
    auto type = dyn_cast<RankedTensorType>(operand->get().getType());
    if (!type || !type.hasStaticShape() || map.getNumResults() != unsigned(type.getRank()))
      continue;
    // Each dim read as a loop dim (in increasing order) or a unit dim at 0;
    // some loop dim of more than one element read by none. A row (the
    // last dim's vector), a scalar and one value per row are broadcasts
    // the kernels take: those stay.
    SmallVector<int64_t> loopOf(type.getRank(), -1);
    SmallVector<bool> read(loops.size(), false);
    bool matches = true;
    int64_t last = -1;
    for (auto [r, expr] : llvm::enumerate(map.getResults())) {
      auto dim = dyn_cast<AffineDimExpr>(expr);
      auto constant = dyn_cast<AffineConstantExpr>(expr);
      if (dim && int64_t(dim.getPosition()) > last &&
          type.getDimSize(r) == loops[dim.getPosition()]) {
        loopOf[r] = last = dim.getPosition();
        read[dim.getPosition()] = true;
      } else if (!constant || constant.getValue() != 0 || type.getDimSize(r) != 1) {
        matches = false;
      }
    }
    bool broadcasts = false;
    for (size_t d = 0; d < loops.size(); ++d)
      broadcasts |= !read[d] && loops[d] > 1;
    const bool row = type.getNumElements() == loops.back() && read.back();
    const bool column = !read.back() && llvm::all_of(ArrayRef<bool>(read).drop_back(),
                                                     [](bool r) { return r; });
    // A generic that only copies the parameter out broadcast (the probe
    // repeated per image) becomes the repeated parameter itself, whatever
    // the broadcast.
    auto yield = cast<linalg::YieldOp>(op.getBody()->getTerminator());
    const bool copy = op.getNumDpsInputs() == 1 && yield.getNumOperands() == 1 &&
                      yield.getOperand(0) == op.getMatchingBlockArgument(operand);
    if (!matches || !broadcasts ||
        (!copy && (row || column || type.getNumElements() == 1)))
      continue;
    Value source = operand->get();
    while (isa_and_nonnull<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(
        source.getDefiningOp()))
      source = source.getDefiningOp()->getOperand(0);
    auto constant = source.getDefiningOp<arith::ConstantOp>();
    if (!constant || !isFrozenParameter(constant))
      continue;
    FailureOr<std::vector<char>> bytes =
        ipu_tile::constantBytes(cast<ElementsAttr>(constant.getValue()));
    const int64_t element = type.getElementTypeBitWidth() / 8;
    if (failed(bytes) || element < 1 ||
        int64_t(bytes->size()) != type.getNumElements() * element)
      continue;
    // Row-major over the loops: each element from the source element its
    // read dims index (the broadcast ones at 0).
    const size_t rank = loops.size();
    SmallVector<int64_t> pitch(type.getRank(), element);
    for (int64_t d = type.getRank() - 1; d-- > 0;)
      pitch[d] = pitch[d + 1] * type.getDimSize(d + 1);
    int64_t count = 1;
    for (int64_t extent : loops)
      count *= extent;
    std::vector<char> repeated;
    repeated.reserve(size_t(count * element));
    SmallVector<int64_t> index(rank, 0);
    for (int64_t e = 0; e < count; ++e) {
      int64_t offset = 0;
      for (int64_t r = 0; r < type.getRank(); ++r)
        offset += loopOf[r] < 0 ? 0 : index[loopOf[r]] * pitch[r];
      repeated.insert(repeated.end(), bytes->begin() + offset,
                      bytes->begin() + offset + element);
      for (size_t d = rank; d-- > 0;) {
        if (++index[d] < loops[d])
          break;
        index[d] = 0;
      }
    }
    auto wholeType = RankedTensorType::get(loops, type.getElementType());
    builder.setInsertionPoint(op);
    Value whole = arith::ConstantOp::create(
        builder, constant.getLoc(), wholeType,
        DenseElementsAttr::getFromRawBuffer(wholeType, repeated));
    if (copy && whole.getType() == op->getResult(0).getType()) {
      op->getResult(0).replaceAllUsesWith(whole);
      return true;
    }
    operand->set(whole);
    maps[operand->getOperandNumber()] =
        AffineMap::getMultiDimIdentityMap(rank, op.getContext());
    folded = true;
  }
  if (folded)
    op.setIndexingMapsAttr(builder.getAffineMapArrayAttr(maps));
  return folded;
}

} // namespace

LogicalResult mlir::ipu_compiler::importFrozenModel(ModuleOp module) {
  bool failedAny = false;
  module.walk([&](func::FuncOp func) {
    if (func.isExternal())
      return;
    OpBuilder builder(func.getContext());
    // Gathers first: their cf.asserts go with them.
    SmallVector<std::pair<linalg::GenericOp, tensor::ExtractOp>> gathers;
    func.walk([&](linalg::GenericOp op) {
      if (tensor::ExtractOp extract = gatherOf(op))
        gathers.push_back({op, extract});
    });
    for (auto [op, extract] : gathers)
      failedAny |= failed(foldArangeGather(op, extract, builder));
    // Parameters read broadcast along a batch.
    SmallVector<linalg::GenericOp> generics;
    func.walk([&](linalg::GenericOp op) { generics.push_back(op); });
    unsigned broadcasts = 0;
    for (linalg::GenericOp op : generics)
      broadcasts += foldBroadcastParameter(op, builder);
    if (broadcasts)
      mlir::emitRemark(func.getLoc(), "repeats ")
          << broadcasts
          << (broadcasts == 1 ? " frozen weight" : " frozen weights")
          << " along the dims an elementwise op broadcasts it over (a batch "
             "reading one position embedding): resident as read, streamed "
             "once at load";
    unsigned guards = 0;
    SmallVector<linalg::GenericOp> selects;
    func.walk([&](linalg::GenericOp op) { selects.push_back(op); });
    for (linalg::GenericOp op : selects)
      guards += dropMaskedRowGuard(op);
    if (guards)
      mlir::emitRemark(func.getLoc(), "drops scaled_dot_product_attention's "
                                      "guard of wholly masked rows in ")
          << guards
          << (guards == 1 ? " softmax" : " softmaxes")
          << ": without a mask, a row of scores is all -inf only "
             "when every score overflows";
    // Assertions on constants hold or fail now.
    SmallVector<cf::AssertOp> asserts;
    func.walk([&](cf::AssertOp op) { asserts.push_back(op); });
    for (cf::AssertOp op : asserts) {
      bool holds;
      if (matchPattern(op.getArg(), m_One()))
        holds = true;
      else if (matchPattern(op.getArg(), m_Zero()))
        holds = false;
      else {
        op.emitError("cf.assert on a value known only when the model runs ('")
            << op.getMsg()
            << "'): the IPU compiler folds assertions on constants and the "
               "index checks of a gather of a constant arange; export the "
               "model without run-time checks";
        failedAny = true;
        continue;
      }
      if (!holds) {
        op.emitError("the model's assertion '")
            << op.getMsg() << "' fails on its constants";
        failedAny = true;
        continue;
      }
      op->erase();
    }
    SmallVector<tensor::ExtractSliceOp> slices;
    func.walk([&](tensor::ExtractSliceOp slice) { slices.push_back(slice); });
    for (tensor::ExtractSliceOp slice : slices)
      foldConstantSlice(slice, builder);
    eraseDead(func);
    // The weights, in program order, after the function's own arguments.
    SmallVector<arith::ConstantOp> parameters;
    for (Operation &op : func.getBody().front())
      if (auto constant = dyn_cast<arith::ConstantOp>(op);
          constant && isFrozenParameter(constant))
        parameters.push_back(constant);
    for (arith::ConstantOp constant : parameters) {
      unsigned index = func.getNumArguments();
      NamedAttribute value(
          StringAttr::get(func.getContext(), ipu_tile::IPUTileDialect::getConstantAttrName()),
          constant.getValue());
      if (failed(func.insertArgument(index, constant.getType(),
                                     DictionaryAttr::get(func.getContext(), {value}),
                                     constant.getLoc()))) {
        failedAny = true;
        return;
      }
      constant.getResult().replaceAllUsesWith(func.getArgument(index));
      constant->erase();
    }
    if (!parameters.empty())
      mlir::emitRemark(func.getLoc(), "takes ")
          << parameters.size()
          << (parameters.size() == 1 ? " frozen weight as an argument that carries its value"
                                     : " frozen weights as arguments that carry their values")
          << ", streamed from the host at load";
  });
  return failure(failedAny);
}
