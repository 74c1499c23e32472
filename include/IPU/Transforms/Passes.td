//===- Passes.td - IPU compiler passes ---------------------*- tablegen -*-===//

#ifndef IPU_TRANSFORMS_PASSES
#define IPU_TRANSFORMS_PASSES

include "mlir/Pass/PassBase.td"

def IPUSetTarget : Pass<"ipu-set-target", "::mlir::ModuleOp"> {
  let summary = "Names the target of a module that names none";
  let description = [{
    Sets the module attribute `ipu_tile.target` to `target` when the module
    has none. A module that already names a different target is an error.
  }];
  let options = [Option<"target", "target", "std::string", "\"ipu21\"",
                        "TargetModel preset: ipu21 or ipu21-N">];
  let dependentDialects = ["::mlir::ipu_tile::IPUTileDialect"];
}

def IPUImportLinalg : Pass<"ipu-import-linalg", "::mlir::ModuleOp"> {
  let summary = "Turns linalg.matmul on tensors into ipu_gemm.matmul";
  let description = [{
    Rewrites each `linalg.matmul` whose accumulator is a zero `linalg.fill`
    or a `tensor.empty` into `ipu_gemm.matmul`. Any other `linalg` op, or a
    matmul accumulating into non-zero data, is an error naming the op. The
    matmul's `constraints` (`#ipu_gemm.constraints`) and `plan`
    (`#ipu_gemm.plan`) attributes carry over; either name holding anything
    else, or an `ipu_gemm` attribute under another name, is an error, and
    other attributes (but linalg's own) are dropped with a warning.
  }];
  let dependentDialects = ["::mlir::ipu_gemm::IPUGemmDialect"];
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
    thread count.
  }];
  let options = [
    Option<"finalists", "finalists", "unsigned", "4",
           "How many best plans to keep and report">,
    Option<"rows", "rows", "int64_t", "0", "Constrain row partitions (0: any)">,
    Option<"cols", "cols", "int64_t", "0", "Constrain column partitions (0: any)">,
    Option<"inner", "inner", "int64_t", "0", "Constrain inner partitions (0: any)">,
    Option<"orientation", "orientation", "std::string", "\"\"",
           "Constrain the orientation (normal, swapped)">,
    Option<"weights", "weights", "std::string", "\"\"",
           "Constrain the weight memory class (standard, interleaved)">,
    Option<"reduction", "reduction", "std::string", "\"\"",
           "Constrain the reduction of inner partitions (complete, staged)">,
    Option<"staging", "staging", "std::string", "\"\"",
           "Constrain local weight staging (true, false)">,
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
      %1 = ipu_tile.from_host %b {memory_class = "interleaved", resident}
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
    Turns each planned function into an `ipu_tile.program`: a buffer per
    tensor in the layout its plan wants, host streams for arguments and
    results (weights resident in the layout of each plan that uses them,
    one stream per layout; activations arriving split by rows over the
    tiles), an exchange phase wherever a value must change layout or memory
    class, and a compute set per matmul. A package holds one program: a
    module with no function to compile, or with more than one, is an error.
  }];
  let dependentDialects = ["::mlir::ipu_tile::IPUTileDialect",
                           "::mlir::ipu_exchange::IPUExchangeDialect"];
}

def IPUScheduleExchange : Pass<"ipu-schedule-exchange", "::mlir::ModuleOp"> {
  let summary = "Gives every transfer of every exchange phase its cycles";
  let description = [{
    Derives the transfers of each phase from its copies, schedules them with
    the best available strategy, checks the schedule with the independent
    checker and stores it as an `#ipu_exchange.schedule`. Reports per phase
    transfers, endpoint bound, horizon, gap, strategy and runs as a remark
    and a log line. Phases are scheduled in parallel, deterministically.
    With `dump-dir`, each phase's transfers are also written there as
    `<phase>.phase` in the text form `bench/run exchange --phase` reads.
  }];
  let options = [Option<"dumpDir", "dump-dir", "std::string", "\"\"",
                        "Write every phase as <dir>/<phase>.phase">];
  let dependentDialects = ["::mlir::ipu_exchange::IPUExchangeDialect"];
}

def IPUPlaceStorage : Pass<"ipu-place-storage", "::mlir::ModuleOp"> {
  let summary = "Assigns every buffer an address in its memory class";
  let description = [{
    From the liveness of every buffer on every tile, places buffers first fit
    in their memory class, keeping the runtime image and the exchange tables
    and vertex state free. Reports the peak against the max-live bound. A
    tile that overflows is an error naming the tile, the bytes and the
    buffers live there, with a note per buffer at its op. With
    `memory-profile`, writes the placed memory as JSON
    (docs/MemoryProfile.md).
  }];
  let options = [Option<"memoryProfile", "memory-profile", "std::string", "\"\"",
                        "Write the placed memory of every program as JSON here">];
}

#endif // IPU_TRANSFORMS_PASSES
