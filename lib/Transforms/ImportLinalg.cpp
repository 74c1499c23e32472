//===- ImportLinalg.cpp - Exporters' contractions to ipu_gemm.matmul -------===//
//
// torch-mlir and StableHLO-to-linalg spell one matmul many ways: named
// `linalg.matmul` / `batch_matmul` / `contract` with or without transposing
// indexing maps, or a `linalg.generic` multiply-add, with transposes,
// broadcasts and collapsed batch dims around it and a truncf generic after.
// The import recognises the contraction by its indexing maps (whatever op
// spells it), looks through the ops that only permute, broadcast or regroup
// its operands, and writes one `ipu_gemm.matmul`.
//
//===----------------------------------------------------------------------===//

#include "IPU/Dialect/Tile/IR/TileUtils.h"
#include "IPU/Support/ElementType.h"
#include "IPU/Transforms/Passes.h"
#include "ImportElementwise.h"
#include "ImportFrozen.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Transforms/WalkPatternRewriteDriver.h"

namespace mlir::ipu_compiler {
#define GEN_PASS_DEF_IPUIMPORTLINALG
#include "IPU/Transforms/Passes.h.inc"
} // namespace mlir::ipu_compiler

using namespace mlir;
using mlir::ipu_compiler::applyImportStage;
using mlir::ipu_compiler::ImportOrRefuse;
using mlir::ipu_compiler::ImportRefusals;
using mlir::ipu_compiler::truncatedConstant;

/// Whether `init` is known to hold zeros: a tensor.empty (a contraction then
/// accumulates into undefined data, which we read as zero) or a fill of 0,
/// as a linalg.fill or a generic that only yields the value.
static bool isZeroAccumulator(Value init) {
  if (init.getDefiningOp<tensor::EmptyOp>())
    return true;
  std::optional<Value> value;
  if (auto fill = init.getDefiningOp<linalg::FillOp>())
    value = fill.getDpsInputs()[0];
  else if (auto generic = init.getDefiningOp<linalg::GenericOp>())
    value = linalg::isaFillOpInterface(generic);
  return value &&
         (matchPattern(*value, m_AnyZeroFloat()) || matchPattern(*value, m_Zero()));
}

/// Whether `permutation` swaps the last two dims and keeps the others.
static bool swapsLastTwo(ArrayRef<int64_t> permutation) {
  size_t rank = permutation.size();
  if (rank < 2)
    return false;
  for (size_t d = 0; d + 2 < rank; ++d)
    if (permutation[d] != int64_t(d))
      return false;
  return permutation[rank - 2] == int64_t(rank - 1) &&
         permutation[rank - 1] == int64_t(rank - 2);
}

/// The input of `value`'s producer when it only swaps the last two dims:
/// linalg.transpose, or a transposing generic (output map permuted, as
/// torch-mlir's older releases write it, or input map permuted).
static Value lookThroughTranspose(Value value) {
  Operation *producer = value.getDefiningOp();
  if (auto transpose = dyn_cast_or_null<linalg::TransposeOp>(producer))
    return swapsLastTwo(transpose.getPermutation()) ? transpose.getInput()
                                                    : Value();
  auto generic = dyn_cast_or_null<linalg::GenericOp>(producer);
  if (!generic || generic.getNumDpsInputs() != 1 || generic.getNumDpsInits() != 1 ||
      generic.getNumReductionLoops() != 0 ||
      !isa<linalg::YieldOp>(generic.getBody()->front()) ||
      generic.getBody()->front().getOperand(0) != generic.getBody()->getArgument(0))
    return Value();
  SmallVector<AffineMap> maps = generic.getIndexingMapsArray();
  for (auto [permuted, other] : {std::pair(maps[0], maps[1]), std::pair(maps[1], maps[0])}) {
    if (!other.isIdentity() || !permuted.isPermutation())
      continue;
    SmallVector<int64_t> permutation;
    for (AffineExpr expr : permuted.getResults())
      permutation.push_back(cast<AffineDimExpr>(expr).getPosition());
    if (swapsLastTwo(permutation))
      return generic.getDpsInputs()[0];
  }
  return Value();
}

/// The 2-D input of `value`'s producer when it only broadcasts it along new
/// leading dims (linalg.broadcast or a broadcasting generic), as torch-mlir
/// broadcasts a linear layer's weight for a batch_matmul.
static Value lookThroughLeadingBroadcast(Value value) {
  Operation *producer = value.getDefiningOp();
  auto rank = cast<RankedTensorType>(value.getType()).getRank();
  auto leading = [&](ArrayRef<int64_t> dims) {
    for (auto [index, dim] : llvm::enumerate(dims))
      if (dim != int64_t(index))
        return false;
    return int64_t(dims.size()) == rank - 2;
  };
  if (auto broadcast = dyn_cast_or_null<linalg::BroadcastOp>(producer))
    return leading(broadcast.getDimensions()) ? broadcast.getInput() : Value();
  if (auto generic = dyn_cast_or_null<linalg::GenericOp>(producer))
    if (std::optional<SmallVector<int64_t>> dims =
            linalg::isaBroadcastOpInterface(generic))
      return leading(*dims) ? generic.getDpsInputs()[0] : Value();
  return Value();
}

/// Dim positions of an indexing map's results (the map is a projected
/// permutation).
static SmallVector<unsigned> positions(AffineMap map) {
  SmallVector<unsigned> dims;
  for (AffineExpr expr : map.getResults())
    dims.push_back(cast<AffineDimExpr>(expr).getPosition());
  return dims;
}

/// The bias a convolution accumulates into: the 1-D input of a broadcast
/// along every dim but the channels (dim 1 of NCHW), as torch-mlir writes
/// a conv's bias; a null Value for a zero accumulator; failure otherwise.
static FailureOr<Value> convolutionBias(Value init) {
  if (isZeroAccumulator(init))
    return Value();
  const SmallVector<int64_t> channelsKept = {0, 2, 3};
  if (auto broadcast = init.getDefiningOp<linalg::BroadcastOp>())
    if (broadcast.getDimensions() == ArrayRef<int64_t>(channelsKept))
      return broadcast.getInput();
  if (auto generic = init.getDefiningOp<linalg::GenericOp>())
    if (std::optional<SmallVector<int64_t>> dims = linalg::isaBroadcastOpInterface(generic))
      if (*dims == channelsKept)
        return generic.getDpsInputs()[0];
  return failure();
}

/// The input of a truncation to f16 or f32 of a whole tensor, as
/// `arith.truncf` on the tensor or an all-parallel identity generic.
static Value truncatedInput(Operation *op) {
  if (auto truncation = dyn_cast<arith::TruncFOp>(op))
    return truncation.getRoundingmodeAttr() ? Value() : truncation.getIn();
  auto generic = dyn_cast<linalg::GenericOp>(op);
  if (!generic || generic.getNumDpsInputs() != 1 ||
      generic.getNumReductionLoops() != 0 ||
      !llvm::all_of(generic.getIndexingMapsArray(),
                    [](AffineMap map) { return map.isIdentity(); }))
    return Value();
  Block *body = generic.getBody();
  if (body->getOperations().size() != 2)
    return Value();
  auto truncation = dyn_cast<arith::TruncFOp>(body->front());
  if (!truncation || truncation.getRoundingmodeAttr() ||
      truncation.getIn() != body->getArgument(0) ||
      body->getTerminator()->getOperand(0) != truncation.getResult())
    return Value();
  return generic.getDpsInputs()[0];
}

