//===- Validate.cpp - Everything the simulator relies on -----------------===//
//
// A package that passes validatePackage can be simulated without a single
// bounds check failing: every index, tile and address range is checked here
// against the target. The checks are ordered so that each one only relies
// on what earlier checks established (e.g. a phase's tile count is checked
// before ExchangePhase::validate sizes a per-tile table with it).
//
// Nothing a package says may make a tool allocate or loop beyond what the
// package's own size and the target justify: every count, size and index is
// bounded (PackageLimits, the device's tiles x tileMemoryBytes, the
// package's own tables) before anything is sized with it, and arithmetic on
// package fields is checked for overflow, so that no wrapped value passes a
// bound. docs/Design.md has the table of bounds.
//
// It also checks what the report and the simulator's semantics take on
// trust: the FLOPs the package claims, bulk-synchronous legality between
// the steps of a superstep, and that no phase overwrites what it sends
// before sending it. Every such check sorts byte ranges and sweeps them, so
// that a full-chip phase of 500k transfers stays cheap. A loop body starts
// with a sync, so these straight-line checks over the program as written
// hold in every iteration; an operand that advances per iteration is
// checked over the span of all of them.
//
// "Tile memory" is [lowest region base, highest region end), the address
// range the simulator backs with storage (for ipu21 [0x4C000, 0xE8000), i.e.
// tileMemoryBytes bytes).
//
//===----------------------------------------------------------------------===//

#include "ReferenceKindDetail.h"

#include "IPU/Device/Kernels.h"
#include "IPU/Layout/BlockLayout.h"
#include "IPU/Package/Package.h"
#include "IPU/Planning/GemmPlanKeys.h"
#include "IPU/Device/Elementwise.h"
#include "IPU/Support/Escape.h"
#include "IPU/Storage/ReservedArea.h"

#include <algorithm>
#include <cctype>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

using namespace ipu;
using namespace ipu::package_detail;

using std::to_string;

std::string ipu::package_detail::shapeString(const std::vector<int64_t> &shape) {
  std::string text;
  for (size_t d = 0; d < shape.size(); ++d)
    text += (d ? "x" : "") + to_string(shape[d]);
  return text;
}

namespace {

/// What simulating costs the host, in work units of about a nanosecond of
/// its time each (ipu-run on the 2-core Xeon that runs the tests, its two
/// threads per compute set; host ns per iteration of a loop of one sync
/// and the step, measured as the difference of 101 and 1 iterations):
/// - a 2944x256x128 f16 gemm_t step on 1472 tiles: 20.9 ms (0.22 ns a MAC);
/// - its reduce step (1472 vertices, 7.5 MB of operands): 1.3 ms;
/// - an elementwise step of four body ops over 2944x256 f32 (1472 vertices,
///   9 MB of operands): 0.81 ms;
/// - its exchange phases, 11,776 transfers of 1.5 and 6 MB: 0.56, 1.25 ms;
/// - a sync and a 64-transfer exchange on 16 tiles: 2.3 us; a sync and a
///   16-vertex one-row gemm step: 75 us (the compute set's thread pool).
/// The constants reproduce these to within 1.3x below and 2.5x above.
struct HostWork {
  static constexpr double kStep = 1000;        ///< Any step, or loop iteration.
  static constexpr double kComputeStep = 75000; ///< A compute set's threads.
  static constexpr double kTile = 10;          ///< Per target tile, per compute step.
  static constexpr double kVertex = 100;
  static constexpr double kGemmMac = 0.25;
  static constexpr double kOperandByte = 0.15; ///< Other kernels' operands.
  static constexpr double kElementOp = 0.1;    ///< A generated body op, per element.
  static constexpr double kTransfer = 25;
  static constexpr double kExchangeByte = 0.17; ///< Per destination.
  static constexpr double kStreamByte = 0.2;
};

std::string hex(uint64_t value) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "0x%" PRIx64, value);
  return buffer;
}

/// a * b and a + b on package fields: false when the exact result does not
/// fit in 64 bits, so that a wrapped value never passes a bound.
bool multiply(uint64_t a, uint64_t b, uint64_t &result) {
  return !__builtin_mul_overflow(a, b, &result);
}
bool add(uint64_t a, uint64_t b, uint64_t &result) {
  return !__builtin_add_overflow(a, b, &result);
}
/// a + b, or UINT64_MAX when it does not fit: for sums that are only
/// compared with a bound, and for the ends of ranges in messages.
uint64_t saturatingAdd(uint64_t a, uint64_t b) {
  uint64_t sum;
  return add(a, b, sum) ? sum : UINT64_MAX;
}

/// "1 input stream", "2 input streams".
std::string countOf(uint64_t count, const std::string &noun) {
  return to_string(count) + " " + noun + (count == 1 ? "" : "s");
}

std::string rangeString(uint64_t address, uint64_t bytes) {
  return "[" + hex(address) + ", " + hex(saturatingAdd(address, bytes)) + ")";
}

std::string typeString(const HostStream &stream) {
  std::string text;
  for (int64_t extent : stream.shape)
    text += to_string(extent) + "x";
  if (stream.type > ElementType::F8E5M2)
    return text + "<type " + to_string(unsigned(stream.type)) + ">";
  return text + std::string(elementTypeName(stream.type));
}

class Validator {
public:
  Validator(const Package &package, const TargetModel &target, uint64_t maxHostWork)
      : package(package), target(target), wordBytes(target.exchangeWordBytes()),
        maxHostWork(maxHostWork) {
    memoryBase = std::min(target.standard.base, target.interleaved.base);
    memoryEnd =
        std::max<uint64_t>(target.standard.end(), target.interleaved.end());
    deviceBytes = uint64_t(target.tiles) * target.tileMemoryBytes;
  }

  std::optional<std::string> run() {
    if (wordBytes != kDeviceWordBytes)
      return "target '" + target.name + "' moves " + to_string(wordBytes) +
             "-byte exchange words, but this simulator's device kernels are "
             "built for " + to_string(kDeviceWordBytes) + "-byte words";
    if (auto error = checkHeader())
      return error;
    if (package.program.size() > PackageLimits::kMaxProgramSteps)
      return "program has " + to_string(package.program.size()) +
             " steps, more than the " +
             to_string(PackageLimits::kMaxProgramSteps) + " a package may have";
    // Before the compute sets: an advancing operand is checked over the
    // iterations of the loops that run it.
    if (auto error = checkLoops())
      return error;
    if (auto error = checkKernels())
      return error;
    if (auto error = checkMetadata())
      return error;
    for (const HostStream &stream : package.streams)
      ++(stream.toDevice ? inputStreams : outputStreams);
    streamBytes.assign(target.tiles, 0);
    for (size_t i = 0; i < package.streams.size(); ++i)
      if (auto error = checkStream(package.streams[i]))
        return error;
    if (auto error = checkConstants())
      return error;
    if (package.results > outputStreams)
      return "package has " + to_string(package.results) + " results but " +
             countOf(outputStreams, "output stream");
    if (package.images == 0 || package.images > PackageLimits::kMaxImages)
      return "package runs its program for " + to_string(package.images) +
             " images of a batch: a batch holds 1 to " +
             to_string(PackageLimits::kMaxImages) + " images";
    if (package.images > 1 && package.results == 0)
      return "package runs " + to_string(package.images) +
             " images but does not say which streams are results, to gather per image";
    for (size_t i = 0; i < package.computeSets.size(); ++i)
      if (auto error = checkComputeSet(i))
        return error;
    if (auto error = checkKernelsRun())
      return error;
    for (const PackagePhase &phase : package.phases)
      if (auto error = checkPhase(phase))
        return error;
    if (auto error = checkProgram())
      return error;
    if (auto error = checkLayerStreams())
      return error;
    if (auto error = checkFlops())
      return error;
    if (auto error = checkSupersteps())
      return error;
    if (auto error = checkReservedArea())
      return error;
    if (auto error = checkSimulatedWork())
      return error;
    // Each reference op checks one matmul of the program, which at least one
    // gemm step computes: ipu-run evaluates no more ops, and no more FLOPs,
    // than the simulator runs.
    // A permute checks an exchange phase, or a result streamed out again
    // (the identity permute of a value returned twice); a streamed value is
    // an output stream's.
    const uint64_t permutes = static_cast<uint64_t>(std::count_if(
        package.reference.begin(), package.reference.end(), [](const ReferenceOp &op) {
          return op.kind == ReferenceKind::Permute || op.kind == ReferenceKind::Streamed;
        }));
    if (package.reference.size() - permutes > gemmSteps + generatedSteps)
      return "package has " + to_string(package.reference.size() - permutes) +
             " reference ops, more than its program's " +
             countOf(gemmSteps + generatedSteps, "gemm or generated-kernel compute step") +
             " (each op checks an op the program computes)";
    if (permutes > exchangeSteps + outputStreams)
      return "package has " + countOf(permutes, "permute reference op") +
             ", more than its program's " + countOf(exchangeSteps, "exchange step") +
             " and " + countOf(outputStreams, "output stream");
    resultOwner.assign(outputStreams, UINT32_MAX);
    for (size_t i = 0; i < package.reference.size(); ++i)
      if (auto error = checkReference(i))
        return error;
    if (referenceFlops > flops)
      return "reference ops compute " +
             (referenceFlops == UINT64_MAX ? std::string("at least 2^64 - 1")
                                           : to_string(referenceFlops)) +
             " FLOPs (2*m*k*n), more than the " + to_string(flops) +
             " the program performs";
    // Last: what only the report reads.
    if (auto error = checkBuffers())
      return error;
    return std::nullopt;
  }

private:
  bool insideTileMemory(uint64_t address, uint64_t bytes) const {
    return address >= memoryBase && address <= memoryEnd &&
           bytes <= memoryEnd - address;
  }

  static bool insideRegion(const MemoryRegion &region, uint64_t address,
                           uint64_t bytes) {
    return address >= region.base && address <= region.end() &&
           bytes <= region.end() - address;
  }

