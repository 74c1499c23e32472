//===- HostLinkTest.cpp - The host link carries each byte once ------------===//

#include "IPU/Exchange/Timing.h"
#include "IPU/Runtime/HostLink.h"
#include "IPU/Runtime/Run.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <string>

using namespace ipu;

namespace {

StreamPiece piece(uint32_t tile, uint64_t hostOffset, uint32_t rows, uint32_t rowBytes,
                  uint64_t hostPitch, uint64_t hostElementStride = 0) {
  return StreamPiece::packedRows(tile, hostOffset, rows, rowBytes, hostPitch,
                                 hostElementStride);
}

HostStream stream(bool toDevice, ElementType type, std::vector<StreamPiece> pieces) {
  HostStream s;
  s.name = "s";
  s.toDevice = toDevice;
  s.type = type;
  s.pieces = std::move(pieces);
  return s;
}

/// The host bytes the pieces touch, counted one byte at a time.
uint64_t touchedBytes(const HostStream &s) {
  std::set<uint64_t> bytes;
  const uint64_t element = elementBytes(s.type);
  for (const StreamPiece &p : s.pieces)
    for (uint64_t r = 0; r < p.rows; ++r)
      for (uint64_t b = 0; b < p.rowBytes; ++b)
        bytes.insert(p.hostElementStride
                         ? p.hostOffset + r * p.hostPitch + (b / element) * p.hostElementStride +
                               b % element
                         : p.hostOffset + r * p.hostPitch + b);
  return bytes.size();
}

/// The host byte at byte b of tile row r of `p`.
uint64_t hostByte(const StreamPiece &p, uint64_t element, uint64_t r, uint64_t b) {
  return p.hostElementStride
             ? p.hostOffset + r * p.hostPitch + (b / element) * p.hostElementStride + b % element
             : p.hostOffset + r * p.hostPitch + b;
}

/// Per tile, the bytes the fan-out must bring it, counted one byte at a
/// time: every byte its pieces hold (a byte held twice counts twice) but
/// the bytes the link lands there, each host byte on the tile of the first
/// piece that holds it.
std::map<uint32_t, uint64_t> bytesToBring(const HostStream &s) {
  const uint64_t element = elementBytes(s.type);
  std::set<uint64_t> landed;
  std::map<uint32_t, uint64_t> bring;
  for (const StreamPiece &p : s.pieces)
    for (uint64_t r = 0; r < p.rows; ++r)
      for (uint64_t b = 0; b < p.rowBytes; ++b)
        if (!landed.insert(hostByte(p, element, r, b)).second)
          ++bring[p.tile];
  return bring;
}

/// The fan-out's properties, whatever the stream: each tile receives the
/// bytes it holds but did not land (once per multicast, its own copies as
/// copies to itself), in whole words; the schedule is legal under the
/// timing model; its cycles are the timed phase's, at least the lower
/// bound of the messages it sends and of the phase's transfers, plus the
/// phase's fixed cost.
void expectHonestFanOut(const HostStream &s, const TargetModel &target) {
  const HostFanOut fanOut = hostFanOut(s, target);
  ASSERT_FALSE(fanOut.error) << *fanOut.error;
  const HostLinkLoad load = hostLinkLoad(s, target);
  ASSERT_EQ(fanOut.bytes.size(), fanOut.phase.size());
  EXPECT_EQ(fanOut.cycles, load.fanOutCycles);
  EXPECT_EQ(fanOut.phase.size() == 0, load.fanOutBytes == 0);
  EXPECT_EQ(load.fanOutCycles == 0, load.fanOutBytes == 0);
  std::map<uint32_t, uint64_t> received;
  uint64_t bytes = 0;
  for (uint32_t t = 0; t < fanOut.phase.size(); ++t) {
    EXPECT_EQ(fanOut.phase.words[t], (fanOut.bytes[t] + 3) / 4) << "transfer " << t;
    for (const uint32_t *d = fanOut.phase.destinationsBegin(t); d != fanOut.phase.destinationsEnd(t);
         ++d) {
      received[*d] += fanOut.bytes[t];
      bytes += fanOut.bytes[t];
    }
  }
  EXPECT_EQ(bytes, load.fanOutBytes);
  EXPECT_EQ(received, bytesToBring(s));
  if (fanOut.phase.size() == 0)
    return;
  ASSERT_FALSE(fanOut.phase.validate());
  const std::optional<std::string> illegal =
      checkTimedSchedule(target, fanOut.phase, fanOut.schedule, fanOut.addresses);
  EXPECT_FALSE(illegal) << *illegal;
  const std::vector<TimedMessage> messages =
      timedMessages(target.exchange, fanOut.phase, fanOut.schedule, fanOut.addresses);
  const TimedPhaseCost cost =
      timedPhaseCost(target, fanOut.phase, fanOut.schedule, fanOut.addresses);
  EXPECT_EQ(fanOut.cycles, cost.cycles);
  if (messages.empty()) {
    EXPECT_EQ(fanOut.cycles, cost.localCopyCycles); // Only copies to themselves.
    return;
  }
  // The bound of the messages as sent, and of the phase's transfers
  // whichever of them go paired.
  std::vector<TimedTransfer> sent, unpaired, paired;
  for (const TimedMessage &m : messages) {
    EXPECT_LE(m.words, target.exchange.maxMessageWords);
    sent.push_back({m.source, m.dests, m.words, m.sourceAddress, m.destAddress, m.paired});
  }
  for (uint32_t t = 0; t < fanOut.phase.size(); ++t) {
    TimedTransfer transfer{fanOut.phase.source[t], {}, fanOut.phase.words[t],
                           fanOut.addresses.source[t], fanOut.addresses.dest[t], false};
    for (const uint32_t *d = fanOut.phase.destinationsBegin(t); d != fanOut.phase.destinationsEnd(t);
         ++d)
      if (*d != transfer.source)
        transfer.dests.push_back(*d);
    if (transfer.dests.empty())
      continue;
    unpaired.push_back(transfer);
    transfer.paired = true;
    paired.push_back(transfer);
  }
  const uint64_t fixed = target.exchange.phaseFixedCycles;
  EXPECT_GE(fanOut.cycles, timedLowerBound(target.exchange, sent) + fixed);
  EXPECT_GE(fanOut.cycles, std::min(timedLowerBound(target.exchange, unpaired),
                                    timedLowerBound(target.exchange, paired)) +
                               fixed);
}

} // namespace

