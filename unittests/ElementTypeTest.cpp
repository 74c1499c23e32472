//===- ElementTypeTest.cpp - Element types and conversions ----------------===//

#include "IPU/Support/ElementType.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

using namespace ipu;

namespace {

uint32_t bitsOf(float value) { return floatBits(value); }
float floatOf(uint32_t bits) { return bitsFloat(bits); }

constexpr float kInf = std::numeric_limits<float>::infinity();
const float kNaN = std::numeric_limits<float>::quiet_NaN();

/// A narrow format under test: its codec and its largest finite code.
struct Codec {
  const char *name;
  float (*decode)(uint32_t);
  uint32_t (*encode)(float);
  uint32_t signBit;
  uint32_t maxFinite;
  uint32_t overflowCode; ///< What values beyond max + half ulp become.
};

float decodeHalf(uint32_t c) { return halfToFloat(static_cast<uint16_t>(c)); }
uint32_t encodeHalf(float v) { return floatToHalf(v); }
float decodeE4M3(uint32_t c) { return f8E4M3FNToFloat(static_cast<uint8_t>(c)); }
uint32_t encodeE4M3(float v) { return floatToF8E4M3FN(v); }
float decodeE5M2(uint32_t c) { return f8E5M2ToFloat(static_cast<uint8_t>(c)); }
uint32_t encodeE5M2(float v) { return floatToF8E5M2(v); }

const Codec kCodecs[] = {
    {"f16", decodeHalf, encodeHalf, 0x8000, 0x7BFF, 0x7C00},
    {"f8E4M3FN", decodeE4M3, encodeE4M3, 0x80, 0x7E, 0x7E},
    {"f8E5M2", decodeE5M2, encodeE5M2, 0x80, 0x7B, 0x7B},
};

} // namespace

TEST(ElementTypeTest, SizesNamesAndParse) {
  EXPECT_EQ(elementBytes(ElementType::F32), 4u);
  EXPECT_EQ(elementBytes(ElementType::F16), 2u);
  EXPECT_EQ(elementBytes(ElementType::F8E4M3FN), 1u);
  EXPECT_EQ(elementBytes(ElementType::F8E5M2), 1u);
  EXPECT_EQ(elementTypeName(ElementType::F32), "f32");
  EXPECT_EQ(elementTypeName(ElementType::F16), "f16");
  EXPECT_EQ(elementTypeName(ElementType::F8E4M3FN), "f8E4M3FN");
  EXPECT_EQ(elementTypeName(ElementType::F8E5M2), "f8E5M2");
  for (ElementType type : {ElementType::F32, ElementType::F16,
                           ElementType::F8E4M3FN, ElementType::F8E5M2})
    EXPECT_EQ(parseElementType(elementTypeName(type)), type);
  for (const char *bad : {"", "F32", "f64", "bf16", "f8E4M3", "f8e5m2", "f32 "})
    EXPECT_FALSE(parseElementType(bad).has_value()) << bad;
  EXPECT_FALSE(isF8(ElementType::F32));
  EXPECT_FALSE(isF8(ElementType::F16));
  EXPECT_TRUE(isF8(ElementType::F8E4M3FN));
  EXPECT_TRUE(isF8(ElementType::F8E5M2));
}

TEST(ElementTypeTest, HalfKnownValues) {
  EXPECT_EQ(floatToHalf(1.0f), 0x3C00);
  EXPECT_EQ(floatToHalf(-2.0f), 0xC000);
  EXPECT_EQ(floatToHalf(0.0f), 0x0000);
  EXPECT_EQ(floatToHalf(-0.0f), 0x8000);
  EXPECT_EQ(floatToHalf(65504.0f), 0x7BFF);
  EXPECT_EQ(floatToHalf(0x1p-14f), 0x0400); // Min normal.
  EXPECT_EQ(floatToHalf(0x1p-24f), 0x0001); // Min subnormal.
  EXPECT_EQ(floatToHalf(kInf), 0x7C00);
  EXPECT_EQ(floatToHalf(-kInf), 0xFC00);
  EXPECT_EQ(floatToHalf(1e10f), 0x7C00);
  EXPECT_EQ(floatToHalf(std::numeric_limits<float>::denorm_min()), 0x0000);
  EXPECT_EQ(floatToHalf(-std::numeric_limits<float>::denorm_min()), 0x8000);
  uint16_t nan = floatToHalf(kNaN);
  EXPECT_EQ(nan & 0x7C00, 0x7C00);
  EXPECT_NE(nan & 0x3FF, 0);

  EXPECT_EQ(halfToFloat(0x3C00), 1.0f);
  EXPECT_EQ(halfToFloat(0x7BFF), 65504.0f);
  EXPECT_EQ(halfToFloat(0x0001), 0x1p-24f);
  EXPECT_EQ(halfToFloat(0x03FF), 1023.0f * 0x1p-24f);
  EXPECT_EQ(halfToFloat(0x7C00), kInf);
  EXPECT_EQ(halfToFloat(0xFC00), -kInf);
  EXPECT_TRUE(std::isnan(halfToFloat(0x7E00)));
  EXPECT_EQ(bitsOf(halfToFloat(0x8000)), 0x80000000u);
}