  /// The placed buffers the report charts: each in its class's region, on
  /// no more tiles than the target has, live over steps of the program.
  std::optional<std::string> checkBuffers() {
    if (package.buffers.size() > PackageLimits::kMaxProgramSteps)
      return "package lists " + to_string(package.buffers.size()) +
             " buffers, more than " + to_string(PackageLimits::kMaxProgramSteps);
    for (const PackageBuffer &buffer : package.buffers) {
      const std::string prefix = "buffer '" + buffer.name + "'";
      if (buffer.memoryClass != MemoryClass::Standard &&
          buffer.memoryClass != MemoryClass::Interleaved)
        return prefix + ": unknown memory class " +
               to_string(unsigned(buffer.memoryClass));
      if (!insideRegion(target.region(buffer.memoryClass), buffer.address, buffer.bytes))
        return prefix + ": " + rangeString(buffer.address, buffer.bytes) +
               " is not in " + std::string(memoryClassName(buffer.memoryClass)) +
               " memory";
      if (buffer.tiles.empty() || buffer.tiles.size() > target.tiles)
        return prefix + ": spans " + to_string(buffer.tiles.size()) + " tiles of " +
               to_string(target.tiles);
      for (size_t t = 0; t < buffer.tiles.size(); ++t)
        if (buffer.tiles[t] >= target.tiles ||
            (t > 0 && buffer.tiles[t] <= buffer.tiles[t - 1]))
          return prefix + ": its tiles must be increasing and below " +
                 to_string(target.tiles) + ", entry " + to_string(t) + " is " +
                 to_string(buffer.tiles[t]);
      if (buffer.firstStep > buffer.lastStep || buffer.lastStep >= package.program.size())
        return prefix + ": live from step " + to_string(buffer.firstStep) +
               " to step " + to_string(buffer.lastStep) + " of a program of " +
               to_string(package.program.size());
    }
    return std::nullopt;
  }

  static bool parseDecimal(const std::string &text, uint64_t &value) {
    if (text.empty() || text.size() > 19)
      return false;
    value = 0;
    for (char c : text) {
      if (c < '0' || c > '9')
        return false;
      value = value * 10 + uint64_t(c - '0');
    }
    return true;
  }

  /// Keeps the lowest standard-memory address the program's data uses.
  void noteAddress(uint64_t address, uint64_t bytes, const std::string &who) {
    if (bytes && address < lowestStandard && insideRegion(target.standard, address, bytes)) {
      lowestStandard = address;
      lowestStandardUser = who;
    }
  }

  /// The program's code and state (exchange code, vertex state, generated
  /// kernels' code), sized from the package as --ipu-place-storage sized
  /// it, sit above the runtime image: no buffer may reach into them.
  std::optional<std::string> checkReservedArea() {
    ReservedArea area(target);
    if (auto error = tallyReservedArea(package, target, area))
      return error;
    const uint64_t reservedBytes = area.bytes();
    const uint64_t firstFree =
        uint64_t(target.allocatableBase(MemoryClass::Standard)) + reservedBytes;
    // A compiled package states what the compiler reserved; the figure is
    // checked, not believed. (Packages built by hand, as the unit tests
    // build them, state none and are not held to it.)
    auto stated = std::find_if(package.metadata.begin(), package.metadata.end(),
                               [](const auto &entry) {
                                 return entry.first == "memoryReservedStandardBytes";
                               });
    if (stated == package.metadata.end())
      return std::nullopt;
    uint64_t claimed = 0;
    if (!parseDecimal(stated->second, claimed))
      return "metadata memoryReservedStandardBytes='" + stated->second +
             "' is not a byte count";
    if (claimed < reservedBytes)
      return "package states memoryReservedStandardBytes=" + to_string(claimed) +
             ", but its program's code and state take " + to_string(reservedBytes) +
             " bytes on tile " + to_string(area.busiestTile());
    if (lowestStandard < firstFree) {
      const uint32_t busiest = area.busiestTile();
      return lowestStandardUser + " at " + hex(lowestStandard) +
             " lies in the " + to_string(reservedBytes) +
             " bytes the program keeps for its code and state above the "
             "runtime image, up to " + hex(firstFree) + " (tile " +
             to_string(busiest) + ": " + to_string(area.exchangeCodeBytes(busiest)) +
             " of exchange code, " + to_string(area.vertexStateBytes(busiest)) +
             " of vertex state, " + to_string(area.kernelCodeBytes(busiest)) +
             " of kernel code)";
    }
    return std::nullopt;
  }

  /// The device's memory, for messages about what it cannot hold.
  std::string deviceString() const {
    return to_string(target.tiles) + " tiles x " +
           to_string(target.tileMemoryBytes) + " bytes = " +
           to_string(deviceBytes) + " bytes";
  }

  std::optional<std::string> checkHeader() {
    if (package.formatVersion < Package::kOldestFormatVersion ||
        package.formatVersion > Package::kFormatVersion)
      return "package format version " + to_string(package.formatVersion) +
             " is not supported (expected " +
             to_string(Package::kOldestFormatVersion) + " to " +
             to_string(Package::kFormatVersion) + ")";
    if (package.formatVersion < 2 && !package.loops.empty())
      return "package format version " + to_string(package.formatVersion) +
             " has no loops, but the package holds " +
             to_string(package.loops.size());
    if (package.target != target.name)
      return "package is built for target '" + package.target + "', not for '" +
             target.name + "'";
    if (package.tiles != target.tiles)
      return "package has " + to_string(package.tiles) + " tiles but target '" +
             target.name + "' has " + to_string(target.tiles);
    return std::nullopt;
  }

  /// Each constant is the whole value of one argument some stream carries
  /// to the device, once.
  std::optional<std::string> checkConstants() {
    std::set<uint32_t> seen;
    for (size_t i = 0; i < package.constants.size(); ++i) {
      const ArgumentConstant &constant = package.constants[i];
      std::string prefix = "constant " + to_string(i) + " (argument " +
                           to_string(constant.argument) + ")";
      auto it = argumentStream.find(constant.argument);
      if (it == argumentStream.end())
        return prefix + ": no stream carries that argument to the device";
      if (!seen.insert(constant.argument).second)
        return prefix + ": the argument already has a constant";
      const HostStream &stream = *it->second;
      uint64_t bytes = elementBytes(stream.type);
      for (int64_t extent : stream.shape)
        bytes *= uint64_t(extent); // Bounded by checkStream.
      if (constant.bytes.size() != bytes)
        return prefix + ": holds " + to_string(constant.bytes.size()) +
               " bytes, but stream '" + stream.name + "' carries " +
               typeString(stream) + ", " + to_string(bytes) + " bytes";
    }
    return std::nullopt;
  }

  std::optional<std::string> checkStream(const HostStream &stream) {
    std::string prefix = "stream '" + stream.name + "'";
    if (stream.type > ElementType::F8E5M2)
      return prefix + ": unknown element type " +
             to_string(unsigned(stream.type));
    if (stream.shape.empty())
      return prefix + ": empty shape";
    if (stream.shape.size() > PackageLimits::kMaxTensorRank)
      return prefix + ": shape has " + to_string(stream.shape.size()) +
             " dimensions, more than " +
             to_string(PackageLimits::kMaxTensorRank);
    for (size_t d = 0; d < stream.shape.size(); ++d)
      if (stream.shape[d] <= 0)
        return prefix + ": dimension " + to_string(d) + " has extent " +
               to_string(stream.shape[d]);
    // The simulator and ipu-run allocate the host tensor: it must be one
    // the device could hold, whatever the pieces say.
    uint64_t tensorBytes = elementBytes(stream.type);
    for (int64_t extent : stream.shape)
      if (!multiply(tensorBytes, uint64_t(extent), tensorBytes) ||
          tensorBytes > deviceBytes)
        return prefix + ": tensor " + typeString(stream) +
               " is larger than the device (" + deviceString() + ")";
    // A declared shape only renames the same elements.
    if (!stream.declaredShape.empty()) {
      if (stream.declaredShape.size() > PackageLimits::kMaxTensorRank)
        return prefix + ": declared shape has " +
               to_string(stream.declaredShape.size()) + " dimensions, more than " +
               to_string(PackageLimits::kMaxTensorRank);
      uint64_t declaredBytes = elementBytes(stream.type);
      for (int64_t extent : stream.declaredShape)
        if (extent <= 0 || !multiply(declaredBytes, uint64_t(extent), declaredBytes) ||
            declaredBytes > tensorBytes)
          return prefix + ": declared shape " + shapeString(stream.declaredShape) +
                 " does not hold the elements of its shape " +
                 shapeString(stream.shape);
      if (declaredBytes != tensorBytes)
        return prefix + ": declared shape " + shapeString(stream.declaredShape) +
               " does not hold the elements of its shape " + shapeString(stream.shape);
    }

    // The batch's dimension is one of the argument's (its declared shape,
    // else its shape), marked on inputs only.
    if (stream.batchDim != -1) {
      const size_t rank =
          stream.declaredShape.empty() ? stream.shape.size() : stream.declaredShape.size();
      if (!stream.toDevice || stream.batchDim < 0 || size_t(stream.batchDim) >= rank)
        return prefix + ": batchDim " + to_string(stream.batchDim) +
               (stream.toDevice ? " is not a dimension of its " + to_string(rank) + "-d shape"
                                : " marks a result; only inputs hold a batch") +
               " (-1: none)";
    }

    // ipu-run and the simulator keep a table by argument and by result
    // index: indices stay dense, below the number of streams that can carry
    // one.
    uint64_t streams = stream.toDevice ? inputStreams : outputStreams;
    if (stream.index >= streams)
      return prefix + ": " + (stream.toDevice ? "argument" : "result") +
             " index " + to_string(stream.index) + " is out of range [0, " +
             to_string(streams) + ") (the package has " +
             countOf(streams, stream.toDevice ? "input stream" : "output stream") +
             ")";

    // Several streams may carry one argument or result (e.g. to different
    // layouts), but they must agree on what the host tensor is.
    auto &owner = stream.toDevice ? argumentStream : resultStream;
    auto [it, inserted] = owner.try_emplace(stream.index, &stream);
    if (!inserted &&
        (it->second->type != stream.type || it->second->shape != stream.shape ||
         it->second->declaredShape != stream.declaredShape))
      return prefix + ": " + (stream.toDevice ? "argument" : "result") + " " +
             to_string(stream.index) + " is " + typeString(stream) +
             " but stream '" + it->second->name + "' has it as " +
             typeString(*it->second);

    uint64_t moved = 0; ///< Bytes the pieces move, over all tiles.
    std::vector<uint32_t> tilesMoved;
    for (size_t p = 0; p < stream.pieces.size(); ++p) {
      const StreamPiece &piece = stream.pieces[p];
      std::string where = prefix + " piece " + to_string(p);
      if (piece.tile >= target.tiles)
        return where + ": tile " + to_string(piece.tile) +
               " is out of range [0, " + to_string(target.tiles) + ")";
      where += " (tile " + to_string(piece.tile) + ")";
      if (piece.rows == 0 || piece.rowBytes == 0)
        continue; // Moves nothing.
      uint64_t rowsAfterFirst = piece.rows - 1;
      // The host bytes of the last element of a row, from the row's start.
      uint64_t hostRowSpan = piece.rowBytes;
      if (piece.hostElementStride != 0) {
        uint64_t element = elementBytes(stream.type);
        if (piece.rowBytes % element != 0)
          return where + ": row bytes " + to_string(piece.rowBytes) +
                 " are not whole " + std::string(elementTypeName(stream.type)) +
                 " elements";
        if (piece.hostElementStride < element ||
            piece.hostElementStride > tensorBytes)
          return where + ": host element stride " +
                 to_string(piece.hostElementStride) + " is out of range [" +
                 to_string(element) + ", " + to_string(tensorBytes) + "]";
        uint64_t elements = piece.rowBytes / element;
        if (!multiply(elements - 1, piece.hostElementStride, hostRowSpan))
          hostRowSpan = UINT64_MAX; // Refused with the host span below.
        hostRowSpan = saturatingAdd(hostRowSpan, element);
      }
      if (rowsAfterFirst > 0 && piece.rowBytes > piece.tilePitch)
        return where + ": row bytes " + to_string(piece.rowBytes) +
               " exceed the tile pitch " + to_string(piece.tilePitch);
      if (rowsAfterFirst > 0 && piece.hostElementStride == 0 &&
          piece.rowBytes > piece.hostPitch)
        return where + ": row bytes " + to_string(piece.rowBytes) +
               " exceed the host pitch " + to_string(piece.hostPitch);
      uint64_t tileSpan;
      if (!multiply(rowsAfterFirst, piece.tilePitch, tileSpan) ||
          !add(tileSpan, piece.rowBytes, tileSpan) ||
          !insideTileMemory(piece.address, tileSpan))
        return where + ": tile range " + rangeString(piece.address, tileSpan) +
               " lies outside tile memory";
      if (!insideRegion(target.standard, piece.address, tileSpan) &&
          !insideRegion(target.interleaved, piece.address, tileSpan))
        return where + ": tile range " + rangeString(piece.address, tileSpan) +
               " does not lie inside one memory region";
      noteAddress(piece.address, tileSpan, where);
      uint64_t hostSpan;
      if (!multiply(rowsAfterFirst, piece.hostPitch, hostSpan))
        hostSpan = UINT64_MAX;
      hostSpan = saturatingAdd(hostSpan, hostRowSpan);
      if (piece.hostOffset > tensorBytes ||
          hostSpan > tensorBytes - piece.hostOffset)
        return where + ": host range [" + to_string(piece.hostOffset) + ", " +
               to_string(saturatingAdd(piece.hostOffset, hostSpan)) +
               ") lies outside the tensor (" + to_string(tensorBytes) +
               " bytes)";
      // rows x rowBytes <= tileSpan (a row fits its pitch), so neither this
      // nor the tile's running sum, kept below tile memory, can overflow.
      uint64_t bytes = uint64_t(piece.rows) * piece.rowBytes;
      uint64_t &onTile = streamBytes[piece.tile];
      if (onTile == 0)
        tilesMoved.push_back(piece.tile);
      onTile += bytes;
      if (onTile > target.tileMemoryBytes)
        return where + ": the stream moves " + to_string(onTile) + " bytes " +
               (stream.toDevice ? "to" : "from") + " tile " +
               to_string(piece.tile) + " in all, more than its " +
               to_string(target.tileMemoryBytes) + " bytes of memory";
      moved += bytes;
    }
    for (uint32_t tile : tilesMoved)
      streamBytes[tile] = 0;
    // What the simulator and ipu-run allocate is what the pieces move: a
    // tensor larger than that holds bytes no piece reads or writes, and
    // would let a small package claim any size.
    if (moved < tensorBytes)
      return prefix + ": pieces move " + to_string(moved) +
             " bytes, fewer than the " + to_string(tensorBytes) +
             " of tensor " + typeString(stream);
    return std::nullopt;
  }

