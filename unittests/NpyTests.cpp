//===- NpyTests.cpp - NPY reading and writing -----------------------------===//

#include "IPU/Runtime/Npy.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <unistd.h>
#include <vector>

using namespace ipu;

namespace {

/// An .npy image with the given preamble version and header text (not
/// padded, so that each test says exactly what the reader sees), then
/// `data`.
std::vector<uint8_t> npyImage(unsigned major, const std::string &header,
                              const std::vector<uint8_t> &data = {},
                              unsigned minor = 0) {
  std::vector<uint8_t> bytes = {
      0x93, 'N', 'U', 'M', 'P', 'Y', uint8_t(major), uint8_t(minor)};
  uint32_t length = uint32_t(header.size());
  bytes.push_back(uint8_t(length));
  bytes.push_back(uint8_t(length >> 8));
  if (major != 1) {
    bytes.push_back(uint8_t(length >> 16));
    bytes.push_back(uint8_t(length >> 24));
  }
  bytes.insert(bytes.end(), header.begin(), header.end());
  bytes.insert(bytes.end(), data.begin(), data.end());
  return bytes;
}

std::optional<std::string> parse(const std::vector<uint8_t> &bytes,
                                 NpyArray &array) {
  return parseNpy(bytes.data(), bytes.size(), array);
}

/// The header of a float32 array of `shape` text, in numpy's spelling.
std::string f32Header(const std::string &shape) {
  return "{'descr': '<f4', 'fortran_order': False, 'shape': " + shape + ", }\n";
}

/// `bytes` must be refused with a message containing `expected`, leaving
/// the array empty.
void expectRefused(const std::vector<uint8_t> &bytes,
                   const std::string &expected) {
  NpyArray array;
  array.descr = "<f4";
  array.shape = {7};
  std::optional<std::string> error = parse(bytes, array);
  ASSERT_TRUE(error.has_value()) << "accepted, expected: " << expected;
  EXPECT_NE(error->find(expected), std::string::npos)
      << "message: " << *error << "\nexpected: " << expected;
  EXPECT_TRUE(array.descr.empty() && array.shape.empty() && array.data.empty());
}

void expectHeaderRefused(const std::string &header, const std::string &expected,
                         const std::vector<uint8_t> &data = {}) {
  SCOPED_TRACE(header);
  expectRefused(npyImage(1, header, data), expected);
}

/// An array of `type` and `shape` holding deterministic values.
NpyArray makeArray(ElementType type, std::vector<int64_t> shape) {
  NpyArray array;
  array.descr = std::string(npyDescr(type));
  array.itemBytes = elementBytes(type);
  array.shape = std::move(shape);
  array.data.resize(array.elements() * array.itemBytes);
  for (uint64_t e = 0; e < array.elements(); ++e)
    storeElement(type, float(e % 37) * 0.25f - 4.0f,
                 &array.data[e * array.itemBytes]);
  return array;
}

/// A fresh directory for file tests, removed with its files at the end.
class TempDir {
public:
  TempDir() {
    std::string pattern = "/tmp/npy-tests-XXXXXX";
    std::vector<char> buffer(pattern.begin(), pattern.end());
    buffer.push_back('\0');
    if (mkdtemp(buffer.data()))
      dir = buffer.data();
  }
  ~TempDir() {
    for (const std::string &file : files)
      std::remove(file.c_str());
    if (!dir.empty())
      rmdir(dir.c_str());
  }
  std::string file(const std::string &name) {
    files.push_back(dir + "/" + name);
    return files.back();
  }
  std::string dir;

private:
  std::vector<std::string> files;
};

void writeBytes(const std::string &path, const std::vector<uint8_t> &bytes) {
  std::FILE *file = std::fopen(path.c_str(), "wb");
  ASSERT_NE(file, nullptr);
  ASSERT_EQ(std::fwrite(bytes.data(), 1, bytes.size(), file), bytes.size());
  std::fclose(file);
}

TEST(NpyTest, DescrOfElementTypes) {
  EXPECT_EQ(npyDescr(ElementType::F32), "<f4");
  EXPECT_EQ(npyDescr(ElementType::F16), "<f2");
  EXPECT_EQ(npyDescr(ElementType::F8E4M3FN), "|u1");
  EXPECT_EQ(npyDescr(ElementType::F8E5M2), "|u1");
}

TEST(NpyTest, Names) {
  EXPECT_EQ(npyShapeText({4304, 1152}), "(4304, 1152)");
  EXPECT_EQ(npyShapeText({5}), "(5,)");
  EXPECT_EQ(npyShapeText({}), "()");
  EXPECT_EQ(npyTypeName("<f4"), "f32");
  EXPECT_EQ(npyTypeName("<f2"), "f16");
  EXPECT_EQ(npyTypeName("|u1"), "u8");
  EXPECT_EQ(npyTypeName("<f8"), "f64");
  EXPECT_EQ(npyTypeName("<i8"), "i64");
  EXPECT_EQ(npyTypeName("|b1"), "bool");
  EXPECT_EQ(npyTypeName("<c8"), "c64");
  EXPECT_EQ(npyTypeName(">f4"), "f32 big-endian");
  EXPECT_EQ(npyTypeName("=f2"), "f16");
  EXPECT_EQ(npyTypeName("<U5"), "'<U5'");
}

// Every element type we store, through an image and back, in both format
// versions: the same dtype, shape and bytes, and the data 64-byte aligned.
TEST(NpyTest, RoundTripEachType) {
  for (ElementType type : {ElementType::F32, ElementType::F16,
                           ElementType::F8E4M3FN, ElementType::F8E5M2}) {
    for (std::vector<int64_t> shape : std::vector<std::vector<int64_t>>{
             {3, 5}, {7}, {}, {2, 0, 3}, {2, 3, 4}}) {
      for (unsigned version : {1u, 2u}) {
        SCOPED_TRACE(std::string(elementTypeName(type)) + " " +
                     npyShapeText(shape) + " v" + std::to_string(version));
        NpyArray array = makeArray(type, shape);
        std::vector<uint8_t> bytes;
        ASSERT_FALSE(serializeNpy(array, bytes, version));
        ASSERT_GE(bytes.size(), 10u);
        EXPECT_EQ(bytes[6], version);
        EXPECT_EQ(bytes[7], 0);
        EXPECT_EQ((bytes.size() - array.data.size()) % 64, 0u);
        EXPECT_EQ(bytes[bytes.size() - array.data.size() - 1], '\n');
        NpyArray back;
        std::optional<std::string> error = parse(bytes, back);
        ASSERT_FALSE(error) << *error;
        EXPECT_EQ(back.descr, array.descr);
        EXPECT_EQ(back.itemBytes, array.itemBytes);
        EXPECT_EQ(back.shape, array.shape);
        EXPECT_EQ(back.data, array.data);
      }
    }
  }
}

// numpy's own bytes for np.save of np.arange(6, dtype=np.float32).reshape(2, 3)
// (before numpy 1.23 added room for growth): read, and written the same.
TEST(NpyTest, NumpyImage) {
  std::string header = "{'descr': '<f4', 'fortran_order': False, "
                       "'shape': (2, 3), }";
  header += std::string(128 - 10 - header.size() - 1, ' ') + "\n";
  std::vector<uint8_t> data;
  for (int i = 0; i < 6; ++i) {
    uint8_t element[4];
    storeElement(ElementType::F32, float(i), element);
    data.insert(data.end(), element, element + 4);
  }
  std::vector<uint8_t> image = npyImage(1, header, data);
  ASSERT_EQ(image.size(), 128u + 24u);
  NpyArray array;
  ASSERT_FALSE(parse(image, array));
  EXPECT_EQ(array.descr, "<f4");
  EXPECT_EQ(array.shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(array.data, data);
  std::vector<uint8_t> written;
  ASSERT_FALSE(serializeNpy(array, written));
  EXPECT_EQ(written, image);
}

TEST(NpyTest, Version2Header) {
  std::vector<uint8_t> data(4 * 5, 0);
  NpyArray array;
  std::optional<std::string> error =
      parse(npyImage(2, f32Header("(5,)"), data), array);
  ASSERT_FALSE(error) << *error;
  EXPECT_EQ(array.shape, std::vector<int64_t>{5});
  EXPECT_EQ(array.data.size(), 20u);
}

// The header is a Python dict literal: any key order, either quote, any
// whitespace, with or without a trailing comma or padding; 1-tuples and
// 0-d shapes; Python 2 long suffixes; the native and unstated byte orders.
TEST(NpyTest, HeaderSpellings) {
  struct Case {
    std::string header;
    std::string descr;
    std::vector<int64_t> shape;
  };
  std::vector<Case> cases = {
      {"{'shape': (2, 3), 'fortran_order': False, 'descr': '<f4'}",
       "<f4",
       {2, 3}},
      {"{\"descr\": \"<f2\", \"fortran_order\": False, \"shape\": (4,)}",
       "<f2",
       {4}},
      {"  {\n 'descr' :'|u1' ,\t'fortran_order':False,'shape':( 6 , ) , }  "
       "\n",
       "|u1",
       {6}},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (), }", "<f4", {}},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3,)}",
       "<f4",
       {2, 3}},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2L, 3L)}",
       "<f4",
       {2, 3}},
      {"{'descr': '=f4', 'fortran_order': False, 'shape': (1, 1, 1)}",
       "<f4",
       {1, 1, 1}},
      {"{'descr': 'f2', 'fortran_order': False, 'shape': (2,)}", "<f2", {2}},
      {"{'descr': '<u1', 'fortran_order': False, 'shape': (3,)}", "|u1", {3}},
      {"{'descr': '>f4', 'fortran_order': False, 'shape': (2,)}", ">f4", {2}},
      {"{'descr': '<f8', 'fortran_order': False, 'shape': (0, 4)}",
       "<f8",
       {0, 4}},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(c.header);
    unsigned itemBytes = unsigned(c.descr[2] - '0');
    uint64_t elements = 1;
    for (int64_t dim : c.shape)
      elements *= uint64_t(dim);
    std::vector<uint8_t> data(elements * itemBytes, 0x5A);
    for (unsigned version : {1u, 2u}) {
      NpyArray array;
      std::optional<std::string> error =
          parse(npyImage(version, c.header, data), array);
      ASSERT_FALSE(error) << *error;
      EXPECT_EQ(array.descr, c.descr);
      EXPECT_EQ(array.itemBytes, itemBytes);
      EXPECT_EQ(array.shape, c.shape);
      EXPECT_EQ(array.data, data);
    }
  }
}

