//===- NoLLVMPoisoning.h - ASan builds against uninstrumented LLVM -------===//
//
// Force-included in IPU_SANITIZE builds. LLVM's allocators poison the unused
// part of their slabs when compiled with ASan; our instrumented copies of
// those inline functions would poison memory that the uninstrumented LLVM
// and MLIR libraries then use without unpoisoning, and ASan reports a false
// use-after-poison. Poisoning is turned off in our code; every other ASan
// check stays on.
//
//===----------------------------------------------------------------------===//

#ifndef IPU_CMAKE_NOLLVMPOISONING_H
#define IPU_CMAKE_NOLLVMPOISONING_H

#include <sanitizer/asan_interface.h>

#include "llvm/Support/Compiler.h"

#undef __asan_poison_memory_region
#undef __asan_unpoison_memory_region
#define __asan_poison_memory_region(p, size) ((void)(p), (void)(size))
#define __asan_unpoison_memory_region(p, size) ((void)(p), (void)(size))

#endif // IPU_CMAKE_NOLLVMPOISONING_H
