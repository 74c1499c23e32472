//===- ProgramStep.h - What a program step reads and writes ----*- C++ -*-===//
//
// The types ProgramStepOpInterface and TileLowerableOpInterface speak in.
//
//===----------------------------------------------------------------------===//

#ifndef IPU_DIALECT_TILE_IR_PROGRAMSTEP_H
#define IPU_DIALECT_TILE_IR_PROGRAMSTEP_H

#include "mlir/IR/BuiltinAttributes.h"

namespace ipu {
struct BlockLayout; // IPU/Layout/BlockLayout.h
} // namespace ipu

namespace mlir::ipu_tile {

/// What a step of an ipu_tile.program does. Host streams run outside device
/// time, whole, in program order; a sync separates supersteps, within which
/// tiles run compute sets and exchange phases without ordering between one
/// tile's compute and another's exchange.
/// A loop marks where its body's steps begin; the body's steps follow it.
enum class StepKind { HostStream, Sync, Exchange, Compute, Loop };

/// One buffer a step reads or writes.
struct BufferAccess {
  FlatSymbolRefAttr buffer;
  bool reads = false, writes = false;
  /// Live from the program's first step to its last (weights, loaded once
  /// at initialisation).
  bool resident = false;
  /// The op that makes the access (a copy within a phase), for diagnostics.
  Operation *op = nullptr;
  /// Read or written a chunk per iteration of the enclosing loop: live over
  /// the whole loop.
  bool serial = false;
};

class ProgramBuilder;       // IPU/Transforms/TileLowering.h
struct OperandLayout;      // IPU/Transforms/TileLowering.h

} // namespace mlir::ipu_tile

#endif // IPU_DIALECT_TILE_IR_PROGRAMSTEP_H
