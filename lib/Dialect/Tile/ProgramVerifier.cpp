//===- ProgramVerifier.cpp - What must hold across a program's steps -----===//
//
// The invariants that only the whole program shows, checked on the IR so
// that broken lowered IR never verifies:
//
// * Storage: two placed buffers live at one step (liveness as
//   --ipu-place-storage computes it) never share bytes of a tile.
// * Bulk-synchronous legality, by buffer: between two syncs, no compute set
//   uses a buffer an exchange phase reads or writes, and no phase writes a
//   buffer another phase of the superstep reads or writes. The package
//   loader checks the same rule on bytes (lib/Package/Validate.cpp).
//
// Both sort or hash what they check, so a 1472-tile program verifies in
// O(n log n) of its (buffer, tile) pairs and buffer accesses.
//
//===----------------------------------------------------------------------===//

#include "IPU/Dialect/Tile/IR/Tile.h"
#include "IPU/Dialect/Tile/IR/TileUtils.h"

#include <algorithm>
#include <map>

using namespace mlir;
using namespace mlir::ipu_tile;

/// `'ipu_tile.compute_set' @name` or the op name alone.
static std::string describe(Operation *op) {
  std::string text = "'" + op->getName().getStringRef().str() + "'";
  if (auto name = op->getAttrOfType<StringAttr>(SymbolTable::getSymbolAttrName()))
    text += " @" + name.str();
  return text;
}

/// Placed buffers live at one step hold disjoint bytes on every tile they
/// share. A sweep over steps keeps the byte ranges of the live buffers of
/// every tile in one ordered map: a buffer entering the sweep meets only
/// its neighbours there, since the live ranges of a tile are disjoint.
static LogicalResult verifyStorage(const ProgramLiveness &liveness,
                                   const ipu::TargetModel &target) {
  struct Placed {
    unsigned buffer;
    uint64_t begin, end;
    std::vector<uint32_t> tiles;
  };
  std::vector<Placed> placed;
  for (unsigned index = 0; index < liveness.buffers.size(); ++index) {
    BufferOp buffer = liveness.buffers[index];
    std::optional<uint64_t> address = buffer.getAddress();
    std::optional<ipu::BlockLayout> layout =
        toBlockLayout(buffer.getTensorType(), target.exchangeWordBytes());
    if (!address || !layout)
      continue;
    placed.push_back({index, *address, *address + layout->maxBlockBytes(),
                      layout->tileList()});
  }
  auto firstOf = [&](const Placed &p) { return liveness.live[p.buffer].first; };
  auto lastOf = [&](const Placed &p) { return liveness.live[p.buffer].second; };
  std::vector<unsigned> byFirst(placed.size()), byLast(placed.size());
  for (unsigned i = 0; i < placed.size(); ++i)
    byFirst[i] = byLast[i] = i;
  llvm::sort(byFirst, [&](unsigned a, unsigned b) {
    return std::make_pair(firstOf(placed[a]), a) <
           std::make_pair(firstOf(placed[b]), b);
  });
  llvm::sort(byLast, [&](unsigned a, unsigned b) {
    return std::make_pair(lastOf(placed[a]), a) <
           std::make_pair(lastOf(placed[b]), b);
  });

  // (tile, first byte) -> (end byte, index into placed).
  std::map<std::pair<uint32_t, uint64_t>, std::pair<uint64_t, unsigned>> live;
  size_t retired = 0;
  for (size_t next = 0; next < byFirst.size();) {
    uint32_t step = firstOf(placed[byFirst[next]]);
    for (; retired < byLast.size() && lastOf(placed[byLast[retired]]) < step;
         ++retired) {
      const Placed &dead = placed[byLast[retired]];
      for (uint32_t tile : dead.tiles)
        live.erase({tile, dead.begin});
    }
    for (; next < byFirst.size() && firstOf(placed[byFirst[next]]) == step;
         ++next) {
      const Placed &entering = placed[byFirst[next]];
      for (uint32_t tile : entering.tiles) {
        auto clash = [&](unsigned other) -> LogicalResult {
          const Placed &was = placed[other];
          BufferOp a = liveness.buffers[was.buffer];
          BufferOp b = liveness.buffers[entering.buffer];
          uint64_t from = std::max(was.begin, entering.begin);
          uint64_t to = std::min(was.end, entering.end);
          std::string at =
              step < liveness.steps.size()
                  ? " (" + describe(liveness.steps[step]) + ")"
                  : std::string(" (no step uses them)");
          return b.emitOpError("overlaps buffer @")
                 << a.getSymName() << " on tile " << tile << ", bytes ["
                 << from << ", " << to << "), while both are live at step "
                 << step << at << ": @" << a.getSymName() << " holds ["
                 << was.begin << ", "
                 << was.end << "), @" << b.getSymName() << " ["
                 << entering.begin << ", " << entering.end << ")";
        };
        auto after = live.lower_bound({tile, entering.begin});
        if (after != live.end() && after->first.first == tile &&
            after->first.second < entering.end)
          return clash(after->second.second);
        if (after != live.begin()) {
          auto before = std::prev(after);
          if (before->first.first == tile &&
              before->second.first > entering.begin)
            return clash(before->second.second);
        }
        live.emplace(std::make_pair(tile, entering.begin),
                     std::make_pair(entering.end, byFirst[next]));
      }
    }
  }
  return success();
}