TEST(NpyTest, TruncatedFile) {
  NpyArray array = makeArray(ElementType::F16, {3, 4});
  std::vector<uint8_t> bytes;
  ASSERT_FALSE(serializeNpy(array, bytes));
  expectRefused({}, "truncated: 0 bytes");
  expectRefused({0x93, 'N', 'U'}, "truncated: 3 bytes");
  expectRefused(std::vector<uint8_t>(bytes.begin(), bytes.begin() + 9),
                "truncated: 9 bytes, an NPY preamble is 10");
  expectRefused(std::vector<uint8_t>(bytes.begin(), bytes.begin() + 40),
                "truncated: the header is 118 bytes, the file has 30 after its "
                "preamble");
  expectRefused(std::vector<uint8_t>(bytes.begin(), bytes.end() - 1),
                "truncated data: shape (3, 4) of f16 is 24 bytes of data, the "
                "file has 23 after its header");
  std::vector<uint8_t> version2 = npyImage(2, f32Header("(1,)"));
  expectRefused(std::vector<uint8_t>(version2.begin(), version2.begin() + 11),
                "truncated: 11 bytes, a version 2.0 preamble is 12");
  // Every prefix of the image is refused with a message.
  for (size_t size = 0; size < bytes.size(); ++size) {
    NpyArray back;
    std::optional<std::string> error = parseNpy(bytes.data(), size, back);
    ASSERT_TRUE(error) << size;
    EXPECT_FALSE(error->empty());
  }
}