  /// Generated kernels: bodies that hold together, names no other kernel
  /// has, symbols that are their bodies', of this ABI (ipu-run compiles
  /// them; no code travels in a package), all of them cheap enough to
  /// compile (kMaxKernelCompileCost): ipu-run compiles every kernel before
  /// it runs anything.
  std::optional<std::string> checkKernels() {
    constexpr uint64_t kMaxKernels = 1 << 16, kMaxBodyOps = 1 << 12;
    if (package.kernels.size() > kMaxKernels)
      return "package has " + to_string(package.kernels.size()) +
             " kernels, more than " + to_string(kMaxKernels);
    uint64_t compileCost = 0, costliest = 0;
    size_t costliestKernel = 0;
    std::set<std::string> names;
    for (size_t i = 0; i < package.kernels.size(); ++i) {
      const ElementwiseKernel &kernel = *package.kernels[i];
      std::string where = "kernel " + to_string(i) + " ('" + kernel.name() + "')";
      if (kernel.name().empty() || lookupKernel(kernel.name()) ||
          !names.insert(kernel.name()).second)
        return where + ": the name is empty, a device kernel's or another "
                       "generated kernel's";
      if (kernel.body().ops.size() > kMaxBodyOps ||
          kernel.body().inputs.size() > kMaxBodyOps)
        return where + ": the body has more than " + to_string(kMaxBodyOps) +
               " inputs or ops";
      if (auto error = verifyBody(kernel.body()))
        return where + ": " + *error;
      if (kernel.symbol() != elementwiseSymbol(kernel.body()))
        return where + ": symbol '" + kernel.symbol() +
               "' is not the body's ('" + elementwiseSymbol(kernel.body()) + "')";
      const uint64_t cost = kernelCompileCost(kernel.body());
      compileCost += cost; // At most 2^16 kernels of 2^13 ops: no overflow.
      if (cost > costliest) {
        costliest = cost;
        costliestKernel = i;
      }
    }
    if (compileCost > kMaxKernelCompileCost) {
      const ElementwiseKernel &kernel = *package.kernels[costliestKernel];
      return "generated kernels: compiling them would cost " + to_string(compileCost) +
             " units (about 0.1 ms each), more than the " +
             to_string(kMaxKernelCompileCost) + " a package may take; the costliest is kernel " +
             to_string(costliestKernel) + " ('" + kernel.name() + "', " +
             to_string(kernel.body().ops.size()) + " ops), at " + to_string(costliest);
    }
    if (!package.kernels.empty() && package.kernelAbiVersion != kKernelAbiVersion)
      return "generated kernels: ABI version " + to_string(package.kernelAbiVersion) +
             ", this simulator runs version " + to_string(kKernelAbiVersion);
    return std::nullopt;
  }

  /// Every generated kernel is one a compute set runs: ipu-run compiles
  /// every kernel before it runs anything, so one that nothing runs would
  /// be work for nothing. After the compute sets, whose kernel names are
  /// checked first (a set naming no kernel is the likelier fault). Names
  /// are escaped where the message is printed, as every other here.
  std::optional<std::string> checkKernelsRun() {
    std::set<std::string_view> run;
    for (const ComputeSet &set : package.computeSets)
      run.insert(set.kernel);
    for (size_t i = 0; i < package.kernels.size(); ++i)
      if (!run.count(package.kernels[i]->name()))
        return "kernel " + to_string(i) + " ('" + package.kernels[i]->name() +
               "'): no compute set runs it; a package carries only the kernels it runs";
    return std::nullopt;
  }

