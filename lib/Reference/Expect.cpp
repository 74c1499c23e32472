//===- Expect.cpp - Results against a framework's own arrays --------------===//

#include "IPU/Reference/Expect.h"
#include "IPU/Reference/Reference.h"

#include "IPU/Runtime/HostData.h"
#include "IPU/Runtime/Npy.h"
#include "IPU/Support/Escape.h"

#include <cmath>
#include <cstdio>

using namespace ipu;

ExpectTolerance ipu::expectTolerance(ElementType type) {
  switch (type) {
  case ElementType::F32:
    // PyTorch's CPU kernels and the tiles sum in different orders (K in
    // partials, rows in trees): on the small SigLIP f32 export (2 layers)
    // the largest difference was 1.0e-4 on values up to 4, a tenth of
    // this; a misread transpose or scale is off by whole units.
    return {1e-3, 1e-3};
  case ElementType::F16:
    // A unit in the last place of f16 is 2^-10 relative; a result rounded
    // from another f32 sum differs by one or two of them, and layers
    // compound that: about 10 units.
    return {1e-2, 1e-2};
  case ElementType::F8E4M3FN:
  case ElementType::F8E5M2:
    // One step of a 3-bit (2-bit) mantissa.
    return {0.125, 0.125};
  }
  return {0, 0};
}

namespace {

std::string joinPath(const std::string &dir, const std::string &name) {
  return dir.empty() || dir.back() == '/' ? dir + name : dir + "/" + name;
}

/// "[i,j,k]" of flat element `flat` of `shape`.
std::string indexText(const std::vector<int64_t> &shape, uint64_t flat) {
  std::vector<int64_t> index(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    index[d] = shape[d] > 0 ? int64_t(flat % uint64_t(shape[d])) : 0;
    flat = shape[d] > 0 ? flat / uint64_t(shape[d]) : 0;
  }
  std::string text = "[";
  for (size_t d = 0; d < index.size(); ++d)
    text += (d ? "," : "") + std::to_string(index[d]);
  return text + "]";
}

std::string number(double value, const char *format = "%.9g") {
  char text[64];
  std::snprintf(text, sizeof(text), format, value);
  return text;
}

} // namespace

std::optional<std::string> ipu::compareExpectedArrays(const std::string &dir,
                                                      const std::vector<ExpectedResult> &results,
                                                      ExpectReport &report) {
  report = ExpectReport();
  for (uint32_t index = 0; index < results.size(); ++index) {
    const ExpectedResult &output = results[index];
    const std::vector<int64_t> &shape = output.shape;
    const std::string path =
        joinPath(dir, npyFileName("result" + std::to_string(index), output.type));
    NpyArray array;
    if (auto error = readNpy(path, array))
      return error;
    if (array.descr != npyDescr(output.type) || array.shape != shape)
      return path + ": expected shape " + npyShapeText(shape) + " " +
             std::string(elementTypeName(output.type)) + ", found " +
             npyShapeText(array.shape) + " " + npyTypeName(array.descr);
    const unsigned bytes = elementBytes(output.type);
    const uint64_t elements = array.elements();
    if (array.data.size() != output.bytes.size() || elements * bytes != output.bytes.size())
      return path + ": holds " + std::to_string(array.data.size()) +
             " bytes, the result " + std::to_string(output.bytes.size());
    const ExpectTolerance tolerance = expectTolerance(output.type);
    uint64_t mismatches = 0, worst = 0;
    double largest = 0, worstRatio = -1;
    // The angle between the two as vectors, which users compare modes by
    // (an f8 model against the f32 one): sum(d e) / (|d| |e|).
    double dot = 0, deviceNorm = 0, expectedNorm = 0;
    for (uint64_t e = 0; e < elements; ++e) {
      const double device = loadElement(output.type, &output.bytes[e * bytes]);
      const double expected = loadElement(output.type, &array.data[e * bytes]);
      const double allowed = tolerance.absolute + tolerance.relative * std::fabs(expected);
      const ElementMatch match = matchElement(device, expected, allowed);
      if (std::isfinite(device) && std::isfinite(expected)) {
        dot += device * expected;
        deviceNorm += device * device;
        expectedNorm += expected * expected;
      }
      mismatches += !match.pass;
      largest = std::max(largest, match.error);
      const double ratio = match.ratio;
      if (ratio > worstRatio) {
        worstRatio = ratio;
        worst = e;
      }
    }
    report.elementsCompared += elements;
    report.mismatches += mismatches;
    report.maximumAbsoluteError = std::max(report.maximumAbsoluteError, largest);
    std::string line = "expect result=" + std::to_string(index) +
                       " file=" + reportValue(path) + " type=" +
                       std::string(elementTypeName(output.type)) + " shape=" +
                       npyShapeText(shape) + " relativeTolerance=" +
                       number(tolerance.relative, "%g") + " absoluteTolerance=" +
                       number(tolerance.absolute, "%g") +
                       " maximumAbsoluteError=" + number(largest, "%g") +
                       " mismatches=" + std::to_string(mismatches) +
                       " elementsCompared=" + std::to_string(elements);
    if (deviceNorm > 0 && expectedNorm > 0)
      line += " cosineSimilarity=" + number(dot / std::sqrt(deviceNorm * expectedNorm), "%.6f");
    if (elements > 0)
      line += " worstElement=" + indexText(shape, worst) + " worstDevice=" +
              number(loadElement(output.type, &output.bytes[worst * bytes])) +
              " worstExpected=" +
              number(loadElement(output.type, &array.data[worst * bytes]));
    report.lines.push_back(std::move(line));
  }
  return std::nullopt;
}

std::optional<std::string> ipu::compareExpected(const std::string &dir,
                                                const Package &package,
                                                const SimulationResult &result,
                                                ExpectReport &report) {
  report = ExpectReport();
  if (package.results == 0)
    return std::string("the package does not say which of its streams are the "
                       "function's results (format before 6): compile it again");
  std::vector<ExpectedResult> results;
  for (uint32_t index = 0; index < package.results; ++index) {
    const HostStream *stream = resultStream(package, index);
    if (!stream || index >= result.outputs.size() || result.outputs[index].bytes.empty())
      return "result " + std::to_string(index) + " was never streamed out";
    const HostTensor &output = result.outputs[index];
    results.push_back({output.type, batchShape(package, *stream), output.bytes});
  }
  return compareExpectedArrays(dir, results, report);
}

std::string ipu::expectSummaryLine(const std::string &dir, const ExpectReport &report) {
  return "expected=" + reportValue(dir) + " maximumAbsoluteError=" +
         number(report.maximumAbsoluteError, "%g") +
         " mismatches=" + std::to_string(report.mismatches) +
         " numericalTest=" + (report.passed() ? "PASS" : "FAIL") +
         " elementsCompared=" + std::to_string(report.elementsCompared);
}
