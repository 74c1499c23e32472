//===- sensitivity-bench.cpp - How much the headline figures rest on guesses -===//
//
// bench=sensitivity: plans the SigLIP MLP GEMMs in the configurations we
// headline (f16 partials allowed, as --ipu-compile="partials=any": fc1 and
// fc2 alone and the MLP as one program; and fc1 and fc2 with f8 inputs and
// f16 partials, the only partials poplibs has for f8) with the planner
// library, as --ipu-plan-gemm does, once with the ipu21 model and then with
// each cost constant of the TargetModel at 0.5x and 2x. One line per (constant,
// factor) gives the planned cycles of each figure and their change. A figure
// is the chosen plan's cycles with its exchange phases timed as the compiler
// schedules them (rerank=1), which matches the simulated cycles within about
// 2% (bench/run siglip, planError), so a constant the figures barely move
// with is one the conclusions do not rest on; a plan that changes with a
// constant shows as `plansChanged`. A constant that moves no figure at
// either factor gets no row: the last line names them
// (`case=moves-nothing constants=...`), since the headline figures do not
// rest on them at all. A rate is fractional (x0.5 of 1 is 0.5); a
// whole-unit field is rounded, and a factor that leaves it where it is
// is not run: `case=unscalable` names each such constant and factor
// instead of a row that claims the figures do not move. The host link's rate (measured, with PCIe's bound) ends
// the table: it moves no planned figure, only streamed layers' waits.
// Not covered yet: attention, the block, the whole MLP program (GELU,
// casts, reductions) and a tower layer, which need a compile and a
// simulation per constant and factor.
//
//   sensitivity-bench            every constant marked as an assumption
//   sensitivity-bench --all      every cost constant
//
//===----------------------------------------------------------------------===//

#include "IPU/Planning/GemmProgram.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

using namespace ipu;

namespace {

GemmProblem gemm(int64_t m, int64_t k, int64_t n, ElementType in) {
  GemmProblem p;
  p.m = m;
  p.k = k;
  p.n = n;
  p.inType = in;
  p.outType = ElementType::F32;
  // The headline configurations: f16 partials allowed.
  p.allowHalfPartials = true;
  return p;
}

/// The figures of one model: planned cycles (0 when nothing fits) and the
/// chosen plans, joined.
struct Figures {
  uint64_t cycles[5] = {0, 0, 0, 0, 0};
  std::string plans;
};

const char *const kFigureNames[5] = {"fc1Any", "fc2Any", "mlpAny", "fc1F8", "fc2F8"};

/// Plans `gemms` as one program; the sum of their estimates, or 0.
uint64_t planProgram(const TargetModel &target, std::vector<ProgramGemm> gemms,
                     std::string &plans) {
  planGemmProgram(target, gemms, 4, /*rerank=*/1);
  uint64_t total = 0;
  for (const ProgramGemm &g : gemms) {
    if (g.error)
      return 0;
    const GemmPlanChoice &best = g.search.finalists.front();
    total += best.scheduled ? best.scheduledCycles : best.cost.totalCycles;
    plans += g.search.finalists.front().plan.str() + ";";
  }
  return total;
}

Figures figures(const TargetModel &target) {
  // The SigLIP MLP (examples/siglip-mlp.mlir): 729 tokens, d 1152, hidden
  // 4304; the hidden activation in f16, the result in f32. The f8 GEMMs run
  // alone: an f8 hidden activation needs the f8 cast of a later issue.
  auto layer = [](int64_t k, int64_t n, ElementType in, ElementType out) {
    ProgramGemm g;
    g.problem = gemm(729, k, n, in);
    g.problem.outType = out;
    return g;
  };
  Figures f;
  const ElementType f16 = ElementType::F16, f8 = ElementType::F8E4M3FN;
  f.cycles[0] = planProgram(target, {layer(1152, 4304, f16, ElementType::F32)},
                            f.plans);
  f.cycles[1] = planProgram(target, {layer(4304, 1152, f16, ElementType::F32)},
                            f.plans);
  f.cycles[2] = planProgram(target,
                            {layer(1152, 4304, f16, f16),
                             layer(4304, 1152, f16, ElementType::F32)},
                            f.plans);
  f.cycles[3] = planProgram(target, {layer(1152, 4304, f8, ElementType::F32)},
                            f.plans);
  f.cycles[4] = planProgram(target, {layer(4304, 1152, f8, ElementType::F32)},
                            f.plans);
  return f;
}

bool movesAny(const Figures &f, const Figures &base) {
  for (int i = 0; i < 5; ++i)
    if (f.cycles[i] != base.cycles[i])
      return true;
  return false;
}

void print(const char *constant, const char *factor, double value,
           const Figures &f, const Figures &base) {
  std::printf("bench=sensitivity case=%s-%s constant=%s factor=%s value=%g",
              constant, factor, constant, factor, value);
  for (int i = 0; i < 5; ++i) {
    std::printf(" %sCycles=%llu", kFigureNames[i],
                (unsigned long long)f.cycles[i]);
    if (base.cycles[i] && f.cycles[i])
      std::printf(" %sChangePercent=%+.2f", kFigureNames[i],
                  100.0 * (double(f.cycles[i]) - double(base.cycles[i])) /
                      double(base.cycles[i]));
  }
  std::printf(" plansChanged=%s\n", f.plans == base.plans ? "false" : "true");
}

} // namespace

