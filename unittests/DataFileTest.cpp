//===- DataFileTest.cpp - Blocks written beside the IR, read back ---------===//

#include "IPU/Support/DataFile.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <fcntl.h>
#include <fstream>
#include <future>
#include <random>
#include <string>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

using namespace ipu;

namespace {

std::string tempPath(const std::string &name) {
  return ::testing::TempDir() + "ipu-data-" + std::to_string(getpid()) + "-" + name;
}

/// Writes `blocks` to `path`; returns each block's offset.
std::vector<uint64_t> writeBlocks(const std::string &path,
                                  const std::vector<std::string> &blocks,
                                  uint64_t &size, uint64_t &checksum) {
  DataFileWriter writer;
  EXPECT_EQ(writer.open(path), std::nullopt);
  std::vector<uint64_t> offsets;
  for (const std::string &block : blocks) {
    std::optional<uint64_t> offset = writer.append(block.data(), block.size());
    EXPECT_TRUE(offset.has_value());
    offsets.push_back(offset.value_or(0));
  }
  size = writer.size();
  checksum = writer.checksum();
  EXPECT_EQ(writer.close(), std::nullopt);
  return offsets;
}

// Property: random blocks of random sizes come back byte for byte, each
// aligned, none overlapping another, and the writer's running checksum is
// the checksum of the whole file.
TEST(DataFile, EveryBlockComesBackAlignedAndDisjoint) {
  std::mt19937 random(7);
  for (int trial = 0; trial < 20; ++trial) {
    std::vector<std::string> blocks(1 + random() % 12);
    for (std::string &block : blocks) {
      block.resize(random() % 300);
      for (char &c : block)
        c = static_cast<char>(random());
    }
    const std::string path = tempPath("blocks");
    uint64_t size = 0, checksum = 0;
    std::vector<uint64_t> offsets = writeBlocks(path, blocks, size, checksum);
    std::unique_ptr<DataFile> file;
    ASSERT_EQ(DataFile::open(path, size, checksum, file), std::nullopt);
    EXPECT_EQ(file->size(), size);
    EXPECT_EQ(size % kDataBlockAlignment, 0u);
    uint64_t previousEnd = kDataBlockAlignment; // The magic's block.
    for (size_t i = 0; i < blocks.size(); ++i) {
      EXPECT_EQ(offsets[i] % kDataBlockAlignment, 0u);
      EXPECT_GE(offsets[i], previousEnd);
      previousEnd = offsets[i] + blocks[i].size();
      const char *bytes = file->block(offsets[i], blocks[i].size());
      ASSERT_NE(bytes, nullptr);
      EXPECT_EQ(std::string(bytes, blocks[i].size()), blocks[i]);
    }
    std::ifstream whole(path, std::ios::binary);
    std::string all((std::istreambuf_iterator<char>(whole)), {});
    EXPECT_EQ(dataChecksum(all.data(), all.size()), checksum);
    std::remove(path.c_str());
  }
}

TEST(DataFile, BlocksOutsideTheFileOrOverTheMagicAreRefused) {
  const std::string path = tempPath("bounds");
  uint64_t size = 0, checksum = 0;
  std::vector<uint64_t> offsets = writeBlocks(path, {"abcdefgh"}, size, checksum);
  std::unique_ptr<DataFile> file;
  ASSERT_EQ(DataFile::open(path, size, checksum, file), std::nullopt);
  EXPECT_NE(file->block(offsets[0], 8), nullptr);
  EXPECT_EQ(file->block(0, 8), nullptr);
  EXPECT_EQ(file->block(offsets[0], size), nullptr);
  EXPECT_EQ(file->block(size + 64, 0), nullptr);
  EXPECT_EQ(file->block(offsets[0], UINT64_MAX), nullptr);
  std::remove(path.c_str());
}

// Every byte counts: a file that differs anywhere, or another compile's
// file, is refused with a message naming it.
TEST(DataFile, AnyChangedByteOrSizeIsRefused) {
  const std::string path = tempPath("changed");
  uint64_t size = 0, checksum = 0;
  writeBlocks(path, {std::string(100, 'x'), std::string(5, 'y')}, size, checksum);
  std::ifstream in(path, std::ios::binary);
  std::string original((std::istreambuf_iterator<char>(in)), {});
  in.close();
  for (uint64_t position = 0; position < original.size(); position += 7) {
    std::string changed = original;
    changed[position] ^= 1;
    std::ofstream(path, std::ios::binary) << changed;
    std::unique_ptr<DataFile> file;
    std::optional<std::string> error = DataFile::open(path, size, checksum, file);
    ASSERT_TRUE(error.has_value()) << "byte " << position;
    EXPECT_NE(error->find(path), std::string::npos) << *error;
    EXPECT_EQ(file, nullptr);
  }
  std::ofstream(path, std::ios::binary) << original.substr(0, 64);
  std::unique_ptr<DataFile> file;
  std::optional<std::string> error = DataFile::open(path, size, checksum, file);
  ASSERT_TRUE(error.has_value());
  EXPECT_NE(error->find("holds 64 bytes"), std::string::npos) << *error;
  std::remove(path.c_str());
  error = DataFile::open(path, size, checksum, file);
  ASSERT_TRUE(error.has_value());
  EXPECT_NE(error->find("cannot read"), std::string::npos) << *error;
}

TEST(DataFile, AnUnwritablePathGivesTheReason) {
  DataFileWriter writer;
  std::optional<std::string> error = writer.open("/nonexistent-dir/x.data");
  ASSERT_TRUE(error.has_value());
  EXPECT_FALSE(error->empty());
}

double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// A FIFO used to block the reader forever (fopen waits for a writer): it
// is refused on its type, at once, and so is a directory, which used to be
// reported as 9,223,372,036,854,775,807 bytes.
TEST(DataFile, NonRegularFilesAreRefusedWithoutBlocking) {
  const std::string fifo = tempPath("fifo");
  std::remove(fifo.c_str());
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  auto opened = std::async(std::launch::async, [&] {
    std::unique_ptr<DataFile> file;
    return DataFile::open(fifo, 64, 0, file);
  });
  if (opened.wait_for(std::chrono::seconds(10)) != std::future_status::ready) {
    ADD_FAILURE() << "DataFile::open blocks on a FIFO";
    // A writer unblocks it, so that the test ends.
    close(open(fifo.c_str(), O_WRONLY | O_NONBLOCK));
  }
  std::optional<std::string> error = opened.get();
  ASSERT_TRUE(error.has_value());
  EXPECT_NE(error->find("'" + fifo + "' is a FIFO, not a data file (a regular file"),
            std::string::npos)
      << *error;
  std::remove(fifo.c_str());

  const std::string directory = ::testing::TempDir();
  std::unique_ptr<DataFile> file;
  error = DataFile::open(directory, 4096, 0, file);
  ASSERT_TRUE(error.has_value());
  EXPECT_NE(error->find("is a directory, not a data file"), std::string::npos) << *error;
  EXPECT_EQ(error->find("9223372036854775807"), std::string::npos) << *error;
  EXPECT_EQ(file, nullptr);
}

/// A sparse file of `size` bytes (no disk, no memory) starting with
/// `head`.
bool writeSparse(const std::string &path, uint64_t size, const std::string &head) {
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  if (fd < 0)
    return false;
  const bool written = write(fd, head.data(), head.size()) == ssize_t(head.size()) &&
                       ftruncate(fd, off_t(size)) == 0;
  return close(fd) == 0 && written;
}

// A 64 GB sparse file used to be read whole before its magic was checked
// (out of memory). With the wrong magic it is refused at once; with the
// right one, on its size; a smaller one with the right magic is mapped,
// not read, and refused on its checksum.
TEST(DataFile, HugeFilesAreRefusedBeforeTheyAreRead) {
  const std::string path = tempPath("sparse");
  const uint64_t huge = uint64_t(64) << 30;
  ASSERT_TRUE(writeSparse(path, huge, "NOTADATA")) << "no sparse files here";
  std::unique_ptr<DataFile> file;
  auto start = std::chrono::steady_clock::now();
  std::optional<std::string> error = DataFile::open(path, huge, 0, file);
  ASSERT_TRUE(error.has_value());
  EXPECT_NE(error->find("is not an IPU data file (its first bytes are not IPUDATA1)"),
            std::string::npos)
      << *error;
  EXPECT_LT(secondsSince(start), 1.0);

  ASSERT_TRUE(writeSparse(path, huge, std::string(kDataFileMagic, 8)));
  start = std::chrono::steady_clock::now();
  error = DataFile::open(path, huge, 0, file);
  ASSERT_TRUE(error.has_value());
  EXPECT_NE(error->find("is 68719476736 bytes, more than the 17179869184 a data file "
                        "may have"),
            std::string::npos)
      << *error;
  EXPECT_LT(secondsSince(start), 1.0);

  const uint64_t mapped = uint64_t(256) << 20;
  ASSERT_TRUE(writeSparse(path, mapped, std::string(kDataFileMagic, 8)));
  error = DataFile::open(path, mapped, 0, file);
  ASSERT_TRUE(error.has_value());
  EXPECT_NE(error->find("has checksum"), std::string::npos) << *error;
  EXPECT_EQ(file, nullptr);
  std::remove(path.c_str());
}

} // namespace