TEST(ElementTypeTest, HalfRoundsToNearestEven) {
  // 1 + 2^-11 is halfway between 0x3C00 and 0x3C01: even wins.
  EXPECT_EQ(floatToHalf(1.0f + 0x1p-11f), 0x3C00);
  // 1 + 3 * 2^-11 is halfway between 0x3C01 and 0x3C02.
  EXPECT_EQ(floatToHalf(1.0f + 3 * 0x1p-11f), 0x3C02);
  // Just above a tie rounds up.
  EXPECT_EQ(floatToHalf(1.0f + 0x1p-11f + 0x1p-23f), 0x3C01);
  // Subnormal ties: 2^-25 goes to zero, 3 * 2^-25 to 2 * 2^-24.
  EXPECT_EQ(floatToHalf(0x1p-25f), 0x0000);
  EXPECT_EQ(floatToHalf(3 * 0x1p-25f), 0x0002);
  EXPECT_EQ(floatToHalf(0x1p-25f * 1.0000001f), 0x0001);
  // The largest subnormal plus half an ulp carries into the min normal.
  EXPECT_EQ(floatToHalf(1023.5f * 0x1p-24f), 0x0400);
  // 65520 is halfway between 65504 and 65536 (which overflows): IEEE gives
  // infinity, anything below stays at max.
  EXPECT_EQ(floatToHalf(65520.0f), 0x7C00);
  EXPECT_EQ(floatToHalf(std::nextafter(65520.0f, 0.0f)), 0x7BFF);
  EXPECT_EQ(floatToHalf(-65520.0f), 0xFC00);
}

TEST(ElementTypeTest, E4M3FNKnownValues) {
  EXPECT_EQ(floatToF8E4M3FN(1.0f), 0x38);
  EXPECT_EQ(floatToF8E4M3FN(-1.0f), 0xB8);
  EXPECT_EQ(floatToF8E4M3FN(448.0f), 0x7E);
  EXPECT_EQ(floatToF8E4M3FN(0x1p-6f), 0x08); // Min normal.
  EXPECT_EQ(floatToF8E4M3FN(0x1p-9f), 0x01); // Min subnormal.
  EXPECT_EQ(floatToF8E4M3FN(-0.0f), 0x80);
  // Ties to even: 1.0625 between 1.0 (0x38) and 1.125 (0x39);
  // 1.1875 between 1.125 (0x39) and 1.25 (0x3A).
  EXPECT_EQ(floatToF8E4M3FN(1.0625f), 0x38);
  EXPECT_EQ(floatToF8E4M3FN(1.1875f), 0x3A);
  EXPECT_EQ(floatToF8E4M3FN(0x1p-10f), 0x00);
  EXPECT_EQ(floatToF8E4M3FN(3 * 0x1p-10f), 0x02);
  // Saturation: finite overflow and infinities clamp to +-448.
  EXPECT_EQ(floatToF8E4M3FN(464.0f), 0x7E);
  EXPECT_EQ(floatToF8E4M3FN(480.0f), 0x7E);
  EXPECT_EQ(floatToF8E4M3FN(1e30f), 0x7E);
  EXPECT_EQ(floatToF8E4M3FN(-1e30f), 0xFE);
  EXPECT_EQ(floatToF8E4M3FN(kInf), 0x7E);
  EXPECT_EQ(floatToF8E4M3FN(-kInf), 0xFE);
  EXPECT_EQ(floatToF8E4M3FN(kNaN), 0x7F);
  EXPECT_EQ(floatToF8E4M3FN(-kNaN), 0xFF);

  EXPECT_EQ(f8E4M3FNToFloat(0x7E), 448.0f);
  EXPECT_EQ(f8E4M3FNToFloat(0xFE), -448.0f);
  EXPECT_EQ(f8E4M3FNToFloat(0x01), 0x1p-9f);
  EXPECT_EQ(f8E4M3FNToFloat(0x78), 256.0f); // Exponent field 15 is finite.
  EXPECT_TRUE(std::isnan(f8E4M3FNToFloat(0x7F)));
  EXPECT_TRUE(std::isnan(f8E4M3FNToFloat(0xFF)));
  EXPECT_EQ(bitsOf(f8E4M3FNToFloat(0x80)), 0x80000000u);
}

