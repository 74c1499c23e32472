//===- Profile.cpp - A simulated run as a self-contained HTML report -----===//
//
// profileData computes the run's figures once; each section of the page is
// written by a function of its own from them, in plain string building: SVG
// for the timeline and the tile heatmaps, HTML tables for ops, phases,
// compute sets and memory, and the figures as JSON. No script runs in the
// page and nothing is loaded from elsewhere.
//
//===----------------------------------------------------------------------===//

#include "IPU/Support/Escape.h"
#include "IPU/Support/Numbers.h"
#include "IPU/Runtime/Profile.h"

#include "IPU/Exchange/Phase.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>

using namespace ipu;

namespace {

/// Text for HTML content and attribute values: escapeText's (no control
/// character reaches the page), then HTML's.
std::string html(const std::string &text) {
  std::string out;
  for (char c : escapeText(text)) {
    switch (c) {
    case '&':
      out += "&amp;";
      break;
    case '<':
      out += "&lt;";
      break;
    case '>':
      out += "&gt;";
      break;
    case '"':
      out += "&quot;";
      break;
    case '\'':
      out += "&#39;";
      break;
    default:
      out += c;
    }
  }
  return out;
}

/// A JSON string literal (safe inside a <script> element too).
std::string quote(const std::string &text) { return jsonString(text); }

std::string fixed(double value, int digits) {
  if (!std::isfinite(value))
    return "0";
  char text[64];
  std::snprintf(text, sizeof(text), "%.*f", digits, value);
  return text;
}

std::string num(uint64_t value) { return std::to_string(value); }


std::string stepName(const Package &package, const StepCycles &step) {
  switch (step.kind) {
  case StepKind::StreamIn:
  case StepKind::StreamOut:
    return step.index < package.streams.size()
               ? package.streams[step.index].name
               : "stream";
  case StepKind::Compute:
    return step.index < package.computeSets.size()
               ? package.computeSets[step.index].name
               : "compute set";
  case StepKind::Exchange:
    return step.index < package.phases.size() ? package.phases[step.index].name
                                              : "exchange phase";
  case StepKind::Sync:
    return "sync";
  case StepKind::Loop:
    return step.index < package.loops.size() ? package.loops[step.index].name
                                             : "loop";
  }
  return "step";
}

const char *kindColor(StepKind kind) {
  switch (kind) {
  case StepKind::Compute:
    return "#4e79a7";
  case StepKind::Exchange:
    return "#f28e2b";
  case StepKind::Sync:
    return "#76b7b2";
  case StepKind::Loop:
    return "#b07aa1";
  default:
    return "#bab0ac";
  }
}

/// A colour for `fraction` in [0, 1] on a viridis-like scale.
std::string heatColor(double fraction) {
  static const double stops[][3] = {{68, 1, 84},
                                    {59, 82, 139},
                                    {33, 145, 140},
                                    {94, 201, 98},
                                    {253, 231, 37}};
  fraction = std::clamp(fraction, 0.0, 1.0);
  double position = fraction * 4;
  int low = std::min(3, int(position));
  double t = position - low;
  char text[8];
  std::snprintf(
      text, sizeof(text), "#%02x%02x%02x",
      int(std::lround(stops[low][0] + t * (stops[low + 1][0] - stops[low][0]))),
      int(std::lround(stops[low][1] + t * (stops[low + 1][1] - stops[low][1]))),
      int(std::lround(stops[low][2] +
                      t * (stops[low + 1][2] - stops[low][2]))));
  return text;
}

/// Idle tiles (no vertex in any compute set).
constexpr const char *kIdleColor = "#d9d9d9";

constexpr uint32_t kHeatmapColumns = 64;

/// One cell per tile, coloured from the least non-zero value to the largest
/// (zero grey), with row labels and a legend; `tooltip` titles each cell.
std::string tileHeatmap(const std::string &id, const std::string &cellClass,
                        const std::string &dataKey, const std::string &unit,
                        const std::string &zeroLabel, const std::vector<uint64_t> &values,
                        const std::function<std::string(uint32_t, uint64_t)> &tooltip) {
  const uint32_t tiles = uint32_t(values.size());
  const uint32_t columns = std::max<uint32_t>(1, std::min<uint32_t>(tiles, kHeatmapColumns));
  const uint32_t rows = (tiles + columns - 1) / columns;
  const double cell = 16, gridX = 40, gridY = 4;
  const double gridWidth = columns * cell, gridHeight = rows * cell;
  const double legendY = gridY + gridHeight + 14;
  uint64_t most = 0, least = UINT64_MAX;
  for (uint64_t v : values) {
    most = std::max(most, v);
    if (v)
      least = std::min(least, v);
  }
  if (least == UINT64_MAX)
    least = 0;
  auto color = [&](uint64_t v) -> std::string {
    if (v == 0)
      return kIdleColor;
    return heatColor(most > least ? double(v - least) / (most - least) : 1.0);
  };
  const std::string gradient = id == "heatmap" ? "heat" : "heat-" + id;
  std::string out = "<svg id=\"" + id + "\" xmlns=\"http://www.w3.org/2000/svg\" width=\"" +
                    fixed(gridX + std::max(gridWidth, 400.0) + 20, 0) + "\" height=\"" +
                    fixed(legendY + 40, 0) + "\">\n";
  for (uint32_t r = 0; r < rows; ++r)
    out += "<text x=\"" + fixed(gridX - 4, 0) + "\" y=\"" +
           fixed(gridY + r * cell + cell - 4, 0) + "\" text-anchor=\"end\">" +
           num(uint64_t(r) * columns) + "</text>\n";
  for (uint32_t t = 0; t < tiles; ++t)
    out += "<rect class=\"" + cellClass + "\" data-tile=\"" + num(t) + "\" data-" +
           dataKey + "=\"" + num(values[t]) + "\" x=\"" +
           fixed(gridX + (t % columns) * cell, 0) + "\" y=\"" +
           fixed(gridY + (t / columns) * cell, 0) + "\" width=\"" + fixed(cell - 1, 0) +
           "\" height=\"" + fixed(cell - 1, 0) + "\" fill=\"" + color(values[t]) +
           "\"><title>" + html(tooltip(t, values[t])) + "</title></rect>\n";
  out += "<defs><linearGradient id=\"" + gradient + "\">";
  for (int stop = 0; stop <= 8; ++stop)
    out += "<stop offset=\"" + fixed(stop / 8.0, 3) + "\" stop-color=\"" +
           heatColor(stop / 8.0) + "\"/>";
  out += "</linearGradient></defs>\n";
  out += "<g id=\"" + std::string(id == "heatmap" ? "legend" : id + "-legend") +
         "\"><rect x=\"" + fixed(gridX, 0) + "\" y=\"" + fixed(legendY, 0) +
         "\" width=\"300\" height=\"12\" fill=\"url(#" + gradient + ")\"/>\n";
  out += "<text x=\"" + fixed(gridX, 0) + "\" y=\"" + fixed(legendY + 26, 0) + "\">" +
         groupedThousands(least) + "</text><text x=\"" + fixed(gridX + 300, 0) + "\" y=\"" +
         fixed(legendY + 26, 0) + "\" text-anchor=\"end\">" + groupedThousands(most) + " " + unit +
         "</text>\n";
  out += "<rect x=\"" + fixed(gridX + 320, 0) + "\" y=\"" + fixed(legendY, 0) +
         "\" width=\"12\" height=\"12\" fill=\"" + kIdleColor + "\"/><text x=\"" +
         fixed(gridX + 336, 0) + "\" y=\"" + fixed(legendY + 10, 0) + "\">" +
         html(zeroLabel) + "</text></g>\n";
  out += "</svg>\n";
  return out;
}

/// The step at which the package's placed buffers of `memoryClass` hold
/// the most bytes on one tile, and the bytes live on every tile then;
/// false when it has no such buffer.
bool peakStepBytes(const Package &package, MemoryClass memoryClass, uint32_t tiles,
                   uint32_t &peakStep, std::vector<uint64_t> &bytes) {
  const uint32_t steps = uint32_t(package.program.size());
  // Per step, the most any tile holds: a sweep per tile over buffer starts
  // and ends.
  std::vector<std::vector<std::pair<uint32_t, int64_t>>> events(tiles);
  bool any = false;
  for (const PackageBuffer &buffer : package.buffers) {
    if (buffer.memoryClass != memoryClass || buffer.lastStep >= steps)
      continue;
    any = true;
    for (uint32_t tile : buffer.tiles)
      if (tile < tiles) {
        events[tile].push_back({buffer.firstStep, int64_t(buffer.bytes)});
        events[tile].push_back({buffer.lastStep + 1, -int64_t(buffer.bytes)});
      }
  }
  if (!any)
    return false;
  uint64_t best = 0;
  peakStep = 0;
  for (auto &list : events) {
    std::sort(list.begin(), list.end());
    int64_t live = 0;
    for (auto [step, delta] : list) {
      live += delta;
      if (delta > 0 && uint64_t(live) > best) {
        best = uint64_t(live);
        peakStep = step;
      }
    }
  }
  bytes.assign(tiles, 0);
  for (const PackageBuffer &buffer : package.buffers)
    if (buffer.memoryClass == memoryClass && buffer.firstStep <= peakStep &&
        peakStep <= buffer.lastStep)
      for (uint32_t tile : buffer.tiles)
        if (tile < tiles)
          bytes[tile] += buffer.bytes;
  return true;
}

} // namespace

