//===- Run.cpp - What ipu-run does, as library calls ---------------------===//

#include "IPU/Runtime/Run.h"

#include "IPU/Runtime/HostData.h"
#include "IPU/Runtime/HostLink.h"
#include "IPU/Support/Escape.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>

using namespace ipu;

namespace {

double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

std::string fixed(double value, int decimals) {
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), "%.*f", decimals, value);
  return buffer;
}

/// "file:line:col" as a report value ("-" when unknown).
std::string locationValue(const std::string &location) {
  return location.empty() ? "-" : reportValue(location);
}

std::string number(uint64_t value) { return std::to_string(value); }

std::string signedDelta(uint64_t from, uint64_t to) {
  return std::to_string((long long)to - (long long)from);
}

constexpr const char kFinalistPrefix[] = "finalist.";

} // namespace

std::optional<std::string> ipu::loadPackageFile(const std::string &path, uint64_t maxHostWork,
                                                LoadedPackage &loaded) {
  auto start = std::chrono::steady_clock::now();
  std::vector<uint8_t> bytes;
  if (auto error = readPackageBytes(path, bytes))
    return error;
  loaded.fileBytes = bytes.size();
  if (auto error = deserializePackage(bytes.data(), bytes.size(), loaded.package)) {
    const char *prefix = "corrupt package";
    if (error->compare(0, std::strlen(prefix), prefix) == 0)
      return error;
    return std::string(prefix) + ": " + *error;
  }
  loaded.readSeconds = secondsSince(start);
  std::string why;
  loaded.target = TargetModel::byName(loaded.package.target, &why);
  if (!loaded.target)
    return "package target refused: " + why;
  start = std::chrono::steady_clock::now();
  if (auto error = validatePackage(loaded.package, *loaded.target, maxHostWork))
    return "invalid package: " + *error;
  loaded.validateSeconds = secondsSince(start);
  return std::nullopt;
}

std::string ipu::opLine(const OpCycles &op, uint64_t runCycles) {
  return "op=" + reportValue(op.op) + " location=" + locationValue(op.location) +
         " steps=" + number(op.steps) + " cycles=" + number(op.cycles()) +
         " computeCycles=" + number(op.computeCycles) +
         " exchangeCycles=" + number(op.exchangeCycles) +
         " syncCycles=" + number(op.syncCycles) +
         " exchangeBytes=" + number(op.exchangeBytes) +
         " sharePercent=" + fixed(runCycles ? 100.0 * op.cycles() / runCycles : 0, 2) +
         " loopCycles=" + number(op.loopCycles) + " hostCycles=" + number(op.hostCycles);
}

std::vector<std::string> ipu::finalistLines(const Package &package) {
  std::vector<std::string> lines;
  for (const auto &[key, value] : package.metadata)
    if (key.rfind(kFinalistPrefix, 0) == 0) {
      // "finalist.OP.RANK"
      const size_t prefix = std::strlen(kFinalistPrefix);
      const size_t dot = key.rfind('.');
      lines.push_back("finalist op=" + reportValue(key.substr(prefix, dot - prefix)) +
                      " rank=" + reportValue(key.substr(dot + 1)) + " " +
                      escapeText(value));
    }
  return lines;
}

std::vector<std::string> ipu::comparisonLines(const std::vector<OpComparison> &rows,
                                              const std::string &path,
                                              const std::string &otherPath,
                                              uint64_t cycles, uint64_t otherCycles) {
  std::vector<std::string> lines;
  for (const OpComparison &row : rows)
    lines.push_back("compare op=" + reportValue(row.op) +
                    " location=" + locationValue(row.location) +
                    " cycles=" + number(row.cycles) +
                    " otherCycles=" + number(row.otherCycles) +
                    " deltaCycles=" + signedDelta(row.cycles, row.otherCycles));
  lines.push_back("compare package=" + reportValue(path) + " other=" + reportValue(otherPath) +
                  " cycles=" + number(cycles) + " otherCycles=" + number(otherCycles) +
                  " deltaCycles=" + signedDelta(cycles, otherCycles));
  return lines;
}