int main(int argc, char **argv) {
  bool all = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--all") == 0) {
      all = true;
    } else {
      std::fprintf(stderr,
                   "sensitivity-bench: unknown option '%s' (known: --all)\n",
                   argv[i]);
      return 1;
    }
  }
  const TargetModel ipu21 = TargetModel::ipu21();
  const Figures base = figures(ipu21);
  print("none", "1", 0, base, base);
  std::string movesNothing, unscalable;
  for (const TargetModel::Constant &constant : TargetModel::constants()) {
    if (!all && !constant.assumption)
      continue;
    struct Row {
      const char *factor;
      double value;
      Figures figures;
    };
    std::vector<Row> rows;
    bool moved = false;
    for (double factor : {0.5, 2.0}) {
      TargetModel scaled = ipu21;
      // A whole-unit field is rounded; a rate takes the factor as it is.
      const double current = constant.get(scaled);
      double value = current * factor;
      if (!constant.fractional())
        value = std::round(value);
      if (value <= 0 || value == current) {
        unscalable += (unscalable.empty() ? "" : ",") + std::string(constant.name) + "@" +
                      (factor < 1 ? "0.5" : "2") + "(value=" + std::to_string(current) + ")";
        continue;
      }
      constant.set(scaled, value);
      rows.push_back({factor < 1 ? "0.5" : "2", value, figures(scaled)});
      moved |= movesAny(rows.back().figures, base);
    }
    if (!moved) {
      if (!rows.empty())
        movesNothing += (movesNothing.empty() ? "" : ",") + std::string(constant.name);
      continue;
    }
    for (const Row &row : rows)
      print(constant.name, row.factor, row.value, row.figures, base);
  }
  std::printf("bench=sensitivity case=moves-nothing constants=%s\n",
              movesNothing.empty() ? "none" : movesNothing.c_str());
  std::printf("bench=sensitivity case=unscalable constants=%s\n",
              unscalable.empty() ? "none" : unscalable.c_str());
  // The host link is no planner figure: its rate is a double, measured
  // (the user's C600), with PCIe's bound beside it. A 30.4 MB so400m layer
  // of f16 weights streamed during the run waits this long for it.
  const uint64_t layerBytes = 30400000;
  std::printf("bench=sensitivity case=host-link constant=hostLinkBytesPerSecond "
              "measuredBytesPerSecond=%.4g pcieBoundBytesPerSecond=%.4g "
              "layerStreamCycles=%llu layerStreamCyclesPcieBound=%llu\n",
              ipu21.hostLinkBytesPerSecond, ipu21.hostLinkPcieBoundBytesPerSecond,
              (unsigned long long)ipu21.hostStreamCycles(layerBytes),
              (unsigned long long)ipu21.hostStreamCyclesPcieBound(layerBytes));
  return 0;
}
