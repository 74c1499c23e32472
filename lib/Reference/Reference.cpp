//===- Reference.cpp - The host reference and its per-element tolerances --===//

#include "IPU/Reference/Reference.h"

#include "IPU/Runtime/HostData.h"
#include "IPU/Device/Elementwise.h"
#include "IPU/Layout/BlockLayout.h"
#include "IPU/Support/ElementType.h"

#include <cblas.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdio>

using namespace ipu;

std::vector<float> ipu::decodeTensor(const HostTensor &tensor) {
  unsigned bytesPerElement = elementBytes(tensor.type);
  std::vector<float> values(tensor.bytes.size() / bytesPerElement);
  for (size_t e = 0; e < values.size(); ++e)
    values[e] = loadElement(tensor.type, &tensor.bytes[e * bytesPerElement]);
  return values;
}

namespace {

/// sum_r |s_r| per element of an [m x k] x [k x n] product (both
/// row-major, untransposed), written to `magnitude` (m x n); s_r the
/// partial sum the device rounds to f16 after its r-th AMP pass: k is summed
/// in `blocks` balanced blocks, each from zero, a pass every `grain` terms
/// of its block.
void roundingMagnitude(const float *lhs, const float *rhs, int64_t m, int64_t k,
                       int64_t n, int64_t grain, int64_t blocks, float *magnitude) {
  std::vector<float> partial(size_t(m) * size_t(n), 0.0f);
  std::vector<double> sums(partial.size(), 0.0);
  for (int64_t p = 0; p < blocks; ++p) {
    int64_t begin = p * (k / blocks) + std::min(p, k % blocks);
    int64_t end = begin + k / blocks + (p < k % blocks ? 1 : 0);
    std::fill(partial.begin(), partial.end(), 0.0f);
    for (int64_t k0 = begin; k0 < end; k0 += grain) {
      int64_t depth = std::min(grain, end - k0);
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, int(m), int(n),
                  int(depth), 1.0f, lhs + k0, int(k),
                  rhs + size_t(k0) * size_t(n), int(n), 1.0f, partial.data(),
                  int(n));
      for (size_t e = 0; e < partial.size(); ++e)
        sums[e] += std::fabs(double(partial[e]));
    }
  }
  for (size_t e = 0; e < partial.size(); ++e)
    magnitude[e] = float(sums[e]);
}

/// `value` as an f32 no smaller: an allowance rounded down could fall short
/// of the bound it stores.
float roundedUp(double value) {
  float rounded = float(value);
  return double(rounded) < value ? std::nextafter(rounded, HUGE_VALF) : rounded;
}

/// The [cols x rows] transpose of a row-major [rows x cols] matrix.
void transposeInto(const float *matrix, int64_t rows, int64_t cols,
                   std::vector<float> &transposed) {
  transposed.resize(size_t(rows) * size_t(cols));
  for (int64_t x = 0; x < rows; ++x)
    for (int64_t y = 0; y < cols; ++y)
      transposed[size_t(y) * size_t(rows) + size_t(x)] =
          matrix[size_t(x) * size_t(cols) + size_t(y)];
}

/// "2x8x16", for messages.
std::string shapeText(const std::vector<int64_t> &shape) {
  std::string text;
  for (size_t d = 0; d < shape.size(); ++d)
    text += (d ? "x" : "") + std::to_string(shape[d]);
  return text;
}

/// One ulp of the result type, relative (twice its unit roundoff): device
/// and host may round the same f32 value on opposite sides of a midpoint.
double resultRtol(ElementType type) { return 2 * unitRoundoff(type); }

/// What a kind's evaluator works on: the op, its operands decoded to f32
/// with their shapes, and the type the device held them in.
struct Evaluation {
  const Package &package;
  const TargetModel &target;
  const ReferenceOp &op;
  const std::string &what; ///< "reference op 'KIND'", for errors.
  std::vector<std::vector<float>> operand;
  std::vector<std::vector<int64_t>> shape;
  ElementType inType = ElementType::F32;
};

