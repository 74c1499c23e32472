//===- Check.h - A package's results against its host reference -*- C++ -*-===//
//
// `ipu-run --check` as a library: every reference op of a package is
// evaluated on the host (Reference.h) and each op with a result, or that a
// later op reads (a diagnostic checkpoint), is compared with what the
// device streamed out. A PASS needs no mismatch and at least one element
// compared: nothing compared is no evidence.
//
//===----------------------------------------------------------------------===//

#ifndef IPU_REFERENCE_CHECK_H
#define IPU_REFERENCE_CHECK_H

#include "IPU/Reference/Reference.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace ipu {

/// One reference op's value compared with the device's.
struct CheckpointReport {
  size_t index = 0;
  std::string operation; ///< The reference op's kind ("matmul", ...).
  uint32_t result = ReferenceOp::kNoResult;
  /// What the comparison assumed: "kernel=NAME" for an elementwise op,
  /// "exact" for a permute, "partials=TYPE" for a matmul.
  std::string detail;
  Comparison comparison;
};

struct CheckReport {
  /// The ops whose value the device streamed out, in program order.
  std::vector<CheckpointReport> checkpoints;
  Comparison total;
  /// Results that a later op also reads (compared with `sampleLimit`
  /// elements when one is given).
  uint64_t diagnosticCheckpoints = 0;
  uint64_t sampleLimit = 0;
  /// The images of a batch checked, each on its own inputs and results, and
  /// the one of the worst element.
  uint32_t images = 1, worstImage = 0;
  /// Folds image `image`'s report (of the same package) into this one.
  void addImage(const CheckReport &other, uint32_t image);
  bool passed() const { return total.mismatches == 0 && total.elementsCompared > 0; }
};

/// Why `--check` cannot vouch for `package`, if it cannot: it carries no
/// reference op, or an output stream that no reference op produces (named).
/// Cheap: callers ask before they simulate.
std::optional<std::string> checkableByReference(const Package &package);

/// Evaluates every reference op of `package` on `inputs` (as given, before
/// any corruption) and compares each result with `outputs`: every element
/// of a final result, `checkpointSamples` evenly spaced elements (0: all) of
/// a result a later op reads. Refuses what checkableByReference refuses.
/// `onCheckpoint`, if given, sees each checkpoint as soon as it is compared
/// (a long check reports as it goes).
std::optional<std::string>
checkPackage(const Package &package, const TargetModel &target,
             const std::vector<HostTensor> &inputs, const std::vector<bool> &generated,
             const std::vector<HostTensor> &outputs, uint64_t checkpointSamples,
             CheckReport &report,
             const std::function<void(const CheckpointReport &)> &onCheckpoint = nullptr);

/// "checkpoint=I operation=OP result=R DETAIL maximumAbsoluteError=...".
std::string checkpointLine(const CheckpointReport &checkpoint);

/// The closing "referencePrecision=f32 ... numericalTest=PASS|FAIL ...
/// imagesChecked=N" line (and worstImage=I for a batch).
std::string checkSummaryLine(const CheckReport &report);

} // namespace ipu

#endif // IPU_REFERENCE_CHECK_H
