//===- GemmProgram.cpp - Planning a program's matmuls together -----------===//

#include "IPU/Planning/GemmProgram.h"
#include "IPU/Planning/GemmLayouts.h"
#include "PlanningDetail.h"
#include "IPU/Support/Log.h"

#include <algorithm>
#include <chrono>
#include <thread>

using namespace ipu;
using namespace ipu::planning;
/// Checks and costs the plan the user gave, as the search would have.
static std::optional<std::string> keepGivenPlan(const TargetModel &target,
                                                ProgramGemm &gemm,
                                                const MemoryBudget &budget) {
  gemm.search = GemmPlanSearch();
  const GemmPlan &plan = *gemm.given;
  if (std::optional<std::string> why = checkGemmPlan(target, gemm.problem, plan))
    return *why;
  if (!gemm.constraints.matches(plan))
    return "it does not match constraint '" + gemm.constraints.str() + "'";
  GemmPlanChoice choice{plan, costGemmPlan(target, gemm.problem, plan)};
  gemm.search.candidates = gemm.search.matching = gemm.search.costed = 1;
  // Memory is the placement's to judge exactly; the model only reports.
  gemm.search.fitting = fitsMemory(target, choice.cost, budget) ? 1 : 0;
  gemm.search.finalists.push_back(choice);
  return std::nullopt;
}

namespace {

/// One pass of planGemmProgram, with per-matmul weight caps (empty: none).
/// Capped weights go to interleaved memory (unless the user said where):
/// standard memory is what every plan's activations and partials share.
GemmPlanConstraints withInterleavedWeights(GemmPlanConstraints constraints) {
  if (!constraints.weights)
    constraints.weights = MemoryClass::Interleaved;
  return constraints;
}

/// Lowers, schedules and places the first `count` finalists of `search`
/// (each on a thread of its own; results by index, so deterministic) and
/// orders them: those whose buffers fit first, then by scheduled cycles,
/// then by their standard bytes, then as the analytical order had them.
void rerankFinalists(const TargetModel &target, const GemmProblem &problem,
                     const MemoryBudget &budget, unsigned count,
                     GemmPlanSearch &search) {
  std::vector<GemmPlanChoice> &finalists = search.finalists;
  const size_t n = std::min<size_t>(count, finalists.size());
  // One finalist is scheduled too: its planned cycles are then its phases
  // as timed, not the analytical estimate.
  if (n == 0)
    return;
  // What stays resident beside each finalist: the others' data, the
  // weights not planned yet (taken as interleaved, where weights go), and
  // the homes of open class in the standard memory the finalist leaves,
  // the rest interleaved.
  auto reservedFor = [&](const GemmCost &cost) {
    const uint64_t standardRoom =
        target.allocatableBytes(MemoryClass::Standard) -
        std::min<uint64_t>(target.allocatableBytes(MemoryClass::Standard),
                           budget.reservedBytes[0] + cost.peakBytes[0]);
    const uint64_t homesInStandard = std::min(standardRoom, budget.openHomeBytes);
    return std::array<uint64_t, 2>{
        budget.reservedBytes[0] + homesInStandard,
        budget.reservedBytes[1] + budget.anyBytes + budget.openHomeBytes -
            homesInStandard};
  };
  std::vector<ScheduledPlan> results(n);
  std::vector<bool> failed(n, false);
  auto schedule = [&](size_t i) {
    const std::array<uint64_t, 2> reserved = reservedFor(finalists[i].cost);
    failed[i] = scheduleGemmPlan(target, problem, finalists[i].plan,
                                 finalists[i].cost, reserved.data(), results[i])
                    .has_value();
  };
  std::vector<std::thread> threads;
  for (size_t i = 1; i < n; ++i)
    threads.emplace_back(schedule, i);
  schedule(0);
  for (std::thread &thread : threads)
    thread.join();
  for (size_t i = 0; i < n; ++i) {
    finalists[i].scheduled = !failed[i];
    // (The scheduled cycles keep the model's other terms, host cycles
    // included: scheduleGemmPlan replaces only the exchange.)
    finalists[i].scheduledCycles = failed[i] ? UINT64_MAX : results[i].cycles;
    finalists[i].scheduledFits = !failed[i] && results[i].fits;
  }
  // Of equal cycles, the one leaving more standard memory (the scarcer
  // class, beside code and vertex state: weights the same size in either
  // class go interleaved); then the analytical order (the index).
  std::vector<size_t> order(n);
  for (size_t i = 0; i < n; ++i)
    order[i] = i;
  auto rank = [&](size_t i) {
    return std::make_tuple(!finalists[i].scheduledFits, finalists[i].scheduledCycles,
                           finalists[i].cost.peakBytes[0], i);
  };
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return rank(a) < rank(b); });
  std::vector<GemmPlanChoice> ranked;
  for (size_t i : order)
    ranked.push_back(finalists[i]);
  std::copy(ranked.begin(), ranked.end(), finalists.begin());
}