TEST(HostLink, ReplicasCrossTheLinkOnceAndFanOutOverTheExchange) {
  const TargetModel target = TargetModel::ipu21WithTiles(16);
  // One 8x64-byte weight on 4 tiles, as a plan's replicas keep it.
  std::vector<StreamPiece> pieces;
  for (uint32_t tile = 0; tile < 4; ++tile)
    pieces.push_back(piece(tile, 0, 8, 64, 64));
  const HostStream weight = stream(true, ElementType::F16, pieces);
  ASSERT_EQ(streamBytes(weight), 4u * 512);
  const HostLinkLoad load = hostLinkLoad(weight, target);
  EXPECT_EQ(load.linkBytes, 512u);
  EXPECT_EQ(load.fanOutBytes, 3u * 512);
  // The landing tile sends its copy once, a multicast of 128 words to the
  // three other tiles.
  const HostFanOut fanOut = hostFanOut(weight, target);
  ASSERT_EQ(fanOut.phase.size(), 1u);
  EXPECT_EQ(fanOut.phase.source[0], 0u);
  EXPECT_EQ(fanOut.phase.words[0], 128u);
  EXPECT_EQ(fanOut.phase.destTiles, (std::vector<uint32_t>{1, 2, 3}));
  // At least its words, a route's latency and the phase's fixed cost.
  EXPECT_GT(load.fanOutCycles, 128u + target.exchange.phaseFixedCycles);
  expectHonestFanOut(weight, target);
  // Out of the device, one copy crosses the link and no exchange runs.
  const HostLinkLoad out = hostLinkLoad(stream(false, ElementType::F16, pieces), target);
  EXPECT_EQ(out.linkBytes, 512u);
  EXPECT_EQ(out.fanOutCycles, 0u);
}

