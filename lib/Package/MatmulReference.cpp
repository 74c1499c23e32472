//===- MatmulReference.cpp - The "matmul" reference op in a package ---------===//
//
// Everything lib/Package knows of the kind (ReferenceKindDetail.h): its
// fields in the ReferenceOp union and what validatePackage requires of it.
// Its evaluation and tolerance are evaluateMatmul in lib/Reference.
//
//===----------------------------------------------------------------------===//

#include "ReferenceKindDetail.h"

#include "IPU/Device/Elementwise.h"
#include "IPU/Layout/BlockLayout.h"

using namespace ipu;
using namespace ipu::package_detail;
using std::to_string;

void ipu::package_detail::writeMatmulReference(const ReferenceOp &op,
                                               wire::ReferenceOp::Builder out) {
  auto matmul = out.initMatmul();
  matmul.setPartials(static_cast<uint8_t>(op.partials));
  matmul.setInnerBlocks(op.innerBlocks);
  matmul.setTransposeLhs(op.transposeLhs);
  matmul.setTransposeRhs(op.transposeRhs);
  matmul.setInputScale(static_cast<int8_t>(op.inputScale));
}
void ipu::package_detail::readMatmulReference(wire::ReferenceOp::Reader in,
                                              size_t i, ReferenceOp &op) {
  auto matmul = in.getMatmul();
  uint8_t partials = matmul.getPartials();
  if (partials != static_cast<uint8_t>(ElementType::F32) &&
      partials != static_cast<uint8_t>(ElementType::F16))
    throw FormatError{"reference op " + std::to_string(i) + ": partials type " +
                      std::to_string(partials) + " is not f32 (0) or f16 (1)"};
  op.partials = static_cast<ElementType>(partials);
  op.innerBlocks = matmul.getInnerBlocks();
  op.transposeLhs = matmul.getTransposeLhs();
  op.transposeRhs = matmul.getTransposeRhs();
  op.inputScale = matmul.getInputScale();
}

/// A "matmul" op: two operands whose shapes form a product
/// (matmulShape), f32 or f16 partials, inner blocks in [1, K], an input
/// scale in the AMP's range (whether the operands are f8 is known only to
/// the evaluation, which refuses a scale on others).
std::optional<std::string>
ipu::package_detail::checkMatmulReference(const ReferenceChecking &checking,
                                          size_t i, const std::string &where,
                                          ReferenceSignature &signature) {
  const ReferenceOp &op = checking.package().reference[i];
  std::vector<int64_t> &shape = signature.shape;
  uint64_t &opFlops = signature.flops;
  if (op.arguments.size() != 2)
    return where + ": expected 2 arguments, got " +
           to_string(op.arguments.size());
  if (op.partials != ElementType::F32 && op.partials != ElementType::F16)
    return where + ": partials type " + to_string(unsigned(op.partials)) +
           " is not f32 or f16";
  // Each operand is an input stream or the value of an earlier op.
  std::vector<int64_t> shapes[2];
  std::string names[2];
  for (unsigned a = 0; a < 2; ++a)
    if (auto error = checking.operand(i, a, where, shapes[a], names[a]))
      return error;
  const std::vector<int64_t> &lhs = shapes[0], &rhs = shapes[1];
  auto operandsText = [&] {
    return "shapes " + shapeString(lhs) + " (" + names[0] + ") x " +
           shapeString(rhs) + " (" + names[1] + ")";
  };
  MatmulShape product;
  if (auto error = matmulShape(op, lhs, rhs, product))
    return where + ": " + operandsText() + " " + *error;
  if (op.inputScale < kF8InputScaleMin || op.inputScale > kF8InputScaleMax)
    return where + ": inputScale " + to_string(op.inputScale) + " is not in [" +
           to_string(kF8InputScaleMin) + ", " + to_string(kF8InputScaleMax) + "]";
  if (op.innerBlocks < 1 || int64_t(op.innerBlocks) > product.k)
    return where + ": innerBlocks " + to_string(op.innerBlocks) +
           " is not in [1, K = " + to_string(product.k) + "]";
  shape = product.result;
  opFlops = 2;
  for (int64_t extent : {product.batches, product.m, product.k, product.n})
    if (!multiply(opFlops, uint64_t(extent), opFlops))
      opFlops = UINT64_MAX;
  signature.operands = operandsText();
  signature.form = matmulForm(op, lhs.size(), rhs.size());
  signature.resultForm = matmulForm(op, lhs.size(), rhs.size(), /*result=*/true);
  return std::nullopt;
}