ProfileData ipu::profileData(const Package &package, const TargetModel &target,
                             const SimulationResult &result) {
  ProfileData data;
  data.hasLoops = std::any_of(
      result.steps.begin(), result.steps.end(),
      [](const StepCycles &step) { return step.kind == StepKind::Loop; });
  // Timeline steps: everything but host streams before the run, which cost
  // no cycles.
  std::vector<size_t> &timeline = data.timeline;
  for (size_t s = 0; s < result.steps.size(); ++s)
    if ((result.steps[s].kind != StepKind::StreamIn &&
         result.steps[s].kind != StepKind::StreamOut) ||
        result.steps[s].cycles > 0)
      timeline.push_back(s);

  // Phases and compute sets in order of first run; repeated runs of one are
  // identical (same schedule, same vertex estimates) and counted. A step of
  // a loop body holds the sums over its runs.
  std::vector<ProfilePhase> &phases = data.phases;
  std::vector<ProfileComputeSet> &computeSets = data.computeSets;
  std::vector<int64_t> phaseRow(package.phases.size(), -1);
  std::vector<int64_t> computeRow(package.computeSets.size(), -1);
  for (const StepCycles &step : result.steps) {
    if (step.kind == StepKind::Exchange && step.index < package.phases.size()) {
      if (phaseRow[step.index] < 0) {
        const PackagePhase &phase = package.phases[step.index];
        phaseRow[step.index] = int64_t(phases.size());
        ProfilePhase row;
        row.name = phase.name;
        row.index = step.index;
        row.cycles = step.runs ? step.cycles / step.runs : 0;
        row.transfers = phase.phase.size();
        ScheduleReport report = timedScheduleReport(target, phase.phase,
                                                    phase.schedule, phase.addresses());
        row.sendHorizon = report.horizon;
        row.bound = report.bound;
        phases.push_back(row);
      }
      phases[size_t(phaseRow[step.index])].runs += step.runs;
    } else if (step.kind == StepKind::Compute &&
               step.index < package.computeSets.size()) {
      if (computeRow[step.index] < 0) {
        const ComputeSet &set = package.computeSets[step.index];
        computeRow[step.index] = int64_t(computeSets.size());
        ProfileComputeSet row;
        row.name = set.name;
        row.kernel = set.kernel;
        row.index = step.index;
        row.vertices = set.tiles.size();
        row.cycles =
            step.runs ? (step.cycles + step.runs - 1) / step.runs : 0;
        row.slowestTile = step.slowestTile;
        row.busyTiles = step.busyTiles;
        row.stepCycles = step.cycles;
        row.stepBusyTileCycles = step.busyTileCycles;
        row.stepRuns = step.runs;
        computeSets.push_back(row);
      }
      computeSets[size_t(computeRow[step.index])].runs += step.runs;
    }
  }

  const std::vector<uint64_t> &tileCycles = result.tileComputeCycles;
  uint64_t tileSum = 0;
  uint64_t minBusy = UINT64_MAX; ///< The least busy tile that is not idle.
  for (size_t t = 0; t < tileCycles.size(); ++t) {
    if (tileCycles[t] != 0)
      minBusy = std::min(minBusy, tileCycles[t]);
    if (tileCycles[t] > data.maxTileCycles) {
      data.maxTileCycles = tileCycles[t];
      data.busiestTile = t;
    }
    data.idleTiles += tileCycles[t] == 0;
    tileSum += tileCycles[t];
  }
  data.meanTileCycles =
      tileCycles.empty() ? 0 : double(tileSum) / tileCycles.size();
  data.minBusyTileCycles = minBusy == UINT64_MAX ? 0 : minBusy;
  return data;
}