// Copies larger than a message: the schedule splits them at the model's
// largest message, and the phase stays legal.
TEST(HostLink, LargeCopiesSplitIntoMessagesTheModelAllows) {
  const TargetModel target = TargetModel::ipu21WithTiles(16);
  // 40 rows of 1 KiB: 10,240 words on 3 tiles, landing on tile 5.
  std::vector<StreamPiece> pieces;
  for (uint32_t tile : {5u, 6u, 9u})
    pieces.push_back(piece(tile, 0, 40, 1024, 1024));
  const HostStream s = stream(true, ElementType::F16, pieces);
  const HostFanOut fanOut = hostFanOut(s, target);
  ASSERT_EQ(fanOut.phase.size(), 1u);
  EXPECT_EQ(fanOut.phase.source[0], 5u);
  EXPECT_EQ(fanOut.phase.words[0], 10240u);
  EXPECT_GE(fanOut.schedule.runs.size(), 3u); // 10,240 words > 2 x 4,148.
  expectHonestFanOut(s, target);
}

// The 27-layer tower's row weights: a layer norm's scale of 1152 f16 beside
// each of 729 row blocks is one multicast from its landing tile to 728.
TEST(HostLink, ARowOnEveryRowBlockIsOneMulticast) {
  const TargetModel target = TargetModel::ipu21();
  std::vector<StreamPiece> pieces;
  for (uint32_t block = 0; block < 729; ++block)
    pieces.push_back(piece(2 * block, 0, 1, 2304, 2304));
  const HostStream s = stream(true, ElementType::F16, pieces);
  const HostLinkLoad load = hostLinkLoad(s, target);
  EXPECT_EQ(load.linkBytes, 2304u);
  EXPECT_EQ(load.fanOutBytes, 728u * 2304);
  EXPECT_EQ(load.copies, 729u);
  const HostFanOut fanOut = hostFanOut(s, target);
  ASSERT_EQ(fanOut.phase.size(), 1u);
  EXPECT_EQ(fanOut.phase.destTiles.size(), 728u);
  EXPECT_EQ(fanOut.phase.words[0], 576u);
  expectHonestFanOut(s, target);
}

TEST(HostLink, DisjointPiecesCostNoFanOut) {
  const TargetModel target = TargetModel::ipu21WithTiles(16);
  // Rows 0-3 on tile 0, rows 4-7 on tile 1, each row's first 32 of 64 bytes
  // then its last 32 on tiles 2 and 3 (strided rows).
  const HostStream s = stream(true, ElementType::F32,
                              {piece(0, 0, 4, 64, 64), piece(1, 256, 4, 64, 64),
                               piece(2, 512, 8, 32, 64), piece(3, 544, 8, 32, 64)});
  const HostLinkLoad load = hostLinkLoad(s, target);
  EXPECT_EQ(load.linkBytes, streamBytes(s));
  EXPECT_EQ(load.fanOutBytes, 0u);
  EXPECT_EQ(load.fanOutCycles, 0u);
  EXPECT_EQ(hostFanOut(s, target).phase.size(), 0u);
}

// A piece on a tile the target does not have: the fan-out says which, and
// the load prices none.
TEST(HostLink, APieceOffTheTargetIsNamed) {
  const TargetModel target = TargetModel::ipu21WithTiles(16);
  const HostStream s =
      stream(true, ElementType::F16, {piece(0, 0, 2, 64, 64), piece(16, 0, 2, 64, 64)});
  const HostFanOut fanOut = hostFanOut(s, target);
  ASSERT_TRUE(fanOut.error);
  EXPECT_EQ(*fanOut.error, "stream 's' piece 1: tile 16 is not a tile of ipu21-16 (16 tiles)");
  EXPECT_EQ(fanOut.phase.size(), 0u);
  const HostLinkLoad load = hostLinkLoad(s, target);
  EXPECT_EQ(load.linkBytes, 128u);
  EXPECT_EQ(load.fanOutCycles, 0u);
}

