//===- DataFile.cpp - Large constants kept beside the IR ------------------===//

#include "IPU/Support/DataFile.h"
#include "IPU/Support/Escape.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace ipu;

const char ipu::kDataFileMagic[8] = {'I', 'P', 'U', 'D', 'A', 'T', 'A', '1'};

uint64_t ipu::dataChecksum(const char *bytes, uint64_t size, uint64_t state) {
  constexpr uint64_t kPrime = 0x100000001b3ull;
  for (uint64_t i = 0; i + 8 <= size; i += 8) {
    uint64_t word = 0;
    for (int b = 7; b >= 0; --b)
      word = word << 8 | static_cast<uint8_t>(bytes[i + b]);
    state = (state ^ word) * kPrime;
  }
  return state;
}

DataFileWriter::~DataFileWriter() {
  if (file)
    std::fclose(file);
}

std::optional<std::string> DataFileWriter::open(const std::string &path) {
  file = std::fopen(path.c_str(), "wb");
  if (!file)
    return std::string(std::strerror(errno));
  bytes = 0;
  state = 0xcbf29ce484222325ull;
  error = 0;
  if (!append(kDataFileMagic, sizeof(kDataFileMagic)))
    return close();
  return std::nullopt;
}

std::optional<uint64_t> DataFileWriter::append(const char *data, uint64_t size) {
  if (!file || error)
    return std::nullopt;
  const uint64_t offset = bytes;
  const uint64_t padded =
      (size + kDataBlockAlignment - 1) / kDataBlockAlignment * kDataBlockAlignment;
  // Checksummed as written: the whole words, then the last partial word
  // and the zero padding (at most one block, a whole number of words).
  static const char zeros[kDataBlockAlignment] = {};
  const uint64_t whole = size / 8 * 8;
  state = dataChecksum(data, whole, state);
  char tail[kDataBlockAlignment] = {};
  std::memcpy(tail, data + whole, size - whole);
  state = dataChecksum(tail, padded - whole, state);
  if (std::fwrite(data, 1, size, file) != size ||
      std::fwrite(zeros, 1, padded - size, file) != padded - size) {
    error = errno ? errno : EIO;
    return std::nullopt;
  }
  bytes += padded;
  return offset;
}

std::optional<std::string> DataFileWriter::close() {
  if (!file)
    return error ? std::optional<std::string>(std::strerror(error)) : std::nullopt;
  if (std::fclose(file) != 0 && !error)
    error = errno ? errno : EIO;
  file = nullptr;
  if (error)
    return std::string(std::strerror(error));
  return std::nullopt;
}

namespace {

/// What a file that is not a regular one is, for messages.
const char *kindOf(mode_t mode) {
  if (S_ISDIR(mode))
    return "a directory";
  if (S_ISFIFO(mode))
    return "a FIFO";
  if (S_ISSOCK(mode))
    return "a socket";
  if (S_ISCHR(mode))
    return "a character device";
  if (S_ISBLK(mode))
    return "a block device";
  return "not a regular file";
}

} // namespace

DataFile::~DataFile() {
  if (mapping)
    munmap(const_cast<char *>(mapping), bytes);
}

std::optional<std::string> DataFile::open(const std::string &path,
                                          uint64_t expectedSize,
                                          uint64_t expectedChecksum,
                                          std::unique_ptr<DataFile> &result) {
  const std::string name = "'" + escapeText(path) + "'";
  // Stat before opening: opening a FIFO for reading blocks until a writer
  // comes, and a directory's size means nothing.
  struct stat info;
  if (::stat(path.c_str(), &info) != 0)
    return "cannot read " + name + ": " + std::strerror(errno);
  auto notRegular = [&](mode_t mode) {
    return name + " is " + kindOf(mode) +
           ", not a data file (a regular file, as --ipu-export-data writes one)";
  };
  if (!S_ISREG(info.st_mode))
    return notRegular(info.st_mode);
  // Non-blocking, in case it became a FIFO since; then it must be the file
  // just stat'ed.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0)
    return "cannot read " + name + ": " + std::strerror(errno);
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat opened;
  if (::fstat(fd, &opened) != 0)
    return "cannot read " + name + ": " + std::strerror(errno);
  if (!S_ISREG(opened.st_mode))
    return notRegular(opened.st_mode);
  if (opened.st_dev != info.st_dev || opened.st_ino != info.st_ino)
    return name + " changed while it was opened";
  const uint64_t size = static_cast<uint64_t>(opened.st_size);
  if (size != expectedSize)
    return name + " holds " + std::to_string(size) + " bytes; the IR expects " +
           std::to_string(expectedSize) + " (a data file from another compile?)";
  // The magic before anything else is read: a wrong file of any size is
  // refused at once.
  char magic[sizeof(kDataFileMagic)] = {};
  if (size < sizeof(magic) ||
      ::pread(fd, magic, sizeof(magic), 0) != static_cast<ssize_t>(sizeof(magic)) ||
      std::memcmp(magic, kDataFileMagic, sizeof(magic)) != 0)
    return name + " is not an IPU data file (its first bytes are not IPUDATA1)";
  if (size > kMaxDataFileBytes)
    return name + " is " + std::to_string(size) + " bytes, more than the " +
           std::to_string(kMaxDataFileBytes) + " a data file may have";
  // Mapped, not read: the checksum pass pages the file in as it goes, and
  // the kernel may drop clean pages again, so a file larger than memory
  // costs time, not memory.
  void *mapped = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  if (mapped == MAP_FAILED)
    return "cannot map " + name + ": " + std::strerror(errno);
  ::madvise(mapped, size, MADV_SEQUENTIAL);
  auto file = std::unique_ptr<DataFile>(new DataFile());
  file->mapping = static_cast<const char *>(mapped);
  file->bytes = size;
  const uint64_t checksum = dataChecksum(file->mapping, size);
  if (checksum != expectedChecksum)
    return name + " has checksum " + std::to_string(checksum) +
           "; the IR expects " + std::to_string(expectedChecksum) +
           " (a data file from another compile, or a damaged one)";
  result = std::move(file);
  return std::nullopt;
}

const char *DataFile::block(uint64_t offset, uint64_t size) const {
  if (offset < kDataBlockAlignment || offset > bytes || size > bytes - offset)
    return nullptr;
  return mapping + offset;
}