/// An "elementwise" reference op: the kernel's body on every element of
/// its first full input's shape, each op exact and rounded to its type.
std::optional<std::string> evaluateElementwise(const Evaluation &evaluation,
                                               Reference &reference) {
  const Package &package = evaluation.package;
  const ReferenceOp &op = evaluation.op;
  const std::string &what = evaluation.what;
  const std::vector<std::vector<float>> &operand = evaluation.operand;
  const std::vector<std::vector<int64_t>> &shape = evaluation.shape;
  if (op.kernel >= package.kernels.size())
    return what + ": kernel " + std::to_string(op.kernel) + " does not exist";
  const ElementwiseBody &body = package.kernels[op.kernel]->body();
  if (body.inputs.size() != operand.size())
    return what + ": the kernel takes " + std::to_string(body.inputs.size()) +
           " inputs";
  std::vector<int64_t> expected;
  for (size_t a = 0; a < operand.size() && expected.empty(); ++a)
    if (body.inputs[a].broadcast == Broadcast::Full)
      expected = shape[a];
  if (expected.empty())
    return what + ": no full input gives the value a shape";
  uint64_t elements = 1;
  for (int64_t extent : expected)
    elements *= uint64_t(extent);
  const uint64_t cols = uint64_t(expected.back());
  const uint64_t rows = elements / cols;
  for (size_t a = 0; a < operand.size(); ++a) {
    uint64_t need = 1;
    switch (body.inputs[a].broadcast) {
    case Broadcast::Full: need = elements; break;
    case Broadcast::Row: need = cols; break;
    case Broadcast::Scalar: need = 1; break;
    case Broadcast::Column: need = rows; break;
    }
    if (operand[a].size() != need)
      return what + ": input " + std::to_string(a) + " holds " +
             std::to_string(operand[a].size()) + " elements, expected " +
             std::to_string(need);
  }
  // A reduction's value has one element per row of the iteration shape.
  const bool reduces = body.reduction != RowReduction::None;
  if (reduces)
    expected.back() = 1;
  if (op.result != ReferenceOp::kNoResult) {
    const HostStream *out = resultStream(package, op.result);
    if (!out || !holdsValueOf(out->shape, expected))
      return what + ": result " + std::to_string(op.result) +
             " is not a streamed " + shapeText(expected) + " tensor";
  }
  std::vector<float> element(operand.size());
  double bound = 0; ///< Of the last valueAt.
  auto valueAt = [&](uint64_t e) {
    for (size_t a = 0; a < operand.size(); ++a) {
      switch (body.inputs[a].broadcast) {
      case Broadcast::Full: element[a] = operand[a][e]; break;
      case Broadcast::Row: element[a] = operand[a][e % cols]; break;
      case Broadcast::Scalar: element[a] = operand[a][0]; break;
      case Broadcast::Column: element[a] = operand[a][e / cols]; break;
      }
    }
    return evaluateBodyWithBound(body, element.data(), &bound);
  };
  std::vector<float> values(reduces ? rows : elements);
  std::vector<float> allowance(values.size());
  if (reduces) {
    // Each row on its own: the bounds of its values, and for a sum what
    // adding them may add. The host adds in f64 from `init` and rounds to
    // f32 once. The device adds in f32 in column order over contiguous
    // ranges (a split row's parts, then the parts), on values each within
    // its bound of the host's: each of its n + 1 additions yields init or
    // nothing plus a contiguous range's sum, T_i - T_j, at most
    // |init| + 2 max |T| + B and never more than M + B, and rounds by at
    // most 2^-24 of that (running error analysis, as for a matmul). So
    //   |device - host| <= B + (n + 1) 2^-24 partial / (1 - (n + 1) 2^-24)
    //                      + gamma_(n+1)(2^-53) M + 2^-24 M + 2^-149
    // with M the row's |init| + sum of magnitudes, T its prefix sums and B
    // its bounds (times kBoundSafety): the last three terms are the host's
    // f64 sum, its rounding to f32 and its rounding below the normal range.
    const double init = std::isfinite(body.init) ? std::fabs(body.init) : 0.0;
    const double additions = double(cols + 1);
    const double deviceShrink = 1 - additions * 0x1p-24;
    const double hostGamma = summationGamma(cols + 1, 0x1p-53);
    for (uint64_t r = 0; r < rows; ++r) {
      double magnitudeSum = init, boundSum = 0, boundMax = 0, prefix = 0, prefixMax = 0;
      values[r] = reduceRow(body, int64_t(cols), [&](int64_t c) {
        double value = valueAt(r * cols + uint64_t(c));
        magnitudeSum += std::fabs(value);
        boundSum += bound;
        boundMax = std::max(boundMax, bound);
        prefix += value;
        prefixMax = std::max(prefixMax, std::fabs(prefix));
        return value;
      });
      if (body.reduction == RowReduction::Add) {
        const double terms = kBoundSafety * boundSum;
        // The f64 prefixes are within hostGamma M of the exact ones.
        const double partial =
            std::min(init + 2 * (prefixMax + hostGamma * magnitudeSum), magnitudeSum) + terms;
        const double device =
            deviceShrink > 0 ? additions * 0x1p-24 * partial / deviceShrink : HUGE_VAL;
        allowance[r] = roundedUp(terms + device + (hostGamma + 0x1p-24) * magnitudeSum +
                                 smallestSubnormal(ElementType::F32));
      } else {
        allowance[r] = roundedUp(kBoundSafety * boundMax);
      }
    }
  } else {
    for (uint64_t e = 0; e < elements; ++e) {
      values[e] = valueAt(e);
      allowance[e] = roundedUp(kBoundSafety * bound);
    }
  }
  reference.result = op.result;
  reference.shape = std::move(expected);
  reference.values = std::move(values);
  reference.allowance = std::move(allowance);
  reference.rtol = 0; // The bound holds every rounding.
  return std::nullopt;
}