TEST(HostLink, OverlappingPiecesAreCountedOnce) {
  const TargetModel target = TargetModel::ipu21WithTiles(16);
  // Rows 0-5 and rows 2-7 of a 64-byte-row tensor: 8 rows cross the link,
  // the 4 rows both hold are copies.
  const HostStream s =
      stream(true, ElementType::F16, {piece(0, 0, 6, 64, 64), piece(1, 128, 6, 64, 64)});
  const HostLinkLoad load = hostLinkLoad(s, target);
  EXPECT_EQ(load.linkBytes, 512u);
  EXPECT_EQ(load.fanOutBytes, 256u);
  // Rows 2-5 land on tile 0 (the first piece) and go to tile 1 from
  // there; rows 6-7 land on tile 1.
  const HostFanOut fanOut = hostFanOut(s, target);
  ASSERT_EQ(fanOut.phase.size(), 1u);
  EXPECT_EQ(fanOut.phase.source[0], 0u);
  EXPECT_EQ(fanOut.phase.words[0], 64u);
  EXPECT_EQ(fanOut.phase.destTiles, (std::vector<uint32_t>{1}));
  expectHonestFanOut(s, target);
}

// A piece that holds a host byte twice (a transposing piece whose columns
// meet) and a tile that holds two copies: those copy to themselves.
TEST(HostLink, BytesHeldTwiceOnATileAreCopiedThere) {
  const TargetModel target = TargetModel::ipu21WithTiles(16);
  // Tile row r, element e at host element r + e: rows 0-3 of 4 elements
  // touch host elements 0-6, 16 of them held.
  const HostStream s = stream(true, ElementType::F32,
                              {piece(2, 0, 4, 16, 4, 4), piece(3, 64, 2, 64, 64),
                               piece(3, 64, 2, 64, 64)});
  const HostLinkLoad load = hostLinkLoad(s, target);
  EXPECT_EQ(load.linkBytes, 7u * 4 + 128);
  EXPECT_EQ(load.fanOutBytes, 9u * 4 + 128);
  const HostFanOut fanOut = hostFanOut(s, target);
  ASSERT_EQ(fanOut.phase.size(), 2u);
  EXPECT_EQ(fanOut.phase.destTiles, (std::vector<uint32_t>{2, 3}));
  EXPECT_EQ(fanOut.bytes, (std::vector<uint64_t>{36, 128}));
  EXPECT_EQ(load.fanOutCycles, target.localCopyCycles(128));
  expectHonestFanOut(s, target);
}

// Any pieces, transposing ones included: the link's bytes are the host bytes
// they touch, and the rest are the copies the exchange fans out.
TEST(HostLink, LinkBytesAreTheTouchedHostBytes) {
  const TargetModel target = TargetModel::ipu21WithTiles(16);
  std::mt19937 random(45);
  auto draw = [&](uint32_t low, uint32_t high) {
    return std::uniform_int_distribution<uint32_t>(low, high)(random);
  };
  for (int trial = 0; trial < 300; ++trial) {
    const ElementType type = trial % 2 ? ElementType::F16 : ElementType::F8E4M3FN;
    const uint32_t element = elementBytes(type);
    std::vector<StreamPiece> pieces;
    const uint32_t count = draw(1, 6);
    for (uint32_t i = 0; i < count; ++i) {
      const uint32_t rows = draw(1, 5), elements = draw(1, 6);
      if (draw(0, 3) == 0) // A transposing piece: a host column per tile row.
        pieces.push_back(piece(draw(0, 15), draw(0, 40) * element, rows, elements * element,
                               draw(0, 1) ? element : draw(1, 3) * element,
                               draw(1, 8) * element));
      else
        pieces.push_back(piece(draw(0, 15), draw(0, 40) * element, rows, elements * element,
                               draw(0, 1) ? elements * element : draw(elements, 12) * element));
      if (draw(0, 2) == 0) { // A replica of the last piece elsewhere.
        StreamPiece copy = pieces.back();
        copy.tile = draw(0, 15);
        pieces.push_back(copy);
      }
    }
    const HostStream s = stream(true, type, pieces);
    const HostLinkLoad load = hostLinkLoad(s, target);
    SCOPED_TRACE("trial " + std::to_string(trial));
    EXPECT_EQ(load.linkBytes, touchedBytes(s));
    EXPECT_EQ(load.linkBytes + load.fanOutBytes, streamBytes(s));
    expectHonestFanOut(s, target);
  }
}

