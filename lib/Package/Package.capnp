# Package.capnp - The wire format of an executable package.
#
# Mirrors include/IPU/Package/Package.h. Large per-entry tables (stream
# pieces, phase transfers, schedule runs) are stored as parallel lists of
# primitives (struct of arrays): a transfer costs a few 4-byte list entries
# instead of a struct with its own pointers, so 500k transfers stay compact
# and fast to read.
#
# Compatibility: readers check `magic` and refuse a `formatVersion` they do
# not know. Fields may be appended (new ordinals) without a version bump as
# long as older readers can ignore them; anything else bumps
# Package::kFormatVersion. Version 2 added loops: a version 1 reader,
# ignoring them, would run each loop body once. Version 3 stopped carrying
# kernel machine code (retiredKernelObject): a version 2 reader would refuse
# the package for lacking it; a version 3 reader ignores it. Version 4 made
# schedules timed (Phase.runStart in events of the hardware's exchange,
# runPaired): an untimed schedule of versions 1 to 3 is refused. Version 5
# made each reference op a union of its kind's fields instead of a name and
# the fields of every kind: a version 4 package is refused. Version 7 added
# streams during the run (HostStream.layerStreams): a version 6 reader would
# stream the first layer's weights in every iteration.

@0xd1e3a5b7c9f10203;

using Cxx = import "/capnp/c++.capnp";
$Cxx.namespace("ipu::wire");

# "IPUPKG\0\1" read as a little-endian 64-bit integer.
const packageMagic :UInt64 = 0x0100474b50555049;

enum ElementType {
  f32 @0;
  f16 @1;
  f8E4M3FN @2;
  f8E5M2 @3;
}

enum StepKind {
  streamIn @0;
  streamOut @1;
  compute @2;
  exchange @3;
  sync @4;
  loop @5;  # index into Package.loops; the body is the steps that follow.
}

# StreamPiece, one list entry per piece.
struct StreamPieces {
  tile @0 :List(UInt32);
  address @1 :List(UInt32);
  hostOffset @2 :List(UInt64);
  rows @3 :List(UInt32);
  rowBytes @4 :List(UInt32);
  tilePitch @5 :List(UInt32);
  hostPitch @6 :List(UInt64);
  hostElementStride @7 :List(UInt64);  # Empty when every piece is contiguous.
}

struct HostStream {
  name @0 :Text;
  toDevice @1 :Bool;
  weight @2 :Bool;
  index @3 :UInt32;
  type @4 :ElementType;
  shape @5 :List(Int64);
  pieces @6 :StreamPieces;
  # The shape the compiled function declares (empty: `shape`); the same
  # elements in the same order. What --inputs and --outputs exchange.
  declaredShape @7 :List(Int64);
  # Empty, or one stream index per iteration of the loop directly around
  # the step that streams this one: the stream it runs in that iteration
  # (a repeated layer's weights, streamed each layer). Version 7.
  layerStreams @8 :List(UInt32);
  # -1, or the dimension of the declared shape (else `shape`) along which an
  # input holds a batch of images, as the exporter marked it. A reader that
  # does not know it counts images by the older rule.
  batchDim @9 :Int32 = -1;
}

# An argument whose value the package carries (a frozen weight): its bytes,
# row-major and little-endian in the type of its streams.
struct ArgumentConstant {
  argument @0 :UInt32;
  data @1 :Data;
}

struct ComputeSet {
  name @0 :Text;
  kernel @1 :Text;
  tiles @2 :List(UInt32);
  operandAddress @3 :List(UInt32);  # tiles x operand count
  params @4 :List(Int64);           # tiles x parameter count
  location @5 :Text;                # Source location of the op it runs for.
  operandAdvance @6 :List(UInt32);  # Empty, or tiles x operand count: bytes
                                    # an operand moves per loop iteration.
}

struct Phase {
  name @0 :Text;
  tiles @1 :UInt32;
  # Transfers (ExchangePhase), with destinations in CSR form.
  source @2 :List(UInt32);
  words @3 :List(UInt32);
  destBegin @4 :List(UInt32);
  destTiles @5 :List(UInt32);
  sourceAddress @6 :List(UInt32);
  destAddress @7 :List(UInt32);
  # Schedule runs (ExchangeRun), one list entry per run.
  strategy @8 :Text;
  runTransfer @9 :List(UInt32);
  runWordOffset @10 :List(UInt32);
  runWords @11 :List(UInt32);
  runStart @12 :List(UInt32);
  location @13 :Text;  # Source location of the op it moves data for.
  # Format 4: runStart counts exchange events from the phase's sync, and a
  # run may be a 64-bit message (two words per event); empty means none is.
  runPaired @14 :List(Bool);
}

