//===- ElementwiseReference.cpp - The "elementwise" reference op in a package ---------===//
//
// Everything lib/Package knows of the kind (ReferenceKindDetail.h): its
// fields in the ReferenceOp union and what validatePackage requires of it.
// Its evaluation and tolerance are evaluateElementwise in lib/Reference.
//
//===----------------------------------------------------------------------===//

#include "ReferenceKindDetail.h"

#include "IPU/Device/Elementwise.h"
#include "IPU/Layout/BlockLayout.h"

using namespace ipu;
using namespace ipu::package_detail;
using std::to_string;

void ipu::package_detail::writeElementwiseReference(const ReferenceOp &op,
                                                    wire::ReferenceOp::Builder out) {
  out.initElementwise().setKernel(op.kernel);
}
void ipu::package_detail::readElementwiseReference(wire::ReferenceOp::Reader in,
                                                   size_t, ReferenceOp &op) {
  op.kernel = in.getElementwise().getKernel();
}

/// An "elementwise" op: the body of its kernel over the shape of its
/// first full input, every input of the shape its broadcast says.
std::optional<std::string>
ipu::package_detail::checkElementwiseReference(const ReferenceChecking &checking,
                                               size_t i, const std::string &where,
                                               ReferenceSignature &signature) {
  const ReferenceOp &op = checking.package().reference[i];
  std::vector<int64_t> &shape = signature.shape;
  std::string &operands = signature.operands;
  signature.form = "their elementwise value";
  if (op.kernel >= checking.package().kernels.size())
    return where + ": kernel " + to_string(op.kernel) + " is not one of the " +
           to_string(checking.package().kernels.size()) + " kernels";
  const ElementwiseKernel &kernel = *checking.package().kernels[op.kernel];
  const ElementwiseBody &body = kernel.body();
  if (op.arguments.size() != body.inputs.size())
    return where + ": kernel '" + kernel.name() + "' takes " +
           to_string(body.inputs.size()) + " inputs, got " +
           to_string(op.arguments.size());
  if (op.type != body.resultType)
    return where + ": value type " + std::string(elementTypeName(op.type)) +
           " is not the " + std::string(elementTypeName(body.resultType)) +
           " kernel '" + kernel.name() + "' yields";
  std::vector<std::vector<int64_t>> shapes(body.inputs.size());
  std::vector<std::string> names(body.inputs.size());
  bool haveShape = false;
  for (unsigned a = 0; a < body.inputs.size(); ++a) {
    if (auto error = checking.operand(i, a, where, shapes[a], names[a]))
      return error;
    operands += (a ? ", " : "") + shapeString(shapes[a]) + " (" + names[a] + ")";
    if (body.inputs[a].broadcast == Broadcast::Full && !haveShape) {
      shape = shapes[a];
      haveShape = true;
    }
  }
  if (!haveShape || shape.empty())
    return where + ": kernel '" + kernel.name() +
           "' has no full input of rank >= 1 to give the value its shape";
  int64_t valueElements = 1;
  for (int64_t extent : shape)
    valueElements *= extent;
  for (unsigned a = 0; a < body.inputs.size(); ++a) {
    int64_t elements = 1;
    for (int64_t extent : shapes[a])
      elements *= extent;
    bool fits = false;
    switch (body.inputs[a].broadcast) {
    // A full input is read row-major, element for element: in the value's
    // shape or any other of its elements (a reshape that stayed in place).
    case Broadcast::Full: fits = elements == valueElements; break;
    case Broadcast::Row:
      fits = !shapes[a].empty() && shapes[a].back() == shape.back() &&
             elements == shape.back();
      break;
    case Broadcast::Scalar: fits = elements == 1; break;
    case Broadcast::Column: {
      std::vector<int64_t> column = shape;
      column.back() = 1;
      fits = shapes[a] == column;
      break;
    }
    }
    if (!fits)
      return where + ": input " + to_string(a) + " " + names[a] + " of shape " +
             shapeString(shapes[a]) + " is not a " +
             std::string(broadcastName(body.inputs[a].broadcast)) +
             " input of a " + shapeString(shape) + " value";
  }
  // A row reduction's value: one element per row.
  if (body.reduction != RowReduction::None)
    shape.back() = 1;
  signature.resultForm = shapeString(shape);
  return std::nullopt;
}