TEST(HostLink, BatchLineSaysWhatEachFigureHolds) {
  const TargetModel target = TargetModel::ipu21WithTiles(16);
  Package package;
  HostStream in = stream(true, ElementType::F16, {piece(0, 0, 2, 64, 64), piece(1, 0, 2, 64, 64)});
  in.shape = {2, 3, 2, 8}; // [B, C, H, W]: a batch of two computed together.
  HostStream out = stream(false, ElementType::F16, {piece(0, 0, 2, 64, 64)});
  out.shape = {2, 4, 16};
  package.streams = {in, out};
  EXPECT_EQ(imagesPerRun(package), 2u);
  SimulationResult run;
  run.cycles = 1000;
  BatchRun batch;
  addImage(package, target, run, batch);
  EXPECT_EQ(batch.runs, 1u);
  EXPECT_EQ(batch.images, 2u);
  EXPECT_EQ(batch.linkBytes, 256u);
  EXPECT_EQ(batch.linkCycles, 2 * target.hostStreamCycles(128));
  EXPECT_EQ(batch.fanOutBytes, 128u);
  EXPECT_EQ(batch.fanOutCycles, hostLinkLoad(in, target).fanOutCycles);
  EXPECT_GT(batch.fanOutCycles, 0u);
  const std::string line = batchLine(package, target, batch);
  EXPECT_EQ(line.find(" cycles="), std::string::npos) << line;
  EXPECT_NE(line.find("batch images=2 runs=1 deviceCyclesPerRun=1000 deviceCyclesPerImage=500 "),
            std::string::npos)
      << line;
  EXPECT_NE(line.find(" imageLinkBytes=256 "), std::string::npos) << line;
  EXPECT_NE(line.find(" imagesPerSecondPcieBound="), std::string::npos) << line;
  // A matrix's rows are one image's tokens; at rank 3 the leading dim may
  // be heads ([16, 729, 72] of a batched matmul), so one image; a run of a
  // separated batch is one image.
  package.streams[0].shape = {8, 16};
  EXPECT_EQ(imagesPerRun(package), 1u);
  package.streams[0].shape = {16, 4, 4};
  EXPECT_EQ(imagesPerRun(package), 1u);
  package.streams[0].shape = {1, 3, 2, 8};
  package.images = 2;
  EXPECT_EQ(imagesPerRun(package), 1u);
}

// Copies: the most pieces writing one host footprint, whatever the pieces'
// order; 1 with nothing copied.
TEST(HostLink, CopiesCountThePiecesOfOneFootprint) {
  const TargetModel target = TargetModel::ipu21WithTiles(32);
  std::mt19937 random(46);
  for (int trial = 0; trial < 100; ++trial) {
    const uint32_t blocks = 1 + random() % 4, replicas = 1 + random() % 5;
    std::vector<StreamPiece> pieces;
    for (uint32_t r = 0; r < replicas; ++r)
      for (uint32_t b = 0; b < blocks; ++b)
        pieces.push_back(piece(r * blocks + b, b * 128, 2, 64, 64));
    std::shuffle(pieces.begin(), pieces.end(), random);
    SCOPED_TRACE("trial " + std::to_string(trial));
    const HostLinkLoad load = hostLinkLoad(stream(true, ElementType::F16, pieces), target);
    EXPECT_EQ(load.copies, replicas);
    EXPECT_EQ(load.linkBytes, blocks * 128u);
    EXPECT_EQ(load.fanOutBytes, (replicas - 1) * blocks * 128u);
    // One multicast per copied block, from its first piece's tile.
    EXPECT_EQ(hostFanOut(stream(true, ElementType::F16, pieces), target).phase.size(),
              replicas > 1 ? blocks : 0u);
    expectHonestFanOut(stream(true, ElementType::F16, pieces), target);
  }
  EXPECT_EQ(hostLinkLoad(stream(true, ElementType::F16, {}), target).copies, 0u);
}