  /// Metadata is printed on report lines (`key=value`), so it must not be
  /// able to say anything but what the compiler says: a key is one of the
  /// compiler's figures (plannedCycles, memory...) or a namespaced word
  /// (with a dot, which no report key of ipu-run's own has), or
  /// finalist.<op>.<rank>; a value is one word (a number or a name), and a
  /// finalist is `key=word` pairs of the plan's own keys. So no entry can
  /// carry a line break or a report key of ipu-run's (numericalTest=PASS).
  std::optional<std::string> checkMetadata() {
    constexpr size_t kMaxEntries = 1 << 16, kMaxText = 1 << 10;
    if (package.metadata.size() > kMaxEntries)
      return "package has " + to_string(package.metadata.size()) +
             " metadata entries, more than " + to_string(kMaxEntries);
    auto isWord = [](std::string_view text, bool allowDots) {
      if (text.empty() || text.size() > kMaxText)
        return false;
      for (char c : text)
        if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-' &&
            c != '+' && !(allowDots && c == '.'))
          return false;
      return true;
    };
    auto isFinalistKey = [](std::string_view key) {
      auto in = [&](const auto &keys) {
        return std::find(keys.begin(), keys.end(), key) != keys.end();
      };
      return in(kGemmPlanKeys) || in(kFinalistFigureKeys);
    };
    for (size_t i = 0; i < package.metadata.size(); ++i) {
      const auto &[key, value] = package.metadata[i];
      const std::string where = "metadata entry " + to_string(i);
      if (key.rfind("finalist.", 0) == 0) {
        const size_t dot = key.rfind('.');
        if (dot <= 9 || !isWord(key.substr(9, dot - 9), true) ||
            !isWord(key.substr(dot + 1), false) ||
            key.find_first_not_of("0123456789", dot + 1) != std::string::npos)
          return where + ": key '" + escapeText(key) +
                 "' is not finalist.<op>.<rank>";
        std::istringstream tokens(value);
        std::string token;
        size_t count = 0;
        while (tokens >> token) {
          const size_t equals = token.find('=');
          if (equals == std::string::npos ||
              !isFinalistKey(std::string_view(token).substr(0, equals)) ||
              !isWord(token.substr(equals + 1), true))
            return where + " ('" + escapeText(key) + "'): '" + escapeText(token) +
                   "' is not one of a plan's key=value pairs";
          ++count;
        }
        if (count == 0 || value.size() > kMaxText ||
            value.find_first_not_of(
                "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.+-= ") !=
                std::string::npos)
          return where + " ('" + escapeText(key) + "'): the value is not a plan's "
                 "key=value pairs";
        continue;
      }
      static const std::set<std::string> kCompilerKeys = {
          "plannedCycles", "memoryPeakStandardBytes", "memoryPeakInterleavedBytes",
          "memoryBoundStandardBytes", "memoryBoundInterleavedBytes",
          "memoryReservedStandardBytes"};
      if (!isWord(key, true) || !std::isalpha(static_cast<unsigned char>(key[0])) ||
          (!kCompilerKeys.count(key) && key.find('.') == std::string::npos))
        return where + ": key '" + escapeText(key) +
               "' is neither one of the compiler's figures nor a word with a "
               "namespace (name.key)";
      if (!value.empty() && !isWord(value, true))
        return where + " ('" + key + "'): value '" + escapeText(value) +
               "' is not one word (a number or a name)";
    }
    return std::nullopt;
  }

  /// The host work of one run of compute set `index` (HostWork): the
  /// step, every target tile's tallies, and each vertex with its kernel's
  /// own work.
  double computeSetWork(size_t index) {
    const ComputeSet &set = package.computeSets[index];
    const KernelSpec *kernel = lookupKernel(package, set.kernel);
    double work = HostWork::kComputeStep + HostWork::kTile * double(target.tiles);
    if (!kernel)
      return work;
    const size_t operands = kernel->operandNames.size();
    const size_t params = kernel->paramNames.size();
    const size_t bodyOps =
        kernel->elementwise ? kernel->elementwise->body().ops.size() : 0;
    const bool gemm = kernel->name == "gemm" || kernel->name == "gemm_t";
    for (size_t v = 0; v < set.tiles.size(); ++v) {
      const int64_t *vertexParams = set.params.data() + v * params;
      work += HostWork::kVertex;
      if (gemm) { // kernelFlops is 2 * m * k * n.
        work += HostWork::kGemmMac * double(kernelFlops(*kernel, vertexParams) / 2);
        continue;
      }
      double bytes = 0, elements = 0;
      for (size_t o = 0; o < operands; ++o) {
        bytes += double(kernelOperandBytes(*kernel, vertexParams, unsigned(o)));
        const KernelOperandShape shape =
            kernelOperandShape(*kernel, vertexParams, unsigned(o));
        elements = std::max(elements, double(shape.rows) * double(shape.cols));
      }
      work += HostWork::kOperandByte * bytes +
              HostWork::kElementOp * elements * double(bodyOps);
    }
    return work;
  }

  /// The host work of one run of exchange phase `index`: each transfer,
  /// and each byte it delivers to each destination.
  double phaseWork(size_t index) {
    const ExchangePhase &phase = package.phases[index].phase;
    double work = HostWork::kStep;
    for (size_t t = 0; t < phase.size(); ++t)
      work += HostWork::kTransfer +
              HostWork::kExchangeByte * double(phase.words[t]) * wordBytes *
                  double(phase.destinationsEnd(t) - phase.destinationsBegin(t));
    return work;
  }

  /// The work a package asks the simulator for, in host work units
  /// (HostWork: about a nanosecond of host time each), every step's, a
  /// loop body's once per iteration, the program's once per image; held
  /// to maxHostWork, so that a validated package cannot make ipu-run
  /// simulate for hours. Device cycles would not do: a simulated cycle of
  /// an exchange costs the host 2.6 ns, one of a full-chip matmul 14 us.
  /// The message names the loop that asks for the most, with its count
  /// and its work per iteration.
  std::optional<std::string> checkSimulatedWork() {
    std::vector<double> setWork(package.computeSets.size(), -1);
    std::vector<double> phaseWorks(package.phases.size(), -1);
    auto stepWork = [&](const Step &step) -> double {
      switch (step.kind) {
      case StepKind::Compute:
        if (setWork[step.index] < 0)
          setWork[step.index] = computeSetWork(step.index);
        return setWork[step.index];
      case StepKind::Exchange:
        if (phaseWorks[step.index] < 0)
          phaseWorks[step.index] = phaseWork(step.index);
        return phaseWorks[step.index];
      case StepKind::StreamIn:
      case StepKind::StreamOut: {
        // Every stream copies its bytes (a stream during the run, its
        // largest layer).
        const HostStream &stream = package.streams[step.index];
        double bytes = double(ipu::streamBytes(stream));
        for (uint32_t index : stream.layerStreams)
          bytes = std::max(bytes, double(ipu::streamBytes(package.streams[index])));
        return HostWork::kStep + HostWork::kStreamByte * bytes;
      }
      default:
        return HostWork::kStep;
      }
    };
    double worstLoopTotal = 0, worstLoopIteration = 0;
    const PackageLoop *worstLoop = nullptr;
    // The work of program steps [begin, end) run once, a loop's body once
    // per iteration (checkLoops put every body inside the one around it, at
    // most kMaxLoopDepth deep). Doubles: an estimate, and no overflow.
    auto workOf = [&](size_t begin, size_t end, auto &&self) -> double {
      double sum = 0;
      for (size_t s = begin; s < end; ++s) {
        const Step &step = package.program[s];
        if (step.kind != StepKind::Loop) {
          sum += stepWork(step);
          continue;
        }
        const PackageLoop &loop = package.loops[step.index];
        const double iteration = HostWork::kStep + self(s + 1, s + 1 + loop.steps, self);
        const double loopTotal = iteration * double(loop.count);
        sum += loopTotal;
        if (!worstLoop || loopTotal > worstLoopTotal) {
          worstLoop = &loop;
          worstLoopTotal = loopTotal;
          worstLoopIteration = iteration;
        }
        s += loop.steps;
      }
      return sum;
    };
    const double total = workOf(0, package.program.size(), workOf) * package.images;
    if (total <= double(maxHostWork))
      return std::nullopt;
    auto units = [](double work) { // Rounded up, as the limit compares.
      return work >= 1.8e19 ? std::string("more than 2^64")
                            : to_string(uint64_t(std::ceil(work)));
    };
    auto seconds = [](double work) {
      char text[32];
      std::snprintf(text, sizeof(text), "%.3g", work * 1e-9);
      return std::string(text);
    };
    std::string message = "program asks for " + units(total) +
                          " units of simulation work (about " + seconds(total) +
                          " s of host time" +
                          (package.images > 1 ? " for " + to_string(package.images) + " images"
                                              : std::string()) +
                          "), more than the limit of " + to_string(maxHostWork) +
                          " (about " + seconds(double(maxHostWork)) + " s)";
    if (worstLoop && worstLoopTotal * package.images > total / 2)
      message += ": loop '" + worstLoop->name + "' runs " + to_string(worstLoop->count) +
                 " iterations of " + units(worstLoopIteration) + " units each (" +
                 units(worstLoopTotal) + " units)";
    return message + " (ipu-run --max-work raises the limit)";
  }

  /// The loops: each in range, of at least one iteration and one step, its
  /// body inside the program and inside the body around it (at most
  /// kMaxLoopDepth deep), starting with a sync (so that the straight-line
  /// superstep checks also cover the back edge: the body's last superstep
  /// ends at that sync in every iteration but the last, and runs on into
  /// the steps after the loop in the last, as the program reads). Notes per
  /// compute set the most iterations its innermost loop runs it for (its
  /// operands advance per iteration of that loop) and the first step
  /// running it outside any loop.
  std::optional<std::string> checkLoops() {
    const std::vector<Step> &program = package.program;
    if (package.loops.size() > PackageLimits::kMaxProgramSteps)
      return "package lists " + to_string(package.loops.size()) +
             " loops, more than " + to_string(PackageLimits::kMaxProgramSteps);
    setIterations.assign(package.computeSets.size(), 1);
    setLoop.assign(package.computeSets.size(), UINT32_MAX);
    setOutsideStep.assign(package.computeSets.size(), UINT32_MAX);
    /// The loops open at the step being read, innermost last: program
    /// step and one past its body.
    std::vector<std::pair<size_t, size_t>> open;
    loopAround.assign(program.size(), SIZE_MAX);
    for (size_t s = 0; s < program.size(); ++s) {
      while (!open.empty() && s >= open.back().second)
        open.pop_back();
      if (!open.empty())
        loopAround[s] = open.back().first;
      const Step &step = program[s];
      if (step.kind == StepKind::Compute &&
          step.index < package.computeSets.size()) {
        if (open.empty()) {
          if (setOutsideStep[step.index] == UINT32_MAX)
            setOutsideStep[step.index] = static_cast<uint32_t>(s);
        } else {
          const uint32_t innermost = program[open.back().first].index;
          const PackageLoop &loop = package.loops[innermost];
          if (loop.count > setIterations[step.index]) {
            setIterations[step.index] = loop.count;
            setLoop[step.index] = innermost;
          }
        }
      }
      if (step.kind != StepKind::Loop)
        continue;
      std::string where = "program step " + to_string(s) + " (loop)";
      if (step.index >= package.loops.size())
        return where + ": index " + to_string(step.index) +
               " is out of range (" + to_string(package.loops.size()) +
               " loops)";
      const PackageLoop &loop = package.loops[step.index];
      where = "program step " + to_string(s) + " (loop '" + escapeText(loop.name) + "')";
      if (open.size() >= PackageLimits::kMaxLoopDepth)
        return where + " lies " + to_string(open.size()) +
               " loops deep, in the body of loop '" +
               escapeText(package.loops[program[open.back().first].index].name) +
               "' (program step " + to_string(open.back().first) +
               "): loops nest at most " + to_string(PackageLimits::kMaxLoopDepth) +
               " deep";
      if (loop.count == 0)
        return where + ": count 0; a loop runs its body at least once";
      if (loop.steps == 0)
        return where + ": a body of 0 steps";
      if (loop.steps > program.size() - s - 1)
        return where + ": its body of " + countOf(loop.steps, "step") +
               " (program steps " + to_string(s + 1) + " to " +
               to_string(s + uint64_t(loop.steps)) +
               ") runs past the end of the program (" +
               countOf(program.size(), "step") + ")";
      if (!open.empty() && s + 1 + uint64_t(loop.steps) > open.back().second)
        return where + ": its body (program steps " + to_string(s + 1) + " to " +
               to_string(s + uint64_t(loop.steps)) + ") runs past the end of loop '" +
               escapeText(package.loops[program[open.back().first].index].name) +
               "' around it (program step " + to_string(open.back().second - 1) +
               "): a body lies wholly inside the body around it";
      if (program[s + 1].kind != StepKind::Sync)
        return where + ": its body starts with program step " +
               to_string(s + 1) + " (" +
               (program[s + 1].kind > StepKind::Loop
                    ? std::string("unknown kind")
                    : std::string(stepKindName(program[s + 1].kind))) +
               "), not a sync: iterations must be separated by a barrier";
      open.push_back({s, s + 1 + loop.steps});
    }
    // Every step counted once per run of it, and the program once per
    // image of a batch: the simulator's work for the whole run.
    uint64_t stepsRun = 0;
    for (uint64_t runs : stepRuns(package))
      stepsRun = saturatingAdd(stepsRun, runs);
    const uint64_t images = std::max<uint64_t>(package.images, 1);
    stepsRun = stepsRun > UINT64_MAX / images ? UINT64_MAX : stepsRun * images;
    if (stepsRun > PackageLimits::kMaxStepsRun)
      return "program runs " + to_string(stepsRun) +
             " steps counting every loop iteration" +
             (images > 1 ? " and each of its " + to_string(images) + " images"
                         : std::string()) +
             ", more than the " + to_string(PackageLimits::kMaxStepsRun) + " a package may";
    return std::nullopt;
  }

  /// Streams during the run: a stream with layerStreams is streamed by one
  /// step, in the body of a loop with one entry per iteration, each an
  /// input stream of its type and shape writing the same tile bytes, named
  /// by no other step and loaded at no initialisation.
  std::optional<std::string> checkLayerStreams() {
    const std::vector<Step> &program = package.program;
    std::vector<uint32_t> stepsNaming(package.streams.size(), 0);
    for (const Step &step : program)
      if (step.kind == StepKind::StreamIn)
        ++stepsNaming[step.index];
    std::vector<bool> layerOf(package.streams.size(), false);
    for (size_t s = 0; s < program.size(); ++s) {
      const Step &step = program[s];
      if (step.kind != StepKind::StreamIn)
        continue;
      const HostStream &stream = package.streams[step.index];
      if (stream.layerStreams.empty())
        continue;
      const std::string where = "program step " + to_string(s) + " (stream '" +
                                escapeText(stream.name) + "')";
      if (loopAround[s] == SIZE_MAX)
        return where + ": streams one layer per iteration but lies in no loop body";
      const PackageLoop &loop = package.loops[program[loopAround[s]].index];
      if (stream.layerStreams.size() != loop.count)
        return where + ": lists " + countOf(stream.layerStreams.size(), "layer stream") +
               " for the " + to_string(loop.count) + " iterations of loop '" +
               escapeText(loop.name) + "'";
      if (stepsNaming[step.index] != 1)
        return where + ": a stream of layers is streamed by " +
               to_string(stepsNaming[step.index]) + " steps, not one";
      for (size_t i = 0; i < stream.layerStreams.size(); ++i) {
        const uint32_t index = stream.layerStreams[i];
        const std::string entry = where + ": layer " + to_string(i) + "'s stream " +
                                  to_string(index);
        if (index >= package.streams.size())
          return entry + " is out of range (" + countOf(package.streams.size(), "stream") +
                 ")";
        const HostStream &layer = package.streams[index];
        if (!layer.toDevice || layer.weight)
          return entry + " ('" + escapeText(layer.name) + "') is " +
                 (layer.toDevice ? "loaded at initialisation" : "an output stream");
        if (index != step.index && (stepsNaming[index] != 0 || !layer.layerStreams.empty()))
          return entry + " ('" + escapeText(layer.name) +
                 "') is streamed by a step of its own or lists layers itself";
        if (layerOf[index])
          return entry + " ('" + escapeText(layer.name) + "') is another layer's too";
        layerOf[index] = true;
        bool sameBytes = layer.type == stream.type && layer.shape == stream.shape &&
                         layer.pieces.size() == stream.pieces.size();
        for (size_t p = 0; sameBytes && p < layer.pieces.size(); ++p) {
          const StreamPiece &a = layer.pieces[p], &b = stream.pieces[p];
          sameBytes = a.tile == b.tile && a.address == b.address && a.rows == b.rows &&
                      a.rowBytes == b.rowBytes && a.tilePitch == b.tilePitch;
        }
        if (!sameBytes)
          return entry + " ('" + escapeText(layer.name) +
                 "') does not write the same type, shape and tile bytes as the first";
      }
    }
    return std::nullopt;
  }

  /// The bytes operand `o` of vertex `v` of compute set `set` spans over
  /// every iteration of the loops that run it: [address, address + span).
  /// False when the span does not fit in 64 bits.
  bool operandSpan(size_t set, size_t v, size_t o, size_t operands,
                   uint64_t bytes, uint64_t &span) const {
    const ComputeSet &computeSet = package.computeSets[set];
    uint64_t advance = computeSet.operandAdvance.empty()
                           ? 0
                           : computeSet.operandAdvance[v * operands + o];
    return multiply(uint64_t(setIterations[set]) - 1, advance, span) &&
           add(span, bytes, span);
  }

  std::optional<std::string> checkComputeSet(size_t set) {
    const ComputeSet &computeSet = package.computeSets[set];
    std::string prefix = "compute set '" + computeSet.name + "'";
    const KernelSpec *kernel = lookupKernel(package, computeSet.kernel);
    if (!kernel)
      return prefix + ": unknown kernel '" + computeSet.kernel + "'";
    size_t vertices = computeSet.tiles.size();
    // One vertex per tile (checked below): bounded before any table is
    // sized with it.
    if (vertices > target.tiles)
      return prefix + ": " + to_string(vertices) +
             " vertices, more than the target's " + to_string(target.tiles) +
             " tiles";
    size_t operands = kernel->operandNames.size();
    size_t params = kernel->paramNames.size();
    if (computeSet.operandAddress.size() != vertices * operands)
      return prefix + ": operandAddress has " +
             to_string(computeSet.operandAddress.size()) +
             " entries, expected " + to_string(vertices) + " tiles x " +
             to_string(operands) + " operands";
    if (computeSet.params.size() != vertices * params)
      return prefix + ": params has " + to_string(computeSet.params.size()) +
             " entries, expected " + to_string(vertices) + " tiles x " +
             to_string(params) + " parameters";
    if (!computeSet.operandAdvance.empty() &&
        computeSet.operandAdvance.size() != vertices * operands)
      return prefix + ": operandAdvance has " +
             to_string(computeSet.operandAdvance.size()) +
             " entries, expected none or " + to_string(vertices) +
             " tiles x " + to_string(operands) + " operands";
    // Outside a loop there is no iteration to advance by: the compiler
    // meant a loop it did not emit.
    const bool advances =
        std::any_of(computeSet.operandAdvance.begin(),
                    computeSet.operandAdvance.end(),
                    [](uint32_t advance) { return advance != 0; });
    if (advances && setOutsideStep[set] != UINT32_MAX)
      return prefix + ": its operands advance per loop iteration, but "
                      "program step " +
             to_string(setOutsideStep[set]) + " runs it outside a loop";
    // How an advancing operand's span reads in a message.
    auto overIterations = [&](size_t v, size_t o, uint64_t bytes) {
      uint64_t advance = computeSet.operandAdvance.empty()
                             ? 0
                             : computeSet.operandAdvance[v * operands + o];
      if (advance == 0 || setIterations[set] < 2)
        return std::string();
      return " (" + to_string(bytes) + " bytes advancing " +
             to_string(advance) + " per iteration over the " +
             to_string(setIterations[set]) + " iterations of loop '" +
             package.loops[setLoop[set]].name + "')";
    };

    std::vector<bool> used(target.tiles, false);
    for (size_t v = 0; v < vertices; ++v) {
      uint32_t tile = computeSet.tiles[v];
      if (tile >= target.tiles)
        return prefix + " vertex " + to_string(v) + ": tile " +
               to_string(tile) + " is out of range [0, " +
               to_string(target.tiles) + ")";
      if (used[tile])
        return prefix + ": tile " + to_string(tile) +
               " has more than one vertex";
      used[tile] = true;

      std::string where = prefix + " vertex on tile " + to_string(tile);
      const int64_t *vertexParams = computeSet.params.data() + v * params;
      if (auto error = checkKernelParams(*kernel, vertexParams))
        return where + ": " + *error;
      for (size_t o = 0; o < operands; ++o) {
        uint64_t address = computeSet.operandAddress[v * operands + o];
        uint64_t bytes = kernelOperandBytes(*kernel, vertexParams, o);
        // Every iteration's range lies in the span: checking it checks them
        // all.
        uint64_t span = 0;
        if (!operandSpan(set, v, o, operands, bytes, span))
          span = UINT64_MAX; // Refused just below.
        if (!insideTileMemory(address, span))
          return where + ": operand '" + std::string(kernel->operandNames[o]) +
                 "' " + rangeString(address, span) +
                 overIterations(v, o, bytes) + " lies outside tile memory";
        noteAddress(address, span,
                    where + ": operand '" + std::string(kernel->operandNames[o]) + "'");
        // The estimator trusts the declared memory class of this operand.
        if (kernel->classOperand == static_cast<int>(o)) {
          int64_t declared = vertexParams[kernel->classParam];
          const MemoryRegion &region =
              target.region(static_cast<MemoryClass>(declared));
          if (address < region.base || address + span > region.end())
            return where + ": operand '" +
                   std::string(kernel->operandNames[o]) + "' " +
                   rangeString(address, span) + overIterations(v, o, bytes) +
                   " is not in " +
                   std::string(memoryClassName(static_cast<MemoryClass>(declared))) +
                   " memory as '" +
                   std::string(kernel->paramNames[kernel->classParam]) +
                   "' says";
        }
      }
    }
    return std::nullopt;
  }

  std::optional<std::string> checkPhase(const PackagePhase &packagePhase) {
    std::string prefix = "phase '" + packagePhase.name + "'";
    const ExchangePhase &phase = packagePhase.phase;
    // First: validate() and checkSchedule() size per-tile tables with it.
    if (phase.tiles != target.tiles)
      return prefix + ": built for " + to_string(phase.tiles) +
             " tiles, target '" + target.name + "' has " +
             to_string(target.tiles);
    if (auto error = phase.validate())
      return prefix + ": " + *error;
    size_t transfers = phase.size();
    if (packagePhase.sourceAddress.size() != transfers ||
        packagePhase.destAddress.size() != transfers)
      return prefix + ": address tables have " +
             to_string(packagePhase.sourceAddress.size()) + " source and " +
             to_string(packagePhase.destAddress.size()) +
             " destination entries for " + to_string(transfers) + " transfers";
    // Words sent (a broadcast word once) and written (once per
    // destination), saturating: only compared with bounds below 2^64.
    uint64_t sent = 0, written = 0;
    for (size_t t = 0; t < transfers; ++t) {
      uint64_t bytes = uint64_t(phase.words[t]) * wordBytes;
      uint64_t source = packagePhase.sourceAddress[t];
      uint64_t dest = packagePhase.destAddress[t];
      if (bytes > target.tileMemoryBytes)
        return prefix + " transfer " + to_string(t) + " from tile " +
               to_string(phase.source[t]) + ": " +
               to_string(phase.words[t]) + " words (" + to_string(bytes) +
               " bytes) are more than a tile holds (" +
               to_string(target.tileMemoryBytes) + " bytes)";
      uint64_t destinations = phase.destBegin[t + 1] - phase.destBegin[t];
      sent = saturatingAdd(sent, phase.words[t]);
      written = saturatingAdd(written, phase.words[t] * destinations);
      if (!insideTileMemory(source, bytes))
        return prefix + " transfer " + to_string(t) + " from tile " +
               to_string(phase.source[t]) + ": source range " +
               rangeString(source, bytes) + " lies outside tile memory";
      if (!insideTileMemory(dest, bytes))
        return prefix + " transfer " + to_string(t) + " from tile " +
               to_string(phase.source[t]) + ": destination range " +
               rangeString(dest, bytes) + " lies outside tile memory";
      if (source < lowestStandard || dest < lowestStandard) {
        noteAddress(source, bytes, prefix + " transfer " + to_string(t) + " source");
        noteAddress(dest, bytes, prefix + " transfer " + to_string(t) + " destination");
      }
    }
    // Writes are disjoint on each tile (checkPhaseOverlap), so a phase
    // writes no more than the device holds; said first, since the
    // simulator stages every word sent.
    if (written > deviceBytes / wordBytes)
      return prefix + ": transfers write " + to_string(written) +
             " words over their destinations, more than the device holds (" +
             to_string(deviceBytes / wordBytes) + " words: " + deviceString() + ")";
    // Every run sends at least one word and every word is sent once;
    // checkSchedule sorts one interval per run and destination.
    const std::vector<ExchangeRun> &runs = packagePhase.schedule.runs;
    if (runs.size() > sent)
      return prefix + ": schedule has " + to_string(runs.size()) +
             " runs, more than the " + to_string(sent) +
             " words its transfers send";
    uint64_t receives = 0;
    for (const ExchangeRun &run : runs)
      if (run.transfer < transfers) // Otherwise checkSchedule says so.
        receives = saturatingAdd(receives, phase.destBegin[run.transfer + 1] -
                                               phase.destBegin[run.transfer]);
    if (receives > PackageLimits::kMaxPhaseReceives)
      return prefix + ": schedule has " + to_string(receives) +
             " receive intervals (runs times their destinations), more than " +
             "the " + to_string(PackageLimits::kMaxPhaseReceives) +
             " a phase may have";
    // Every word once; no word overwritten before it is sent; then every
    // rule of the hardware's exchange (lib/Exchange/Timing.h): the loader
    // trusts no schedule it has not timed itself.
    if (auto error = checkScheduleCoverage(phase, packagePhase.schedule))
      return prefix + ": illegal schedule: " + *error;
    if (auto error = checkPhaseOverlap(packagePhase, prefix))
      return error;
    if (auto error = checkTimedSchedule(target, phase, packagePhase.schedule,
                                        packagePhase.addresses()))
      return prefix + ": illegal schedule: " + *error;
    return std::nullopt;
  }

  /// A byte range one transfer of a phase sends from, or writes on, a tile.
  struct Access {
    uint32_t tile;
    uint32_t transfer;
    uint64_t begin, end;
  };

  /// The simulator stages every word a phase sends before it delivers any
  /// (Simulator.cpp exchange()); the machine reads each word when the
  /// schedule sends it, and writes it no earlier. The two agree when no
  /// byte is written twice (the last write would depend on timing) and
  /// every word that is both sent and overwritten on a tile is sent
  /// strictly before the word overwriting it is. Refuses anything else,
  /// naming the transfers, the tile and the bytes.
  ///
  /// Writes are sorted by (tile, begin): two that overlap are adjacent in
  /// that order once every earlier one is known disjoint. Each source range
  /// then meets the writes it overlaps by binary search, so the cost is
  /// O(n log n) plus the overlapping words, which stay below the words the
  /// phase sends since writes on a tile are disjoint.
  std::optional<std::string> checkPhaseOverlap(const PackagePhase &packagePhase,
                                               const std::string &prefix) {
    const ExchangePhase &phase = packagePhase.phase;
    std::vector<Access> writes;
    writes.reserve(phase.destTiles.size());
    for (uint32_t t = 0; t < phase.size(); ++t) {
      uint64_t dest = packagePhase.destAddress[t];
      uint64_t end = dest + uint64_t(phase.words[t]) * wordBytes;
      for (const uint32_t *d = phase.destinationsBegin(t),
                          *last = phase.destinationsEnd(t);
           d != last; ++d)
        writes.push_back({*d, t, dest, end});
    }
    auto byTileAndBegin = [](const Access &a, const Access &b) {
      return std::tie(a.tile, a.begin, a.transfer) <
             std::tie(b.tile, b.begin, b.transfer);
    };
    std::sort(writes.begin(), writes.end(), byTileAndBegin);
    for (size_t i = 1; i < writes.size(); ++i) {
      const Access &previous = writes[i - 1], &write = writes[i];
      if (previous.tile != write.tile || previous.end <= write.begin)
        continue;
      uint32_t a = std::min(previous.transfer, write.transfer);
      uint32_t b = std::max(previous.transfer, write.transfer);
      return prefix + ": transfers " + to_string(a) + " and " + to_string(b) +
             " both write tile " + to_string(write.tile) + " bytes " +
             rangeString(write.begin,
                         std::min(previous.end, write.end) - write.begin);
    }
    if (writes.empty())
      return std::nullopt;

    // Runs by (transfer, first word), built on the first overlap only: a
    // compiled phase never reads what it writes.
    std::vector<uint32_t> runOrder, runBegin;
    const std::vector<ExchangeRun> &runs = packagePhase.schedule.runs;
    auto sendCycle = [&](uint32_t transfer, uint64_t word) -> uint64_t {
      if (runBegin.empty()) {
        runOrder.resize(runs.size());
        for (uint32_t r = 0; r < runs.size(); ++r)
          runOrder[r] = r;
        std::sort(runOrder.begin(), runOrder.end(), [&](uint32_t a, uint32_t b) {
          return std::tie(runs[a].transfer, runs[a].wordOffset) <
                 std::tie(runs[b].transfer, runs[b].wordOffset);
        });
        runBegin.assign(phase.size() + 1, 0);
        for (const ExchangeRun &run : runs)
          ++runBegin[run.transfer + 1];
        for (size_t t = 0; t < phase.size(); ++t)
          runBegin[t + 1] += runBegin[t];
      }
      // checkScheduleCoverage established that the runs of a transfer cover each
      // of its words exactly once: the last run starting at or before
      // `word` holds it.
      const uint32_t *first = runOrder.data() + runBegin[transfer];
      const uint32_t *last = runOrder.data() + runBegin[transfer + 1];
      const uint32_t *next = std::partition_point(
          first, last, [&](uint32_t r) { return runs[r].wordOffset <= word; });
      const ExchangeRun &run = runs[*(next - 1)];
      return uint64_t(run.start) + (word - run.wordOffset) / (run.paired ? 2 : 1);
    };

    for (uint32_t t = 0; t < phase.size(); ++t) {
      uint32_t tile = phase.source[t];
      uint64_t source = packagePhase.sourceAddress[t];
      uint64_t sourceEnd = source + uint64_t(phase.words[t]) * wordBytes;
      // The first write on this tile ending after the source begins.
      auto write = std::partition_point(
          writes.begin(), writes.end(), [&](const Access &w) {
            return w.tile < tile || (w.tile == tile && w.end <= source);
          });
      for (; write != writes.end() && write->tile == tile &&
             write->begin < sourceEnd;
           ++write) {
        uint64_t begin = std::max(source, write->begin);
        uint64_t end = std::min(sourceEnd, write->end);
        uint64_t dest = packagePhase.destAddress[write->transfer];
        // Every pair of words sharing a byte: the word sent must leave
        // before the word overwriting it is sent.
        for (uint64_t read = (begin - source) / wordBytes; source + read * wordBytes < end;
             ++read) {
          uint64_t low = std::max(begin, source + read * wordBytes);
          uint64_t high = std::min(end, source + read * wordBytes + wordBytes);
          uint64_t readCycle = sendCycle(t, read);
          for (uint64_t written = (low - dest) / wordBytes; dest + written * wordBytes < high;
               ++written) {
            uint64_t writeCycle = sendCycle(write->transfer, written);
            if (readCycle < writeCycle)
              continue;
            return prefix + ": transfer " + to_string(write->transfer) +
                   " overwrites tile " + to_string(tile) + " bytes " +
                   rangeString(begin, end - begin) + " that transfer " +
                   to_string(t) + " sends from it, and the schedule sends " +
                   "word " + to_string(read) + " of transfer " +
                   to_string(t) + " at cycle " + to_string(readCycle) +
                   ", not before word " + to_string(written) +
                   " of transfer " + to_string(write->transfer) +
                   " (cycle " + to_string(writeCycle) + ")";
          }
        }
      }
    }
    return std::nullopt;
  }

  std::optional<std::string> checkProgram() {
    for (size_t i = 0; i < package.program.size(); ++i) {
      const Step &step = package.program[i];
      if (step.kind > StepKind::Loop)
        return "program step " + to_string(i) + ": unknown step kind " +
               to_string(unsigned(step.kind));
      std::string where =
          "program step " + to_string(i) + " (" + stepKindName(step.kind) + ")";
      auto outOfRange = [&](size_t count, const char *what) {
        return where + ": index " + to_string(step.index) +
               " is out of range (" + to_string(count) + " " + what + ")";
      };
      switch (step.kind) {
      case StepKind::StreamIn:
      case StepKind::StreamOut: {
        if (step.index >= package.streams.size())
          return outOfRange(package.streams.size(), "streams");
        const HostStream &stream = package.streams[step.index];
        bool in = step.kind == StepKind::StreamIn;
        if (stream.toDevice != in)
          return where + ": stream '" + stream.name + "' is a" +
                 (stream.toDevice ? "n input" : "n output") + " stream";
        if (!in)
          streamedOut.insert(stream.index);
        break;
      }
      case StepKind::Compute: {
        if (step.index >= package.computeSets.size())
          return outOfRange(package.computeSets.size(), "compute sets");
        const std::string &kernel = package.computeSets[step.index].kernel;
        gemmSteps += kernel == "gemm" || kernel == "gemm_t";
        const KernelSpec *spec = lookupKernel(package, kernel);
        generatedSteps += spec && spec->elementwise;
        break;
      }
      case StepKind::Exchange:
        ++exchangeSteps;
        if (step.index >= package.phases.size())
          return outOfRange(package.phases.size(), "phases");
        break;
      case StepKind::Sync:
      case StepKind::Loop: // checkLoops.
        break;
      }
    }
    return std::nullopt;
  }

  /// A step's footprint on one tile: one byte range it uses.
  enum class Use : uint8_t { Compute, ExchangeRead, ExchangeWrite };
  struct Touch {
    uint32_t tile = 0;
    uint32_t step = UINT32_MAX; ///< Program index; UINT32_MAX: none.
    uint64_t begin = 0, end = 0;
    Use use = Use::Compute;
  };

  std::string stepLabel(size_t step) const {
    const Step &s = package.program[step];
    if (s.kind == StepKind::Compute)
      return to_string(step) + " (compute set '" +
             package.computeSets[s.index].name + "')";
    return to_string(step) + " (exchange phase '" +
           package.phases[s.index].name + "')";
  }

  /// Bulk-synchronous legality. Between two syncs (a superstep) the tiles
  /// run their compute sets and exchange phases with no ordering between
  /// one tile's compute and another tile's exchange, so a compute set and a
  /// phase of one superstep must not touch the same bytes of a tile, in
  /// either order: the phase would read operands not yet computed, or the
  /// compute set results not yet delivered. Two phases of one superstep may
  /// share bytes only to read them. A compute set's footprint is every
  /// operand range of its vertex on the tile (written or not: kernels do not
  /// declare which they write); a phase's footprint is what it sends from
  /// the tile and what it writes on it. What one phase does to its own
  /// bytes is checkPhaseOverlap's business.
  ///
  /// Host streams are outside this rule: the simulator runs each one whole,
  /// at its place in the program and outside device time, so it cannot race
  /// a device step (the lowering streams a checkpoint out right after the
  /// compute set that wrote it, with no sync).
  ///
  /// Per superstep: collect the footprints, sort them by (tile, begin) and
  /// sweep, keeping per kind of use the range reaching furthest, and the
  /// furthest of any other step, so that a range meets every earlier one
  /// that could conflict with it in O(1).
  std::optional<std::string> checkSupersteps() {
    size_t begin = 0;
    for (size_t i = 0; i <= package.program.size(); ++i) {
      if (i < package.program.size() &&
          package.program[i].kind != StepKind::Sync)
        continue;
      if (auto error = checkSuperstep(begin, i))
        return error;
      begin = i + 1;
    }
    return std::nullopt;
  }

  std::optional<std::string> checkSuperstep(size_t first, size_t last) {
    size_t computes = 0, exchanges = 0;
    for (size_t i = first; i < last; ++i) {
      computes += package.program[i].kind == StepKind::Compute;
      exchanges += package.program[i].kind == StepKind::Exchange;
    }
    // Compute sets alone run in program order on each tile: nothing to race.
    if (exchanges == 0 || (computes == 0 && exchanges == 1))
      return std::nullopt;

    // A compute set or phase run again in the superstep touches the same
    // bytes under another step number, so its first run meets every range a
    // repeat would (compute sets never race each other): only first runs
    // are swept, which keeps the touches within the package's own tables
    // however long the superstep. A phase run twice writes its bytes twice,
    // a race by itself.
    std::map<std::pair<StepKind, uint32_t>, size_t> firstRun;
    std::vector<Touch> touches;
    for (size_t i = first; i < last; ++i) {
      const Step &step = package.program[i];
      uint32_t index = static_cast<uint32_t>(i);
      if (step.kind != StepKind::Compute && step.kind != StepKind::Exchange)
        continue;
      auto [run, inserted] = firstRun.try_emplace({step.kind, step.index}, i);
      if (!inserted) {
        const PackagePhase *phase = step.kind == StepKind::Exchange
                                        ? &package.phases[step.index]
                                        : nullptr;
        if (!phase || phase->phase.size() == 0)
          continue;
        // Named by its first write in (tile, address) order, as the sweep
        // would.
        const ExchangePhase &transfers = phase->phase;
        std::tuple<uint32_t, uint64_t, uint64_t> write{UINT32_MAX, 0, 0};
        for (size_t t = 0; t < transfers.size(); ++t)
          for (const uint32_t *d = transfers.destinationsBegin(t),
                              *end = transfers.destinationsEnd(t);
               d != end; ++d)
            write = std::min(write, {*d, phase->destAddress[t],
                                     uint64_t(transfers.words[t]) * wordBytes});
        return "program steps " + stepLabel(run->second) + " and " +
               stepLabel(i) + " both touch tile " +
               to_string(std::get<0>(write)) + " bytes " +
               rangeString(std::get<1>(write), std::get<2>(write)) +
               " with no sync between them";
      }
      if (step.kind == StepKind::Compute) {
        const ComputeSet &computeSet = package.computeSets[step.index];
        const KernelSpec &kernel = *lookupKernel(package, computeSet.kernel);
        size_t operands = kernel.operandNames.size();
        size_t params = kernel.paramNames.size();
        for (size_t v = 0; v < computeSet.tiles.size(); ++v) {
          const int64_t *vertexParams = computeSet.params.data() + v * params;
          for (size_t o = 0; o < operands; ++o) {
            uint64_t address = computeSet.operandAddress[v * operands + o];
            uint64_t bytes = kernelOperandBytes(kernel, vertexParams, o);
            if (!bytes)
              continue;
            // An advancing operand touches every iteration's bytes in the
            // superstep (conservative); checkComputeSet kept the span inside
            // tile memory.
            uint64_t span = bytes;
            operandSpan(step.index, v, o, operands, bytes, span);
            touches.push_back({computeSet.tiles[v], index, address,
                               address + span, Use::Compute});
          }
        }
      } else if (step.kind == StepKind::Exchange) {
        const PackagePhase &phase = package.phases[step.index];
        for (size_t t = 0; t < phase.phase.size(); ++t) {
          uint64_t bytes = uint64_t(phase.phase.words[t]) * wordBytes;
          uint64_t source = phase.sourceAddress[t];
          uint64_t dest = phase.destAddress[t];
          touches.push_back({phase.phase.source[t], index, source,
                             source + bytes, Use::ExchangeRead});
          for (const uint32_t *d = phase.phase.destinationsBegin(t),
                              *end = phase.phase.destinationsEnd(t);
               d != end; ++d)
            touches.push_back(
                {*d, index, dest, dest + bytes, Use::ExchangeWrite});
        }
      }
    }
    std::sort(touches.begin(), touches.end(),
              [](const Touch &a, const Touch &b) {
                return std::tie(a.tile, a.begin, a.end, a.step, a.use) <
                       std::tie(b.tile, b.begin, b.end, b.step, b.use);
              });

    // Per use: the touch reaching furthest so far on this tile, and the
    // furthest among the other steps.
    constexpr size_t kUses = 3;
    Touch furthest[kUses], furthestOther[kUses];
    auto conflicts = [](Use a, Use b) {
      if (a == Use::Compute || b == Use::Compute)
        return a != b; // Compute against either side of an exchange.
      return a == Use::ExchangeWrite || b == Use::ExchangeWrite;
    };
    for (size_t i = 0; i < touches.size(); ++i) {
      const Touch &touch = touches[i];
      if (i == 0 || touch.tile != touches[i - 1].tile)
        for (size_t u = 0; u < kUses; ++u)
          furthest[u] = furthestOther[u] = Touch();
      for (size_t u = 0; u < kUses; ++u) {
        if (!conflicts(Use(u), touch.use))
          continue;
        const Touch &earlier =
            furthest[u].step != touch.step ? furthest[u] : furthestOther[u];
        // Sorted by begin, so `earlier` starts at or before `touch`.
        if (earlier.step == UINT32_MAX || earlier.end <= touch.begin)
          continue;
        uint64_t end = std::min(earlier.end, touch.end);
        uint32_t a = std::min(earlier.step, touch.step);
        uint32_t b = std::max(earlier.step, touch.step);
        return "program steps " + stepLabel(a) + " and " + stepLabel(b) +
               " both touch tile " + to_string(touch.tile) + " bytes " +
               rangeString(touch.begin, end - touch.begin) +
               " with no sync between them";
      }
      Touch &best = furthest[size_t(touch.use)];
      Touch &other = furthestOther[size_t(touch.use)];
      if (touch.end > best.end) {
        if (touch.step != best.step)
          other = best;
        best = touch;
      } else if (touch.step != best.step && touch.end > other.end) {
        other = touch;
      }
    }
    return std::nullopt;
  }

  /// Reports compute efficiency from the program's own count; a package
  /// that claims another figure is lying about one of the two.
  std::optional<std::string> checkFlops() {
    flops = programFlops(package);
    if (flops == UINT64_MAX)
      return "package program performs at least 2^64 - 1 FLOPs (2*m*k*n over "
             "its gemm vertices), too many to check flops=" +
             to_string(package.flops) + " against";
    if (package.flops != flops)
      return "package claims flops=" + to_string(package.flops) +
             ", but its program performs " + to_string(flops) +
             " (2*m*k*n over its gemm vertices)";
    return std::nullopt;
  }



  /// The shape of operand `a` of reference op `i`, and its name.
  std::optional<std::string> referenceOperand(size_t i, unsigned a,
                                              const std::string &where,
                                              std::vector<int64_t> &shape,
                                              std::string &name) {
    uint32_t argument = package.reference[i].arguments[a];
    if (argument >= ReferenceOp::kReferenceValue) {
      uint32_t producer = argument - ReferenceOp::kReferenceValue;
      if (producer >= i)
        return where + ": operand " + to_string(a) + " names reference op " +
               to_string(producer) + ", which does not come before it";
      shape = referenceShapes[producer];
      name = "reference op " + to_string(producer);
      return std::nullopt;
    }
    auto it = argumentStream.find(argument);
    if (it == argumentStream.end())
      return where + ": argument " + to_string(argument) +
             " is not an input stream";
    shape = it->second->shape;
    name = "'" + it->second->name + "'";
    return std::nullopt;
  }

  std::optional<std::string> checkReference(size_t i) {
    const ReferenceOp &op = package.reference[i];
    std::string where =
        "reference op " + to_string(i) + " ('" + std::string(referenceKindName(op.kind)) + "')";
    if (op.type > ElementType::F8E5M2)
      return where + ": value type " + to_string(unsigned(op.type)) +
             " is not an element type";
    if (unsigned(op.kind) >= kReferenceKinds)
      return where + ": unknown kind " + to_string(unsigned(op.kind)) +
             " (known: " + referenceKindNames() + ")";
    // Each kind's check (<Kind>Reference.cpp), in ReferenceKinds.def's order.
    using KindCheck = std::optional<std::string> (*)(
        const ReferenceChecking &, size_t, const std::string &, ReferenceSignature &);
    static constexpr KindCheck kKindChecks[] = {
#define IPU_REFERENCE_KIND(Kind, name, arity) &check##Kind##Reference,
#include "IPU/Package/ReferenceKinds.def"
    };
    /// The package and the shapes of the ops checked so far, for the kinds.
    struct Checking : ReferenceChecking {
      Validator &validator;
      explicit Checking(Validator &validator) : validator(validator) {}
      const Package &package() const override { return validator.package; }
      std::optional<std::string> operand(size_t i, unsigned a, const std::string &where,
                                         std::vector<int64_t> &shape,
                                         std::string &name) const override {
        return validator.referenceOperand(i, a, where, shape, name);
      }
    } checking(*this);
    ReferenceSignature signature;
    if (auto error = kKindChecks[unsigned(op.kind)](checking, i, where, signature))
      return error;
    const std::vector<int64_t> &shape = signature.shape;
    const std::string &operandsText = signature.operands;
    const uint64_t opFlops = signature.flops;
    const std::string &form = signature.form, &resultForm = signature.resultForm;
    // ipu-run holds the value: it must be one the device could (extents
    // are positive: stream shapes were checked, and so were earlier ops).
    uint64_t valueBytes = elementBytes(op.type);
    for (int64_t extent : shape)
      if (!multiply(valueBytes, uint64_t(extent), valueBytes) ||
          valueBytes > deviceBytes)
        return where + ": value " + shapeString(shape) + "x" +
               std::string(elementTypeName(op.type)) +
               " is larger than the device (" + deviceString() + ")";
    referenceFlops = saturatingAdd(referenceFlops, opFlops);
    referenceShapes.push_back(shape);
    if (op.result == ReferenceOp::kNoResult) {
      // ipu-run keeps every intermediate value for the ops that read it; a
      // checked value is bounded by its result stream instead.
      intermediateBytes = saturatingAdd(intermediateBytes, valueBytes);
      if (intermediateBytes > deviceBytes)
        return where + ": intermediate values come to " +
               to_string(intermediateBytes) +
               " bytes with this one, more than the device (" +
               deviceString() + ")";
      return std::nullopt;
    }
    auto it = resultStream.find(op.result);
    if (it == resultStream.end())
      return where + ": result " + to_string(op.result) +
             " is not an output stream";
    const HostStream &result = *it->second;
    // The check compares what the program streams out, once per result.
    if (!streamedOut.count(op.result))
      return where + ": result " + to_string(op.result) + " ('" +
             result.name + "') is never streamed out by the program";
    if (resultOwner[op.result] != UINT32_MAX)
      return where + ": result " + to_string(op.result) + " ('" +
             result.name + "') is already the value of reference op " +
             to_string(resultOwner[op.result]);
    resultOwner[op.result] = static_cast<uint32_t>(i);
    // The stream may hold the value with its leading dims folded into its
    // rows (holdsValueOf).
    if (!holdsValueOf(result.shape, shape))
      return where + ": " + operandsText + " -> " + shapeString(result.shape) +
             " ('" + result.name + "') are not " + form + " -> " + resultForm +
             " (the value is " + shapeString(shape) + ")";
    if (result.type != op.type)
      return where + ": value type " + std::string(elementTypeName(op.type)) +
             " differs from result stream '" + result.name + "' (" +
             std::string(elementTypeName(result.type)) + ")";
    return std::nullopt;
  }

  const Package &package;
  const TargetModel &target;
  /// The target's exchange word: transfers move whole words of it.
  const uint64_t wordBytes;
  uint64_t maxHostWork;
  uint64_t memoryBase = 0;
  uint64_t memoryEnd = 0;
  uint64_t deviceBytes = 0; ///< tiles x tileMemoryBytes.
  uint64_t inputStreams = 0, outputStreams = 0;
  /// Per tile, the bytes the stream being checked moves; zero between
  /// streams.
  std::vector<uint64_t> streamBytes;
  /// Streams by argument index (inputs) and result index (outputs).
  std::map<uint32_t, const HostStream *> argumentStream, resultStream;
  /// Result indices some StreamOut step streams out.
  std::set<uint32_t> streamedOut;
  uint64_t gemmSteps = 0; ///< Compute steps running gemm or gemm_t.
  /// The lowest standard-memory address any buffer of the program uses,
  /// and who uses it there (checkReservedArea).
  uint64_t lowestStandard = UINT64_MAX;
  std::string lowestStandardUser;
  uint64_t generatedSteps = 0; ///< Compute steps running generated kernels.
  uint64_t exchangeSteps = 0;  ///< Exchange steps (a permute is one).
  uint64_t flops = 0;     ///< programFlops(), once checkFlops has run.
  std::vector<std::vector<int64_t>> referenceShapes; ///< Per checked op.
  /// Per result index, the reference op whose value it is, or UINT32_MAX.
  std::vector<uint32_t> resultOwner;
  /// Per compute set: the most iterations a loop runs it for (1 when
  /// none does) and that loop (UINT32_MAX when none), and the first program
  /// step running it outside any loop (UINT32_MAX when none). checkLoops.
  std::vector<uint32_t> setIterations, setLoop, setOutsideStep;
  /// Per program step, the loop step whose body directly holds it, or
  /// SIZE_MAX. checkLoops.
  std::vector<size_t> loopAround;
  uint64_t referenceFlops = 0;    ///< 2*batches*m*k*n over the ops, saturating.
  uint64_t intermediateBytes = 0; ///< Values of the ops without a result.
};

} // namespace

