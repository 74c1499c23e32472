//===- MatmulShape.cpp - What a matmul reference op computes --------------===//
//
// Shared by the package validator and ipu-run's host reference, so that a
// package the validator accepts is one the reference can evaluate.
//
//===----------------------------------------------------------------------===//

#include "IPU/Package/Package.h"

#include <algorithm>

using namespace ipu;

bool ipu::holdsValueOf(const std::vector<int64_t> &stream,
                       const std::vector<int64_t> &value) {
  if (stream == value)
    return true;
  if (stream.empty() || value.empty() || stream.back() != value.back())
    return false;
  int64_t streamElements = 1, valueElements = 1;
  for (int64_t extent : stream)
    if (extent < 0 || __builtin_mul_overflow(streamElements, extent, &streamElements))
      return false;
  for (int64_t extent : value)
    if (extent < 0 || __builtin_mul_overflow(valueElements, extent, &valueElements))
      return false;
  return streamElements == valueElements;
}

std::string ipu::matmulForm(const ReferenceOp &op, size_t lhsRank,
                            size_t rhsRank, bool result) {
  std::string lead = lhsRank > 2 ? "...x" : "";
  if (result)
    return lead + "MxN";
  std::string lhs = lead + (op.transposeLhs ? "KxM" : "MxK");
  std::string rhs = (rhsRank > 2 ? "...x" : "") +
                    std::string(op.transposeRhs ? "NxK" : "KxN");
  return lhs + " x " + rhs;
}

std::optional<std::string> ipu::matmulShape(const ReferenceOp &op,
                                            const std::vector<int64_t> &lhs,
                                            const std::vector<int64_t> &rhs,
                                            MatmulShape &shape) {
  shape = MatmulShape();
  if (lhs.size() < 2 || rhs.size() < 2)
    return "are not matrices: a matmul needs operands of rank 2 or more";
  const size_t l = lhs.size(), r = rhs.size();
  // The matrix dimensions, as the product takes them.
  const int64_t m = op.transposeLhs ? lhs[l - 1] : lhs[l - 2];
  const int64_t lhsK = op.transposeLhs ? lhs[l - 2] : lhs[l - 1];
  const int64_t rhsK = op.transposeRhs ? rhs[r - 1] : rhs[r - 2];
  const int64_t n = op.transposeRhs ? rhs[r - 2] : rhs[r - 1];
  // Leading dimensions of rhs mean one matrix per batch of lhs: the same
  // ones, not a broadcast.
  if (r > 2 && (r != l || !std::equal(lhs.begin(), lhs.end() - 2, rhs.begin())))
    return "are not " + matmulForm(op, l, r) +
           ": a batched rhs needs the leading dimensions of lhs";
  if (lhsK != rhsK)
    return "are not " + matmulForm(op, l, r);
  int64_t batches = 1;
  for (size_t d = 0; d + 2 < l; ++d)
    if (lhs[d] < 0 || __builtin_mul_overflow(batches, lhs[d], &batches))
      return "have leading dimensions of more than 2^63 batches";
  shape.batches = batches;
  shape.m = m;
  shape.k = lhsK;
  shape.n = n;
  shape.batchedRhs = r > 2;
  shape.result.assign(lhs.begin(), lhs.end() - 2);
  shape.result.push_back(m);
  shape.result.push_back(n);
  return std::nullopt;
}
