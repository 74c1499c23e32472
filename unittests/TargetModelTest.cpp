//===- TargetModelTest.cpp - The ipu21 machine description ----------------===//

#include "IPU/Target/TargetModel.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <string>

using namespace ipu;

TEST(TargetModelTest, Ipu21Chip) {
  TargetModel t = TargetModel::ipu21();
  EXPECT_EQ(t.name, "ipu21");
  EXPECT_EQ(t.tiles, 1472u);
  EXPECT_DOUBLE_EQ(t.clockHz, 1.5e9);
  EXPECT_EQ(t.workersPerTile, 6u);
  EXPECT_EQ(t.vectorBytes, 8u);
  // Seed `peakTflops=282.624`.
  EXPECT_DOUBLE_EQ(t.peakFlopsF16(), 282.624e12);
  // The user's C600 upload, 453,752,832 bytes in 116 ms: the upload itself
  // takes 116 ms of device cycles at 1.5 GHz; a 30.4 MB so400m layer of f16
  // weights about 11.66 M cycles, beside the host sync.
  EXPECT_NEAR(t.hostLinkBytesPerSecond / 1e9, 3.9117, 1e-4);
  EXPECT_NEAR(double(t.hostStreamCycles(453752832) - t.hostStreamLatencyCycles), 174e6, 1);
  EXPECT_EQ(t.hostStreamCycles(0), t.hostStreamLatencyCycles);
  EXPECT_EQ(t.hostStreamCycles(30400000), t.hostStreamLatencyCycles + 11657448u);
  // PCIe Gen4 x16 at 32 GB/s as the bound: 32 bytes take 1.5 cycles.
  EXPECT_EQ(t.hostStreamCyclesPcieBound(32), t.hostStreamLatencyCycles + 2u);
  EXPECT_EQ(t.hostStreamCyclesPcieBound(30400000), t.hostStreamLatencyCycles + 1425000u);
  EXPECT_GT(t.hostStreamCycles(1 << 20), t.hostStreamCyclesPcieBound(1 << 20));
}

TEST(TargetModelTest, Ipu21Memory) {
  TargetModel t = TargetModel::ipu21();
  EXPECT_EQ(t.tileMemoryBytes, 638976u); // 624 KiB.
  EXPECT_EQ(t.standard.memoryClass, MemoryClass::Standard);
  EXPECT_EQ(t.standard.base, 0x4C000u);
  EXPECT_EQ(t.standard.bytes, 208u * 1024);
  EXPECT_EQ(t.standard.end(), 0x80000u); // Seed `standard_ranges` end.
  EXPECT_EQ(t.interleaved.memoryClass, MemoryClass::Interleaved);
  EXPECT_EQ(t.interleaved.base, 0x80000u);
  // The loader's limit, IPU21_APPLICATION_MEMORY_LIMIT (user's memory.rs).
  EXPECT_EQ(t.interleaved.bytes, 424880u);
  EXPECT_EQ(t.interleaved.end(), 0xE7BB0u);
  // The two regions are adjacent; the last 1,104 bytes of tile memory
  // cannot be loaded.
  EXPECT_EQ(t.standard.end(), t.interleaved.base);
  EXPECT_EQ(t.standard.bytes + t.interleaved.bytes + 1104, t.tileMemoryBytes);
  EXPECT_EQ(t.memoryElementBytes, 16384u);
  EXPECT_EQ(t.standard.base % t.memoryElementBytes, 0u);
  EXPECT_EQ(t.interleaved.base % t.memoryElementBytes, 0u);

  // The runtime below IPU21_DATA_BASE: 16 KiB of linked code, the 32 KiB
  // exchange window, 1,760 bytes of runtime state.
  EXPECT_EQ(t.runtimeLinkedCodeBytes, 16384u);
  EXPECT_EQ(t.exchangeWindowBytes, 32768u);
  EXPECT_EQ(t.runtimeStateBytes, 1760u);
  EXPECT_EQ(t.reservedStandardBytes, 50912u);
  EXPECT_EQ(t.allocatableBase(MemoryClass::Standard), 0x586E0u);
  EXPECT_EQ(t.allocatableBytes(MemoryClass::Standard), 162080u);
  EXPECT_EQ(t.allocatableBase(MemoryClass::Standard) +
                t.allocatableBytes(MemoryClass::Standard),
            t.standard.end());
  EXPECT_EQ(t.allocatableBase(MemoryClass::Interleaved), 0x80000u);
  EXPECT_EQ(t.allocatableBytes(MemoryClass::Interleaved), 424880u);
  // 586,960 usable bytes a tile, the user's IPU21_PLANNED_DATA_BYTES.
  EXPECT_EQ(t.allocatableBytes(MemoryClass::Standard) +
                t.allocatableBytes(MemoryClass::Interleaved),
            586960u);
  EXPECT_EQ(t.fetchGuardBytes, 64u);
  EXPECT_EQ(&t.region(MemoryClass::Standard), &t.standard);
  EXPECT_EQ(&t.region(MemoryClass::Interleaved), &t.interleaved);
}