TEST(NpyTest, DataLongerThanShape) {
  expectHeaderRefused(f32Header("(2,)"),
                      "trailing bytes: shape (2,) of f32 is 8 bytes of data, "
                      "the file has 12 after its header",
                      std::vector<uint8_t>(12));
  expectHeaderRefused(f32Header("(2, 0)"),
                      "trailing bytes: shape (2, 0) of f32 is 0 bytes",
                      std::vector<uint8_t>(1));
}

TEST(NpyTest, DataShorterThanShape) {
  expectHeaderRefused(f32Header("(4304, 1152)"),
                      "truncated data: shape (4304, 1152) of f32 is 19832832 "
                      "bytes of data, the file has 16 after its header",
                      std::vector<uint8_t>(16));
  expectHeaderRefused(f32Header("()"),
                      "truncated data: shape () of f32 is 4 bytes of data");
}

TEST(NpyTest, BadMagicAndVersion) {
  std::vector<uint8_t> bytes = npyImage(1, f32Header("(1,)"), {0, 0, 0, 0});
  std::vector<uint8_t> bad = bytes;
  bad[0] = 0x92;
  expectRefused(bad, "not an NPY file");
  bad = bytes;
  bad[5] = 'X';
  expectRefused(bad, "not an NPY file");
  expectRefused({'P', 'K', 3, 4}, "not an NPY file");
  expectRefused(npyImage(3, f32Header("(1,)"), {0, 0, 0, 0}),
                "unsupported NPY format version 3.0 (1.0 and 2.0 are read)");
  expectRefused(npyImage(1, f32Header("(1,)"), {0, 0, 0, 0}, 1),
                "unsupported NPY format version 1.1");
  expectRefused(npyImage(0, f32Header("(1,)")), "version 0.0");
}

