//===- GemmOps.td - The ipu_gemm dialect -------------------*- tablegen -*-===//
//
// Graph-level matrix products with their partition plans and constraints.
//
//===----------------------------------------------------------------------===//

#ifndef IPU_GEMM_OPS
#define IPU_GEMM_OPS

include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/OpBase.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "IPU/Dialect/Tile/IR/TileEnums.td"

def IPUGemm_Dialect : Dialect {
  let name = "ipu_gemm";
  let cppNamespace = "::mlir::ipu_gemm";
  let summary = "Matrix products planned for a tile machine";
  let description = [{
    `ipu_gemm` holds the matrix products of a model graph. Each
    `ipu_gemm.matmul` carries the plan that decides how it is cut across the
    tiles of the target (`#ipu_gemm.plan`), and optionally constraints that
    restrict the plans the planner may choose (`#ipu_gemm.constraints`).
    Other tensor ops stay in upstream dialects until they are lowered.
  }];
  let useDefaultAttributePrinterParser = 1;
}

class IPUGemm_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<IPUGemm_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

// Where gathered weights' homes stay; interleaved, beside the gathered
// block, unless the plan says otherwise.
def IPUGemm_HomesParameter : EnumParameter<IPUTile_MemoryClass> {
  let defaultValue = "::mlir::ipu_tile::MemoryClass::interleaved";
}

// Where the partial sums of inner > 1 stay; standard unless the plan says
// otherwise.
def IPUGemm_PsumsParameter : EnumParameter<IPUTile_MemoryClass> {
  let defaultValue = "::mlir::ipu_tile::MemoryClass::standard";
}

def IPUGemm_PlanAttr : IPUGemm_Attr<"Plan", "plan"> {
  let summary = "How one matmul is cut across tiles";
  let description = [{
    A partition plan for `C[M x N] = A[M x K] x B[K x N]`: the rows of A and
    C are split into `rows` balanced parts, the columns of B and C into
    `cols` parts and K into `inner` parts; tile
    `p * rows * cols + i * cols + j` computes the partial product of row
    block i, inner block p and column block j. `orientation` is `normal`
    or `swapped` (operands exchanged: the AMP holds A, B is stored B^T). The
    weights B are resident in tile memory of class `weights` (`standard`
    or `interleaved`) in the layout this plan wants; with `staging` they
    are copied to an interleaved scratch before the AMP reads them. With
    `inner` > 1 the partial sums are reduced `complete` (on the tile of
    p = 0) or `staged` (each of the `inner` tiles sums a share of the
    block's rows). `partials` (`"f32"`, the default, or `"f16"`) is what the
    AMP accumulates in: f16 partials run at twice the f32-partials rate for
    f16 inputs. With `gathered = true` (interleaved weights, `rows` > 1)
    the weights are stored once, each block's rows split over the `rows`
    tiles that use it, and gathered whole onto each of them by an exchange
    before every GEMM: less resident memory for more exchange. `homes`
    says where those stored blocks stay (`interleaved`, the default, or
    `standard`: only the exchange reads them); the planner moves a repeated
    layer's homes to standard memory when interleaved memory is short.
    `grain` (1, 2 or 4; default 1) cuts the columns of B and C in whole
    grains of that many elements, balanced over the grains, where the
    balanced split of N would cut an exchange word of a narrow row (16
    blocks of 4304 f16 columns: 268 or 270, with `grain = 2`). `psums`
    says where the partial sums of `inner` > 1 and the reduction's gathered
    partials stay: `standard` (the default) or `interleaved`, which the
    planner takes only when they do not fit standard memory (a deep
    tower's f32 partials beside code and activations). With
    `serial` = S > 1 (a 2-D product by resident weights, S dividing M) the
    rows of A and C are cut into S chunks of M / S rows that run one after
    another in an `ipu_tile.loop` over the same buffers, the other fields
    splitting one chunk: A and C are held whole, spread once, and each
    iteration slices its chunk of A, multiplies it and updates its chunk of
    C: less memory for more cycles. `cycles` is
    the planner's estimate for the whole matmul, kept so that it can be
    compared with simulated cycles.

    Example:

    ```mlir
    #ipu_gemm.plan<rows = 4, cols = 2, inner = 2, orientation = normal,
                   weights = interleaved, reduction = staged,
                   staging = false, partials = "f16", cycles = 2911>
    #ipu_gemm.plan<rows = 23, cols = 8, inner = 8, orientation = swapped,
                   weights = interleaved, reduction = staged,
                   staging = false, partials = "f32", cycles = 54734,
                   gathered = true, homes = standard>
    #ipu_gemm.plan<rows = 4, cols = 90, inner = 4, orientation = normal,
                   weights = interleaved, reduction = staged,
                   staging = false, partials = "f32", cycles = 166854,
                   gathered = true, grain = 2>
    #ipu_gemm.plan<rows = 8, cols = 23, inner = 8, orientation = normal,
                   weights = interleaved, reduction = staged,
                   staging = false, partials = "f32", cycles = 120512,
                   gathered = true, psums = interleaved>
    ```
  }];
  let parameters = (ins "int64_t":$rows, "int64_t":$cols, "int64_t":$inner,
                        EnumParameter<IPUGemm_Orientation>:$orientation,
                        EnumParameter<IPUTile_MemoryClass>:$weights,
                        EnumParameter<IPUGemm_Reduction>:$reduction,
                        "bool":$staging,
                        StringRefParameter<"f32 or f16", "\"f32\"">:$partials,
                        "int64_t":$cycles,
                        DefaultValuedParameter<"bool", "false">:$gathered,
                        DefaultValuedParameter<"int64_t", "1">:$serial,
                        IPUGemm_HomesParameter:$homes,
                        DefaultValuedParameter<"int64_t", "1">:$grain,
                        IPUGemm_PsumsParameter:$psums);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// The plan as the planner library sees it, and back.
    ::ipu::GemmPlan toGemmPlan() const;
    static PlanAttr fromGemmPlan(::mlir::MLIRContext *context,
                                 const ::ipu::GemmPlan &plan, int64_t cycles);
  }];
}

