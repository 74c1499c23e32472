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

#endif // IPU_TILE_INTERFACES
