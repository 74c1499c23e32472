//===- TileOps.td - The ipu_tile dialect -------------------*- tablegen -*-===//
//
// The target, tensor layouts over tiles, placed storage and compute sets.
//
//===----------------------------------------------------------------------===//

#ifndef IPU_TILE_OPS
#define IPU_TILE_OPS

include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/OpBase.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/IR/TensorEncoding.td"
include "mlir/IR/CommonAttrConstraints.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "IPU/Dialect/Tile/IR/TileEnums.td"
include "IPU/Dialect/Tile/IR/TileInterfaces.td"

def IPUTile_Dialect : Dialect {
  let name = "ipu_tile";
  let cppNamespace = "::mlir::ipu_tile";
  let summary = "Tiles, layouts, placed storage and compute sets";
  let description = [{
    `ipu_tile` describes a program for a bulk-synchronous tile machine: the
    target (`#ipu_tile.target`, usually the module attribute
    `ipu_tile.target`), how tensors are laid out over tiles
    (`#ipu_tile.layout`, a tensor encoding), the buffers that hold them
    (`ipu_tile.buffer`) and the compute sets that run kernels on them
    (`ipu_tile.compute_set`), all inside an `ipu_tile.program` whose ops run
    in order. Exchange and synchronisation ops come from `ipu_exchange`.

    A function argument may carry its value as `ipu_tile.constant` (an
    elements attribute of the argument's type): a frozen weight of an
    exported model, which the package carries and the host streams in at
    load like any weight.

    ```mlir
    func.func @f(%x: tensor<16x64xf32>,
                 %w: tensor<64x64xf32> {ipu_tile.constant = dense_resource<w> : tensor<64x64xf32>})
    ```

    An input may carry `ipu_tile.batch_dim` (an integer, a dimension of the
    argument): the dimension along which it holds a batch of images, as
    the exporter marked it (`python -m ipu_export`). `ipu-run` counts a
    batch computed together by it, whatever the dimension is called
    (`[B, S, D]`, `[S, B, D]`); unmarked, only pixels (`[B, C, H, W]`)
    count as a batch.

    ```mlir
    func.func @encoder(%x: tensor<2x729x1152xf16> {ipu_tile.batch_dim = 0 : i64})
    ```
  }];
  let useDefaultAttributePrinterParser = 1;
  let hasOperationAttrVerify = 1;
  let hasRegionArgAttrVerify = 1;
  // Elementwise bodies hold arith and math ops.
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect"];
  let extraClassDeclaration = [{
    /// Module attribute naming the target.
    static constexpr ::llvm::StringLiteral getTargetAttrName() {
      return ::llvm::StringLiteral("ipu_tile.target");
    }
    /// Function argument attribute holding the argument's value.
    static constexpr ::llvm::StringLiteral getConstantAttrName() {
      return ::llvm::StringLiteral("ipu_tile.constant");
    }
    /// Function argument attribute: the dimension along which an input
    /// holds a batch of images.
    static constexpr ::llvm::StringLiteral getBatchDimAttrName() {
      return ::llvm::StringLiteral("ipu_tile.batch_dim");
    }
    /// Module attribute naming the data file of its #ipu_tile.data blocks.
    static constexpr ::llvm::StringLiteral getDataFileAttrName() {
      return ::llvm::StringLiteral("ipu_tile.data_file");
    }
    /// The data files this context has read (lib/Dialect/Tile/DataFile.cpp).
    DataFileCache &getDataFileCache() { return *dataFiles; }

  private:
    std::unique_ptr<DataFileCache> dataFiles;

  public:
  }];
}

class IPUTile_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<IPUTile_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

def IPUTile_TargetAttr : IPUTile_Attr<"Target", "target"> {
  let summary = "A machine preset of the TargetModel";
  let description = [{
    Names a TargetModel preset: `"ipu21"` (1472 tiles) or `"ipu21-N"`, the
    same machine with N tiles, for tests. Every pass reads the machine's
    numbers from the preset, never from the IR.

    Example:

    ```mlir
    module attributes {ipu_tile.target = #ipu_tile.target<"ipu21-16">} {}
    ```
  }];
  let parameters = (ins StringRefParameter<"preset name">:$name);
  let assemblyFormat = "`<` $name `>`";
  let genVerifyDecl = 1;
}

def IPUTile_LayoutAttr : IPUTile_Attr<"Layout", "layout",
    [DeclareAttrInterfaceMethods<VerifiableTensorEncoding>]> {
  let summary = "Block layout of a tensor over tiles";
  let description = [{
    Splits a `[rows x cols]` tensor into a `grid[0] x grid[1]` grid of blocks
    with balanced splits (the first `rows % grid[0]` block rows hold one row
    more). Block (i, j), replica r, lives on tile
    `base + i * strides[0] + j * strides[1] + r * replica_stride`, stored
    row-major with rows padded to 4 bytes. Used as a tensor encoding; the
    tensor gives shape and element type.

    Optional fields make irregular layouts exact: `row_splits` and
    `col_splits` give the block boundaries explicitly (grid + 1 increasing
    offsets from 0 to the extent) and `tile_map` gives the tile of every
    (i, j, replica), at index `(i * grid[1] + j) * replicas + replica`,
    replacing the formula.

    Every integer list of a layout (and a compute set's `tiles`) is written
    as terms separated by commas, and prints so where that is shorter: `7`
    is one value, `a to b` the values from a up to b excluded, `a to b step
    s` every s-th of them (s may be negative), and `(terms) x n step s` the
    terms n times, each copy s above the one before. A list may expand to
    at most 2^24 values. For example row splits at every fourth of 729 rows
    and at the end, `[0 to 732 step 4, 729]`, and the 1472 tiles of a
    reduce on ipu21, 8 tiles from each quarter of the chip in turn:
    `[((0 to 8) x 4 step 368) x 46 step 8]`.

    Split points that are balanced splits of balanced splits (two or three
    levels, not one plain range) print as such: `balanced E into [p, q]`
    splits E into p balanced blocks (the first E mod p one longer) and each
    of those into q. A staged reduction's rows of a 729-row GEMM with 46
    row blocks, each split in 4, are `row_splits = balanced 729 into
    [46, 4]`, the list `[0 to 640 step 4, (639, 643, 647, 651) x 6 step 15,
    729]`. Either form parses.

    Tensors of rank above 2: the leading dimensions collapse into `batches`
    (their product), a third, outermost dimension of the grid. `batch_grid`
    (default 1) splits the batches into that many balanced parts (or at the
    `batch_splits` boundaries, batch_grid + 1 offsets from 0 to batches);
    block (b, i, j) holds its batches as consecutive row-major matrices and
    lives `b * batch_stride` (default 0) tiles further on. `grid` and
    `strides` keep their two entries (rows, columns); a tile map is indexed
    `((b * grid[0] + i) * grid[1] + j) * replicas + replica`. `batch_grid`
    = 1 keeps every batch of a block on its tile (batch-local); `batch_grid`
    = batches gives each batch its own tiles (batch-distributed). Batch
    fields are printed only when they differ from their defaults, so a 2-D
    layout prints as it always did. `folded` (printed bare) instead folds
    the leading dimensions into the rows: the tensor is laid out as its
    `[prod(leading) * rows, cols]` matrix, as a matmul whose B is 2-D reads
    an A of rank 3 (a dense layer on `[batch, tokens, features]`).

    `serial = S` (default 1) cuts the rows of a 2-D (or folded) tensor into
    `S` equal consecutive chunks, each laid out by the grid, and keeps every
    chunk of a block on its tile, chunk after chunk: the `[S, rows / S,
    cols]` tensor batch-local. A serial loop (`ipu_tile.loop`) works on one
    chunk per iteration, at the same tiles and a fixed byte step.

    Example: 96 rows over tiles 0..3, each block replicated on 4 tiles:

    ```mlir
    tensor<96x128xf16, #ipu_tile.layout<grid = [4, 1], base = 0,
        strides = [4, 0], replicas = 4, replica_stride = 1>>
    ```

    Example: rows cut at 0, 2, 7, 10 onto tiles 5, 3, 1:

    ```mlir
    tensor<10x8xf32, #ipu_tile.layout<grid = [3, 1], base = 0,
        strides = [0, 0], replicas = 1, replica_stride = 0,
        row_splits = [0, 2, 7, 10], tile_map = [5, 3, 1]>>
    ```

    Example: 2 x 3 = 6 batches of 8x16 matrices in 3 blocks of 2 batches,
    the rows of each block split in two: block (b, i) on tile 2 * b + i. And
    the same tensor batch-local, every batch on tile 0:

    ```mlir
    tensor<2x3x8x16xf16, #ipu_tile.layout<grid = [2, 1], base = 0,
        strides = [1, 0], replicas = 1, replica_stride = 0,
        batch_grid = 3, batch_stride = 2>>
    tensor<2x3x8x16xf16, #ipu_tile.layout<grid = [1, 1], base = 0,
        strides = [0, 0], replicas = 1, replica_stride = 0>>
    ```

    Example: 64 rows in 4 chunks of 16, each chunk's rows over tiles 0..3,
    so that tile 0 holds rows 0-3, 16-19, 32-35 and 48-51:

    ```mlir
    tensor<64x8xf16, #ipu_tile.layout<grid = [4, 1], base = 0,
        strides = [1, 0], replicas = 1, replica_stride = 0, serial = 4>>
    ```

    Example: a [4, 8, 16] activation as its 32x16 matrix, rows over 16 tiles:

    ```mlir
    tensor<4x8x16xf16, #ipu_tile.layout<grid = [16, 1], base = 0,
        strides = [1, 0], replicas = 1, replica_stride = 0, folded>>
    ```
  }];
  let parameters = (ins ArrayRefParameter<"int64_t">:$grid, "int64_t":$base,
                        ArrayRefParameter<"int64_t">:$strides,
                        "int64_t":$replicas, "int64_t":$replica_stride,
                        OptionalArrayRefParameter<"int64_t">:$row_splits,
                        OptionalArrayRefParameter<"int64_t">:$col_splits,
                        OptionalArrayRefParameter<"int64_t">:$tile_map,
                        DefaultValuedParameter<"int64_t", "1">:$batch_grid,
                        DefaultValuedParameter<"int64_t", "0">:$batch_stride,
                        OptionalArrayRefParameter<"int64_t">:$batch_splits,
                        DefaultValuedParameter<"bool", "false">:$folded,
                        DefaultValuedParameter<"int64_t", "1">:$serial);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
}

def IPUTile_DataAttr : IPUTile_Attr<"Data", "data"> {
  let summary = "A constant stored in the program's data file";
  let description = [{
    The elements of `type`, stored raw (row-major, the host's byte order, as
    a dense attribute holds them) at byte `offset` of the data file that the
    module's `ipu_tile.data_file` names. `--ipu-export-data` puts a
    program's weights and its exchange schedules' run tables there, so that
    the printed IR holds the program's structure and not its megabytes.
    Whoever reads the bytes (`ipu-translate --ipu-to-package`) checks the
    file's size and checksum first.

    Example:

    ```mlir
    module attributes {ipu_tile.data_file = #ipu_tile.data_file<"tower.data",
        bytes = 4608, checksum = 12638153115695167455>} {
      ...
      ipu_exchange.stream_in @w from 3 {constant = #ipu_tile.data<tensor<32x64xf16> at 64>, weight}
    ```
  }];
  let parameters = (ins "::mlir::RankedTensorType":$type, "uint64_t":$offset);
  let assemblyFormat = "`<` $type `at` $offset `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// The bytes the block holds.
    uint64_t getBytes() const;
  }];
}