namespace {

/// What every section of the page reads.
struct Report {
  const Package &package;
  const TargetModel &target;
  const SimulationResult &result;
  const ProfileComparison *other;
  const ProfileData &data;
  double perMicrosecond;

  std::string us(uint64_t cycles) const {
    return fixed(perMicrosecond > 0 ? cycles / perMicrosecond : 0.0, 3);
  }
  std::string cyclesText(uint64_t cycles) const {
    return groupedThousands(cycles) + " cycles (" + us(cycles) + " \xC2\xB5s)";
  }
};

/// The figures as JSON, for the page's #profile-data.
std::string figuresJson(const Report &r) {
  const Package &package = r.package;
  const TargetModel &target = r.target;
  const SimulationResult &result = r.result;
  const std::vector<size_t> &timeline = r.data.timeline;
  const std::vector<ProfilePhase> &phases = r.data.phases;
  const std::vector<ProfileComputeSet> &computeSets = r.data.computeSets;
  const std::vector<uint64_t> &tileCycles = r.result.tileComputeCycles;
  const uint64_t maxTile = r.data.maxTileCycles;
  const uint64_t busiestTile = r.data.busiestTile;
  const uint64_t idleTiles = r.data.idleTiles;
  const uint64_t minBusy = r.data.minBusyTileCycles;
  const MemoryRegion *regions[2] = {&r.target.region(MemoryClass::Standard),
                                    &r.target.region(MemoryClass::Interleaved)};
  const char *regionNames[2] = {"standard", "interleaved"};
  const double perMicrosecond = r.perMicrosecond;
  auto us = [&](uint64_t cycles) { return r.us(cycles); };
  std::string json = "{\n";
  json +=
      "\"units\": {\"cycles\": \"device cycles\", \"microseconds\": "
      "\"at the target clock (clockHz)\", \"bytes\": \"bytes per tile\"},\n";
  json += "\"workload\": " + quote(package.workload) + ",\n";
  json += "\"target\": " + quote(target.name) + ",\n";
  json += "\"tiles\": " + num(target.tiles) + ",\n";
  json += "\"clockHz\": " + num(uint64_t(target.clockHz)) + ",\n";
  json += "\"cyclesPerMicrosecond\": " + fixed(perMicrosecond, 3) + ",\n";
  json += "\"cycles\": " + num(result.cycles) + ",\n";
  json += "\"computeCycles\": " + num(result.computeCycles) + ",\n";
  json += "\"exchangeCycles\": " + num(result.exchangeCycles) + ",\n";
  json += "\"syncCycles\": " + num(result.syncCycles) + ",\n";
  json += "\"loopCycles\": " + num(result.loopCycles) + ",\n";
  json += "\"hostCycles\": " + num(result.hostCycles) + ",\n";
  json += "\"microseconds\": " + us(result.cycles) + ",\n";
  json += "\"programSteps\": " + num(result.steps.size()) + ",\n";
  json += "\"steps\": [";
  uint64_t start = 0;
  for (size_t s = 0, i = 0; s < result.steps.size(); ++s) {
    const StepCycles &step = result.steps[s];
    if (i < timeline.size() && timeline[i] == s) {
      json += std::string(i ? "," : "") + "\n {\"step\": " + num(s) +
              ", \"kind\": " + quote(stepKindName(step.kind)) +
              ", \"index\": " + num(step.index) +
              ", \"name\": " + quote(stepName(package, step)) +
              ", \"startCycle\": " + num(start) +
              ", \"cycles\": " + num(step.cycles) +
              ", \"runs\": " + num(step.runs) + "}";
      ++i;
    }
    start += step.cycles;
  }
  json += "],\n";
  json += "\"tileComputeCycles\": [";
  for (size_t t = 0; t < tileCycles.size(); ++t)
    json += (t ? "," : "") + num(tileCycles[t]);
  json += "],\n";
  json += "\"maxTileComputeCycles\": " + num(maxTile) + ",\n";
  json += "\"busiestTile\": " + num(busiestTile) + ",\n";
  json += "\"minBusyTileComputeCycles\": " + num(minBusy) + ",\n";
  json += "\"idleTiles\": " + num(idleTiles) + ",\n";
  json += "\"computeSets\": [";
  for (size_t i = 0; i < computeSets.size(); ++i) {
    const ProfileComputeSet &row = computeSets[i];
    json += std::string(i ? "," : "") + "\n {\"index\": " + num(row.index) +
            ", \"name\": " + quote(row.name) +
            ", \"kernel\": " + quote(row.kernel) +
            ", \"vertices\": " + num(row.vertices) +
            ", \"runs\": " + num(row.runs) +
            ", \"cycles\": " + num(row.cycles) +
            ", \"slowestTile\": " + num(row.slowestTile) +
            ", \"busyTiles\": " + num(row.busyTiles) +
            ", \"meanCycles\": " + fixed(row.mean(), 1) +
            ", \"balance\": " + fixed(row.balance(), 4) + "}";
  }
  json += "],\n";
  json += "\"phases\": [";
  for (size_t i = 0; i < phases.size(); ++i) {
    const ProfilePhase &row = phases[i];
    json += std::string(i ? "," : "") + "\n {\"index\": " + num(row.index) +
            ", \"name\": " + quote(row.name) + ", \"runs\": " + num(row.runs) +
            ", \"cycles\": " + num(row.cycles) +
            ", \"transfers\": " + num(row.transfers) +
            ", \"horizon\": " + num(row.sendHorizon) +
            ", \"lowerBound\": " + num(row.bound) + "}";
  }
  json += "],\n";
  json += "\"memory\": {";
  for (int r = 0; r < 2; ++r)
    json += std::string(r ? ", " : "") + quote(regionNames[r]) +
            ": {\"touchedBytes\": " + num(result.touchedBytes[r]) +
            ", \"regionBytes\": " + num(regions[r]->bytes) + "}";
  json += "},\n";
  json += "\"metadata\": {";
  for (size_t i = 0; i < package.metadata.size(); ++i)
    json += std::string(i ? ", " : "") + quote(package.metadata[i].first) +
            ": " + quote(package.metadata[i].second);
  json += "}\n}";

  return json;
}

/// The document head, the title and the run's cycles by kind.
void writeHead(const Report &r, std::string &out) {
  const Package &package = r.package;
  const TargetModel &target = r.target;
  const SimulationResult &result = r.result;
  const bool hasLoops = r.data.hasLoops;
  const std::vector<size_t> &timeline = r.data.timeline;
  const double perMicrosecond = r.perMicrosecond;
  auto cyclesText = [&](uint64_t cycles) { return r.cyclesText(cycles); };
  out +=
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  out += "<title>ipu-run profile: " + html(package.workload) + " on " +
         html(target.name) + "</title>\n";
  out += "<style>\n"
         "body{font-family:sans-serif;margin:16px 24px;color:#222}\n"
         "h1{font-size:20px}h2{font-size:16px;margin-top:28px}\n"
         "table{border-collapse:collapse;font-size:13px}\n"
         "td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}\n"
         "td:first-child,th:first-child{text-align:left}\n"
         "th{background:#f0f0f0}\n"
         ".note{color:#555;font-size:13px}\n"
         "svg text{font-size:11px;font-family:sans-serif}\n"
         "rect.step:hover,rect.tile:hover{stroke:#000;stroke-width:1}\n"
         "</style>\n</head>\n<body>\n";
  out += "<h1>" + html(package.workload) + " on " + html(target.name) + " (" +
         num(target.tiles) + " tiles)</h1>\n";
  out += "<p class=\"note\">Units: device cycles, and microseconds at the "
         "target clock of " +
         fixed(target.clockHz / 1e6, 0) + " MHz (" + fixed(perMicrosecond, 3) +
         " cycles per \xC2\xB5s). Memory in bytes per tile. Hover an element "
         "for its figures.</p>\n";
  out += "<p>Run: <b>" + cyclesText(result.cycles) + "</b> = compute " +
         cyclesText(result.computeCycles) + " + exchange " +
         cyclesText(result.exchangeCycles) + " + sync " +
         cyclesText(result.syncCycles) +
         (hasLoops ? " + loop control " + cyclesText(result.loopCycles) : "") +
         (result.hostCycles ? " + host streams during the run " + cyclesText(result.hostCycles)
                            : std::string()) +
         "; " + num(result.steps.size()) +
         " program steps, " + num(timeline.size()) +
         " of them on the device (streams before the run cost nothing).</p>\n";
}

/// The device steps as rects on one axis, with a key.
void writeTimeline(const Report &r, std::string &out) {
  const Package &package = r.package;
  const SimulationResult &result = r.result;
  const bool hasLoops = r.data.hasLoops;
  const std::vector<size_t> &timeline = r.data.timeline;
  auto cyclesText = [&](uint64_t cycles) { return r.cyclesText(cycles); };
  const double width = 1200, rowHeight = 36;
  out += "<h2>Timeline</h2>\n";
  out += "<svg id=\"timeline\" xmlns=\"http://www.w3.org/2000/svg\" width=\"" +
         fixed(width, 0) + "\" height=\"" + fixed(rowHeight + 34, 0) +
         "\" viewBox=\"0 0 " + fixed(width, 0) + " " +
         fixed(rowHeight + 34, 0) + "\">\n";
  uint64_t start = 0;
  for (size_t s = 0, i = 0; s < result.steps.size(); ++s) {
    const StepCycles &step = result.steps[s];
    if (i < timeline.size() && timeline[i] == s) {
      double x = result.cycles ? width * double(start) / result.cycles : 0;
      double w =
          result.cycles ? width * double(step.cycles) / result.cycles : 0;
      std::string name = stepName(package, step);
      out += "<rect class=\"step\" data-step=\"" + num(s) + "\" data-kind=\"" +
             html(stepKindName(step.kind)) + "\" data-cycles=\"" +
             num(step.cycles) + "\" x=\"" + fixed(x, 3) +
             "\" y=\"0\" width=\"" + fixed(w, 3) + "\" height=\"" +
             fixed(rowHeight, 0) + "\" fill=\"" + kindColor(step.kind) +
             "\"><title>" + html(name) + " (" + stepKindName(step.kind) +
             "): " + cyclesText(step.cycles) +
             (step.runs != 1 ? " over " + num(step.runs) + " iterations" : "") +
             ", from cycle " +
             groupedThousands(start) + "</title></rect>\n";
      ++i;
    }
    start += step.cycles;
  }
  // Axis and key.
  out += "<line x1=\"0\" y1=\"" + fixed(rowHeight + 2, 0) + "\" x2=\"" +
         fixed(width, 0) + "\" y2=\"" + fixed(rowHeight + 2, 0) +
         "\" stroke=\"#888\"/>\n";
  for (int tick = 0; tick <= 4; ++tick) {
    double x = width * tick / 4;
    const char *anchor = tick == 0 ? "start" : tick == 4 ? "end" : "middle";
    out += "<text x=\"" + fixed(x, 1) + "\" y=\"" + fixed(rowHeight + 16, 0) +
           "\" text-anchor=\"" + anchor + "\">" +
           groupedThousands(result.cycles * tick / 4) + "</text>\n";
  }
  double keyX = 0;
  for (StepKind kind : {StepKind::Compute, StepKind::Exchange, StepKind::Sync,
                        StepKind::Loop}) {
    if (kind == StepKind::Loop && !hasLoops)
      continue;
    out += "<rect x=\"" + fixed(keyX, 0) + "\" y=\"" +
           fixed(rowHeight + 22, 0) + "\" width=\"10\" height=\"10\" fill=\"" +
           kindColor(kind) + "\"/><text x=\"" + fixed(keyX + 14, 0) +
           "\" y=\"" + fixed(rowHeight + 31, 0) + "\">" + stepKindName(kind) +
           "</text>\n";
    keyX += 90;
  }
  out += "<text x=\"" + fixed(width, 0) + "\" y=\"" + fixed(rowHeight + 31, 0) +
         "\" text-anchor=\"end\">cycles</text>\n";
  out += "</svg>\n";
}

/// Every tile's compute cycles over the run.
void writeComputeHeatmap(const Report &r, std::string &out) {
  const SimulationResult &result = r.result;
  const std::vector<uint64_t> &tileCycles = r.result.tileComputeCycles;
  const uint64_t maxTile = r.data.maxTileCycles;
  const uint64_t busiestTile = r.data.busiestTile;
  const uint64_t idleTiles = r.data.idleTiles;
  const double meanTile = r.data.meanTileCycles;
  auto cyclesText = [&](uint64_t cycles) { return r.cyclesText(cycles); };
  const uint32_t tiles = uint32_t(tileCycles.size());
  out += "<h2>Tiles: cycles busy in compute sets over the run</h2>\n";
  out += "<p class=\"note\">" + num(tiles) + " tiles, tile t at row t / " +
         num(std::max<uint32_t>(1, std::min<uint32_t>(tiles, kHeatmapColumns))) +
         ", column t mod " +
         num(std::max<uint32_t>(1, std::min<uint32_t>(tiles, kHeatmapColumns))) +
         ". Busiest: tile " + num(busiestTile) + " with " + cyclesText(maxTile) +
         " (the run's compute steps take " + groupedThousands(result.computeCycles) +
         "); mean " + fixed(meanTile, 1) + " cycles; " + num(idleTiles) +
         " tiles idle (grey). The colour scale runs from the least to the "
         "most busy tile.</p>\n";
  out += tileHeatmap("heatmap", "tile", "cycles", "cycles", "idle (0)", tileCycles,
                     [&](uint32_t t, uint64_t c) {
                       return "tile " + num(t) + ": " + cyclesText(c) +
                              (result.computeCycles
                                   ? ", " +
                                         fixed(100.0 * double(c) / result.computeCycles, 1) +
                                         "% of the compute steps"
                                   : std::string());
                     });
}

/// Per memory class, every tile's live bytes at the class's peak step.
void writeMemoryHeatmaps(const Report &r, std::string &out) {
  const Package &package = r.package;
  const TargetModel &target = r.target;
  for (MemoryClass memoryClass : {MemoryClass::Standard, MemoryClass::Interleaved}) {
    std::vector<uint64_t> bytes;
    uint32_t step = 0;
    if (!peakStepBytes(package, memoryClass, target.tiles, step, bytes))
      continue;
    const std::string name(memoryClassName(memoryClass));
    const uint64_t most = *std::max_element(bytes.begin(), bytes.end());
    out += "<h2>Tiles: " + name + " memory at its peak step</h2>\n";
    out += "<p class=\"note\">The bytes of the placed buffers live on each tile "
           "at step " + num(step) + ", where " + name +
           " memory holds the most on one tile (" + groupedThousands(most) +
           " bytes; the reserved area of code and state not included).</p>\n";
    out += tileHeatmap("memory-" + name, "memtile", "bytes", "bytes", "none (0)", bytes,
                       [&](uint32_t t, uint64_t b) {
                         return "tile " + num(t) + ": " + groupedThousands(b) + " " + name +
                                " bytes live at step " + num(step);
                       });
  }
}

/// A row per source op, largest first.
void writeOps(const Report &r, std::string &out) {
  const Package &package = r.package;
  const SimulationResult &result = r.result;
  const bool hasLoops = r.data.hasLoops;
  auto us = [&](uint64_t cycles) { return r.us(cycles); };
  out += "<h2>Ops</h2>\n";
  out += "<p class=\"note\">Each op of the compiled module with the steps it "
         "lowered to (named after it); a sync counts for the step after it. "
         "Largest first; the rows sum to the run's cycles.</p>\n";
  std::vector<OpCycles> ops = cyclesByOp(package, result);
  std::vector<size_t> opOrder(ops.size());
  for (size_t i = 0; i < ops.size(); ++i)
    opOrder[i] = i;
  std::sort(opOrder.begin(), opOrder.end(), [&](size_t a, size_t b) {
    return ops[a].cycles() != ops[b].cycles() ? ops[a].cycles() > ops[b].cycles()
                                              : a < b;
  });
  out += "<table id=\"ops\">\n<tr><th>op</th><th>location</th><th>steps</th>"
         "<th>cycles</th><th>\xC2\xB5s</th><th>share</th><th>compute</th>"
         "<th>exchange</th><th>sync</th>" +
         std::string(hasLoops ? "<th>loop control</th>" : "") +
         "<th>exchange bytes</th></tr>\n";
  for (size_t i : opOrder) {
    const OpCycles &op = ops[i];
    out += "<tr><td>" + html(op.op) + "</td><td>" + html(op.location) +
           "</td><td>" + num(op.steps) + "</td><td>" + groupedThousands(op.cycles()) +
           "</td><td>" + us(op.cycles()) + "</td><td>" +
           (result.cycles ? fixed(100.0 * op.cycles() / result.cycles, 1) + "%"
                          : std::string("-")) +
           "</td><td>" + groupedThousands(op.computeCycles) + "</td><td>" +
           groupedThousands(op.exchangeCycles) + "</td><td>" + groupedThousands(op.syncCycles) +
           (hasLoops ? "</td><td>" + groupedThousands(op.loopCycles) : std::string()) +
           "</td><td>" + groupedThousands(op.exchangeBytes) + "</td></tr>\n";
  }
  out += "</table>\n";
}

/// With --compare, the two runs per op.
void writeComparison(const Report &r, std::string &out) {
  const SimulationResult &result = r.result;
  const ProfileComparison *other = r.other;
  if (other && other->ops) {
    out += "<h2>Comparison</h2>\n";
    out += "<p class=\"note\">This run against " + html(other->name) +
           " (inputs from the same seed), per op: " + groupedThousands(result.cycles) +
           " against " + groupedThousands(other->cycles) + " cycles.</p>\n";
    out += "<table id=\"comparison\">\n<tr><th>op</th><th>location</th>"
           "<th>cycles</th><th>other cycles</th><th>delta</th></tr>\n";
    for (const OpComparison &row : *other->ops)
      out += "<tr><td>" + html(row.op) + "</td><td>" + html(row.location) +
             "</td><td>" + groupedThousands(row.cycles) + "</td><td>" +
             groupedThousands(row.otherCycles) + "</td><td>" +
             (row.otherCycles >= row.cycles ? "+" + groupedThousands(row.otherCycles - row.cycles)
                                            : "-" + groupedThousands(row.cycles - row.otherCycles)) +
             "</td></tr>\n";
    out += "</table>\n";
  }
}

/// The largest buffers' lives over the program's steps.
void writeLiveness(const Report &r, std::string &out) {
  const Package &package = r.package;
  if (!package.buffers.empty() && !package.program.empty()) {
    constexpr size_t kShown = 24;
    std::vector<size_t> order(package.buffers.size());
    for (size_t i = 0; i < order.size(); ++i)
      order[i] = i;
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      return package.buffers[a].bytes != package.buffers[b].bytes
                 ? package.buffers[a].bytes > package.buffers[b].bytes
                 : a < b;
    });
    order.resize(std::min(order.size(), kShown));
    const double left = 240, plot = 700, row = 16;
    const double steps = double(package.program.size());
    auto x = [&](double step) { return left + step * plot / steps; };
    out += "<h2>Liveness: the largest buffers</h2>\n<p class=\"note\">The " +
           num(order.size()) + " largest of the program's " +
           num(package.buffers.size()) +
           " placed buffers (bytes on each tile they span), each from the "
           "first to the last of the program's " + num(package.program.size()) +
           " steps that use it; blue standard, green interleaved memory.</p>\n";
    out += "<svg id=\"liveness\" width=\"" + num(uint64_t(left + plot + 10)) +
           "\" height=\"" + num(uint64_t(row * order.size() + 20)) +
           "\" xmlns=\"http://www.w3.org/2000/svg\">\n";
    std::string rows;
    for (size_t r = 0; r < order.size(); ++r) {
      const PackageBuffer &buffer = package.buffers[order[r]];
      const double y = 4 + r * row;
      const bool standard = buffer.memoryClass == MemoryClass::Standard;
      const std::string tip = buffer.name + ": " + groupedThousands(buffer.bytes) +
                              " bytes on each of " + num(buffer.tiles.size()) + " tiles (" +
                              std::string(memoryClassName(buffer.memoryClass)) + "), steps " +
                              num(buffer.firstStep) + " to " + num(buffer.lastStep) +
                              (buffer.location.empty() ? "" : ", " + buffer.location);
      out += "<text x=\"0\" y=\"" + fixed(y + 11, 1) + "\" font-size=\"11\">" +
             html(buffer.name) + "</text>\n";
      out += "<rect class=\"live\" data-buffer=\"" + html(buffer.name) +
             "\" data-first=\"" + num(buffer.firstStep) + "\" data-last=\"" +
             num(buffer.lastStep) + "\" data-bytes=\"" + num(buffer.bytes) +
             "\" x=\"" + fixed(x(buffer.firstStep), 1) + "\" y=\"" + fixed(y, 1) +
             "\" width=\"" +
             fixed(std::max(1.0, x(buffer.lastStep + 1.0) - x(buffer.firstStep)), 1) +
             "\" height=\"" + fixed(row - 3, 1) + "\" fill=\"" +
             (standard ? "#4e79a7" : "#59a14f") + "\"><title>" + html(tip) +
             "</title></rect>\n";
      rows += "<tr><td>" + html(buffer.name) + "</td><td>" +
              std::string(memoryClassName(buffer.memoryClass)) + "</td><td>" +
              groupedThousands(buffer.bytes) + "</td><td>" + num(buffer.tiles.size()) + "</td><td>" +
              num(buffer.firstStep) + "</td><td>" + num(buffer.lastStep) +
              "</td><td>" + html(buffer.location) + "</td></tr>\n";
    }
    out += "</svg>\n<table id=\"buffers\">\n<tr><th>buffer</th><th>class</th>"
           "<th>bytes per tile</th><th>tiles</th><th>first step</th><th>last "
           "step</th><th>location</th></tr>\n" +
           rows + "</table>\n";
  }
}

