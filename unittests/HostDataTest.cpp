//===- HostDataTest.cpp - Inputs and results on the host -----------------===//

#include "IPU/Runtime/HostData.h"
#include "IPU/Runtime/Npy.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <string>

using namespace ipu;

namespace {

HostStream stream(std::string name, bool toDevice, uint32_t index,
                  ElementType type, std::vector<int64_t> shape) {
  HostStream s;
  s.name = std::move(name);
  s.toDevice = toDevice;
  s.index = index;
  s.type = type;
  s.shape = std::move(shape);
  return s;
}

Package twoArguments() {
  Package package;
  package.streams = {stream("a", true, 0, ElementType::F16, {3, 5}),
                     stream("b", true, 1, ElementType::F32, {4}),
                     stream("out", false, 0, ElementType::F32, {2, 2})};
  return package;
}

/// A fresh directory under the test's temporary directory.
std::string freshDirectory(const std::string &name) {
  std::filesystem::path dir = std::filesystem::temp_directory_path() /
                              ("ipu-hostdata-" + std::to_string(::getpid()) + "-" + name);
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir.string();
}

} // namespace

TEST(HostDataTest, SeededInputsDependOnSeedAndArgumentOnly) {
  Package package = twoArguments();
  std::vector<HostTensor> first, again, other, reordered;
  std::vector<bool> generated;
  ASSERT_FALSE(prepareInputs(package, 7, "", first, generated));
  ASSERT_EQ(first.size(), 2u);
  EXPECT_EQ(generated, (std::vector<bool>{true, true}));
  EXPECT_EQ(first[0].bytes.size(), 3u * 5 * 2);
  EXPECT_EQ(first[1].bytes.size(), 4u * 4);
  ASSERT_FALSE(prepareInputs(package, 7, "", again, generated));
  ASSERT_FALSE(prepareInputs(package, 8, "", other, generated));
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(first[i].bytes, again[i].bytes);
    EXPECT_NE(first[i].bytes, other[i].bytes);
  }
  // Stream order does not matter, only (seed, argument index).
  std::reverse(package.streams.begin(), package.streams.end());
  ASSERT_FALSE(prepareInputs(package, 7, "", reordered, generated));
  for (size_t i = 0; i < 2; ++i)
    EXPECT_EQ(first[i].bytes, reordered[i].bytes);
  // Uniform in [-1, 1).
  const float *values = reinterpret_cast<const float *>(first[1].bytes.data());
  for (int i = 0; i < 4; ++i) {
    EXPECT_GE(values[i], -1.0f);
    EXPECT_LT(values[i], 1.0f);
  }
}

TEST(HostDataTest, InputsReadBackWhatWasWritten) {
  Package package = twoArguments();
  std::vector<HostTensor> seeded, read;
  std::vector<bool> generated;
  ASSERT_FALSE(prepareInputs(package, 3, "", seeded, generated));
  std::string dir = freshDirectory("read");
  for (uint32_t i = 0; i < 2; ++i) {
    NpyArray array;
    array.descr = std::string(npyDescr(seeded[i].type));
    array.itemBytes = elementBytes(seeded[i].type);
    array.shape = seeded[i].shape;
    array.data = seeded[i].bytes;
    ASSERT_FALSE(writeNpy(dir + "/" + npyFileName("arg" + std::to_string(i), seeded[i].type),
                          array));
  }
  ASSERT_FALSE(prepareInputs(package, 0, dir, read, generated));
  for (size_t i = 0; i < 2; ++i)
    EXPECT_EQ(read[i].bytes, seeded[i].bytes);

  // Another shape is refused, naming the file and both shapes.
  package.streams[1].shape = {5};
  std::optional<std::string> why = prepareInputs(package, 0, dir, read, generated);
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("arg1.npy: expected shape (5,) f32, found (4,) f32"), std::string::npos)
      << *why;
  // A missing file is named with the argument it is for.
  std::filesystem::remove(dir + "/arg0.npy");
  why = prepareInputs(package, 0, dir, read, generated);
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("arg0.npy: no such file"), std::string::npos) << *why;
  EXPECT_NE(why->find("stream 'a', shape (3, 5) f16"), std::string::npos) << *why;
  std::filesystem::remove_all(dir);
}

