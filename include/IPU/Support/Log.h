//===- Log.h - Structured key=value log lines on stderr ------------------===//
//
// Decisions are logged as `key=value` lines in the style of the seed logs,
// on stderr so that they never mix with IR or reports on stdout. The level
// comes from the IPU_LOG environment variable (trace, debug, info, warn,
// error, off; default info).
//
//===----------------------------------------------------------------------===//

#ifndef IPU_SUPPORT_LOG_H
#define IPU_SUPPORT_LOG_H

#include <string>

namespace spdlog {
class logger;
}

namespace ipu {

spdlog::logger &log();

/// Logs `message` at info level (one line).
void logInfo(const std::string &message);
/// Logs `message` at debug level; debugEnabled() says whether it would
/// show, so that callers skip building messages nobody reads.
void logDebug(const std::string &message);
bool debugEnabled();

/// Raises the log level to warnings while it lives: work done on a copy
/// (the planner's storage check) logs nothing.
class QuietLog {
public:
  QuietLog();
  ~QuietLog();
  QuietLog(const QuietLog &) = delete;
  QuietLog &operator=(const QuietLog &) = delete;

private:
  int saved;
};

} // namespace ipu

#endif // IPU_SUPPORT_LOG_H