/// A vision transformer's patch embedding: `linalg.conv_2d_nchw_fchw` whose
/// stride is its kernel, with no padding or dilation, followed by
/// flatten(2).transpose(1, 2) (a collapse_shape of H and W and a swap of
/// the last two dims) is a matmul of the patches by the flattened filters:
///   x [N, C, Ho*kh, Wo*kw] -> view [N, C, Ho, kh, Wo, kw]
///     -> permute [0, 2, 4, 1, 3, 5] -> [N, Ho*Wo, C*kh*kw]   (im2col)
///   w [F, C, kh, kw] -> [F, C*kh*kw]
///   y [N, Ho*Wo, F] = patches x w^T (+ bias[F], the matmul's epilogue)
/// Written here as the linalg and tile ops the rest of the import takes
/// (the im2col as expand_shape, transpose and collapse_shape, which
/// importPermutes makes one ipu_tile.permute); any other convolution is an
/// error naming what does not fit.
static LogicalResult importConvolution(linalg::Conv2DNchwFchwOp conv,
                                       PatternRewriter &builder) {
  auto fail = [&](const Twine &why) {
    return conv.emitError("linalg.conv_2d_nchw_fchw is imported only as a patch "
                          "embedding (stride equal to the kernel, no padding or "
                          "dilation, its result flattened and transposed to [N, "
                          "patches, channels]): ")
           << why;
  };
  if (!conv.hasPureTensorSemantics())
    return fail("it works on buffers, not tensors");
  // torch-mlir pads the input even by zero.
  Value input = conv.getDpsInputs()[0];
  if (auto pad = input.getDefiningOp<tensor::PadOp>()) {
    if (!pad.hasZeroLowPad() || !pad.hasZeroHighPad())
      return fail("its input is padded");
    input = pad.getSource();
  }
  auto inputType = dyn_cast<RankedTensorType>(input.getType());
  auto filterType = dyn_cast<RankedTensorType>(conv.getDpsInputs()[1].getType());
  auto resultType = dyn_cast<RankedTensorType>(conv->getResult(0).getType());
  if (!inputType || !filterType || !resultType || !inputType.hasStaticShape() ||
      !filterType.hasStaticShape() || !resultType.hasStaticShape())
    return fail("its shapes are not static");
  // f16 operands may accumulate into f32, as torch-mlir writes an f16 conv.
  Type operand = inputType.getElementType(), element = resultType.getElementType();
  if (!isa<FloatType>(operand) || !isa<FloatType>(element) ||
      filterType.getElementType() != operand ||
      element.getIntOrFloatBitWidth() < operand.getIntOrFloatBitWidth())
    return fail("its input and filter are not of one float type, or its result is "
                "narrower");
  const int64_t n = inputType.getDimSize(0), c = inputType.getDimSize(1);
  const int64_t f = filterType.getDimSize(0), kh = filterType.getDimSize(2),
                kw = filterType.getDimSize(3);
  const int64_t ho = resultType.getDimSize(2), wo = resultType.getDimSize(3);
  if (!llvm::all_of(conv.getDilations().getValues<int64_t>(),
                    [](int64_t d) { return d == 1; }))
    return fail("it is dilated");
  if (conv.getStrides().getValues<int64_t>()[0] != kh ||
      conv.getStrides().getValues<int64_t>()[1] != kw)
    return fail("its strides differ from its kernel " + Twine(kh) + "x" + Twine(kw));
  // Conv2d drops the rows and columns short of a whole patch (384 pixels
  // make 27 patches of 14 and 6 pixels over); anything else is not this
  // convolution's input.
  const int64_t h = inputType.getDimSize(2), w = inputType.getDimSize(3);
  if (h < ho * kh || h >= (ho + 1) * kh || w < wo * kw || w >= (wo + 1) * kw)
    return fail("its input's height and width are not its " + Twine(ho) + "x" + Twine(wo) +
                " patches of " + Twine(kh) + "x" + Twine(kw));
  FailureOr<Value> bias = convolutionBias(conv.getDpsInits()[0]);
  if (failed(bias))
    return fail("it accumulates into something other than zeros or a bias "
                "broadcast along N, H and W");
  // An f16 export accumulates in f32 and narrows the result before it
  // flattens it: the narrowing moves after the matmul (and its bias).
  Operation *produced = conv;
  Operation *narrowing = nullptr;
  if (conv->hasOneUse() &&
      truncatedInput(*conv->getUsers().begin()) == conv->getResult(0)) {
    narrowing = *conv->getUsers().begin();
    produced = narrowing;
  }
  // flatten(2): [N, F, Ho*Wo]; transpose(1, 2): [N, Ho*Wo, F].
  auto flatten = produced->hasOneUse()
                     ? dyn_cast<tensor::CollapseShapeOp>(*produced->getUsers().begin())
                     : nullptr;
  Operation *transpose =
      flatten && flatten->hasOneUse() ? *flatten->getUsers().begin() : nullptr;
  if (!flatten ||
      flatten.getReassociationIndices() !=
          SmallVector<ReassociationIndices>{{0}, {1}, {2, 3}} ||
      !transpose || transpose->getNumResults() != 1 ||
      lookThroughTranspose(transpose->getResult(0)) != flatten.getResult())
    return fail("its result is not flattened and transposed to [N, patches, "
                "channels] (an NCHW result is not supported yet)");

  builder.setInsertionPoint(transpose);
  Location loc = conv.getLoc();
  const int64_t patches = ho * wo, patchSize = c * kh * kw;
  // The pixels past the last whole patch are left behind: a window of the
  // image.
  if (h != ho * kh || w != wo * kw)
    input = ipu_tile::PermuteOp::create(
        builder, loc, RankedTensorType::get({n, c, ho * kh, wo * kw}, operand), input,
        builder.getDenseI64ArrayAttr(inputType.getShape()),
        builder.getDenseI64ArrayAttr({0, 1, 2, 3}), builder.getDenseI64ArrayAttr({0, 0, 0, 0}),
        builder.getDenseI64ArrayAttr({n, c, ho * kh, wo * kw}));
  // im2col: the rows of each patch move as runs of kw elements.
  Value view = tensor::ExpandShapeOp::create(
      builder, loc, RankedTensorType::get({n, c, ho, kh, wo, kw}, operand), input,
      SmallVector<ReassociationIndices>{{0}, {1}, {2, 3}, {4, 5}});
  Value empty = tensor::EmptyOp::create(builder, loc, {n, ho, wo, c, kh, kw}, operand);
  Value moved = linalg::TransposeOp::create(builder, loc, view, empty,
                                            ArrayRef<int64_t>{0, 2, 4, 1, 3, 5})
                    ->getResult(0);
  Value lhs = tensor::CollapseShapeOp::create(
      builder, loc, RankedTensorType::get({n, patches, patchSize}, operand), moved,
      SmallVector<ReassociationIndices>{{0}, {1, 2}, {3, 4, 5}});
  // The filters as rows of one matrix: the same bytes, so a permute that
  // keeps every dim in place.
  Value filters = ipu_tile::PermuteOp::create(
      builder, loc, RankedTensorType::get({f, patchSize}, operand), conv.getDpsInputs()[1],
      builder.getDenseI64ArrayAttr({f, patchSize}), builder.getDenseI64ArrayAttr({0, 1}), /*offsets=*/nullptr, /*sizes=*/nullptr);
  auto productType = RankedTensorType::get({n, patches, f}, element);
  Value result = ipu_gemm::MatmulOp::create(builder, loc, productType, lhs, filters,
                                            TypeAttr::get(element), false, true,
                                            ipu_gemm::PlanAttr(),
                                            ipu_gemm::ConstraintsAttr(),
                                            /*input_scale=*/IntegerAttr());
  if (*bias) {
    // y + bias[F] along the rows: the matmul's epilogue.
    MLIRContext *context = builder.getContext();
    AffineMap identity = builder.getMultiDimIdentityMap(3);
    AffineMap channel = AffineMap::get(3, 0, getAffineDimExpr(2, context));
    Value init = tensor::EmptyOp::create(builder, loc, productType.getShape(), element);
    result = linalg::GenericOp::create(
                 builder, loc, productType, ValueRange{result, *bias}, ValueRange{init},
                 ArrayRef<AffineMap>{identity, channel, identity},
                 SmallVector<utils::IteratorType>(3, utils::IteratorType::parallel),
                 [&](OpBuilder &body, Location bodyLoc, ValueRange args) {
                   Value sum = arith::AddFOp::create(body, bodyLoc, args[0], args[1]);
                   linalg::YieldOp::create(body, bodyLoc, sum);
                 })
                 ->getResult(0);
  }
  if (narrowing) {
    auto narrowType = cast<RankedTensorType>(narrowing->getResult(0).getType());
    auto type = RankedTensorType::get(productType.getShape(), narrowType.getElementType());
    AffineMap identity = builder.getMultiDimIdentityMap(3);
    Value init = tensor::EmptyOp::create(builder, loc, type.getShape(), type.getElementType());
    result = linalg::GenericOp::create(
                 builder, loc, type, ValueRange{result}, ValueRange{init},
                 ArrayRef<AffineMap>{identity, identity},
                 SmallVector<utils::IteratorType>(3, utils::IteratorType::parallel),
                 [&](OpBuilder &body, Location bodyLoc, ValueRange args) {
                   Value narrow = arith::TruncFOp::create(body, bodyLoc,
                                                          type.getElementType(), args[0]);
                   linalg::YieldOp::create(body, bodyLoc, narrow);
                 })
                 ->getResult(0);
  }
  builder.replaceOp(transpose, result);
  builder.eraseOp(flatten);
  if (narrowing)
    builder.eraseOp(narrowing);
  builder.eraseOp(conv);
  return success();
}

