//===- AllocatorTest.cpp - Storage placement tests -----------------------===//

#include "IPU/Storage/Allocator.h"
#include "IPU/Storage/ReservedArea.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <random>

using namespace ipu;

namespace {

BufferRequest makeRequest(std::string name, uint64_t bytes, uint32_t first,
                          uint32_t last, std::vector<uint32_t> tiles,
                          MemoryClass memoryClass = MemoryClass::Standard,
                          uint32_t alignment = 8) {
  BufferRequest request;
  request.name = std::move(name);
  request.memoryClass = memoryClass;
  request.bytes = bytes;
  request.alignment = alignment;
  request.firstUse = first;
  request.lastUse = last;
  request.tiles = std::move(tiles);
  return request;
}

uint64_t classBase(const TargetModel &target, MemoryClass memoryClass,
                   uint32_t reserved) {
  return target.allocatableBase(memoryClass) +
         (memoryClass == MemoryClass::Standard ? reserved : 0);
}

bool tilesIntersect(const std::vector<uint32_t> &a,
                    const std::vector<uint32_t> &b) {
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (a[i] == b[j])
      return true;
    if (a[i] < b[j])
      ++i;
    else
      ++j;
  }
  return false;
}

bool conflict(const BufferRequest &a, const BufferRequest &b) {
  return a.memoryClass == b.memoryClass && a.firstUse <= b.lastUse &&
         b.firstUse <= a.lastUse && tilesIntersect(a.tiles, b.tiles);
}

/// Brute-force max-live bound of one class.
uint64_t bruteForceBound(const TargetModel &target,
                         const std::vector<BufferRequest> &requests,
                         MemoryClass memoryClass) {
  uint32_t maxStep = 0;
  for (const BufferRequest &request : requests)
    maxStep = std::max(maxStep, request.lastUse);
  uint64_t bound = 0;
  for (uint32_t tile = 0; tile < target.tiles; ++tile)
    for (uint32_t step = 0; step <= maxStep; ++step) {
      uint64_t live = 0;
      for (const BufferRequest &request : requests)
        if (request.memoryClass == memoryClass && request.firstUse <= step &&
            step <= request.lastUse &&
            std::binary_search(request.tiles.begin(), request.tiles.end(),
                               tile))
          live += request.bytes;
      bound = std::max(bound, live);
    }
  return bound;
}

uint64_t liveOnTile(const std::vector<BufferRequest> &requests,
                    MemoryClass memoryClass, uint32_t tile) {
  uint32_t maxStep = 0;
  for (const BufferRequest &request : requests)
    maxStep = std::max(maxStep, request.lastUse);
  uint64_t most = 0;
  for (uint32_t step = 0; step <= maxStep; ++step) {
    uint64_t live = 0;
    for (const BufferRequest &request : requests)
      if (request.memoryClass == memoryClass && request.firstUse <= step &&
          step <= request.lastUse &&
          std::binary_search(request.tiles.begin(), request.tiles.end(), tile))
        live += request.bytes;
    most = std::max(most, live);
  }
  return most;
}

/// Every property a placement must have.
void checkPlacement(const TargetModel &target,
                    const std::vector<BufferRequest> &requests,
                    uint32_t reserved, const Placement &placement) {
  ASSERT_EQ(placement.address.size(), requests.size());
  for (size_t i = 0; i < requests.size(); ++i) {
    const BufferRequest &request = requests[i];
    uint64_t address = placement.address[i];
    uint64_t base = classBase(target, request.memoryClass, reserved);
    EXPECT_GE(address, base) << request.name;
    EXPECT_LE(address + request.bytes,
              uint64_t(target.region(request.memoryClass).end()))
        << request.name;
    if (request.bytes > 0)
      EXPECT_EQ(address % std::max<uint32_t>(request.alignment, 1), 0u)
          << request.name;
    else
      EXPECT_EQ(address, base) << request.name;
    for (size_t j = 0; j < i; ++j) {
      if (!requests[j].bytes || !request.bytes ||
          !conflict(request, requests[j]))
        continue;
      uint64_t other = placement.address[j];
      bool disjoint = address + request.bytes <= other ||
                      other + requests[j].bytes <= address;
      EXPECT_TRUE(disjoint) << request.name << " overlaps " << requests[j].name;
    }
  }
  for (MemoryClass memoryClass :
       {MemoryClass::Standard, MemoryClass::Interleaved}) {
    unsigned c = unsigned(memoryClass);
    uint64_t highest = classBase(target, memoryClass, reserved);
    for (size_t i = 0; i < requests.size(); ++i)
      if (requests[i].memoryClass == memoryClass)
        highest = std::max(highest, placement.address[i] + requests[i].bytes);
    EXPECT_EQ(placement.peakBytes[c],
              highest - classBase(target, memoryClass, reserved));
    uint64_t bound = bruteForceBound(target, requests, memoryClass);
    EXPECT_EQ(placement.boundBytes[c], bound);
    EXPECT_GE(placement.peakBytes[c], placement.boundBytes[c]);
    EXPECT_EQ(liveOnTile(requests, memoryClass, placement.peakTile[c]), bound);
  }
}

