//===- GemmLayouts.cpp - The tensor layouts a GEMM plan wants -------------===//

#include "IPU/Planning/GemmLayouts.h"
#include "IPU/Exchange/Timing.h"

#include <algorithm>

using namespace ipu;

GemmLayouts ipu::gemmLayouts(const GemmProblem &problem, const GemmPlan &plan) {
  const uint32_t rows = plan.rows, cols = plan.cols;
  const uint32_t inner = plan.inner;
  const int64_t plane = int64_t(rows) * cols; // Tiles per inner block.
  const int64_t m = problem.m, n = problem.n;
  // N's column blocks, on word boundaries of narrow rows (empty: balanced).
  const std::vector<int64_t> nSplits = columnSplits(problem, plan);
  GemmLayouts layouts;
  for (BlockLayout *layout : {&layouts.lhs, &layouts.rhs, &layouts.partials,
                              &layouts.gathered, &layouts.out})
    layout->wordBytes = problem.wordBytes;
  // A: block (i, p) on tiles p * plane + i * cols + j for every j.
  layouts.lhs.rows = m;
  layouts.lhs.cols = problem.k;
  layouts.lhs.type = problem.inType;
  layouts.lhs.gridRows = rows;
  layouts.lhs.gridCols = inner;
  layouts.lhs.tileRowStride = cols;
  layouts.lhs.tileColStride = plane;
  layouts.lhs.replicas = cols;
  layouts.lhs.replicaStride = 1;
  // B: block (p, j) on tiles p * plane + i * cols + j for every i.
  layouts.rhs.rows = problem.k;
  layouts.rhs.cols = n;
  layouts.rhs.type = layouts.lhs.type;
  layouts.rhs.gridRows = inner;
  layouts.rhs.gridCols = cols;
  layouts.rhs.tileRowStride = plane;
  layouts.rhs.tileColStride = 1;
  layouts.rhs.replicas = rows;
  layouts.rhs.replicaStride = cols;
  layouts.rhs.colSplits = nSplits;
  if (plan.swapped) {
    // B^T [N x K]: block (j, p) on the same tiles.
    layouts.rhs.rows = n;
    layouts.rhs.cols = problem.k;
    layouts.rhs.gridRows = cols;
    layouts.rhs.gridCols = inner;
    layouts.rhs.tileRowStride = 1;
    layouts.rhs.tileColStride = plane;
    layouts.rhs.colSplits.clear();
    layouts.rhs.rowSplits = nSplits;
  }
  // C: block (i, j) on tile i * cols + j.
  BlockLayout &out = layouts.out;
  out.rows = m;
  out.cols = n;
  out.type = problem.outType;
  out.gridRows = rows;
  out.gridCols = cols;
  out.tileRowStride = cols;
  out.tileColStride = 1;
  out.colSplits = nSplits;
  if (inner == 1)
    return layouts;

  const ElementType accType = plan.partials;
  auto colBegin = [&](uint32_t j) { return out.blockColBegin(j); };
  auto colSize = [&](uint32_t j) { return out.blockCols(j); };
  BlockLayout &partials = layouts.partials;
  partials.rows = m;
  partials.cols = int64_t(inner) * n;
  partials.type = accType;
  partials.gridRows = rows;
  partials.gridCols = cols * inner;
  for (uint32_t j = 0; j < cols; ++j)
    for (uint32_t p = 0; p < inner; ++p)
      partials.colSplits.push_back(inner * colBegin(j) + p * colSize(j));
  partials.colSplits.push_back(partials.cols);
  for (uint32_t i = 0; i < rows; ++i)
    for (uint32_t j = 0; j < cols; ++j)
      for (uint32_t p = 0; p < inner; ++p)
        partials.tileMap.push_back(p * plane + i * cols + j);

  BlockLayout &gathered = layouts.gathered;
  gathered.rows = m;
  gathered.cols = partials.cols;
  gathered.type = accType;
  gathered.gridCols = cols;
  for (uint32_t j = 0; j <= cols; ++j)
    gathered.colSplits.push_back(inner * colBegin(j));
  if (plan.reduction == Reduction::Complete) {
    // Every partial of block (i, j) goes to the tile of p = 0.
    gathered.gridRows = rows;
    gathered.tileRowStride = cols;
    gathered.tileColStride = 1;
    return layouts;
  }
  // Staged: the rows of block (i, j) are split again over its inner tiles;
  // tile p sums the partials of sub-block p and keeps that part of C.
  gathered.gridRows = rows * inner;
  for (uint32_t i = 0; i < rows; ++i) {
    int64_t begin = BlockLayout::splitBegin(m, rows, i);
    int64_t size = BlockLayout::splitSize(m, rows, i);
    for (uint32_t p = 0; p < inner; ++p)
      gathered.rowSplits.push_back(begin + BlockLayout::splitBegin(size, inner, p));
  }
  gathered.rowSplits.push_back(m);
  for (uint32_t i = 0; i < rows; ++i)
    for (uint32_t p = 0; p < inner; ++p)
      for (uint32_t j = 0; j < cols; ++j)
        gathered.tileMap.push_back(p * plane + i * cols + j);
  out.gridRows = rows * inner;
  out.tileRowStride = 0;
  out.tileColStride = 0;
  out.rowSplits = gathered.rowSplits;
  out.tileMap = gathered.tileMap;
  return layouts;
}