/// `type` with f64 (as an element type too) replaced by f32, or null when
/// it holds no f64.
static Type demotedType(Type type) {
  if (type.isF64())
    return Float32Type::get(type.getContext());
  if (auto shaped = dyn_cast<ShapedType>(type))
    if (shaped.getElementType().isF64())
      return shaped.clone(Float32Type::get(type.getContext()));
  return Type();
}

/// torch-mlir's f32 exports compute a layer norm's mean and variance in f64
/// (its decomposition upcasts them). The tiles have no f64: every f64 value
/// inside a function whose signature has none is computed in f32 instead,
/// the precision PyTorch itself computes that layer norm in; an upcast to
/// f64 and the narrowing back become no-ops. A function whose arguments or
/// results are f64 is left for the import to refuse.
static void demoteDoublePrecision(ModuleOp module) {
  module.walk([&](func::FuncOp func) {
    auto hasF64 = [](TypeRange types) {
      return llvm::any_of(types, [](Type type) { return bool(demotedType(type)); });
    };
    if (hasF64(func.getArgumentTypes()) || hasF64(func.getResultTypes()))
      return;
    // Only constants whose values can be rewritten (a float or dense
    // floats; not a resource blob): otherwise the f64 stays, and is refused.
    WalkResult convertible = func.walk([&](arith::ConstantOp constant) {
      if (demotedType(constant.getType()) &&
          !isa<FloatAttr, DenseFPElementsAttr>(constant.getValue()))
        return WalkResult::interrupt();
      return WalkResult::advance();
    });
    if (convertible.wasInterrupted())
      return;
    unsigned demoted = 0;
    SmallVector<Operation *> noOps;
    func.walk([&](Operation *op) {
      for (Region &region : op->getRegions())
        for (Block &block : region)
          for (BlockArgument argument : block.getArguments())
            if (Type type = demotedType(argument.getType()))
              argument.setType(type);
      bool changed = false;
      for (OpResult result : op->getResults())
        if (Type type = demotedType(result.getType())) {
          result.setType(type);
          changed = true;
        }
      if (!changed)
        return;
      ++demoted;
      if (auto constant = dyn_cast<arith::ConstantOp>(op)) {
        Type f32 = Float32Type::get(op->getContext());
        if (auto value = dyn_cast<FloatAttr>(constant.getValue()))
          constant.setValueAttr(FloatAttr::get(f32, value.getValueAsDouble()));
        else if (auto dense = dyn_cast<DenseFPElementsAttr>(constant.getValue()))
          constant.setValueAttr(dense.mapValues(f32, [](const APFloat &v) {
            return APFloat(float(v.convertToDouble())).bitcastToAPInt();
          }));
      }
      if (isa<arith::ExtFOp, arith::TruncFOp>(op) &&
          op->getOperand(0).getType() == op->getResult(0).getType())
        noOps.push_back(op);
    });
    for (Operation *op : noOps) {
      op->getResult(0).replaceAllUsesWith(op->getOperand(0));
      op->erase();
    }
    // On the location alone: a remark on the op would print the function.
    if (demoted)
      mlir::emitRemark(func.getLoc(), "computes the f64 intermediates of ")
          << demoted << " ops in f32: the tiles have no f64";
  });
}

namespace {

/// A scalar factor: a constant, or a value defined outside the body that
/// multiplies by it.
struct Scale {
  Value value;
  TypedAttr constant;
};

/// A contraction as ipu_gemm.matmul takes it.
struct Contraction {
  Value lhs, rhs;
  bool transposeLhs = false, transposeRhs = false;
  /// Scalars the product is multiplied by afterwards: the operands'
  /// scalings, looked through (lookThroughScaling).
  SmallVector<Scale, 2> resultScales;
};
} // namespace

/// The contraction's operands as ipu_gemm.matmul takes them, or an error
/// naming what does not fit: one K, one N, M dims leading or one M
/// beside batch dims, the result in (batch, M, N) order.
static FailureOr<Contraction> analyse(linalg::LinalgOp op) {
  if (op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1)
    return op.emitError("contraction must have two inputs and one output");
  FailureOr<linalg::ContractionDimensions> dims = linalg::inferContractionDims(op);
  if (failed(dims) || dims->k.size() != 1 || dims->n.size() != 1 ||
      dims->m.empty())
    return op.emitError("contraction must have one reduction (K), one "
                        "parallel dim of B only (N) and parallel dims of A "
                        "(M); this one does not");
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  for (AffineMap map : maps)
    if (!map.isProjectedPermutation())
      return op.emitError("contraction indexing maps must be projected "
                          "permutations");
  SmallVector<unsigned> lhsDims = positions(maps[0]), rhsDims = positions(maps[1]),
                        outDims = positions(maps[2]);
  const unsigned k = dims->k[0], n = dims->n[0];
  SmallVector<unsigned> batch(dims->batch.begin(), dims->batch.end());
  SmallVector<unsigned> m(dims->m.begin(), dims->m.end());
  // The result's order names the batch and M dims' order.
  SmallVector<unsigned> outBatch, outM;
  for (unsigned d : outDims)
    (llvm::is_contained(batch, d) ? outBatch : outM).push_back(d);
  if (outM.empty() || outM.back() != n)
    return op.emitError("contraction result must end in N; it is a "
                        "transposed product, not supported");
  outM.pop_back();
  SmallVector<unsigned> expectedOut(outBatch);
  llvm::append_range(expectedOut, outM);
  expectedOut.push_back(n);
  if (outDims != expectedOut)
    return op.emitError("contraction result dims must be ordered batch, M, "
                        "N; batch dims after M dims are not supported");

  Contraction contraction;
  // A: [batch..., M..., K], or [batch..., K, M] transposed.
  SmallVector<unsigned> lhsWanted(outBatch);
  llvm::append_range(lhsWanted, outM);
  lhsWanted.push_back(k);
  if (lhsDims != lhsWanted) {
    SmallVector<unsigned> lhsTransposed(outBatch);
    if (outM.size() == 1)
      lhsTransposed.append({k, outM[0]});
    if (outM.size() != 1 || lhsDims != lhsTransposed)
      return op.emitError("A's dims must be batch..., M..., K or batch..., "
                          "K, M in the result's order");
    contraction.transposeLhs = true;
  }
  // B: [batch..., K, N] or [batch..., N, K]; without batch dims, the
  // batch dims of A and C fold into M.
  SmallVector<unsigned> rhsLead(rhsDims.begin(), rhsDims.end() - std::min<size_t>(2, rhsDims.size()));
  if (rhsDims.size() < 2 || (rhsLead != outBatch && !rhsLead.empty()))
    return op.emitError("B's dims must be batch..., K, N (or N, K) with A's "
                        "batch dims, or K, N alone");
  ArrayRef<unsigned> rhsLast = ArrayRef<unsigned>(rhsDims).take_back(2);
  if (rhsLast[0] == n && rhsLast[1] == k)
    contraction.transposeRhs = true;
  else if (rhsLast[0] != k || rhsLast[1] != n)
    return op.emitError("B's last two dims must be K, N or N, K");
  const bool batched = !rhsLead.empty();
  if (batched && outM.size() != 1)
    return op.emitError("a batched contraction must have one M dim, has ")
           << outM.size();
  if (!batched && contraction.transposeLhs && !outBatch.empty())
    return op.emitError("a transposed A with batch dims needs a batched B");
  contraction.lhs = op.getDpsInputs()[0];
  contraction.rhs = op.getDpsInputs()[1];
  return contraction;
}


/// The narrower float input of `value`'s producer when it only widens it
/// exactly (arith.extf on the tensor, or an all-parallel identity generic
/// whose body is one extf), or null.
static Value lookThroughWidening(Value value) {
  Operation *producer = value.getDefiningOp();
  if (auto widening = dyn_cast_or_null<arith::ExtFOp>(producer))
    return widening.getIn();
  auto generic = dyn_cast_or_null<linalg::GenericOp>(producer);
  if (!generic || generic.getNumDpsInputs() != 1 || generic.getNumReductionLoops() != 0 ||
      !llvm::all_of(generic.getIndexingMapsArray(),
                    [](AffineMap map) { return map.isIdentity(); }))
    return Value();
  Block *body = generic.getBody();
  auto widening = dyn_cast<arith::ExtFOp>(body->front());
  if (body->getOperations().size() != 2 || !widening ||
      widening.getIn() != body->getArgument(0) ||
      body->getTerminator()->getOperand(0) != widening.getResult())
    return Value();
  return generic.getDpsInputs()[0];
}

