//===- OwnPeakTest.cpp - No GEMM vertex beats its types' AMP peak ---------===//
//
// efficiencyOwnPeakPercent (ipu-run's headline efficiency) divides the
// program's MACs at its types' AMP rate on every tile by the simulated
// cycles. It stays at or below 100% as long as no GEMM vertex is estimated
// faster than its MACs at that rate: a compute set takes its busiest tile's
// cycles, at least the average over the tiles, which is then at least the
// set's MACs over (rate x tiles). f8 with f16 partials runs at twice f16's
// rate and is held to that, not to the f16 peak (fc1 f8: 49.37% of its
// own peak, 98.73% of f16's).
//
//===----------------------------------------------------------------------===//

#include "IPU/Device/Kernels.h"

#include <gtest/gtest.h>

#include <random>
#include <string>

using namespace ipu;

TEST(OwnPeak, NoGemmVertexBeatsItsTypesAmpRate) {
  const TargetModel target = TargetModel::ipu21();
  const ElementType f32 = ElementType::F32, f16 = ElementType::F16,
                    f8 = ElementType::F8E4M3FN;
  const std::pair<ElementType, ElementType> types[] = {
      {f32, f32}, {f16, f32}, {f16, f16}, {f8, f32}, {f8, f16}};
  std::mt19937 random(45);
  auto draw = [&](int64_t low, int64_t high) {
    return std::uniform_int_distribution<int64_t>(low, high)(random);
  };
  for (int trial = 0; trial < 2000; ++trial) {
    const auto [in, partials] = types[trial % 5];
    const uint32_t rate = target.ampMacsPerCycle(in, partials);
    ASSERT_GT(rate, 0u);
    const int64_t m = draw(1, 800), k = draw(1, 1200), n = draw(1, 300);
    const MemoryClass held = draw(0, 1) ? MemoryClass::Interleaved : MemoryClass::Standard;
    const GemmCostShape shape(m, k, n, in, partials, draw(0, 1) ? f32 : f16, held);
    const uint64_t cycles = estimateGemmCycles(target, shape);
    SCOPED_TRACE("trial " + std::to_string(trial) + ": " + std::to_string(m) + "x" +
                 std::to_string(k) + "x" + std::to_string(n));
    EXPECT_GE(double(cycles) * rate, double(m) * double(k) * double(n));
  }
}
