//===- OpCycles.cpp - A simulated run's cycles per source op -------------===//

#include "IPU/Runtime/OpCycles.h"

#include <map>

using namespace ipu;

std::string ipu::opOfStep(const std::string &stepName) {
  return stepName.substr(0, stepName.find('.'));
}

std::vector<OpCycles> ipu::cyclesByOp(const Package &package,
                                      const SimulationResult &result) {
  std::vector<OpCycles> rows;
  std::map<std::string, size_t> rowOf;
  auto rowFor = [&](const std::string &name,
                    const std::string &location) -> OpCycles & {
    auto [at, inserted] = rowOf.try_emplace(opOfStep(name), rows.size());
    if (inserted) {
      rows.emplace_back();
      rows.back().op = opOfStep(name);
    }
    OpCycles &row = rows[at->second];
    if (row.location.empty())
      row.location = location; // Its first step's.
    return row;
  };
  uint64_t pendingSync = 0;
  auto take = [&](OpCycles &row, const StepCycles &step,
                  uint64_t OpCycles::*field) {
    row.*field += step.cycles;
    row.syncCycles += pendingSync;
    pendingSync = 0;
    if (field != &OpCycles::loopCycles)
      row.steps += step.runs;
  };
  for (const StepCycles &step : result.steps) {
    switch (step.kind) {
    case StepKind::Sync:
      pendingSync += step.cycles;
      break;
    case StepKind::Compute:
      if (step.index < package.computeSets.size()) {
        const ComputeSet &set = package.computeSets[step.index];
        take(rowFor(set.name, set.location), step, &OpCycles::computeCycles);
      }
      break;
    case StepKind::Exchange:
      if (step.index < package.phases.size()) {
        const PackagePhase &phase = package.phases[step.index];
        OpCycles &row = rowFor(phase.name, phase.location);
        take(row, step, &OpCycles::exchangeCycles);
        const ExchangePhase &transfers = phase.phase;
        for (size_t t = 0; t < transfers.size(); ++t)
          row.exchangeBytes += uint64_t(transfers.words[t]) * 4 *
                               (transfers.destBegin[t + 1] - transfers.destBegin[t]) *
                               step.runs;
      }
      break;
    case StepKind::Loop:
      if (step.index < package.loops.size()) {
        const PackageLoop &loop = package.loops[step.index];
        take(rowFor(loop.name, loop.location), step, &OpCycles::loopCycles);
      }
      break;
    case StepKind::StreamIn:
    case StepKind::StreamOut:
      // Only streams during the run cost device cycles: a row per buffer
      // streamed (a repeated layer's weight slot).
      if (step.cycles && step.index < package.streams.size())
        take(rowFor(package.streams[step.index].name, ""), step, &OpCycles::hostCycles);
      break;
    }
  }
  if (pendingSync) {
    rows.emplace_back();
    rows.back().op = "sync";
    rows.back().syncCycles = pendingSync;
  }
  return rows;
}

std::vector<OpComparison> ipu::compareOps(const std::vector<OpCycles> &ops,
                                          const std::vector<OpCycles> &other) {
  std::vector<OpComparison> rows;
  std::map<std::string, size_t> rowOf;
  for (const OpCycles &op : ops) {
    rowOf[op.op] = rows.size();
    rows.push_back({op.op, op.location, op.cycles(), 0});
  }
  for (const OpCycles &op : other) {
    auto [at, inserted] = rowOf.try_emplace(op.op, rows.size());
    if (inserted)
      rows.push_back({op.op, op.location, 0, 0});
    rows[at->second].otherCycles += op.cycles();
  }
  return rows;
}