def IPUTile_DataFileAttr : IPUTile_Attr<"DataFile", "data_file"> {
  let summary = "The data file of a module's #ipu_tile.data blocks";
  let description = [{
    `path` is the file `--ipu-export-data` wrote. A reader looks for it as
    written (relative to the working directory), then under its own name in
    the directory of the IR that names it. `bytes` and `checksum`
    (lib/Support/DataFile.h) identify the file: a reader refuses any other.

    Example:

    ```mlir
    module attributes {ipu_tile.data_file = #ipu_tile.data_file<"tower.data",
        bytes = 4608, checksum = 12638153115695167455>}
    ```
  }];
  let parameters = (ins StringRefParameter<>:$path, "uint64_t":$bytes,
                        "uint64_t":$checksum);
  let assemblyFormat = [{
    `<` $path `,` `bytes` `=` $bytes `,` `checksum` `=` $checksum `>`
  }];
}

class IPUTile_Op<string mnemonic, list<Trait> traits = []>
    : Op<IPUTile_Dialect, mnemonic, traits>;

def IPUTile_ProgramOp : IPUTile_Op<"program", [Symbol, SymbolTable,
    IsolatedFromAbove, SingleBlock, NoTerminator]> {
  let summary = "A control program: buffers, streams, phases, compute sets";
  let description = [{
    Holds the buffers of one compiled function and the steps that run, in
    order: host streams, syncs, exchange phases and compute sets. Buffers are
    symbols of the program. `reference` lists the host computations that
    `ipu-run --check` compares against; `flops` counts the useful FLOPs of
    one run, for the efficiency figure; `results` is the compiled function's
    result count: a `stream_out` below it is a result of the function, one
    at or above it a checkpoint that `--check` reads. `images` (from
    `--ipu-separate-images`) says that the program computes one image of a
    batch of that many: the package runs it once per image, and the
    function's arguments and results are that many times longer along
    their leading dim.

    Each `reference` entry is a dictionary: `op` ("matmul"), `arguments`
    (function argument indices, or -1 - r for the value of entry r),
    `result` (result index, -1 for an intermediate value), `type` (of the
    value), optionally `partials` (f32 or f16), `inner` (blocks of K the
    device accumulates apart) and `transpose_lhs` / `transpose_rhs` (bools:
    the operand is given as [..., K, M] / [..., N, K]). The operand ranks
    say whether the product is batched: lhs [..., M, K] x rhs [K, N] folds
    the leading dimensions of lhs into M, lhs [B..., M, K] x rhs
    [B..., K, N] multiplies batch by batch.

    Example:

    ```mlir
    ipu_tile.program @mm attributes {flops = 1572864 : i64} {
      ipu_tile.buffer @a : tensor<96x128xf16, #ipu_tile.layout<grid = [16, 1],
          base = 0, strides = [1, 0], replicas = 1, replica_stride = 0>> in standard
      ipu_exchange.stream_in @a from 0
    }
    ```
  }];
  // What the passes record about the program: the planner's estimate
  // (--ipu-lower-to-tile), and from --ipu-place-storage the peak and max-live
  // bound per memory class (standard, interleaved) and the bytes of exchange
  // code and vertex state per tile kept free above the runtime image; and
  // per re-ranked matmul (by its steps' name prefix) its plan finalists as
  // the planner left them (`ipu_gemm.finalists`).
  let arguments = (ins SymbolNameAttr:$sym_name,
                       OptionalAttr<ArrayAttr>:$reference,
                       OptionalAttr<I64Attr>:$flops,
                       OptionalAttr<I64Attr>:$estimated_cycles,
                       OptionalAttr<DenseI64ArrayAttr>:$memory_peak,
                       OptionalAttr<DenseI64ArrayAttr>:$memory_bound,
                       OptionalAttr<I64Attr>:$reserved_bytes,
                       OptionalAttr<DictionaryAttr>:$plan_finalists,
                       OptionalAttr<I32Attr>:$results,
                       OptionalAttr<ConfinedAttr<I64Attr, [IntMinValue<1>]>>:$images);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "$sym_name attr-dict-with-keyword $body";
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
  let skipDefaultBuilders = 1;
  let builders = [OpBuilder<(ins "::llvm::StringRef":$name)>];
}