// An optional flag printed as `true` or `false` (std::optional<bool> would
// print as an integer).
def IPUGemm_OptionalFlag : OptionalParameter<"std::optional<bool>"> {
  let printer = [{ $_printer << (*$_self ? "true" : "false") }];
}

def IPUGemm_ConstraintsAttr : IPUGemm_Attr<"Constraints", "constraints"> {
  let summary = "Restricts the plans a matmul may take";
  let description = [{
    Any subset of the plan's fields. A plan matches when it agrees with every
    field given. The planner reports how many plans match and fails, naming
    the constraint, when none does. `partials = "f16"` allows and requires
    f16 partials for a matmul that accumulates in f32, `"any"` allows them
    and lets the cost decide, `"f32"` keeps the default.

    Example:

    ```mlir
    #ipu_gemm.constraints<rows = 4, inner = 2, reduction = staged,
                          partials = "any">
    #ipu_gemm.constraints<gathered = true, homes = standard>
    ```
  }];
  let parameters = (ins OptionalParameter<"std::optional<int64_t>">:$rows,
                        OptionalParameter<"std::optional<int64_t>">:$cols,
                        OptionalParameter<"std::optional<int64_t>">:$inner,
                        OptionalParameter<"std::optional<::mlir::ipu_gemm::Orientation>">:$orientation,
                        OptionalParameter<"std::optional<::mlir::ipu_tile::MemoryClass>">:$weights,
                        OptionalParameter<"std::optional<::mlir::ipu_gemm::Reduction>">:$reduction,
                        IPUGemm_OptionalFlag:$staging,
                        StringRefParameter<"f32, f16 or any", "\"\"">:$partials,
                        IPUGemm_OptionalFlag:$gathered,
                        OptionalParameter<"std::optional<int64_t>">:$serial,
                        OptionalParameter<"std::optional<::mlir::ipu_tile::MemoryClass>">:$homes);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

class IPUGemm_Op<string mnemonic, list<Trait> traits = []>
    : Op<IPUGemm_Dialect, mnemonic, traits>;

def IPUGemm_GemmElementType : AnyTypeOf<[F32, F16, F8E4M3FN, F8E5M2]>;

def IPUGemm_MatmulOp : IPUGemm_Op<"matmul", [Pure]> {
  let summary = "Matrix product C = A x B, batched or not, operands transposed or not";
  let description = [{
    Computes `C[L..., M x N] = A[L..., M x K] x B[K x N]` or, batched,
    `x B[L..., K x N]`. With a 2-D B the leading dims `L...` of A fold into
    M: one GEMM of `(prod(L) * M) x K x N`, as a dense layer on a [B, S, D]
    activation is. With B batched (the same leading dims as A) each of the
    `prod(L)` batches is its own GEMM. `transpose_lhs` says A is given as
    `[L..., K x M]`, `transpose_rhs` that B is given as `[..., N x K]` (as
    `q x k^T` or a PyTorch linear weight is). A and B share one element type
    (f32, f16, f8E4M3FN or f8E5M2); products are accumulated in `acc_type`
    (f32 or f16, default f32) and C is f32 or f16. With f8 operands,
    `input_scale` = e multiplies every product by 2^e as the AMP forms it
    (the IPU21's input scale register): the operands' per-tensor
    power-of-two scales, so that the partial sums are in real units and
    f16 partials overflow no sooner than for f16 operands. `plan` is set by
    `--ipu-plan-gemm` (for a batched matmul it is the plan of one batch;
    batches run side by side on tiles of their own); `constraints` restrict
    the planner.

    Example:

    ```mlir
    %c = ipu_gemm.matmul %a, %b {acc_type = f32}
        : tensor<96x128xf16>, tensor<128x64xf16> -> tensor<96x64xf32>
    %s = ipu_gemm.matmul %q, %k {transpose_rhs}
        : tensor<4x8x16xf16>, tensor<4x8x16xf16> -> tensor<4x8x8xf32>
    // f8 activations (scale 2^-5) by f8 weights (2^-11), f16 partials:
    %y = ipu_gemm.matmul %x8, %w8 {acc_type = f16, input_scale = -16 : i32, transpose_rhs}
        : tensor<729x1152xf8E4M3FN>, tensor<4304x1152xf8E4M3FN> -> tensor<729x4304xf16>
    ```
  }];
  let arguments = (ins RankedTensorOf<[IPUGemm_GemmElementType]>:$lhs,
                       RankedTensorOf<[IPUGemm_GemmElementType]>:$rhs,
                       OptionalAttr<TypeAttr>:$acc_type,
                       UnitAttr:$transpose_lhs,
                       UnitAttr:$transpose_rhs,
                       OptionalAttr<IPUGemm_PlanAttr>:$plan,
                       OptionalAttr<IPUGemm_ConstraintsAttr>:$constraints,
                       OptionalAttr<I32Attr>:$input_scale);
  let results = (outs RankedTensorOf<[F32, F16]>:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The accumulation type, f32 when unset.
    ::mlir::Type getAccumulatorType();
    /// Whether B has A's leading dims: one GEMM per batch.
    bool isBatched() { return getRhs().getType().getRank() > 2; }
    /// The number of GEMMs: the product of the leading dims when batched.
    int64_t getBatches();
    /// The dims of one GEMM: M (with A's leading dims folded in when B is
    /// 2-D), K and N, whatever the operands' transposes.
    int64_t getGemmM();
    int64_t getGemmK();
    int64_t getGemmN();
  }];
}

#endif // IPU_GEMM_OPS