/// The input of `value`'s producer and the scalar it multiplies it by,
/// when that producer only scales in f32 (an all-parallel identity generic
/// whose body is one mulf of its input by a constant of the body or a
/// value from outside it), or a null input.
static std::pair<Value, Scale> lookThroughScaling(Value value) {
  auto generic = value.getDefiningOp<linalg::GenericOp>();
  if (!generic || generic.getNumDpsInputs() != 1 || generic.getNumReductionLoops() != 0 ||
      !llvm::all_of(generic.getIndexingMapsArray(),
                    [](AffineMap map) { return map.isIdentity(); }))
    return {};
  Block *body = generic.getBody();
  auto *terminator = body->getTerminator();
  auto product = terminator->getOperand(0).getDefiningOp<arith::MulFOp>();
  if (!product || product->getBlock() != body || !product.getType().isF32())
    return {};
  Value input = body->getArgument(0);
  if (product.getLhs() != input && product.getRhs() != input)
    return {};
  Value scalar = product.getLhs() == input ? product.getRhs() : product.getLhs();
  Scale scale;
  Operation *scalarOp = scalar.getDefiningOp();
  if (auto constant = dyn_cast_or_null<arith::ConstantOp>(scalarOp)) {
    scale.constant = constant.getValue();
  } else if (auto narrowed = dyn_cast_or_null<arith::TruncFOp>(scalarOp)) {
    // torch-mlir's f64 scale, narrowed in the body (demoted to an f32 -> f32
    // truncf by then, or not): the f32 constant, rounded as truncf rounds.
    FloatAttr wide;
    if (!matchPattern(narrowed.getIn(), m_Constant(&wide)))
      return {};
    scale.constant = truncatedConstant(wide, Float32Type::get(generic.getContext()));
  } else if (scalar.getParentRegion() != &generic.getRegion()) {
    scale.value = scalar;
  } else {
    return {};
  }
  // Nothing else in the body: the product, its scalar if made there, the
  // yield.
  const size_t expected = scalarOp && scalarOp->getBlock() == body ? 3 : 2;
  if (body->getOperations().size() != expected)
    return {};
  return {generic.getDpsInputs()[0], scale};
}

/// Looks through producers that only transpose the last two dims of an
/// operand, widen both operands from one narrower type (torch-mlir's f16
/// linear upcast to f32: the AMP multiplies f16 and accumulates in f32
/// alike), or broadcast B along the batch dims. Operands that are widened
/// and then scaled in f32 (torch-mlir's f16 scaled_dot_product_attention,
/// which multiplies Q and K^T each by the root of the scale) are taken
/// before the scaling, which moves after the product: the products of the
/// narrow values are exact in f32, so only f32 rounding tells the two
/// apart.
static void lookThrough(Contraction &contraction) {
  auto throughTransposes = [](Contraction &c) {
    for (auto [value, transposed] :
         {std::pair(&c.lhs, &c.transposeLhs), std::pair(&c.rhs, &c.transposeRhs)})
      while (Value input = lookThroughTranspose(*value)) {
        *value = input;
        *transposed = !*transposed;
      }
  };
  throughTransposes(contraction);
  auto [scaledLhs, lhsScale] = lookThroughScaling(contraction.lhs);
  auto [scaledRhs, rhsScale] = lookThroughScaling(contraction.rhs);
  if (scaledLhs || scaledRhs) {
    // Taken only where both operands then widen from one narrow type.
    Contraction unscaled = contraction;
    unscaled.lhs = scaledLhs ? scaledLhs : contraction.lhs;
    unscaled.rhs = scaledRhs ? scaledRhs : contraction.rhs;
    throughTransposes(unscaled);
    Value narrowLhs = lookThroughWidening(unscaled.lhs);
    Value narrowRhs = lookThroughWidening(unscaled.rhs);
    if (narrowLhs && narrowRhs &&
        getElementTypeOrSelf(narrowLhs.getType()) == getElementTypeOrSelf(narrowRhs.getType())) {
      if (scaledLhs)
        unscaled.resultScales.push_back(lhsScale);
      if (scaledRhs)
        unscaled.resultScales.push_back(rhsScale);
      contraction = std::move(unscaled);
    }
  }
  Value narrowLhs = lookThroughWidening(contraction.lhs);
  Value narrowRhs = lookThroughWidening(contraction.rhs);
  if (narrowLhs && narrowRhs &&
      getElementTypeOrSelf(narrowLhs.getType()) == getElementTypeOrSelf(narrowRhs.getType())) {
    contraction.lhs = narrowLhs;
    contraction.rhs = narrowRhs;
    throughTransposes(contraction);
  }
  if (Value input = lookThroughLeadingBroadcast(contraction.rhs)) {
    // B is the same for every batch: the batches fold into M (which a
    // transposed A cannot).
    if (!contraction.transposeLhs)
      contraction.rhs = input;
  }
  while (Value input = lookThroughTranspose(contraction.rhs)) {
    contraction.rhs = input;
    contraction.transposeRhs = !contraction.transposeRhs;
  }
}


/// The attributes of `op` the imported op honours: `ipu_gemm.constraints`
/// (a #ipu_gemm.constraints) and `ipu_gemm.plan` (a #ipu_gemm.plan, kept by
/// the planner when it can be lowered): on another dialect's op they
/// carry our prefix. An ipu_gemm attribute under another
/// name, or one of those names holding something else, is an error; any
/// other discardable attribute but linalg's own is dropped with a warning.
static FailureOr<std::pair<ipu_gemm::PlanAttr, ipu_gemm::ConstraintsAttr>>
carriedAttributes(Operation *op) {
  ipu_gemm::PlanAttr plan;
  ipu_gemm::ConstraintsAttr constraints;
  for (NamedAttribute attr : op->getDiscardableAttrs()) {
    StringRef name = attr.getName().strref();
    Attribute value = attr.getValue();
    if (name == "ipu_gemm.constraints") {
      constraints = dyn_cast<ipu_gemm::ConstraintsAttr>(value);
      if (!constraints)
        return op->emitError("attribute 'ipu_gemm.constraints' must be a "
                             "#ipu_gemm.constraints, got ")
               << value;
      continue;
    }
    if (name == "ipu_gemm.plan") {
      plan = dyn_cast<ipu_gemm::PlanAttr>(value);
      if (!plan)
        return op->emitError("attribute 'ipu_gemm.plan' must be a "
                             "#ipu_gemm.plan, got ")
               << value;
      continue;
    }
    if (isa<ipu_gemm::IPUGemmDialect>(value.getDialect()))
      return op->emitError("attribute '")
             << name << "' holds " << value
             << ", which the import honours only as 'ipu_gemm.constraints' "
                "or 'ipu_gemm.plan'";
    if (!name.starts_with("linalg."))
      op->emitWarning("attribute '")
          << name << "' is dropped by the import to ipu_gemm.matmul";
  }
  return std::make_pair(plan, constraints);
}


/// `product` multiplied by each of `scales` in turn, as an elementwise
/// generic after it (which the elementwise import fuses), or `product`.
static Value scaledResult(PatternRewriter &rewriter, Location loc, Value product,
                          ArrayRef<Scale> scales) {
  if (scales.empty())
    return product;
  auto type = cast<RankedTensorType>(product.getType());
  Value init = tensor::EmptyOp::create(rewriter, loc, type.getShape(), type.getElementType());
  AffineMap identity = rewriter.getMultiDimIdentityMap(type.getRank());
  SmallVector<utils::IteratorType> parallel(type.getRank(), utils::IteratorType::parallel);
  auto scaled = linalg::GenericOp::create(
      rewriter, loc, TypeRange{type}, ValueRange{product}, ValueRange{init},
      ArrayRef<AffineMap>{identity, identity}, parallel,
      [&](OpBuilder &b, Location at, ValueRange args) {
        Value value = args[0];
        for (const Scale &scale : scales)
          value = arith::MulFOp::create(
              b, at, value,
              scale.constant ? arith::ConstantOp::create(b, at, scale.constant) : scale.value);
        linalg::YieldOp::create(b, at, value);
      });
  return scaled->getResult(0);
}

