//===- Numbers.h - Counting that stops at the top, figures for people -*- C++ -*-===//
//
// Estimates of work and bytes from untrusted shapes (a package's steps, a
// model's tensors) multiply sizes that may overflow 64 bits. A saturated
// count stays at UINT64_MAX, which every limit refuses, so an overflow can
// never wrap into a small figure that passes.
//
//===----------------------------------------------------------------------===//

#ifndef IPU_SUPPORT_NUMBERS_H
#define IPU_SUPPORT_NUMBERS_H

#include <cstdint>
#include <string>

namespace ipu {

/// a + b, or UINT64_MAX when that overflows.
inline uint64_t saturatingAdd(uint64_t a, uint64_t b) {
  uint64_t sum;
  return __builtin_add_overflow(a, b, &sum) ? UINT64_MAX : sum;
}

/// a * b, or UINT64_MAX when that overflows.
inline uint64_t saturatingMultiply(uint64_t a, uint64_t b) {
  uint64_t product;
  return __builtin_mul_overflow(a, b, &product) ? UINT64_MAX : product;
}

/// `value` with its thousands separated by commas ("1,234,567"), for text
/// that people read (the profile, refusals); report lines keep plain digits.
inline std::string groupedThousands(uint64_t value) {
  const std::string digits = std::to_string(value);
  std::string grouped;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i && (digits.size() - i) % 3 == 0)
      grouped += ',';
    grouped += digits[i];
  }
  return grouped;
}

} // namespace ipu

#endif // IPU_SUPPORT_NUMBERS_H
