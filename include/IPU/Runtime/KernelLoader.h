//===- KernelLoader.h - Load a package's generated kernel code -*- C++ -*-===//
//
// A package's generated kernels are one ELF shared object (Package::
// kernelObject). The loader checks that the host can run it, maps it from
// memory (a memfd and dlopen, no file left behind) and binds each kernel's
// entry point to its symbol, so that the simulator runs the generated code,
// never a host fallback.
//
//===----------------------------------------------------------------------===//

#ifndef IPU_RUNTIME_KERNELLOADER_H
#define IPU_RUNTIME_KERNELLOADER_H

#include "IPU/Package/Package.h"

#include <optional>
#include <string>

namespace ipu {

/// Keeps a loaded kernel object mapped for as long as it lives.
class LoadedKernels {
public:
  LoadedKernels() = default;
  LoadedKernels(const LoadedKernels &) = delete;
  LoadedKernels &operator=(const LoadedKernels &) = delete;
  ~LoadedKernels();

  /// Loads `package`'s kernel object (which validatePackage accepted: its
  /// hash and ABI version match) and sets every kernel's entry. Fails with
  /// a message naming the object, or the kernel and symbol, at fault: a
  /// host without the object's CPU features, bytes that are not an x86-64
  /// ELF shared object, an object the dynamic loader refuses, a symbol it
  /// does not export. A package without kernels loads nothing.
  std::optional<std::string> load(Package &package);

private:
  void *handle = nullptr;
  int fd = -1;
};

} // namespace ipu

#endif // IPU_RUNTIME_KERNELLOADER_H
