//===- Npy.cpp - NumPy .npy files: read and write plain arrays -----------===//

#include "IPU/Runtime/Npy.h"
#include "IPU/Support/FileIO.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <sys/stat.h>

using namespace ipu;

namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicBytes = 6;
/// Magic, version, and the 2- or 4-byte header length.
constexpr size_t kMinPreambleBytes = kMagicBytes + 2 + 2;
constexpr size_t kMaxPreambleBytes = kMagicBytes + 2 + 4;
/// numpy aligns the data of the files it writes to this many bytes.
constexpr size_t kDataAlignment = 64;
/// No dimension may be larger than the data limit (in bytes, so in
/// elements of at least one byte): also keeps the parse from overflowing.
constexpr uint64_t kMaxDimension = NpyLimits::kMaxDataBytes;

bool isSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' ||
         c == '\v';
}

bool isDigit(char c) { return c >= '0' && c <= '9'; }

/// `text` for a message, quoted as Python's repr quotes a string (single
/// quotes unless it holds one and no double quote), non-printable bytes
/// escaped, cut after 24 characters.
std::string quoteText(std::string_view text) {
  constexpr size_t kShown = 24;
  char quote = text.find('\'') != std::string_view::npos &&
                       text.find('"') == std::string_view::npos
                   ? '"'
                   : '\'';
  std::string quoted(1, quote);
  for (size_t i = 0; i < text.size() && i < kShown; ++i) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    if (c == '\n') {
      quoted += "\\n";
    } else if (c == '\t') {
      quoted += "\\t";
    } else if (c == '\\' || c == quote) {
      quoted += '\\';
      quoted += char(c);
    } else if (c >= 0x20 && c < 0x7F) {
      quoted += char(c);
    } else {
      char escaped[8];
      std::snprintf(escaped, sizeof(escaped), "\\x%02x", c);
      quoted += escaped;
    }
  }
  if (text.size() > kShown)
    quoted += "...";
  return quoted + quote;
}

/// A dtype string, normalised (see NpyArray::descr), or why it is not a
/// plain number type.
std::optional<std::string>
normaliseDescr(std::string_view text, std::string &descr, unsigned &itemBytes) {
  std::string_view rest = text;
  char order = '=';
  if (!rest.empty() &&
      (rest[0] == '<' || rest[0] == '>' || rest[0] == '|' || rest[0] == '='))
    order = rest[0], rest.remove_prefix(1);
  char kind = rest.empty() ? '\0' : rest[0];
  if (kind != 'b' && kind != 'i' && kind != 'u' && kind != 'f' && kind != 'c')
    return "dtype " + quoteText(text) +
           " is not a plain number type (kinds b, i, u, f and c are)";
  rest.remove_prefix(1);
  unsigned size = 0;
  for (char c : rest) {
    if (!isDigit(c) || size > 64)
      return "dtype " + quoteText(text) +
             " is not a plain number type (a kind and its size in bytes)";
    size = size * 10 + unsigned(c - '0');
  }
  if (rest.empty() || size == 0 || size > 64 || (kind == 'b' && size != 1))
    return "dtype " + quoteText(text) + " has an item size numpy never uses";
  itemBytes = size;
  if (size == 1)
    order = '|';
  else if (order != '>')
    order = '<';
  descr = std::string(1, order) + kind + std::to_string(size);
  return std::nullopt;
}

/// The elements of `shape`, or false when a dimension is negative or the
/// product passes `limit`.
bool shapeElements(const std::vector<int64_t> &shape, uint64_t limit,
                   uint64_t &elements) {
  elements = 1;
  bool empty = false;
  for (int64_t dim : shape) {
    if (dim < 0)
      return false;
    if (dim == 0)
      empty = true;
  }
  if (empty) {
    elements = 0;
    return true;
  }
  for (int64_t dim : shape) {
    if (uint64_t(dim) > limit / elements)
      return false;
    elements *= uint64_t(dim);
  }
  return true;
}

/// What the header says, and where the data starts.
struct Header {
  std::string descr;
  unsigned itemBytes = 0;
  bool fortranOrder = false;
  std::vector<int64_t> shape;
  uint64_t dataOffset = 0;
  uint64_t dataBytes = 0;
};

/// Reads the Python dict literal of an NPY header: the keys 'descr',
/// 'fortran_order' and 'shape', each once, in any order, single- or
/// double-quoted, with any whitespace and an optional trailing comma.
class DictParser {
public:
  explicit DictParser(std::string_view text) : text(text) {}

