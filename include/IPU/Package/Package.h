//===- Package.h - The executable package as plain data ------------------===//
//
// What `ipu-translate --ipu-to-package` emits and `ipu-run` loads. The wire
// format is Cap'n Proto (lib/Package/Package.capnp); this is its in-memory
// form, free of Cap'n Proto and MLIR types so that every tool can use it.
// All addresses are resolved tile-memory byte addresses.
//
//===----------------------------------------------------------------------===//

#ifndef IPU_PACKAGE_PACKAGE_H
#define IPU_PACKAGE_PACKAGE_H

#include "IPU/Device/Elementwise.h"
#include "IPU/Exchange/Phase.h"
#include "IPU/Exchange/Timing.h"
#include "IPU/Storage/ReservedArea.h"
#include "IPU/Support/ElementType.h"
#include "IPU/Target/TargetModel.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace ipu {

/// A rectangle of rows copied between a host tensor and one tile.
struct StreamPiece {
  uint32_t tile = 0;
  uint32_t address = 0;     ///< Tile address of the first row.
  uint64_t hostOffset = 0;  ///< Byte offset of the first row in the tensor.
  uint32_t rows = 0;
  uint32_t rowBytes = 0;    ///< Bytes copied per row.
  uint32_t tilePitch = 0;   ///< Bytes between rows on the tile.
  uint64_t hostPitch = 0;   ///< Bytes between rows on the host.
  /// 0: each row is contiguous on the host. Otherwise the bytes between
  /// consecutive elements of a tile row on the host: a transposing stream
  /// (weights stored as B^T) gathers a host column into each tile row.
  uint64_t hostElementStride = 0;

