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
    A graph-level op that `--ipu-assign-layouts` and `--ipu-lower-to-tile`
    can handle. The op says which of its operands it wants streamed from
    the host when they are function arguments (resident weights, or
    transposed), the layout and memory class it needs each operand in, and
    the layout of its results; the layout pass puts relayouts where a value
    is not where its consumer needs it. The op lowers itself through a
    `ProgramBuilder`: it takes its operands' buffers, creates its buffers,
    exchange phases and compute sets, records its result's buffer and the
    host reference computation that checks it. Neither pass knows any op.
    Ops take part through external models, registered once per tool by
    `registerCompilerDialects` (which calls `registerTileLoweringModels`);
    the dialects promise them, so a context without them fails loudly.
  }];
  let methods = [
    InterfaceMethod<[{
        The prefix of the names of the buffers, phases and compute sets the op
        creates; the driver numbers ops of one prefix in program order.
      }], "::llvm::StringRef", "getTileNamePrefix">,
    InterfaceMethod<[{
        The name of operand `operand` in the op's buffers (`lhs`, `rhs`):
        a relayout into the layout it needs is named after it.
      }], "::llvm::StringRef", "getOperandName", (ins "unsigned":$operand)>,
    InterfaceMethod<[{
        Whether operand `operand`, when it is a function argument, must be
        streamed from the host in `layout` for this op: resident (weights),
        or arriving transposed. Otherwise the argument arrives as an
        activation, split by rows over the tiles.
      }], "bool", "getResidentLayout",
      (ins "unsigned":$operand, "::mlir::ipu_tile::OperandLayout &":$layout)>,
    InterfaceMethod<[{
        The operand `operand` now holds the transpose of what it held (a
        host stream transposed it): the op reads it accordingly.
      }], "void", "noteOperandTransposed", (ins "unsigned":$operand)>,
    InterfaceMethod<[{
        The layout and memory class the op needs operand `operand` in;
        false when any will do.
      }], "bool", "getOperandLayout",
      (ins "unsigned":$operand, "::mlir::ipu_tile::OperandLayout &":$layout)>,
    InterfaceMethod<[{
        Whether the op reads operand `operand`'s leading dims as batches (a
        batched layout) rather than folded into its rows (a 2-D layout).
      }], "bool", "keepsLeadingDims", (ins "unsigned":$operand), [{}],
      [{ return false; }]>,
    InterfaceMethod<[{
        The layout the op leaves result `result` in; false when it cannot
        say yet (the lowering then names what is missing).
      }], "bool", "getResultLayout",
      (ins "unsigned":$result, "::ipu::BlockLayout &":$layout)>,
    InterfaceMethod<[{
        The memory class the op leaves result `result` in: standard unless
        the op writes it where its reader needs it (a weight expansion
        writes the weight's class).
      }], "::ipu::MemoryClass", "getResultMemoryClass", (ins "unsigned":$result),
      [{}], [{ return ::ipu::MemoryClass::Standard; }]>,
    InterfaceMethod<[{
        Creates the op's program steps at the builder's insertion point.
        `name` is the op's unique prefix for the symbols it creates.
      }], "::llvm::LogicalResult", "lowerToTile",
      (ins "::mlir::ipu_tile::ProgramBuilder &":$builder, "::llvm::StringRef":$name)>,
  ];
}

#endif // IPU_TILE_INTERFACES
