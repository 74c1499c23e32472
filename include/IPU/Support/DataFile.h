//===- DataFile.h - Large constants kept beside the IR --------------------===//
//
// A compiled program's weights and exchange run tables are data, not
// structure: hundreds of megabytes for a whole tower. `--ipu-export-data`
// moves them into a data file, and the printed IR refers to each block by
// offset (`#ipu_tile.data`). The file is a magic word followed by blocks,
// each padded to kDataBlockAlignment; the IR records its size and checksum,
// so a reader refuses a file that another compile wrote.
//
//===----------------------------------------------------------------------===//

#ifndef IPU_SUPPORT_DATAFILE_H
#define IPU_SUPPORT_DATAFILE_H

#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>

namespace ipu {

/// Every block starts at a multiple of this many bytes (a cache line, and a
/// whole number of 64-bit words for the checksum).
constexpr uint64_t kDataBlockAlignment = 64;
/// The file's first bytes, one block long.
extern const char kDataFileMagic[8];

/// A checksum of `bytes` (a multiple of 8 long), continuing from `state`:
/// FNV-1a over little-endian 64-bit words. Fast enough for gigabytes and
/// sensitive to every byte; not a defence against a forger, only against
/// the wrong file.
uint64_t dataChecksum(const char *bytes, uint64_t size,
                      uint64_t state = 0xcbf29ce484222325ull);

/// Writes a data file block by block.
class DataFileWriter {
public:
  DataFileWriter() = default;
  DataFileWriter(const DataFileWriter &) = delete;
  DataFileWriter &operator=(const DataFileWriter &) = delete;
  ~DataFileWriter();

  /// Creates `path` (replacing it) and writes the magic block. Returns the
  /// system's reason on failure.
  std::optional<std::string> open(const std::string &path);
  /// Appends one block; returns its offset, or nullopt on a write error
  /// (close() then gives the reason).
  std::optional<uint64_t> append(const char *bytes, uint64_t size);
  /// Flushes and closes; returns the reason if any write failed.
  std::optional<std::string> close();

  uint64_t size() const { return bytes; }
  uint64_t checksum() const { return state; }

private:
  std::FILE *file = nullptr;
  uint64_t bytes = 0;
  uint64_t state = 0xcbf29ce484222325ull;
  int error = 0;
};

/// The largest data file a reader maps: 16 GiB, 8 times the f16 SigLIP
/// so400m tower's weights and run tables; its checksum pass takes seconds.
constexpr uint64_t kMaxDataFileBytes = uint64_t(16) << 30;

/// A data file mapped into memory, checked against what the IR recorded.
/// (Truncated by another process while mapped, its pages past the new end
/// fault; the file is the user's own, named by their IR.)
class DataFile {
public:
  DataFile(const DataFile &) = delete;
  DataFile &operator=(const DataFile &) = delete;
  ~DataFile();

  /// Maps `path`; fails with a message naming the path when it is missing
  /// or not a regular file (a directory, a FIFO: refused before it is
  /// opened), its size is not `expectedSize`, its magic is wrong (checked
  /// before anything else is read), it is larger than kMaxDataFileBytes or
  /// its checksum is not `expectedChecksum`.
  static std::optional<std::string> open(const std::string &path,
                                         uint64_t expectedSize,
                                         uint64_t expectedChecksum,
                                         std::unique_ptr<DataFile> &file);

  /// The `size` bytes at `offset`, or nullptr when the block does not lie
  /// inside the file after its magic.
  const char *block(uint64_t offset, uint64_t size) const;
  uint64_t size() const { return bytes; }

private:
  DataFile() = default;
  const char *mapping = nullptr;
  uint64_t bytes = 0;
};

} // namespace ipu

#endif // IPU_SUPPORT_DATAFILE_H