  /// `rows` rows of `rowBytes` packed on `tile` (at address 0), `hostPitch`
  /// apart on the host from `hostOffset`.
  static StreamPiece packedRows(uint32_t tile, uint64_t hostOffset,
                                uint32_t rows, uint32_t rowBytes,
                                uint64_t hostPitch,
                                uint64_t hostElementStride = 0) {
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
};

/// A host stream: a function argument copied in, or a result copied out.
/// Counted in device cycles only when it runs during the run (see
/// layerStreams): every byte its pieces write, replicas included, crosses
/// the host link.
struct HostStream {
  std::string name;
  bool toDevice = true;
  bool weight = false;     ///< Loaded once at initialisation.
  uint32_t index = 0;      ///< Argument index (in) or result index (out).
  ElementType type = ElementType::F32;
  std::vector<int64_t> shape;
  std::vector<StreamPiece> pieces;
  /// The shape the compiled function declares, when it is not `shape`: the
  /// same elements in the same order, as a user's framework holds them
  /// (what --inputs reads and --outputs writes).
  std::vector<int64_t> declaredShape;
  /// Empty, or one index into Package::streams per iteration of the loop
  /// directly around the step that streams this one: in iteration i that
  /// step streams streams[layerStreams[i]] (a repeated layer's weights,
  /// streamed from the host each layer, whose other streams no step names).
  /// Such a stream runs during the run and costs device cycles
  /// (TargetModel::hostStreamCycles); the others do not.
  std::vector<uint32_t> layerStreams;
  /// -1, or the dimension of the declared shape (else `shape`) along which
  /// an input holds a batch of images, as the exporter marked it
  /// (`ipu_tile.batch_dim`): what imagesPerRun counts.
  int32_t batchDim = -1;
};

/// An argument whose value the package carries (a frozen weight of an
/// exported model): the host streams these bytes in, not generated or
/// user-given ones.
struct ArgumentConstant {
  uint32_t argument = 0;
  std::vector<uint8_t> bytes; ///< Row-major, little-endian, its streams' type.
};

/// One kernel on a set of tiles: a vertex per tile.
struct ComputeSet {
  std::string name;
  std::string kernel;
  std::vector<uint32_t> tiles;
  std::vector<uint32_t> operandAddress; ///< tiles x operand count.
  std::vector<int64_t> params;          ///< tiles x parameter count.
  /// "file:line:col" of the op it runs for (empty when unknown): what ties
  /// a profile's figures to the source.
  std::string location;
  /// Empty, or tiles x operand count like operandAddress: in iteration i of
  /// the loop that runs it, operand o of vertex v is at operandAddress[v *
  /// ops + o] + i * operandAdvance[v * ops + o] (poplibs' dynamic slice and
  /// update: chunk i of a buffer holding every chunk). A set with a nonzero
  /// entry runs only inside a loop body.
  std::vector<uint32_t> operandAdvance;
};

/// An exchange phase with resolved addresses and its schedule.
struct PackagePhase {
  std::string name;
  ExchangePhase phase;
  std::vector<uint32_t> sourceAddress; ///< Per transfer.
  std::vector<uint32_t> destAddress;   ///< Per transfer, on every dest.
  ExchangeSchedule schedule;
  std::string location; ///< As ComputeSet::location.
  TransferAddresses addresses() const { return {sourceAddress, destAddress}; }
};

enum class StepKind : uint8_t {
  StreamIn,
  StreamOut,
  Compute,
  Exchange,
  Sync,
  Loop
};

/// "stream in", "stream out", "compute", "exchange", "sync" or "loop".
const char *stepKindName(StepKind kind);

struct Package;
/// The bytes a stream's pieces carry: every replica's, as they cross the
/// host link.
uint64_t streamBytes(const HostStream &stream);
/// Per program step, how many times a run executes it: the product of the
/// counts of the loops whose bodies hold it, saturating. A loop step naming
/// no loop, or whose body leaves the program or the body around it,
/// repeats nothing (validatePackage refuses such a package).
std::vector<uint64_t> stepRuns(const Package &package);

struct Step {
  StepKind kind = StepKind::Sync;
  uint32_t index = 0; ///< Into streams, computeSets, phases or loops.
};

/// A serial loop: the program step {Loop, index} at position p makes the
/// next `steps` entries (p + 1 .. p + steps) its body, run `count` times
/// (iterations 0 .. count - 1) over the same buffers; execution then goes
/// on at p + steps + 1. A body starts with a sync, so that iterations are
/// separated by a barrier. A body may hold loops of its own (a serial split
/// inside a repeated layer), each wholly inside it, at most
/// PackageLimits::kMaxLoopDepth deep; an operand's advance is per iteration
/// of the innermost loop that runs its compute set.
struct PackageLoop {
  std::string name;
  uint32_t count = 1;
  uint32_t steps = 0;
  std::string location; ///< As ComputeSet::location.
};

/// What a reference op computes: one per row of ReferenceKinds.def.
enum class ReferenceKind : uint8_t {
#define IPU_REFERENCE_KIND(Kind, name, arity) Kind,
#include "IPU/Package/ReferenceKinds.def"
};
constexpr unsigned kReferenceKinds = 0
#define IPU_REFERENCE_KIND(Kind, name, arity) +1
#include "IPU/Package/ReferenceKinds.def"
    ;
/// "matmul", "elementwise", "permute": the name reports use ("unknown"
/// for a value that is no kind).
std::string_view referenceKindName(ReferenceKind kind);
std::optional<ReferenceKind> parseReferenceKind(std::string_view name);
/// Operands a kind takes, 0 where its kernel's inputs say.
unsigned referenceKindArity(ReferenceKind kind);
/// Every kind's name, ", " between them: for errors that list them.
std::string referenceKindNames();

/// A host reference computation, for `ipu-run --check`. A matmul: value =
/// arguments[0] x arguments[1], operands decoded to f32, accumulated in f32
/// and rounded to `type`. Ops run in order, so a chain (an MLP) is checked
/// with its intermediates rounded as the device stores them. The operand
/// ranks say which product (matmulShape): lhs [..., M, K] x rhs [K, N]
/// folds the leading dimensions of lhs into M; lhs [B..., M, K] x rhs
/// [B..., K, N] (the same leading dimensions) is a matmul per batch.
struct ReferenceOp {
  /// An operand below kReferenceValue is a function argument index; at or
  /// above it, kReferenceValue + r names the value of reference op r < this.
  static constexpr uint32_t kReferenceValue = 0x80000000u;
  /// The result of an op that is only an intermediate value.
  static constexpr uint32_t kNoResult = 0xFFFFFFFFu;
  ReferenceKind kind = ReferenceKind::Matmul;
  std::vector<uint32_t> arguments;
  uint32_t result = 0; ///< Function result index, or kNoResult.
  ElementType type = ElementType::F32; ///< Element type of the value.
  /// A matmul's fields. What the device accumulated in (f32 or f16): the
  /// check's tolerance
  /// follows the roundings it implies.
  ElementType partials = ElementType::F32;
  /// The device sums K in this many balanced blocks (the plan's inner
  /// partitions), each accumulated from zero on its own tile: where its
  /// f16 partials are rounded.
  uint32_t innerBlocks = 1;
  /// lhs is given as [..., K, M], rhs as [..., N, K]: the product takes the
  /// transpose of the last two dimensions of each matrix.
  bool transposeLhs = false;
  bool transposeRhs = false;
  /// f8 operands: each product times 2^inputScale, as the AMP's input
  /// scale applies it (0 otherwise).
  int32_t inputScale = 0;
  /// An elementwise op's field: the index in Package::kernels of the body the value
  /// is, element by element, of its arguments (broadcast as the body's
  /// inputs say, over the shape of the first full input).
  uint32_t kernel = 0;
  /// A permute's fields: the operand read as `view` with its dims permuted, read
  /// row-major as the value's shape (`shape`).
  std::vector<int64_t> view, permutation, shape;
  /// A permute's window of the permuted view (both empty: all of it).
  std::vector<int64_t> offsets, sizes;