/// `layout` repeated for `batches` batches, batch b shifted by b * stride.
static void batchLayout(BlockLayout &layout, int64_t batches, uint32_t stride) {
  layout.batches = batches;
  layout.gridBatches = static_cast<uint32_t>(batches);
  layout.tileBatchStride = stride;
  if (layout.tileMap.empty())
    return;
  std::vector<uint32_t> map;
  map.reserve(layout.tileMap.size() * size_t(batches));
  for (int64_t b = 0; b < batches; ++b)
    for (uint32_t tile : layout.tileMap)
      map.push_back(tile + static_cast<uint32_t>(b) * stride);
  layout.tileMap = std::move(map);
}

BlockLayout ipu::gatheredWeightHome(const BlockLayout &rhs) {
  BlockLayout home = rhs;
  home.replicas = 1;
  home.replicaStride = 0;
  home.rowSplits.clear();
  std::vector<uint32_t> partsOf(rhs.gridRows); // Parts of each block row.
  std::vector<uint32_t> blockOfPart, replicaOfPart;
  for (uint32_t i = 0; i < rhs.gridRows; ++i) {
    const int64_t begin = rhs.blockRowBegin(i), size = rhs.blockRows(i);
    partsOf[i] = static_cast<uint32_t>(std::min<int64_t>(rhs.replicas, size));
    for (uint32_t r = 0; r < partsOf[i]; ++r) {
      home.rowSplits.push_back(begin + BlockLayout::splitBegin(size, partsOf[i], r));
      blockOfPart.push_back(i);
      replicaOfPart.push_back(r);
    }
  }
  home.rowSplits.push_back(rhs.rows);
  home.gridRows = static_cast<uint32_t>(blockOfPart.size());
  home.tileMap.clear();
  for (uint32_t b = 0; b < rhs.gridBatches; ++b)
    for (uint32_t part = 0; part < home.gridRows; ++part)
      for (uint32_t j = 0; j < rhs.gridCols; ++j)
        home.tileMap.push_back(static_cast<uint32_t>(
            rhs.tileOf(b, blockOfPart[part], j, replicaOfPart[part])));
  home.tileBase = 0;
  home.tileRowStride = home.tileColStride = home.tileBatchStride = 0;
  return home;
}

GemmLayouts ipu::batchGemmLayouts(const GemmLayouts &layouts, int64_t batches,
                                  uint32_t tilesPerBatch) {
  GemmLayouts batched = layouts;
  if (batches == 1)
    return batched;
  for (BlockLayout *layout : {&batched.lhs, &batched.rhs, &batched.partials,
                              &batched.gathered, &batched.out})
    if (layout->rows > 0)
      batchLayout(*layout, batches, tilesPerBatch);
  return batched;
}

BlockLayout ipu::arrivalLayout(int64_t rows, int64_t cols, ElementType type,
                               const TargetModel &target, int64_t batches) {
  BlockLayout layout;
  layout.wordBytes = target.exchangeWordBytes();
  layout.rows = rows;
  layout.cols = cols;
  layout.type = type;
  layout.tileRowStride = 1;
  // More matrices than tiles: each tile holds a balanced run of them whole.
  if (batches > int64_t(target.tiles)) {
    layout.gridRows = 1;
    layout.batches = batches;
    layout.gridBatches = target.tiles;
    layout.tileBatchStride = 1;
    return layout;
  }
  const int64_t tiles = static_cast<int64_t>(target.tiles) / batches;
  layout.gridRows = static_cast<uint32_t>(std::min<int64_t>(rows, tiles));
  if (batches > 1)
    batchLayout(layout, batches, static_cast<uint32_t>(tiles));
  return layout;
}

BlockLayout ipu::spreadLayout(int64_t rows, int64_t cols, ElementType type,
                              const TargetModel &target) {
  BlockLayout layout;
  layout.wordBytes = target.exchangeWordBytes();
  layout.rows = rows;
  layout.cols = cols;
  layout.type = type;
  const int64_t tiles = static_cast<int64_t>(target.tiles);
  layout.gridRows = static_cast<uint32_t>(std::min<int64_t>(rows, tiles));
  const int64_t perWord =
      std::max<int64_t>(1, int64_t(layout.wordBytes) / int64_t(elementBytes(type)));
  const int64_t words = (cols + perWord - 1) / perWord;
  layout.gridCols = static_cast<uint32_t>(
      std::max<int64_t>(1, std::min<int64_t>(tiles / layout.gridRows, words)));
  if (layout.gridCols > 1) {
    for (uint32_t j = 0; j < layout.gridCols; ++j)
      layout.colSplits.push_back(BlockLayout::splitBegin(words, layout.gridCols, j) *
                                 perWord);
    layout.colSplits.push_back(cols);
  }
  layout.tileRowStride = layout.gridCols;
  layout.tileColStride = 1;
  return layout;
}