// A header longer than the limit is refused from its length alone.
TEST(NpyTest, AbsurdHeaderLength) {
  std::vector<uint8_t> bytes = {0x93, 'N', 'U',  'M',  'P',  'Y',
                                2,    0,   0xFF, 0xFF, 0xFF, 0x7F};
  expectRefused(bytes, "header length 2147483647 is larger than the limit "
                       "of 65536 bytes");
  std::string big(NpyLimits::kMaxHeaderBytes + 1, ' ');
  expectRefused(npyImage(2, big), "header length 65537 is larger");
  // At the limit the header is read (and refused for what it says).
  std::string padded = f32Header("(1,)");
  padded.insert(padded.size() - 1,
                std::string(NpyLimits::kMaxHeaderBytes - padded.size(), ' '));
  NpyArray array;
  std::optional<std::string> error =
      parse(npyImage(2, padded, {0, 0, 0, 0}), array);
  EXPECT_FALSE(error) << *error;
}

TEST(NpyTest, MissingKey) {
  expectHeaderRefused("{'fortran_order': False, 'shape': (1,)}",
                      "header has no 'descr' key");
  expectHeaderRefused("{'descr': '<f4', 'shape': (1,)}",
                      "header has no 'fortran_order' key");
  expectHeaderRefused("{'descr': '<f4', 'fortran_order': False}",
                      "header has no 'shape' key");
  expectHeaderRefused("{}", "header has no 'descr' key");
  expectHeaderRefused("", "header is not a dict: it starts the end of the "
                          "header");
}

TEST(NpyTest, FortranOrder) {
  expectHeaderRefused(
      "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }",
      "fortran_order is True: only C-order arrays are read",
      std::vector<uint8_t>(16));
}

TEST(NpyTest, BadShapeText) {
  struct Case {
    std::string shape;
    std::string expected;
  };
  std::vector<Case> cases = {
      {"(5)", "shape '(5)' is not a tuple (a 1-D shape is written (5,))"},
      {"( 5 )", "is not a tuple"},
      {"5", "'shape': expected a tuple, found '5, }\\n'"},
      {"[3, 4]", "expected a tuple, found '[3, 4]"},
      {"(3 4)", "expected ',' or ')' in the shape, found '4)"},
      {"(-1, 2)", "negative dimension '-1, 2)"},
      {"(a,)", "expected a dimension (an integer), found 'a,)"},
      {"(3.0,)", "expected ',' or ')' in the shape, found '.0,)"},
      {"(,)", "expected a dimension (an integer), found ',)"},
      {"(3,,)", "expected a dimension (an integer), found ',)"},
      {"(3, 4", "expected a dimension (an integer), found '}\\n'"},
      {"(", "expected a dimension (an integer), found ', }"},
      {"(99999999999999999999,)", "is larger than the limit of 17179869184"},
      {"(65536, 65536, 65536)",
       "shape (65536, 65536, 65536) of f32 is larger than the limit of "
       "17179869184 bytes"},
      {"(0x10,)", "expected ',' or ')' in the shape, found 'x10,)"},
  };
  for (const Case &c : cases)
    expectHeaderRefused(f32Header(c.shape), c.expected);
  std::string many = "(";
  for (size_t d = 0; d <= NpyLimits::kMaxRank; ++d)
    many += "1, ";
  expectHeaderRefused(f32Header(many + ")"), "more than 64 dimensions");
}