const KernelSpec *ipu::lookupKernel(const Package &package, std::string_view name) {
  for (const std::shared_ptr<ElementwiseKernel> &kernel : package.kernels)
    if (kernel->name() == name)
      return &kernel->spec();
  return lookupKernel(name);
}

std::optional<std::string> ipu::tallyReservedArea(const Package &package,
                                                  const TargetModel &target,
                                                  ReservedArea &area) {
  for (const PackagePhase &phase : package.phases)
    area.addPhase(phase.phase, phase.schedule, phase.addresses());
  for (const ComputeSet &computeSet : package.computeSets) {
    const KernelSpec *kernel = lookupKernel(package, computeSet.kernel);
    if (!kernel)
      return "compute set '" + computeSet.name + "' runs unknown kernel '" +
             computeSet.kernel + "'";
    area.addVertices(computeSet.tiles, kernel->operandNames.size(),
                     kernel->paramNames.size());
    if (kernel->elementwise)
      area.addKernelCode(computeSet.tiles, computeSet.kernel,
                         elementwiseCodeBytes(target, kernel->elementwise->body()));
  }
  return std::nullopt;
}

std::optional<std::string> ipu::validatePackage(const Package &package,
                                                const TargetModel &target,
                                                uint64_t maxHostWork) {
  return Validator(package, target, maxHostWork).run();
}