BlockLayout ipu::lhsSourceLayout(const GemmProblem &problem, const TargetModel &target) {
  if (problem.lhsSpread)
    return spreadLayout(problem.m, problem.k, problem.inType, target);
  return problem.lhsTransposed
             ? arrivalLayout(problem.k, problem.m, problem.inType, target)
             : arrivalLayout(problem.m, problem.k, problem.inType, target);
}

uint32_t ipu::provisionalBufferBase(const TargetModel &target, uint64_t bytes,
                                   uint32_t &next) {
  // Each buffer from an SRAM conflict unit of its own, as placement keeps a
  // phase's sources and destinations apart (BufferRequest::apartFrom) where
  // the memory class has room.
  const uint64_t align = std::max<uint32_t>(target.bufferAlignmentBytes, 1);
  const uint64_t element = std::max<uint32_t>(target.exchange.memoryElementBytes, 1);
  auto aligned = [&](uint64_t at) {
    at = (at + align - 1) / align * align;
    return (at + element - 1) / element * element;
  };
  uint64_t base = aligned(next);
  // Past the end of tile memory (a phase larger than a tile holds): again
  // from the bottom; only the sharing of units matters here.
  if (base + bytes > target.interleaved.end())
    base = aligned(target.allocatableBase(MemoryClass::Standard));
  next = uint32_t(base + bytes);
  return uint32_t(base);
}

void ipu::appendMove(const TargetModel &target, const Rearrangement &move,
                     ExchangePhase &phase, TransferAddresses &addresses,
                     uint32_t &next) {
  uint64_t sourceSpan = 0, destSpan = 0;
  for (size_t t = 0; t < move.phase.size(); ++t) {
    const uint64_t bytes = uint64_t(move.phase.words[t]) * target.exchangeWordBytes();
    sourceSpan = std::max(sourceSpan, move.sourceOffset[t] + bytes);
    destSpan = std::max(destSpan, move.destOffset[t] + bytes);
  }
  const uint32_t sourceBase = provisionalBufferBase(target, sourceSpan, next);
  const uint32_t destBase = provisionalBufferBase(target, destSpan, next);
  for (size_t t = 0; t < move.phase.size(); ++t) {
    phase.addTransfer(move.phase.source[t], move.phase.words[t],
                      move.phase.destinationsBegin(t),
                      move.phase.destinationsEnd(t) - move.phase.destinationsBegin(t));
    addresses.source.push_back(sourceBase + move.sourceOffset[t]);
    addresses.dest.push_back(destBase + move.destOffset[t]);
  }
}

std::optional<std::string> ipu::relayoutCost(const BlockLayout &from,
                                             const BlockLayout &to,
                                             const TargetModel &target,
                                             RelayoutCost &cost,
                                             const Permutation *permutation) {
  Rearrangement rearrangement;
  if (std::optional<std::string> why =
          permutation ? planPermutation(from, to, *permutation, target.tiles, rearrangement)
                      : planRearrangement(from, to, target.tiles, rearrangement))
    return why;
  cost.transfers = rearrangement.phase.size();
  cost.boundCycles = endpointLowerBound(rearrangement.phase);
  // As the compiler will schedule it, on buffer-like addresses.
  ExchangePhase phase;
  phase.tiles = target.tiles;
  TransferAddresses addresses;
  uint32_t next = target.allocatableBase(MemoryClass::Standard);
  appendMove(target, rearrangement, phase, addresses, next);
  cost.cycles = plannedPhaseCost(target, phase, addresses).cycles +
                2 * uint64_t(target.syncCycles);
  return std::nullopt;
}

SerialGemmLayouts ipu::serialGemmLayouts(const GemmProblem &problem,
                                         const GemmPlan &plan,
                                         const TargetModel &target) {
  const uint32_t serial = std::max<uint32_t>(plan.serial, 1);
  const GemmProblem chunk = serialChunk(problem, serial);
  GemmPlan chunkPlan = plan;
  chunkPlan.serial = 1;
  SerialGemmLayouts layouts;
  layouts.chunk = gemmLayouts(chunk, chunkPlan);
  layouts.lhsChunk = lhsSourceLayout(chunk, target);
  layouts.lhsHome = layouts.lhsChunk;
  layouts.outHome = layouts.chunk.out;
  layouts.lhsHome.batches = layouts.outHome.batches = serial;
  return layouts;
}