/// What the other matmuls of the program keep beside matmul `position`:
/// those before it as planned (their first finalists), those after it by
/// their weights' least share; with its weight cap, if any.
MemoryBudget budgetFor(const TargetModel &target,
                       const std::vector<ProgramGemm> &gemms, size_t position,
                       const std::vector<uint64_t> &caps) {
  MemoryBudget budget;
  if (!caps.empty() && caps[position] != UINT64_MAX)
  budget.weightCapBytes = caps[position];
  for (size_t other = 0; other < gemms.size(); ++other) {
    const ProgramGemm &peer = gemms[other];
    if (other < position && !peer.error) {
      // Its code, and its weights if resident, stay; its transient
      // buffers come and go while this one's weights are resident.
      const GemmCost &cost = peer.search.finalists.front().cost;
      budget.reservedBytes[0] += cost.codeBytes;
      budget.peerCodeBytes += cost.codeBytes;
      if (peer.problem.rhsIsWeight) {
        budget.reservedBytes[0] += cost.weightBytes[0];
        budget.reservedBytes[1] += cost.weightBytes[1];
        budget.openHomeBytes += cost.openHomeBytes;
      }
      // An activation B gathered into the weights' class is transient
      // too: it lives with the plan's other buffers, not for the program.
      std::array<uint64_t, 2> step;
      for (int c = 0; c < 2; ++c) {
        step[c] = cost.peakBytes[c] -
                  (peer.problem.rhsIsWeight ? cost.weightBytes[c] : 0) -
                  (c == 0 ? cost.codeBytes : 0);
        budget.coexistingBytes[c] = std::max(budget.coexistingBytes[c], step[c]);
      }
      budget.coexistingSteps.push_back(step);
    } else if (other > position) {
      if (peer.problem.rhsIsWeight) {
        const GemmProblem &p = peer.problem;
        uint64_t total = uint64_t(p.k) * p.n * elementBytes(p.weightStorageType()) *
                         std::max<uint32_t>(p.weightLayers, 1);
        budget.anyBytes += (total + target.tiles - 1) / target.tiles;
      }
      // Its code, as an earlier attempt planned it, or as the smallest plan
      // it tried needs when none fitted: every matmul's code and vertex
      // state stay for the whole program, so this one's steps leave room
      // for those planned after it too (the 27-layer tower's head, planned
      // last, found no room for its code beside fc2's step).
      const GemmPlanChoice *planned =
          !peer.search.finalists.empty() ? &peer.search.finalists.front()
          : peer.search.smallest        ? &*peer.search.smallest
                                        : nullptr;
      if (planned) {
        const uint64_t code = planned->cost.codeBytes;
        budget.reservedBytes[0] += code;
        budget.peerCodeBytes += code;
      }
    }
  }
  const ProgramGemm &gemm = gemms[position];
  budget.coexistingBytes[0] =
      std::max(budget.coexistingBytes[0], gemm.coexistingStandardBytes);
  budget.coexistingSteps.push_back({gemm.coexistingStandardBytes, 0});
  budget.reservedBytes[0] += gemm.residentStandardBytes;
  budget.reservedBytes[1] += gemm.residentInterleavedBytes;
  budget.programBytes = gemm.residentStandardBytes + gemm.residentInterleavedBytes;
  budget.transientCapBytes = gemm.transientCapBytes;
  return budget;
}