TEST(TargetModelTest, Ipu21ComputeAndExchange) {
  TargetModel t = TargetModel::ipu21();
  // MACs per cycle by input and partials type (machine-model.md).
  EXPECT_EQ(t.ampMacsPerCycle(ElementType::F32, ElementType::F32), 16u);
  EXPECT_EQ(t.ampMacsPerCycle(ElementType::F16, ElementType::F16), 64u);
  EXPECT_EQ(t.ampMacsPerCycle(ElementType::F16, ElementType::F32), 32u);
  EXPECT_EQ(t.ampMacsPerCycle(ElementType::F8E4M3FN, ElementType::F16), 128u);
  EXPECT_EQ(t.ampMacsPerCycle(ElementType::F8E5M2, ElementType::F16), 128u);
  EXPECT_EQ(t.ampMacsPerCycle(ElementType::F8E4M3FN, ElementType::F32), 64u);
  // There is no f16-partials path for f32 inputs.
  EXPECT_EQ(t.ampMacsPerCycle(ElementType::F32, ElementType::F16), 0u);
  EXPECT_EQ(t.ampGrainK(ElementType::F32), 8u);
  EXPECT_EQ(t.ampGrainK(ElementType::F16), 16u);
  EXPECT_EQ(t.ampGrainK(ElementType::F8E4M3FN), 32u);
  EXPECT_EQ(t.ampGrainK(ElementType::F8E5M2), 32u);
  // The pass width follows the partials type.
  EXPECT_EQ(t.ampPassColumns(ElementType::F16), 16u);
  EXPECT_EQ(t.ampPassColumns(ElementType::F32), 8u);
  // Every rate is one row of a pass in 4 cycles: k x columns / MACs.
  EXPECT_EQ(16u * 16 / t.ampMacsPerCycle(ElementType::F16, ElementType::F16), 4u);
  EXPECT_EQ(16u * 8 / t.ampMacsPerCycle(ElementType::F16, ElementType::F32), 4u);
  EXPECT_EQ(32u * 16 / t.ampMacsPerCycle(ElementType::F8E4M3FN, ElementType::F16),
            4u);
  EXPECT_EQ(t.ampSupervisorOverheadCycles, 50u);
  EXPECT_EQ(t.vertexCallCycles, 25u);
  EXPECT_EQ(t.workerSupervisorCycles, 11u);
  EXPECT_EQ(t.workerPrologueInstructions, 17u);
  EXPECT_EQ(t.loadBytesPerCycleStandard, 8u);
  EXPECT_EQ(t.loadBytesPerCycleInterleaved, 16u);
  EXPECT_EQ(t.loadBytesPerCycle(MemoryClass::Standard), 8u);
  EXPECT_EQ(t.loadBytesPerCycle(MemoryClass::Interleaved), 16u);
  EXPECT_EQ(t.storeBytesPerCycle, 8u);
  EXPECT_EQ(t.exchange.wordBytes, 4u);
  // Poplar's global sync per phase, as the user's stack charges it; no sync
  // of its own beside it.
  EXPECT_EQ(t.exchange.phaseFixedCycles, 600u);
  EXPECT_EQ(t.syncCycles, 0u);
  // The user's hardware measurements: a 288-cycle copy call, 8 B a cycle.
  EXPECT_EQ(t.localCopyCycles(0), 0u);
  EXPECT_EQ(t.localCopyCycles(1), 289u);
  EXPECT_EQ(t.localCopyCycles(8000), 1288u);

}

