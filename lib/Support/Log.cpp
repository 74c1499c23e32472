//===- Log.cpp - Structured key=value log lines on stderr -----------------===//

#include "IPU/Support/Log.h"
#include "IPU/Support/Escape.h"

#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <cstdlib>

spdlog::logger &ipu::log() {
  static std::shared_ptr<spdlog::logger> logger = [] {
    auto created = spdlog::stderr_logger_mt("ipu");
    const char *level = std::getenv("IPU_LOG");
    created->set_level(level ? spdlog::level::from_str(level)
                             : spdlog::level::info);
    created->set_pattern("%Y-%m-%dT%H:%M:%S.%fZ %^%l%$ %v", spdlog::pattern_time_type::utc);
    return created;
  }();
  return *logger;
}

// A message is built from names in the IR: one line, escaped.
void ipu::logInfo(const std::string &message) {
  log().info("{}", escapeText(message));
}

void ipu::logDebug(const std::string &message) {
  log().debug("{}", escapeText(message));
}

bool ipu::debugEnabled() { return log().should_log(spdlog::level::debug); }

ipu::QuietLog::QuietLog() : saved(static_cast<int>(log().level())) {
  if (log().level() < spdlog::level::warn)
    log().set_level(spdlog::level::warn);
}

ipu::QuietLog::~QuietLog() {
  log().set_level(static_cast<spdlog::level::level_enum>(saved));
}
