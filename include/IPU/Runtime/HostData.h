//===- HostData.h - A package's inputs and results on the host ----------===//
//
// What `ipu-run --seed`, `--inputs` and `--outputs` exchange with a user's
// framework: inputs by argument index, generated from a seed or read from
// NumPy files, and the device's results written as NumPy files.
//
//===----------------------------------------------------------------------===//

#ifndef IPU_RUNTIME_HOSTDATA_H
#define IPU_RUNTIME_HOSTDATA_H

#include "IPU/Package/Package.h"
#include "IPU/Runtime/Simulator.h"

#include <optional>
#include <string>
#include <vector>

namespace ipu {

/// The output stream of result `index`, or null.
const HostStream *resultStream(const Package &package, uint32_t index);

/// Whether `stream` carries something of each image: an argument without
/// a constant, or a result (any output stream when the package does not
/// say which are results).
bool changesPerImage(const Package &package, const HostStream &stream);
/// A batch run once per image (Package::images > 1): whether `stream`
/// holds one image of each, as changesPerImage.
bool holdsImages(const Package &package, const HostStream &stream);
/// The shape a user's framework holds `stream`'s value in for a whole run:
/// its declared shape, the leading dim times Package::images when it holds
/// one image of each.
std::vector<int64_t> batchShape(const Package &package, const HostStream &stream);
/// Image `image`'s share of a batch's inputs (prepareInputs) in `share`:
/// the image's block of each argument that holds images; the others whole,
/// copied only when `share` does not hold them yet (a run reuses `share`
/// from image to image, so the weights are copied once).
void imageInputs(const Package &package, const std::vector<HostTensor> &batch, uint32_t image,
                 std::vector<HostTensor> &share);
/// Appends one image's results (a run of the program) to the batch's, in
/// image order; a checkpoint keeps the last image's.
void appendImageResults(const Package &package, const SimulationResult &image,
                        std::vector<HostTensor> &batch);

/// The file of a value of `type` named `stem` ("arg2", "result0"):
/// "arg2.npy", or "arg2.f8E4M3FN.npy" for an f8 type, whose bits the file
/// holds as uint8 (NumPy has no f8 dtype).
std::string npyFileName(const std::string &stem, ElementType type);

/// Inputs by argument index. Without `dir`, values uniform in [-1, 1),
/// rounded to the stream's type, from a generator seeded by (seed, argument
/// index) so that each argument is independent of the others and of stream
/// order; with it, read from DIR/argN.npy (npyFileName), which must hold
/// exactly the stream's shape and dtype: a missing file, another shape or
/// dtype is an error naming the file, what was expected and what was found.
/// A file holds its argument in the shape the function declares
/// (HostStream::declaredShape), for the whole batch (batchShape). An argument whose value the package
/// carries (a frozen weight) takes it, with or without `dir`.
/// `generated[i]` tells whether argument i is streamed in at all; both
/// vectors are replaced.
std::optional<std::string> prepareInputs(const Package &package, uint64_t seed,
                                         const std::string &dir,
                                         std::vector<HostTensor> &inputs,
                                         std::vector<bool> &generated);

/// Makes `dir` a directory results can be written to, creating it (and its
/// parents) if needed; an error names it when it is a file or cannot be
/// made. Called before a run, so that a bad directory fails fast.
std::optional<std::string> prepareOutputDirectory(const std::string &dir);

/// Writes the function's results (Package::results; every stream out when
/// the package does not say) to `dir` as npyFileName's resultN files, by
/// result index, in their declared shapes; counts them in `written`.
std::optional<std::string> writeOutputs(const std::string &dir,
                                        const Package &package,
                                        const SimulationResult &result,
                                        size_t &written);

} // namespace ipu

#endif // IPU_RUNTIME_HOSTDATA_H