TEST(NpyTest, BadHeaderText) {
  struct Case {
    std::string header;
    std::string expected;
  };
  std::vector<Case> cases = {
      {"['descr']", "header is not a dict: it starts \"['descr']\""},
      {"{descr: '<f4'}", "expected a quoted key, found \"descr: '<f4'}\""},
      {"{'descr' '<f4'}", "expected ':' after key 'descr'"},
      {"{'descr': '<f4' 'shape': (1,)}",
       "expected ',' or '}' after the value of 'descr'"},
      {"{'descr': '<f4', 'descr': '<f4'}", "key 'descr' appears twice"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'x': 1}",
       "unexpected key 'x'"},
      {"{'descr': '<f4', 'fortran_order': false, 'shape': (1,)}",
       "'fortran_order': expected True or False, found \"false, 'shape'"},
      {"{'descr': '<f4', 'fortran_order': 0, 'shape': (1,)}",
       "expected True or False"},
      {"{'descr': '<f4, 'fortran_order': False, 'shape': (1,)}",
       "'descr': dtype '<f4, ' is not a plain number type"},
      {"{'descr': '<f4", "unterminated string"},
      {"{'descr': '<\\x66\\x34'}", "without escapes or line breaks"},
      {"{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,)}",
       "structured dtypes (a list of fields) are not supported"},
      {"{'descr': '|O', 'fortran_order': False, 'shape': (1,)}",
       "dtype '|O' is not a plain number type"},
      {"{'descr': '<U8', 'fortran_order': False, 'shape': (1,)}",
       "dtype '<U8' is not a plain number type"},
      {"{'descr': '<f', 'fortran_order': False, 'shape': (1,)}",
       "item size numpy never uses"},
      {"{'descr': '<f4x', 'fortran_order': False, 'shape': (1,)}",
       "dtype '<f4x' is not a plain number type"},
      {"{'descr': '|b2', 'fortran_order': False, 'shape': (1,)}",
       "item size numpy never uses"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,)} x",
       "text after the header dict: 'x'"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,)}}",
       "text after the header dict"},
      {std::string("{'descr': '<f4'") + '\0' + ", 'fortran_order': False}",
       "after the value of 'descr', found \"\\x00, 'fortran_order': Fals...\""},
  };
  for (const Case &c : cases)
    expectHeaderRefused(c.header, c.expected, {0, 0, 0, 0});
}

// Random damage to a valid image is read or refused, never more.
TEST(NpyTest, MutatedImages) {
  NpyArray array = makeArray(ElementType::F32, {2, 3});
  std::vector<uint8_t> bytes;
  ASSERT_FALSE(serializeNpy(array, bytes));
  std::mt19937 random(7);
  const char interesting[] = "(),:'\" {}0123456789-LTrueFalse\n\x93";
  unsigned accepted = 0;
  for (int trial = 0; trial < 20000; ++trial) {
    std::vector<uint8_t> mutated = bytes;
    int edits = 1 + int(random() % 4);
    for (int e = 0; e < edits; ++e) {
      size_t at = random() % mutated.size();
      switch (random() % 4) {
      case 0:
        mutated[at] = uint8_t(random());
        break;
      case 1:
        mutated[at] =
            uint8_t(interesting[random() % (sizeof(interesting) - 1)]);
        break;
      case 2:
        mutated.erase(mutated.begin() + long(at));
        break;
      default:
        mutated.insert(
            mutated.begin() + long(at),
            uint8_t(interesting[random() % (sizeof(interesting) - 1)]));
      }
      if (mutated.empty())
        break;
    }
    NpyArray back;
    std::optional<std::string> error =
        parseNpy(mutated.data(), mutated.size(), back);
    if (error) {
      EXPECT_FALSE(error->empty());
      EXPECT_TRUE(back.data.empty());
    } else {
      ++accepted;
      EXPECT_EQ(back.data.size(), back.elements() * back.itemBytes);
    }
  }
  // Edits to the padding or the data leave a valid file.
  EXPECT_GT(accepted, 0u);
}

TEST(NpyTest, SerializeRefusesInconsistentArrays) {
  std::vector<uint8_t> bytes;
  NpyArray array = makeArray(ElementType::F32, {2, 2});
  array.data.pop_back();
  std::optional<std::string> error = serializeNpy(array, bytes);
  ASSERT_TRUE(error);
  EXPECT_EQ(*error, "shape (2, 2) of f32 is 16 bytes, the array holds 15");
  EXPECT_TRUE(bytes.empty());

  array = makeArray(ElementType::F32, {2, 2});
  array.shape = {-2, -2};
  error = serializeNpy(array, bytes);
  ASSERT_TRUE(error);
  EXPECT_NE(error->find("negative dimension"), std::string::npos) << *error;

  array = makeArray(ElementType::F32, {2, 2});
  array.descr = "<U1";
  EXPECT_TRUE(serializeNpy(array, bytes));
  array.descr = "<f2";
  error = serializeNpy(array, bytes);
  ASSERT_TRUE(error);
  EXPECT_EQ(*error, "dtype '<f2' has items of 2 bytes, the array says 4");

  array = makeArray(ElementType::F32, {2, 2});
  error = serializeNpy(array, bytes, 3);
  ASSERT_TRUE(error);
  EXPECT_EQ(*error, "cannot write NPY format version 3 (1 and 2 are written)");
}