/// A "permute" reference op: the operand's elements moved, exactly (the
/// validator checked the view, the permutation and the element counts).
std::optional<std::string> evaluatePermute(const Evaluation &evaluation,
                                           Reference &reference) {
  const ReferenceOp &op = evaluation.op;
  const std::string &what = evaluation.what;
  const std::vector<float> &operand = evaluation.operand[0];
  const Permutation permutation{op.view, op.permutation, op.offsets, op.sizes};
  const PermutedIndex sourceOf(permutation);
  uint64_t elements = 1;
  for (int64_t extent : permutation.resultExtents())
    elements *= uint64_t(extent);
  std::vector<float> values(elements);
  for (size_t flat = 0; flat < values.size(); ++flat) {
    const int64_t index = sourceOf(int64_t(flat));
    if (index < 0 || size_t(index) >= operand.size())
      return what + ": element " + std::to_string(flat) + " reads outside its operand";
    values[flat] = operand[size_t(index)];
  }
  reference.result = op.result;
  reference.shape = op.shape;
  reference.values = std::move(values);
  reference.allowance.clear();
  reference.rtol = 0; // Moved, not computed: exact.
  return std::nullopt;
}

/// A "streamed" reference op: the device's own value of its output stream,
/// which its readers take as the device streamed it out (the validator
/// checked that the stream exists). Nothing computes it: nothing checks it.
std::optional<std::string> evaluateStreamed(const Evaluation &evaluation,
                                            Reference &reference) {
  const ReferenceOp &op = evaluation.op;
  for (const HostStream &stream : evaluation.package.streams)
    if (!stream.toDevice && stream.index == op.result) {
      reference.result = op.result;
      reference.shape = stream.shape;
      reference.values.clear();
      reference.allowance.clear();
      reference.rtol = 0;
      return std::nullopt;
    }
  return evaluation.what + ": result " + std::to_string(op.result) +
         " is not an output stream";
}