TEST(ElementTypeTest, E5M2KnownValues) {
  EXPECT_EQ(floatToF8E5M2(1.0f), 0x3C);
  EXPECT_EQ(floatToF8E5M2(-1.0f), 0xBC);
  EXPECT_EQ(floatToF8E5M2(57344.0f), 0x7B);
  EXPECT_EQ(floatToF8E5M2(0x1p-14f), 0x04); // Min normal.
  EXPECT_EQ(floatToF8E5M2(0x1p-16f), 0x01); // Min subnormal.
  // Ties to even: 1.125 between 1.0 (0x3C) and 1.25 (0x3D);
  // 1.375 between 1.25 (0x3D) and 1.5 (0x3E).
  EXPECT_EQ(floatToF8E5M2(1.125f), 0x3C);
  EXPECT_EQ(floatToF8E5M2(1.375f), 0x3E);
  EXPECT_EQ(floatToF8E5M2(0x1p-17f), 0x00);
  EXPECT_EQ(floatToF8E5M2(3 * 0x1p-17f), 0x02);
  // Saturation mode: overflow and infinities clamp to +-57344.
  EXPECT_EQ(floatToF8E5M2(61440.0f), 0x7B);
  EXPECT_EQ(floatToF8E5M2(1e30f), 0x7B);
  EXPECT_EQ(floatToF8E5M2(-1e30f), 0xFB);
  EXPECT_EQ(floatToF8E5M2(kInf), 0x7B);
  EXPECT_EQ(floatToF8E5M2(-kInf), 0xFB);
  EXPECT_EQ(floatToF8E5M2(kNaN) & 0x7F, 0x7E);

  EXPECT_EQ(f8E5M2ToFloat(0x7B), 57344.0f);
  EXPECT_EQ(f8E5M2ToFloat(0x01), 0x1p-16f);
  EXPECT_EQ(f8E5M2ToFloat(0x7C), kInf);
  EXPECT_EQ(f8E5M2ToFloat(0xFC), -kInf);
  for (unsigned code : {0x7Du, 0x7Eu, 0x7Fu, 0xFDu, 0xFEu, 0xFFu})
    EXPECT_TRUE(std::isnan(f8E5M2ToFloat(static_cast<uint8_t>(code))));
}

// Decode then encode every bit pattern: finite and infinite codes come back
// unchanged, NaN codes come back as a NaN of the same sign.
TEST(ElementTypeTest, RoundTripEveryPattern) {
  for (const Codec &codec : kCodecs) {
    uint32_t patterns = codec.signBit << 1;
    for (uint32_t code = 0; code < patterns; ++code) {
      float value = codec.decode(code);
      uint32_t back = codec.encode(value);
      if (std::isnan(value)) {
        EXPECT_TRUE(std::isnan(codec.decode(back)))
            << codec.name << " code " << code;
        EXPECT_EQ(back & codec.signBit, code & codec.signBit)
            << codec.name << " code " << code;
      } else if (std::isinf(value)) {
        // Only f16 and f8E5M2 have infinities.
        EXPECT_EQ(back & ~codec.signBit, codec.overflowCode) << codec.name;
      } else {
        EXPECT_EQ(back, code) << codec.name << " code " << code;
      }
    }
  }
}

// Exhaustive ties: between every pair of adjacent finite codes, the exact
// midpoint goes to the even code and its f32 neighbours go to the nearer one.
TEST(ElementTypeTest, EveryMidpointRoundsToNearestEven) {
  for (const Codec &codec : kCodecs) {
    for (uint32_t code = 0; code < codec.maxFinite; ++code) {
      float lo = codec.decode(code), hi = codec.decode(code + 1);
      ASSERT_LT(lo, hi) << codec.name << " code " << code;
      float mid = lo + (hi - lo) / 2; // Exact: f32 has the spare bits.
      uint32_t even = (code & 1) ? code + 1 : code;
      for (uint32_t sign : {0u, codec.signBit}) {
        float s = sign ? -1.0f : 1.0f;
        EXPECT_EQ(codec.encode(s * mid), sign | even)
            << codec.name << " mid " << mid;
        EXPECT_EQ(codec.encode(s * std::nextafter(mid, 0.0f)), sign | code)
            << codec.name << " below " << mid;
        EXPECT_EQ(codec.encode(s * std::nextafter(mid, kInf)),
                  sign | (code + 1))
            << codec.name << " above " << mid;
      }
    }
    // Beyond max: within half an ulp rounds to max, past it overflows.
    float max = codec.decode(codec.maxFinite);
    float ulp = max - codec.decode(codec.maxFinite - 1);
    EXPECT_EQ(codec.encode(std::nextafter(max + ulp / 2, 0.0f)),
              codec.maxFinite)
        << codec.name;
    EXPECT_EQ(codec.encode(max + ulp / 2), codec.overflowCode) << codec.name;
    EXPECT_EQ(codec.encode(max * 4), codec.overflowCode) << codec.name;
  }
}

