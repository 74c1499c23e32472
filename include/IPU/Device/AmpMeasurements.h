//===- AmpMeasurements.h - Measured cycles of the AMP vertex on hardware --===//
//
// The hardware measurement the AMP estimator is calibrated on, as published
// data: graphcore-research/tessellate-ipu, notebooks/"IPU Peak
// Flops.ipynb" (commit 3ab241f), runs one poplibs ConvPartial1x1 vertex per
// tile of a Bow IPU (1,472 tiles at 1.85 GHz), [N x 16] x [16 x 16], f16
// inputs and f16 partials, N = 16, 32, ..., 2,048, and prints the chip's
// TFLOP/s from each tile's mean cycle count less the cycle counter's own
// overhead. The values below are those printed numbers, unchanged; the
// cycles per vertex follow exactly: 2 N 16 16 x 1,472 x 1.85e9 /
// (TFLOP/s x 1e12).
//
//===----------------------------------------------------------------------===//

#ifndef IPU_DEVICE_AMPMEASUREMENTS_H
#define IPU_DEVICE_AMPMEASUREMENTS_H

#include <cmath>
#include <cstdint>
#include <optional>

namespace ipu {

/// TFLOP/s of the whole chip at N = 16 (i + 1), i = 0..127.
inline constexpr double kTessellateAmpTflops[128] = {
    55.49366766, 96.70991447, 127.72015878, 152.79763288,
    170.72418021, 186.94235531, 201.23605773, 211.11875736,
    221.11904141, 230.45923967, 236.55806879, 243.36495709,
    250.00854069, 254.0509482, 258.99908359, 264.00537751,
    266.82080765, 270.58772183, 274.52113575, 276.54860334,
    279.52120668, 282.71082765, 284.20808654, 286.61825782,
    289.26937759, 290.39578638, 292.3923635, 294.63996377,
    295.49748827, 297.18189698, 299.11854948, 299.77583828,
    301.21890147, 302.91032332, 303.4163886, 304.66781426,
    306.16202255, 306.55200957, 307.64841641, 308.98136288,
    309.27992413, 310.25002808, 311.44920104, 311.67522347,
    312.5406127, 313.62741516, 313.79524575, 314.5728,
    315.56416443, 315.68389506, 316.38797953, 317.29749147,
    317.37924575, 318.01914931, 318.85784615, 318.90841331,
    319.4929399, 320.2698899, 320.29384353, 320.83107958,
    321.5538087, 321.5563996, 322.05147278, 322.72628427,
    322.7102802, 323.16900579, 323.80122288, 323.76958892,
    324.19615703, 324.79030948, 324.74585655, 325.14346494,
    325.70343424, 325.64817259, 326.01989088, 326.54902435,
    326.48463306, 326.83310353, 327.3343049, 327.26284615,
    327.58970384, 328.06550588, 327.98718028, 328.29540463,
    328.74802774, 328.66417002, 328.95517505, 329.38657503,
    329.29774649, 329.57335785, 329.98526502, 329.89250389,
    330.15376499, 330.54771652, 330.4522102, 330.69975639,
    331.07712313, 330.97829062, 331.21430498, 331.57631391,
    331.47544484, 331.70005085, 332.04780393, 331.94476957,
    332.15934657, 332.49383667, 332.3897526, 332.59429531,
    332.91641972, 332.81082649, 333.006783, 333.31735496,
    333.21052703, 333.39850572, 333.69826431, 333.5909087,
    333.77099294, 334.06061157, 333.95245959, 334.12562756,
    334.40572131, 334.29718004, 334.46366299, 334.73479497,
    334.62645228, 334.78623802, 335.04892488, 334.94046716,
};

/// The measured cycles of one [N x 16] x [16 x 16] f16 ConvPartial1x1
/// vertex, for N a multiple of 16 from 16 to 2,048; nothing otherwise.
inline std::optional<double> measuredAmpVertexCycles(int64_t n) {
  if (n < 16 || n > 2048 || n % 16 != 0)
    return std::nullopt;
  constexpr double kTiles = 1472, kClockHz = 1.85e9;
  const double flops = 2.0 * double(n) * 16 * 16 * kTiles;
  return flops * kClockHz / (kTessellateAmpTflops[n / 16 - 1] * 1e12);
}

} // namespace ipu

#endif // IPU_DEVICE_AMPMEASUREMENTS_H
