//===- DataFileTest.cpp - Blocks written beside the IR, read back ---------===//

#include "IPU/Support/DataFile.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <random>
#include <string>
#include <unistd.h>

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

} // namespace
