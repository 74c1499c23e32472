//===- IntegerList.cpp - Integer lists written as ranges and repeats -----===//

#include "IPU/Support/IntegerList.h"

#include <algorithm>
#include <limits>

using namespace ipu;

namespace {

/// Periods up to which a piece of a list is looked for inside it; the whole
/// list is tried at every period that divides its length.
constexpr size_t kMaxPiecePeriod = 64;

IntegerTerm rangeTerm(int64_t start, int64_t count, int64_t step) {
  IntegerTerm term;
  term.start = start;
  term.count = count;
  term.step = step;
  return term;
}

/// The length of the longest prefix of v[0, n) whose every value from
/// index p on is the value p before it plus `stride` (v[p] - v[0]).
size_t periodicPrefix(const int64_t *v, size_t n, size_t p, int64_t &stride) {
  if (p >= n || __builtin_sub_overflow(v[p], v[0], &stride))
    return std::min(p, n);
  size_t length = p;
  for (int64_t want; length < n; ++length)
    if (__builtin_add_overflow(v[length - p], stride, &want) || want != v[length])
      break;
  return length;
}

void compress(const int64_t *v, size_t n, IntegerTerms &out);

/// `count` copies of v[0, period), `stride` apart.
IntegerTerm repeatOf(const int64_t *v, size_t period, size_t count,
                     int64_t stride) {
  if (period == 1)
    return rangeTerm(v[0], int64_t(count), stride);
  IntegerTerm term;
  term.count = int64_t(count);
  term.step = stride;
  compress(v, period, term.body);
  return term;
}

void compress(const int64_t *v, size_t n, IntegerTerms &out) {
  // The whole list as one range or one repeat, the smallest period first.
  for (size_t p = 1; 2 * p <= n; ++p) {
    int64_t stride;
    if (n % p || (p == 1 && n < 3) || periodicPrefix(v, n, p, stride) != n)
      continue;
    out.push_back(repeatOf(v, p, n / p, stride));
    return;
  }
  // Otherwise left to right, each piece the one that covers most values
  // from where the last ended (a range of at least 3, or at least 2 copies
  // of up to kMaxPiecePeriod values).
  for (size_t i = 0; i < n;) {
    size_t bestPeriod = 0, bestLength = 1;
    int64_t bestStride = 0;
    for (size_t p = 1; p <= kMaxPiecePeriod && 2 * p <= n - i; ++p) {
      int64_t stride;
      size_t length = periodicPrefix(v + i, n - i, p, stride) / p * p;
      if (length / p < 2 || length < 3 || length <= bestLength)
        continue;
      bestPeriod = p;
      bestLength = length;
      bestStride = stride;
    }
    out.push_back(bestPeriod
                      ? repeatOf(v + i, bestPeriod, bestLength / bestPeriod, bestStride)
                      : rangeTerm(v[i], 1, 0));
    i += bestLength;
  }
}

/// Values of `terms`, saturating at SIZE_MAX.
size_t valueCount(const IntegerTerms &terms) {
  size_t total = 0;
  for (const IntegerTerm &term : terms) {
    size_t each = term.isRange() ? 1 : valueCount(term.body), values;
    if (term.count < 0 || __builtin_mul_overflow(each, size_t(term.count), &values) ||
        __builtin_add_overflow(total, values, &total))
      return SIZE_MAX;
  }
  return total;
}

std::optional<std::string> expand(const IntegerTerms &terms, int64_t offset,
                                  std::vector<int64_t> &out) {
  for (const IntegerTerm &term : terms) {
    for (int64_t k = 0; k < term.count; ++k) {
      int64_t shift, value;
      if (__builtin_mul_overflow(k, term.step, &shift) ||
          __builtin_add_overflow(offset, shift, &shift) ||
          (term.isRange() && __builtin_add_overflow(term.start, shift, &value)))
        return std::string("a value of the list leaves the 64-bit integer range");
      if (term.isRange()) {
        out.push_back(value);
        continue;
      }
      if (std::optional<std::string> why = expand(term.body, shift, out))
        return why;
    }
  }
  return std::nullopt;
}

void printCompact(const IntegerTerm &term, std::string &text);

/// Terms of at most this many values print as the values unless the term
/// saves a third of the characters: [0 to 4], but [0, 2, 1, 3] rather than
/// [(0, 2) x 2 step 1] and [5, 4, 3, 2, 1, 0] rather than [5 to -1 step -1].
constexpr size_t kMaxPlainTermValues = 16;

void print(const IntegerTerm &term, std::string &text) {
  std::string compact;
  printCompact(term, compact);
  std::vector<int64_t> values;
  if (valueCount({term}) <= kMaxPlainTermValues && !expand({term}, 0, values)) {
    std::string plain;
    for (size_t k = 0; k < values.size(); ++k)
      plain += (k ? ", " : "") + std::to_string(values[k]);
    if (2 * plain.size() < 3 * compact.size()) {
      text += plain;
      return;
    }
  }
  text += compact;
}

void printCompact(const IntegerTerm &term, std::string &text) {
  if (!term.isRange()) {
    text += "(" + printIntegerTerms(term.body) + ") x " +
            std::to_string(term.count) + " step " + std::to_string(term.step);
    return;
  }
  int64_t last, end;
  bool fits = !__builtin_mul_overflow(term.count - 1, term.step, &last) &&
              !__builtin_add_overflow(term.start, last, &last) &&
              !__builtin_add_overflow(last, term.step, &end);
  if (term.count >= 3 && fits) {
    text += std::to_string(term.start) + " to " + std::to_string(end);
    if (term.step != 1)
      text += " step " + std::to_string(term.step);
    return;
  }
  // One or two values, or a range whose end is past the int64 range.
  for (int64_t k = 0; k < term.count; ++k)
    text += (k ? ", " : "") +
            std::to_string(int64_t(term.start + __int128(k) * term.step));
}

} // namespace

