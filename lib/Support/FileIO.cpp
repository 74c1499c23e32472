//===- FileIO.cpp - Writing whole files -----------------------------------===//

#include "IPU/Support/FileIO.h"

#include <cerrno>
#include <cstdio>
#include <cstring>

std::optional<std::string> ipu::writeFileBytes(const std::string &path,
                                               const std::vector<uint8_t> &bytes) {
  std::FILE *file = std::fopen(path.c_str(), "wb");
  if (!file)
    return std::string(std::strerror(errno));
  size_t written = std::fwrite(bytes.data(), 1, bytes.size(), file);
  int writeErrno = errno;
  bool failed = written != bytes.size() || std::ferror(file);
  // A full disk may only show when the buffered bytes are flushed.
  if (std::fclose(file) != 0 && !failed) {
    failed = true;
    writeErrno = errno;
  }
  if (failed)
    return std::string(std::strerror(writeErrno));
  return std::nullopt;
}
