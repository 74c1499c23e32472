//===- PermuteReference.cpp - The "permute" reference op in a package ---------===//
//
// Everything lib/Package knows of the kind (ReferenceKindDetail.h): its
// fields in the ReferenceOp union and what validatePackage requires of it.
// Its evaluation and tolerance are evaluatePermute in lib/Reference.
//
//===----------------------------------------------------------------------===//

#include "ReferenceKindDetail.h"

#include "IPU/Device/Elementwise.h"
#include "IPU/Layout/BlockLayout.h"

using namespace ipu;
using namespace ipu::package_detail;
using std::to_string;

void ipu::package_detail::writePermuteReference(const ReferenceOp &op,
                                                wire::ReferenceOp::Builder out) {
  auto permute = out.initPermute();
  fill(permute.initView(op.view.size()), op.view);
  fill(permute.initPermutation(op.permutation.size()), op.permutation);
  fill(permute.initShape(op.shape.size()), op.shape);
  if (!op.sizes.empty()) {
    fill(permute.initOffsets(op.offsets.size()), op.offsets);
    fill(permute.initSizes(op.sizes.size()), op.sizes);
  }
}
void ipu::package_detail::readPermuteReference(wire::ReferenceOp::Reader in,
                                               size_t, ReferenceOp &op) {
  auto permute = in.getPermute();
  op.view = toVector<int64_t>(permute.getView());
  op.permutation = toVector<int64_t>(permute.getPermutation());
  op.shape = toVector<int64_t>(permute.getShape());
  op.offsets = toVector<int64_t>(permute.getOffsets());
  op.sizes = toVector<int64_t>(permute.getSizes());
}

/// A "permute" op: one operand of the view's elements, a valid
/// permutation keeping the last dim, a value of as many elements whose
/// rows are whole runs of the view's last dim.
std::optional<std::string>
ipu::package_detail::checkPermuteReference(const ReferenceChecking &checking,
                                           size_t i, const std::string &where,
                                           ReferenceSignature &signature) {
  const ReferenceOp &op = checking.package().reference[i];
  std::string &operands = signature.operands;
  signature.form = "its permutation";
  if (op.arguments.size() != 1)
    return where + ": takes 1 operand, got " + to_string(op.arguments.size());
  std::vector<int64_t> operandShape;
  std::string name;
  if (auto error = checking.operand(i, 0, where, operandShape, name))
    return error;
  operands = shapeString(operandShape) + " (" + name + ")";
  if (op.view.size() > PackageLimits::kMaxTensorRank ||
      op.shape.empty() || op.shape.size() > PackageLimits::kMaxTensorRank)
    return where + ": view of " + to_string(op.view.size()) + " dims and shape of " +
           to_string(op.shape.size()) + " dims are not in [1, " +
           to_string(PackageLimits::kMaxTensorRank) + "]";
  Permutation permutation{op.view, op.permutation, op.offsets, op.sizes};
  if (auto error = permutation.validate())
    return where + ": " + *error;
  const std::vector<int64_t> extents = permutation.resultExtents();
  auto elementsOf = [](const std::vector<int64_t> &dims) {
    uint64_t count = 1;
    for (int64_t extent : dims)
      if (extent < 1 || !multiply(count, uint64_t(extent), count))
        return uint64_t(0);
    return count;
  };
  const uint64_t elements = elementsOf(op.view);
  if (elements == 0 || elementsOf(operandShape) != elements ||
      elementsOf(op.shape) != elementsOf(extents) || elementsOf(extents) == 0)
    return where + ": view " + shapeString(op.view) + " (window " +
           shapeString(extents) + "), operand " + operands + " and value " +
           shapeString(op.shape) + " do not hold the same number of elements";
  if (op.shape.back() % extents.back() != 0)
    return where + ": value rows of " + to_string(op.shape.back()) +
           " are not whole runs of the view's last dim (" +
           to_string(extents.back()) + ")";
  signature.shape = op.shape;
  signature.resultForm = shapeString(op.shape);
  return std::nullopt;
}