TEST(HostLink, WeightLoadCountsEveryCopyAndEachHostByteOnce) {
  const TargetModel target = TargetModel::ipu21WithTiles(16);
  Package package;
  // A 4x64-byte matrix weight on 3 replicas, its bias row on 2, an
  // activation (not loaded before the run) and a result.
  HostStream matrix = stream(true, ElementType::F16,
                             {piece(0, 0, 4, 64, 64), piece(1, 0, 4, 64, 64),
                              piece(2, 0, 4, 64, 64)});
  matrix.weight = true;
  matrix.index = 1;
  matrix.shape = {4, 32};
  HostStream bias = stream(true, ElementType::F16, {piece(0, 0, 1, 64, 64), piece(3, 0, 1, 64, 64)});
  bias.weight = true;
  bias.index = 2;
  bias.shape = {32};
  HostStream input = stream(true, ElementType::F16, {piece(0, 0, 4, 64, 64), piece(1, 0, 4, 64, 64)});
  input.shape = {4, 32};
  HostStream out = stream(false, ElementType::F16, {piece(0, 0, 4, 64, 64)});
  out.shape = {4, 32};
  package.streams = {input, matrix, bias, out};
  WeightLoad load = weightLoad(package, target);
  EXPECT_EQ(load.replicasMax, 3u);
  EXPECT_EQ(load.rowReplicasMax, 2u);
  EXPECT_EQ(load.residentBytes, 3u * 256 + 2u * 64);
  EXPECT_EQ(load.linkBytes, 256u + 64u);
  EXPECT_EQ(load.linkCycles, target.hostStreamCycles(256) + target.hostStreamCycles(64));
  EXPECT_EQ(load.fanOutBytes, 2u * 256 + 64u);
  EXPECT_EQ(load.fanOutCycles, hostLinkLoad(matrix, target).fanOutCycles +
                                   hostLinkLoad(bias, target).fanOutCycles);
  EXPECT_EQ(load.cycles(), load.linkCycles + load.fanOutCycles);
  // An image's link carries its input and result, not the weights, loaded
  // once before the first run.
  BatchRun batch;
  addImage(package, target, SimulationResult(), batch);
  EXPECT_EQ(batch.linkBytes, 256u + 256u);
  EXPECT_EQ(batch.fanOutBytes, 256u);
  // The same argument streamed into a second layout holds the copies of both.
  HostStream again = matrix;
  again.pieces = {piece(5, 0, 4, 64, 64)};
  package.streams.push_back(again);
  EXPECT_EQ(weightLoad(package, target).replicasMax, 4u);
  const std::string line = weightLoadLine(weightLoad(package, target));
  EXPECT_EQ(line.rfind("weightReplicasMax=4 rowWeightReplicasMax=2 weightBytesResident=", 0), 0u)
      << line;
  // No weights: nothing to load.
  package.streams = {input, out};
  load = weightLoad(package, target);
  EXPECT_EQ(load.replicasMax, 0u);
  EXPECT_EQ(load.residentBytes, 0u);
  EXPECT_EQ(load.cycles(), 0u);
}