/// The planner's finalists (package metadata "finalist.<op>.<rank>").
void writeFinalists(const Report &r, std::string &out) {
  const Package &package = r.package;
  std::string finalistRows;
  for (const auto &[key, value] : package.metadata)
    if (key.rfind("finalist.", 0) == 0) {
      const size_t dot = key.rfind('.');
      finalistRows += "<tr><td>" + html(key.substr(9, dot - 9)) + "</td><td>" +
                      html(key.substr(dot + 1)) + "</td><td>" + html(value) +
                      "</td></tr>\n";
    }
  if (!finalistRows.empty())
    out += "<h2>Plan finalists</h2>\n<p class=\"note\">Each re-ranked "
           "matmul's best plans, best first: the planner's analytical cycles "
           "beside the cycles of its phases as scheduled and whether its "
           "buffers fit when placed.</p>\n<table id=\"finalists\">\n<tr><th>"
           "op</th><th>rank</th><th>plan</th></tr>\n" +
           finalistRows + "</table>\n";
}

/// A row per exchange phase: horizon against its lower bound.
void writePhases(const Report &r, std::string &out) {
  const TargetModel &target = r.target;
  const std::vector<ProfilePhase> &phases = r.data.phases;
  auto us = [&](uint64_t cycles) { return r.us(cycles); };
  out += "<h2>Exchange phases</h2>\n";
  out += "<p class=\"note\">Cycles: the horizon (the event at which the "
         "last receiver is done, under the hardware's exchange rules) plus the "
         "fixed cost of a phase, " +
         num(target.exchange.phaseFixedCycles) +
         " cycles, and any copies a tile makes to itself. The lower bound is "
         "the most events any tile sends or receives plus the least route "
         "latency of the phase.</p>\n";
  out += "<table id=\"phases\">\n<tr><th>phase</th><th>runs</th><th>cycles</th>"
         "<th>\xC2\xB5s</th><th>transfers</th><th>horizon</th>"
         "<th>lower bound</th><th>horizon / bound</th></tr>\n";
  for (const ProfilePhase &row : phases)
    out += "<tr><td>" + html(row.name) + "</td><td>" + num(row.runs) +
           "</td><td>" + groupedThousands(row.cycles) + "</td><td>" + us(row.cycles) +
           "</td><td>" + groupedThousands(row.transfers) + "</td><td>" +
           groupedThousands(row.sendHorizon) + "</td><td>" + groupedThousands(row.bound) +
           "</td><td>" +
           (row.bound ? fixed(double(row.sendHorizon) / row.bound, 3)
                      : std::string("-")) +
           "</td></tr>\n";
  out += "</table>\n";
}