  /// A plain f32 matmul of `arguments` giving function result `result`.
  static ReferenceOp matmul(std::vector<uint32_t> arguments, uint32_t result) {
    ReferenceOp op;
    op.arguments = std::move(arguments);
    op.result = result;
    return op;
  }
};

/// The product a "matmul" reference op computes, from its operand shapes.
struct MatmulShape {
  int64_t batches = 1; ///< Matrices of lhs: the product of its leading dims.
  int64_t m = 0, k = 0, n = 0;
  /// rhs holds one matrix per batch; otherwise one matrix serves them all.
  bool batchedRhs = false;
  std::vector<int64_t> result; ///< lhs's leading dimensions, then M, N.
};

/// Whether a result stream of `stream` holds a value of `value`: the same
/// shape, or the same elements and rows with leading dims folded into the
/// rows (a matmul's [B * M, N] stream of a [B, M, N] value), read
/// row-major alike.
bool holdsValueOf(const std::vector<int64_t> &stream, const std::vector<int64_t> &value);

/// Shapes a "matmul" reference op of these flags takes: "MxK x KxN" for
/// 2-D operands, "...xMxK x KxN" or "...xMxK x ...xKxN" with leading
/// dimensions, with KxM or NxK for a transposed operand; `result` true gives
/// the value's shape ("MxN", "...xMxN") instead.
std::string matmulForm(const ReferenceOp &op, size_t lhsRank, size_t rhsRank,
                       bool result = false);
/// What `op` computes from operands of shapes `lhs` and `rhs`, or why they
/// do not form its product (to follow "shapes LHS x RHS"): a rank below 2,
/// inner dimensions that differ, or a batched rhs whose leading dimensions
/// are not those of lhs.
std::optional<std::string> matmulShape(const ReferenceOp &op,
                                       const std::vector<int64_t> &lhs,
                                       const std::vector<int64_t> &rhs,
                                       MatmulShape &shape);

/// A placed buffer as the report shows it: where it lives and from which
/// program step to which it is live. Informational: the simulator runs the
/// program from its steps' own addresses; the loader checks these only for
/// consistency with the target and the program.
struct PackageBuffer {
  std::string name;
  MemoryClass memoryClass = MemoryClass::Standard;
  uint32_t address = 0;
  uint32_t bytes = 0; ///< On each tile it spans.
  std::vector<uint32_t> tiles; ///< The tiles it spans, increasing.
  uint32_t firstStep = 0, lastStep = 0;
  std::string location;
};

struct Package {
  /// 2: loops and operand advances. A reader of version 1 would run each
  /// loop body once, silently wrong, so the version says it. 3: kernels
  /// travel as bodies only; the machine code that versions 1 and 2 carried
  /// is never read (ipu-run compiles the bodies itself). 4: exchange
  /// schedules are timed (run starts in events of the hardware's exchange,
  /// 64-bit runs); the untimed schedules of versions 1 to 3 cannot be
  /// checked against the hardware's rules, so they are refused. 5: a
  /// reference op is a union of its kind's fields (ReferenceKind), not a
  /// name beside every kind's fields.
  /// 6: arguments may carry their values (constants) and streams their
  /// declared shapes; a version-5 reader would run random weights instead.
  /// 7: streams during the run (HostStream::layerStreams); a version-6
  /// reader would stream the first layer's weights every iteration.
  /// 8: a program of one image of a batch (`images`); a version-7 reader
  /// would run one image of the batch and call it the batch.
  static constexpr uint32_t kFormatVersion = 8;
  static constexpr uint32_t kOldestFormatVersion = 5;
  uint32_t formatVersion = kFormatVersion;
  std::string compiler;
  std::string target; ///< TargetModel::byName name.
  uint32_t tiles = 0;
  std::string workload;
  /// Useful FLOPs of one run as the compiler claims them; validatePackage
  /// holds it to programFlops(), which is what reports use.
  uint64_t flops = 0;
  std::vector<HostStream> streams;
  std::vector<ComputeSet> computeSets;
  std::vector<PackagePhase> phases;
  std::vector<Step> program;
  std::vector<ReferenceOp> reference;
  /// Generated kernels, named by compute sets like device/ kernels: their
  /// bodies, which ipu-run compiles into host code itself
  /// (IPU/KernelCompiler), for the calling convention `kernelAbiVersion`
  /// (kKernelAbiVersion).
  std::vector<std::shared_ptr<ElementwiseKernel>> kernels;
  uint32_t kernelAbiVersion = 0;
  /// Compiler figures carried to the report (estimates, memory peaks).
  std::vector<std::pair<std::string, std::string>> metadata;
  std::vector<PackageBuffer> buffers;
  std::vector<PackageLoop> loops; ///< Named by Loop steps.
  std::vector<ArgumentConstant> constants; ///< At most one per argument.
  /// The compiled function's result count: output streams of a lower index
  /// carry its results, the others checkpoints for --check (0: unknown).
  uint32_t results = 0;
  /// The program computes one image of a batch of `images`: a run is one
  /// run of the program per image, its arguments without a constant and its
  /// results that many times longer along their leading dim (HostData.h).
  uint32_t images = 1;
};

/// Bounds every package is held to, before anything it sizes is allocated
/// (docs/Design.md, "What the loader checks", has the full table). The
/// others follow from the target: a host tensor, a stream or a phase moves
/// no more than the device holds (tiles x tileMemoryBytes), one transfer no
/// more than one tile holds, an argument or result index stays below the
/// number of input or output streams.
struct PackageLimits {
  /// Bytes of a package file or message. The SigLIP MLP on ipu21 is 4.4 MB
  /// and a phase of 500k transfers about 20 MB; the reader refuses a larger
  /// input before reading it whole.
  static constexpr uint64_t kMaxBytes = uint64_t(1) << 30;
  /// Program steps: the simulator keeps a record per program step. A
  /// SigLIP MLP has 22.
  static constexpr uint64_t kMaxProgramSteps = uint64_t(1) << 24;
  /// Steps run, a loop body's counted once per iteration: what the
  /// simulator spends its time on stays what a program of
  /// kMaxProgramSteps straight-line steps could ask for.
  static constexpr uint64_t kMaxStepsRun = kMaxProgramSteps;
  /// Loops inside loops: a repeated layer's body holding serial splits
  /// needs 2. Bounds the simulator's recursion.
  static constexpr size_t kMaxLoopDepth = 4;
  /// Dimensions of a host tensor.
  static constexpr size_t kMaxTensorRank = 8;
  /// Images of a batch run one after another (Package::images): the host
  /// holds the whole batch's inputs and results (4,096 so400m images are
  /// 3.6 GB of f16 pixels).
  static constexpr uint32_t kMaxImages = 4096;
  /// Per phase, the schedule's runs counted once per destination tile of
  /// their transfer: the receive intervals checkSchedule sorts. Over 30x
  /// a full-chip phase of 500k single-destination transfers.
  static constexpr uint64_t kMaxPhaseReceives = uint64_t(1) << 24;
  /// Simulation work a run may ask for by default, in host work units
  /// (about a nanosecond of host time each: every step weighted by what the
  /// simulator does for it, a gemm vertex's MACs, an exchange's bytes...,
  /// loop bodies once per iteration, once per image): about 10 minutes.
  /// Device cycles are no bound on host time: one cycle of an exchange
  /// costs the host 2.6 ns, one of a full-chip matmul 14 us. The 27-layer
  /// SigLIP so400m tower asks for about 9.4e10 (docs/Design.md, "What the
  /// loader checks"). `ipu-run --max-work` raises it.
  static constexpr uint64_t kDefaultMaxHostWork = uint64_t(600) * 1000 * 1000 * 1000;
};

/// The kernel a compute set names: a generated kernel of the package, or
/// a device/ kernel; null when there is none.
const KernelSpec *lookupKernel(const Package &package, std::string_view name);

/// Serialises to Cap'n Proto bytes.
std::vector<uint8_t> serializePackage(const Package &package);
/// Parses Cap'n Proto bytes; a malformed or truncated message is an error,
/// never a crash, and so is one of more than PackageLimits::kMaxBytes.
std::optional<std::string> deserializePackage(const uint8_t *data, size_t size,
                                              Package &package);
std::optional<std::string> writePackageFile(const std::string &path,
                                            const Package &package);
/// Refuses a file of more than PackageLimits::kMaxBytes before reading it
/// whole (a pipe, as soon as it has sent more).
/// Reads a package file's bytes, refusing one larger than
/// PackageLimits::kMaxBytes before reading it whole (a pipe, as soon as it
/// has sent more).
std::optional<std::string> readPackageBytes(const std::string &path,
                                            std::vector<uint8_t> &bytes);
std::optional<std::string> readPackageFile(const std::string &path,
                                           Package &package);

/// Useful FLOPs of one run, from the program itself rather than from the
/// `flops` field: for every Compute step (a compute set run twice counts
/// twice, a step of a loop body once per iteration), the sum of kernelFlops
/// over its vertices, i.e. 2 * m * k * n per gemm or gemm_t vertex.
/// Saturates at UINT64_MAX. Steps naming no compute set or loop, and
/// vertices without a full row of parameters, count 0 (a step is counted
/// once when its loop is malformed), so any package can be asked; the
/// figure means something once it validates.
uint64_t programFlops(const Package &package);
/// The cycles the program's GEMM work takes at the peak of its own types:
/// each gemm vertex's MACs over the AMP rate of its input and partials
/// types (TargetModel::ampMacsPerCycle), summed over the steps that run it
/// and shared by every tile. Efficiency against a configuration's own peak
/// is this over the program's cycles, which it never exceeds.
double programPeakCycles(const Package &package, const TargetModel &target);

/// Sizes the program's code and state on every tile (ReservedArea) from
/// what `package` holds, as --ipu-place-storage sized it from the IR: its
/// phases' runs, its vertices, its generated kernels. validatePackage
/// refuses a package whose buffers reach into it.
std::optional<std::string> tallyReservedArea(const Package &package,
                                             const TargetModel &target,
                                             ReservedArea &area);

/// Everything the simulator relies on: known target with matching tile
/// count, tiles and addresses in range, kernels known with valid parameters
/// and operands inside tile memory, transfers inside tile memory, legal
/// schedules, streams inside their host tensors, steps naming existing
/// entries, loops whose bodies lie in the program, start with a sync and do
/// not nest, advancing operands inside tile memory in every iteration. And
/// what the reports and the simulator's semantics rely on:
/// `flops` equals programFlops(); no compute set and exchange phase (nor
/// two phases, one writing) touch the same tile bytes without a sync
/// between them; no phase overwrites a word it sends before sending it, and
/// no phase writes a byte twice; the run asks for at most `maxHostWork`
/// units of simulation work (PackageLimits::kDefaultMaxHostWork; the message
/// names the loop that asks for the most, its count and its work per
/// iteration). Every count, size and index is bounded
/// (PackageLimits and the target) before anything is sized with it, and all
/// arithmetic on package fields is checked for overflow. Returns a message
/// naming the entry, the field and the value at fault.
std::optional<std::string>
validatePackage(const Package &package, const TargetModel &target,
                uint64_t maxHostWork = PackageLimits::kDefaultMaxHostWork);

/// What `ipu-run --check` needs on top of validatePackage: every output
/// stream's result is the value of some reference op, so that no output
/// goes unchecked. Returns a message naming the first stream that is not,
/// or nothing. Expects a package that validates.
std::optional<std::string> checkReferenceCoverage(const Package &package);

} // namespace ipu

#endif // IPU_PACKAGE_PACKAGE_H