void planInOrder(const TargetModel &target, std::vector<ProgramGemm> &gemms,
                 unsigned finalistCount, const std::vector<uint64_t> &caps,
                 bool allowSerial, uint64_t transientCap = UINT64_MAX) {
  for (size_t position = 0; position < gemms.size(); ++position) {
    ProgramGemm &gemm = gemms[position];
    gemm.search = GemmPlanSearch();
    gemm.error.reset();
    gemm.weightCapBytes = 0;
    if (!caps.empty() && caps[position] != UINT64_MAX)
      gemm.weightCapBytes = caps[position];
    MemoryBudget budget = budgetFor(target, gemms, position, caps);
    budget.transientCapBytes = std::min(budget.transientCapBytes, transientCap);
    auto start = std::chrono::steady_clock::now();
    // Batches run side by side, each on a share of the tiles.
    TargetModel batchTarget = target;
    gemm.error = tilesPerBatch(target, gemm.problem, batchTarget.tiles);
    if (gemm.error)
      continue;
    if (gemm.given)
      gemm.error = keepGivenPlan(batchTarget, gemm, budget);
    else {
      GemmPlanConstraints constraints = budget.weightCapBytes != UINT64_MAX
                                            ? withInterleavedWeights(gemm.constraints)
                                            : gemm.constraints;
      // Serial splits are the last resort, after weight caps.
      gemm.error = searchGemmPlans(batchTarget, gemm.problem, constraints,
                                   finalistCount, gemm.search, budget, allowSerial);
    }
    gemm.seconds +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    if (gemm.error && debugEnabled())
      logDebug("ipu-plan-gemm: attempt failed operation=" + std::to_string(position) +
               " shape=" + std::to_string(gemm.problem.m) + "x" +
               std::to_string(gemm.problem.k) + "x" + std::to_string(gemm.problem.n) +
               " weightCapBytes=" + std::to_string(budget.weightCapBytes) +
               " transientCapBytes=" + std::to_string(budget.transientCapBytes) +
               " serial=" + (allowSerial ? "allowed" : "no") + " error=\"" +
               *gemm.error + "\"");
  }
}

/// How far an attempt got: the longest run of matmuls planned from the
/// start (a stack of blocks then says how many blocks fit), then the most.
std::pair<long, long> standing(const std::vector<ProgramGemm> &attempt) {
  auto failed = [](const ProgramGemm &gemm) { return gemm.error.has_value(); };
  auto firstError = std::find_if(attempt.begin(), attempt.end(), failed);
  auto failures = std::count_if(attempt.begin(), attempt.end(), failed);
  return std::make_pair(long(firstError - attempt.begin()), -long(failures));
}

bool outOfMemory(const std::vector<ProgramGemm> &gemms) {
  return std::any_of(gemms.begin(), gemms.end(), [](const ProgramGemm &gemm) {
    return gemm.error && gemm.error->find("no plan fits") != std::string::npos;
  });
}

/// planInOrder with word grains (GemmPlan::columnGrain) and, when that
/// leaves a matmul without memory, again with N's balanced splits only:
/// grains cut more column blocks, plans faster alone whose exchange code
/// and buffers can take what later matmuls need (four unrolled encoder
/// blocks). The attempt that fits, or got further, stands.
void planStage(const TargetModel &target, std::vector<ProgramGemm> &gemms,
               unsigned finalistCount, const std::vector<uint64_t> &caps,
               bool allowSerial, uint64_t transientCap = UINT64_MAX) {
  std::vector<ProgramGemm> balanced = gemms;
  std::vector<double> before(gemms.size());
  for (size_t i = 0; i < gemms.size(); ++i)
    before[i] = gemms[i].seconds;
  planInOrder(target, gemms, finalistCount, caps, allowSerial, transientCap);
  if (!outOfMemory(gemms))
    return;
  bool constrained = false;
  for (ProgramGemm &gemm : balanced)
    if (!gemm.given && !gemm.constraints.columnGrain) {
      gemm.constraints.columnGrain = 1;
      constrained = true;
    }
  if (!constrained)
    return;
  planInOrder(target, balanced, finalistCount, caps, allowSerial, transientCap);
  const bool balancedBetter =
      !outOfMemory(balanced) || standing(balanced) > standing(gemms);
  for (size_t i = 0; i < gemms.size(); ++i) {
    // Both passes' time (each added its own to what the gemm had), and the
    // constraints as they were: the balanced split was the planner's.
    const double both = gemms[i].seconds + balanced[i].seconds - before[i];
    balanced[i].constraints.columnGrain = gemms[i].constraints.columnGrain;
    balanced[i].seconds = gemms[i].seconds = both;
  }
  if (balancedBetter)
    gemms = std::move(balanced);
}

} // namespace