/// A row per compute set: slowest tile, mean and balance.
void writeComputeSets(const Report &r, std::string &out) {
  const std::vector<ProfileComputeSet> &computeSets = r.data.computeSets;
  auto us = [&](uint64_t cycles) { return r.us(cycles); };
  out += "<h2>Compute sets</h2>\n";
  out += "<p class=\"note\">Cycles per run: the slowest tile's (vertices on "
         "one tile run one after another). Mean over the tiles running a "
         "vertex; balance = mean / slowest.</p>\n";
  out += "<table id=\"compute-sets\">\n<tr><th>compute set</th><th>kernel</th>"
         "<th>vertices</th><th>runs</th><th>slowest tile</th><th>cycles</th>"
         "<th>\xC2\xB5s</th><th>mean cycles</th><th>balance</th></tr>\n";
  for (const ProfileComputeSet &row : computeSets)
    out += "<tr><td>" + html(row.name) + "</td><td>" + html(row.kernel) +
           "</td><td>" + groupedThousands(row.vertices) + "</td><td>" + num(row.runs) +
           "</td><td>" + num(row.slowestTile) + "</td><td>" +
           groupedThousands(row.cycles) + "</td><td>" + us(row.cycles) + "</td><td>" +
           fixed(row.mean(), 1) + "</td><td>" + fixed(row.balance(), 3) +
           "</td></tr>\n";
  out += "</table>\n";
}

