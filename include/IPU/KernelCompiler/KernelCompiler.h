//===- KernelCodegen.h - Generated kernels to one shared object -*- C++ -*-===//
//
// Each ipu_tile.kernel becomes a function over its vertex's blocks, lowered
// through MLIR's own conversions (scf, arith, math with its polynomial
// approximations, func, to the LLVM dialect), translated to LLVM IR and
// compiled by LLVM 22's x86-64 target machine; LLD (as a library) links the
// objects into the one ELF shared object a package carries.
//
//===----------------------------------------------------------------------===//

#ifndef IPU_TRANSLATE_KERNELCODEGEN_H
#define IPU_TRANSLATE_KERNELCODEGEN_H

#include "IPU/Dialect/Tile/IR/Tile.h"

#include <cstdint>
#include <vector>

namespace mlir::ipu_tile {

/// What the code generator did, for the log.
struct KernelCodegenStats {
  unsigned kernels = 0;
  uint64_t objectBytes = 0;
  double lowerSeconds = 0, compileSeconds = 0, linkSeconds = 0;
};

/// Compiles `kernels` (distinct bodies, as the lowering made them) into one
/// ELF shared object exporting each kernel's symbol with the
/// ElementwiseEntry signature. The bytes depend only on the kernels, not
/// on the thread count or the machine (the CPU is fixed: x86-64-v3, which
/// ipu-run checks the host has). Errors go to the kernel at fault.
LogicalResult buildKernelObject(ArrayRef<KernelOp> kernels,
                                std::vector<uint8_t> &object,
                                KernelCodegenStats &stats);

/// The target CPU the kernel objects are built for.
constexpr const char *kKernelTargetCpu = "x86-64-v3";

} // namespace mlir::ipu_tile

#endif // IPU_TRANSLATE_KERNELCODEGEN_H