TargetModel smallTarget(uint32_t tiles = 16) {
  return TargetModel::ipu21WithTiles(tiles);
}

TEST(Allocator, LongLivedFirstWhenDecreasingSizeFragments) {
  // On one tile with room for ten units: L (3) lives throughout, X (5) and
  // Z (2) in the first half, Y (6) in the second, so at most 10 units are
  // live at once. Decreasing size puts Y and X at 0 and L above Y, which
  // leaves Z no hole; long-lived first puts L at 0 and everything fits.
  TargetModel target = TargetModel::ipu21WithTiles(4);
  const uint64_t unit = target.allocatableBytes(MemoryClass::Standard) / 10 / 8 * 8;
  std::vector<BufferRequest> requests = {
      makeRequest("L", 3 * unit, 0, 10, {0}), makeRequest("X", 5 * unit, 0, 4, {0}),
      makeRequest("Y", 6 * unit, 5, 10, {0}), makeRequest("Z", 2 * unit, 0, 4, {0})};
  Placement placement;
  ASSERT_EQ(placeBuffers(target, requests, 0, placement), std::nullopt);
  const uint64_t base = classBase(target, MemoryClass::Standard, 0);
  EXPECT_EQ(placement.address[0], base); // L at the bottom.
  for (size_t a = 0; a < requests.size(); ++a)
    for (size_t b = a + 1; b < requests.size(); ++b)
      if (conflict(requests[a], requests[b]))
        EXPECT_TRUE(placement.address[a] + requests[a].bytes <= placement.address[b] ||
                    placement.address[b] + requests[b].bytes <= placement.address[a])
            << requests[a].name << " overlaps " << requests[b].name;
  EXPECT_EQ(placement.boundBytes[0], 10 * unit);

  // One unit more live than there is room for: no order fits, and the
  // error says so beside the memory map.
  requests[3].bytes = 3 * unit;
  std::optional<std::string> error = placeBuffers(target, requests, 0, placement);
  ASSERT_TRUE(error.has_value());
  EXPECT_NE(error->find("the most bytes live at once in this class are " +
                        std::to_string(11 * unit) + " on tile 0"),
            std::string::npos)
      << *error;
}