struct Step {
  kind @0 :StepKind;
  index @1 :UInt32;
}

struct ReferenceOp {
  arguments @0 :List(UInt32);
  result @1 :UInt32;
  type @2 :UInt8;
  # What the op computes, with the fields of its kind only.
  union {
    matmul @3 :MatmulReference;
    elementwise @4 :ElementwiseReference;
    permute @5 :PermuteReference;
    # The device's own value, as streamed out (`result`), which later ops
    # read and nothing checks: what a repeated layer carried into its last
    # layer. A reader that does not know it refuses the package.
    streamed @6 :Void;
  }
}

struct MatmulReference {
  partials @0 :UInt8;  # ElementType of the device's accumulation; f32 when absent.
  innerBlocks @1 :UInt32 = 1;  # Balanced blocks of K accumulated apart.
  transposeLhs @2 :Bool;  # lhs given as [..., K, M].
  transposeRhs @3 :Bool;  # rhs given as [..., N, K].
  inputScale @4 :Int8;  # f8 operands: each product times 2^inputScale (the AMP's input scale).
}

struct ElementwiseReference {
  kernel @0 :UInt32;  # Index into Package.kernels.
}

struct PermuteReference {
  view @0 :List(Int64);         # The operand read as this shape,
  permutation @1 :List(Int64);  # its dims permuted so,
  shape @2 :List(Int64);        # read row-major as this shape.
  offsets @3 :List(Int64);      # A window of the permuted view (both empty:
  sizes @4 :List(Int64);        # all of it).
}

# A generated kernel: its body (ElementwiseBody, ops as parallel lists),
# which ipu-run compiles itself; the symbol is the body's hash.
struct Kernel {
  name @0 :Text;
  symbol @1 :Text;
  inputTypes @2 :List(UInt8);       # ElementType per input.
  inputBroadcasts @3 :List(UInt8);  # Broadcast per input.
  resultType @4 :UInt8;
  result @5 :UInt32;
  opKinds @6 :List(UInt8);
  opTypes @7 :List(UInt8);
  opPredicates @8 :List(UInt8);
  opOperands @9 :List(UInt32);      # Three per op.
  opConstants @10 :List(Float64);
  reduction @11 :UInt8;    # RowReduction: 0 none (elementwise), add, max, maxnum.
  init @12 :Float64;       # A reduction's starting value.
}

# A buffer the compiler placed, for the report's liveness chart: nothing
# the simulator runs depends on it.
struct Buffer {
  name @0 :Text;
  memoryClass @1 :UInt8;  # MemoryClass.
  address @2 :UInt32;     # The same on every tile it spans.
  bytes @3 :UInt32;       # On each tile it spans.
  tiles @4 :List(UInt32); # The tiles it spans, increasing.
  firstStep @5 :UInt32;   # Program steps (indices into Package.program).
  lastStep @6 :UInt32;
  location @7 :Text;      # Source location of the op that made it.
}

# A serial loop (PackageLoop): the `steps` program steps after its Loop
# step, run `count` times.
struct Loop {
  name @0 :Text;
  count @1 :UInt32;
  steps @2 :UInt32;
  location @3 :Text;
}

struct MetadataEntry {
  key @0 :Text;
  value @1 :Text;
}

struct Package {
  magic @0 :UInt64;
  formatVersion @1 :UInt32;
  compiler @2 :Text;
  target @3 :Text;
  tiles @4 :UInt32;
  workload @5 :Text;
  flops @6 :UInt64;
  streams @7 :List(HostStream);
  computeSets @8 :List(ComputeSet);
  phases @9 :List(Phase);
  program @10 :List(Step);
  reference @11 :List(ReferenceOp);
  metadata @12 :List(MetadataEntry);
  kernels @13 :List(Kernel);
  # Formats 1 and 2 carried the kernels' machine code here. It is never
  # read: no byte of a package is ever mapped executable.
  retiredKernelObject @14 :Data;
  kernelAbiVersion @15 :UInt32;
  retiredKernelObjectHash @16 :UInt64;
  buffers @17 :List(Buffer);
  loops @18 :List(Loop);
  constants @19 :List(ArgumentConstant);
  # The compiled function's result count: output streams below it carry
  # its results, the others checkpoints (0: not recorded).
  results @20 :UInt32;
  # Format 8: the program computes one image of a batch of this many, run
  # once per image (0, in older formats: 1).
  images @21 :UInt32;
}
