//===- Trace.cpp - A simulated run as a Chrome trace-event file ----------===//

#include "IPU/Support/Escape.h"
#include "IPU/Runtime/Trace.h"

#include <cerrno>
#include <cstdio>
#include <cstring>

using namespace ipu;

namespace {

/// A JSON string literal (safe inside a <script> element too).
std::string quote(const std::string &text) { return jsonString(text); }

std::string stepLabel(const Package &package, const StepCycles &step) {
  switch (step.kind) {
  case StepKind::StreamIn:
  case StepKind::StreamOut:
    return std::string(step.kind == StepKind::StreamIn ? "stream in '"
                                                       : "stream out '") +
           package.streams[step.index].name + "'";
  case StepKind::Compute:
    return "compute set '" + package.computeSets[step.index].name + "' (" +
           package.computeSets[step.index].kernel + ")";
  case StepKind::Exchange:
    return "exchange phase '" + package.phases[step.index].name + "'";
  case StepKind::Sync:
    return "sync";
  case StepKind::Loop:
    if (step.index >= package.loops.size())
      return "loop";
    return "loop '" + package.loops[step.index].name + "' (" +
           std::to_string(package.loops[step.index].count) + " iterations of " +
           std::to_string(package.loops[step.index].steps) + " steps)";
  }
  return "step";
}

} // namespace

std::string ipu::traceJson(const Package &package, const TargetModel &target,
                           const SimulationResult &result) {
  const double cyclesPerMicrosecond = target.clockHz / 1e6;
  auto microseconds = [&](uint64_t cycles) {
    char text[32];
    std::snprintf(text, sizeof(text), "%.6f",
                  cyclesPerMicrosecond > 0 ? cycles / cyclesPerMicrosecond : 0.0);
    return std::string(text);
  };
  std::string out = "{\"displayTimeUnit\": \"ns\",\n \"otherData\": {";
  out += "\"units\": \"ts and dur are microseconds at the target clock; "
         "args.cycles and args.startCycle are device cycles\", ";
  out += "\"target\": " + quote(target.name) + ", ";
  out += "\"clockHz\": " + std::to_string(uint64_t(target.clockHz)) + ", ";
  char rate[32];
  std::snprintf(rate, sizeof(rate), "%.3f", cyclesPerMicrosecond);
  out += "\"cyclesPerMicrosecond\": " + std::string(rate);
  out += ", \"workload\": " + quote(package.workload);
  out += ", \"cycles\": " + std::to_string(result.cycles);
  out += ", \"tileGroups\": " + std::to_string(result.tileGroups) + "},\n";
  out += " \"traceEvents\": [\n";
  out += "  {\"ph\": \"M\", \"pid\": 1, \"name\": \"process_name\", \"args\": "
         "{\"name\": " +
         quote(target.name + " (" + std::to_string(target.tiles) + " tiles)") +
         "}},\n";
  out += "  {\"ph\": \"M\", \"pid\": 1, \"tid\": 0, \"name\": \"thread_name\", "
         "\"args\": {\"name\": \"program steps\"}}";
  for (uint32_t g = 0; g < result.tileGroups; ++g) {
    uint64_t first = uint64_t(g) * target.tiles / result.tileGroups;
    uint64_t last = uint64_t(g + 1) * target.tiles / result.tileGroups - 1;
    out += ",\n  {\"ph\": \"M\", \"pid\": 1, \"tid\": " + std::to_string(g + 1) +
           ", \"name\": \"thread_name\", \"args\": {\"name\": \"tiles " +
           std::to_string(first) + "-" + std::to_string(last) + "\"}}";
  }
  uint64_t start = 0;
  for (size_t s = 0; s < result.steps.size(); ++s) {
    const StepCycles &step = result.steps[s];
    const std::string label = quote(stepLabel(package, step));
    // The source op it runs for, where the package says.
    std::string where;
    if (step.kind == StepKind::Compute && step.index < package.computeSets.size())
      where = package.computeSets[step.index].location;
    else if (step.kind == StepKind::Exchange && step.index < package.phases.size())
      where = package.phases[step.index].location;
    else if (step.kind == StepKind::Loop && step.index < package.loops.size())
      where = package.loops[step.index].location;
    const std::string location =
        where.empty() ? std::string() : ", \"location\": " + quote(where);
    // A loop body's step is one slice for all its iterations.
    const std::string runs =
        step.runs == 1 ? std::string()
                       : ", \"runs\": " + std::to_string(step.runs);
    auto slice = [&](uint32_t tid, uint64_t cycles) {
      out += ",\n  {\"ph\": \"X\", \"pid\": 1, \"tid\": " + std::to_string(tid) +
             ", \"name\": " + label + ", \"cat\": \"" + stepKindName(step.kind) +
             "\", \"ts\": " + microseconds(start) +
             ", \"dur\": " + microseconds(cycles) +
             ", \"args\": {\"step\": " + std::to_string(s) +
             ", \"startCycle\": " + std::to_string(start) +
             ", \"cycles\": " + std::to_string(cycles) + runs + location +
             "}}";
    };
    slice(0, step.cycles);
    // Host streams take no device time: no slice on the tile tracks.
    if (step.cycles != 0)
      for (uint32_t g = 0; g < step.groupCycles.size(); ++g)
        if (step.groupCycles[g] != 0)
          slice(g + 1, step.groupCycles[g]);
    start += step.cycles;
  }
  out += "\n]}\n";
  return out;
}

std::optional<std::string> ipu::writeTrace(const std::string &path,
                                           const Package &package,
                                           const TargetModel &target,
                                           const SimulationResult &result) {
  std::string json = traceJson(package, target, result);
  std::FILE *file = std::fopen(path.c_str(), "wb");
  if (!file)
    return "cannot write trace '" + path + "': " + std::strerror(errno);
  bool failed = std::fwrite(json.data(), 1, json.size(), file) != json.size();
  failed |= std::fclose(file) != 0;
  if (failed)
    return "cannot write trace '" + path + "': " + std::strerror(errno);
  return std::nullopt;
}
