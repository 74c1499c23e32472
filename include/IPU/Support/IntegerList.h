//===- IntegerList.h - Integer lists written as ranges and repeats -------===//
//
// Tile lists, split points and tile maps in the IR are long but regular: a
// compute set on all of ipu21 lists 1472 tiles, a balanced split of 729 rows
// 185 offsets. They are written as terms, and a list as terms separated by
// commas:
//
//   7                        one value
//   0 to 1472                0, 1, ..., 1471 (the end is excluded)
//   0 to 729 step 4          0, 4, ..., 728
//   10 to 0 step -5          10, 5
//   (0 to 8) x 4 step 368    0..7, 368..375, 736..743, 1104..1111: the
//                            terms in parentheses 4 times, each copy 368
//                            above the one before
//
// compressIntegerList finds short terms for a list, expandIntegerList gives
// the values back, and printIntegerTerms writes the terms in the syntax
// above; the dialects' parsers read that syntax into terms (a plain list of
// integers is a list of one-value terms). Split points may also be written
// as balanced splits (below).
//
//===----------------------------------------------------------------------===//

#ifndef IPU_SUPPORT_INTEGERLIST_H
#define IPU_SUPPORT_INTEGERLIST_H

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ipu {

/// One term of an integer list.
struct IntegerTerm {
  /// With `body` empty, a range: `count` values from `start`, `step` apart.
  /// Otherwise `body` `count` times, copy k raised by k * `step` (`start`
  /// unused).
  int64_t start = 0, count = 1, step = 0;
  std::vector<IntegerTerm> body;

  bool isRange() const { return body.empty(); }
};
using IntegerTerms = std::vector<IntegerTerm>;

/// The most values a written list may expand to: a list from the input
/// cannot ask for more memory than this.
constexpr size_t kMaxIntegerListValues = size_t(1) << 24;

/// Short terms for `values`: whole-list repeats (smallest period first),
/// else ranges and repeats of up to 64 values found left to right.
IntegerTerms compressIntegerList(const std::vector<int64_t> &values);

/// Appends the values of `terms` to `out`. Fails, saying why, when they
/// would be more than `limit` values or leave the int64 range.
std::optional<std::string>
expandIntegerList(const IntegerTerms &terms, std::vector<int64_t> &out,
                  size_t limit = kMaxIntegerListValues);

/// The terms in the syntax above, without the brackets around the list.
std::string printIntegerTerms(const IntegerTerms &terms);

/// `from to to step step` as a term: fails, saying why, when the step is 0
/// or points away from `to`, or the range is empty.
std::optional<std::string> makeRangeTerm(int64_t from, int64_t to, int64_t step,
                                         IntegerTerm &term);

/// `(body) x count step step` as a term: fails when `count` < 1 or the body
/// is empty.
std::optional<std::string> makeRepeatTerm(IntegerTerms body, int64_t count,
                                          int64_t step, IntegerTerm &term);

//===----------------------------------------------------------------------===//
// Balanced splits
//===----------------------------------------------------------------------===//
//
// A layout's explicit split points are often balanced splits of balanced
// splits: a staged reduction splits each of a GEMM's 46 balanced row blocks
// of 729 rows into 4 balanced parts again. Written as a list, that is
// `0 to 640 step 4, (639, 643, 647, 651) x 6 step 15, 729`; written as what
// it is, `balanced 729 into [46, 4]`. At each level a block of n values
// split into p parts gives its first n mod p parts one value more.

/// The split points (parts + 1 offsets from 0 to `extent`) of `extent`
/// split into `levels[0]` balanced blocks, each of those into `levels[1]`,
/// and so on. Fails, saying why, when a level is below 1, a part would be
/// empty, or the points would be more than `limit`.
std::optional<std::string>
balancedSplits(int64_t extent, const std::vector<int64_t> &levels,
               std::vector<int64_t> &out, size_t limit = kMaxIntegerListValues);

/// The levels of `points` when they are a balanced split of balanced splits
/// (two or three levels, each of at least 2 parts, the outermost first) and
/// not one arithmetic range, which the list form says as well: nothing
/// otherwise.
std::optional<std::vector<int64_t>>
nestedBalancedLevels(const std::vector<int64_t> &points);

} // namespace ipu

#endif // IPU_SUPPORT_INTEGERLIST_H