  std::optional<std::string> parse(Header &header) {
    bool seenDescr = false, seenOrder = false, seenShape = false;
    if (!consume('{'))
      return "header is not a dict: it starts " + near();
    while (!consume('}')) {
      std::string key;
      if (auto error = parseString("a quoted key", key))
        return error;
      if (!consume(':'))
        return "expected ':' after key '" + key + "', found " + near();
      skipSpace();
      bool *seen = key == "descr"           ? &seenDescr
                   : key == "fortran_order" ? &seenOrder
                   : key == "shape"         ? &seenShape
                                            : nullptr;
      if (!seen)
        return "unexpected key " + quoteText(key) +
               " (an NPY header has 'descr', 'fortran_order' and 'shape')";
      if (*seen)
        return "key '" + key + "' appears twice";
      *seen = true;
      std::optional<std::string> error;
      if (key == "descr")
        error = parseDescr(header);
      else if (key == "fortran_order")
        error = parseBool(header.fortranOrder);
      else
        error = parseShape(header.shape);
      if (error)
        return "'" + key + "': " + *error;
      if (consume(','))
        continue;
      if (peek() != '}')
        return "expected ',' or '}' after the value of '" + key + "', found " +
               near();
    }
    skipSpace();
    if (pos != text.size())
      return "text after the header dict: " + near();
    for (auto [seen, key] :
         {std::pair{seenDescr, "descr"}, std::pair{seenOrder, "fortran_order"},
          std::pair{seenShape, "shape"}})
      if (!seen)
        return std::string("header has no '") + key + "' key";
    return std::nullopt;
  }

private:
  std::string_view text;
  size_t pos = 0;

  void skipSpace() {
    while (pos < text.size() && isSpace(text[pos]))
      ++pos;
  }
  char peek() {
    skipSpace();
    return pos < text.size() ? text[pos] : '\0';
  }
  bool consume(char c) {
    if (pos >= text.size() || peek() != c)
      return false;
    ++pos;
    return true;
  }
  /// What follows the cursor, for messages.
  std::string near() {
    skipSpace();
    if (pos >= text.size())
      return "the end of the header";
    return quoteText(text.substr(pos));
  }

  std::optional<std::string> parseString(const char *what, std::string &out) {
    char quote = peek();
    if (quote != '\'' && quote != '"')
      return std::string("expected ") + what + ", found " + near();
    size_t end = pos + 1;
    while (end < text.size() && text[end] != quote) {
      if (text[end] == '\\' || text[end] == '\n')
        return std::string("expected ") + what +
               " without escapes or line breaks, found " +
               quoteText(text.substr(pos));
      ++end;
    }
    if (end >= text.size())
      return std::string("unterminated string: ") + quoteText(text.substr(pos));
    out = std::string(text.substr(pos + 1, end - pos - 1));
    pos = end + 1;
    return std::nullopt;
  }

  std::optional<std::string> parseDescr(Header &header) {
    if (peek() == '[')
      return "structured dtypes (a list of fields) are not supported";
    std::string descr;
    if (auto error = parseString("a dtype string", descr))
      return error;
    return normaliseDescr(descr, header.descr, header.itemBytes);
  }

  std::optional<std::string> parseBool(bool &value) {
    skipSpace();
    size_t end = pos;
    while (end < text.size() &&
           (std::isalnum(static_cast<unsigned char>(text[end])) ||
            text[end] == '_'))
      ++end;
    std::string_view word = text.substr(pos, end - pos);
    if (word != "True" && word != "False")
      return "expected True or False, found " + near();
    value = word == "True";
    pos = end;
    return std::nullopt;
  }

  std::optional<std::string> parseDimension(int64_t &value) {
    char c = peek();
    if (c == '-')
      return "negative dimension " + near();
    if (!isDigit(c))
      return "expected a dimension (an integer), found " + near();
    uint64_t parsed = 0;
    size_t start = pos;
    while (pos < text.size() && isDigit(text[pos])) {
      parsed = parsed * 10 + uint64_t(text[pos] - '0');
      ++pos;
      if (parsed > kMaxDimension)
        return "dimension " + quoteText(text.substr(start)) +
               " is larger than the limit of " + std::to_string(kMaxDimension);
    }
    // Python 2 numpy wrote long integers with an L suffix.
    if (pos < text.size() && (text[pos] == 'L' || text[pos] == 'l'))
      ++pos;
    value = int64_t(parsed);
    return std::nullopt;
  }

