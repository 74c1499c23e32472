//===- hostlink-bench.cpp - The host link and the fan-out of copies -------===//
//
// What streaming a tensor costs: the host link carries each byte once, then
// the exchange fans the copies out (hostLinkLoad). One line per case:
//
//   bench=hostlink case=NAME streams=... pieces=... streamBytes=...
//   linkBytes=... fanOutBytes=... fanOutCycles=... slowestStream=...
//   slowestStreamSeconds=... seconds=...
//
// `seconds` is every stream's hostLinkLoad, each timed on its first call
// (the timed scheduler keeps the schedules it made), `slowestStream` the
// one that took longest; a stream's line adds its fan-out phase's transfers
// and messages (runs of its timed schedule). Synthetic cases are streams on ipu21 as the
// planner lays weights out; a package's cases are its weights (loaded
// before the first run, as ipu-run's weightLoad line counts them) and its
// other streams to the device (a repeated layer's weights among them),
// `--streams` adds a line per stream that has copies (a synthetic case has
// both).
//
//   hostlink-bench                              every synthetic case
//   hostlink-bench --package FILE [--streams]   the streams of a package
//
//===----------------------------------------------------------------------===//

#include "IPU/Runtime/HostLink.h"
#include "IPU/Runtime/Run.h"

#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

using namespace ipu;

namespace {

struct Totals {
  uint64_t streams = 0, pieces = 0, streamBytes = 0, linkBytes = 0, fanOutBytes = 0,
           fanOutCycles = 0;
  std::string slowest;
  double slowestSeconds = 0, seconds = 0;
};

void add(Totals &totals, const HostStream &stream, const TargetModel &target, bool perStream,
         const std::string &caseName) {
  const auto start = std::chrono::steady_clock::now();
  const HostLinkLoad load = hostLinkLoad(stream, target);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ++totals.streams;
  totals.pieces += stream.pieces.size();
  totals.streamBytes += streamBytes(stream);
  totals.linkBytes += load.linkBytes;
  totals.fanOutBytes += load.fanOutBytes;
  totals.fanOutCycles += load.fanOutCycles;
  totals.seconds += seconds;
  if (seconds >= totals.slowestSeconds) {
    totals.slowestSeconds = seconds;
    totals.slowest = stream.name;
  }
  if (perStream && load.fanOutBytes) {
    // The phase again (its schedule is kept): its transfers and messages.
    const HostFanOut fanOut = hostFanOut(stream, target);
    std::printf("bench=hostlink case=%s stream=%s pieces=%zu copies=%u linkBytes=%llu "
                "fanOutBytes=%llu fanOutCycles=%llu fanOutTransfers=%zu fanOutMessages=%zu "
                "seconds=%.4f\n",
                caseName.c_str(), stream.name.c_str(), stream.pieces.size(), load.copies,
                (unsigned long long)load.linkBytes, (unsigned long long)load.fanOutBytes,
                (unsigned long long)load.fanOutCycles, fanOut.phase.size(),
                fanOut.schedule.runs.size(), seconds);
  }
}

void print(const std::string &caseName, const Totals &t) {
  std::printf("bench=hostlink case=%s streams=%llu pieces=%llu streamBytes=%llu linkBytes=%llu "
              "fanOutBytes=%llu fanOutCycles=%llu slowestStream=%s slowestStreamSeconds=%.4f "
              "seconds=%.4f\n",
              caseName.c_str(), (unsigned long long)t.streams, (unsigned long long)t.pieces,
              (unsigned long long)t.streamBytes, (unsigned long long)t.linkBytes,
              (unsigned long long)t.fanOutBytes, (unsigned long long)t.fanOutCycles,
              t.slowest.empty() ? "none" : t.slowest.c_str(), t.slowestSeconds, t.seconds);
}

StreamPiece piece(uint32_t tile, uint64_t hostOffset, uint32_t rows, uint32_t rowBytes,
                  uint64_t hostPitch) {
  return StreamPiece::packedRows(tile, hostOffset, rows, rowBytes, hostPitch);
}

/// A [rows, columns] weight of `elementBytes` cut into `columnBlocks`
/// column blocks, each on `replicas` tiles (the row blocks of a plan), the
/// tiles numbered block by block.
HostStream replicated(const std::string &name, uint32_t rows, uint32_t columns,
                      uint32_t elementBytes, uint32_t columnBlocks, uint32_t replicas) {
  HostStream s;
  s.name = name;
  s.weight = true;
  s.type = elementBytes == 1 ? ElementType::F8E4M3FN : ElementType::F16;
  s.shape = {rows, columns};
  const uint32_t blockBytes = columns / columnBlocks * elementBytes;
  for (uint32_t r = 0; r < replicas; ++r)
    for (uint32_t b = 0; b < columnBlocks; ++b)
      s.pieces.push_back(piece(r * columnBlocks + b, uint64_t(b) * blockBytes, rows, blockBytes,
                               uint64_t(columns) * elementBytes));
  return s;
}

int synthetic() {
  const TargetModel target = TargetModel::ipu21();
  struct Case {
    const char *name;
    HostStream stream;
  };
  const std::vector<Case> cases = {
      // The SigLIP MLP's fc1 weight in f8 on a plan of 46 row blocks.
      {"matrix-1152x4096-f8-32blocks-46replicas", replicated("w", 1152, 4096, 1, 32, 46)},
      // A layer norm's scale beside each of 729 row blocks, whole.
      {"row-1152-f16-729replicas", replicated("g", 1, 1152, 2, 1, 729)},
      // A bias cut into 2 column blocks, each beside 729 row blocks.
      {"row-1152-f16-2blocks-729replicas", replicated("b", 1, 1152, 2, 2, 729)},
  };
  for (const Case &c : cases) {
    Totals totals;
    add(totals, c.stream, target, true, c.name);
    print(c.name, totals);
  }
  return 0;
}

int package(const std::string &path, bool perStream) {
  LoadedPackage loaded;
  if (auto error = loadPackageFile(path, PackageLimits::kDefaultMaxHostWork, loaded)) {
    std::fprintf(stderr, "hostlink-bench: %s\n", error->c_str());
    return 1;
  }
  Totals weights, others;
  for (const HostStream &stream : loaded.package.streams) {
    if (!stream.toDevice || !stream.layerStreams.empty())
      continue;
    const bool weight = stream.weight;
    add(weight ? weights : others, stream, *loaded.target, perStream,
        path + (weight ? "/weights" : "/other"));
  }
  print(path + "/weights", weights);
  print(path + "/other", others);
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  std::string path;
  bool perStream = false;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--package") && i + 1 < argc) {
      path = argv[++i];
    } else if (!std::strcmp(argv[i], "--streams")) {
      perStream = true;
    } else {
      std::fprintf(stderr, "hostlink-bench: unknown argument '%s'; usage: hostlink-bench "
                           "[--package FILE [--streams]]\n",
                   argv[i]);
      return 1;
    }
  }
  return path.empty() ? synthetic() : package(path, perStream);
}
