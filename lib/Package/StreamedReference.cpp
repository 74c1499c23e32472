//===- StreamedReference.cpp - The "streamed" reference op in a package ---===//
//
// Everything lib/Package knows of the kind (ReferenceKindDetail.h). A
// "streamed" op is the device's own value of an output stream, which later
// ops read: what a repeated layer carried into its last layer, on which the
// host checks that layer's ops. Nothing checks the value itself.
//
//===----------------------------------------------------------------------===//

#include "ReferenceKindDetail.h"

using namespace ipu;
using namespace ipu::package_detail;
using std::to_string;

void ipu::package_detail::writeStreamedReference(const ReferenceOp &,
                                                 wire::ReferenceOp::Builder out) {
  out.setStreamed();
}
void ipu::package_detail::readStreamedReference(wire::ReferenceOp::Reader, size_t,
                                                ReferenceOp &) {}

/// A "streamed" op: no operands, and the value of an output stream, in its
/// shape.
std::optional<std::string>
ipu::package_detail::checkStreamedReference(const ReferenceChecking &checking, size_t i,
                                            const std::string &where,
                                            ReferenceSignature &signature) {
  const ReferenceOp &op = checking.package().reference[i];
  if (!op.arguments.empty())
    return where + ": takes no operands, got " + to_string(op.arguments.size());
  if (op.result == ReferenceOp::kNoResult)
    return where + ": is the device's value of an output stream, but names none";
  for (const HostStream &stream : checking.package().streams)
    if (!stream.toDevice && stream.index == op.result) {
      signature.shape = stream.shape;
      signature.operands = "nothing";
      signature.form = "the device's value";
      signature.resultForm = shapeString(stream.shape);
      return std::nullopt;
    }
  return where + ": result " + to_string(op.result) + " is not an output stream";
}
