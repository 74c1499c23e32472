//===- ElementType.h - Element types the machine computes on -------------===//
//
// Plain C++ view of the element types our kernels handle, with bit-exact
// conversions to and from f32 (round to nearest even, saturating for the
// f8 formats as their OCP definitions require).
//
//===----------------------------------------------------------------------===//

#ifndef IPU_SUPPORT_ELEMENTTYPE_H
#define IPU_SUPPORT_ELEMENTTYPE_H

#include <cstdint>
#include <optional>
#include <string_view>

namespace ipu {

enum class ElementType : uint8_t {
  F32 = 0,
  F16 = 1,
  F8E4M3FN = 2,
  F8E5M2 = 3,
};

/// Bytes of one element.
unsigned elementBytes(ElementType type);
/// MLIR spelling: "f32", "f16", "f8E4M3FN", "f8E5M2".
std::string_view elementTypeName(ElementType type);
std::optional<ElementType> parseElementType(std::string_view name);
bool isF8(ElementType type);

/// The range of an f8 GEMM's input scale exponent (the AMP multiplies each
/// product by 2^e): the IPU21's input scale register as the user's stack
/// sets it (osmarks/ipu-stack 7fad1a3, blocked_data.rs clamps a tensor's
/// power-of-two scale to [-32, 31]); that the register holds the sum of
/// both operands' exponents in the same range is an assumption.
constexpr int kF8InputScaleMin = -32;
constexpr int kF8InputScaleMax = 31;
/// Half the distance from 1 to the next value of `type` (2^-24 for f32,
/// 2^-11 for f16, 2^-4 for f8E4M3FN, 2^-3 for f8E5M2): the relative error
/// of rounding to it.
double unitRoundoff(ElementType type);
/// The smallest positive value of `type` (a subnormal): where rounding
/// stops being relative.
double smallestSubnormal(ElementType type);

/// Decodes one element stored at `bytes` to f32.
float loadElement(ElementType type, const uint8_t *bytes);
/// Encodes `value` (rounded to nearest even) into one element at `bytes`.
void storeElement(ElementType type, float value, uint8_t *bytes);

/// The bits of an f32, and the f32 of bits.
uint32_t floatBits(float value);
float bitsFloat(uint32_t bits);

/// Scalar conversions, exposed for tests.
float halfToFloat(uint16_t bits);
uint16_t floatToHalf(float value);
float f8E4M3FNToFloat(uint8_t bits);
uint8_t floatToF8E4M3FN(float value);
float f8E5M2ToFloat(uint8_t bits);
uint8_t floatToF8E5M2(float value);

} // namespace ipu

#endif // IPU_SUPPORT_ELEMENTTYPE_H
