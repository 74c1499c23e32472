//===- HostData.cpp - A package's inputs and results on the host --------===//

#include "IPU/Runtime/HostData.h"

#include "IPU/Runtime/Npy.h"

#include <algorithm>
#include <filesystem>
#include <sys/stat.h>

using namespace ipu;

const HostStream *ipu::resultStream(const Package &package, uint32_t index) {
  for (const HostStream &stream : package.streams)
    if (!stream.toDevice && stream.index == index)
      return &stream;
  return nullptr;
}

static bool hasConstant(const Package &package, uint32_t argument) {
  return std::any_of(package.constants.begin(), package.constants.end(),
                     [&](const ArgumentConstant &c) { return c.argument == argument; });
}

bool ipu::changesPerImage(const Package &package, const HostStream &stream) {
  return stream.toDevice ? !hasConstant(package, stream.index)
                         : !package.results || stream.index < package.results;
}

bool ipu::holdsImages(const Package &package, const HostStream &stream) {
  return package.images > 1 && package.results && changesPerImage(package, stream);
}

std::vector<int64_t> ipu::batchShape(const Package &package, const HostStream &stream) {
  std::vector<int64_t> shape = stream.declaredShape.empty() ? stream.shape : stream.declaredShape;
  if (holdsImages(package, stream) && !shape.empty())
    shape[0] *= int64_t(package.images);
  return shape;
}

void ipu::imageInputs(const Package &package, const std::vector<HostTensor> &batch,
                      uint32_t image, std::vector<HostTensor> &share) {
  share.resize(batch.size());
  for (const HostStream &stream : package.streams) {
    if (!stream.toDevice || stream.index >= batch.size())
      continue;
    const HostTensor &whole = batch[stream.index];
    HostTensor &part = share[stream.index];
    if (!holdsImages(package, stream)) {
      // The same for every image: copied once, not per image.
      if (part.bytes.size() != whole.bytes.size())
        part = whole;
      continue;
    }
    part.type = whole.type;
    part.shape = stream.shape;
    const size_t bytes = whole.bytes.size() / package.images;
    part.bytes.assign(whole.bytes.begin() + image * bytes,
                      whole.bytes.begin() + (image + 1) * bytes);
  }
}

void ipu::appendImageResults(const Package &package, const SimulationResult &image,
                             std::vector<HostTensor> &batch) {
  if (batch.size() < image.outputs.size())
    batch.resize(image.outputs.size());
  for (size_t index = 0; index < image.outputs.size(); ++index) {
    const HostTensor &share = image.outputs[index];
    HostTensor &whole = batch[index];
    const HostStream *stream = resultStream(package, uint32_t(index));
    if (!stream || !holdsImages(package, *stream)) {
      whole = share; // A checkpoint: the last image's.
      continue;
    }
    whole.type = share.type;
    whole.shape = share.shape;
    if (!whole.shape.empty())
      whole.shape[0] *= int64_t(package.images);
    whole.bytes.insert(whole.bytes.end(), share.bytes.begin(), share.bytes.end());
  }
}