/// The program steps inside some loop's body.
static std::vector<bool> stepsInLoops(const Package &package) {
  std::vector<bool> inLoop(package.program.size(), false);
  for (size_t s = 0; s < package.program.size(); ++s) {
    const Step &step = package.program[s];
    if (step.kind != StepKind::Loop || step.index >= package.loops.size())
      continue;
    const size_t end = std::min<size_t>(package.program.size() - 1 - s,
                                        package.loops[step.index].steps);
    std::fill(inLoop.begin() + s + 1, inLoop.begin() + s + 1 + end, true);
  }
  return inLoop;
}

std::optional<std::string> ipu::checkReferenceCoverage(const Package &package) {
  std::set<uint32_t> results;
  for (const ReferenceOp &op : package.reference)
    if (op.result != ReferenceOp::kNoResult)
      results.insert(op.result);
  for (const HostStream &stream : package.streams)
    if (!stream.toDevice && !results.count(stream.index))
      return "output stream '" + escapeText(stream.name) + "' (result " +
             to_string(stream.index) +
             ") is the value of no reference op: nothing would compare it";
  // A "streamed" op takes the device's value as given, unchecked: only the
  // value a loop of repeated layers carries into its last layer may be,
  // since the host checks that layer on it. Anything else would let a
  // package vouch for its own results (a function result, or the matmul it
  // derives from, marked "streamed" passes whatever the device computed).
  const std::vector<bool> inLoop = stepsInLoops(package);
  for (size_t i = 0; i < package.reference.size(); ++i) {
    const ReferenceOp &op = package.reference[i];
    if (op.kind != ReferenceKind::Streamed)
      continue;
    std::string stream = "result " + to_string(op.result);
    for (const HostStream &candidate : package.streams)
      if (!candidate.toDevice && candidate.index == op.result)
        stream = "output stream '" + escapeText(candidate.name) + "' (" + stream + ")";
    const std::string where = "reference op " + to_string(i) + " ('streamed') takes " + stream;
    if (package.results == 0)
      return where + " as the device's own value, but the package does not say which "
             "streams are the function's results (format before 6): compile it again";
    if (op.result < package.results)
      return where + ", a result of the function, as the device's own value: nothing "
             "would compare it with the inputs";
    bool carried = false;
    for (size_t s = 0; s < package.program.size() && !carried; ++s) {
      const Step &step = package.program[s];
      carried = step.kind == StepKind::StreamOut && inLoop[s] &&
                step.index < package.streams.size() &&
                !package.streams[step.index].toDevice &&
                package.streams[step.index].index == op.result;
    }
    if (!carried)
      return where + " as the device's own value, but no loop streams it out: only "
             "what a loop of repeated layers carries into its last layer may "
             "be taken as given";
  }
  return std::nullopt;
}

