//===- DataFile.cpp - Large constants kept beside the IR ------------------===//

#include "IPU/Support/DataFile.h"
#include "IPU/Support/Escape.h"

#include <cerrno>
#include <cstring>

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

std::optional<std::string> DataFile::open(const std::string &path,
                                          uint64_t expectedSize,
                                          uint64_t expectedChecksum,
                                          std::unique_ptr<DataFile> &result) {
  const std::string name = "'" + escapeText(path) + "'";
  std::FILE *in = std::fopen(path.c_str(), "rb");
  if (!in)
    return "cannot read " + name + ": " + std::strerror(errno);
  std::fseek(in, 0, SEEK_END);
  const long end = std::ftell(in);
  std::fseek(in, 0, SEEK_SET);
  if (end < 0 || static_cast<uint64_t>(end) != expectedSize) {
    std::fclose(in);
    return name + " holds " + std::to_string(end) + " bytes; the IR expects " +
           std::to_string(expectedSize) + " (a data file from another compile?)";
  }
  auto file = std::unique_ptr<DataFile>(new DataFile());
  file->bytes.resize(expectedSize);
  const bool read =
      std::fread(file->bytes.data(), 1, expectedSize, in) == expectedSize;
  std::fclose(in);
  if (!read)
    return "cannot read " + name + ": the file ended early";
  if (expectedSize < sizeof(kDataFileMagic) ||
      std::memcmp(file->bytes.data(), kDataFileMagic, sizeof(kDataFileMagic)) != 0)
    return name + " is not an IPU data file (its first bytes are not IPUDATA1)";
  const uint64_t checksum = dataChecksum(file->bytes.data(), expectedSize);
  if (checksum != expectedChecksum)
    return name + " has checksum " + std::to_string(checksum) +
           "; the IR expects " + std::to_string(expectedChecksum) +
           " (a data file from another compile, or a damaged one)";
  result = std::move(file);
  return std::nullopt;
}

const char *DataFile::block(uint64_t offset, uint64_t size) const {
  if (offset < kDataBlockAlignment || offset > bytes.size() ||
      size > bytes.size() - offset)
    return nullptr;
  return bytes.data() + offset;
}
