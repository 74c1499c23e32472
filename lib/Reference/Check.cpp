//===- Check.cpp - A package's results against its host reference --------===//

#include "IPU/Reference/Check.h"

#include "IPU/Support/ElementType.h"
#include "IPU/Support/Escape.h"

#include <cstdio>

using namespace ipu;

std::optional<std::string> ipu::checkableByReference(const Package &package) {
  if (auto error = checkReferenceCoverage(package))
    return error;
  if (package.reference.empty())
    return std::string("the package carries no reference computation");
  return std::nullopt;
}

namespace {

/// What a comparison of `op` assumed: an elementwise op accumulates
/// nothing, so it names the kernel that ran; a permute moves elements
/// exactly; a matmul names its partials.
std::string comparisonDetail(const Package &package, const ReferenceOp &op) {
  switch (op.kind) {
  case ReferenceKind::Elementwise:
    return "kernel=" + reportValue(package.kernels[op.kernel]->name());
  case ReferenceKind::Permute:
    return "exact";
  case ReferenceKind::Streamed:
    return "device";
  case ReferenceKind::Matmul:
    break;
  }
  return "partials=" + std::string(elementTypeName(op.partials));
}

} // namespace

std::optional<std::string> ipu::checkPackage(const Package &package,
                                             const TargetModel &target,
                                             const std::vector<HostTensor> &inputs,
                                             const std::vector<bool> &generated,
                                             const std::vector<HostTensor> &outputs,
                                             uint64_t checkpointSamples,
                                             CheckReport &report,
                                             const std::function<void(const CheckpointReport &)>
                                                 &onCheckpoint) {
  report = CheckReport();
  report.sampleLimit = checkpointSamples;
  if (auto error = checkableByReference(package))
    return error;
  // Diagnostic checkpoints: values a later reference op reads.
  std::vector<bool> consumed(package.reference.size(), false);
  for (const ReferenceOp &op : package.reference)
    for (uint32_t argument : op.arguments)
      if (argument >= ReferenceOp::kReferenceValue &&
          argument - ReferenceOp::kReferenceValue < consumed.size())
        consumed[argument - ReferenceOp::kReferenceValue] = true;
  std::vector<Reference> references;
  references.reserve(package.reference.size());
  for (size_t index = 0; index < package.reference.size(); ++index) {
    Reference reference;
    if (auto error = evaluateReference(package, target, index, inputs, generated,
                                       references, outputs, reference))
      return error;
    // The device's own value, which its readers take as given: there is
    // nothing to compare it with.
    if (package.reference[index].kind == ReferenceKind::Streamed) {
      references.push_back(std::move(reference));
      continue;
    }
    CheckpointReport checkpoint;
    checkpoint.index = index;
    checkpoint.operation = std::string(referenceKindName(package.reference[index].kind));
    checkpoint.result = reference.result;
    checkpoint.detail = comparisonDetail(package, package.reference[index]);
    const uint64_t samples = consumed[index] ? checkpointSamples : 0;
    if (auto error =
            compareWithReference(reference, outputs, checkpoint.comparison, samples))
      return error;
    report.total.add(checkpoint.comparison, index);
    if (reference.result != ReferenceOp::kNoResult) {
      if (consumed[index])
        ++report.diagnosticCheckpoints;
      if (onCheckpoint)
        onCheckpoint(checkpoint);
      report.checkpoints.push_back(std::move(checkpoint));
      // Its consumers read the device's value: the reference is done with,
      // so only intermediate values stay in host memory.
      reference.values = std::vector<float>();
      reference.allowance = std::vector<float>();
    }
    references.push_back(std::move(reference));
  }
  return std::nullopt;
}

void CheckReport::addImage(const CheckReport &other, uint32_t image) {
  if (other.total.worstRatio > total.worstRatio)
    worstImage = image;
  total.add(other.total, other.total.worstCheckpoint);
  for (const CheckpointReport &checkpoint : other.checkpoints)
    checkpoints.push_back(checkpoint);
  diagnosticCheckpoints += other.diagnosticCheckpoints;
  ++images;
}

std::string ipu::checkpointLine(const CheckpointReport &checkpoint) {
  char errors[96];
  std::snprintf(errors, sizeof(errors), "maximumAbsoluteError=%.6g mismatches=%llu",
                checkpoint.comparison.maximumAbsoluteError,
                (unsigned long long)checkpoint.comparison.mismatches);
  return "checkpoint=" + std::to_string(checkpoint.index) +
         " operation=" + reportValue(checkpoint.operation) +
         " result=" + std::to_string(checkpoint.result) + " " + checkpoint.detail + " " +
         errors + " " + checkpoint.comparison.keys(false);
}

std::string ipu::checkSummaryLine(const CheckReport &report) {
  char errors[128];
  std::snprintf(errors, sizeof(errors),
                "maximumAbsoluteError=%.6g mismatches=%llu numericalTest=%s ",
                report.total.maximumAbsoluteError,
                (unsigned long long)report.total.mismatches,
                report.passed() ? "PASS" : "FAIL");
  std::string line = "referencePrecision=f32 " + std::string(errors) + report.total.keys(true);
  if (report.sampleLimit)
    line += " diagnosticCheckpoints=" + std::to_string(report.diagnosticCheckpoints) +
            " sampleLimit=" + std::to_string(report.sampleLimit);
  line += " imagesChecked=" + std::to_string(report.images);
  if (report.images > 1)
    line += " worstImage=" + std::to_string(report.worstImage);
  return line;
}