/// One planGemmProgram attempt: with serial splits allowed or not.
static void planProgramOnce(const TargetModel &target,
                            std::vector<ProgramGemm> &gemms,
                            unsigned finalistCount, unsigned rerank,
                            bool allowSerial);

/// Places the homes the plans left open (GemmProblem::homesOpen): each
/// matmul's in standard or interleaved memory, the first placement (the
/// fewest in standard, then in program order) under which every matmul
/// fits next to the others (fitsMemory, as the planner judged it). Every
/// finalist of a matmul takes its class and is costed again. False, and
/// nothing changed, when no placement fits.
static bool placeOpenHomes(const TargetModel &target,
                           std::vector<ProgramGemm> &gemms) {
  std::vector<ProgramGemm> placed = gemms;
  // Those costed with open homes (their finalists are costed again), and
  // of them those whose plan gathers its weights (whose class is chosen).
  std::vector<size_t> wereOpen, open;
  for (size_t i = 0; i < placed.size(); ++i) {
    ProgramGemm &gemm = placed[i];
    if (!gemm.problem.homesOpen)
      continue;
    gemm.problem.homesOpen = false;
    wereOpen.push_back(i);
    if (!gemm.error && !gemm.search.finalists.empty() &&
        gemm.search.finalists.front().plan.gatheredWeights)
      open.push_back(i);
  }
  auto setHomes = [&](size_t i, MemoryClass homes) {
    for (GemmPlanChoice &choice : placed[i].search.finalists) {
      choice.plan.homes = choice.plan.gatheredWeights ? homes : MemoryClass::Interleaved;
      choice.cost = costGemmPlan(target, placed[i].problem, choice.plan);
    }
  };
  for (size_t i : wereOpen)
    setHomes(i, MemoryClass::Interleaved);
  // Every subset of a few matmuls; of more, those that move one or two.
  const size_t count = open.size();
  std::vector<uint64_t> masks;
  if (count <= 10) {
    for (uint64_t mask = 0; mask < (uint64_t(1) << count); ++mask)
      masks.push_back(mask);
  } else {
    masks.push_back(0);
    for (size_t a = 0; a < count; ++a)
      for (size_t b = a; b < count; ++b)
        masks.push_back((uint64_t(1) << a) | (uint64_t(1) << b));
  }
  std::stable_sort(masks.begin(), masks.end(), [](uint64_t a, uint64_t b) {
    return __builtin_popcountll(a) < __builtin_popcountll(b);
  });
  // Both costs of each open matmul's finalists, once.
  std::vector<std::vector<GemmPlanChoice>> byClass[2];
  for (int c = 0; c < 2; ++c)
    for (size_t i : open) {
      setHomes(i, static_cast<MemoryClass>(c));
      byClass[c].push_back(placed[i].search.finalists);
    }
  for (uint64_t mask : masks) {
    for (size_t j = 0; j < count; ++j)
      placed[open[j]].search.finalists =
          byClass[(mask >> j) & 1 ? static_cast<int>(MemoryClass::Standard)
                                  : static_cast<int>(MemoryClass::Interleaved)][j];
    bool fits = true;
    for (size_t position = 0; fits && position < placed.size(); ++position)
      if (!placed[position].error && !placed[position].search.finalists.empty())
        fits = fitsMemory(target, placed[position].search.finalists.front().cost,
                          budgetFor(target, placed, position, {}));
    if (fits) {
      gemms = std::move(placed);
      return true;
    }
  }
  return false;
}

/// planGemmProgram with every home's class as the problems have it.
static void planProgramClassesGiven(const TargetModel &target,
                                    std::vector<ProgramGemm> &gemms,
                                    unsigned finalistCount, unsigned rerank);
/// planGemmProgram, a repeated layer's homes of open class first.
static void planProgramWithOpenHomes(const TargetModel &target,
                                  std::vector<ProgramGemm> &gemms,
                                  unsigned finalistCount, unsigned rerank);