/// A "matmul" reference op: OpenBLAS sgemm in f32, rounded to the op's
/// type, each element allowed the summation bound of its own dot product
/// (and, with f16 partials, the roundings of the device's partial sums).
std::optional<std::string> evaluateMatmul(const Evaluation &evaluation,
                                          Reference &reference) {
  const Package &package = evaluation.package;
  const TargetModel &target = evaluation.target;
  const ReferenceOp &op = evaluation.op;
  const std::string &what = evaluation.what;
  const std::vector<std::vector<float>> &operand = evaluation.operand;
  const std::vector<std::vector<int64_t>> &shape = evaluation.shape;
  const ElementType inType = evaluation.inType;
  // The operand ranks say which product: a shared rhs [K, N], or one
  // matrix per batch of lhs (matmulShape, as the validator read it).
  MatmulShape product;
  if (auto error = matmulShape(op, shape[0], shape[1], product))
    return what + ": shapes " + shapeText(shape[0]) + " x " +
           shapeText(shape[1]) + " " + *error;
  const int64_t batches = product.batches, m = product.m, k = product.k,
                n = product.n;
  if (op.inputScale != 0 && !isF8(inType))
    return what + ": input scale " + std::to_string(op.inputScale) +
           " on " + std::string(elementTypeName(inType)) +
           " operands; only f8 operands are scaled";
  const uint64_t lhsMatrix = uint64_t(m) * uint64_t(k);
  const uint64_t rhsMatrix = uint64_t(k) * uint64_t(n);
  if (operand[0].size() != uint64_t(batches) * lhsMatrix ||
      operand[1].size() !=
          (product.batchedRhs ? uint64_t(batches) : 1) * rhsMatrix)
    return what + ": operands hold " + std::to_string(operand[0].size()) +
           " and " + std::to_string(operand[1].size()) +
           " elements, not the elements of shapes " + shapeText(shape[0]) +
           " and " + shapeText(shape[1]);
  std::vector<int64_t> expected = product.result;
  if (op.result != ReferenceOp::kNoResult) {
    const HostStream *out = resultStream(package, op.result);
    if (!out)
      return what + ": result " + std::to_string(op.result) +
             " is not streamed to the host";
    if (!holdsValueOf(out->shape, expected))
      return what + ": result stream '" + out->name + "' is " +
             shapeText(out->shape) + ", but " + shapeText(shape[0]) + " x " +
             shapeText(shape[1]) + " is " + shapeText(expected);
  }
  // lhs [..., M, K] x a shared rhs [K, N] folds the leading dimensions into
  // M: one product, as before batches. Otherwise one product per batch
  // (each lhs matrix transposed on its own).
  const bool fold = !product.batchedRhs && !op.transposeLhs;
  const int64_t products = fold ? 1 : batches;
  const int64_t rows = fold ? batches * m : m;
  // BLAS takes int dimensions.
  if (rows > INT32_MAX || k > INT32_MAX || n > INT32_MAX)
    return what + ": dimensions too large for BLAS";

  const CBLAS_TRANSPOSE transLhs = op.transposeLhs ? CblasTrans : CblasNoTrans;
  const CBLAS_TRANSPOSE transRhs = op.transposeRhs ? CblasTrans : CblasNoTrans;
  const uint64_t outMatrix = uint64_t(rows) * uint64_t(n);
  // The AMP's input scale multiplies every product by 2^e: exactly, as a
  // scaling of rhs's f8 values in f32.
  std::vector<float> scaledRhs;
  if (op.inputScale != 0) {
    scaledRhs.resize(operand[1].size());
    for (size_t e = 0; e < scaledRhs.size(); ++e)
      scaledRhs[e] = std::ldexp(operand[1][e], op.inputScale);
  }
  const float *rhsValues = op.inputScale != 0 ? scaledRhs.data() : operand[1].data();
  auto lhsOf = [&](int64_t p) { return operand[0].data() + p * lhsMatrix; };
  auto rhsOf = [&](int64_t p) {
    return rhsValues + (product.batchedRhs ? p * rhsMatrix : 0);
  };
  // The product in chunks of k, each an sgemm, the chunks added in f64:
  // the host's value is then within gamma_chunk M of the exact product, and
  // each element's exact prefix sums at the chunk boundaries bound the
  // partial sums the device forms on its way (below).
  const int64_t chunk =
      std::min(std::max<int64_t>(64, int64_t(std::ceil(std::sqrt(double(k))))),
               std::max<int64_t>(k, 1));
  const size_t total = size_t(products) * outMatrix;
  std::vector<double> sum(total, 0.0), magnitude(total, 0.0), prefixMax(total, 0.0);
  if (rows > 0 && n > 0 && k > 0) {
    std::vector<float> absLhs(operand[0].size()), absRhs(operand[1].size());
    std::transform(operand[0].begin(), operand[0].end(), absLhs.begin(),
                   [](float x) { return std::fabs(x); });
    std::transform(rhsValues, rhsValues + operand[1].size(), absRhs.begin(),
                   [](float x) { return std::fabs(x); });
    const int lda = op.transposeLhs ? int(m) : int(k);
    const int ldb = op.transposeRhs ? int(k) : int(n);
    // Where rows k0.. of k start in an operand (given transposed or not).
    auto lhsAt = [&](const float *lhs, int64_t k0) {
      return op.transposeLhs ? lhs + k0 * m : lhs + k0;
    };
    auto rhsAt = [&](const float *rhs, int64_t k0) {
      return op.transposeRhs ? rhs + k0 : rhs + k0 * n;
    };
    std::vector<float> part(outMatrix), partMagnitude(outMatrix);
    for (int64_t p = 0; p < products; ++p) {
      const float *absLhsOf = absLhs.data() + p * lhsMatrix;
      const float *absRhsOf = absRhs.data() + (product.batchedRhs ? p * rhsMatrix : 0);
      for (int64_t k0 = 0; k0 < k; k0 += chunk) {
        const int depth = int(std::min(chunk, k - k0));
        cblas_sgemm(CblasRowMajor, transLhs, transRhs, int(rows), int(n), depth, 1.0f,
                    lhsAt(lhsOf(p), k0), lda, rhsAt(rhsOf(p), k0), ldb, 0.0f, part.data(),
                    int(n));
        cblas_sgemm(CblasRowMajor, transLhs, transRhs, int(rows), int(n), depth, 1.0f,
                    lhsAt(absLhsOf, k0), lda, rhsAt(absRhsOf, k0), ldb, 0.0f,
                    partMagnitude.data(), int(n));
        for (size_t e = 0; e < outMatrix; ++e) {
          const size_t at = size_t(p) * outMatrix + e;
          // Every prefix sum inside the chunk is within the chunk's
          // magnitudes of the one before it.
          prefixMax[at] = std::max(prefixMax[at], std::fabs(sum[at]) + partMagnitude[e]);
          sum[at] += part[e];
          magnitude[at] += partMagnitude[e];
        }
      }
    }
  }
  std::vector<float> c(total);
  // Round to the op's type, as the device stores the value.
  uint8_t element[4];
  for (size_t at = 0; at < total; ++at) {
    storeElement(op.type, float(sum[at]), element);
    c[at] = loadElement(op.type, element);
  }
  reference.result = op.result;
  reference.shape = std::move(expected);
  reference.values = std::move(c);
  reference.rtol = resultRtol(op.type);
  // Each element's allowance, a bound for every input. M = sum_k |a_ik b_kj|
  // and each chunk's f32 sums of positive terms fall short of theirs by at
  // most gamma_chunk (1 + 2 gamma_chunk makes up for it).
  // - The host: its chunks are within gamma_chunk of theirs, their f64 sum
  //   within gamma_(K/chunk) of 2^-53.
  // - The device adds each element's products in k order over contiguous
  //   ranges (its blocks, passes and serial splits, then the blocks'
  //   partials in order): each of its K - 1 additions yields the sum of a
  //   contiguous range, S_i - S_j, at most 2 max |S| and never more than
  //   M; each rounds by at most 2^-24 of its value, and so does each
  //   product (running error analysis, Higham, "Accuracy and Stability of
  //   Numerical Algorithms", 3.1). Rounded values move later sums by the
  //   error so far: (1 - K 2^-24) takes that in. On constant rows this is
  //   gamma_K M, on random ones about sqrt(K) times less.
  constexpr double u = 0x1p-24;
  const double chunkSlack = 1 + 2 * summationGamma(uint64_t(chunk), u);
  const double hostGamma = summationGamma(uint64_t(chunk), u) +
                           summationGamma(uint64_t(k / chunk + 2), 0x1p-53);
  const double deviceShrink = 1 - double(k) * u;
  const double floor = smallestSubnormal(op.type);
  std::vector<double> bound(total);
  for (size_t at = 0; at < total; ++at) {
    const double all = magnitude[at] * chunkSlack;
    const double host = hostGamma * all;
    const double largestPrefix = prefixMax[at] * chunkSlack + host;
    const double partial = std::min(2 * largestPrefix, all);
    const double device =
        deviceShrink > 0 ? (u * double(std::max<int64_t>(k - 1, 0)) * partial + u * all) /
                               deviceShrink
                         : HUGE_VAL;
    bound[at] = device + host + floor;
  }
  if (op.partials == ElementType::F16 && rows > 0 && n > 0 && k > 0) {
    // Each f16 rounding of a running partial s_r errs by at most
    // 2^-11 |s_r| of the device's s_r, which earlier errors of its block have
    // moved: over R passes of a block, the errors E <= 2^-11 (sum_r |s_r| +
    // R E) + (the f32 sums' errors), so E <= that / (1 - R 2^-11).
    const int64_t blocks = std::clamp<int64_t>(op.innerBlocks, 1, k);
    const int64_t grain = std::max<int64_t>(target.ampGrainK(inType), 1);
    const int64_t passes = ((k + blocks - 1) / blocks + grain - 1) / grain;
    const double growth = 1 - double(passes) * kHalfRoundoff;
    std::vector<float> rounded(reference.values.size());
    std::vector<float> lhsT, rhsT;
    // The rounding points follow the untransposed product.
    for (int64_t p = 0; p < products; ++p) {
      const float *lhs = lhsOf(p), *rhs = rhsOf(p);
      if (op.transposeLhs) {
        transposeInto(lhs, k, m, lhsT);
        lhs = lhsT.data();
      }
      if (op.transposeRhs) {
        if (p == 0 || product.batchedRhs)
          transposeInto(rhs, n, k, rhsT);
        rhs = rhsT.data();
      }
      roundingMagnitude(lhs, rhs, rows, k, n, grain, blocks,
                        rounded.data() + p * outMatrix);
    }
    for (size_t e = 0; e < rounded.size(); ++e)
      bound[e] = growth > 0 ? (bound[e] + kHalfRoundoff * rounded[e]) / growth : HUGE_VAL;
  }
  reference.allowance.assign(total, 0.0f);
  for (size_t e = 0; e < bound.size(); ++e)
    reference.allowance[e] = roundedUp(bound[e]);
  return std::nullopt;
}

} // namespace