/// The contraction `op` as an ipu_gemm.matmul, or an error naming what does
/// not fit.
static LogicalResult importContraction(linalg::LinalgOp op,
                                       PatternRewriter &rewriter) {
  if (!op.hasPureTensorSemantics())
    return op.emitError("contraction must work on tensors, not buffers");
  if (auto matmul = dyn_cast<linalg::MatmulOp>(op.getOperation());
      matmul && matmul.getCast() != linalg::TypeFn::cast_signed)
    return op.emitError("linalg.matmul with an unsigned cast is not supported");
  Value init = op.getDpsInits()[0];
  if (!isZeroAccumulator(init))
    return op.emitError(
        "contraction accumulates into non-zero data; only a zero fill or "
        "tensor.empty accumulator is supported");
  FailureOr<Contraction> contraction = analyse(op);
  if (failed(contraction))
    return failure();
  lookThrough(*contraction);
  FailureOr<std::pair<ipu_gemm::PlanAttr, ipu_gemm::ConstraintsAttr>> carried =
      carriedAttributes(op);
  if (failed(carried))
    return failure();
  auto resultType = cast<RankedTensorType>(op->getResult(0).getType());
  rewriter.setInsertionPoint(op);
  auto imported = ipu_gemm::MatmulOp::create(
      rewriter, op.getLoc(), resultType, contraction->lhs, contraction->rhs,
      TypeAttr::get(resultType.getElementType()), contraction->transposeLhs,
      contraction->transposeRhs, carried->first, carried->second,
      /*input_scale=*/IntegerAttr());
  if (failed(mlir::verify(imported))) {
    rewriter.eraseOp(imported);
    return op.emitError("contraction does not form an ipu_gemm.matmul (see "
                        "the error above)");
  }
  rewriter.replaceOp(op, scaledResult(rewriter, op.getLoc(), imported.getResult(),
                                      contraction->resultScales));
  return success();
}




/// Removes the linalg, tensor and arith ops left without users (the
/// look-through producers, fills, empties and constants), to a fixpoint.
static void eraseDeadOps(ModuleOp module) {
  module.walk([&](func::FuncOp func) {
    for (bool erased = true; erased;) {
      erased = false;
      SmallVector<Operation *> dead;
      func.walk([&](Operation *op) {
        if (op != func && op->getDialect() &&
            isa<linalg::LinalgDialect, tensor::TensorDialect, arith::ArithDialect>(
                op->getDialect()) &&
            isOpTriviallyDead(op))
          dead.push_back(op);
      });
      for (Operation *op : llvm::reverse(dead))
        if (op->use_empty()) {
          op->erase();
          erased = true;
        }
    }
  });
}


namespace {

/// Attention's head split and merge: a linalg.transpose that permutes
/// leading dims of a tensor of rank 3 or more, read through an expand_shape
/// splitting its last dim (the heads) and into a collapse_shape merging its
/// last dims, is an ipu_tile.permute. A transpose that also swaps the last
/// two dims (torch-mlir's K^T, [0, 2, 3, 1]) is the permute and that swap,
/// which the matmul takes as B^T.
struct ImportPermute : OpRewritePattern<linalg::TransposeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(linalg::TransposeOp op,
                                PatternRewriter &rewriter) const override {
    auto type = dyn_cast<RankedTensorType>(op.getInit().getType());
    ArrayRef<int64_t> perm = op.getPermutation();
    const int64_t rank = static_cast<int64_t>(perm.size());
    if (!op.hasPureTensorSemantics() || !type || !type.hasStaticShape() ||
        rank < 3 || swapsLastTwo(perm))
      return failure();
    SmallVector<int64_t> keep(perm);
    bool swapLastTwo = false;
    if (perm.back() != rank - 1) {
      if (perm[rank - 2] != rank - 1)
        return failure();
      std::swap(keep[rank - 2], keep[rank - 1]);
      swapLastTwo = true;
    }
    Value source = op.getInput();
    auto view = cast<RankedTensorType>(source.getType());
    if (auto expand = source.getDefiningOp<tensor::ExpandShapeOp>())
      if (expand.getReassociationIndices().back().size() > 1)
        source = expand.getSrc();
    SmallVector<int64_t> permutedShape;
    for (int64_t d : keep)
      permutedShape.push_back(view.getDimSize(d));
    auto resultType = RankedTensorType::get(permutedShape, type.getElementType());
    Operation *replaced = op;
    if (!swapLastTwo && op->hasOneUse())
      if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(*op->getUsers().begin()))
        if (collapse.getReassociationIndices().back().size() > 1) {
          resultType = collapse.getResultType();
          replaced = collapse;
        }
    rewriter.setInsertionPoint(replaced);
    Value result = ipu_tile::PermuteOp::create(
        rewriter, op.getLoc(), resultType, source,
        rewriter.getDenseI64ArrayAttr(view.getShape()),
        rewriter.getDenseI64ArrayAttr(keep), /*offsets=*/nullptr, /*sizes=*/nullptr);
    if (swapLastTwo) {
      SmallVector<int64_t> swap = llvm::to_vector(llvm::seq<int64_t>(0, rank));
      std::swap(swap[rank - 2], swap[rank - 1]);
      Value init = tensor::EmptyOp::create(rewriter, op.getLoc(), type.getShape(),
                                           type.getElementType());
      result = linalg::TransposeOp::create(rewriter, op.getLoc(), result, init, swap)
                   ->getResult(0);
    }
    rewriter.replaceOp(replaced, result);
    if (replaced != op.getOperation())
      rewriter.eraseOp(op);
    return success();
  }
};

/// A static slice with unit strides of an activation (timm's q, k and v
/// taken from its fused qkv; nn.MultiheadAttention's key and value) is a
/// window of a permute: of the permute that made its source when that
/// permute's result is its permuted view (one exchange phase for both),
/// else of its source as it is.
struct ImportSlice : OpRewritePattern<tensor::ExtractSliceOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(tensor::ExtractSliceOp op,
                                PatternRewriter &rewriter) const override {
    RankedTensorType sourceType = op.getSourceType();
    auto resultType = dyn_cast<RankedTensorType>(op.getResult().getType());
    if (!sourceType.hasStaticShape() || !resultType || !resultType.hasStaticShape() ||
        !isa<FloatType>(sourceType.getElementType()) || !op.hasUnitStride() ||
        ShapedType::isDynamicShape(op.getStaticOffsets()) ||
        ShapedType::isDynamicShape(op.getStaticSizes()) ||
        op.getStaticSizes().size() != size_t(sourceType.getRank()) ||
        resultType.getRank() < 2)
      return failure();
    SmallVector<int64_t> view(sourceType.getShape());
    SmallVector<int64_t> order = llvm::to_vector(llvm::seq<int64_t>(0, sourceType.getRank()));
    Value source = op.getSource();
    if (auto permute = source.getDefiningOp<ipu_tile::PermuteOp>();
        permute && !permute.getSizes()) {
      ipu::Permutation plain = permute.getPlainPermutation();
      if (ArrayRef<int64_t>(plain.resultExtents()) == sourceType.getShape()) {
        view.assign(permute.getView().begin(), permute.getView().end());
        order.assign(permute.getPermutation().begin(), permute.getPermutation().end());
        source = permute.getSource();
      }
    }
    // The last dim stays last: a window of it must still hold whole runs,
    // which the permute's verifier checks.
    rewriter.replaceOpWithNewOp<ipu_tile::PermuteOp>(
        op, resultType, source, rewriter.getDenseI64ArrayAttr(view),
        rewriter.getDenseI64ArrayAttr(order),
        rewriter.getDenseI64ArrayAttr(op.getStaticOffsets()),
        rewriter.getDenseI64ArrayAttr(op.getStaticSizes()));
    return success();
  }
};

/// Whether `op` is a contraction (named or generic, recognised by its
/// indexing maps), which importContraction takes or refuses.
static bool isContraction(linalg::LinalgOp op) {
  return linalg::isaContractionOpInterface(op) || isa<linalg::ContractOp>(op);
}

/// torch-mlir scales K^T after transposing it (scaled_dot_product_attention
/// splits the scale between Q and K^T): an elementwise generic of one
/// transposed input whose every user is a contraction computes on the
/// untransposed value, and the transpose moves after it, where the
/// contraction looks through it.
struct SinkTransposeBelowElementwise : OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(linalg::GenericOp op,
                                PatternRewriter &rewriter) const override {
    if (op.getNumDpsInputs() != 1 || op.getNumDpsInits() != 1 ||
        op.getNumReductionLoops() != 0 || !op.hasPureTensorSemantics() ||
        op->use_empty() ||
        !llvm::all_of(op.getIndexingMapsArray(),
                      [](AffineMap map) { return map.isIdentity(); }) ||
        !op.getBody()->getOps<linalg::IndexOp>().empty())
      return failure();
    // Its users are contractions, directly or through a collapse of the
    // leading dims (torch-mlir's batch_matmul on [B*H, S, S]).
    auto isContractionUser = [](Operation *user) {
      auto contraction = dyn_cast<linalg::LinalgOp>(user);
      return contraction && isContraction(contraction);
    };
    for (Operation *user : op->getUsers()) {
      auto collapse = dyn_cast<tensor::CollapseShapeOp>(user);
      bool leadingOnly =
          collapse && collapse.getReassociationIndices().size() >= 2 &&
          llvm::all_of(ArrayRef(collapse.getReassociationIndices()).take_back(2),
                       [](const ReassociationIndices &group) { return group.size() == 1; });
      if (!isContractionUser(user) &&
          !(leadingOnly && llvm::all_of(collapse->getUsers(), isContractionUser)))
        return failure();
    }
    Value source = lookThroughTranspose(op.getDpsInputs()[0]);
    if (!source)
      return failure();
    auto sourceType = cast<RankedTensorType>(source.getType());
    auto resultType = cast<RankedTensorType>(op->getResult(0).getType());
    Location loc = op.getLoc();
    Value init = tensor::EmptyOp::create(rewriter, loc, sourceType.getShape(),
                                         resultType.getElementType());
    const int64_t rank = sourceType.getRank();
    auto computed = linalg::GenericOp::create(
        rewriter, loc, TypeRange{init.getType()}, ValueRange{source}, ValueRange{init},
        op.getIndexingMapsArray(), op.getIteratorTypesArray());
    rewriter.cloneRegionBefore(op.getRegion(), computed.getRegion(),
                               computed.getRegion().end());
    SmallVector<int64_t> swap = llvm::to_vector(llvm::seq<int64_t>(0, rank));
    std::swap(swap[rank - 2], swap[rank - 1]);
    Value transposedInit = tensor::EmptyOp::create(rewriter, loc, resultType.getShape(),
                                                   resultType.getElementType());
    Value transposed = linalg::TransposeOp::create(rewriter, loc, computed->getResult(0),
                                                   transposedInit, swap)
                           ->getResult(0);
    rewriter.replaceOp(op, transposed);
    return success();
  }
};