std::optional<std::string> ipu::summaryLines(const Package &package,
                                             const TargetModel &target,
                                             const SimulationResult &result,
                                             std::vector<std::string> &lines) {
  const double seconds = target.clockHz > 0 ? result.cycles / target.clockHz : 0;
  // From the program's gemm vertices, not from the field the package states.
  const double flops = double(programFlops(package));
  const double tflops = seconds > 0 ? flops / seconds / 1e12 : 0;
  const double peakTflops = target.peakFlopsF16() / 1e12;
  const double efficiency = peakTflops > 0 ? tflops / peakTflops * 100 : 0;
  // Against the peak of the program's own types (f8 inputs with f16
  // partials: twice the f16 peak), which it never exceeds.
  const double ownPeakCycles = programPeakCycles(package, target);
  const double ownEfficiency =
      result.cycles ? ownPeakCycles / double(result.cycles) * 100 : 0;
  const double ownPeakTflops = ownPeakCycles > 0 && target.clockHz > 0
                                   ? flops / (ownPeakCycles / target.clockHz) / 1e12
                                   : 0;
  lines.push_back(
      "workload=" + reportValue(package.workload) + " cycles=" + number(result.cycles) +
      " computeCycles=" + number(result.computeCycles) +
      " exchangeCycles=" + number(result.exchangeCycles) +
      " syncCycles=" + number(result.syncCycles) +
      " loopCycles=" + number(result.loopCycles) +
      " hostCycles=" + number(result.hostCycles) + " hostBytes=" + number(result.hostBytes) +
      " deviceMicroseconds=" + fixed(seconds * 1e6, 3) +
      " effectiveGemmTflops=" + fixed(tflops, 3) + " peakTflops=" + fixed(peakTflops, 3) +
      " efficiencyOwnPeakPercent=" + fixed(ownEfficiency, 2) +
      " ownPeakTflops=" + fixed(ownPeakTflops, 3) +
      " efficiencyAgainstF16PeakPercent=" + fixed(efficiency, 2) +
      " activeTiles=" + number(result.activeTiles) + " executionTiles=" + number(target.tiles));
  // Memory as the program uses it: from the region bases (the runtime image
  // and reserved code included) to the highest byte touched on the busiest
  // tile. The compiler's own figures follow on the metadata line.
  // Each loop as run: a repeated layer's cycles per layer.
  for (const SimulationResult::LoopCycles &loop : result.loops)
    lines.push_back("loop=" + reportValue(package.loops[loop.loop].name) +
                    " iterations=" + number(loop.iterations) +
                    " loopRunCycles=" + number(loop.cycles) + " cyclesPerIteration=" +
                    number(loop.iterations ? loop.cycles / loop.iterations : 0));
  // The weights, loaded before the run at the cost the host link and the
  // fan-out to their replicas take; no run's cycles count it.
  lines.push_back(weightLoadLine(weightLoad(package, target)));
  lines.push_back("touchedStandardBytes=" + number(result.touchedBytes[0]) +
                  " touchedInterleavedBytes=" + number(result.touchedBytes[1]) +
                  " touchedMemoryElements=" + number(result.touchedElements));
  // The program's code and state, sized from what the package holds, on
  // the busiest tile.
  ReservedArea reserved(target);
  if (auto error = tallyReservedArea(package, target, reserved))
    return "invalid package: " + *error;
  const uint32_t busiest = reserved.busiestTile();
  lines.push_back("reservedStandardBytes=" + number(reserved.bytes()) +
                  " reservedTile=" + number(busiest) +
                  " reservedExchangeCodeBytes=" + number(reserved.exchangeCodeBytes(busiest)) +
                  " reservedVertexStateBytes=" + number(reserved.vertexStateBytes(busiest)) +
                  " reservedKernelCodeBytes=" + number(reserved.kernelCodeBytes(busiest)));
  // The planner's finalists have lines of their own; the rest is one.
  std::string metadata;
  for (const auto &[key, value] : package.metadata)
    if (key.rfind(kFinalistPrefix, 0) != 0)
      metadata += (metadata.empty() ? "" : " ") + escapeText(key) + "=" + reportValue(value);
  if (!metadata.empty())
    lines.push_back(metadata);
  return std::nullopt;
}

