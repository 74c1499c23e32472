//===- Expect.h - Results against a framework's own arrays -------*- C++ -*-===//
//
// `ipu-run --expect DIR`: the compiled function's results, as the device
// streamed them out, against arrays a framework computed for the same
// inputs (PyTorch's eager outputs, as python -m ipu_export writes them),
// element by element within a tolerance per element type. Unlike --check,
// which recomputes each op from our own reading of the IR, this compares
// with an independent implementation of the model.
//
//===----------------------------------------------------------------------===//

#ifndef IPU_REFERENCE_EXPECT_H
#define IPU_REFERENCE_EXPECT_H

#include "IPU/Package/Package.h"
#include "IPU/Runtime/Simulator.h"

#include <optional>
#include <string>
#include <vector>

namespace ipu {

/// |device - expected| <= absolute + relative * |expected| per element.
struct ExpectTolerance {
  double relative = 0, absolute = 0;
};

/// The tolerance a result of `type` is held to against a framework that
/// accumulates in another order (see the definition for the figures).
ExpectTolerance expectTolerance(ElementType type);

struct ExpectReport {
  /// One "expect result=N ..." line per result, in index order.
  std::vector<std::string> lines;
  uint64_t elementsCompared = 0, mismatches = 0;
  double maximumAbsoluteError = 0;
  bool passed() const { return mismatches == 0 && elementsCompared > 0; }
};

/// A result as some implementation computed it: its type, its shape as the
/// function declares it, and its elements in row-major order.
struct ExpectedResult {
  ElementType type;
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes;
};

/// Compares result N of `results` with DIR/resultN.npy (npyFileName), which
/// must hold its shape and type, each element within expectTolerance of its
/// type. A missing file, another shape or dtype is an error naming it.
std::optional<std::string> compareExpectedArrays(const std::string &dir,
                                                 const std::vector<ExpectedResult> &results,
                                                 ExpectReport &report);

/// Compares every result of the compiled function (Package::results) with
/// DIR/resultN.npy (npyFileName), which must hold the result's declared
/// shape and type. A missing file, another shape or dtype, or a package
/// that does not say which streams are results, is an error naming it.
std::optional<std::string> compareExpected(const std::string &dir, const Package &package,
                                           const SimulationResult &result,
                                           ExpectReport &report);

/// The closing "expected=DIR ... numericalTest=PASS|FAIL" line.
std::string expectSummaryLine(const std::string &dir, const ExpectReport &report);

} // namespace ipu

#endif // IPU_REFERENCE_EXPECT_H