void ipu::planGemmProgram(const TargetModel &target,
                          std::vector<ProgramGemm> &gemms,
                          unsigned finalistCount, unsigned rerank) {
  for (ProgramGemm &gemm : gemms)
    gemm.seconds = 0;
  planProgramWithOpenHomes(target, gemms, finalistCount, rerank);
}

static void planProgramWithOpenHomes(const TargetModel &target,
                                     std::vector<ProgramGemm> &gemms,
                                     unsigned finalistCount, unsigned rerank) {
  const bool open = std::any_of(gemms.begin(), gemms.end(), [](const ProgramGemm &gemm) {
    return gemm.problem.homesOpen;
  });
  if (!open)
    return planProgramClassesGiven(target, gemms, finalistCount, rerank);
  std::vector<ProgramGemm> closed = gemms;
  planProgramClassesGiven(target, gemms, finalistCount, rerank);
  if (!outOfMemory(gemms) && placeOpenHomes(target, gemms))
    return;
  // No placement of the homes fits the plans chosen with their class open:
  // plan again with every home interleaved, beside its gathered block.
  for (ProgramGemm &gemm : closed)
    gemm.problem.homesOpen = false;
  planProgramClassesGiven(target, closed, finalistCount, rerank);
  for (size_t i = 0; i < gemms.size(); ++i)
    closed[i].seconds += gemms[i].seconds;
  gemms = std::move(closed);
}

static void planProgramClassesGiven(const TargetModel &target,
                                    std::vector<ProgramGemm> &gemms,
                                    unsigned finalistCount, unsigned rerank) {
  // Spatial plans first, with the weights capped if need be; serial splits
  // only when some matmul still does not fit (they cost cycles).
  std::vector<ProgramGemm> spatial = gemms;
  planProgramOnce(target, spatial, finalistCount, rerank, /*allowSerial=*/false);
  if (!outOfMemory(spatial)) {
    gemms = std::move(spatial);
    return;
  }
  std::vector<ProgramGemm> serial = gemms;
  planProgramOnce(target, serial, finalistCount, rerank, /*allowSerial=*/true);
  // Serial plans take their memory early in program order: an attempt that
  // still does not fit may have got less far. As far, its errors say more
  // (the smallest memory a serial plan reaches).
  const bool serialBetter =
      !outOfMemory(serial) || standing(serial) >= standing(spatial);
  // Planning time counts both attempts.
  for (size_t i = 0; i < gemms.size(); ++i)
    serial[i].seconds = spatial[i].seconds = serial[i].seconds + spatial[i].seconds;
  gemms = serialBetter ? std::move(serial) : std::move(spatial);
}