WeightLoad ipu::weightLoad(const Package &package, const TargetModel &target) {
  WeightLoad load;
  // Copies per argument, over every layout it streams into.
  std::map<uint32_t, uint32_t> matrixCopies, rowCopies;
  for (const HostStream &stream : package.streams) {
    if (!stream.toDevice || !stream.weight)
      continue;
    const HostLinkLoad link = hostLinkLoad(stream, target);
    load.residentBytes += streamBytes(stream);
    load.linkBytes += link.linkBytes;
    load.linkCycles += target.hostStreamCycles(link.linkBytes);
    load.fanOutBytes += link.fanOutBytes;
    load.fanOutCycles += link.fanOutCycles;
    int64_t rows = 1;
    for (size_t d = 0; d + 1 < stream.shape.size(); ++d)
      rows *= stream.shape[d];
    (rows > 1 ? matrixCopies : rowCopies)[stream.index] += link.copies;
  }
  for (const auto &[argument, copies] : matrixCopies)
    load.replicasMax = std::max(load.replicasMax, copies);
  for (const auto &[argument, copies] : rowCopies)
    load.rowReplicasMax = std::max(load.rowReplicasMax, copies);
  return load;
}

std::string ipu::weightLoadLine(const WeightLoad &load) {
  return "weightReplicasMax=" + number(load.replicasMax) +
         " rowWeightReplicasMax=" + number(load.rowReplicasMax) +
         " weightBytesResident=" + number(load.residentBytes) +
         " weightLoadLinkBytes=" + number(load.linkBytes) +
         " weightLoadLinkCycles=" + number(load.linkCycles) +
         " weightLoadFanOutBytes=" + number(load.fanOutBytes) +
         " weightLoadFanOutCycles=" + number(load.fanOutCycles) +
         " weightLoadCycles=" + number(load.cycles());
}

ImageCount ipu::countImages(const Package &package) {
  // A run of a package that runs its images one after another holds one
  // image (each argument's share of the batch).
  if (package.images > 1)
    return {1, "sequential"};
  // A batch computed together holds as many as its input's batch dim: the
  // exporter marks it (batchDim, on the first marked input), whatever the
  // model calls it. Unmarked, the first input counts when it is pixels,
  // [B, C, H, W] (rank 4 or more, as images=auto takes them); at rank 3 the
  // leading dim may be images ([B, S, D]) or not (the heads of a batched
  // matmul, [16, 729, 72]; the tokens of a sequence-first encoder,
  // [S, B, D]): one image.
  const HostStream *first = nullptr, *marked = nullptr;
  for (const HostStream &stream : package.streams) {
    if (!stream.toDevice || stream.weight || !stream.layerStreams.empty() ||
        !changesPerImage(package, stream))
      continue;
    if (!first || stream.index < first->index)
      first = &stream;
    if (stream.batchDim >= 0 && (!marked || stream.index < marked->index))
      marked = &stream;
  }
  auto shapeOf = [](const HostStream &stream) -> const std::vector<int64_t> & {
    return stream.declaredShape.empty() ? stream.shape : stream.declaredShape;
  };
  auto images = [](int64_t extent) {
    return extent >= 1 && extent <= int64_t(UINT32_MAX) ? uint32_t(extent) : 1u;
  };
  if (marked && size_t(marked->batchDim) < shapeOf(*marked).size())
    return {images(shapeOf(*marked)[size_t(marked->batchDim)]), "batchDim"};
  if (!first)
    return {1, "noInput"};
  if (shapeOf(*first).size() >= 4)
    return {images(shapeOf(*first)[0]), "pixels"};
  return {1, "unmarked"};
}