  /// A tuple of dimensions: (), (5,), (3, 4) or (3, 4,).
  std::optional<std::string> parseShape(std::vector<int64_t> &shape) {
    if (!consume('('))
      return "expected a tuple, found " + near();
    size_t start = pos - 1;
    bool comma = false;
    while (!consume(')')) {
      if (shape.size() >= NpyLimits::kMaxRank)
        return "more than " + std::to_string(NpyLimits::kMaxRank) +
               " dimensions";
      int64_t dim = 0;
      if (auto error = parseDimension(dim))
        return error;
      shape.push_back(dim);
      comma = consume(',');
      if (!comma && peek() != ')')
        return "expected ',' or ')' in the shape, found " + near();
    }
    // (5) is the integer 5 in Python, not a tuple.
    if (shape.size() == 1 && !comma)
      return "shape " + quoteText(text.substr(start, pos - start)) +
             " is not a tuple (a 1-D shape is written (5,))";
    return std::nullopt;
  }
};

/// The format version and header length from a file's first bytes
/// (`size` of them available): the preamble's length, or why not.
std::optional<std::string> parsePreamble(const uint8_t *bytes, size_t size,
                                         size_t &preambleBytes,
                                         uint32_t &headerBytes) {
  if (size > 0 && std::memcmp(bytes, kMagic, std::min(size, kMagicBytes)) != 0)
    return std::string("not an NPY file: it does not start with the magic "
                       "string (byte 0x93, then NUMPY)");
  if (size < kMinPreambleBytes)
    return "truncated: " + std::to_string(size) +
           " bytes, an NPY preamble is " + std::to_string(kMinPreambleBytes);
  unsigned major = bytes[6], minor = bytes[7];
  if ((major != 1 && major != 2) || minor != 0)
    return "unsupported NPY format version " + std::to_string(major) + "." +
           std::to_string(minor) + " (1.0 and 2.0 are read)";
  preambleBytes = major == 1 ? kMinPreambleBytes : kMaxPreambleBytes;
  if (size < preambleBytes)
    return "truncated: " + std::to_string(size) + " bytes, a version " +
           std::to_string(major) + ".0 preamble is " +
           std::to_string(preambleBytes);
  headerBytes = uint32_t(bytes[8]) | uint32_t(bytes[9]) << 8;
  if (major == 2)
    headerBytes |= uint32_t(bytes[10]) << 16 | uint32_t(bytes[11]) << 24;
  if (headerBytes > NpyLimits::kMaxHeaderBytes)
    return "header length " + std::to_string(headerBytes) +
           " is larger than the limit of " +
           std::to_string(NpyLimits::kMaxHeaderBytes) + " bytes";
  return std::nullopt;
}

/// Parses the header text (`headerBytes` of them after the preamble) into
/// `header`, data bytes and offset included.
std::optional<std::string> parseHeaderText(const uint8_t *text,
                                           size_t headerBytes,
                                           size_t preambleBytes,
                                           Header &header) {
  std::string_view view(reinterpret_cast<const char *>(text), headerBytes);
  if (auto error = DictParser(view).parse(header))
    return "bad header: " + *error;
  if (header.fortranOrder)
    return "fortran_order is True: only C-order arrays are read "
           "(np.save(path, np.ascontiguousarray(a)))";
  uint64_t elements = 0;
  if (!shapeElements(header.shape, NpyLimits::kMaxDataBytes / header.itemBytes,
                     elements))
    return "shape " + npyShapeText(header.shape) + " of " +
           npyTypeName(header.descr) + " is larger than the limit of " +
           std::to_string(NpyLimits::kMaxDataBytes) + " bytes";
  header.dataOffset = preambleBytes + headerBytes;
  header.dataBytes = elements * header.itemBytes;
  return std::nullopt;
}

/// Why `available` data bytes do not match the header, if they do not.
std::optional<std::string> checkDataBytes(const Header &header,
                                          uint64_t available) {
  if (available == header.dataBytes)
    return std::nullopt;
  std::string what = "shape " + npyShapeText(header.shape) + " of " +
                     npyTypeName(header.descr) + " is " +
                     std::to_string(header.dataBytes) + " bytes of data, ";
  if (available < header.dataBytes)
    return "truncated data: " + what + "the file has " +
           std::to_string(available) + " after its header";
  return "trailing bytes: " + what + "the file has " +
         std::to_string(available) + " after its header";
}

