//===- ElementType.cpp - Element types and bit-exact conversions ----------===//
//
// All narrowing conversions share one integer encoder (encodeNarrow) so the
// rounding rule (round to nearest, ties to even) is written once. Overflow
// policy per format:
//   f16       IEEE: values at or above max + half an ulp become +-inf,
//             infinities stay infinities, NaN stays NaN (quietened).
//   f8E4M3FN  OCP saturation mode: no infinities exist, so finite overflow
//             and +-inf clamp to +-448; NaN becomes 0x7F / 0xFF.
//   f8E5M2    OCP saturation mode too, for the same behaviour across the f8
//             formats: finite overflow and +-inf clamp to +-57344 (0x7B /
//             0xFB); NaN becomes the quiet NaN 0x7E / 0xFE. Decoding 0x7C
//             still yields +-inf.
//
//===----------------------------------------------------------------------===//

#include "IPU/Support/ElementType.h"

#include <array>
#include <cmath>
#include <cstring>
#include <limits>

namespace ipu {

uint32_t floatBits(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return bits;
}

float bitsFloat(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}

namespace {

/// Describes a narrow binary float format with subnormals.
struct NarrowFormat {
  int mantissaBits;
  int bias;
  uint32_t maxFiniteCode; ///< Largest finite magnitude code.
  /// Magnitude code of anything beyond maxFiniteCode, infinities included:
  /// infinity for f16, max finite for the saturating f8 formats.
  uint32_t overflowCode;
  uint32_t nanCode; ///< Magnitude code produced for NaN inputs.
};

constexpr NarrowFormat kHalf{10, 15, 0x7BFF, 0x7C00, 0x7E00};
constexpr NarrowFormat kE4M3FN{3, 7, 0x7E, 0x7E, 0x7F};
constexpr NarrowFormat kE5M2{2, 15, 0x7B, 0x7B, 0x7E};

/// Encodes `value` into `format`; `signShift` is the position of the sign bit
/// in the narrow format.
uint32_t encodeNarrow(float value, const NarrowFormat &format,
                      unsigned signShift) {
  uint32_t bits = floatBits(value);
  uint32_t sign = (bits >> 31) << signShift;
  uint32_t magnitude = bits & 0x7FFFFFFFu;

  if (magnitude > 0x7F800000u) {
    // f16 keeps the top payload bits so NaN boxes survive a round trip.
    if (format.mantissaBits == 10)
      return sign | format.nanCode | ((magnitude >> 13) & 0x3FFu);
    return sign | format.nanCode;
  }
  if (magnitude == 0x7F800000u)
    return sign | format.overflowCode;

  // Significand with the implicit bit at position 23 and its unbiased
  // exponent; f32 subnormals have no implicit bit and exponent -126.
  int exponentField = static_cast<int>(magnitude >> 23);
  uint32_t significand = magnitude & 0x7FFFFFu;
  int exponent;
  if (exponentField == 0) {
    exponent = -126;
  } else {
    significand |= 0x800000u;
    exponent = exponentField - 127;
  }
  if (significand == 0)
    return sign;

  const int minNormalExponent = 1 - format.bias;
  int shift = 23 - format.mantissaBits;
  // Anything this large overflows every narrow format; bail out before the
  // integer code below could overflow.
  if (exponent > format.bias + 2)
    return sign | format.overflowCode;

  uint64_t code;
  if (exponent >= minNormalExponent) {
    // The implicit bit lands on the lowest exponent bit, hence bias - 1.
    code = (static_cast<uint64_t>(exponent + format.bias - 1)
            << format.mantissaBits);
  } else {
    shift += minNormalExponent - exponent;
    code = 0;
  }
  // A shift above 24 drops a significand below half the smallest subnormal.
  if (shift > 24)
    return sign;
  uint32_t kept = significand >> shift;
  uint32_t remainder = significand & ((1u << shift) - 1u);
  uint32_t half = 1u << (shift - 1);
  code += kept;
  // Round to nearest, ties to even; a carry out of the mantissa correctly
  // bumps the exponent (or turns the largest subnormal into the min normal).
  if (remainder > half || (remainder == half && (code & 1u)))
    ++code;

  if (code > format.maxFiniteCode)
    return sign | format.overflowCode;
  return sign | static_cast<uint32_t>(code);
}

/// Decodes a finite magnitude of a narrow format; callers handle NaN, inf
/// and the sign.
float decodeFinite(uint32_t exponentField, uint32_t mantissa, int mantissaBits,
                   int bias) {
  if (exponentField == 0)
    return std::ldexp(static_cast<float>(mantissa), 1 - bias - mantissaBits);
  return std::ldexp(static_cast<float>(mantissa | (1u << mantissaBits)),
                    static_cast<int>(exponentField) - bias - mantissaBits);
}

// copysign rather than a multiply so NaN and zero signs are exact too.
float decodeE4M3FN(uint8_t bits) {
  float sign = (bits & 0x80) ? -1.0f : 1.0f;
  uint32_t magnitude = bits & 0x7F;
  if (magnitude == 0x7F)
    return std::copysign(std::numeric_limits<float>::quiet_NaN(), sign);
  return std::copysign(decodeFinite(magnitude >> 3, magnitude & 7, 3, 7),
                       sign);
}

float decodeE5M2(uint8_t bits) {
  float sign = (bits & 0x80) ? -1.0f : 1.0f;
  uint32_t magnitude = bits & 0x7F;
  if (magnitude == 0x7C)
    return std::copysign(std::numeric_limits<float>::infinity(), sign);
  if (magnitude > 0x7C)
    return std::copysign(std::numeric_limits<float>::quiet_NaN(), sign);
  return std::copysign(decodeFinite(magnitude >> 2, magnitude & 3, 2, 15),
                       sign);
}

/// f8 decoding runs in the GEMM kernel's inner loops, so it is a table.
using F8Table = std::array<float, 256>;

const F8Table &e4m3Table() {
  static const F8Table table = [] {
    F8Table result;
    for (unsigned i = 0; i < 256; ++i)
      result[i] = decodeE4M3FN(static_cast<uint8_t>(i));
    return result;
  }();
  return table;
}

const F8Table &e5m2Table() {
  static const F8Table table = [] {
    F8Table result;
    for (unsigned i = 0; i < 256; ++i)
      result[i] = decodeE5M2(static_cast<uint8_t>(i));
    return result;
  }();
  return table;
}

} // namespace

unsigned elementBytes(ElementType type) {
  switch (type) {
  case ElementType::F32:
    return 4;
  case ElementType::F16:
    return 2;
  case ElementType::F8E4M3FN:
  case ElementType::F8E5M2:
    return 1;
  }
  return 0;
}

std::string_view elementTypeName(ElementType type) {
  switch (type) {
  case ElementType::F32:
    return "f32";
  case ElementType::F16:
    return "f16";
  case ElementType::F8E4M3FN:
    return "f8E4M3FN";
  case ElementType::F8E5M2:
    return "f8E5M2";
  }
  return "<invalid>";
}

std::optional<ElementType> parseElementType(std::string_view name) {
  for (ElementType type : {ElementType::F32, ElementType::F16,
                           ElementType::F8E4M3FN, ElementType::F8E5M2})
    if (name == elementTypeName(type))
      return type;
  return std::nullopt;
}

bool isF8(ElementType type) {
  return type == ElementType::F8E4M3FN || type == ElementType::F8E5M2;
}

double unitRoundoff(ElementType type) {
  switch (type) {
  case ElementType::F32: return 0x1p-24;
  case ElementType::F16: return 0x1p-11;
  case ElementType::F8E4M3FN: return 0x1p-4;
  case ElementType::F8E5M2: return 0x1p-3;
  }
  return 0x1p-24;
}

double smallestSubnormal(ElementType type) {
  switch (type) {
  case ElementType::F32: return 0x1p-149;
  case ElementType::F16: return 0x1p-24;
  case ElementType::F8E4M3FN: return 0x1p-9;
  case ElementType::F8E5M2: return 0x1p-16;
  }
  return 0x1p-149;
}

float halfToFloat(uint16_t bits) {
  uint32_t sign = static_cast<uint32_t>(bits & 0x8000u) << 16;
  uint32_t exponentField = (bits >> 10) & 0x1Fu;
  uint32_t mantissa = bits & 0x3FFu;
  if (exponentField == 0x1F) // Inf or NaN: keep the payload bits.
    return bitsFloat(sign | 0x7F800000u | (mantissa << 13));
  if (exponentField != 0)
    return bitsFloat(sign | ((exponentField + 112) << 23) | (mantissa << 13));
  // Zero or subnormal: mantissa * 2^-24 is exact in f32.
  float magnitude = static_cast<float>(mantissa) * 0x1p-24f;
  return bitsFloat(sign | floatBits(magnitude));
}

uint16_t floatToHalf(float value) {
  return static_cast<uint16_t>(encodeNarrow(value, kHalf, 15));
}

float f8E4M3FNToFloat(uint8_t bits) { return e4m3Table()[bits]; }

uint8_t floatToF8E4M3FN(float value) {
  return static_cast<uint8_t>(encodeNarrow(value, kE4M3FN, 7));
}

float f8E5M2ToFloat(uint8_t bits) { return e5m2Table()[bits]; }

uint8_t floatToF8E5M2(float value) {
  return static_cast<uint8_t>(encodeNarrow(value, kE5M2, 7));
}

float loadElement(ElementType type, const uint8_t *bytes) {
  switch (type) {
  case ElementType::F32: {
    uint32_t bits = static_cast<uint32_t>(bytes[0]) |
                    (static_cast<uint32_t>(bytes[1]) << 8) |
                    (static_cast<uint32_t>(bytes[2]) << 16) |
                    (static_cast<uint32_t>(bytes[3]) << 24);
    return bitsFloat(bits);
  }
  case ElementType::F16:
    return halfToFloat(static_cast<uint16_t>(bytes[0] | (bytes[1] << 8)));
  case ElementType::F8E4M3FN:
    return f8E4M3FNToFloat(bytes[0]);
  case ElementType::F8E5M2:
    return f8E5M2ToFloat(bytes[0]);
  }
  return std::numeric_limits<float>::quiet_NaN();
}

void storeElement(ElementType type, float value, uint8_t *bytes) {
  switch (type) {
  case ElementType::F32: {
    uint32_t bits = floatBits(value);
    bytes[0] = static_cast<uint8_t>(bits);
    bytes[1] = static_cast<uint8_t>(bits >> 8);
    bytes[2] = static_cast<uint8_t>(bits >> 16);
    bytes[3] = static_cast<uint8_t>(bits >> 24);
    return;
  }
  case ElementType::F16: {
    uint16_t bits = floatToHalf(value);
    bytes[0] = static_cast<uint8_t>(bits);
    bytes[1] = static_cast<uint8_t>(bits >> 8);
    return;
  }
  case ElementType::F8E4M3FN:
    bytes[0] = floatToF8E4M3FN(value);
    return;
  case ElementType::F8E5M2:
    bytes[0] = floatToF8E5M2(value);
    return;
  }
}

} // namespace ipu
