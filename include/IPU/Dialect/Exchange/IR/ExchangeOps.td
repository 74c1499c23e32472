//===- ExchangeOps.td - The ipu_exchange dialect -----------*- tablegen -*-===//
//
// Data movement: host streams, exchange phases with their schedules, syncs.
//
//===----------------------------------------------------------------------===//

#ifndef IPU_EXCHANGE_OPS
#define IPU_EXCHANGE_OPS

include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/OpBase.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/IR/CommonAttrConstraints.td"
include "IPU/Dialect/Tile/IR/TileEnums.td"
include "IPU/Dialect/Tile/IR/TileInterfaces.td"

def IPUExchange_Dialect : Dialect {
  let name = "ipu_exchange";
  let cppNamespace = "::mlir::ipu_exchange";
  let summary = "Exchange phases, their schedules, syncs and host streams";
  let description = [{
    `ipu_exchange` moves data between tiles and between host and tiles.
    An `ipu_exchange.phase` is one bulk-synchronous exchange: its
    `ipu_exchange.copy` ops each rearrange a buffer into another buffer's
    layout. The transfers of a phase are derived from the two layouts, so the
    IR stays symbolic however many transfers there are;
    `--ipu-schedule-exchange` attaches the timetable as an
    `#ipu_exchange.schedule`.
  }];
  let useDefaultAttributePrinterParser = 1;
}

class IPUExchange_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<IPUExchange_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

def IPUExchange_ScheduleAttr : IPUExchange_Attr<"Schedule", "schedule"> {
  let summary = "Timetable of one exchange phase";
  let description = [{
    `runs` holds quintuples (transfer, first word, words, start, paired),
    as a dense i32 tensor so that bytecode stores it as raw data and printed
    IR can elide it (`--mlir-elide-elementsattrs-if-larger`), or as a
    `#ipu_tile.data` block of the data file once `--ipu-export-data` has
    moved it there; its runs are then checked when they are read. With the
    `timed` strategy (the one the compiler uses; lib/Exchange/Timing.h) a
    run is one message of the hardware's exchange: it sends words
    [first word, first word + words) of transfer `transfer` (numbered in
    phase order, copies in order) from event `start` after the phase's
    sync, to every destination of the transfer but its source, one word
    per event, or two when `paired` is 1 (a 64-bit send using the partner
    tile's path). A transfer that only copies to its own source has one run
    at event 0: a local copy. `bound` is the phase's lower bound (the
    busiest tile's events plus route latency and receive tails, see
    timedLowerBound), `horizon` the event
    at which its last receiver is done; the phase costs `horizon` plus the
    target's fixed cost per phase. The other strategies are the untimed
    word-per-cycle schedulers, kept for comparison in benchmarks.

    Example:

    ```mlir
    #ipu_exchange.schedule<strategy = timed, transfers = 2, bound = 66,
        horizon = 73, runs = dense<[0, 0, 8, 0, 0, 1, 0, 8, 0, 0]>
        : tensor<10xi32>>
    ```
  }];
  let parameters = (ins EnumParameter<IPUExchange_Strategy>:$strategy,
                        "int64_t":$transfers, "int64_t":$bound,
                        "int64_t":$horizon,
                        "::mlir::Attribute":$runs);
  let assemblyFormat = [{
    `<` `strategy` `=` $strategy `,` `transfers` `=` $transfers `,`
        `bound` `=` $bound `,` `horizon` `=` $horizon `,`
        `runs` `=` $runs `>`
  }];
  let genVerifyDecl = 1;
}

class IPUExchange_Op<string mnemonic, list<Trait> traits = []>
    : Op<IPUExchange_Dialect, mnemonic, traits>;

// A constant's elements: in the IR, or a block of the data file.
def IPUExchange_ConstantAttr : Attr<Or<[ElementsAttr.predicate,
    CPred<"::llvm::isa<::mlir::ipu_tile::DataAttr>($_self)">]>,
    "elements attribute or #ipu_tile.data block"> {
  let storageType = "::mlir::Attribute";
  let returnType = "::mlir::Attribute";
  let convertFromStorage = "$_self";
}