/// Each operand is an input as given, or an earlier op's value: the
/// device's own value when that op is a checkpoint (streamed out), so that
/// each op is checked on exactly the operands the device used; the
/// reference value otherwise. Then the kind's evaluator runs.

std::optional<std::string>
ipu::evaluateReference(const Package &package, const TargetModel &target,
                  size_t index, const std::vector<HostTensor> &inputs,
                  const std::vector<bool> &generated,
                  const std::vector<Reference> &done,
                  const std::vector<HostTensor> &outputs, Reference &reference) {
  const ReferenceOp &op = package.reference[index];
  std::string what = "reference op '" + std::string(referenceKindName(op.kind)) + "'";
  const size_t arity =
      referenceKindArity(op.kind) ? referenceKindArity(op.kind) : op.arguments.size();
  if (op.arguments.size() != arity)
    return what + " expects " + std::to_string(arity) + " arguments, has " +
           std::to_string(op.arguments.size());
  std::vector<std::vector<float>> operand(arity);
  std::vector<std::vector<int64_t>> shape(arity);
  ElementType inType = ElementType::F32; ///< Of the device's operands.
  for (unsigned a = 0; a < arity; ++a) {
    uint32_t argument = op.arguments[a];
    if (argument >= ReferenceOp::kReferenceValue) {
      uint32_t producer = argument - ReferenceOp::kReferenceValue;
      if (producer >= done.size())
        return what + ": operand " + std::to_string(a) +
               " names a later reference op";
      // A checkpoint's reference value is released once compared: its
      // consumers read what the device streamed out (validated to exist).
      uint32_t checkpoint = done[producer].result;
      if (checkpoint == ReferenceOp::kNoResult)
        operand[a] = done[producer].values;
      else if (checkpoint < outputs.size() && !outputs[checkpoint].bytes.empty())
        operand[a] = decodeTensor(outputs[checkpoint]);
      else
        return what + ": operand " + std::to_string(a) + " is result " +
               std::to_string(checkpoint) + ", which was never streamed out";
      shape[a] = done[producer].shape;
      inType = package.reference[producer].type;
      continue;
    }
    if (argument >= generated.size() || !generated[argument])
      return what + ": argument " + std::to_string(argument) +
             " is not streamed to the device";
    operand[a] = decodeTensor(inputs[argument]);
    shape[a] = inputs[argument].shape;
    inType = inputs[argument].type;
  }
  const Evaluation evaluation{package, target, op, what,
                              std::move(operand), std::move(shape), inType};
  // Each kind's evaluator, in ReferenceKinds.def's order.
  static constexpr std::optional<std::string> (*kEvaluators[])(const Evaluation &,
                                                               Reference &) = {
#define IPU_REFERENCE_KIND(Kind, name, arity) evaluate##Kind,
#include "IPU/Package/ReferenceKinds.def"
  };
  if (unsigned(op.kind) >= kReferenceKinds)
    return what + ": unknown kind " + std::to_string(unsigned(op.kind));
  return kEvaluators[unsigned(op.kind)](evaluation, reference);
}