TEST(NpyTest, Files) {
  TempDir temp;
  ASSERT_FALSE(temp.dir.empty());
  for (ElementType type : {ElementType::F32, ElementType::F16,
                           ElementType::F8E4M3FN, ElementType::F8E5M2}) {
    for (unsigned version : {1u, 2u}) {
      NpyArray array = makeArray(type, {5, 3});
      std::string path = temp.file("a" + std::to_string(version) + ".npy");
      ASSERT_FALSE(writeNpy(path, array, version));
      NpyArray back;
      std::optional<std::string> error = readNpy(path, back);
      ASSERT_FALSE(error) << *error;
      EXPECT_EQ(back.descr, array.descr);
      EXPECT_EQ(back.shape, array.shape);
      EXPECT_EQ(back.data, array.data);
    }
  }

  NpyArray array;
  std::string missing = temp.dir + "/missing.npy";
  std::optional<std::string> error = readNpy(missing, array);
  ASSERT_TRUE(error);
  EXPECT_EQ(*error, missing + ": cannot open: No such file or directory");

  error =
      writeNpy(temp.dir + "/no/such/dir.npy", makeArray(ElementType::F32, {1}));
  ASSERT_TRUE(error);
  EXPECT_EQ(*error, temp.dir +
                        "/no/such/dir.npy: cannot write: No such file or "
                        "directory");

  // A regular file's data is held to its header before it is read.
  std::string big = temp.file("big.npy");
  writeBytes(big, npyImage(1, f32Header("(65536, 65536)"), {1, 2, 3}));
  error = readNpy(big, array);
  ASSERT_TRUE(error);
  EXPECT_EQ(*error, big + ": truncated data: shape (65536, 65536) of f32 is "
                          "17179869184 bytes of data, the file has 3 after "
                          "its header");
  std::string trailing = temp.file("trailing.npy");
  writeBytes(trailing, npyImage(1, f32Header("(1,)"), {1, 2, 3, 4, 5}));
  error = readNpy(trailing, array);
  ASSERT_TRUE(error);
  EXPECT_NE(error->find("trailing bytes"), std::string::npos) << *error;
  EXPECT_TRUE(array.data.empty());

  // Short files: a preamble cut short, a one-byte header, a header cut
  // short.
  std::string shortFile = temp.file("short.npy");
  writeBytes(shortFile, {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, 5});
  error = readNpy(shortFile, array);
  ASSERT_TRUE(error);
  EXPECT_EQ(*error, shortFile + ": truncated: 9 bytes, an NPY preamble is 10");
  std::string shortV2 = temp.file("short2.npy");
  writeBytes(shortV2, {0x93, 'N', 'U', 'M', 'P', 'Y', 2, 0, 5, 0, 0});
  error = readNpy(shortV2, array);
  ASSERT_TRUE(error);
  EXPECT_EQ(*error, shortV2 + ": truncated: 11 bytes, a version 2.0 preamble "
                              "is 12");
  std::string tiny = temp.file("tiny.npy");
  writeBytes(tiny, npyImage(1, "{", {}));
  error = readNpy(tiny, array);
  ASSERT_TRUE(error);
  EXPECT_EQ(*error, tiny + ": bad header: expected a quoted key, found the "
                           "end of the header");
  std::string cut = temp.file("cut.npy");
  std::vector<uint8_t> whole = npyImage(1, f32Header("(1,)"));
  writeBytes(cut, std::vector<uint8_t>(whole.begin(), whole.begin() + 20));
  error = readNpy(cut, array);
  ASSERT_TRUE(error);
  EXPECT_NE(error->find("truncated: the header is"), std::string::npos)
      << *error;

  // A directory is not a file.
  error = readNpy(temp.dir, array);
  ASSERT_TRUE(error);
  EXPECT_EQ(error->rfind(temp.dir + ": ", 0), 0u) << *error;
}

} // namespace