def IPUExchange_StreamInOp : IPUExchange_Op<"stream_in",
    [DeclareOpInterfaceMethods<SymbolUserOpInterface>,
     DeclareOpInterfaceMethods<IPUTile_ProgramStepOpInterface>]> {
  let summary = "Copies a function argument from the host into a buffer";
  let description = [{
    Writes argument `index` of the compiled function into `buffer`, on every
    tile and replica of its layout. `weight` marks inference weights, loaded
    once at initialisation. With `transpose` the buffer holds the transpose
    of the 2-D argument (weights of a swapped matmul plan). `host_shape`
    gives the argument's shape when the buffer holds the same elements in
    another shape (leading dims folded into its rows, or its rows in serial
    chunks). `declared_shape` is the shape the function declares for the
    argument when it differs from the host's (the same elements in the same
    order): `ipu-run --inputs` takes the array in that shape. `constant`
    is the argument's value when the package carries it (a frozen weight of
    an exported model): the host streams it in, and `--inputs` need not
    give it. With `chunk`, the buffer holds its batches on the tiles of its
    blocks (as a repeated layer's weights are, one batch per layer) and the
    argument is one batch's matrix, written into batch `chunk`: its host
    shape is the buffer's without the leading dims.

    With `layer_arguments`, the stream runs in the body of an
    `ipu_tile.loop`, once per iteration: iteration `i` writes argument
    `layer_arguments[i]` (`index` is the first) into the buffer, which holds
    one layer (a repeated layer's weights streamed from the host each layer,
    `stream-weights=true`). `layer_constants`, when present, holds each
    layer's `constant` (or a unit where the package carries none). Such a
    stream costs device cycles (the tiles wait for the host link); the
    others run before the run and cost none.

    `batch_dim` is the dimension of the function's shape of the argument
    (`declared_shape`, else `host_shape`, else the buffer's) along which it
    holds a batch of images, from the argument's `ipu_tile.batch_dim`:
    `ipu-run` counts a run's images by it.

    Example:

    ```mlir
    ipu_exchange.stream_in @b from 1 {weight}
    ipu_exchange.stream_in @bt from 2 {transpose, weight}
    ipu_exchange.stream_in @x from 0 {declared_shape = array<i64: 1, 3, 56, 56>}
    ipu_exchange.stream_in @s from 6 {batch_dim = 0 : i64, declared_shape = array<i64: 2, 16, 64>}
    ipu_exchange.stream_in @w from 3 {constant = dense<[[1.0, 2.0]]> : tensor<1x2xf32>, weight}
    ipu_exchange.stream_in @layers.w0 from 5 {chunk = 2 : i64, transpose, weight}
    ipu_tile.loop @layers count 3 {
      ipu_exchange.sync
      ipu_exchange.stream_in @layer.w0 from 4 {layer_arguments = array<i32: 4, 6, 8>}
      ...
    }
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$buffer, I32Attr:$index,
                       UnitAttr:$weight, UnitAttr:$transpose,
                       OptionalAttr<DenseI64ArrayAttr>:$host_shape,
                       OptionalAttr<DenseI64ArrayAttr>:$declared_shape,
                       OptionalAttr<IPUExchange_ConstantAttr>:$constant,
                       OptionalAttr<I64Attr>:$chunk,
                       OptionalAttr<DenseI32ArrayAttr>:$layer_arguments,
                       OptionalAttr<ArrayAttr>:$layer_constants,
                       OptionalAttr<ConfinedAttr<I64Attr, [IntNonNegative]>>:$batch_dim);
  let assemblyFormat = "$buffer `from` $index attr-dict";
}

def IPUExchange_StreamOutOp : IPUExchange_Op<"stream_out",
    [DeclareOpInterfaceMethods<SymbolUserOpInterface>,
     DeclareOpInterfaceMethods<IPUTile_ProgramStepOpInterface>]> {
  let summary = "Copies a buffer to a result of the function on the host";
  let description = [{
    Reads result `index` from the first replica of `buffer`'s layout;
    `host_shape` and `declared_shape` (the function's shape of the result,
    which `ipu-run --outputs` writes) as for `stream_in`.

    Example:

    ```mlir
    ipu_exchange.stream_out @c to 0
    ipu_exchange.stream_out @y to 1 {declared_shape = array<i64: 1, 16, 64>}
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$buffer, I32Attr:$index,
                       OptionalAttr<DenseI64ArrayAttr>:$host_shape,
                       OptionalAttr<DenseI64ArrayAttr>:$declared_shape);
  let assemblyFormat = "$buffer `to` $index attr-dict";
}

def IPUExchange_SyncOp : IPUExchange_Op<"sync",
    [DeclareOpInterfaceMethods<IPUTile_ProgramStepOpInterface>]> {
  let summary = "Internal bulk-synchronous barrier of all tiles";
  let description = [{
    Every tile waits until all tiles reach the barrier. Costs the target's
    sync cycles.

    Example:

    ```mlir
    ipu_exchange.sync
    ```
  }];
  let assemblyFormat = "attr-dict";
}

def IPUExchange_PhaseOp : IPUExchange_Op<"phase", [Symbol, SingleBlock,
    NoTerminator, DeclareOpInterfaceMethods<IPUTile_ProgramStepOpInterface>]> {
  let summary = "One bulk-synchronous exchange phase";
  let description = [{
    Runs every `ipu_exchange.copy` of its body in one exchange phase. Once
    scheduled it carries `schedule`; its cost is the schedule's horizon plus
    the pipeline latency.

    Example:

    ```mlir
    ipu_exchange.phase @mm.gather {
      ipu_exchange.copy @a to @a.bcast
    }
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name,
                       OptionalAttr<IPUExchange_ScheduleAttr>:$schedule);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "$sym_name attr-dict-with-keyword $body";
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
  let skipDefaultBuilders = 1;
  let builders = [OpBuilder<(ins "::llvm::StringRef":$name)>];
}

def IPUExchange_CopyOp : IPUExchange_Op<"copy", [HasParent<"PhaseOp">,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "Rearranges one buffer into another buffer's layout";
  let description = [{
    Moves every element of `source` to every replica of `dest`. Both buffers
    hold the same tensor shape and element type; only their layouts differ.
    Transfers that send the same words to several replicas are broadcasts.
    Once placed, `dest` shares no bytes with `source` on any tile, and no
    other copy of the phase writes `dest`.

    With `view` and `permutation`, `dest` holds the source's elements
    permuted instead (an `ipu_tile.permute`): the source read as `view`,
    its dims permuted (the last one stays last), read row-major in the
    destination's shape; with `offsets` and `sizes`, only that window of the
    permuted view.

    Example:

    ```mlir
    ipu_exchange.copy @a to @a.bcast
    ipu_exchange.copy @q to @q.heads view [8, 2, 8] permutation [1, 0, 2]
    ipu_exchange.copy @qkv to @k view [3, 8, 16] permutation [0, 1, 2] offsets [1, 0, 0] sizes [1, 8, 16]
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$source, FlatSymbolRefAttr:$dest,
                       OptionalAttr<DenseI64ArrayAttr>:$view,
                       OptionalAttr<DenseI64ArrayAttr>:$permutation,
                       OptionalAttr<DenseI64ArrayAttr>:$offsets,
                       OptionalAttr<DenseI64ArrayAttr>:$sizes);
  let assemblyFormat = [{
    $source `to` $dest (`view` $view^ `permutation` $permutation)?
    (`offsets` $offsets^ `sizes` $sizes)? attr-dict
  }];
}

#endif // IPU_EXCHANGE_OPS