TEST(ReservedArea, ExchangeCodeFromTheTimedRowsVertexStateAndKernelsOncePerTile) {
  TargetModel target = TargetModel::ipu21WithTiles(4);
  ExchangePhase phase;
  phase.tiles = 4;
  phase.addTransfer(0, 4, {1, 2});
  phase.addTransfer(1, 4, {0});
  TransferAddresses addresses = packedAddresses(target, phase);
  ExchangeSchedule schedule = scheduleTimedPhase(target, phase, addresses);
  ASSERT_FALSE(checkTimedSchedule(target, phase, schedule, addresses));
  ReservedArea area(target);
  area.addPhase(phase, schedule, addresses);
  // Each tile keeps its own row of the phase, as the timing model counts
  // it; a tile without a part keeps its return word.
  PhaseTiming timing =
      timePhase(target.exchange, timedMessages(target.exchange, phase, schedule, addresses));
  for (uint32_t tile = 0; tile < 4; ++tile)
    EXPECT_EQ(area.exchangeCodeBytes(tile), timing.codeBytesPerTile[tile]) << tile;
  EXPECT_EQ(area.exchangeCodeBytes(3), target.exchange.instructionBytes);
  EXPECT_GT(area.exchangeCodeBytes(0), area.exchangeCodeBytes(3));
  EXPECT_GT(area.exchangeCodeBytes(1), area.exchangeCodeBytes(3));
  area.addVertices({0, 3}, 3, 2);
  area.addKernelCode({0, 3}, "ew0", 100);
  area.addKernelCode({3}, "ew0", 100); // The same kernel again: once a tile.
  area.addKernelCode({3}, "ew1", 60);
  EXPECT_EQ(area.vertexStateBytes(3), target.vertexStateBytes(3, 2));
  EXPECT_EQ(area.kernelCodeBytes(3), 160u);
  EXPECT_EQ(area.kernelCodeBytes(0), 100u);
  // From the first allocatable byte (0x586E0), vertex state and kernel
  // code; the exchange rows from the runtime's element's end (0x5C000) at
  // the earliest, + a 64-byte fetch guard; the whole area end-aligned to a
  // 16 KiB element.
  const uint64_t base = target.allocatableBase(MemoryClass::Standard);
  EXPECT_EQ(base, 0x586E0u);
  EXPECT_EQ(target.fetchGuardBytes, 64u);
  for (uint32_t tile = 0; tile < 4; ++tile) {
    const uint64_t codeEnd = base + area.vertexStateBytes(tile) + area.kernelCodeBytes(tile);
    const uint64_t exchangeStart = std::max<uint64_t>(codeEnd, 0x5C000);
    EXPECT_EQ(exchangeStart, 0x5C000u) << tile;
    const uint64_t end = exchangeStart + area.exchangeCodeBytes(tile) + 64;
    EXPECT_EQ(base + area.bytesOn(tile), (end + 16383) / 16384 * 16384) << tile;
    EXPECT_EQ((base + area.bytesOn(tile)) % 16384, 0u) << tile;
    EXPECT_GE(area.bytesOn(tile), area.perTile()[tile] + 64) << tile;
  }
  uint64_t most = 0;
  for (uint32_t tile = 0; tile < 4; ++tile)
    most = std::max(most, area.bytesOn(tile));
  EXPECT_EQ(area.bytesOn(area.busiestTile()), most);
  EXPECT_EQ(area.bytes(), most);
  // One element of exchange code, the guard included: 0x5C000 + 16 KiB.
  EXPECT_EQ(base + area.bytes(), 0x60000u);
}

TEST(ReservedArea, ExchangeCodeAndItsGuardTakeWholeElements) {
  TargetModel target = TargetModel::ipu21WithTiles(2);
  const uint64_t base = target.allocatableBase(MemoryClass::Standard);
  // Nothing reserved: nothing kept.
  EXPECT_EQ(ReservedArea(target).bytes(), 0u);
  for (uint32_t code : {8u, 16384u - 64, 16384u - 63, 16384u, 40000u}) {
    ReservedArea area(target);
    area.addExchangeCode({code, 8});
    const uint64_t elements = (code + 64 + 16383) / 16384;
    EXPECT_EQ(base + area.bytes(), 0x5C000u + elements * 16384) << code;
    EXPECT_EQ(area.busiestTile(), 0u) << code;
  }
  // Exchange rows follow kernel code that reaches past the runtime's
  // element in the same element: code and vertex state are no transfer's
  // source or destination.
  ReservedArea area(target);
  area.addKernelCode({1}, "ew0", 0x5C000 - base + 1);
  area.addExchangeCode({8, 8});
  EXPECT_EQ(area.busiestTile(), 0u);
  EXPECT_EQ(base + area.bytesOn(0), 0x60000u);
  EXPECT_EQ(base + area.bytesOn(1), 0x60000u);
  // Until code and rows together cross into the next element.
  ReservedArea crossing(target);
  crossing.addKernelCode({1}, "ew0", 0x5C000 - base + 8000);
  crossing.addExchangeCode({8, 16384 - 8000 - 64 + 1});
  EXPECT_EQ(crossing.busiestTile(), 1u);
  EXPECT_EQ(base + crossing.bytesOn(0), 0x60000u);
  EXPECT_EQ(base + crossing.bytesOn(1), 0x64000u);
  // Kernel code alone is end-aligned too.
  ReservedArea codeOnly(target);
  codeOnly.addKernelCode({0}, "ew0", 100);
  EXPECT_EQ(base + codeOnly.bytes(), 0x5C000u);
}

} // namespace