TEST(TargetModelTest, FewerTilesKeepsEverythingElse) {
  TargetModel full = TargetModel::ipu21();
  TargetModel small = TargetModel::ipu21WithTiles(16);
  EXPECT_EQ(small.name, "ipu21-16");
  EXPECT_EQ(small.tiles, 16u);
  EXPECT_DOUBLE_EQ(small.peakFlopsF16(), full.peakFlopsF16() * 16 / 1472);
  EXPECT_EQ(small.clockHz, full.clockHz);
  EXPECT_EQ(small.tileMemoryBytes, full.tileMemoryBytes);
  EXPECT_EQ(small.standard.base, full.standard.base);
  EXPECT_EQ(small.interleaved.bytes, full.interleaved.bytes);
  EXPECT_EQ(small.reservedStandardBytes, full.reservedStandardBytes);
  EXPECT_EQ(small.ampMacsF16F32, full.ampMacsF16F32);
  EXPECT_EQ(small.exchange.phaseFixedCycles, full.exchange.phaseFixedCycles);
  EXPECT_EQ(small.exchange.tiles, 16u);
  EXPECT_EQ(small.syncCycles, full.syncCycles);
}

// Every cost constant is listed once with a source, and the table points at
// the field it names (sensitivity studies scale fields through it).
TEST(TargetModelTest, ConstantsTableNamesEveryField) {
  TargetModel t = TargetModel::ipu21();
  std::set<std::string> names;
  for (const TargetModel::Constant &constant : TargetModel::constants()) {
    EXPECT_TRUE(names.insert(constant.name).second) << constant.name;
    EXPECT_NE(std::string(constant.source), "") << constant.name;
    // A zero constant cannot be scaled: it would change no figure.
    EXPECT_GT(constant.get(t), 0.0) << constant.name;
    // Exactly one of the three kinds of field.
    EXPECT_EQ((constant.field != nullptr) + (constant.rate != nullptr) +
                  (constant.exchangeField != nullptr),
              1)
        << constant.name;
  }
  EXPECT_GE(names.size(), 25u);
  for (const TargetModel::Constant &constant : TargetModel::constants()) {
    // set writes the field get reads, and that field alone.
    TargetModel scaled = t;
    constant.set(scaled, 2 * constant.get(t));
    EXPECT_EQ(constant.get(scaled), 2 * constant.get(t)) << constant.name;
    for (const TargetModel::Constant &other : TargetModel::constants())
      if (&other != &constant)
        EXPECT_EQ(other.get(scaled), other.get(t)) << constant.name << " moved " << other.name;
    if (std::string(constant.name) == "memcpyBytesPerCycle")
      EXPECT_EQ(scaled.memcpyBytesPerCycle, 2 * t.memcpyBytesPerCycle);
    if (std::string(constant.name) == "exchange.phaseFixedCycles")
      EXPECT_EQ(scaled.exchange.phaseFixedCycles, 2 * t.exchange.phaseFixedCycles);
    if (std::string(constant.name) == "ewLoadStoreInstructions")
      EXPECT_EQ(scaled.ewLoadStoreInstructions, 2 * t.ewLoadStoreInstructions);
  }
}

// Rates are fractional: half of a rate of 1 is 0.5, which a whole-unit
// field could not hold (x0.5 of 1 was clamped back to 1).
TEST(TargetModelTest, RatesHalveBelowOne) {
  TargetModel t = TargetModel::ipu21();
  for (const char *name : {"ewLoadStoreInstructions", "ewArithInstructionsF16",
                           "reduceVectorInstructions", "reducePartialBytesPerCycle"}) {
    const auto &table = TargetModel::constants();
    auto constant = std::find_if(table.begin(), table.end(), [&](const TargetModel::Constant &c) {
      return std::string(c.name) == name;
    });
    ASSERT_NE(constant, table.end()) << name;
    EXPECT_TRUE(constant->fractional()) << name;
    EXPECT_EQ(constant->get(t), 1.0) << name;
    TargetModel halved = t;
    constant->set(halved, 0.5);
    EXPECT_EQ(constant->get(halved), 0.5) << name;
  }
}