namespace {

/// splitmix64: tiny, seedable and identical on every platform.
uint64_t splitmix64(uint64_t &state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/// `name` in directory `dir`.
std::string joinPath(const std::string &dir, const std::string &name) {
  return dir.empty() || dir.back() == '/' ? dir + name : dir + "/" + name;
}

bool fileExists(const std::string &path) {
  struct stat status;
  return stat(path.c_str(), &status) == 0;
}

/// The file of a value of `type` named `stem` ("arg2", "result0"):
/// "arg2.npy", or "arg2.f8E4M3FN.npy" for an f8 type, whose bits the file
/// The element type named in a file name of npyFileName's, if an f8 one.
std::optional<ElementType> f8TypeOfFileName(const std::string &name) {
  for (ElementType type : {ElementType::F8E4M3FN, ElementType::F8E5M2})
    if (name.size() > npyFileName("", type).size() &&
        name.compare(name.size() - npyFileName("", type).size(),
                     std::string::npos, npyFileName("", type)) == 0)
      return type;
  return std::nullopt;
}

/// Reads argument `stream.index` from `dir` into the bytes of `input`
/// (`bytes` of them, of the stream's type and shape): the file npyFileName
/// names, of exactly the stream's shape and dtype. When it is missing, a
/// file of the argument under another type's name is reported as what was
/// found.
std::optional<std::string> readInput(const std::string &dir,
                                     const HostStream &stream, uint64_t bytes,
                                     const std::vector<int64_t> &shape,
                                     HostTensor &input) {
  const std::string stem = "arg" + std::to_string(stream.index);
  const std::string typeName(elementTypeName(stream.type));
  const std::string wanted = joinPath(dir, npyFileName(stem, stream.type));
  std::string path = wanted;
  if (!fileExists(wanted)) {
    path.clear();
    for (ElementType other :
         {ElementType::F32, ElementType::F8E4M3FN, ElementType::F8E5M2})
      if (npyFileName(stem, other) != npyFileName(stem, stream.type) &&
          fileExists(joinPath(dir, npyFileName(stem, other)))) {
        path = joinPath(dir, npyFileName(stem, other));
        break;
      }
    if (path.empty())
      return wanted +
             ": no such file: --inputs needs a file for every "
             "argument (argument " +
             std::to_string(stream.index) + ", stream '" + stream.name +
             "', shape " + npyShapeText(shape) + " " + typeName + ")";
  }
  NpyArray array;
  if (auto error = readNpy(path, array))
    return error;
  // What the file holds: an f8 type when its name says so and it holds
  // bytes; its dtype otherwise.
  std::optional<ElementType> named = f8TypeOfFileName(path);
  std::string found = named && array.descr == npyDescr(*named)
                          ? std::string(elementTypeName(*named))
                          : npyTypeName(array.descr);
  if (path != wanted && isF8(stream.type) && !named &&
      array.descr == npyDescr(stream.type))
    return path + ": argument " + std::to_string(stream.index) + " is " +
           typeName + ": name its file " + npyFileName(stem, stream.type) +
           " to say which f8 type the uint8 values are";
  bool sameType = path == wanted && array.descr == npyDescr(stream.type);
  if (!sameType || array.shape != shape) {
    std::string expected =
        "shape " + npyShapeText(shape) + " " + typeName;
    std::string notes;
    if (isF8(stream.type) && array.descr != npyDescr(stream.type))
      notes = "its bits as uint8";
    if (path != wanted)
      notes +=
          (notes.empty() ? "in " : ", in ") + npyFileName(stem, stream.type);
    if (!notes.empty())
      expected += " (" + notes + ")";
    return path + ": expected " + expected + ", found " +
           npyShapeText(array.shape) + " " + found;
  }
  // Both are little-endian and row-major: the file's bytes are the
  // tensor's.
  if (array.data.size() != bytes)
    return path + ": holds " + std::to_string(array.data.size()) +
           " bytes, the argument " + std::to_string(bytes);
  input.bytes = std::move(array.data);
  return std::nullopt;
}

/// Inputs by argument index. Without `dir`, values uniform in [-1, 1),
/// rounded to the stream's type, from a generator seeded by (seed, argument
/// index) so that each argument is independent of the others and of stream
/// order; with it, readInput's files. `generated[i]` tells whether argument
/// Writes every result the device streamed out to `dir` as npyFileName's
} // namespace

std::string ipu::npyFileName(const std::string &stem, ElementType type) {
  if (isF8(type))
    return stem + "." + std::string(elementTypeName(type)) + ".npy";
  return stem + ".npy";
}

std::optional<std::string> ipu::prepareInputs(const Package &package, uint64_t seed,
                                         const std::string &dir,
                                         std::vector<HostTensor> &inputs,
                                         std::vector<bool> &generated) {
  // Far above any real workload, far below what would exhaust the host.
  constexpr uint64_t kMaxInputBytes = uint64_t(1) << 34;
  inputs.clear();
  generated.clear();
  for (const HostStream &stream : package.streams) {
    if (!stream.toDevice)
      continue;
    // Validated indices are below the stream count; checked again so that
    // `index + 1` cannot wrap.
    if (stream.index >= package.streams.size())
      return "input stream '" + stream.name + "' has argument index " +
             std::to_string(stream.index) + ", out of range [0, " +
             std::to_string(package.streams.size()) + ")";
    if (stream.index >= inputs.size()) {
      inputs.resize(stream.index + 1);
      generated.resize(stream.index + 1, false);
    }
    if (generated[stream.index])
      continue;
    generated[stream.index] = true;
    unsigned bytesPerElement = elementBytes(stream.type);
    uint64_t elements = 1;
    for (int64_t dim : stream.shape) {
      if (dim < 0 || (dim != 0 && elements > kMaxInputBytes / uint64_t(dim)))
        return "input stream '" + stream.name + "' has an unusable shape";
      elements *= uint64_t(dim);
    }
    // A batch's argument holds every image, one after another.
    const uint64_t images = holdsImages(package, stream) ? package.images : 1;
    if (elements > kMaxInputBytes / bytesPerElement / images)
      return "input stream '" + stream.name + "' is too large" +
             (images > 1 ? " for " + std::to_string(images) + " images" : std::string());
    elements *= images;
    HostTensor &input = inputs[stream.index];
    input.type = stream.type;
    input.shape = stream.shape;
    if (images > 1 && !input.shape.empty())
      input.shape[0] *= int64_t(images);
    // A frozen weight: its value is the package's (validated to fit).
    auto constant = std::find_if(
        package.constants.begin(), package.constants.end(),
        [&](const ArgumentConstant &c) { return c.argument == stream.index; });
    if (constant != package.constants.end()) {
      if (constant->bytes.size() != elements * bytesPerElement)
        return "argument " + std::to_string(stream.index) + "'s constant holds " +
               std::to_string(constant->bytes.size()) + " bytes, not " +
               std::to_string(elements * bytesPerElement);
      input.bytes = constant->bytes;
      continue;
    }
    if (!dir.empty()) {
      if (auto error = readInput(dir, stream, elements * bytesPerElement,
                                 batchShape(package, stream), input))
        return error;
      continue;
    }
    input.bytes.resize(elements * bytesPerElement);
    uint64_t state = seed ^ (0xD1B54A32D192ED03ull * (stream.index + 1));
    for (uint64_t e = 0; e < elements; ++e) {
      // 24 random bits give values exactly representable in f32.
      float value = float(splitmix64(state) >> 40) * 0x1p-23f - 1.0f;
      storeElement(stream.type, value, &input.bytes[e * bytesPerElement]);
    }
  }
  return std::nullopt;
}

std::optional<std::string> ipu::prepareOutputDirectory(const std::string &dir) {
  std::error_code error;
  if (std::filesystem::exists(dir, error) && !std::filesystem::is_directory(dir, error))
    return "'" + dir + "' exists and is not a directory";
  std::filesystem::create_directories(dir, error);
  if (error)
    return "cannot create directory '" + dir + "': " + error.message();
  return std::nullopt;
}

std::optional<std::string> ipu::writeOutputs(const std::string &dir,
                                        const Package &package,
                                        const SimulationResult &result,
                                        size_t &written) {
  written = 0;
  // The function's results; checkpoints (streamed out for --check) only
  // when the package does not say which are which.
  const size_t results = package.results ? std::min<size_t>(package.results, result.outputs.size())
                                         : result.outputs.size();
  for (uint32_t index = 0; index < results; ++index) {
    const HostStream *stream = resultStream(package, index);
    if (!stream)
      continue;
    const HostTensor &output = result.outputs[index];
    std::vector<int64_t> shape = batchShape(package, *stream);
    uint64_t elements = 1;
    for (int64_t dim : shape)
      elements *= uint64_t(dim);
    if (output.type != stream->type ||
        output.bytes.size() != elements * elementBytes(output.type))
      return "--outputs: result " + std::to_string(index) + " ('" +
             stream->name + "') was never streamed out";
    NpyArray array;
    array.descr = std::string(npyDescr(output.type));
    array.itemBytes = elementBytes(output.type);
    array.shape = shape;
    array.data = output.bytes;
    std::string path = joinPath(
        dir, npyFileName("result" + std::to_string(index), output.type));
    if (auto error = writeNpy(path, array))
      return error;
    ++written;
  }
  return std::nullopt;
}