def IPUTile_BufferOp : IPUTile_Op<"buffer", [Symbol,
    HasParent<"ProgramOp">]> {
  let summary = "Storage for one tensor in its layout, on every tile it spans";
  let description = [{
    A buffer holds one tensor laid out by the `#ipu_tile.layout` encoding of
    its type, in memory class `"standard"` or `"interleaved"`. Each tile of
    the layout holds its block at the same address; `--ipu-place-storage`
    sets `address`. The bytes per tile are those of the largest block.

    Example:

    ```mlir
    ipu_tile.buffer @c : tensor<96x64xf32, #ipu_tile.layout<grid = [4, 4],
        base = 0, strides = [4, 1], replicas = 1, replica_stride = 0>>
        in standard at 319488
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, TypeAttrOf<AnyRankedTensor>:$type,
                       IPUTile_MemoryClass:$memory_class,
                       OptionalAttr<I64Attr>:$address);
  let assemblyFormat = [{
    $sym_name `:` $type `in` $memory_class (`at` $address^)? attr-dict
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    ::mlir::RankedTensorType getTensorType() {
      return ::llvm::cast<::mlir::RankedTensorType>(getType());
    }
    LayoutAttr getLayout() {
      return ::llvm::dyn_cast_or_null<LayoutAttr>(getTensorType().getEncoding());
    }
  }];
}

def IPUTile_ComputeSetOp : IPUTile_Op<"compute_set", [Symbol,
    ParentOneOf<["ProgramOp", "LoopOp"]>, DeclareOpInterfaceMethods<SymbolUserOpInterface>,
    DeclareOpInterfaceMethods<IPUTile_ProgramStepOpInterface>]> {
  let summary = "One kernel run on a set of tiles, a vertex per tile";
  let description = [{
    Runs kernel `kernel` (from device/) once on each tile of `tiles`: an
    integer list of ranges and repeats, as in `#ipu_tile.layout`, or
    `of @buffer`, the tiles that hold a block of that buffer in the order
    its layout lists them (batch, row, column, replica). The operands are
    buffers, in the kernel's operand order; each vertex works on its tile's
    block of each operand. The compute set costs its slowest tile.

    The lowering writes `tiles of @buffer` when the vertices run exactly on
    the tiles of one of their operands (usually the output), which is the
    common case: the list is then read from that buffer's layout, and only
    irregular sets are spelled out.

    The kernel's parameters follow from the operands: each vertex's block
    shapes, element types and memory classes, and `acc_type` (what a GEMM
    accumulates in). `params` may give them explicitly instead, a row per
    tile in the kernel's parameter order; the verifier checks them against
    the blocks either way.

    Example, a 2-tile GEMM partial accumulating in f32:

    ```mlir
    ipu_tile.compute_set @mm.partials kernel "gemm" operands [@a, @b, @c]
        tiles [0, 1] {acc_type = f32}
    ```

    A copy on 16 tiles:

    ```mlir
    ipu_tile.compute_set @stage kernel "copy" operands [@a, @b] tiles [0 to 16]
    ```

    A reduction on the tiles of its output buffer `@sum`:

    ```mlir
    ipu_tile.compute_set @mm.sum kernel "reduce" operands [@gathered, @sum]
        tiles of @sum
    ```

    The GEMM with its parameters written out (`gemm`: m, k, n, inType,
    accType, outType as element type codes, weightClass, inputScale):

    ```mlir
    ipu_tile.compute_set @mm.partials kernel "gemm" operands [@a, @b, @c]
        tiles [0, 1] params [48, 128, 64, 1, 0, 0, 1, 0, 48, 128, 64, 1, 0, 0, 1, 0]
    ```

    An f8 GEMM whose AMP multiplies each product by 2^`input_scale` (the
    operands' power-of-two scales; the IPU21's input scale register):

    ```mlir
    ipu_tile.compute_set @mm.partials kernel "gemm" operands [@a8, @b8, @c]
        tiles [0, 1] {acc_type = f16, input_scale = -16 : i32}
    ```

    Inside an `ipu_tile.loop`, `serial_operands` lists the operands the
    vertices read or write one chunk per iteration (poplibs' dynamic slice
    and update): a buffer whose batch-local layout holds as many batches
    (a serial layout's chunks) as the loop has iterations. The vertex sees
    one chunk, at the block's address plus the iteration times the chunk's
    bytes on its tile, and pays the target's `dynamicOffsetCycles` to
    compute it from the loop counter.

    ```mlir
    ipu_tile.compute_set @mm.slice kernel "copy" operands [@a, @a.chunk]
        tiles [0, 1, 2, 3] {serial_operands = array<i32: 0>}
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, StrAttr:$kernel,
                       FlatSymbolRefArrayAttr:$operands,
                       OptionalAttr<DenseI32ArrayAttr>:$tiles,
                       OptionalAttr<FlatSymbolRefAttr>:$tiles_of,
                       OptionalAttr<DenseI64ArrayAttr>:$params,
                       OptionalAttr<TypeAttr>:$acc_type,
                       OptionalAttr<DenseI32ArrayAttr>:$serial_operands,
                       OptionalAttr<I32Attr>:$input_scale);
  let assemblyFormat = [{
    $sym_name `kernel` $kernel `operands` $operands `tiles`
        custom<ComputeSetTiles>($tiles, $tiles_of) (`params` $params^)? attr-dict
  }];
  let extraClassDeclaration = [{
    /// The tiles of its vertices: `tiles`, or the tiles of the buffer
    /// `tiles_of` names (nothing when that is not a buffer with a layout).
    std::optional<::llvm::SmallVector<int32_t>> getTileList();
    /// Every vertex's parameters, a row per tile: `params` when given, else
    /// derived from the operands' blocks on each tile and `acc_type`.
    /// Emits an error on the op and fails when they cannot be.
    ::mlir::FailureOr<::llvm::SmallVector<int64_t>>
    getVertexParams(::mlir::SymbolTableCollection &symbolTable);
    /// Whether the vertices see operand `operand` one chunk per iteration
    /// of the enclosing loop.
    bool isSerialOperand(unsigned operand);
    /// The layout of the operand buffer as each vertex sees it: one chunk
    /// (a single batch) of a serial operand.
    std::optional<::ipu::BlockLayout> getVertexLayout(unsigned operand,
                                                      BufferOp buffer);
  }];
  let hasVerifier = 1;
}

def IPUTile_LoopOp : IPUTile_Op<"loop", [Symbol, SymbolTable,
    ParentOneOf<["ProgramOp", "LoopOp"]>,
    SingleBlock, NoTerminator,
    DeclareOpInterfaceMethods<IPUTile_ProgramStepOpInterface>]> {
  let summary = "Program steps repeated over the same buffers: a serial split";
  let description = [{
    Runs the steps of its body `count` times, iterations 0 to count - 1,
    over the program's buffers: one op whatever the count, and one copy of
    its exchange code and vertex state on the tiles. Compute sets of the
    body that list `serial_operands` read or write chunk `i` of a serial
    buffer in iteration `i`; everything else is the same in every
    iteration. The body starts with an `ipu_exchange.sync`, so that one
    iteration's last steps and the next one's first are in different
    supersteps. A buffer the body shares with steps outside the loop (or
    reads by chunks) is live over the whole loop; one used only inside it is
    rewritten in every iteration and live only over its steps there. A
    stream out in the body leaves in every iteration, and the host keeps
    the last one's (a repeated layer's checkpoints); streams in run once,
    outside loops.

    Loops nest, up to 4 deep: a repeated layer's body (`@x.layers`) holds
    the serial splits of its matmuls. A compute set's serial operands
    advance per iteration of the loop directly around it; the rule above on
    what lives over the whole loop applies to each loop's own body.

    Example, a GEMM in 4 serial chunks of its rows:

    ```mlir
    ipu_tile.loop @mm.serial count 4 {
      ipu_exchange.sync
      ipu_tile.compute_set @mm.slice kernel "copy" operands [@a, @a.chunk]
          tiles [0, 1, 2, 3] {serial_operands = array<i32: 0>}
      ipu_exchange.sync
      ipu_exchange.phase @mm.gather {
        ipu_exchange.copy @a.chunk to @mm.lhs
      }
      ipu_exchange.sync
      ipu_tile.compute_set @mm.partials kernel "gemm"
          operands [@mm.lhs, @b, @mm.out] tiles [0, 1, 2, 3] {acc_type = f32}
      ipu_tile.compute_set @mm.update kernel "copy" operands [@mm.out, @c]
          tiles [0, 1, 2, 3] {serial_operands = array<i32: 1>}
    }
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, I64Attr:$count);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "$sym_name `count` $count attr-dict-with-keyword $body";
  let hasVerifier = 1;
  let skipDefaultBuilders = 1;
  let builders = [OpBuilder<(ins "::llvm::StringRef":$name, "int64_t":$count)>];
}

//===----------------------------------------------------------------------===//
// Graph-level layout ops: where the tensors between graph ops live.
//===----------------------------------------------------------------------===//

def IPUTile_FromHostOp : IPUTile_Op<"from_host", [Pure]> {
  let summary = "A function argument streamed to the tiles in a layout";
  let description = [{
    The value of function argument `source` (a host tensor) on the tiles,
    in the layout of the result's `#ipu_tile.layout` encoding and memory
    class `memory_class`. `resident` streams it once for the whole program
    (weights); otherwise it is an input, live from its stream to its last
    use. With `transpose` the host stream transposes a 2-D argument: the
    result is the argument's transpose. `--ipu-assign-layouts` creates these;
    `--ipu-lower-to-tile` turns each into a buffer and a host stream.

    Example:

    ```mlir
    %w = ipu_tile.from_host %arg1 in interleaved {resident}
        : tensor<16x8xf16> -> tensor<16x8xf16, #ipu_tile.layout<grid = [1, 2],
          base = 0, strides = [0, 1], replicas = 2, replica_stride = 2>>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$source,
                       DefaultValuedAttr<IPUTile_MemoryClass,
                           "::mlir::ipu_tile::MemoryClass::standard">:$memory_class,
                       UnitAttr:$resident, UnitAttr:$transpose);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $source (`in` $memory_class^)? attr-dict `:` type($source) `->` type($result)
  }];
  let hasVerifier = 1;
}

def IPUTile_PermuteOp : IPUTile_Op<"permute", [Pure]> {
  let summary = "The elements of a tensor with its dims permuted";
  let description = [{
    `source` read as `view` (the same elements, row-major), its dims
    permuted by `permutation` (result dim k is view dim `permutation[k]`),
    read row-major as the result's shape. The last dim stays last, so every
    run along it moves whole: attention's head split `[T, H * Dh] -> [H, T,
    Dh]` and head merge. `--ipu-import-linalg` builds it from
    `tensor.expand_shape` / `linalg.transpose` / `tensor.collapse_shape`
    chains; it lowers to one exchange phase from wherever its source is into
    the layout activations arrive in (batches side by side).

    With `offsets` and `sizes`, only that window of the permuted view (a
    static slice with unit strides) is read: timm's fused qkv, split into
    q, k and v, and `tensor.extract_slice` of an activation.

    Example, two heads of 8 split off a [8, 16] projection, and the second
    of a [3, 8, 16] stack:

    ```mlir
    %h = ipu_tile.permute %q view [1, 8, 2, 8] permutation [0, 2, 1, 3]
        : tensor<1x8x16xf32> -> tensor<1x2x8x8xf32>
    %k = ipu_tile.permute %qkv view [3, 8, 16] permutation [0, 1, 2]
        offsets [1, 0, 0] sizes [1, 8, 16] : tensor<3x8x16xf32> -> tensor<8x16xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$source, DenseI64ArrayAttr:$view,
                       DenseI64ArrayAttr:$permutation,
                       OptionalAttr<DenseI64ArrayAttr>:$offsets,
                       OptionalAttr<DenseI64ArrayAttr>:$sizes);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $source `view` $view `permutation` $permutation
    (`offsets` $offsets^ `sizes` $sizes)? attr-dict `:` type($source)
    `->` type($result)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The permutation as plain C++.
    ::ipu::Permutation getPlainPermutation();
  }];
}

def IPUTile_RelayoutOp : IPUTile_Op<"relayout", [Pure]> {
  let summary = "The same tensor in another layout or memory class";
  let description = [{
    Rearranges `source` into the layout of the result's encoding, in memory
    class `memory_class`: one exchange phase at its endpoint bound.
    `--ipu-assign-layouts` puts one wherever a value's producer and a
    consumer want different layouts (one per distinct layout, shared by the
    consumers that want it); `--ipu-lower-to-tile` lowers consecutive
    relayouts into one exchange phase.

    Example:

    ```mlir
    %a = ipu_tile.relayout %x
        : tensor<8x16xf16, #ipu_tile.layout<grid = [4, 1], base = 0,
            strides = [1, 0], replicas = 1, replica_stride = 0>>
        -> tensor<8x16xf16, #ipu_tile.layout<grid = [2, 1], base = 0,
            strides = [2, 0], replicas = 2, replica_stride = 1>>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$source,
                       DefaultValuedAttr<IPUTile_MemoryClass,
                           "::mlir::ipu_tile::MemoryClass::standard">:$memory_class);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $source (`in` $memory_class^)? attr-dict `:` type($source) `->` type($result)
  }];
  let hasVerifier = 1;
}

def IPUTile_RepeatOp : IPUTile_Op<"repeat", [RecursiveMemoryEffects, SingleBlock]> {
  let summary = "Layers that compute the same ops, as one body run once per layer";
  let description = [{
    Runs its body `count` times: layer `i` reads the previous layer's value
    (layer 0 reads `input`) as the body's first argument, and weights of its
    own as the others; `ipu_tile.carry` passes the body's value on, and the
    last layer's is the result. The body may also read values from before
    the op, the same in every layer.

    `weights` lists each weight slot's tensor for every layer, slot by slot:
    slot `s` of layer `i` is operand `i + s * count` of `weights`, and every
    layer's tensor of a slot has the slot's type. The weights of an exported
    model's 27 layers are 27 tensors per slot, which the host streams into
    consecutive blocks of one buffer per slot; the program reads layer `i`'s
    block in iteration `i`. With `streamed`, only one layer's weights stay
    on the tiles: the host streams layer `i`'s into them at the start of
    iteration `i` (the device waits for the host link), so the tiles hold
    the weights of any depth.

    `--ipu-find-repeated-layers` (with `outline=true`) makes one from the N
    identical layers an exporter unrolled. Example, two layers of a matmul
    by a weight of their own and a residual add:

    ```mlir
    %y = ipu_tile.repeat 2 input(%x : tensor<16x64xf32>)
        weights(%w0, %w1 : tensor<64x64xf32>, tensor<64x64xf32>) {
    ^bb0(%h: tensor<16x64xf32>, %w: tensor<64x64xf32>):
      %m = ipu_gemm.matmul %h, %w : tensor<16x64xf32>, tensor<64x64xf32>
             -> tensor<16x64xf32>
      %a = ipu_tile.elementwise %h, %m : tensor<16x64xf32>, tensor<16x64xf32>
             -> tensor<16x64xf32> {
      ^bb0(%p: f32, %q: f32):
        %s = arith.addf %p, %q : f32
        ipu_tile.yield %s : f32
      }
      ipu_tile.carry %a : tensor<16x64xf32>
    } -> tensor<16x64xf32>
    ```
  }];
  let arguments = (ins ConfinedAttr<I64Attr, [IntMinValue<1>]>:$count,
                       AnyRankedTensor:$input,
                       Variadic<AnyRankedTensor>:$weights,
                       UnitAttr:$streamed);
  let results = (outs AnyRankedTensor:$result);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    $count `input` `(` $input `:` type($input) `)`
    (`weights` `(` $weights^ `:` type($weights) `)`)? $body attr-dict
    `->` type($result)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// How many weight slots each layer has.
    unsigned getNumWeightSlots() { return getBody().getNumArguments() - 1; }
    /// Layer `layer`'s tensor of weight slot `slot`.
    ::mlir::Value getWeight(unsigned slot, unsigned layer) {
      return getWeights()[slot * getCount() + layer];
    }
    /// The body's argument for weight slot `slot`.
    ::mlir::BlockArgument getWeightArgument(unsigned slot) {
      return getBody().getArgument(slot + 1);
    }
    /// How many layers' weights the tiles hold at once.
    int64_t getResidentLayers() { return getStreamed() ? 1 : getCount(); }
  }];
}

def IPUTile_CarryOp : IPUTile_Op<"carry", [Pure, Terminator, HasParent<"RepeatOp">]> {
  let summary = "The value a layer of an ipu_tile.repeat passes to the next";
  let description = [{
    Ends the body of an `ipu_tile.repeat`: `value` is what the next layer
    reads as its input, and, after the last layer, the repeat's result.

    ```mlir
    ipu_tile.carry %a : tensor<16x64xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$value);
  let assemblyFormat = "$value attr-dict `:` type($value)";
}

//===----------------------------------------------------------------------===//
// Elementwise work: a fused scalar body, at graph level and in a program.
//===----------------------------------------------------------------------===//

def IPUTile_YieldOp : IPUTile_Op<"yield", [Pure, Terminator,
    ParentOneOf<["ElementwiseOp", "KernelOp"]>]> {
  let summary = "The value of an elementwise body";
  let description = [{
    Ends the body of an `ipu_tile.elementwise` or `ipu_tile.kernel` with the
    value of the element.

    Example:

    ```mlir
    ipu_tile.yield %sum : f16
    ```
  }];
  let arguments = (ins AnyFloat:$value);
  let assemblyFormat = "$value attr-dict `:` type($value)";
}

def IPUTile_ElementwiseOp : IPUTile_Op<"elementwise", [Pure, IsolatedFromAbove,
    SingleBlock]> {
  let summary = "A fused chain of elementwise ops on tensors, or a row reduction of one";
  let description = [{
    The result is the body applied to each element: its block takes one
    scalar per input and yields the result's element. The body holds
    `arith` and `math` ops on f32 and f16 (f8 values are converted with
    `arith.extf` / `arith.truncf`); `--ipu-import-linalg` builds it from
    elementwise `linalg.generic` and `linalg.map` ops, fusing chains, and
    refuses a body op no tile kernel can run, naming it.

    The op iterates over the shape of the result, or with `reduce` over
    that of its first input (`[..., R, C]`). An input either has that shape
    (read element by element), or is a vector of its last dimension (a
    bias: the same row for every row), or holds one element (a scalar), or
    has its shape with a last dimension of 1 (a column: one value per row,
    such as a row's maximum). The result is computed in its first full
    input's layout, so a chain after a matmul runs on the tiles that hold
    the matmul's result, with no exchange.

    With `reduce`, the body's values along each row are combined, from
    `init`, into one value per row: the result is `[..., R, 1]` of f32 (a
    reduction accumulates in f32). A row spread over several tiles is
    reduced in two halves: each tile reduces its part, one exchange phase
    gives every tile of the row the partials, and each reduces them, so
    the value is on every tile that holds a part of its row.

    Example, a bias add and GELU's tanh form after a matmul:

    ```mlir
    %y = ipu_tile.elementwise %mm, %bias : tensor<8x32xf16>, tensor<32xf16>
        -> tensor<8x32xf16> {
    ^bb0(%x: f16, %b: f16):
      %s = arith.addf %x, %b : f16
      %t = math.tanh %s : f16
      ipu_tile.yield %t : f16
    }
    ```

    Example, softmax's sum of exp(x - max) over rows of 32:

    ```mlir
    %sum = ipu_tile.elementwise reduce add init 0.0 %x, %max
        : tensor<8x32xf32>, tensor<8x1xf32> -> tensor<8x1xf32> {
    ^bb0(%v: f32, %m: f32):
      %d = arith.subf %v, %m : f32
      %e = math.exp %d : f32
      ipu_tile.yield %e : f32
    }
    ```
  }];
  let arguments = (ins Variadic<AnyRankedTensor>:$inputs,
                       OptionalAttr<IPUTile_RowReduction>:$reduce,
                       OptionalAttr<F64Attr>:$init);
  let results = (outs AnyRankedTensor:$result);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    (`reduce` $reduce^ `init` $init)? $inputs attr-dict `:` type($inputs)
    `->` type($result) $body
  }];
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
  let skipDefaultBuilders = 1;
  let builders = [OpBuilder<(ins "::mlir::Type":$resultType,
                                 "::mlir::ValueRange":$inputs)>];
  let extraClassDeclaration = [{
    /// The shape the op iterates over: the result's, or for a reduction
    /// its first input's.
    ::llvm::SmallVector<int64_t> getIterationShape();
    /// How input `index` maps onto the iteration shape (their shapes say).
    std::optional<::ipu::Broadcast> getBroadcast(unsigned index);
    /// The index of the first input read element by element.
    std::optional<unsigned> getFirstFullInput();
    /// The row reduction as plain C++ (None for an elementwise op).
    ::ipu::RowReduction getRowReduction();
    double getInitValue() { return getInit() ? getInit()->convertToDouble() : 0.0; }
  }];
}

def IPUTile_KernelOp : IPUTile_Op<"kernel", [Symbol, HasParent<"ProgramOp">, IsolatedFromAbove,
    SingleBlock]> {
  let summary = "A kernel generated from an elementwise body";
  let description = [{
    The code compute sets run when they name this symbol as their kernel:
    the body, applied to every element of the block a vertex iterates over.
    `broadcasts` says how each input's block maps onto it (`"full"`, `"row"`:
    one row for every row, `"scalar"`: one element, `"column"`: one value
    per row). With `reduce`, the values of each row are combined from
    `init` (in f32) and the output block is one value per row.
    `ipu-translate` lowers each kernel through MLIR's LLVM conversions to an
    object and links all of a program's kernels with LLD into the package's
    kernel object; `ipu-run` costs the kernel from its body. A vertex's
    parameters are the rows and columns of the block it iterates over (its
    output block's, or for a reduction its first full input's).

    Example:

    ```mlir
    ipu_tile.kernel @ew0.kernel broadcasts ["full", "row"] {
    ^bb0(%x: f16, %b: f16):
      %s = arith.addf %x, %b : f16
      ipu_tile.yield %s : f16
    }
    ipu_tile.kernel @max.kernel broadcasts ["full"] reduce max init 0xFFF0000000000000 {
    ^bb0(%x: f32):
      ipu_tile.yield %x : f32
    }
    ipu_tile.compute_set @ew0 kernel "ew0.kernel" operands [@mm, @bias, @out]
        tiles [0, 1]
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, StrArrayAttr:$broadcasts,
                       OptionalAttr<IPUTile_RowReduction>:$reduce,
                       OptionalAttr<F64Attr>:$init);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    $sym_name `broadcasts` $broadcasts (`reduce` $reduce^ `init` $init)?
    attr-dict-with-keyword $body
  }];
  let hasRegionVerifier = 1;
  let extraClassDeclaration = [{
    /// The kernel as plain C++ (its body, symbol and KernelSpec), or an
    /// error on the op.
    ::mlir::FailureOr<std::unique_ptr<::ipu::ElementwiseKernel>> buildKernel();
  }];
}

#endif // IPU_TILE_OPS
