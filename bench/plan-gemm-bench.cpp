//===- plan-gemm-bench.cpp - How fast and how well matmuls are planned ----===//
//
// bench=plan-gemm: plans each case with the planner library, as
// --ipu-compile does (the search, then its 4 finalists lowered, scheduled
// and placed to re-rank them), and prints one line per case: planning
// seconds (re-ranking included), the space, the chosen plan, its analytical
// and scheduled cycles and efficiency against the f16 peak (as the seed
// reports it; above 100% for f8) and against the peak of the plan's own
// input and partials types (never above 100%).
//
//   plan-gemm-bench                    the SigLIP MLP GEMMs, f16 and f8, ipu21
//   plan-gemm-bench --deepbench        14 DeepBench training GEMMs (M, N, K
//                                      from 16 to 9124) and the 16k cube
//   plan-gemm-bench --shape MxKxN [--dtype f16] [--out f32] [--target ipu21]
//
// A shape whose every plan overflows tile memory prints status=error with
// the bytes its smallest plan needs: until serial splits land (issue "Any
// GEMM fits"), that is the planner's honest answer for the large ones.
//
//===----------------------------------------------------------------------===//

#include "IPU/Planning/GemmProgram.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

using namespace ipu;

namespace {

struct Case {
  std::string name;
  GemmProblem problem;
};

int fail(const std::string &message) {
  std::fprintf(stderr, "plan-gemm-bench: %s\n", message.c_str());
  return 1;
}

/// Plans one case and prints its line; returns the planning seconds.
double run(const Case &c, const TargetModel &target) {
  std::vector<ProgramGemm> program(1);
  program[0].problem = c.problem;
  auto start = std::chrono::steady_clock::now();
  planGemmProgram(target, program, 4, /*rerank=*/4);
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  const GemmPlanSearch &search = program[0].search;
  const std::optional<std::string> &error = program[0].error;
  const GemmProblem &p = c.problem;
  std::printf("bench=plan-gemm case=%s target=%s shape=%lldx%lldx%lld dtype=%s "
              "out=%s planningSeconds=%.4f candidates=%llu matchingPlans=%llu "
              "costedPlans=%llu prunedPlans=%llu fittingPlans=%llu",
              c.name.c_str(), target.name.c_str(), (long long)p.m,
              (long long)p.k, (long long)p.n,
              std::string(elementTypeName(p.inType)).c_str(),
              std::string(elementTypeName(p.outType)).c_str(), seconds,
              (unsigned long long)search.candidates,
              (unsigned long long)search.matching,
              (unsigned long long)search.costed,
              (unsigned long long)search.pruned,
              (unsigned long long)search.fitting);
  if (error) {
    std::printf(" status=error error=\"%s\"\n", error->c_str());
    return seconds;
  }
  const GemmPlanChoice &best = search.finalists.front();
  std::string plan = best.plan.str();
  for (char &ch : plan)
    if (ch == ' ')
      ch = ',';
  double flops = 2.0 * p.m * p.k * p.n;
  double deviceSeconds = best.cost.totalCycles / target.clockHz;
  // The splits apart: parallel over tiles (rows x cols x inner) and serial
  // (chunks of M run one after another).
  std::printf(" plan=%s parallelSplits=%ux%ux%u serialSplit=%u estimatedCycles=%llu "
              "scheduledCycles=%llu computeCycles=%llu "
              "exchangeCycles=%llu reductionCycles=%llu syncCycles=%llu "
              "estimatedEfficiencyPercent=%.2f estimatedEfficiencyOwnPeakPercent=%.2f "
              "peakStandardBytes=%llu "
              "peakInterleavedBytes=%llu activeTiles=%u\n",
              plan.c_str(), best.plan.rows, best.plan.cols, best.plan.inner,
              best.plan.serial, (unsigned long long)best.cost.totalCycles,
              (unsigned long long)(best.scheduled ? best.scheduledCycles
                                                  : best.cost.totalCycles),
              (unsigned long long)best.cost.computeCycles,
              (unsigned long long)best.cost.exchangeCycles,
              (unsigned long long)best.cost.reductionCycles,
              (unsigned long long)best.cost.syncCycles,
              100.0 * flops / deviceSeconds / target.peakFlopsF16(),
              100.0 * (flops / 2 /
                       (double(target.tiles) *
                        target.ampMacsPerCycle(p.inType, best.plan.partials))) /
                  double(best.cost.totalCycles),
              (unsigned long long)best.cost.peakBytes[0],
              (unsigned long long)best.cost.peakBytes[1], best.cost.activeTiles);
  return seconds;
}

} // namespace