// Random f32 inputs against a brute-force nearest search over all codes,
// which shares no code with the encoder.
TEST(ElementTypeTest, RandomValuesMatchNearestSearch) {
  std::mt19937 rng(1234);
  for (const Codec &codec : kCodecs) {
    float max = codec.decode(codec.maxFinite);
    std::vector<double> values(codec.maxFinite + 1);
    for (uint32_t code = 0; code <= codec.maxFinite; ++code)
      values[code] = codec.decode(code);
    std::uniform_real_distribution<float> logMagnitude(
        std::log2(static_cast<float>(values[1])) - 2, std::log2(max));
    for (int trial = 0; trial < 20000; ++trial) {
      float magnitude = std::exp2(logMagnitude(rng));
      auto it = std::lower_bound(values.begin(), values.end(),
                                 static_cast<double>(magnitude));
      uint32_t expected;
      if (it == values.end()) {
        expected = codec.maxFinite;
      } else if (it == values.begin()) {
        expected = 0;
      } else {
        uint32_t upper = static_cast<uint32_t>(it - values.begin());
        double dHi = values[upper] - magnitude;
        double dLo = magnitude - values[upper - 1];
        expected = dLo < dHi   ? upper - 1
                   : dHi < dLo ? upper
                               : ((upper & 1) ? upper - 1 : upper);
      }
      ASSERT_EQ(codec.encode(magnitude), expected)
          << codec.name << " value " << magnitude;
      ASSERT_EQ(codec.encode(-magnitude), codec.signBit | expected)
          << codec.name << " value " << -magnitude;
    }
  }
}

#ifdef __FLT16_MAX__
// The compiler's own f32 -> f16 conversion is an independent oracle.
TEST(ElementTypeTest, HalfMatchesCompilerFloat16) {
  std::mt19937 rng(99);
  std::uniform_int_distribution<uint32_t> anyBits;
  for (int trial = 0; trial < 200000; ++trial) {
    // Bias the exponent towards the f16 range half the time.
    uint32_t bits = anyBits(rng);
    if (trial & 1)
      bits = (bits & 0x807FFFFFu) | ((100u + (bits >> 23) % 50u) << 23);
    float value = floatOf(bits);
    _Float16 reference = static_cast<_Float16>(value);
    uint16_t referenceBits;
    std::memcpy(&referenceBits, &reference, sizeof(referenceBits));
    uint16_t ours = floatToHalf(value);
    if (std::isnan(value)) {
      EXPECT_EQ(ours & 0x7C00, 0x7C00);
      EXPECT_NE(ours & 0x3FF, 0);
      continue;
    }
    ASSERT_EQ(ours, referenceBits) << "f32 bits " << std::hex << bits;
    ASSERT_EQ(halfToFloat(ours), static_cast<float>(reference));
  }
}
#endif

TEST(ElementTypeTest, LoadStoreLittleEndian) {
  uint8_t bytes[4] = {0, 0, 0, 0};
  storeElement(ElementType::F32, 1.0f, bytes);
  EXPECT_EQ(bytes[0], 0x00);
  EXPECT_EQ(bytes[1], 0x00);
  EXPECT_EQ(bytes[2], 0x80);
  EXPECT_EQ(bytes[3], 0x3F);
  EXPECT_EQ(loadElement(ElementType::F32, bytes), 1.0f);

  uint8_t half[2];
  storeElement(ElementType::F16, -2.0f, half);
  EXPECT_EQ(half[0], 0x00);
  EXPECT_EQ(half[1], 0xC0);
  EXPECT_EQ(loadElement(ElementType::F16, half), -2.0f);
  // Rounds on store.
  storeElement(ElementType::F16, 1.0f + 0x1p-11f, half);
  EXPECT_EQ(half[0], 0x00);
  EXPECT_EQ(half[1], 0x3C);

  uint8_t byte = 0;
  storeElement(ElementType::F8E4M3FN, 1000.0f, &byte);
  EXPECT_EQ(byte, 0x7E);
  EXPECT_EQ(loadElement(ElementType::F8E4M3FN, &byte), 448.0f);
  storeElement(ElementType::F8E5M2, -1.0f, &byte);
  EXPECT_EQ(byte, 0xBC);
  EXPECT_EQ(loadElement(ElementType::F8E5M2, &byte), -1.0f);

  // Stores touch only the element's own bytes.
  uint8_t guard[6] = {0xA5, 0xA5, 0xA5, 0xA5, 0xA5, 0xA5};
  storeElement(ElementType::F16, 1.0f, guard + 1);
  EXPECT_EQ(guard[0], 0xA5);
  EXPECT_EQ(guard[3], 0xA5);
  storeElement(ElementType::F8E5M2, 1.0f, guard + 4);
  EXPECT_EQ(guard[5], 0xA5);
}