// A batch computed together counts the images of the dim the exporter
// marked, whatever its place ([B, S, D], [S, B, D], [B, C, H, W]); unmarked,
// pixels alone count; a separated batch's run is one image. Over random
// shapes and marks, with weights and other inputs around the counted one.
TEST(HostLink, ImagesCountTheExportersBatchDim) {
  std::mt19937 random(45);
  auto draw = [&](int64_t low, int64_t high) {
    return std::uniform_int_distribution<int64_t>(low, high)(random);
  };
  for (int trial = 0; trial < 500; ++trial) {
    SCOPED_TRACE("trial " + std::to_string(trial));
    Package package;
    // A weight first (never counted), then the inputs in a shuffled order.
    HostStream weight = stream(true, ElementType::F16, {piece(0, 0, 1, 8, 8)});
    weight.weight = true;
    weight.shape = {7, 7, 7, 7};
    weight.batchDim = 0;
    package.streams.push_back(weight);
    const int inputs = int(draw(1, 3));
    std::vector<HostStream> in;
    for (int i = 0; i < inputs; ++i) {
      HostStream s = stream(true, ElementType::F32, {piece(0, 0, 1, 8, 8)});
      s.index = uint32_t(i);
      const size_t rank = size_t(draw(1, 5));
      for (size_t d = 0; d < rank; ++d)
        s.shape.push_back(draw(1, 9));
      if (draw(0, 1))
        s.batchDim = int32_t(draw(0, int64_t(rank) - 1));
      in.push_back(s);
    }
    std::shuffle(in.begin(), in.end(), random);
    for (const HostStream &s : in)
      package.streams.push_back(s);
    const HostStream *marked = nullptr, *first = nullptr;
    for (const HostStream &s : in) {
      if (!first || s.index < first->index)
        first = &s;
      if (s.batchDim >= 0 && (!marked || s.index < marked->index))
        marked = &s;
    }
    const ImageCount count = countImages(package);
    if (marked) {
      EXPECT_EQ(count.images, uint32_t(marked->shape[size_t(marked->batchDim)]));
      EXPECT_STREQ(count.rule, "batchDim");
    } else if (first->shape.size() >= 4) {
      EXPECT_EQ(count.images, uint32_t(first->shape[0]));
      EXPECT_STREQ(count.rule, "pixels");
    } else {
      EXPECT_EQ(count.images, 1u);
      EXPECT_STREQ(count.rule, "unmarked");
    }
    EXPECT_EQ(imagesPerRun(package), count.images);
    // The declared shape is the one the mark counts in.
    if (marked) {
      for (HostStream &s : package.streams)
        if (!s.weight && s.index == marked->index) {
          s.declaredShape = s.shape;
          s.declaredShape[size_t(s.batchDim)] = 11;
        }
      EXPECT_EQ(countImages(package).images, 11u);
    }
    // Run one image after another, each run is one image.
    package.images = 3;
    package.results = 1;
    EXPECT_EQ(countImages(package).images, 1u);
    EXPECT_STREQ(countImages(package).rule, "sequential");
  }
}

// nn.TransformerEncoder at batch 2: batch-first [2, 16, 64] or
// sequence-first [16, 2, 64], marked; the batch line says 2 images and how
// they were counted.
TEST(HostLink, BatchLineCountsAMarkedSequenceBatch) {
  const TargetModel target = TargetModel::ipu21WithTiles(16);
  for (int32_t dim : {0, 1}) {
    Package package;
    HostStream in = stream(true, ElementType::F32, {piece(0, 0, 2, 64, 64)});
    in.shape = dim == 0 ? std::vector<int64_t>{2, 16, 64} : std::vector<int64_t>{16, 2, 64};
    in.batchDim = dim;
    package.streams = {in};
    SimulationResult run;
    run.cycles = 1000;
    BatchRun batch;
    addImage(package, target, run, batch);
    EXPECT_EQ(batch.images, 2u);
    const std::string line = batchLine(package, target, batch);
    EXPECT_NE(line.find("batch images=2 runs=1 "), std::string::npos) << line;
    EXPECT_NE(line.find(" imagesCountedBy=batchDim"), std::string::npos) << line;
    package.streams[0].batchDim = -1;
    EXPECT_NE(batchLine(package, target, batch).find(" imagesCountedBy=unmarked"),
              std::string::npos);
  }
}
