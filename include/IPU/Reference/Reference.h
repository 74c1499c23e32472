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
// Each element's allowance comes from the magnitude of its own operands,
// and holds for every input (a deterministic bound, not an estimate):
// - a matmul: the host adds OpenBLAS sgemm's chunks of k in f64 (within
//   gamma_chunk M of the exact product, M = sum_k |a_ik| |b_kj|); the
//   device adds in f32 over contiguous ranges of k, each addition rounding
//   by at most 2^-24 of a partial sum no larger than min(2 max_i |S_i|, M)
//   (S_i the prefix sums, at the chunk boundaries plus a chunk's
//   magnitudes): (K - 1) 2^-24 min(2 max|S|, M), which is gamma_K M on
//   constant rows and about sqrt(K) times less on random ones (running
//   error analysis, Higham, "Accuracy and Stability of Numerical
//   Algorithms", 3.1); with f16 partials, also 2^-11 sum_r |s_r| /
//   (1 - R 2^-11) over the R partial sums s_r the device rounds to f16
//   (docs/Numerics.md); rtol is one ulp of the result type;
// - an elementwise op: kBoundSafety times the running forward error bound
//   of its body on its own operands (evaluateBodyWithBound); a row sum,
//   which the host adds in f64 and the device in f32, adds its own row's
//   bounds and the device's rounding of its partial sums, bounded the same
//   way from the row's own prefix sums, and the host's rounding of its sum
//   to f32; a row max takes the largest of its row's bounds;
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

/// The elementwise bound times this: slack for the model's own constants
/// (kTranscendentalUlps). The summation bounds need none.
constexpr double kBoundSafety = 2.0;
/// f16 unit roundoff: where the device rounds f16 partials.
constexpr double kHalfRoundoff = 0x1p-11;

/// gamma_n = n u / (1 - n u): |computed - exact| <= gamma_n sum |x_i| for a
/// sum of n terms (or a dot product of n products) in precision u, in any
/// order. +inf once n u >= 1, where the bound says nothing.
double summationGamma(uint64_t terms, double unitRoundoff);

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

/// One element of a result against the value it should have: within
/// `allowed` when both are finite; a non-finite expected value matches
/// only itself (NaN any NaN, +inf only +inf, -inf only -inf), and a
/// non-finite device value only that. The one rule of every comparison
/// path: `--check` (compareWithReference), `--expect` and ipu-mlir-run.
struct ElementMatch {
  bool pass = false;
  /// |device - expected|: 0 for a match of non-finite values, +inf for a
  /// mismatch of them.
  double error = 0;
  /// error / allowed, how far past (> 1) or within its allowance: 0 for
  /// no error, +inf for a mismatch whose ratio would not say so.
  double ratio = 0;
};
ElementMatch matchElement(double device, double expected, double allowed);

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