/// The SRAM conflict unit of a standard address (16 KiB elements).
uint64_t elementOf(uint64_t address) { return address / 16384; }

TEST(Allocator, PhasePartnersTakeConflictUnitsOfTheirOwnWhereThereIsRoom) {
  // A phase reads S and writes D on tile 0; N is a bystander. S and D end
  // up in different 16 KiB elements, every byte of each; N packs anywhere.
  TargetModel target = smallTarget(4);
  std::vector<BufferRequest> requests = {
      makeRequest("S", 1024, 0, 2, {0, 1}), makeRequest("D", 2048, 0, 2, {0}),
      makeRequest("N", 512, 0, 2, {0})};
  requests[0].apartFrom = {1};
  requests[1].apartFrom = {0};
  Placement placement;
  ASSERT_FALSE(placeBuffers(target, requests, 0, placement));
  auto units = [&](size_t i) {
    uint64_t a = placement.address[i];
    return std::pair{elementOf(a), elementOf(a + requests[i].bytes - 1)};
  };
  EXPECT_TRUE(units(0).second < units(1).first || units(1).second < units(0).first)
      << "S and D share an element";
  // Without the preference they pack into one element.
  requests[0].apartFrom.clear();
  requests[1].apartFrom.clear();
  Placement packed;
  ASSERT_FALSE(placeBuffers(target, requests, 0, packed));
  EXPECT_EQ(elementOf(packed.address[0]), elementOf(packed.address[1]));
  EXPECT_LT(packed.peakBytes[0], placement.peakBytes[0]);
}

TEST(Allocator, PhasePartnersPackWhenKeepingThemApartDoesNotFit) {
  // Two partners of most of standard memory each cannot both start an
  // element of their own and fit: they are placed as before.
  TargetModel target = smallTarget(4);
  const uint64_t half = target.allocatableBytes(MemoryClass::Standard) / 2 / 8 * 8;
  std::vector<BufferRequest> requests = {makeRequest("S", half, 0, 1, {0}),
                                         makeRequest("D", half, 0, 1, {0})};
  requests[0].apartFrom = {1};
  requests[1].apartFrom = {0};
  Placement placement;
  EXPECT_FALSE(placeBuffers(target, requests, 0, placement));
  EXPECT_EQ(placement.peakBytes[0], 2 * half);
}

TEST(Allocator, PhasePartnersShareTheFewestBytesWhenTheyCannotBeApart) {
  // S fills most of standard memory, so D cannot start an element of its
  // own; of every aligned address where D fits beside S, it takes one that
  // shares the fewest bytes with S's elements (SigLIP MLP with f16
  // partials: the partials and their gathered copy).
  TargetModel target = smallTarget(4);
  const uint64_t base = target.allocatableBase(MemoryClass::Standard);
  const uint64_t end = target.standard.end();
  for (uint64_t dBytes : {6000u, 17216u, 20000u}) {
    for (uint64_t slack : {0u, 1000u, 4096u, 9000u}) {
      SCOPED_TRACE("D " + std::to_string(dBytes) + " B, slack " + std::to_string(slack));
      const uint64_t sBytes = (end - base - dBytes - slack) / 8 * 8;
      std::vector<BufferRequest> requests = {makeRequest("S", sBytes, 0, 1, {0}),
                                             makeRequest("D", dBytes, 0, 1, {0})};
      requests[0].apartFrom = {1};
      requests[1].apartFrom = {0};
      Placement placement;
      ASSERT_FALSE(placeBuffers(target, requests, 0, placement));
      checkPlacement(target, requests, 0, placement);
      // S's elements, and the bytes an address of D shares with them.
      const uint64_t s = placement.address[0];
      const uint64_t sUnitsBegin = elementOf(s) * 16384;
      const uint64_t sUnitsEnd = (elementOf(s + sBytes - 1) + 1) * 16384;
      auto shared = [&](uint64_t at) {
        return std::max<int64_t>(0, int64_t(std::min(sUnitsEnd, at + dBytes)) -
                                        int64_t(std::max(sUnitsBegin, at)));
      };
      int64_t fewest = INT64_MAX;
      for (uint64_t at = base; at + dBytes <= end; at += 8)
        if (at + dBytes <= s || at >= s + sBytes)
          fewest = std::min(fewest, shared(at));
      EXPECT_EQ(shared(placement.address[1]), fewest);
    }
  }
}