uint64_t ipu::streamBytes(const HostStream &stream) {
  uint64_t bytes = 0;
  for (const StreamPiece &piece : stream.pieces)
    bytes = saturatingAdd(bytes, uint64_t(piece.rows) * piece.rowBytes);
  return bytes;
}

std::vector<uint64_t> ipu::stepRuns(const Package &package) {
  const std::vector<Step> &program = package.program;
  std::vector<uint64_t> runs(program.size(), 1);
  // The loops open at the step being read: one past each body, and the
  // runs of a step in it.
  std::vector<std::pair<size_t, uint64_t>> open;
  for (size_t s = 0; s < program.size(); ++s) {
    while (!open.empty() && s >= open.back().first)
      open.pop_back();
    const uint64_t repeat = open.empty() ? 1 : open.back().second;
    runs[s] = repeat;
    const Step &step = program[s];
    if (step.kind != StepKind::Loop || step.index >= package.loops.size())
      continue;
    const PackageLoop &loop = package.loops[step.index];
    const size_t limit = open.empty() ? program.size() : open.back().first;
    if (loop.steps > limit - s - 1)
      continue;
    uint64_t inner;
    if (__builtin_mul_overflow(repeat, uint64_t(loop.count), &inner))
      inner = UINT64_MAX;
    open.push_back({s + 1 + loop.steps, inner});
  }
  return runs;
}

const char *ipu::stepKindName(StepKind kind) {
  switch (kind) {
  case StepKind::StreamIn:
    return "stream in";
  case StepKind::StreamOut:
    return "stream out";
  case StepKind::Compute:
    return "compute";
  case StepKind::Exchange:
    return "exchange";
  case StepKind::Sync:
    return "sync";
  case StepKind::Loop:
    return "loop";
  }
  return "unknown";
}
