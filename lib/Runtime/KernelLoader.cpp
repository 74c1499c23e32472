//===- KernelLoader.cpp - memfd + dlopen of a package's kernel object -----===//

#include "IPU/Runtime/KernelLoader.h"

#include <cstring>
#include <dlfcn.h>
#include <sys/mman.h>
#include <unistd.h>

using namespace ipu;

LoadedKernels::~LoadedKernels() {
  if (handle)
    dlclose(handle);
  if (fd >= 0)
    close(fd);
}

std::optional<std::string> LoadedKernels::load(Package &package) {
  if (package.kernels.empty())
    return std::nullopt;
  const std::vector<uint8_t> &object = package.kernelObject;
  const std::string what =
      "kernel object (" + std::to_string(object.size()) + " bytes)";
  // The code is built for x86-64-v3 (KernelCodegen.h): refuse a host that
  // would fault on its first AVX2 or F16C instruction.
  __builtin_cpu_init();
  if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("f16c") ||
      !__builtin_cpu_supports("fma"))
    return what + ": built for x86-64-v3 (AVX2, F16C, FMA), which this host "
                  "does not support";
  // An ELF64 little-endian x86-64 shared object (ET_DYN).
  static const uint8_t kElfMagic[] = {0x7F, 'E', 'L', 'F', 2, 1};
  if (object.size() < 64 || std::memcmp(object.data(), kElfMagic, 6) != 0 ||
      object[16] != 3 || object[17] != 0 || object[18] != 62 || object[19] != 0)
    return what + ": not an x86-64 ELF shared object";
  fd = memfd_create("ipu-kernels", MFD_CLOEXEC);
  if (fd < 0)
    return what + ": memfd_create failed: " + std::strerror(errno);
  size_t written = 0;
  while (written < object.size()) {
    ssize_t n = write(fd, object.data() + written, object.size() - written);
    if (n <= 0)
      return what + ": writing it to memory failed: " + std::strerror(errno);
    written += static_cast<size_t>(n);
  }
  std::string path = "/proc/self/fd/" + std::to_string(fd);
  handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char *error = dlerror();
    return what + ": the dynamic loader refuses it: " +
           std::string(error ? error : "unknown error");
  }
  for (const std::shared_ptr<ElementwiseKernel> &kernel : package.kernels) {
    dlerror();
    void *symbol = dlsym(handle, kernel->symbol().c_str());
    if (!symbol)
      return what + ": kernel '" + kernel->name() + "' needs symbol '" +
             kernel->symbol() + "', which it does not export";
    kernel->entry = reinterpret_cast<ElementwiseEntry>(symbol);
  }
  return std::nullopt;
}