/// A matmul accumulating in f32 whose only use narrows the result stores
/// the narrow type directly: the AMP accumulates in f32 and rounds once on
/// the way out.
struct FoldTruncation : OpRewritePattern<ipu_gemm::MatmulOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ipu_gemm::MatmulOp matmul,
                                PatternRewriter &rewriter) const override {
    if (!matmul->hasOneUse())
      return failure();
    Operation *truncation = *matmul->getUsers().begin();
    if (truncatedInput(truncation) != matmul.getResult())
      return failure();
    auto type = dyn_cast<RankedTensorType>(truncation->getResult(0).getType());
    if (!type || (!type.getElementType().isF16() && !type.getElementType().isF32()))
      return failure();
    rewriter.setInsertionPoint(matmul);
    auto narrowed = ipu_gemm::MatmulOp::create(
        rewriter, matmul.getLoc(), type, matmul.getLhs(), matmul.getRhs(),
        matmul.getAccTypeAttr(), matmul.getTransposeLhs(),
        matmul.getTransposeRhs(), matmul.getPlanAttr(), matmul.getConstraintsAttr(),
        matmul.getInputScaleAttr());
    rewriter.replaceOp(truncation, narrowed.getResult());
    rewriter.eraseOp(matmul);
    return success();
  }
};

/// torch-mlir collapses leading dims for a batch_matmul (or into M for a
/// matmul) and expands the result back: a matmul whose operands are
/// collapses and whose only use is the inverse expand is the matmul of the
/// uncollapsed operands, as long as only leading dims (batch dims, or M's
/// when B is 2-D) are regrouped.
struct FoldRegroupedBatches : OpRewritePattern<ipu_gemm::MatmulOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ipu_gemm::MatmulOp matmul,
                                PatternRewriter &rewriter) const override {
    if (!matmul->hasOneUse())
      return failure();
    auto expand = dyn_cast<tensor::ExpandShapeOp>(*matmul->getUsers().begin());
    if (!expand)
      return failure();
    SmallVector<ReassociationIndices> groups = expand.getReassociationIndices();
    // Only the dims before the last two of the batched operands regroup;
    // with a 2-D B, A's rows may take the merged dims too.
    const bool batched = matmul.isBatched();
    auto keepsLastDims = [&](ArrayRef<ReassociationIndices> reassociation,
                             unsigned untouched) {
      if (reassociation.size() < untouched)
        return false;
      for (const ReassociationIndices &group : reassociation.take_back(untouched))
        if (group.size() != 1)
          return false;
      return true;
    };
    if (!keepsLastDims(groups, batched ? 2 : 1))
      return failure();
    auto uncollapsed = [&](Value operand) -> Value {
      auto collapse = operand.getDefiningOp<tensor::CollapseShapeOp>();
      if (!collapse || collapse.getReassociationIndices() != groups)
        return Value();
      return collapse.getSrc();
    };
    Value lhs = uncollapsed(matmul.getLhs());
    Value rhs = batched ? uncollapsed(matmul.getRhs()) : matmul.getRhs();
    if (!lhs || !rhs)
      return failure();
    // The expanded result's leading dims must be A's.
    auto lhsType = cast<RankedTensorType>(lhs.getType());
    auto resultType = expand.getResultType();
    const unsigned matrixDims = batched ? 2 : 1;
    if (lhsType.getShape().drop_back(matrixDims) !=
        resultType.getShape().drop_back(matrixDims))
      return failure();
    // The uncollapsed operands may be transposes in turn.
    Contraction contraction{lhs, rhs, matmul.getTransposeLhs(),
                            matmul.getTransposeRhs(), {}};
    lookThrough(contraction);
    rewriter.setInsertionPoint(matmul);
    auto regrouped = ipu_gemm::MatmulOp::create(
        rewriter, matmul.getLoc(), resultType, contraction.lhs, contraction.rhs,
        matmul.getAccTypeAttr(), contraction.transposeLhs, contraction.transposeRhs,
        matmul.getPlanAttr(), matmul.getConstraintsAttr(), matmul.getInputScaleAttr());
    if (failed(mlir::verify(regrouped))) {
      rewriter.eraseOp(regrouped);
      return failure();
    }
    rewriter.replaceOp(expand, scaledResult(rewriter, matmul.getLoc(), regrouped.getResult(),
                                            contraction.resultScales));
    rewriter.eraseOp(matmul);
    return success();
  }
};

/// An f8 tensor an operand widens, the power of two the widened value is
/// then multiplied by, and the permute (a reshape, a transpose or a window)
/// the operand reads it through, if any.
struct ScaledNarrow {
  Value narrow;
  int exponent = 0;
  ipu_tile::PermuteOp permute; ///< Optional: read through it.
  /// The ops from the operand down to the f8 tensor, which the fold leaves
  /// dead when nothing else reads them.
  SmallVector<Operation *, 3> chain;
};

/// The single body op before the yield of a one-input elementwise op
/// without a reduction, or null.
static Operation *soleBodyOp(ipu_tile::ElementwiseOp op, unsigned extraOps = 0) {
  if (!op || op.getInputs().size() != 1 || op.getReduce())
    return nullptr;
  Block &body = op.getBody().front();
  if (body.getOperations().size() != 2 + extraOps)
    return nullptr;
  Operation *yielded = body.getTerminator()->getOperand(0).getDefiningOp();
  return yielded && yielded->getBlock() == &body ? yielded : nullptr;
}

/// `value` as f8 x 2^e read through an optional permute: a one-input
/// elementwise op that widens an f8 tensor exactly, then optionally one
/// that multiplies by a power-of-two constant that keeps every f8 value
/// exact in the wide type (no overflow, no rounding below its smallest
/// subnormal). What torch-mlir makes of `x8.to(f16) * scale`.
static std::optional<ScaledNarrow> scaledNarrow(Value value) {
  ScaledNarrow result;
  // Widening and scaling are elementwise: they commute with any permute or
  // window (attention's heads split off the f8 query, key and value).
  if (auto permute = value.getDefiningOp<ipu_tile::PermuteOp>()) {
    result.permute = permute;
    result.chain.push_back(permute);
    value = permute.getSource();
  }
  auto scaling = value.getDefiningOp<ipu_tile::ElementwiseOp>();
  if (auto product = dyn_cast_or_null<arith::MulFOp>(soleBodyOp(scaling, 1))) {
    Value argument = scaling.getBody().front().getArgument(0);
    Value other = product.getLhs() == argument ? product.getRhs() : product.getLhs();
    FloatAttr constant;
    if ((product.getLhs() != argument && product.getRhs() != argument) ||
        !matchPattern(other, m_Constant(&constant)))
      return std::nullopt;
    int exponent = 0;
    const double fraction = std::frexp(constant.getValueAsDouble(), &exponent);
    if (fraction != 0.5)
      return std::nullopt;
    result.exponent = exponent - 1;
    result.chain.push_back(scaling);
    value = scaling.getInputs()[0];
  }
  auto widening = value.getDefiningOp<ipu_tile::ElementwiseOp>();
  auto extension = dyn_cast_or_null<arith::ExtFOp>(soleBodyOp(widening));
  if (!extension)
    return std::nullopt;
  Value narrow = widening.getInputs()[0];
  std::optional<ipu::ElementType> narrowType =
      mlir::ipu_tile::toElementType(getElementTypeOrSelf(narrow.getType()));
  std::optional<ipu::ElementType> wideType =
      mlir::ipu_tile::toElementType(getElementTypeOrSelf(value.getType()));
  if (!narrowType || !wideType || !ipu::isF8(*narrowType))
    return std::nullopt;
  // Every f8 value times 2^e stays exact in the wide type.
  const double scale = std::ldexp(1.0, result.exponent);
  const double largestNarrow = *narrowType == ipu::ElementType::F8E4M3FN ? 448.0 : 57344.0;
  const double largestWide = *wideType == ipu::ElementType::F16 ? 65504.0 : 3.4e38;
  if (ipu::smallestSubnormal(*narrowType) * scale < ipu::smallestSubnormal(*wideType) ||
      largestNarrow * scale > largestWide)
    return std::nullopt;
  // The permute then moves f8: its runs (the view's last dim, kept last
  // and windowed on whole words) must stay whole exchange words.
  if (result.permute) {
    constexpr int64_t kF8PerWord = 4;
    ArrayRef<int64_t> order = result.permute.getPermutation();
    ArrayRef<int64_t> view = result.permute.getView();
    const int64_t last = static_cast<int64_t>(view.size()) - 1;
    if (view.empty() || order.back() != last || view.back() % kF8PerWord != 0)
      return std::nullopt;
    if (result.permute.getOffsets() &&
        ((*result.permute.getOffsets()).back() % kF8PerWord != 0 ||
         (*result.permute.getSizes()).back() % kF8PerWord != 0))
      return std::nullopt;
  }
  result.narrow = narrow;
  result.chain.push_back(widening);
  return result;
}