TEST(HostDataTest, OutputsAreWrittenByResultIndex) {
  Package package = twoArguments();
  SimulationResult result;
  HostTensor out;
  out.type = ElementType::F32;
  out.shape = {2, 2};
  out.bytes.resize(16, 0x3f);
  result.outputs = {out};
  std::string dir = freshDirectory("write");
  size_t written = 0;
  ASSERT_FALSE(writeOutputs(dir, package, result, written));
  EXPECT_EQ(written, 1u);
  NpyArray array;
  ASSERT_FALSE(readNpy(dir + "/result0.npy", array));
  EXPECT_EQ(array.shape, out.shape);
  EXPECT_EQ(array.data, out.bytes);
  // A result never streamed out (its tensor still empty) is an error.
  result.outputs[0] = HostTensor();
  std::optional<std::string> why = writeOutputs(dir, package, result, written);
  ASSERT_TRUE(why);
  EXPECT_EQ(*why, "--outputs: result 0 ('out') was never streamed out");
  std::filesystem::remove_all(dir);
}

TEST(HostDataTest, ABatchSplitsIntoImagesAndGathersBackInImageOrder) {
  // Argument 0 holds one image a run; argument 1 is a weight the package
  // carries, the same for every image; result 0 is one image's, result 1 a
  // checkpoint.
  Package package;
  package.images = 3;
  package.results = 1;
  HostStream pixels = stream("pixels", true, 0, ElementType::F32, {1, 2, 2});
  HostStream weight = stream("w", true, 1, ElementType::F32, {2});
  HostStream out = stream("out", false, 0, ElementType::F32, {1, 4});
  out.declaredShape = {1, 2, 2};
  HostStream checkpoint = stream("cp", false, 1, ElementType::F32, {2});
  package.streams = {pixels, weight, out, checkpoint};
  package.constants.push_back({1, std::vector<uint8_t>(8, 7)});
  EXPECT_TRUE(holdsImages(package, pixels));
  EXPECT_FALSE(holdsImages(package, weight));
  EXPECT_TRUE(holdsImages(package, out));
  EXPECT_FALSE(holdsImages(package, checkpoint));
  EXPECT_EQ(batchShape(package, pixels), (std::vector<int64_t>{3, 2, 2}));
  EXPECT_EQ(batchShape(package, out), (std::vector<int64_t>{3, 2, 2}));
  EXPECT_EQ(batchShape(package, weight), (std::vector<int64_t>{2}));

  std::vector<HostTensor> batch;
  std::vector<bool> generated;
  ASSERT_FALSE(prepareInputs(package, 5, "", batch, generated));
  ASSERT_EQ(batch[0].bytes.size(), 3u * 4 * 4);
  EXPECT_EQ(batch[0].shape, (std::vector<int64_t>{3, 2, 2}));
  EXPECT_EQ(batch[1].bytes, std::vector<uint8_t>(8, 7));

  // Every byte of the batch's argument lands in exactly one image, in
  // order; the weight reaches every image whole.
  std::vector<uint8_t> joined;
  SimulationResult runs[3];
  std::vector<HostTensor> results;
  std::vector<HostTensor> share;
  for (uint32_t image = 0; image < 3; ++image) {
    imageInputs(package, batch, image, share);
    EXPECT_EQ(share[0].shape, pixels.shape);
    EXPECT_EQ(share[1].bytes, batch[1].bytes);
    joined.insert(joined.end(), share[0].bytes.begin(), share[0].bytes.end());
    runs[image].outputs.resize(2);
    runs[image].outputs[0] = {ElementType::F32, {1, 4}, share[0].bytes};
    runs[image].outputs[1] = {ElementType::F32, {2}, std::vector<uint8_t>(8, uint8_t(image))};
    appendImageResults(package, runs[image], results);
  }
  EXPECT_EQ(joined, batch[0].bytes);
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[0].bytes, batch[0].bytes);
  EXPECT_EQ(results[0].shape, (std::vector<int64_t>{3, 4}));
  EXPECT_EQ(results[1].bytes, std::vector<uint8_t>(8, 2)) << "the last image's checkpoint";

  // --outputs writes the batch in the function's shape.
  std::string dir = freshDirectory("batch");
  SimulationResult whole;
  whole.outputs = results;
  size_t written = 0;
  ASSERT_FALSE(writeOutputs(dir, package, whole, written));
  EXPECT_EQ(written, 1u);
  NpyArray array;
  ASSERT_FALSE(readNpy(dir + "/result0.npy", array));
  EXPECT_EQ(array.shape, (std::vector<int64_t>{3, 2, 2}));
  EXPECT_EQ(array.data, batch[0].bytes);
  std::filesystem::remove_all(dir);
}
