//===- HostLinkTest.cpp - The host link carries each byte once ------------===//

#include "IPU/Runtime/HostLink.h"
#include "IPU/Runtime/Run.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>
#include <string>

using namespace ipu;

namespace {

StreamPiece piece(uint32_t tile, uint64_t hostOffset, uint32_t rows, uint32_t rowBytes,
                  uint64_t hostPitch, uint64_t hostElementStride = 0) {
  StreamPiece p;
  p.tile = tile;
  p.hostOffset = hostOffset;
  p.rows = rows;
  p.rowBytes = rowBytes;
  p.tilePitch = rowBytes;
  p.hostPitch = hostPitch;
  p.hostElementStride = hostElementStride;
  return p;
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
  // The landing tile sends its copy once (a multicast); each other tile
  // receives one.
  EXPECT_EQ(load.busiestTileFanOutBytes, 512u);
  EXPECT_EQ(load.fanOutCycles, target.plannedExchangeCycles(512 / 4));
  EXPECT_GT(load.fanOutCycles, 0u);
  // Out of the device, one copy crosses the link and no exchange runs.
  const HostLinkLoad out = hostLinkLoad(stream(false, ElementType::F16, pieces), target);
  EXPECT_EQ(out.linkBytes, 512u);
  EXPECT_EQ(out.fanOutCycles, 0u);
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
  // Where partial copies go is not tracked: spread over the 2 tiles.
  EXPECT_EQ(load.busiestTileFanOutBytes, 128u);
  EXPECT_EQ(load.fanOutCycles, target.plannedExchangeCycles(32));
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
    EXPECT_EQ(load.fanOutCycles == 0, load.fanOutBytes == 0);
    EXPECT_LE(load.busiestTileFanOutBytes, load.fanOutBytes);
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
  EXPECT_EQ(batch.fanOutCycles, target.plannedExchangeCycles(32));
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
  const TargetModel target = TargetModel::ipu21WithTiles(16);
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