IntegerTerms ipu::compressIntegerList(const std::vector<int64_t> &values) {
  IntegerTerms terms;
  compress(values.data(), values.size(), terms);
  return terms;
}

std::optional<std::string> ipu::expandIntegerList(const IntegerTerms &terms,
                                                  std::vector<int64_t> &out,
                                                  size_t limit) {
  size_t values = valueCount(terms);
  if (values > limit || out.size() + values > limit)
    return "the list has more than " + std::to_string(limit) + " values";
  out.reserve(out.size() + values);
  return expand(terms, 0, out);
}

std::string ipu::printIntegerTerms(const IntegerTerms &terms) {
  std::string text;
  for (size_t i = 0; i < terms.size(); ++i) {
    if (i)
      text += ", ";
    print(terms[i], text);
  }
  return text;
}

std::optional<std::string> ipu::makeRangeTerm(int64_t from, int64_t to,
                                              int64_t step, IntegerTerm &term) {
  if (step == 0)
    return std::string("a range's step cannot be 0");
  __int128 span = __int128(to) - from;
  if (span == 0 || (span > 0) != (step > 0))
    return "the range " + std::to_string(from) + " to " + std::to_string(to) +
           " step " + std::to_string(step) + " is empty";
  __int128 count = (span + step + (step > 0 ? -1 : 1)) / step;
  if (count > std::numeric_limits<int64_t>::max())
    return "the range " + std::to_string(from) + " to " + std::to_string(to) +
           " has more than 2^63 values";
  term = rangeTerm(from, int64_t(count), step);
  return std::nullopt;
}

std::optional<std::string> ipu::makeRepeatTerm(IntegerTerms body, int64_t count,
                                               int64_t step, IntegerTerm &term) {
  if (count < 1)
    return "a repeat needs a count of at least 1, got " + std::to_string(count);
  if (body.empty())
    return std::string("a repeat needs at least one term in its parentheses");
  term = IntegerTerm();
  term.count = count;
  term.step = step;
  term.body = std::move(body);
  return std::nullopt;
}

namespace {
/// Appends the split points of [begin, begin + extent) at `levels`,
/// without the final one.
std::optional<std::string> appendBalanced(int64_t begin, int64_t extent,
                                          const int64_t *levels, size_t depth,
                                          std::vector<int64_t> &out, size_t limit) {
  if (depth == 0) {
    if (out.size() >= limit)
      return "balanced splits of more than " + std::to_string(limit) + " points";
    out.push_back(begin);
    return std::nullopt;
  }
  const int64_t parts = levels[0];
  const int64_t base = extent / parts, extra = extent % parts;
  if (base == 0)
    return "a block of " + std::to_string(extent) + " cannot be split into " +
           std::to_string(parts) + " non-empty parts";
  for (int64_t part = 0, at = begin; part < parts; ++part) {
    const int64_t size = base + (part < extra ? 1 : 0);
    if (auto why = appendBalanced(at, size, levels + 1, depth - 1, out, limit))
      return why;
    at += size;
  }
  return std::nullopt;
}
} // namespace

std::optional<std::string> ipu::balancedSplits(int64_t extent,
                                               const std::vector<int64_t> &levels,
                                               std::vector<int64_t> &out, size_t limit) {
  if (extent < 1)
    return "balanced splits need an extent of at least 1, got " + std::to_string(extent);
  if (levels.empty())
    return std::string("balanced splits need at least one level");
  for (int64_t parts : levels)
    if (parts < 1)
      return "a balanced split needs at least 1 part per level, got " +
             std::to_string(parts);
  out.clear();
  if (auto why = appendBalanced(0, extent, levels.data(), levels.size(), out, limit))
    return why;
  if (out.size() >= limit)
    return "balanced splits of more than " + std::to_string(limit) + " points";
  out.push_back(extent);
  return std::nullopt;
}

std::optional<std::vector<int64_t>>
ipu::nestedBalancedLevels(const std::vector<int64_t> &points) {
  if (points.size() < 5 || points.front() != 0 || compressIntegerList(points).size() == 1)
    return std::nullopt;
  const int64_t parts = int64_t(points.size()) - 1, extent = points.back();
  std::vector<int64_t> expanded;
  auto matches = [&](const std::vector<int64_t> &levels) {
    return !balancedSplits(extent, levels, expanded, points.size()) && expanded == points;
  };
  // Outermost level first, fewest levels first.
  for (int64_t outer = 2; outer * 2 <= parts; ++outer) {
    if (parts % outer)
      continue;
    if (matches({outer, parts / outer}))
      return std::vector<int64_t>{outer, parts / outer};
  }
  for (int64_t outer = 2; outer * 4 <= parts; ++outer)
    for (int64_t middle = 2; outer * middle * 2 <= parts; ++middle) {
      if (parts % (outer * middle))
        continue;
      if (matches({outer, middle, parts / (outer * middle)}))
        return std::vector<int64_t>{outer, middle, parts / (outer * middle)};
    }
  return std::nullopt;
}