static void planProgramOnce(const TargetModel &target,
                            std::vector<ProgramGemm> &gemms,
                            unsigned finalistCount, unsigned rerank,
                            bool allowSerial) {
  // The caps the standing plans were made with (none: empty).
  std::vector<uint64_t> standingCaps;
  // Re-ranking runs once, on the standing attempt, in program order: each
  // matmul's choice is then what the next one's budget sees.
  auto finish = [&] {
    if (!rerank)
      return;
    std::vector<ProgramGemm> ranked = gemms;
    for (size_t position = 0; position < ranked.size(); ++position) {
      ProgramGemm &gemm = ranked[position];
      if (gemm.error || gemm.given)
        continue;
      auto start = std::chrono::steady_clock::now();
      // Next to the choices re-ranking made before it: the finalists that
      // still fit, re-ranked.
      MemoryBudget budget = budgetFor(target, ranked, position, standingCaps);
      std::vector<GemmPlanChoice> &finalists = gemm.search.finalists;
      finalists.erase(std::remove_if(finalists.begin(), finalists.end(),
                                     [&](const GemmPlanChoice &choice) {
                                       return !fitsMemory(target, choice.cost, budget);
                                     }),
                      finalists.end());
      if (finalists.empty())
        return; // An earlier choice that moved left it none: keep the first.
      TargetModel batchTarget = target;
      tilesPerBatch(target, gemm.problem, batchTarget.tiles);
      rerankFinalists(batchTarget, gemm.problem, budget, rerank, gemm.search);
      gemm.seconds += std::chrono::duration<double>(
                          std::chrono::steady_clock::now() - start)
                          .count();
    }
    gemms = std::move(ranked);
  };
  planStage(target, gemms, finalistCount, {}, allowSerial);
  uint64_t totalWeights = 0;
  std::vector<uint64_t> weights(gemms.size(), 0);
  for (size_t i = 0; i < gemms.size(); ++i) {
    const GemmProblem &p = gemms[i].problem;
    if (p.rhsIsWeight && !gemms[i].given)
      weights[i] = uint64_t(p.k) * p.n * elementBytes(p.weightStorageType()) *
                   std::max<uint32_t>(p.weightLayers, 1);
    totalWeights += weights[i];
  }
  // Capping weights cannot help a matmul whose activations alone overflow
  // standard memory (serial splits may).
  auto hopeless = [&](const ProgramGemm &gemm) {
    if (!gemm.error || gemm.error->find("no plan fits") == std::string::npos)
      return true;
    if (!gemm.search.smallest)
      return false;
    const GemmCost &cost = gemm.search.smallest->cost;
    return cost.peakBytes[0] - std::min(cost.peakBytes[0], cost.weightBytes[0]) >
           target.allocatableBytes(MemoryClass::Standard);
  };
  if (!outOfMemory(gemms) || totalWeights == 0 ||
      std::all_of(gemms.begin(), gemms.end(), hopeless))
    return finish();
  // If no share makes the program fit, the best attempt stands (its errors
  // name what still does not fit).
  std::vector<ProgramGemm> best = gemms;
  std::vector<uint64_t> bestCaps;
  const uint64_t memory = target.allocatableBytes(MemoryClass::Standard) +
                          target.allocatableBytes(MemoryClass::Interleaved);
  // Weights each stored once (max-weight-replicas=1, as a stack of layers
  // keeps them) take the same bytes whatever their share: only the
  // transient caps below can make room, so the shares are not tried (each
  // share is another plan of the whole program: minutes for a tower).
  const bool storedOnce = std::all_of(gemms.begin(), gemms.end(), [](const ProgramGemm &gemm) {
    return !gemm.problem.rhsIsWeight || gemm.given ||
           (gemm.constraints.maxWeightReplicas && *gemm.constraints.maxWeightReplicas <= 1);
  });
  for (unsigned percent : {70u, 55u, 40u, 30u, 20u}) {
    if (storedOnce)
      break;
    std::vector<uint64_t> caps(gemms.size(), UINT64_MAX);
    for (size_t i = 0; i < gemms.size(); ++i)
      if (weights[i])
        caps[i] = static_cast<uint64_t>(
            static_cast<long double>(memory) * percent / 100 * weights[i] / totalWeights);
    // Then every matmul's transient buffers capped too (30 % of a tile),
    // before the weights get a smaller share: an early matmul's fastest
    // plan then leaves the room a later one's weights need (a deep tower's
    // fc2 beside its head; SDPA's f32 P.V, whose operands left fc1 only
    // serial plans).
    for (uint64_t transientCap : {UINT64_MAX, memory * 30 / 100}) {
      planStage(target, gemms, finalistCount, caps, allowSerial, transientCap);
      if (!outOfMemory(gemms)) {
        standingCaps = caps;
        return finish();
      }
      if (standing(gemms) > standing(best)) {
        best = gemms;
        bestCaps = caps;
      }
    }
  }
  // The last resort: the best weight caps, and tighter transient caps
  // (weights stored once: the only resort, from the first cap on).
  std::vector<unsigned> lastResort = {22u, 16u};
  if (storedOnce)
    lastResort = {30u, 22u, 16u, 12u};
  for (unsigned percent : lastResort) {
    planStage(target, gemms, finalistCount, bestCaps, allowSerial,
              memory * percent / 100);
    if (!outOfMemory(gemms)) {
      standingCaps = bestCaps;
      return finish();
    }
    if (standing(gemms) > standing(best))
      best = gemms;
  }
  for (size_t i = 0; i < gemms.size(); ++i) {
    double seconds = gemms[i].seconds;
    gemms[i] = best[i];
    gemms[i].seconds = seconds;
  }
  standingCaps = bestCaps;
  finish();
}