int main(int argc, char **argv) {
  std::string shape, dtype = "f16", out = "f32", targetName = "ipu21";
  bool deepbench = false;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&]() -> const char * {
      return i + 1 < argc ? argv[++i] : nullptr;
    };
    const char *v = nullptr;
    if (arg == "--shape" && (v = value()))
      shape = v;
    else if (arg == "--deepbench")
      deepbench = true;
    else if (arg == "--dtype" && (v = value()))
      dtype = v;
    else if (arg == "--out" && (v = value()))
      out = v;
    else if (arg == "--target" && (v = value()))
      targetName = v;
    else
      return fail("unknown or incomplete option '" + arg + "'");
  }
  std::optional<TargetModel> target = TargetModel::byName(targetName);
  if (!target)
    return fail("unknown target '" + targetName + "'; known: " +
                TargetModel::knownNames());
  std::optional<ElementType> in = parseElementType(dtype);
  std::optional<ElementType> result = parseElementType(out);
  if (!in)
    return fail("unknown --dtype '" + dtype + "'");
  if (!result || (*result != ElementType::F32 && *result != ElementType::F16))
    return fail("--out must be f32 or f16, got '" + out + "'");

  auto problem = [&](int64_t m, int64_t k, int64_t n, ElementType input) {
    GemmProblem p;
    p.m = m;
    p.k = k;
    p.n = n;
    p.inType = input;
    p.accType = ElementType::F32;
    p.outType = *result;
    return p;
  };
  if (!shape.empty()) {
    long long m = 0, k = 0, n = 0;
    if (std::sscanf(shape.c_str(), "%lldx%lldx%lld", &m, &k, &n) != 3 || m < 1 ||
        k < 1 || n < 1)
      return fail("--shape must be MxKxN with positive sizes, got '" + shape + "'");
    run({"matmul-" + shape + "-" + dtype, problem(m, k, n, *in)}, *target);
    return 0;
  }
  if (deepbench) {
    // DeepBench's training GEMMs (code/kernels/gemm_problems.h, as (m, n,
    // k) with C = m x n): here M = m, K = k, N = n. Chosen to span its
    // families: the 16-column RNN steps, the 7000-column batches, the
    // speech models' 5124 x 9124 and 35 x 8457, and the translation ones.
    struct Shape {
      int64_t m, n, k;
    };
    const Shape shapes[] = {{1760, 16, 1760},  {1760, 7000, 1760}, {2048, 16, 2048},
                            {2560, 7000, 2560}, {4096, 16, 4096},   {4096, 7000, 4096},
                            {5124, 9124, 1760}, {35, 8457, 1760},   {7680, 16, 2560},
                            {3072, 128, 1024},  {1024, 700, 512},   {8448, 16, 2816},
                            {6144, 32, 2560},   {512, 16, 512}};
    for (const Shape &s : shapes) {
      std::string name = "deepbench-" + std::to_string(s.m) + "x" +
                         std::to_string(s.k) + "x" + std::to_string(s.n) + "-" + dtype;
      run({name, problem(s.m, s.k, s.n, *in)}, *target);
    }
    run({"cube-16384x16384x16384-" + dtype, problem(16384, 16384, 16384, *in)},
        *target);
    return 0;
  }
  // The SigLIP So400m MLP: fc1 729x1152x4304 and fc2 729x4304x1152.
  for (ElementType type : {ElementType::F16, ElementType::F8E4M3FN}) {
    std::string suffix = type == ElementType::F16 ? "f16" : "f8";
    double seconds = run({"siglip-mlp-fc1-" + suffix, problem(729, 1152, 4304, type)},
                         *target);
    seconds += run({"siglip-mlp-fc2-" + suffix, problem(729, 4304, 1152, type)},
                   *target);
    std::printf("bench=plan-gemm case=siglip-mlp-both-%s target=%s "
                "planningSeconds=%.4f\n",
                suffix.c_str(), target->name.c_str(), seconds);
  }
  return 0;
}