void fillArray(Header &header, NpyArray &array) {
  array.descr = std::move(header.descr);
  array.itemBytes = header.itemBytes;
  array.shape = std::move(header.shape);
}

} // namespace

uint64_t NpyArray::elements() const {
  uint64_t count = 1;
  for (int64_t dim : shape)
    count *= dim > 0 ? uint64_t(dim) : 0;
  return count;
}

std::string_view ipu::npyDescr(ElementType type) {
  switch (type) {
  case ElementType::F32:
    return "<f4";
  case ElementType::F16:
    return "<f2";
  case ElementType::F8E4M3FN:
  case ElementType::F8E5M2:
    return "|u1";
  }
  return "|u1";
}

std::string ipu::npyTypeName(std::string_view descr) {
  std::string normalised;
  unsigned itemBytes = 0;
  if (normaliseDescr(descr, normalised, itemBytes))
    return quoteText(descr);
  char kind = normalised[1];
  std::string name = kind == 'b'
                         ? "bool"
                         : std::string(1, kind) + std::to_string(8 * itemBytes);
  return normalised[0] == '>' ? name + " big-endian" : name;
}

std::string ipu::npyShapeText(const std::vector<int64_t> &shape) {
  std::string text = "(";
  for (size_t d = 0; d < shape.size(); ++d)
    text += (d ? ", " : "") + std::to_string(shape[d]);
  return text + (shape.size() == 1 ? ",)" : ")");
}

std::optional<std::string> ipu::parseNpy(const uint8_t *bytes, size_t size,
                                         NpyArray &array) {
  array = NpyArray();
  size_t preambleBytes = 0;
  uint32_t headerBytes = 0;
  if (auto error = parsePreamble(bytes, size, preambleBytes, headerBytes))
    return error;
  if (size - preambleBytes < headerBytes)
    return "truncated: the header is " + std::to_string(headerBytes) +
           " bytes, the file has " + std::to_string(size - preambleBytes) +
           " after its preamble";
  Header header;
  if (auto error = parseHeaderText(bytes + preambleBytes, headerBytes,
                                   preambleBytes, header))
    return error;
  if (auto error = checkDataBytes(header, size - header.dataOffset))
    return error;
  array.data.assign(bytes + header.dataOffset,
                    bytes + header.dataOffset + header.dataBytes);
  fillArray(header, array);
  return std::nullopt;
}

std::optional<std::string> ipu::readNpy(const std::string &path,
                                        NpyArray &array) {
  array = NpyArray();
  std::FILE *file = std::fopen(path.c_str(), "rb");
  if (!file)
    return path + ": cannot open: " + std::strerror(errno);
  struct Closer {
    std::FILE *file;
    ~Closer() { std::fclose(file); }
  } closer{file};
  auto readError = [&](const char *what) -> std::string {
    if (std::ferror(file))
      return path + ": cannot read " + what + ": " + std::strerror(errno);
    return "";
  };

  // The version 1.0 preamble, the two more length bytes of version 2.0,
  // then exactly the header it announces: nothing past it is read yet.
  std::vector<uint8_t> head(kMinPreambleBytes);
  head.resize(std::fread(head.data(), 1, head.size(), file));
  if (head.size() == kMinPreambleBytes && head[6] == 2) {
    head.resize(kMaxPreambleBytes);
    head.resize(kMinPreambleBytes +
                std::fread(head.data() + kMinPreambleBytes, 1,
                           kMaxPreambleBytes - kMinPreambleBytes, file));
  }
  if (std::string error = readError("the preamble"); !error.empty())
    return error;
  size_t preambleBytes = 0;
  uint32_t headerBytes = 0;
  if (auto error =
          parsePreamble(head.data(), head.size(), preambleBytes, headerBytes))
    return path + ": " + *error;
  head.resize(preambleBytes + headerBytes);
  size_t have = preambleBytes +
                std::fread(head.data() + preambleBytes, 1, headerBytes, file);
  if (std::string error = readError("the header"); !error.empty())
    return error;
  if (have < head.size())
    return path + ": truncated: the header is " + std::to_string(headerBytes) +
           " bytes, the file has " + std::to_string(have - preambleBytes) +
           " after its preamble";
  Header header;
  if (auto error = parseHeaderText(head.data() + preambleBytes, headerBytes,
                                   preambleBytes, header))
    return path + ": " + *error;

  // A regular file says how much data follows: refuse a mismatch before
  // allocating what the header claims.
  struct stat status;
  if (fstat(fileno(file), &status) == 0 && S_ISREG(status.st_mode)) {
    uint64_t size = uint64_t(status.st_size);
    uint64_t available =
        size > header.dataOffset ? size - header.dataOffset : 0;
    if (auto error = checkDataBytes(header, available))
      return path + ": " + *error;
    array.data.reserve(header.dataBytes);
  }
  // Read in chunks, so that a stream that ends early costs no more than
  // what it held.
  constexpr size_t kChunk = size_t(1) << 20;
  uint64_t got = 0;
  while (got < header.dataBytes) {
    size_t want = size_t(std::min<uint64_t>(kChunk, header.dataBytes - got));
    array.data.resize(got + want);
    size_t read = std::fread(array.data.data() + got, 1, want, file);
    got += read;
    if (read < want)
      break;
  }
  if (std::string error = readError("the data"); !error.empty()) {
    array = NpyArray();
    return error;
  }
  if (got == header.dataBytes && std::fgetc(file) != EOF)
    ++got; // Trailing bytes: how many does not matter for a stream.
  if (auto error = checkDataBytes(header, got)) {
    array = NpyArray();
    return path + ": " + *error;
  }
  fillArray(header, array);
  return std::nullopt;
}