TEST(Allocator, PlacesFromBaseAboveReservedBytes) {
  TargetModel target = smallTarget();
  std::vector<BufferRequest> requests = {
      makeRequest("a", 1000, 0, 3, {0, 1}),
      makeRequest("b", 4096, 0, 3, {1, 2}),
      makeRequest("w", 2048, 0, 3, {1}, MemoryClass::Interleaved, 16),
  };
  Placement placement;
  ASSERT_EQ(placeBuffers(target, requests, 256, placement), std::nullopt);
  uint64_t standardBase = classBase(target, MemoryClass::Standard, 256);
  // Decreasing size: b first at the base, then a above it.
  EXPECT_EQ(placement.address[1], standardBase);
  EXPECT_EQ(placement.address[0], standardBase + 4096);
  EXPECT_EQ(placement.address[2],
            target.allocatableBase(MemoryClass::Interleaved));
  EXPECT_EQ(placement.peakBytes[0], 4096u + 1000u);
  EXPECT_EQ(placement.boundBytes[0], 5096u);
  EXPECT_EQ(placement.peakTile[0], 1u);
  EXPECT_EQ(placement.peakBytes[1], 2048u);
  EXPECT_EQ(placement.boundBytes[1], 2048u);
  EXPECT_EQ(placement.peakTile[1], 1u);
  checkPlacement(target, requests, 256, placement);
}

TEST(Allocator, LivenessLetsBuffersShareAnAddress) {
  TargetModel target = smallTarget();
  std::vector<BufferRequest> requests = {
      makeRequest("early", 8192, 0, 2, {0, 1, 2, 3}),
      makeRequest("late", 8192, 3, 5, {0, 1, 2, 3}),
      makeRequest("overlapping", 8192, 2, 3, {3}),
  };
  Placement placement;
  ASSERT_EQ(placeBuffers(target, requests, 0, placement), std::nullopt);
  EXPECT_EQ(placement.address[0], placement.address[1]);
  EXPECT_NE(placement.address[2], placement.address[0]);
  EXPECT_EQ(placement.peakBytes[0], 16384u);
  EXPECT_EQ(placement.boundBytes[0], 16384u);
  EXPECT_EQ(placement.peakTile[0], 3u);
  checkPlacement(target, requests, 0, placement);
}

TEST(Allocator, DisjointTilesShareAnAddress) {
  TargetModel target = smallTarget(200);
  std::vector<BufferRequest> requests = {
      makeRequest("low", 4096, 0, 9, {0, 1, 63, 64}),
      makeRequest("high", 4096, 0, 9, {65, 128, 199}),
      makeRequest("both", 4096, 0, 9, {64, 65}),
  };
  Placement placement;
  ASSERT_EQ(placeBuffers(target, requests, 0, placement), std::nullopt);
  EXPECT_EQ(placement.address[0], placement.address[1]);
  EXPECT_EQ(placement.address[2], placement.address[0] + 4096);
  checkPlacement(target, requests, 0, placement);
}

TEST(Allocator, AlignmentAndZeroBytes) {
  TargetModel target = smallTarget();
  std::vector<BufferRequest> requests = {
      makeRequest("odd", 13, 0, 0, {0}, MemoryClass::Standard, 1),
      makeRequest("aligned", 8, 0, 0, {0}, MemoryClass::Standard, 64),
      makeRequest("empty", 0, 0, 0, {0}, MemoryClass::Standard, 64),
      makeRequest("zeroAlign", 8, 0, 0, {0}, MemoryClass::Standard, 0),
  };
  Placement placement;
  ASSERT_EQ(placeBuffers(target, requests, 4, placement), std::nullopt);
  uint64_t base = classBase(target, MemoryClass::Standard, 4);
  EXPECT_EQ(placement.address[0], base);
  EXPECT_EQ(placement.address[1] % 64, 0u);
  EXPECT_EQ(placement.address[2], base);
  checkPlacement(target, requests, 4, placement);
}

