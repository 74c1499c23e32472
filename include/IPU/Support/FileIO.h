//===- FileIO.h - Writing whole files, with the reason when it fails -----===//

#ifndef IPU_SUPPORT_FILEIO_H
#define IPU_SUPPORT_FILEIO_H

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ipu {

/// Writes `bytes` to `path`, replacing it. Returns the system's reason when
/// opening, writing or closing fails.
std::optional<std::string> writeFileBytes(const std::string &path,
                                          const std::vector<uint8_t> &bytes);

} // namespace ipu

#endif // IPU_SUPPORT_FILEIO_H