uint32_t ipu::imagesPerRun(const Package &package) { return countImages(package).images; }

void ipu::addImage(const Package &package, const TargetModel &target,
                   const SimulationResult &image, BatchRun &batch) {
  ++batch.runs;
  batch.images += imagesPerRun(package);
  batch.deviceCycles += image.cycles;
  batch.deviceCyclesPcieBound += image.cycles - image.hostCycles + image.hostCyclesPcieBound;
  // What changes from one image to the next (checkpoints are for --check
  // only; layers' weights streamed during the run are the run's own;
  // weights, whether the package carries their values or not, are loaded
  // once before the first run: weightLoad). The link carries each byte
  // once; copies on other tiles come over the exchange.
  for (const HostStream &stream : package.streams) {
    if (stream.weight || !changesPerImage(package, stream) || !stream.layerStreams.empty())
      continue;
    const HostLinkLoad load = hostLinkLoad(stream, target);
    batch.linkBytes += load.linkBytes;
    batch.linkCycles += target.hostStreamCycles(load.linkBytes);
    batch.linkCyclesPcieBound += target.hostStreamCyclesPcieBound(load.linkBytes);
    batch.fanOutBytes += load.fanOutBytes;
    batch.fanOutCycles += load.fanOutCycles;
  }
}

std::string ipu::batchLine(const Package &package, const TargetModel &target,
                           const BatchRun &batch) {
  const uint64_t images = std::max<uint64_t>(batch.images, 1);
  const uint64_t runs = std::max<uint64_t>(batch.runs, 1);
  const uint64_t cycles = batch.deviceCycles + batch.linkCycles + batch.fanOutCycles;
  const uint64_t cyclesPcieBound =
      batch.deviceCyclesPcieBound + batch.linkCyclesPcieBound + batch.fanOutCycles;
  auto perSecond = [&](uint64_t total) {
    const double seconds = target.clockHz > 0 ? total / target.clockHz : 0;
    return fixed(seconds > 0 ? batch.images / seconds : 0, 1);
  };
  // No bare `cycles=` here: the summary line's is one image's device
  // cycles, and each figure below names what it holds.
  return "batch images=" + number(batch.images) + " runs=" + number(batch.runs) +
         " deviceCyclesPerRun=" + number(batch.deviceCycles / runs) +
         " deviceCyclesPerImage=" + number(batch.deviceCycles / images) +
         " imageLinkCyclesPerImage=" + number(batch.linkCycles / images) +
         " imageFanOutCyclesPerImage=" + number(batch.fanOutCycles / images) +
         " cyclesPerImageWithLink=" + number(cycles / images) +
         " deviceCycles=" + number(batch.deviceCycles) +
         " imageLinkCycles=" + number(batch.linkCycles) +
         " imageLinkBytes=" + number(batch.linkBytes) +
         " imageFanOutCycles=" + number(batch.fanOutCycles) +
         " imageFanOutBytes=" + number(batch.fanOutBytes) +
         " batchCyclesWithLink=" + number(cycles) +
         " batchMicroseconds=" + fixed(target.clockHz > 0 ? cycles / target.clockHz * 1e6 : 0, 3) +
         " imagesPerSecond=" + perSecond(cycles) +
         " imagesPerSecondPcieBound=" + perSecond(cyclesPcieBound) +
         " imagesPerSecondDeviceOnly=" + perSecond(batch.deviceCycles) +
         " hostLinkGigabytesPerSecond=" + fixed(target.hostLinkBytesPerSecond / 1e9, 3) +
         " pcieBoundGigabytesPerSecond=" + fixed(target.hostLinkPcieBoundBytesPerSecond / 1e9, 3) +
         " sequential=" + (package.images > 1 ? "true" : "false") +
         " imagesCountedBy=" + countImages(package).rule;
}