/// A matmul of two scaled, widened f8 tensors of one type (QuantizedLinear
/// with f8 activations: `linear(x8.to(f16) * sx, w8.to(f16) * sw)`) is the
/// AMP's native f8 product with the scales' exponents in its input scale:
/// the same products, the same partial sums in real units.
static void foldScaledNarrowOperands(ModuleOp module) {
  SmallVector<ipu_gemm::MatmulOp> matmuls;
  module.walk([&](ipu_gemm::MatmulOp op) { matmuls.push_back(op); });
  for (ipu_gemm::MatmulOp matmul : matmuls) {
    if (matmul.getInputScale())
      continue;
    std::optional<ScaledNarrow> lhs = scaledNarrow(matmul.getLhs());
    std::optional<ScaledNarrow> rhs = scaledNarrow(matmul.getRhs());
    if (!lhs || !rhs ||
        getElementTypeOrSelf(lhs->narrow.getType()) != getElementTypeOrSelf(rhs->narrow.getType()))
      continue;
    const int exponent = lhs->exponent + rhs->exponent;
    if (exponent < ipu::kF8InputScaleMin || exponent > ipu::kF8InputScaleMax)
      continue;
    OpBuilder builder(matmul);
    auto narrowed = [&](ScaledNarrow &operand) -> Value {
      if (!operand.permute)
        return operand.narrow;
      auto type = cast<RankedTensorType>(operand.permute.getType());
      return ipu_tile::PermuteOp::create(
          builder, operand.permute.getLoc(),
          type.clone(getElementTypeOrSelf(operand.narrow.getType())), operand.narrow,
          operand.permute.getViewAttr(), operand.permute.getPermutationAttr(),
          operand.permute.getOffsetsAttr(), operand.permute.getSizesAttr());
    };
    Value lhsNarrow = narrowed(*lhs), rhsNarrow = narrowed(*rhs);
    auto native = ipu_gemm::MatmulOp::create(
        builder, matmul.getLoc(), matmul.getType(), lhsNarrow, rhsNarrow,
        matmul.getAccTypeAttr(), matmul.getTransposeLhs(), matmul.getTransposeRhs(),
        matmul.getPlanAttr(), matmul.getConstraintsAttr(),
        builder.getI32IntegerAttr(exponent));
    matmul.replaceAllUsesWith(native.getResult());
    matmul.erase();
    // Each op once (both operands may read one chain), users first.
    SmallVector<Operation *, 6> chains(lhs->chain.begin(), lhs->chain.end());
    for (Operation *op : rhs->chain)
      if (!llvm::is_contained(chains, op))
        chains.push_back(op);
    for (bool erased = true; erased;) {
      erased = false;
      for (Operation *&op : chains)
        if (op && op->use_empty()) {
          op->erase();
          op = nullptr;
          erased = true;
        }
    }
  }
}

/// An elementwise op of one input and one result whose body converts that
/// input's element to the result's (arith.extf or arith.truncf).
static ipu_tile::ElementwiseOp createConversion(OpBuilder &builder, Location loc,
                                                Value input, RankedTensorType type) {
  auto converted = ipu_tile::ElementwiseOp::create(builder, loc, type, ValueRange{input});
  Block &body = converted.getBody().front();
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPointToStart(&body);
  Type element = type.getElementType();
  Value argument = body.getArgument(0);
  Value value = element.getIntOrFloatBitWidth() >
                        argument.getType().getIntOrFloatBitWidth()
                    ? Value(arith::ExtFOp::create(builder, loc, element, argument))
                    : Value(arith::TruncFOp::create(builder, loc, element, argument));
  ipu_tile::YieldOp::create(builder, loc, value);
  return converted;
}

/// The f32 value `narrow` (an f16 or f8 tensor) was truncated from by an
/// elementwise op of nothing else (a reduction's f32 accumulation), or
/// null.
static Value truncatedFrom(Value narrow) {
  auto op = narrow.getDefiningOp<ipu_tile::ElementwiseOp>();
  if (!op || op.getReduce() || op.getInputs().size() != 1)
    return Value();
  Block &body = op.getBody().front();
  auto truncate = dyn_cast<arith::TruncFOp>(&body.front());
  if (!truncate || truncate.getIn() != body.getArgument(0) ||
      body.getTerminator()->getOperand(0) != truncate.getResult() ||
      body.getOperations().size() != 2)
    return Value();
  Value wide = op.getInputs()[0];
  auto wideType = cast<RankedTensorType>(wide.getType());
  return wideType.getElementType().isF32() &&
                 wideType.getShape() == cast<RankedTensorType>(narrow.getType()).getShape()
             ? wide
             : Value();
}

/// A reshape nothing above folded (torch-mlir's flatten of [1, S, D] to
/// [S, D] around a linear layer) is a permute that keeps every dim in
/// place: when its source's layout already holds the result (only unit or
/// leading dims regrouped), the lowering gives it the source's buffer and
/// it moves nothing.
///
/// f16 or f8 rows that are not whole words regrouped (a row reduction's
/// [..., R, 1] column returned as [..., R], [4, 3] flattened) cannot move
/// as they are: each row starts a word of its own, and the exchange writes
/// whole words. They move in f32 (a reduction's own accumulation, or the
/// value widened exactly) and are narrowed where they arrive.
static void reshapesAsPermutes(ModuleOp module) {
  SmallVector<Operation *> reshapes;
  module.walk([&](Operation *op) {
    if (isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp>(op) &&
        !isa<linalg::LinalgOp>(op->getParentOp()))
      reshapes.push_back(op);
  });
  for (Operation *op : reshapes) {
    auto source = cast<RankedTensorType>(op->getOperand(0).getType());
    auto result = cast<RankedTensorType>(op->getResult(0).getType());
    if (!source.hasStaticShape() || !result.hasStaticShape() ||
        !isa<FloatType>(source.getElementType()))
      continue; // Left for the final check to name.
    OpBuilder builder(op);
    // Read as the finer of the two shapes: a reshape that splits the last
    // dim (the head attention's [4608] into 4 images' [4, 1152]) moves its
    // runs as the result's rows.
    RankedTensorType view = source;
    if (result.getRank() > 0 && source.getRank() > 0 &&
        result.getShape().back() < source.getShape().back() &&
        source.getShape().back() % result.getShape().back() == 0)
      view = result;
    SmallVector<int64_t> identity = llvm::to_vector(llvm::seq<int64_t>(0, view.getRank()));
    // A reshape of a whole permute's only result is that permute read
    // into the reshape's shape: the same elements in the same order,
    // without the flat tensor between them (the head attention's heads
    // merged into [B * D], then split into [B, D]).
    auto producer = op->getOperand(0).getDefiningOp<ipu_tile::PermuteOp>();
    if (producer && producer->hasOneUse() && !producer.getOffsets() &&
        !producer.getSizes() && result.getRank() > 0 &&
        result.getShape().back() % producer.getView().back() == 0) {
      Value composed = ipu_tile::PermuteOp::create(
          builder, op->getLoc(), result, producer.getSource(), producer.getViewAttr(),
          producer.getPermutationAttr(), /*offsets=*/nullptr, /*sizes=*/nullptr);
      op->getResult(0).replaceAllUsesWith(composed);
      op->erase();
      producer->erase();
      continue;
    }
    Value moved = op->getOperand(0);
    RankedTensorType movedType = result;
    // Rows of f16 or f8 regrouped where a row is not whole words.
    const unsigned bits = source.getElementTypeBitWidth();
    const int64_t perWord = bits < 32 ? 32 / bits : 1;
    const bool narrowRegrouped =
        perWord > 1 && source.getRank() > 0 && result.getRank() > 0 &&
        source.getShape().back() != result.getShape().back() &&
        (source.getShape().back() % perWord != 0 || result.getShape().back() % perWord != 0);
    if (narrowRegrouped) {
      Type f32 = builder.getF32Type();
      moved = truncatedFrom(moved);
      if (!moved)
        moved = createConversion(builder, op->getLoc(), op->getOperand(0),
                                 RankedTensorType::get(source.getShape(), f32));
      movedType = RankedTensorType::get(result.getShape(), f32);
    }
    Value permuted = ipu_tile::PermuteOp::create(
        builder, op->getLoc(), movedType, moved,
        builder.getDenseI64ArrayAttr(view.getShape()),
        builder.getDenseI64ArrayAttr(identity), /*offsets=*/nullptr, /*sizes=*/nullptr);
    if (narrowRegrouped)
      permuted = createConversion(builder, op->getLoc(), permuted, result);
    op->getResult(0).replaceAllUsesWith(permuted);
    op->erase();
  }
}

