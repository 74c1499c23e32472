//===- TileInterfaces.td - Interfaces of ipu_tile programs -*- tablegen -*-===//
//
// What the steps of an ipu_tile.program tell the program about themselves.
//
//===----------------------------------------------------------------------===//

#ifndef IPU_TILE_INTERFACES
#define IPU_TILE_INTERFACES

include "mlir/IR/OpBase.td"

def IPUTile_ProgramStepOpInterface : OpInterface<"ProgramStepOpInterface"> {
  let cppNamespace = "::mlir::ipu_tile";
  let description = [{
    One step of an `ipu_tile.program`: a host stream, a sync, an exchange
    phase or a compute set. The program's verifier and
    `--ipu-place-storage` read from it which buffers each step reads and
    writes: buffer liveness, and which steps a sync must separate.
  }];
  let methods = [
    InterfaceMethod<"The kind of step.", "::mlir::ipu_tile::StepKind",
                    "getStepKind">,
    InterfaceMethod<"Appends every buffer the step reads or writes.", "void",
                    "getBufferAccesses",
                    (ins "::llvm::SmallVectorImpl<::mlir::ipu_tile::BufferAccess> &":$accesses)>,
  ];
}

def IPUTile_TileLowerableOpInterface : OpInterface<"TileLowerableOpInterface"> {
  let cppNamespace = "::mlir::ipu_tile";
  let description = [{
    A graph-level op that `--ipu-lower-to-tile` can turn into program steps.
    The op says which of its operands it wants resident when they are
    function arguments (streamed once from the host in the layout it needs,
    as weights are), and lowers itself through a `ProgramBuilder`: it finds
    its operands' buffers (asking for a rearrangement where their layout or
    memory class is not the one it needs), creates its buffers, exchange
    phases and compute sets, records its result's buffer and the host
    reference computation that checks it. The driver knows no op.
    Upstream ops take part through external models
    (`registerTileLoweringModels`).
  }];
  let methods = [
    InterfaceMethod<[{
        The prefix of the names of the buffers, phases and compute sets the op
        creates; the driver numbers ops of one prefix in program order.
      }], "::llvm::StringRef", "getTileNamePrefix">,
    InterfaceMethod<[{
        Whether operand `operand`, when it is a function argument, must be
        streamed from the host in `layout` for this op: resident (weights),
        or arriving transposed. Otherwise the argument arrives as an
        activation, split by rows over the tiles.
      }], "bool", "getResidentLayout",
      (ins "unsigned":$operand, "::mlir::ipu_tile::ResidentLayout &":$layout)>,
    InterfaceMethod<[{
        Whether the op reads operand `operand`'s leading dims as batches (a
        batched layout) rather than folded into its rows (a 2-D layout).
      }], "bool", "keepsLeadingDims", (ins "unsigned":$operand), [{}],
      [{ return false; }]>,
    InterfaceMethod<[{
        Creates the op's program steps at the builder's insertion point.
        `name` is the op's unique prefix for the symbols it creates.
      }], "::llvm::LogicalResult", "lowerToTile",
      (ins "::mlir::ipu_tile::ProgramBuilder &":$builder, "::llvm::StringRef":$name)>,
  ];
}

#endif // IPU_TILE_INTERFACES
