//===- KernelCompiler.h - Package kernel bodies to host code --*- C++ -*-===//
//
// A package carries each generated kernel as its body (ElementwiseBody),
// which is data. ipu-run compiles the bodies itself, through MLIR's own
// conversions (scf, arith, math with its polynomial approximations, func,
// to the LLVM dialect), LLVM 22's x86-64 back end and LLD as a library,
// into one ELF shared object that it maps and calls. No byte of a package
// is ever mapped executable: docs/ThreatModel.md says what running a
// package may and may not make the host do.
//
// Compiled objects are cached by the SHA-256 of the bodies and of this
// compiler's identity, in a directory the user owns and nobody else can
// write (defaultKernelCacheDirectory); a cache entry is only ever bytes this
// code wrote, and is mapped only when it holds the SHA-256 of its object
// (a damaged entry is compiled again).
//
//===----------------------------------------------------------------------===//

#ifndef IPU_KERNELCOMPILER_KERNELCOMPILER_H
#define IPU_KERNELCOMPILER_KERNELCOMPILER_H

#include "IPU/Package/Package.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ipu {

/// What compiling (or finding in the cache) a package's kernels did.
struct KernelCompileStats {
  unsigned kernels = 0;
  uint64_t objectBytes = 0;
  bool cached = false; ///< The object came from the cache.
  /// Why the cache was not used ("" when it was, or was not asked for).
  std::string cacheWarning;
  double lowerSeconds = 0, compileSeconds = 0, linkSeconds = 0;
};

/// The target CPU of the generated code: fixed, so that the simulator's
/// numbers do not depend on the host it runs on.
constexpr const char *kKernelTargetCpu = "x86-64-v3";

/// The symbol kernel `index` of a compiled object exports, with the
/// ElementwiseEntry signature.
std::string compiledKernelSymbol(size_t index);

/// Compiles `bodies` (each accepted by verifyBody, costing at most
/// kMaxKernelCompileCost in all: refused otherwise) into one x86-64 ELF
/// shared object that exports compiledKernelSymbol(i) for body i and
/// imports nothing. The bytes depend only on the bodies, not on the thread
/// count or the host. The message names the body at fault.
std::optional<std::string>
compileKernelObject(const std::vector<const ElementwiseBody *> &bodies,
                    std::vector<uint8_t> &object, KernelCompileStats &stats);

/// The cache key of `bodies`: the SHA-256, in hex, of a canonical encoding
/// of every body and of the compiler's identity (ABI, cache format, LLVM
/// version, target CPU).
std::string kernelCacheKey(const std::vector<const ElementwiseBody *> &bodies);

/// The bytes of a cache entry holding `object`: a header with the
/// object's size and SHA-256, then the object.
std::vector<uint8_t> kernelCacheEntry(const std::vector<uint8_t> &object);
/// The object of cache entry `entry`, or why it holds none (no header, a
/// size or digest that does not match: a truncated or damaged entry).
std::optional<std::string> kernelObjectOfCacheEntry(const std::vector<uint8_t> &entry,
                                                    std::vector<uint8_t> &object);

/// $IPU_KERNEL_CACHE, else $XDG_CACHE_HOME/ipu-run/kernels, else
/// $HOME/.cache/ipu-run/kernels; "" when none of them is set.
std::string defaultKernelCacheDirectory();

/// A package's kernels, compiled and mapped for as long as it lives.
class CompiledKernels {
public:
  CompiledKernels() = default;
  CompiledKernels(const CompiledKernels &) = delete;
  CompiledKernels &operator=(const CompiledKernels &) = delete;
  ~CompiledKernels();

  /// Compiles the kernels of `package` (which validatePackage accepted)
  /// from their bodies, or takes the object from `cacheDirectory` ("" for
  /// no cache; a directory that is not the user's alone is not used, and
  /// stats.cacheWarning says why), maps it and sets every kernel's entry.
  /// An entry that does not hold the object it was stored with, or does
  /// not load, is removed and compiled again (stats.cacheWarning names
  /// it). Fails with a message naming the kernel at fault or, for a host
  /// without AVX2, F16C and FMA, the host. A package without kernels loads
  /// nothing.
  std::optional<std::string> load(Package &package,
                                  const std::string &cacheDirectory,
                                  KernelCompileStats &stats);

private:
  /// Loads `object` from memory and sets every kernel's entry.
  std::optional<std::string> map(Package &package, const std::vector<uint8_t> &object);
  void unmap();

  void *handle = nullptr;
  int fd = -1;
};

} // namespace ipu

#endif // IPU_KERNELCOMPILER_KERNELCOMPILER_H