TEST(Allocator, RejectsMalformedRequests) {
  TargetModel target = smallTarget();
  Placement placement;
  auto error =
      placeBuffers(target, {makeRequest("noTiles", 8, 0, 0, {})}, 0, placement);
  ASSERT_TRUE(error);
  EXPECT_NE(error->find("'noTiles'"), std::string::npos) << *error;
  EXPECT_NE(error->find("empty tile list"), std::string::npos) << *error;

  error = placeBuffers(target, {makeRequest("backwards", 8, 5, 2, {0})}, 0,
                       placement);
  ASSERT_TRUE(error);
  EXPECT_NE(error->find("'backwards'"), std::string::npos) << *error;

  error = placeBuffers(target, {makeRequest("far", 8, 0, 0, {3, 16})}, 0,
                       placement);
  ASSERT_TRUE(error);
  EXPECT_NE(error->find("'far'"), std::string::npos) << *error;
  EXPECT_NE(error->find("tile 16"), std::string::npos) << *error;

  error = placeBuffers(target, {makeRequest("unsorted", 8, 0, 0, {3, 2})}, 0,
                       placement);
  ASSERT_TRUE(error);
  EXPECT_NE(error->find("'unsorted'"), std::string::npos) << *error;
}

TEST(Allocator, OverflowNamesTileBytesAndMemoryMap) {
  TargetModel target = smallTarget();
  uint64_t available = target.region(MemoryClass::Standard).end() -
                       classBase(target, MemoryClass::Standard, 1024);
  uint64_t big = available / 2;
  std::vector<BufferRequest> requests = {
      makeRequest("b", big, 0, 4, {5, 6}),
      makeRequest("c", big - 4096, 2, 6, {4, 5}),
      makeRequest("a.bcast", 12288, 3, 3, {1, 5}),
      makeRequest("elsewhere", big, 3, 3, {7}),
  };
  Placement placement;
  MemoryOverflow overflow;
  auto error = placeBuffers(target, requests, 1024, placement, &overflow);
  ASSERT_TRUE(error);
  SCOPED_TRACE(*error);
  EXPECT_EQ(error->rfind("tile 5: standard memory overflow", 0), 0u);
  // The same facts, structured for a memory map: the failing request, the
  // tile and step, and the live buffers there, largest first.
  EXPECT_EQ(overflow.request, 2u);
  EXPECT_EQ(overflow.tile, 5u);
  EXPECT_EQ(overflow.step, 3u);
  EXPECT_EQ(overflow.memoryClass, MemoryClass::Standard);
  EXPECT_EQ(overflow.bytesNeeded, 12288u);
  EXPECT_EQ(overflow.bytesAvailable, available);
  ASSERT_EQ(overflow.live.size(), 2u);
  EXPECT_EQ(overflow.live[0].first, 0u); // 'b', the larger.
  EXPECT_EQ(overflow.live[1].first, 1u);
  EXPECT_EQ(overflow.live[0].second, placement.address[0]);
  EXPECT_NE(error->find("'a.bcast' (12288 bytes)"), std::string::npos);
  EXPECT_NE(error->find(std::to_string(available) + " bytes available"),
            std::string::npos);
  EXPECT_NE(error->find("at step 3"), std::string::npos);
  EXPECT_NE(error->find("'b' [0x"), std::string::npos);
  EXPECT_NE(error->find("'c' [0x"), std::string::npos);
  EXPECT_EQ(error->find("'elsewhere'"), std::string::npos);

  // A buffer larger than the whole class.
  error = placeBuffers(
      target,
      {makeRequest("huge", available + 1, 0, 0, {2}, MemoryClass::Standard)},
      1024, placement);
  ASSERT_TRUE(error);
  EXPECT_NE(error->find("tile 2: standard memory overflow"), std::string::npos)
      << *error;
  EXPECT_NE(error->find(std::to_string(available + 1) + " bytes"),
            std::string::npos)
      << *error;

  error = placeBuffers(
      target,
      {makeRequest("w0", 300 * 1024, 0, 0, {9}, MemoryClass::Interleaved),
       makeRequest("w1", 300 * 1024, 0, 0, {9}, MemoryClass::Interleaved)},
      0, placement);
  ASSERT_TRUE(error);
  EXPECT_NE(error->find("tile 9: interleaved memory overflow"),
            std::string::npos)
      << *error;
  EXPECT_NE(error->find("'w0'"), std::string::npos) << *error;
}

