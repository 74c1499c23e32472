//===- Nesting.h - A bound on bracket nesting in textual IR --------------===//
//
// MLIR's parser recurses once per nested bracket without a limit, so a few
// kilobytes of '[' exhaust the stack (found by the compile fuzzer). Real IR
// nests a few dozen levels deep; the tools refuse deeper input up front.
//
//===----------------------------------------------------------------------===//

#ifndef IPU_SUPPORT_NESTING_H
#define IPU_SUPPORT_NESTING_H

#include <optional>
#include <string>
#include <string_view>

namespace ipu {

/// The deepest bracket nesting the tools accept.
constexpr unsigned kMaxIrNesting = 256;

/// Why `text` nests brackets ((, [, {, <) more than `limit` deep, outside
/// string literals and // comments, with the line of the first bracket too
/// deep; nothing when it does not. Unbalanced brackets are the parser's to
/// report.
std::optional<std::string> checkNesting(std::string_view text,
                                        unsigned limit = kMaxIrNesting);

/// LLVM 22's parsers of linalg.transpose, broadcast and reduce read their
/// `permutation` / `dimensions` lists without checking that they parsed,
/// and crash on a malformed one (found by the compile fuzzer). Why `text`
/// holds such a list (its line), or nothing.
std::optional<std::string> checkLinalgDimensionLists(std::string_view text);

/// Every check the tools make on textual IR before parsing it.
inline std::optional<std::string> checkTextualIr(std::string_view text) {
  if (std::optional<std::string> why = checkNesting(text))
    return why;
  return checkLinalgDimensionLists(text);
}

} // namespace ipu

#endif // IPU_SUPPORT_NESTING_H
