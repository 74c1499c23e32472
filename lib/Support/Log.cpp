//===- Log.cpp - Structured key=value log lines on stderr -----------------===//

#include "IPU/Support/Log.h"

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

void ipu::logInfo(const std::string &message) { log().info("{}", message); }