TEST(Allocator, RandomRequestSetsKeepEveryProperty) {
  unsigned placedSets = 0;
  for (uint32_t seed = 0; seed < 200; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::mt19937 rng(seed);
    uint32_t tiles = 1 + rng() % 150;
    TargetModel target = smallTarget(tiles);
    uint32_t steps = 1 + rng() % 12;
    uint32_t count = rng() % 60;
    uint32_t reserved = (rng() % 4) * 512;
    std::vector<BufferRequest> requests;
    for (uint32_t i = 0; i < count; ++i) {
      std::vector<uint32_t> tileSet;
      switch (rng() % 3) {
      case 0: // One tile.
        tileSet.push_back(rng() % tiles);
        break;
      case 1: { // A range.
        uint32_t first = rng() % tiles;
        uint32_t last = first + rng() % (tiles - first);
        for (uint32_t t = first; t <= last; ++t)
          tileSet.push_back(t);
        break;
      }
      default: // Scattered.
        for (uint32_t t = 0; t < tiles; ++t)
          if (rng() % 4 == 0)
            tileSet.push_back(t);
        if (tileSet.empty())
          tileSet.push_back(rng() % tiles);
      }
      uint32_t first = rng() % steps;
      uint32_t last = first + rng() % (steps - first);
      MemoryClass memoryClass =
          rng() % 3 ? MemoryClass::Standard : MemoryClass::Interleaved;
      uint64_t bytes = rng() % 10 == 0 ? 0 : 1 + rng() % 30000;
      uint32_t alignment = 1u << (rng() % 8);
      requests.push_back(makeRequest("r" + std::to_string(i), bytes, first,
                                     last, std::move(tileSet), memoryClass,
                                     alignment));
    }
    // Some pairs read and written by one phase, to be kept apart.
    for (uint32_t pair = 0; count > 1 && pair < count / 4; ++pair) {
      uint32_t a = rng() % count, b = rng() % count;
      if (a != b && requests[a].memoryClass == requests[b].memoryClass &&
          std::find(requests[a].apartFrom.begin(), requests[a].apartFrom.end(), b) ==
              requests[a].apartFrom.end()) {
        requests[a].apartFrom.push_back(b);
        requests[b].apartFrom.push_back(a);
      }
    }
    Placement placement;
    auto error = placeBuffers(target, requests, reserved, placement);
    if (error) {
      // Only a genuine shortage may fail here.
      EXPECT_NE(error->find("memory overflow"), std::string::npos) << *error;
      continue;
    }
    ++placedSets;
    checkPlacement(target, requests, reserved, placement);

    Placement again;
    ASSERT_EQ(placeBuffers(target, requests, reserved, again), std::nullopt);
    EXPECT_EQ(again.address, placement.address);
  }
  // The property checks must not be vacuous.
  EXPECT_GE(placedSets, 150u);
}

TEST(Allocator, ScalesToTheFullChip) {
  TargetModel target = TargetModel::ipu21();
  std::vector<BufferRequest> requests;
  std::vector<uint32_t> all(target.tiles);
  for (uint32_t t = 0; t < target.tiles; ++t)
    all[t] = t;
  // Full-chip buffers with staggered lifetimes, and a few per-tile buffers
  // on every tile.
  for (uint32_t i = 0; i < 200; ++i)
    requests.push_back(
        makeRequest("full" + std::to_string(i), 1024, i, i + 8, all,
                    i % 2 ? MemoryClass::Standard : MemoryClass::Interleaved));
  for (uint32_t t = 0; t < target.tiles; ++t)
    for (uint32_t i = 0; i < 100; ++i)
      requests.push_back(
          makeRequest("t" + std::to_string(t) + "." + std::to_string(i),
                      256 + 8 * (i % 7), i * 2, i * 2 + 3, {t}));
  auto begin = std::chrono::steady_clock::now();
  Placement placement;
  ASSERT_EQ(placeBuffers(target, requests, 4096, placement), std::nullopt);
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - begin)
          .count();
  // Speed is bench/run's to measure; the time is only recorded.
  RecordProperty("placeSeconds", std::to_string(seconds));
  EXPECT_GE(placement.peakBytes[0], placement.boundBytes[0]);
  EXPECT_GE(placement.peakBytes[1], placement.boundBytes[1]);
  // 9 full-chip buffers of 1 KiB live at once, 4 or 5 of them standard.
  EXPECT_EQ(placement.boundBytes[1], 5u * 1024u);
  RecordProperty("seconds", std::to_string(seconds));
}
