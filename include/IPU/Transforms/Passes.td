//===- Passes.td - IPU compiler passes ---------------------*- tablegen -*-===//

#ifndef IPU_TRANSFORMS_PASSES
#define IPU_TRANSFORMS_PASSES

include "mlir/Pass/PassBase.td"

def IPUSetTarget : Pass<"ipu-set-target", "::mlir::ModuleOp"> {
  let summary = "Names the target of a module that names none";
  let description = [{
    Sets the module attribute `ipu_tile.target` to `target` when the module
    has none. A module that already names a different target is an error.

    Before: `module {...}`. After, with `target=ipu21-16`:

    ```mlir
    module attributes {ipu_tile.target = #ipu_tile.target<"ipu21-16">} {...}
    ```
  }];
  let options = [Option<"target", "target", "std::string", "\"ipu21\"",
                        "TargetModel preset: ipu21 or ipu21-N">];
  let dependentDialects = ["::mlir::ipu_tile::IPUTileDialect"];
}

def IPUSeparateImages : Pass<"ipu-separate-images", "::mlir::ModuleOp"> {
  let summary = "Compiles a batch of images as one image, run once per image";
  let description = [{
    Exporters write a batch as the leading dim of every argument. When each
    function argument has the same leading dim B > 1 and nothing the
    function computes mixes images, the function is rewritten to take one
    image (every value that carries the batch shrinks to one image's share)
    and is marked `ipu.images = B`: the package runs it once per image, the
    weights staying resident between images, and `ipu-run` reads and writes
    the whole batch in the framework's shapes.

    Which values carry the batch follows the ops, not the sizes: a value
    carries it on one dim, whose index splits into B contiguous blocks of
    `inner` elements, one per image (`[B * 729, 1152]` after a collapse:
    inner 729). A linalg op keeps images apart when one parallel loop
    indexes that dim of every batched operand, and only that dim, and
    indexes its results, no other operand; reshapes keep them apart when
    the batch stays outermost in its group; a fresh `tensor.empty` (or a
    fill of one) takes the share its users give it. Anything else reading a
    batched value, a result that does not carry the batch on its leading
    dim, or arguments of other leading dims, leaves the function as it is,
    with a remark that says why; the batch then runs spatially.

    Only arguments of rank `minimum-rank` or more count as a batch
    (`--ipu-compile` asks for 4 unless `images=sequence`: a batch of images,
    `[B, C, H, W]`, not heads of attention or two matrices that happen to
    have as many rows).

    For transformers' SigLIP vision tower (one layer, eager attention)
    exported at batch 4:

    ```
    remark: runs the batch of 4 images one after another: images=4
        batchedValues=269 (each argument and result holds one image)
    ```
  }];
  let options = [Option<"minimumRank", "minimum-rank", "unsigned", "1",
                        "Separate only when every argument has this rank or more">];
}

def IPUUnrollLayerLoops : Pass<"ipu-unroll-layer-loops", "::mlir::ModuleOp"> {
  let summary = "Unrolls layers written as a loop over stacked weights";
  let description = [{
    An exporter may write N identical layers as one `scf.for` over stacked
    weights: iteration `i` reads layer `i`'s weights as slice `[i]` of an
    `[N, ...]` tensor and passes its value on through `iter_args`. This
    pass unrolls every `scf.for` (its bounds and step must be constants, it
    may run at most `maximum-iterations` times, and unrolling may make at
    most 262,144 ops, however loops nest) and folds each
    iteration's index into its slices' static offsets. Import then takes
    each layer's slice of a frozen stacked weight as a weight of its own,
    and `--ipu-find-repeated-layers` finds the N layers again, so that
    `repeat-layers=true` compiles them as one body. Reports each loop as a
    remark on its function. Stacked weights that are function arguments
    are sliced per layer too, but each layer then reads a slice of its own
    and the layers are compiled one by one.

    Before:

    ```mlir
    %y = scf.for %i = %c0 to %c3 step %c1 iter_args(%h = %x) -> (tensor<16x64xf32>) {
      %w = tensor.extract_slice %stacked[%i, 0, 0] [1, 64, 64] [1, 1, 1]
          : tensor<3x64x64xf32> to tensor<64x64xf32>
      %m = linalg.matmul ins(%h, %w : ...) outs(%zero : tensor<16x64xf32>) -> tensor<16x64xf32>
      scf.yield %m : tensor<16x64xf32>
    }
    ```

    After (`remark: unrolls a loop of 3 iterations that slices 1 stacked
    weights per iteration (1 frozen, 0 arguments)`):

    ```mlir
    %w0 = tensor.extract_slice %stacked[0, 0, 0] [1, 64, 64] [1, 1, 1] ...
    %m0 = linalg.matmul ins(%x, %w0 : ...) ...
    %w1 = tensor.extract_slice %stacked[1, 0, 0] [1, 64, 64] [1, 1, 1] ...
    %m1 = linalg.matmul ins(%m0, %w1 : ...) ...
    ...
    ```
  }];
  let options = [Option<"maximumIterations", "maximum-iterations", "uint64_t", "1024",
                        "Refuse loops of more iterations than this">];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::tensor::TensorDialect"];
}

def IPUImportLinalg : Pass<"ipu-import-linalg", "::mlir::ModuleOp"> {
  let summary = "Turns what exporters emit into ipu_gemm.matmul and ipu_tile.elementwise";
  let description = [{
    Elementwise ops (all-parallel `linalg.generic`, `linalg.map` and named
    ops such as `linalg.add` or `linalg.exp`, on tensors) become
    `ipu_tile.elementwise` with their scalar body, the scalar constants
    they capture cloned in, a bias read by a map of the last dimension
    (torch-mlir) or through a `linalg.broadcast` and reshapes (StableHLO)
    as a row input, splat constants as body constants. Bodies are
    simplified (`x^3` as `x * x * x`, constant truncations folded);
    `--ipu-fuse-elementwise` then fuses chains. A body op no tile kernel
    runs is an error naming it. Elementwise arith and math ops on whole
    tensors (`%y = math.exp %x : tensor<8x16xf32>`) first become such
    generics, by upstream's elementwise-to-linalg conversion.


    Recognises every contraction by its indexing maps, whatever op spells
    it: `linalg.matmul`, `linalg.batch_matmul` and `linalg.contract` with or
    without transposing maps, and `linalg.generic` multiply-add bodies (with
    `arith.extf` on the inputs). It needs one reduction dim (K), one
    parallel dim of B only (N), M dims of A (several fold into M, as JAX's
    Dense on [B, S, D] has) and batch dims leading in all three operands,
    and a zero accumulator (a `linalg.fill` of zero, a fill generic or
    `tensor.empty`). It looks through what only permutes, broadcasts or
    regroups the operands: `linalg.transpose` or transposing generics of the
    last two dims (a `transpose_lhs` / `transpose_rhs` flag), broadcasts of B
    along the batch dims (torch-mlir's rank-3 linear: the batches fold into
    M), and `tensor.collapse_shape` of leading dims whose result is expanded
    back. A truncation of the result (`arith.truncf` or an identity truncf
    generic) folds into the matmul's result type.

    A vision transformer's patch embedding, `linalg.conv_2d_nchw_fchw`
    whose stride is its kernel (no padding or dilation) followed by
    flatten(2).transpose(1, 2), becomes the matmul of its patches by its
    filters: the im2col is one `ipu_tile.permute` of the image, the filters
    `[F, C, kh, kw]` are regrouped to `[F, C*kh*kw]` and taken transposed,
    and a bias broadcast into the accumulator becomes the matmul's
    epilogue. For `x : tensor<1x3x56x56xf32>` and 32 filters of 14x14:

    ```mlir
    %p = ipu_tile.permute %x view [1, 3, 4, 14, 4, 14]
           permutation [0, 2, 4, 1, 3, 5]
           : tensor<1x3x56x56xf32> -> tensor<1x16x588xf32>
    %f = ipu_tile.permute %w view [32, 588] permutation [0, 1]
           : tensor<32x3x14x14xf32> -> tensor<32x588xf32>
    %y = ipu_gemm.matmul %p, %f {acc_type = f32, transpose_rhs}
           : tensor<1x16x588xf32>, tensor<32x588xf32> -> tensor<1x16x32xf32>
    ```

    Any other convolution is an error saying which condition it misses.

    What a frozen export (torch-mlir's fx importer) adds comes first:
    float tensor constants that are not splats (`dense_resource` blobs,
    dense literals, static slices of them such as nn.MultiheadAttention's
    packed in_proj weight) become arguments after the function's own,
    each carrying its value as `ipu_tile.constant`, which the package
    carries and the host streams in at load. A gather generic reading a
    table at a constant arange (the position embedding) is the table
    itself; `cf.assert` on constants folds away, on anything else it is
    refused. scaled_dot_product_attention's guard of wholly masked rows
    (`select(all(row == -inf), 0, softmax)`) is dropped with a remark, and
    f64 intermediates are computed in f32. A contraction looks through
    operands both widened from one type (f16 upcast to f32: the AMP takes
    f16 and accumulates in f32), and a scale of a transposed K moves before
    the transpose. A reshape nothing else folded becomes an
    `ipu_tile.permute` that keeps every dim in place, which moves nothing
    when its source's layout already holds the result.

    Anything else from linalg or tensor is an error naming the op.

    The import runs as rewrite-pattern stages, each in program order to its
    fixpoint and without folding: convolutions, permutes, contractions,
    truncations, regrouped batches, softmax decomposition, then elementwise
    ops and row reductions. Each stage looks through what the ones before
    it left.

    `constraints` and `plan` attributes
    carry over; either name holding anything else, or an `ipu_gemm`
    attribute under another name, is an error, and other attributes (but
    linalg's own) are dropped with a warning.

    Before (torch-mlir's `nn.Linear` on [S, D], f16 with f32 accumulation):

    ```mlir
    %t = linalg.transpose ins(%w : tensor<32x16xf16>) outs(%e0 : tensor<16x32xf16>)
        permutation = [1, 0]
    %z = linalg.fill ins(%cst : f32) outs(%e1 : tensor<8x32xf32>) -> tensor<8x32xf32>
    %m = linalg.matmul ins(%x, %t : tensor<8x16xf16>, tensor<16x32xf16>)
        outs(%z : tensor<8x32xf32>) -> tensor<8x32xf32>
    %y = linalg.generic {...} ins(%m : tensor<8x32xf32>) outs(%e2 : tensor<8x32xf16>) {
    ^bb0(%in: f32, %out: f16):
      %r = arith.truncf %in : f32 to f16
      linalg.yield %r : f16
    } -> tensor<8x32xf16>
    ```

    After:

    ```mlir
    %y = ipu_gemm.matmul %x, %w {acc_type = f32, transpose_rhs}
        : tensor<8x16xf16>, tensor<32x16xf16> -> tensor<8x32xf16>
    ```
  }];
  let dependentDialects = ["::mlir::ipu_gemm::IPUGemmDialect",
                           "::mlir::ipu_tile::IPUTileDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::math::MathDialect"];
}

def IPUFuseElementwise : Pass<"ipu-fuse-elementwise", "::mlir::ModuleOp"> {
  let summary = "Fuses chains of ipu_tile.elementwise into one op each";
  let description = [{
    In program order, each `ipu_tile.elementwise` takes in the elementwise
    ops that produce its full inputs: a computed value fuses into its only
    reader, a broadcast (an op with no full input of its own) into every
    reader. A conversion of inputs of its own shape (an f16 bias widened to
    f32) fuses into every reader however it reads it, which then reads the
    narrow input and converts it. An op whose full inputs are reshapes of
    one shape, one of them an elementwise op's only value, is computed in
    that shape and its result reshaped: the GELU torch-mlir writes on
    `[1, T, C]` then fuses into the `[T, C]` bias add before it. The fused
    body computes the producer's value where the consumer
    read it, so a chain becomes one kernel per tile and its intermediates
    never reach memory. Each fused body is then simplified (`x^3` as `x *
    x * x`, constant truncations folded), and an op that only copies an
    input is replaced by it. A broadcast that no op reads in full is an
    error: only elementwise ops on a tensor of the result's shape compile.

    Before (a bias add, then GELU's tanh, as `--ipu-import-linalg` leaves
    them):

    ```mlir
    %0 = ipu_tile.elementwise %x, %b : tensor<16x64xf32>, tensor<64xf32>
           -> tensor<16x64xf32> {
    ^bb0(%a: f32, %c: f32):
      %s = arith.addf %a, %c : f32
      ipu_tile.yield %s : f32
    }
    %1 = ipu_tile.elementwise %0 : tensor<16x64xf32> -> tensor<16x64xf32> {
    ^bb0(%a: f32):
      %t = math.tanh %a : f32
      ipu_tile.yield %t : f32
    }
    ```

    After: one op, one kernel.

    ```mlir
    %1 = ipu_tile.elementwise %x, %b : tensor<16x64xf32>, tensor<64xf32>
           -> tensor<16x64xf32> {
    ^bb0(%a: f32, %c: f32):
      %s = arith.addf %a, %c : f32
      %t = math.tanh %s : f32
      ipu_tile.yield %t : f32
    }
    ```
  }];
  let dependentDialects = ["::mlir::ipu_tile::IPUTileDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect"];
}

def IPUFuseSiblingMatmuls : Pass<"ipu-fuse-sibling-matmuls", "::mlir::ModuleOp"> {
  let summary = "One matmul for the projections of one value by frozen weights";
  let description = [{
    Matmuls that read one value and frozen weights (`ipu_tile.constant`
    arguments, `[n_i, k]` transposed, each read once) and are alike in all
    else (element types, accumulator, input scale) become one matmul by the
    weights side by side, `[sum n_i, k]`: the value is gathered into one
    plan's layout once, and the plan spreads all the columns. Each result
    is a column window of the whole (`ipu_tile.permute` with `offsets`).

    Then alike elementwise ops that read those windows, one each, become
    one op on the whole, their other inputs side by side (frozen, or
    computed elementwise from frozen parts alike) or one for all (a row's
    statistic), until the windows reach ops of another kind; and a permute
    of a window reads the whole (a head split of Q, K or V is a window of
    the heads of all three). Attention's Q, K and V projections, with their
    bias adds and casts, compute as timm's fused qkv does. It runs after
    import and before `--ipu-find-repeated-layers`, on every layer alike.

    Example, three projections of one value and their bias adds:

    ```mlir
    %q = ipu_gemm.matmul %x, %wq {acc_type = f32, transpose_rhs}
        : tensor<8x16xf16>, tensor<16x16xf16> -> tensor<8x16xf32>
    %qb = ipu_tile.elementwise %q, %bq : tensor<8x16xf32>, tensor<16xf32>
        -> tensor<8x16xf32> { ... }
    // ... %k, %kb and %v, %vb alike, become:
    %qkv = ipu_gemm.matmul %x, %wqkv {acc_type = f32, transpose_rhs}
        : tensor<8x16xf16>, tensor<48x16xf16> -> tensor<8x48xf32>
    %qkvb = ipu_tile.elementwise %qkv, %bqkv : tensor<8x48xf32>, tensor<48xf32>
        -> tensor<8x48xf32> { ... }
    %qb = ipu_tile.permute %qkvb view [8, 48] permutation [0, 1]
        offsets [0, 0] sizes [8, 16] : tensor<8x48xf32> -> tensor<8x16xf32>
    ```
  }];
  let dependentDialects = ["::mlir::ipu_tile::IPUTileDialect",
                           "::mlir::ipu_gemm::IPUGemmDialect"];
}

def IPUFindRepeatedLayers : Pass<"ipu-find-repeated-layers", "::mlir::ModuleOp"> {
  let summary = "Finds the N identical layers an exporter unrolled";
  let description = [{
    In each function, finds the longest run of consecutive layers that
    compute the same ops (names, attributes, result types and bodies) from
    the previous layer's output and weights of their own: arguments that
    only their layer reads, of the same types in every layer. Values from
    before the layers must be read alike by every layer, and only the last
    layer's output may be read after them. Reports what it found as a
    remark on the function. With `outline=true`, it then rewrites them as
    one `ipu_tile.repeat`: the first layer's ops become its body, each
    layer's weights its operands slot by slot, and what read the last
    layer's output reads the repeat's result, which `--ipu-lower-to-tile`
    lowers to one loop over every layer's weights (`--ipu-compile` does so
    with `repeat-layers=true`; without it, each layer compiles on its own
    and the remark says so).

    It runs before `--ipu-fuse-elementwise`, which would merge the last
    layer's output into the op that reads it after the layers. For
    transformers' SigLIP vision tower exported by torch-mlir in f16 with 6
    layers (hidden 64), after import:

    ```
    remark: repeats one layer: layers=6 opsPerLayer=65 firstOp=9 endOp=399
        weightsPerLayer=12 outputOp=64 (each layer compiled on its own for now)
    ```
  }];
  let options = [Option<"outline", "outline", "bool", "false",
                        "Rewrite the layers found as one ipu_tile.repeat">,
                 Option<"streamWeights", "stream-weights", "bool", "false",
                        "Mark the repeat streamed: the host streams each "
                        "layer's weights as the layer starts, and the tiles "
                        "hold one layer's">];
  let dependentDialects = ["::mlir::ipu_tile::IPUTileDialect"];
}

def IPUPlanGemm : Pass<"ipu-plan-gemm", "::mlir::ModuleOp"> {
  let summary = "Chooses a partition plan for every ipu_gemm.matmul";
  let description = [{
    Enumerates the partition plans of each matmul on the module's target,
    costs each with the TargetModel, honours plan constraints (from the op's
    `constraints` attribute; a field set by a pass option overrides it). An
    f32-accumulating matmul keeps f32 partials unless `partials` (option or
    constraint) allows f16 ones; an f16-accumulating one uses f16. Keeps the best
    `finalists` and picks the best that fits tile memory. Finalists and the
    decision are emitted as remarks and structured log lines. A matmul that
    already carries a `plan` keeps it when the lowering can build it and it
    matches the constraints (its `cycles` become the model's estimate, and a
    remark says the plan was given); otherwise it is an error giving the
    reason. A given plan with f16 partials allows them. Independent
    matmuls are planned in parallel; the result does not depend on the
    thread count. A batched matmul plans one batch on tiles / batches
    tiles; an activation B given transposed only takes the swapped
    orientation, which reads it as it is.

    Before:

    ```mlir
    %c = ipu_gemm.matmul %a, %b : tensor<8x16xf16>, tensor<16x8xf16> -> tensor<8x8xf32>
    ```

    After (on `ipu21-4`; finalists and the choice as remarks):

    ```mlir
    %c = ipu_gemm.matmul %a, %b {plan = #ipu_gemm.plan<rows = 4, cols = 1,
        inner = 1, orientation = normal, weights = interleaved,
        reduction = complete, staging = false, cycles = 422>}
        : tensor<8x16xf16>, tensor<16x8xf16> -> tensor<8x8xf32>
    ```
  }];
  let options = [
    Option<"finalists", "finalists", "unsigned", "4",
           "How many best plans to keep and report">,
    Option<"rows", "rows", "int64_t", "0", "Constrain row partitions (0: any)">,
    Option<"cols", "cols", "int64_t", "0", "Constrain column partitions (0: any)">,
    Option<"inner", "inner", "int64_t", "0", "Constrain inner partitions (0: any)">,
    Option<"serial", "serial", "int64_t", "0",
           "Constrain serial chunks of M (0: any, chosen when nothing else "
           "fits; 1: none)">,
    Option<"orientation", "orientation", "std::string", "\"\"",
           "Constrain the orientation (normal, swapped)">,
    Option<"weights", "weights", "std::string", "\"\"",
           "Constrain the weight memory class (standard, interleaved)">,
    Option<"reduction", "reduction", "std::string", "\"\"",
           "Constrain the reduction of inner partitions (complete, staged)">,
    Option<"staging", "staging", "std::string", "\"\"",
           "Constrain local weight staging (true, false)">,
    Option<"rerank", "rerank", "unsigned", "0",
           "Lower, schedule and place each matmul's best N finalists and "
           "choose the one with the fewest scheduled cycles that fits (0: "
           "the analytical best)">,
    Option<"validateStorage", "validate-storage", "bool", "false",
           "Lower, schedule and place a copy of the planned module; when its "
           "storage overflows, plan again with the overflow held back (up to "
           "four times)">,
    Option<"gathered", "gathered", "std::string", "\"\"",
           "Constrain gathered weights, stored once and gathered before each "
           "GEMM (true, false)">,
    Option<"maxWeightReplicas", "max-weight-replicas", "unsigned", "0",
           "Keep at most N copies of each weight's blocks resident (0: any; "
           "1: every weight stored once, on one row block or gathered before "
           "each GEMM, as a stack of layers keeps them)">,
    Option<"partials", "partials", "std::string", "\"\"",
           "AMP partials for f32-accumulating matmuls: f32 (default), f16 "
           "(allowed and required) or any (allowed, chosen by cost)">,
  ];
}

def IPUAssignLayouts : Pass<"ipu-assign-layouts", "::mlir::ModuleOp"> {
  let summary = "Gives every tensor between ops a layout, with relayouts where they disagree";
  let description = [{
    Every function argument comes from the host through `ipu_tile.from_host`:
    once split by rows for the ops that read it as an activation, and once
    per distinct layout its users want it resident (weights) or transposed
    in. Every op result gets the `#ipu_tile.layout` its op leaves it in (a
    matmul: its plan's C layout). Where a consumer needs an operand in
    another layout or memory class, an `ipu_tile.relayout` stands before it:
    one per distinct (value, layout, class), shared by the consumers that
    want it. Ops take part through `TileLowerableOpInterface`.

    In an `ipu_tile.repeat`, every layer's tensor of a weight slot streams
    from the host in the one layout every op of the body wants the slot in
    (one layout per slot; a slot read where it is not resident is an
    error), and the body reads the slot in it. The previous layer's value
    is where the input arrives: a body that passes on its value elsewhere
    moves it back with a relayout, so that every layer reads and writes
    one buffer.

    Before (planned):

    ```mlir
    func.func @mm(%a: tensor<8x16xf16>, %b: tensor<16x8xf16>) -> tensor<8x8xf32> {
      %c = ipu_gemm.matmul %a, %b {plan = #ipu_gemm.plan<rows = 2, cols = 2, ...>}
          : tensor<8x16xf16>, tensor<16x8xf16> -> tensor<8x8xf32>
      return %c : tensor<8x8xf32>
    }
    ```

    After:

    ```mlir
    func.func @mm(%a: tensor<8x16xf16>, %b: tensor<16x8xf16>) -> tensor<8x8xf32, #C> {
      %0 = ipu_tile.from_host %a : tensor<8x16xf16> -> tensor<8x16xf16, #rows>
      %1 = ipu_tile.from_host %b in interleaved {resident}
          : tensor<16x8xf16> -> tensor<16x8xf16, #B>
      %2 = ipu_tile.relayout %0 : tensor<8x16xf16, #rows> -> tensor<8x16xf16, #A>
      %c = ipu_gemm.matmul %2, %1 {plan = ...}
          : tensor<8x16xf16, #A>, tensor<16x8xf16, #B> -> tensor<8x8xf32, #C>
      return %c : tensor<8x8xf32, #C>
    }
    ```
  }];
  let dependentDialects = ["::mlir::ipu_tile::IPUTileDialect"];
}

def IPULowerToTile : Pass<"ipu-lower-to-tile", "::mlir::ModuleOp"> {
  let summary = "Materialises buffers, exchange phases and compute sets";
  let description = [{
    Turns each function, with its layouts assigned, into an
    `ipu_tile.program`, a driver over `TileLowerableOpInterface`: each
    `ipu_tile.from_host` becomes a buffer and a host stream (weights
    resident), each run of consecutive `ipu_tile.relayout`s one exchange
    phase between a sync on each side, each op lowers itself (a matmul: its
    compute sets, and the reduction phase when K is split), values the
    function does not return leave as checkpoint streams and the results as
    result streams. The program carries the host reference `ipu-run --check`
    recomputes. A package holds one program: a module with no function to
    compile, or with more than one, is an error.

    Before (after `--ipu-assign-layouts`):

    ```mlir
    %0 = ipu_tile.from_host %a : tensor<8x16xf16> -> tensor<8x16xf16, #rows>
    %1 = ipu_tile.from_host %b in interleaved {resident}
        : tensor<16x8xf16> -> tensor<16x8xf16, #B>
    %2 = ipu_tile.relayout %0 : tensor<8x16xf16, #rows> -> tensor<8x16xf16, #A>
    %c = ipu_gemm.matmul %2, %1 {plan = ...} : ... -> tensor<8x8xf32, #C>
    return %c : tensor<8x8xf32, #C>
    ```

    After:

    ```mlir
    ipu_tile.program @mm attributes {flops = 2048 : i64, reference = [...]} {
      ipu_tile.buffer @arg0 : tensor<8x16xf16, #rows> in standard
      ipu_tile.buffer @arg1 : tensor<16x8xf16, #B> in interleaved
      ipu_tile.buffer @mm0.lhs : tensor<8x16xf16, #A> in standard
      ipu_tile.buffer @mm0.out : tensor<8x8xf32, #C> in standard
      ipu_exchange.stream_in @arg0 from 0
      ipu_exchange.stream_in @arg1 from 1 {weight}
      ipu_exchange.sync
      ipu_exchange.phase @mm0.gather {
        ipu_exchange.copy @arg0 to @mm0.lhs
      }
      ipu_exchange.sync
      ipu_tile.compute_set @mm0.partials kernel "gemm"
          operands [@mm0.lhs, @arg1, @mm0.out] tiles [0, 1, 2, 3] params [...]
      ipu_exchange.sync
      ipu_exchange.stream_out @mm0.out to 0
    }
    ```
  }];
  let dependentDialects = ["::mlir::ipu_tile::IPUTileDialect",
                           "::mlir::ipu_exchange::IPUExchangeDialect"];
}

def IPUScheduleExchange : Pass<"ipu-schedule-exchange", "::mlir::ModuleOp"> {
  let summary = "Times every message of every exchange phase, as the hardware runs it";
  let description = [{
    Runs after `--ipu-place-storage`: the hardware's rules depend on where
    each word lives. Derives the transfers of each phase from its copies and
    their buffers' addresses, schedules them under the C600 exchange timing
    model (lib/Exchange/Timing.h: route latency between the tiles, receive
    controls as timed events, sends that never overlap, messages of at most
    4,148 words, 64-bit paired sends where they shorten the phase, SRAM
    memory elements a send reads and a receive writes), checks the result
    with the independent checker under every rule, and stores it as an
    `#ipu_exchange.schedule` (strategy `timed`). Checks that the exchange
    code of the schedules fits the area placement reserved for it. Reports
    per phase transfers, the lower bound with its endpoint and latency
    parts, the horizon, their ratio, runs, paired runs, words tiles copy to
    themselves, the phase's cycles and its code bytes, as a remark and a log
    line. Phases are scheduled in parallel, deterministically. With
    `dump-dir`, each phase's transfers are also written there as
    `<phase>.phase` in the text form `bench/run exchange --phase` reads.

    Before (placed):

    ```mlir
    ipu_exchange.phase @mm0.gather {
      ipu_exchange.copy @arg0 to @mm0.lhs
    }
    ```

    After (runs: transfer, first word, words, start event, paired):

    ```mlir
    ipu_exchange.phase @mm0.gather attributes {schedule =
        #ipu_exchange.schedule<strategy = timed, transfers = 4, bound = 97,
        horizon = 131, runs = dense<[0, 0, 16, 0, 0, 1, 0, 16, 3, 0, ...]>
        : tensor<20xi32>>} {
      ipu_exchange.copy @arg0 to @mm0.lhs
    }
    ```
  }];
  let options = [Option<"dumpDir", "dump-dir", "std::string", "\"\"",
                        "Write every phase as <dir>/<phase>.phase, with the "
                        "addresses placement gave its transfers">];
  let dependentDialects = ["::mlir::ipu_exchange::IPUExchangeDialect"];
}

def IPUPlaceStorage : Pass<"ipu-place-storage", "::mlir::ModuleOp"> {
  let summary = "Assigns every buffer an address in its memory class";
  let description = [{
    From the liveness of every buffer on every tile, places buffers first fit
    in their memory class, keeping the runtime image, the exchange code and
    vertex state free. The exchange code is sized from a timed schedule of
    each phase on provisional addresses; `--ipu-schedule-exchange` then
    schedules on the real ones and checks that its code fits. Reports the peak against the max-live bound. A
    tile that overflows is an error naming the tile, the bytes and the
    buffers live there, with a note per buffer at its op. With
    `memory-profile`, writes the placed memory as JSON
    (docs/MemoryProfile.md).

    Before:

    ```mlir
    ipu_tile.program @mm attributes {...} {
      ipu_tile.buffer @arg0 : tensor<8x16xf16, #rows> in standard
      ipu_tile.buffer @arg1 : tensor<16x8xf16, #B> in interleaved
      ...
    ```

    After (addresses, the peak and its bound per class, the reserved
    exchange code and vertex state):

    ```mlir
    ipu_tile.program @mm attributes {memory_bound = array<i64: 128, 256>,
        memory_peak = array<i64: 128, 256>, reserved_bytes = 88 : i64, ...} {
      ipu_tile.buffer @arg0 : tensor<8x16xf16, #rows> in standard at 319576
      ipu_tile.buffer @arg1 : tensor<16x8xf16, #B> in interleaved at 524288
      ...
    ```
  }];
  let options = [Option<"memoryProfile", "memory-profile", "std::string", "\"\"",
                        "Write the placed memory of every program as JSON here">];
}

def IPUExportData : Pass<"ipu-export-data", "::mlir::ModuleOp"> {
  let summary = "Moves a program's weights and exchange run tables to a data file";
  let description = [{
    The last step of `--ipu-compile="data-file=<path>"`. Writes every
    constant a stream carries (a frozen weight, each layer's when streamed)
    and every schedule's run table of at least `minimum-bytes` to `file`,
    and puts a `#ipu_tile.data` block in its place; the module records the
    file's size and checksum in `ipu_tile.data_file`. The printed IR then
    holds the program and not its data: the 27-layer SigLIP tower's IR
    takes about 0.2 MB instead of 0.9 GB. Splats stay in the IR, as do
    smaller constants. `ipu-translate --ipu-to-package` reads the file
    (as written, or beside the IR) and refuses one whose size or checksum
    differs.

    Before:

    ```mlir
    ipu_exchange.stream_in @w from 3 {constant = dense<"0x3C00..."> : tensor<32x64xf16>, weight}
    ```

    After:

    ```mlir
    module attributes {ipu_tile.data_file = #ipu_tile.data_file<"tower.data",
        bytes = 4608, checksum = 12638153115695167455>, ...} {
      ...
      ipu_exchange.stream_in @w from 3 {constant = #ipu_tile.data<tensor<32x64xf16> at 64>, weight}
    ```
  }];
  let options = [Option<"file", "file", "std::string", "\"\"",
                        "The data file to write (replaced if it exists)">,
                 Option<"minimumBytes", "minimum-bytes", "uint64_t", "1024",
                        "Smaller constants and run tables stay in the IR">];
}

#endif // IPU_TRANSFORMS_PASSES