namespace {
/// "[i,j]" for flat index `flat` of a row-major tensor of `shape`.
std::string elementIndex(const std::vector<int64_t> &shape, uint64_t flat) {
  std::vector<uint64_t> index(shape.size(), 0);
  for (size_t d = shape.size(); d-- > 0;) {
    uint64_t extent = std::max<int64_t>(shape[d], 1);
    index[d] = flat % extent;
    flat /= extent;
  }
  std::string text = "[";
  for (size_t d = 0; d < index.size(); ++d)
    text += (d ? "," : "") + std::to_string(index[d]);
  return text + "]";
}
} // namespace

double ipu::summationGamma(uint64_t terms, double unitRoundoff) {
  const double nu = double(terms) * unitRoundoff;
  return nu < 1 ? nu / (1 - nu) : HUGE_VAL;
}

ElementMatch ipu::matchElement(double device, double expected, double allowed) {
  ElementMatch match;
  if (std::isfinite(device) && std::isfinite(expected)) {
    match.error = std::fabs(device - expected);
    // A NaN allowance admits nothing.
    match.pass = match.error <= allowed;
  } else {
    // Never within a distance: an infinite expected value would give any
    // finite device value an infinite allowance.
    match.pass = (std::isnan(device) && std::isnan(expected)) || device == expected;
    match.error = match.pass ? 0.0 : HUGE_VAL;
  }
  // Past its allowance when > 1, infinitely when the quotient would not say
  // so (an infinite or NaN allowance); an exact match (allowed 0) is 0.
  match.ratio = match.error == 0 ? 0.0 : match.error / allowed;
  if (!match.pass && !(match.ratio > 1))
    match.ratio = HUGE_VAL;
  return match;
}