/// Memory touched against the regions, the reserved area and the compiler's figures.
void writeMemory(const Report &r, std::string &out) {
  const Package &package = r.package;
  const TargetModel &target = r.target;
  const SimulationResult &result = r.result;
  const MemoryRegion *regions[2] = {&r.target.region(MemoryClass::Standard),
                                    &r.target.region(MemoryClass::Interleaved)};
  const char *regionNames[2] = {"standard", "interleaved"};
  out += "<h2>Memory</h2>\n";
  out += "<p class=\"note\">Touched: on the tile using the most, the bytes "
         "from the region's base to the highest byte the program touched "
         "(the runtime image and reserved code included), from the "
         "simulation's addresses.</p>\n";
  out += "<table id=\"memory\">\n<tr><th>memory class</th><th>touched bytes"
         "</th><th>region bytes</th><th>used</th></tr>\n";
  for (int r = 0; r < 2; ++r)
    out +=
        std::string("<tr><td>") + regionNames[r] + "</td><td>" +
        groupedThousands(result.touchedBytes[r]) + "</td><td>" +
        groupedThousands(regions[r]->bytes) + "</td><td>" +
        (regions[r]->bytes
             ? fixed(100.0 * double(result.touchedBytes[r]) / regions[r]->bytes,
                     1) +
                   "%"
             : std::string("-")) +
        "</td></tr>\n";
  out += "</table>\n";
  // The program's code and state, sized from what the package holds.
  ReservedArea reserved(target);
  if (!tallyReservedArea(package, target, reserved)) {
    const uint32_t tile = reserved.busiestTile();
    out += "<p class=\"note\">Kept for the program's code and state above the "
           "runtime image, sized from the package (the compiler's figure is "
           "memoryReservedStandardBytes below): " +
           groupedThousands(reserved.bytes()) + " bytes on every tile; on tile " +
           num(tile) + ", the busiest, " + groupedThousands(reserved.exchangeCodeBytes(tile)) +
           " of exchange code, " + groupedThousands(reserved.vertexStateBytes(tile)) +
           " of vertex state and " + groupedThousands(reserved.kernelCodeBytes(tile)) +
           " of generated kernels' code.</p>\n";
    out += "<table id=\"reserved\">\n<tr><th>part</th><th>bytes on tile " +
           num(tile) + "</th></tr>\n<tr><td>exchange code</td><td>" +
           groupedThousands(reserved.exchangeCodeBytes(tile)) +
           "</td></tr>\n<tr><td>vertex state</td><td>" +
           groupedThousands(reserved.vertexStateBytes(tile)) +
           "</td></tr>\n<tr><td>kernel code</td><td>" +
           groupedThousands(reserved.kernelCodeBytes(tile)) + "</td></tr>\n</table>\n";
  }
  std::string memoryKeys;
  for (const auto &[key, value] : package.metadata)
    if (key.rfind("memory", 0) == 0)
      memoryKeys +=
          "<tr><td>" + html(key) + "</td><td>" + html(value) + "</td></tr>\n";
  if (!memoryKeys.empty())
    out += "<p class=\"note\">The compiler's figures (package metadata):</p>\n"
           "<table "
           "id=\"memory-metadata\">\n<tr><th>key</th><th>bytes</th></tr>\n" +
           memoryKeys + "</table>\n";
  else
    out +=
        "<p class=\"note\">The package states no memory peak or bound.</p>\n";
}

} // namespace