// Every constant can be halved and doubled, as the sensitivity table does:
// a rate as a fraction, a whole-unit constant (cycles or events of one
// call, bytes) rounded to the nearest whole number, which every preset
// value is large enough to leave moved and near the factor (the worst,
// exchange.receiveGuardEvents = 5, halves to 3: x0.6; the table prints the
// factor applied). No constant is left "unscalable" by rounding back.
TEST(TargetModelTest, EveryConstantHalvesAndDoubles) {
  const TargetModel preset = TargetModel::ipu21();
  for (const TargetModel::Constant &constant : TargetModel::constants()) {
    const double base = constant.get(preset);
    for (double factor : {0.5, 2.0}) {
      double value = base * factor;
      if (!constant.fractional())
        value = std::round(value);
      EXPECT_NE(value, base) << constant.name << " x" << factor;
      EXPECT_NEAR(value / base, factor, factor / 4) << constant.name << " x" << factor;
      TargetModel scaled = preset;
      constant.set(scaled, value);
      std::string why;
      EXPECT_TRUE(TargetModel::byName(scaled.canonicalName(), &why).has_value())
          << scaled.canonicalName() << ": " << why;
    }
  }
}

// Every constant at x0.5 and x2 (rounded for a whole-unit one) has one
// name, which byName reads back as the same model; the preset's own value
// is no override.
TEST(TargetModelTest, OverridesRoundTripThroughTheName) {
  for (const char *presetName : {"ipu21", "ipu21-16"}) {
    const TargetModel preset = *TargetModel::byName(presetName);
    EXPECT_EQ(preset.canonicalName(), presetName);
    for (const TargetModel::Constant &constant : TargetModel::constants()) {
      for (double factor : {0.5, 2.0}) {
        TargetModel scaled = preset;
        double value = constant.get(preset) * factor;
        if (!constant.fractional())
          value = std::round(value);
        constant.set(scaled, value);
        const std::string name = scaled.canonicalName();
        std::string why;
        std::optional<TargetModel> read = TargetModel::byName(name, &why);
        ASSERT_TRUE(read.has_value()) << name << ": " << why;
        EXPECT_EQ(read->name, name);
        EXPECT_EQ(read->tiles, preset.tiles);
        for (const TargetModel::Constant &other : TargetModel::constants())
          EXPECT_EQ(other.get(*read), other.get(scaled)) << name << " " << other.name;
        if (value == constant.get(preset))
          EXPECT_EQ(name, presetName);
        else
          EXPECT_EQ(name.rfind(std::string(presetName) + "+" + constant.name + "=", 0), 0u)
              << name;
      }
    }
  }
  // Two overrides, in the table's order.
  std::optional<TargetModel> two =
      TargetModel::byName("ipu21-4+vertexCallCycles=50+ewLoadStoreInstructions=0.5");
  ASSERT_TRUE(two.has_value());
  EXPECT_EQ(two->vertexCallCycles, 50u);
  EXPECT_EQ(two->ewLoadStoreInstructions, 0.5);
  EXPECT_EQ(two->tiles, 4u);
  EXPECT_EQ(two->ampMacsF16F16, TargetModel::ipu21().ampMacsF16F16);
}

