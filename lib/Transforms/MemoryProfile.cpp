//===- MemoryProfile.cpp - The placed memory of a program as JSON --------===//

#include "MemoryProfile.h"

#include "llvm/Support/JSON.h"

#include <algorithm>

using namespace mlir;

namespace {
/// Tile groups of the profile: consecutive tiles, as in ipu-run's trace.
constexpr uint32_t kProfileTileGroups = 16;

/// `file:line:col` for a source location, MLIR's printed form otherwise.
std::string locationString(Location loc) {
  if (auto file = dyn_cast<FileLineColLoc>(loc))
    return (file.getFilename().getValue() + ":" + Twine(file.getLine()) + ":" +
            Twine(file.getColumn()))
        .str();
  std::string text;
  llvm::raw_string_ostream os(text);
  loc.print(os);
  return text;
}
} // namespace

void mlir::ipu_compiler::writeMemoryProfile(
    llvm::raw_ostream &os, ipu_tile::ProgramOp program,
    const ipu_tile::ProgramLiveness &liveness,
    const std::vector<ipu::BufferRequest> &requests,
    const ipu::Placement &placement, uint32_t reservedBytes,
    const ipu::TargetModel &target) {
  const uint32_t steps = static_cast<uint32_t>(liveness.steps.size()) + 1;
  const uint32_t groups = std::min(target.tiles, kProfileTileGroups);
  // Live bytes per (class, tile, step), from a difference array per tile.
  std::vector<int64_t> live[2];
  for (auto &table : live)
    table.assign(size_t(target.tiles) * (steps + 1), 0);
  for (size_t b = 0; b < requests.size(); ++b) {
    if (!liveness.used[b])
      continue;
    const ipu::BufferRequest &request = requests[b];
    std::vector<int64_t> &table = live[static_cast<int>(request.memoryClass)];
    for (uint32_t tile : request.tiles) {
      table[size_t(tile) * (steps + 1) + request.firstUse] += request.bytes;
      table[size_t(tile) * (steps + 1) + request.lastUse + 1] -= request.bytes;
    }
  }
  llvm::json::OStream json(os, 1);
  json.object([&] {
    json.attribute("schema", "ipu-memory-profile/1");
    json.attribute("program", program.getSymName());
    json.attribute("target", target.name);
    json.attribute("tiles", target.tiles);
    json.attribute("steps", steps - 1);
    json.attributeObject("reserved", [&] {
      json.attribute("runtimeBytes", target.reservedStandardBytes);
      json.attribute("exchangeCodeAndVertexStateBytes", reservedBytes);
    });
    json.attributeArray("classes", [&] {
      for (int c = 0; c < 2; ++c) {
        auto memoryClass = static_cast<ipu::MemoryClass>(c);
        json.object([&] {
          json.attribute("class", std::string(ipu::memoryClassName(memoryClass)));
          json.attribute("allocatableBytes", target.allocatableBytes(memoryClass) -
                                                 (c == 0 ? reservedBytes : 0));
          json.attribute("peakBytes", placement.peakBytes[c]);
          json.attribute("boundBytes", placement.boundBytes[c]);
          json.attribute("peakTile", placement.peakTile[c]);
        });
      }
    });
    json.attributeArray("groups", [&] {
      for (uint32_t g = 0; g < groups; ++g) {
        uint32_t first = uint64_t(g) * target.tiles / groups;
        uint32_t last = uint64_t(g + 1) * target.tiles / groups - 1;
        for (int c = 0; c < 2; ++c) {
          // The tile and step of the group where the most bytes are live.
          int64_t most = 0;
          uint32_t peakTile = first, peakStep = 0;
          for (uint32_t tile = first; tile <= last; ++tile) {
            int64_t sum = 0;
            for (uint32_t step = 0; step < steps; ++step) {
              sum += live[c][size_t(tile) * (steps + 1) + step];
              if (sum > most) {
                most = sum;
                peakTile = tile;
                peakStep = step;
              }
            }
          }
          json.object([&] {
            json.attribute("firstTile", first);
            json.attribute("lastTile", last);
            json.attribute("class", std::string(ipu::memoryClassName(
                                        static_cast<ipu::MemoryClass>(c))));
            json.attribute("peakTile", peakTile);
            json.attribute("peakStep", peakStep);
            json.attribute("liveBytes", most);
            json.attributeArray("buffers", [&] {
              std::vector<size_t> there;
              for (size_t b = 0; b < requests.size(); ++b) {
                const ipu::BufferRequest &r = requests[b];
                if (static_cast<int>(r.memoryClass) == c && liveness.used[b] &&
                    r.firstUse <= peakStep && peakStep <= r.lastUse &&
                    std::binary_search(r.tiles.begin(), r.tiles.end(), peakTile))
                  there.push_back(b);
              }
              // Largest first, then program order.
              std::sort(there.begin(), there.end(), [&](size_t a, size_t b) {
                return requests[a].bytes != requests[b].bytes
                           ? requests[a].bytes > requests[b].bytes
                           : a < b;
              });
              for (size_t b : there)
                json.object([&] {
                  json.attribute("name", requests[b].name);
                  json.attribute("location",
                                 locationString(liveness.buffers[b]->getLoc()));
                  json.attribute("address", placement.address[b]);
                  json.attribute("bytes", requests[b].bytes);
                  json.attribute("firstStep", requests[b].firstUse);
                  json.attribute("lastStep", requests[b].lastUse);
                });
            });
          });
        }
      }
    });
  });
  os << "\n";
}
