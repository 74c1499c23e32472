//===- Npy.h - NumPy .npy files: read and write plain arrays -------------===//
//
// The NPY format (numpy.lib.format), versions 1.0 and 2.0: a magic string,
// a version, a little-endian header length, then a header that is the text
// of a Python dict literal with exactly the keys 'descr' (the dtype, e.g.
// '<f4'), 'fortran_order' and 'shape' (a tuple of integers), then the
// elements. Only plain number dtypes in C order are read; structured and
// object dtypes, Fortran order, and anything the limits below refuse are
// errors. What `ipu-run --inputs` and `--outputs` exchange with a user's
// framework (np.save / np.load).
//
// Free of LLVM, and of exceptions: every failure is a message. A malformed
// file is refused with what is wrong in it, never read past its end, and
// never makes the reader allocate more than its header and the limits
// allow.
//
//===----------------------------------------------------------------------===//

#ifndef IPU_RUNTIME_NPY_H
#define IPU_RUNTIME_NPY_H

#include "IPU/Support/ElementType.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ipu {

/// Hard limits on what a file may claim.
struct NpyLimits {
  /// Header bytes after the preamble (numpy itself writes well under 1 KiB
  /// for plain arrays and refuses more than 10,000 by default).
  static constexpr uint32_t kMaxHeaderBytes = 1u << 16;
  /// Dimensions of the shape (numpy allows 64).
  static constexpr size_t kMaxRank = 64;
  /// Element bytes: far above any workload, far below exhausting a host
  /// (ipu-run's own bound on an input).
  static constexpr uint64_t kMaxDataBytes = uint64_t(1) << 34;
};

/// An array as an .npy file holds it: a normalised dtype, the shape, and
/// the element bytes in C (row-major) order, in the dtype's byte order.
struct NpyArray {
  /// Normalised: a byte order ('<' little, '>' big; '|' for one-byte
  /// items), a kind ('b' bool, 'i', 'u', 'f', 'c') and the item size in
  /// bytes: "<f4", "<f2", "|u1". '=' and a missing order read as '<' (the
  /// hosts we run on are little-endian).
  std::string descr;
  unsigned itemBytes = 0;
  std::vector<int64_t> shape;
  std::vector<uint8_t> data;

  /// Elements the shape holds (1 for a 0-d array).
  uint64_t elements() const;
};

/// The NPY dtype our element types are stored as: f32 '<f4', f16 '<f2',
/// the f8 types their bits as uint8 '|u1' (their type is not in the file).
std::string_view npyDescr(ElementType type);

/// A dtype for messages, as numpy users know it: "f32", "f16", "u8",
/// "i64", "bool", "c64", with " big-endian" after a big-endian one; other
/// text quoted as given.
std::string npyTypeName(std::string_view descr);

/// A shape as Python prints the tuple: "(4304, 1152)", "(5,)", "()".
std::string npyShapeText(const std::vector<int64_t> &shape);

/// Parses a whole .npy image. On failure `array` is left empty and the
/// message says what is wrong (truncated, bad magic, unsupported version,
/// a header that is not the dict it must be, Fortran order, a shape beyond
/// the limits, data shorter or longer than the shape).
std::optional<std::string> parseNpy(const uint8_t *bytes, size_t size,
                                    NpyArray &array);

/// Reads the .npy file at `path`; messages start with the path. A regular
/// file's size is checked against its header before its data is read.
std::optional<std::string> readNpy(const std::string &path, NpyArray &array);

/// The .npy image of `array` in format version `majorVersion` (1 or 2;
/// version 1 becomes 2 if the header would not fit), its header padded so
/// that the data starts at a multiple of 64 bytes as numpy writes it. Fails
/// on an array that does not hold together (a malformed descr, a negative
/// dimension, data that is not shape x item size).
std::optional<std::string> serializeNpy(const NpyArray &array,
                                        std::vector<uint8_t> &bytes,
                                        unsigned majorVersion = 1);

/// Writes serializeNpy's image to `path`; messages start with the path.
std::optional<std::string> writeNpy(const std::string &path,
                                    const NpyArray &array,
                                    unsigned majorVersion = 1);

} // namespace ipu

#endif // IPU_RUNTIME_NPY_H
