//===- Reference.h - The host reference that --check holds runs to -*- C++ -*-===//
//
// `ipu-run --check` evaluates every reference op of a package on the host,
// from the inputs as given (OpenBLAS sgemm in f32 for a matmul, the body
// op by op, exact and rounded to its type, for an elementwise op, the
// elements moved for a permute), and compares each result element with
// what the device streamed out:
//
//   |device - reference| <= allowance[e] + rtol * |reference|
//
// Each element's allowance comes from the magnitude of its own operands:
// - a matmul: kSummationLambda * 2^-24 * sqrt(K) * sum_k |a_ik| |b_kj|,
//   the probabilistic bound of Higham and Mary ("A new approach to
//   probabilistic rounding error analysis", SIAM J. Sci. Comput. 2019) on
//   the f32 summation error of its own dot product, for either side's
//   order; with f16 partials, also 8 * 2^-11 * sqrt(sum_r s_r^2) over the
//   partial sums the device rounds (docs/Numerics.md); rtol is one ulp of
//   the result type;
// - an elementwise op: kBoundSafety times the running forward error bound
//   of its body on its own operands (evaluateBodyWithBound); a row sum
//   adds its own row's bounds and the same probabilistic summation bound
//   on its own row's sum of magnitudes (a max, the largest of its row's);
// - a permute: nothing (exact).
// Non-finite values only match themselves.
//
//===----------------------------------------------------------------------===//

#ifndef IPU_REFERENCE_REFERENCE_H
#define IPU_REFERENCE_REFERENCE_H

#include "IPU/Package/Package.h"
#include "IPU/Runtime/Simulator.h"
#include "IPU/Target/TargetModel.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ipu {

/// Higham and Mary's lambda for the matmul allowance: 2, for the two
/// sides' independent summation orders. An assumption within their bound's
/// family (lambda of order 1 to 10); the e2e tests at every shape pass
/// with it, and PropertyTest cases show a wrong element of a small dot
/// product among large ones is caught.
constexpr double kSummationLambda = 2.0;
/// The elementwise bound times this: slack for the model's own constants
/// (kTranscendentalUlps).
constexpr double kBoundSafety = 2.0;
/// f16 unit roundoff, and how many of its rounding-noise standard
/// deviations (u |s| / sqrt(3) per rounding) the check allows for f16
/// partials: 8 u is about 14 sigma.
constexpr double kHalfRoundoff = 0x1p-11;
constexpr double kRoundingAllowance = 8.0;

/// A tensor's elements decoded to f32.
std::vector<float> decodeTensor(const HostTensor &tensor);

/// One evaluated reference op: its value already rounded to the op's type,
/// its shape, and what each element may differ by.
struct Reference {
  uint32_t result = ReferenceOp::kNoResult;
  std::vector<int64_t> shape;
  std::vector<float> values;
  /// Per element (empty: 0 each), the absolute error allowed beside
  /// rtol * |value|.
  std::vector<float> allowance;
  double rtol = 0;
};

/// Evaluates reference op `index`. Its operands are inputs as given, or
/// earlier ops' values (`done`): the device's own value (`outputs`) when
/// that op is a checkpoint (streamed out), so that each op is checked on
/// exactly the operands the device used; the reference value otherwise.
/// `generated[i]` says whether argument i is streamed in.
std::optional<std::string>
evaluateReference(const Package &package, const TargetModel &target, size_t index,
                  const std::vector<HostTensor> &inputs,
                  const std::vector<bool> &generated,
                  const std::vector<Reference> &done,
                  const std::vector<HostTensor> &outputs, Reference &reference);

/// What comparing results found. The worst element is the one furthest past
/// its allowed error, or closest to it when all pass (largest error /
/// allowed, the first on ties), so that a FAIL names a failing element.
struct Comparison {
  double maximumAbsoluteError = 0;
  uint64_t mismatches = 0;
  uint64_t elementsCompared = 0;
  double worstRatio = -1; ///< error / allowed; < 0 while nothing compared.
  size_t worstCheckpoint = 0;
  std::string worstElement; ///< "[row,col]" (one index per dimension).
  double worstDevice = 0, worstReference = 0, worstAllowed = 0;

  /// Folds a checkpoint's comparison into the total.
  void add(const Comparison &checkpoint, size_t index);

  /// The report keys after the existing ones: elementsCompared, then the
  /// worst element (for a total, with its checkpoint) and its values;
  /// worstElement=none when nothing was compared.
  std::string keys(bool total) const;
};

/// Compares `reference` (when it is a result) with the device's output of
/// its result index, every element or `samples` evenly spaced ones (the
/// first and the last among them), into `comparison`.
std::optional<std::string> compareWithReference(const Reference &reference,
                                                const std::vector<HostTensor> &outputs,
                                                Comparison &comparison,
                                                uint64_t samples = 0);

} // namespace ipu

#endif // IPU_REFERENCE_REFERENCE_H