std::string ipu::profileHtml(const Package &package, const TargetModel &target,
                             const SimulationResult &result,
                             const ProfileComparison *other) {
  const ProfileData data = profileData(package, target, result);
  const Report r{package, target, result, other, data, target.clockHz / 1e6};
  std::string out;
  for (void (*section)(const Report &, std::string &) :
       {writeHead, writeTimeline, writeComputeHeatmap, writeMemoryHeatmaps,
        writeOps, writeComparison, writeLiveness, writeFinalists, writePhases,
        writeComputeSets, writeMemory})
    section(r, out);
  out += "<script type=\"application/json\" id=\"profile-data\">\n" +
         figuresJson(r) + "\n</script>\n</body>\n</html>\n";
  return out;
}

std::optional<std::string> ipu::writeProfile(const std::string &directory,
                                             const Package &package,
                                             const TargetModel &target,
                                             const SimulationResult &result,
                                             const ProfileComparison *other) {
  std::error_code error;
  if (std::filesystem::exists(directory, error) &&
      !std::filesystem::is_directory(directory, error))
    return "cannot write profile: '" + directory + "' is not a directory";
  std::filesystem::create_directories(directory, error);
  if (error)
    return "cannot create profile directory '" + directory +
           "': " + error.message();
  std::string path =
      (std::filesystem::path(directory) / "profile.html").string();
  std::string text = profileHtml(package, target, result, other);
  std::FILE *file = std::fopen(path.c_str(), "wb");
  if (!file)
    return "cannot write profile '" + path + "': " + std::strerror(errno);
  bool failed = std::fwrite(text.data(), 1, text.size(), file) != text.size();
  failed |= std::fclose(file) != 0;
  if (failed)
    return "cannot write profile '" + path + "': " + std::strerror(errno);
  return std::nullopt;
}