std::optional<std::string> ipu::serializeNpy(const NpyArray &array,
                                             std::vector<uint8_t> &bytes,
                                             unsigned majorVersion) {
  bytes.clear();
  if (majorVersion != 1 && majorVersion != 2)
    return "cannot write NPY format version " + std::to_string(majorVersion) +
           " (1 and 2 are written)";
  std::string descr;
  unsigned itemBytes = 0;
  if (auto error = normaliseDescr(array.descr, descr, itemBytes))
    return error;
  if (array.itemBytes != itemBytes)
    return "dtype " + quoteText(array.descr) + " has items of " +
           std::to_string(itemBytes) + " bytes, the array says " +
           std::to_string(array.itemBytes);
  uint64_t elements = 0;
  if (array.shape.size() > NpyLimits::kMaxRank ||
      !shapeElements(array.shape, NpyLimits::kMaxDataBytes / itemBytes,
                     elements))
    return "shape " + npyShapeText(array.shape) +
           " has a negative dimension or is beyond the limits";
  if (array.data.size() != elements * itemBytes)
    return "shape " + npyShapeText(array.shape) + " of " + npyTypeName(descr) +
           " is " + std::to_string(elements * itemBytes) +
           " bytes, the array holds " + std::to_string(array.data.size());

  std::string dict = "{'descr': '" + descr + "', 'fortran_order': False, " +
                     "'shape': " + npyShapeText(array.shape) + ", }";
  // Spaces, then a newline, up to the alignment; version 2.0 when the
  // header is beyond what version 1.0's 16-bit length can say.
  auto headerFor = [&](size_t preamble) {
    size_t unpadded = preamble + dict.size() + 1;
    size_t padded =
        (unpadded + kDataAlignment - 1) / kDataAlignment * kDataAlignment;
    return dict + std::string(padded - unpadded, ' ') + "\n";
  };
  std::string header = headerFor(kMinPreambleBytes);
  if (majorVersion == 1 && header.size() > 0xFFFF)
    majorVersion = 2;
  if (majorVersion == 2)
    header = headerFor(kMaxPreambleBytes);

  bytes.assign(kMagic, kMagic + kMagicBytes);
  bytes.push_back(uint8_t(majorVersion));
  bytes.push_back(0);
  uint32_t length = uint32_t(header.size());
  bytes.push_back(uint8_t(length));
  bytes.push_back(uint8_t(length >> 8));
  if (majorVersion == 2) {
    bytes.push_back(uint8_t(length >> 16));
    bytes.push_back(uint8_t(length >> 24));
  }
  bytes.insert(bytes.end(), header.begin(), header.end());
  bytes.insert(bytes.end(), array.data.begin(), array.data.end());
  return std::nullopt;
}

std::optional<std::string> ipu::writeNpy(const std::string &path,
                                         const NpyArray &array,
                                         unsigned majorVersion) {
  std::vector<uint8_t> bytes;
  if (auto error = serializeNpy(array, bytes, majorVersion))
    return path + ": " + *error;
  if (std::optional<std::string> error = writeFileBytes(path, bytes))
    return path + ": cannot write: " + *error;
  return std::nullopt;
}