// A name that is not canonical, or whose override is not a number of the
// constant's kind within range, is refused with the reason.
TEST(TargetModelTest, OverridesRefuseBadNamesWithTheReason) {
  const std::pair<const char *, const char *> cases[] = {
      {"ipu22+vertexCallCycles=50", "unknown target 'ipu22'"},
      {"ipu21+", "'' is not CONSTANT=VALUE"},
      {"ipu21+vertexCallCycles", "'vertexCallCycles' is not CONSTANT=VALUE"},
      {"ipu21+tiles=4", "'tiles' is no cost constant"},
      {"ipu21+vertexCallCycles=", "takes a number, got ''"},
      {"ipu21+vertexCallCycles=fifty", "takes a number, got 'fifty'"},
      {"ipu21+vertexCallCycles=50x", "takes a number, got '50x'"},
      {"ipu21+vertexCallCycles=inf", "takes a number, got 'inf'"},
      {"ipu21+vertexCallCycles=nan", "takes a number, got 'nan'"},
      {"ipu21+vertexCallCycles= 50", "takes a number, got ' 50'"},
      {"ipu21+vertexCallCycles=0x32", "takes a number, got '0x32'"},
      {"ipu21+vertexCallCycles=12.5", "counts whole units, got 12.5"},
      {"ipu21+vertexCallCycles=1", "is not within 1/16x and 16x of ipu21's 25"},
      {"ipu21+vertexCallCycles=401", "is not within 1/16x and 16x"},
      {"ipu21+ewLoadStoreInstructions=0", "is not within 1/16x and 16x"},
      {"ipu21+ewLoadStoreInstructions=-1", "is not within 1/16x and 16x"},
      {"ipu21+vertexCallCycles=50.0", "write 'ipu21+vertexCallCycles=50'"},
      {"ipu21+vertexCallCycles=25", "write 'ipu21'"},
      {"ipu21+ewLoadStoreInstructions=0.5+vertexCallCycles=50",
       "write 'ipu21+vertexCallCycles=50+ewLoadStoreInstructions=0.5'"},
      {"ipu21+vertexCallCycles=50+vertexCallCycles=50", "write 'ipu21+vertexCallCycles=50'"},
  };
  for (const auto &[name, reason] : cases) {
    std::string why;
    EXPECT_FALSE(TargetModel::byName(name, &why).has_value()) << name;
    EXPECT_NE(why.find(reason), std::string::npos) << name << ": " << why;
  }
}

TEST(TargetModelTest, ByNameAcceptsPresets) {
  auto full = TargetModel::byName("ipu21");
  ASSERT_TRUE(full.has_value());
  EXPECT_EQ(full->name, "ipu21");
  EXPECT_EQ(full->tiles, 1472u);
  for (uint32_t tiles : {1u, 4u, 16u, 100u, 1471u, 1472u}) {
    std::string name = "ipu21-" + std::to_string(tiles);
    auto t = TargetModel::byName(name);
    ASSERT_TRUE(t.has_value()) << name;
    EXPECT_EQ(t->name, name);
    EXPECT_EQ(t->tiles, tiles);
  }
}

TEST(TargetModelTest, ByNameRejectsGarbage) {
  for (const char *bad :
       {"", "ipu", "ipu2", "ipu22", "IPU21", "ipu21 ", " ipu21", "ipu21-",
        "ipu21-0", "ipu21-x", "ipu21-4x", "ipu21-+4", "ipu21--4", "ipu21-04",
        "ipu21-1473", "ipu21-99999", "ipu21-4294967297", "ipu214",
        "ipu21_4"})
    EXPECT_FALSE(TargetModel::byName(bad).has_value()) << '"' << bad << '"';
}

TEST(TargetModelTest, KnownNames) {
  std::string names = TargetModel::knownNames();
  EXPECT_EQ(names, "ipu21, ipu21-N (1 <= N <= 1472), either followed by +CONSTANT=VALUE "
                   "overrides of cost constants");
}

TEST(TargetModelTest, MemoryClassNames) {
  EXPECT_EQ(memoryClassName(MemoryClass::Standard), "standard");
  EXPECT_EQ(memoryClassName(MemoryClass::Interleaved), "interleaved");
  EXPECT_EQ(parseMemoryClass("standard"), MemoryClass::Standard);
  EXPECT_EQ(parseMemoryClass("interleaved"), MemoryClass::Interleaved);
  EXPECT_FALSE(parseMemoryClass("Standard").has_value());
  EXPECT_FALSE(parseMemoryClass("").has_value());
  EXPECT_FALSE(parseMemoryClass("interleave").has_value());
}