std::optional<std::string> ipu::compareWithReference(
    const Reference &reference, const std::vector<HostTensor> &outputs,
    Comparison &comparison, uint64_t samples) {
  if (reference.result == ReferenceOp::kNoResult)
    return std::nullopt; // An intermediate value: its consumers are checked.
  if (reference.result >= outputs.size())
    return "result " + std::to_string(reference.result) +
           " was never streamed out";
  std::vector<float> device = decodeTensor(outputs[reference.result]);
  if (device.size() != reference.values.size())
    return "result " + std::to_string(reference.result) + " holds " +
           std::to_string(device.size()) + " elements, the reference " +
           std::to_string(reference.values.size());
  size_t worst = 0;
  // All elements, or `samples` evenly spaced ones (the first and the last
  // among them).
  const size_t count = samples && samples < device.size() ? samples : device.size();
  for (size_t s = 0; s < count; ++s) {
    const size_t e =
        count == device.size() || count == 1
            ? s
            : static_cast<size_t>((uint64_t(s) * (device.size() - 1)) / (count - 1));
    const double d = device[e], r = reference.values[e];
    const double allowed =
        (reference.allowance.empty() ? 0.0 : double(reference.allowance[e])) +
        reference.rtol * std::fabs(r);
    const ElementMatch match = matchElement(d, r, allowed);
    comparison.maximumAbsoluteError =
        std::max(comparison.maximumAbsoluteError, match.error);
    comparison.mismatches += match.pass ? 0 : 1;
    const double ratio = match.ratio;
    if (ratio > comparison.worstRatio) {
      comparison.worstRatio = ratio;
      comparison.worstDevice = d;
      comparison.worstReference = r;
      comparison.worstAllowed = allowed;
      worst = e;
    }
  }
  comparison.elementsCompared = count;
  if (comparison.worstRatio >= 0)
    comparison.worstElement = elementIndex(reference.shape, worst);
  return std::nullopt;
}

void Comparison::add(const Comparison &checkpoint, size_t index) {
  maximumAbsoluteError = std::max(maximumAbsoluteError, checkpoint.maximumAbsoluteError);
  mismatches += checkpoint.mismatches;
  elementsCompared += checkpoint.elementsCompared;
  if (checkpoint.worstRatio > worstRatio) {
    worstRatio = checkpoint.worstRatio;
    worstCheckpoint = index;
    worstElement = checkpoint.worstElement;
    worstDevice = checkpoint.worstDevice;
    worstReference = checkpoint.worstReference;
    worstAllowed = checkpoint.worstAllowed;
  }
}

std::string Comparison::keys(bool total) const {
  std::string text = "elementsCompared=" + std::to_string(elementsCompared);
  if (worstRatio < 0)
    return text + " worstElement=none";
  if (total)
    text += " worstCheckpoint=" + std::to_string(worstCheckpoint);
  char values[160];
  std::snprintf(values, sizeof(values),
                " worstDevice=%.9g worstReference=%.9g worstAllowed=%.6g",
                worstDevice, worstReference, worstAllowed);
  return text + " worstElement=" + worstElement + values;
}