/// No compute set and exchange phase of one superstep share a buffer, and
/// two phases of one superstep share buffers only to read them.
static LogicalResult verifySupersteps(ProgramOp program,
                                      const ProgramLiveness &liveness) {
  // The first step of the current superstep that uses each buffer, by use.
  struct Uses {
    Operation *compute = nullptr, *reader = nullptr, *writer = nullptr;
  };
  DenseMap<StringAttr, Uses> uses;
  SmallVector<BufferAccess> accesses;
  for (Operation *op : liveness.steps) {
    auto step = cast<ProgramStepOpInterface>(op);
    StepKind kind = step.getStepKind();
    if (kind == StepKind::Sync) {
      uses.clear();
      continue;
    }
    if (kind == StepKind::HostStream || kind == StepKind::Loop)
      continue; // Outside device time, or a marker: nothing to race.
    accesses.clear();
    step.getBufferAccesses(accesses);
    for (const BufferAccess &access : accesses) {
      Uses &seen = uses[access.buffer.getAttr()];
      auto refuse = [&](Operation *earlier, StringRef earlierVerb) {
        StringRef verb = kind == StepKind::Compute ? "uses"
                         : access.writes          ? "writes"
                                                  : "reads";
        return op->emitOpError()
               << verb << " buffer " << access.buffer << ", which "
               << describe(earlier) << " " << earlierVerb
               << " in the same superstep: an ipu_exchange.sync must "
                  "separate them";
      };
      if (kind == StepKind::Compute) {
        if (seen.writer)
          return refuse(seen.writer, "writes");
        if (seen.reader)
          return refuse(seen.reader, "reads");
        if (!seen.compute)
          seen.compute = op;
        continue;
      }
      // An exchange phase. What it does to its own buffers is the copies'
      // business.
      if (seen.compute)
        return refuse(seen.compute, "uses");
      if (seen.writer && seen.writer != op)
        return refuse(seen.writer, "writes");
      if (access.writes && seen.reader && seen.reader != op)
        return refuse(seen.reader, "reads");
      Operation *&first = access.writes ? seen.writer : seen.reader;
      if (!first)
        first = op;
    }
  }
  return success();
}

LogicalResult ProgramOp::verifyRegions() {
  for (Operation &op : getBody().front())
    if (!isa<BufferOp, KernelOp, ProgramStepOpInterface>(op))
      return op.emitOpError("is not a step an ipu_tile.program can run "
                            "(host streams, syncs, exchange phases, compute "
                            "sets) nor a buffer or a kernel");
  ProgramLiveness liveness = computeLiveness(*this);
  if (failed(verifySupersteps(*this, liveness)))
    return failure();
  // Tile sets are only known to be sane once the target has checked the
  // layouts (BufferOp::verify).
  std::optional<ipu::TargetModel> target = lookupTarget(getOperation());
  if (target && failed(verifyStorage(liveness, *target)))
    return failure();
  return success();
}