/// Every buffer and exchange is sized at compile time: a function whose
/// arguments or results have dynamic dims is refused, naming the first.
static LogicalResult refuseDynamicShapes(ModuleOp module) {
  bool refused = false;
  module.walk([&](func::FuncOp func) {
    auto dynamicType = [](Type type) {
      auto shaped = dyn_cast<ShapedType>(type);
      return shaped && !shaped.hasStaticShape();
    };
    for (auto [what, types] : {std::pair<StringRef, ArrayRef<Type>>("takes", func.getArgumentTypes()),
                               std::pair<StringRef, ArrayRef<Type>>("returns", func.getResultTypes())})
      for (Type type : types)
        if (dynamicType(type)) {
          func.emitError("function '")
              << func.getSymName() << "' " << what << " " << type
              << ": the IPU compiler compiles static shapes only (every tile buffer "
                 "and exchange is sized at compile time); export with static example "
                 "shapes (torch.export without dynamic_shapes)";
          refused = true;
          return;
        }
  });
  return failure(refused);
}

/// Elementwise arith and math ops on whole tensors (`arith.addf` or
/// `math.exp` on a tensor, as hand-written IR and some StableHLO-to-linalg
/// paths write them) become the all-parallel generics that the elementwise
/// import takes, by upstream's own conversion; they then fuse and lower as
/// every other elementwise op. Walked, not driven greedily, so that nothing
/// else is folded. A comparison's i1 tensor (`arith.cmpf` read by
/// `arith.select`) has no tile buffer: a converted generic whose result is
/// not a float is fused, by upstream's elementwise fusion, into the
/// all-parallel generics that read it, so that the i1 stays a scalar inside
/// one body. Generics the input wrote are left as they are (the frozen
/// import recognises some i1 forms).
static void elementwiseOpsAsGenerics(ModuleOp module) {
  struct Converted : RewriterBase::Listener {
    llvm::SmallPtrSet<Operation *, 16> ops;
    void notifyOperationInserted(Operation *op, OpBuilder::InsertPoint) override {
      if (isa<linalg::GenericOp>(op))
        ops.insert(op);
    }
  } converted;
  RewritePatternSet patterns(module.getContext());
  linalg::populateElementwiseToLinalgConversionPatterns(patterns);
  walkAndApplyPatterns(module, std::move(patterns), &converted);
  if (converted.ops.empty())
    return;

  IRRewriter rewriter(module.getContext());
  auto fuseOne = [&]() {
    WalkResult fused = module.walk([&](linalg::GenericOp consumer) {
      if (consumer.getNumReductionLoops() != 0)
        return WalkResult::advance();
      for (OpOperand *operand : consumer.getDpsInputOperands()) {
        auto producer = operand->get().getDefiningOp<linalg::GenericOp>();
        if (!producer || !converted.ops.contains(producer) ||
            isa<FloatType>(getElementTypeOrSelf(operand->get().getType())) ||
            !linalg::areElementwiseOpsFusable(operand))
          continue;
        rewriter.setInsertionPoint(consumer);
        FailureOr<linalg::ElementwiseOpFusionResult> result =
            linalg::fuseElementwiseOps(rewriter, operand);
        if (failed(result))
          continue;
        converted.ops.insert(result->fusedOp);
        for (auto [original, replacement] : result->replacements)
          rewriter.replaceUsesWithIf(original, replacement, [&](OpOperand &use) {
            return use.getOwner() != producer;
          });
        converted.ops.erase(consumer);
        rewriter.eraseOp(consumer);
        if (producer->use_empty()) {
          converted.ops.erase(producer);
          rewriter.eraseOp(producer);
        }
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    return fused.wasInterrupted();
  };
  while (fuseOne()) {
  }
}

struct ImportLinalgPass
    : public mlir::ipu_compiler::impl::IPUImportLinalgBase<ImportLinalgPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *context = &getContext();
    // Stages, in order: each looks through what the one before left.
    // Convolutions become the permute and matmul forms the next stages take.
    ImportRefusals refusals;
    if (failed(refuseDynamicShapes(module)))
      return signalPassFailure();
    // After the demotion, which drops a tensor's f64 round trip whole.
    demoteDoublePrecision(module);
    elementwiseOpsAsGenerics(module);
    if (failed(mlir::ipu_compiler::importFrozenModel(module)))
      return signalPassFailure();
    RewritePatternSet convolutions(context);
    // A patch-embedding convolution becomes a permute, a matmul and its
    // bias (importConvolution); any other convolution is refused.
    convolutions.add<ImportOrRefuse<linalg::Conv2DNchwFchwOp, OpRewritePattern>>(
        context, nullptr, importConvolution, refusals);
    if (failed(applyImportStage(module, std::move(convolutions), refusals)))
      return signalPassFailure();
    // Permutes first, so that a transpose left only swapping the last two
    // dims is one a contraction looks through.
    RewritePatternSet permutes(context);
    permutes.add<ImportPermute, ImportSlice, SinkTransposeBelowElementwise>(context);
    (void)applyImportStage(module, std::move(permutes), refusals);
    RewritePatternSet contractions(context);
    contractions.add<ImportOrRefuse<linalg::LinalgOp, OpInterfaceRewritePattern>>(
        context, isContraction, importContraction, refusals);
    if (failed(applyImportStage(module, std::move(contractions), refusals)))
      return signalPassFailure();
    // Then what the matmuls' results went through, in this order: a
    // truncation right after a matmul narrows it before a regrouping moves
    // the matmul past its expand.
    RewritePatternSet truncations(context);
    truncations.add<FoldTruncation>(context);
    (void)applyImportStage(module, std::move(truncations), refusals);
    RewritePatternSet regroupings(context);
    regroupings.add<FoldRegroupedBatches>(context);
    (void)applyImportStage(module, std::move(regroupings), refusals);
    // What the contractions looked through goes first: their operands'
    // broadcasts are elementwise generics too.
    eraseDeadOps(module);
    if (failed(mlir::ipu_compiler::importElementwise(module)))
      return signalPassFailure();
    eraseDeadOps(module);
    reshapesAsPermutes(module);
    foldScaledNarrowOperands(module);
    eraseDeadOps(module);
    // What is left from linalg or the shape ops is not compiled: say which.
    bool unsupported = false;
    module.walk([&](Operation *op) {
      if (!op->getDialect() || !isa<linalg::LinalgDialect, tensor::TensorDialect>(
                                   op->getDialect()))
        return;
      if (isa<tensor::EmptyOp>(op) || isa<linalg::LinalgOp>(op->getParentOp()))
        return;
      op->emitError("unsupported op '")
          << op->getName()
          << "': the IPU compiler imports contractions (linalg.matmul, "
             "batch_matmul, contract, multiply-add generics), patch-embedding "
             "convolutions, elementwise generics and maps, and the transposes, "
             "broadcasts, fills, reshapes, unit-stride slices and truncations that fold into them";
      unsupported = true;
    });
    if (unsupported)
      signalPassFailure();
  }
};
} // namespace
