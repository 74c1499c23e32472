//===- GemmPlan.cpp - Plan types, names and legality -----------------------===//

#include "IPU/Planning/GemmPlan.h"
#include "PlanningDetail.h"

#include "IPU/Layout/BlockLayout.h"

#include <sstream>

using namespace ipu;
using namespace ipu::planning;


std::string_view ipu::reductionName(Reduction reduction) {
  return reduction == Reduction::Staged ? "staged" : "complete";
}

std::optional<Reduction> ipu::parseReduction(std::string_view name) {
  if (name == "complete")
    return Reduction::Complete;
  if (name == "staged")
    return Reduction::Staged;
  return std::nullopt;
}

std::string GemmPlan::str() const {
  std::ostringstream os;
  os << "rows=" << rows << " cols=" << cols << " inner=" << inner
     << " orientation=" << (swapped ? "swapped" : "normal")
     << " weights=" << memoryClassName(weights)
     << " reduction=" << reductionName(reduction)
     << " staging=" << (localStaging ? "true" : "false")
     << " partials=" << elementTypeName(partials);
  if (gatheredWeights)
    os << " gathered=true";
  if (gatheredWeights && homes != MemoryClass::Interleaved)
    os << " homes=" << memoryClassName(homes);
  if (psums != MemoryClass::Standard)
    os << " psums=" << memoryClassName(psums);
  if (columnGrain > 1)
    os << " grain=" << columnGrain;
  if (serial > 1)
    os << " serial=" << serial;
  return os.str();
}

bool GemmPlanConstraints::matches(const GemmPlan &plan) const {
  return (!rows || *rows == plan.rows) && (!cols || *cols == plan.cols) &&
         (!inner || *inner == plan.inner) &&
         (!swapped || *swapped == plan.swapped) &&
         (!weights || *weights == plan.weights) &&
         (!reduction || *reduction == plan.reduction) &&
         (!localStaging || *localStaging == plan.localStaging) &&
         (!partials || *partials == plan.partials) &&
         (!gatheredWeights || *gatheredWeights == plan.gatheredWeights) &&
         (!serial || *serial == plan.serial) &&
         (!homes || (plan.gatheredWeights && *homes == plan.homes)) &&
         (!columnGrain || *columnGrain == plan.columnGrain) &&
         (!maxWeightReplicas || plan.weightReplicas() <= *maxWeightReplicas);
}

void GemmPlanConstraints::override(const GemmPlanConstraints &other) {
  auto take = [](auto &field, const auto &value) {
    if (value)
      field = value;
  };
  take(rows, other.rows);
  take(cols, other.cols);
  take(inner, other.inner);
  take(swapped, other.swapped);
  take(weights, other.weights);
  take(reduction, other.reduction);
  take(localStaging, other.localStaging);
  take(partials, other.partials);
  take(gatheredWeights, other.gatheredWeights);
  take(serial, other.serial);
  take(homes, other.homes);
  take(columnGrain, other.columnGrain);
  take(maxWeightReplicas, other.maxWeightReplicas);
}

bool GemmPlanConstraints::empty() const {
  return !rows && !cols && !inner && !swapped && !weights && !reduction &&
         !localStaging && !partials && !gatheredWeights && !serial && !homes &&
         !columnGrain && !maxWeightReplicas;
}

std::string GemmPlanConstraints::str() const {
  std::ostringstream os;
  const char *sep = "";
  auto field = [&](const char *name, auto value) {
    os << sep << name << "=" << value;
    sep = " ";
  };
  if (rows)
    field("rows", *rows);
  if (cols)
    field("cols", *cols);
  if (inner)
    field("inner", *inner);
  if (swapped)
    field("orientation", *swapped ? "swapped" : "normal");
  if (weights)
    field("weights", memoryClassName(*weights));
  if (reduction)
    field("reduction", reductionName(*reduction));
  if (localStaging)
    field("staging", *localStaging ? "true" : "false");
  if (partials)
    field("partials", elementTypeName(*partials));
  if (gatheredWeights)
    field("gathered", *gatheredWeights ? "true" : "false");
  if (serial)
    field("serial", *serial);
  if (homes)
    field("homes", memoryClassName(*homes));
  if (columnGrain)
    field("grain", *columnGrain);
  if (maxWeightReplicas)
    field("max-weight-replicas", *maxWeightReplicas);
  return os.str();
}

bool ipu::serialSplitPossible(const GemmProblem &problem) {
  return problem.batches == 1 && !problem.lhsTransposed && problem.rhsIsWeight &&
         problem.rowReductions.empty();
}

GemmProblem ipu::serialChunk(const GemmProblem &problem, uint32_t serial) {
  GemmProblem chunk = problem;
  chunk.m = problem.m / std::max<uint32_t>(serial, 1);
  chunk.epilogue = nullptr;
  chunk.lhsSpread = true;
  return chunk;
}

uint32_t ipu::activationArrivalTiles(const GemmProblem &problem,
                                     const TargetModel &target) {
  return static_cast<uint32_t>(
      std::min<int64_t>(problem.m, static_cast<int64_t>(target.tiles)));
}

bool ipu::activationArrivesInPlace(const GemmProblem &problem,
                                   const GemmPlan &plan,
                                   const TargetModel &target) {
  // Arrival splits the rows over min(M, tiles) tiles, block i on tile i:
  // exactly the A layout of a plan with that many row blocks and no column
  // or inner split.
  return !problem.lhsTransposed && !problem.lhsSpread &&
         plan.rows == activationArrivalTiles(problem, target) &&
         plan.cols == 1 && plan.inner == 1;
}

/// "32-bit" for a 4-byte exchange word.
static std::string wordBits(const GemmProblem &problem) {
  return std::to_string(problem.wordBytes * 8) + "-bit";
}

/// Whether every inner block of K starts on an exchange word of an A row,
/// so the gather moves whole words.
static bool innerSplitAligned(const GemmProblem &problem, uint32_t inner) {
  const uint64_t bytes = elementBytes(problem.inType);
  for (uint32_t p = 1; p < inner; ++p)
    if (BlockLayout::splitBegin(problem.k, inner, p) * bytes % problem.wordBytes != 0)
      return false;
  return true;
}

uint32_t ipu::columnGrain(const GemmProblem &problem, const GemmPlan &plan) {
  uint64_t narrowest = problem.wordBytes;
  if (!problem.rhsIsWeight)
    narrowest = std::min<uint64_t>(narrowest, elementBytes(problem.inType));
  if (problem.resultExchanged) {
    narrowest = std::min<uint64_t>(narrowest, elementBytes(problem.outType));
    if (problem.epilogue)
      narrowest = std::min<uint64_t>(narrowest, elementBytes(problem.epilogue->resultType));
  }
  if (plan.inner > 1)
    narrowest = std::min<uint64_t>(narrowest, elementBytes(plan.partials));
  return narrowest < problem.wordBytes ? static_cast<uint32_t>(problem.wordBytes / narrowest)
                                       : 1;
}

/// Whether the balanced split of N into `cols` blocks starts each on a
/// multiple of `grain`.
static bool balancedOnGrain(int64_t n, uint32_t cols, uint32_t grain) {
  if (grain <= 1)
    return true;
  for (uint32_t j = 1; j < cols; ++j)
    if (BlockLayout::splitBegin(n, cols, j) % grain != 0)
      return false;
  return true;
}

uint32_t ipu::neededColumnGrain(const GemmProblem &problem, const GemmPlan &plan) {
  const uint32_t grain = columnGrain(problem, plan);
  return balancedOnGrain(problem.n, plan.cols, grain) ? 1 : grain;
}

std::vector<int64_t> ipu::columnSplits(const GemmProblem &problem, const GemmPlan &plan) {
  const uint32_t grain = plan.columnGrain;
  if (grain <= 1)
    return {};
  const int64_t grains = (problem.n + grain - 1) / grain;
  std::vector<int64_t> splits;
  for (uint32_t j = 0; j < plan.cols; ++j)
    splits.push_back(std::min<int64_t>(problem.n,
                                       BlockLayout::splitBegin(grains, plan.cols, j) * grain));
  splits.push_back(problem.n);
  return splits;
}

int64_t ipu::widestColumnBlock(const GemmProblem &problem, const GemmPlan &plan) {
  const uint32_t grain = plan.columnGrain;
  if (grain <= 1)
    return (problem.n + plan.cols - 1) / plan.cols;
  const int64_t grains = (problem.n + grain - 1) / grain;
  return std::min<int64_t>(problem.n, (grains + plan.cols - 1) / plan.cols * grain);
}

bool ipu::orientationPossible(const GemmProblem &problem, bool swapped) {
  return problem.rhsIsWeight || swapped == problem.rhsTransposed;
}

std::optional<std::string> ipu::tilesPerBatch(const TargetModel &target,
                                              const GemmProblem &problem,
                                              uint32_t &tiles) {
  if (problem.batches < 1 || problem.batches > int64_t(target.tiles))
    return std::to_string(problem.batches) + " batches do not fit side by side "
           "on the " + std::to_string(target.tiles) + " tiles of '" +
           target.name + "' (batches sharing a tile are not supported yet)";
  tiles = static_cast<uint32_t>(target.tiles / problem.batches);
  return std::nullopt;
}

std::optional<std::string> ipu::checkGemmPlan(const TargetModel &target,
                                              const GemmProblem &problem,
                                              const GemmPlan &plan) {
  if (problem.wordBytes != target.exchangeWordBytes())
    return "the problem pads rows to " + std::to_string(problem.wordBytes) +
           "-byte words, but '" + target.name + "' moves " +
           std::to_string(target.exchangeWordBytes()) + "-byte words";
  if (plan.serial < 1)
    return "serial must be at least 1";
  if (plan.serial > 1) {
    if (!serialSplitPossible(problem))
      return "a serial split needs a 2-D product (batches folded into the "
             "rows) of an untransposed A by resident weights, with no row "
             "reduction of its result";
    if (problem.m % plan.serial != 0)
      return "serial=" + std::to_string(plan.serial) + " does not divide the " +
             std::to_string(problem.m) + " rows of A";
    if (plan.gatheredWeights)
      return "a serial split keeps its weights resident, not gathered";
    GemmPlan chunkPlan = plan;
    chunkPlan.serial = 1;
    if (std::optional<std::string> why =
            checkGemmPlan(target, serialChunk(problem, plan.serial), chunkPlan))
      return "a serial chunk of " + std::to_string(problem.m / plan.serial) +
             " rows: " + *why;
    // The epilogue's word grain on C's column blocks.
    GemmProblem whole = problem;
    whole.m = problem.m / plan.serial;
    return checkGemmPlan(target, whole, chunkPlan);
  }
  if (plan.rows < 1 || plan.cols < 1 || plan.inner < 1)
    return "partitions must be at least 1";
  if (plan.rows > problem.m || plan.cols > problem.n || plan.inner > problem.k)
    return "more partitions than rows, columns or inner elements";
  if (uint64_t(plan.rows) * plan.cols * plan.inner > target.tiles)
    return "rows x cols x inner = " +
           std::to_string(uint64_t(plan.rows) * plan.cols * plan.inner) +
           " exceeds the " + std::to_string(target.tiles) + " tiles of '" +
           target.name + "'";
  if (!orientationPossible(problem, plan.swapped))
    return plan.swapped
               ? "orientation=swapped needs B stored transposed: B must be a "
                 "weight or an activation given transposed"
               : "orientation=normal needs B [K x N], and B is an activation "
                 "given transposed (no kernel transposes it)";
  if (plan.swapped && plan.localStaging)
    return "local staging copies B for the AMP, which holds A when swapped";
  if (!innerSplitAligned(problem, plan.inner))
    return "inner=" + std::to_string(plan.inner) + " cuts " +
           std::string(elementTypeName(problem.inType)) +
           " rows of A off " + wordBits(problem) + " word boundaries";
  if (problem.lhsTransposed)
    // A^T is gathered by exchange: its column blocks (A's row blocks) must
    // start on words of its rows.
    for (uint32_t i = 1; i < plan.rows; ++i)
      if (BlockLayout::splitBegin(problem.m, plan.rows, i) *
              elementBytes(problem.inType) % problem.wordBytes != 0)
        return "rows=" + std::to_string(plan.rows) + " cuts " +
               std::string(elementTypeName(problem.inType)) +
               " rows of A^T off " + wordBits(problem) +
               " word boundaries, and A^T is an "
               "activation gathered by exchange";
  if (plan.partials != ElementType::F32 && plan.partials != ElementType::F16)
    return "partials must be f32 or f16";
  if (plan.partials == ElementType::F32 && problem.accType == ElementType::F16)
    return "the op accumulates in f16: partials=f32 would change its numerics";
  if (plan.partials == ElementType::F16 && problem.accType != ElementType::F16 &&
      !problem.allowHalfPartials)
    return "partials=f16 for an f32 accumulation must be allowed (pass option "
           "partials=f16 or any, or the op's constraints)";
  // Column blocks cut narrow rows on exchange words (columnSplits): f16
  // partials side by side in the reduction's rows, an activation B
  // gathered by exchange (weights arrive by host stream, which has no such
  // grain), a narrow C or epilogue result that feeds other operations.
  const uint32_t grain = plan.columnGrain;
  if (grain != 1 && grain != 2 && grain != 4)
    return "a column grain of " + std::to_string(grain) + " is not 1, 2 or 4 elements";
  if (grain > 1 && plan.cols > (problem.n + grain - 1) / grain)
    return "cols=" + std::to_string(plan.cols) + " cuts the " +
           std::to_string(problem.n) + " columns into more blocks than their " +
           std::to_string((problem.n + grain - 1) / grain) + " " + wordBits(problem) +
           " words";
  const std::vector<int64_t> splits = columnSplits(problem, plan);
  auto columnBegin = [&](uint32_t j) {
    return splits.empty() ? BlockLayout::splitBegin(problem.n, plan.cols, j) : splits[j];
  };
  auto columnSize = [&](uint32_t j) { return columnBegin(j + 1) - columnBegin(j); };
  if (plan.inner > 1 && elementBytes(plan.partials) == 2)
    for (uint32_t j = 0; j < plan.cols; ++j)
      if (columnSize(j) % 2 != 0)
        return "inner > 1 with f16 partial sums needs even column blocks";
  if (!problem.rhsIsWeight && elementBytes(problem.inType) < 4)
    for (uint32_t j = 1; j < plan.cols; ++j)
      if (columnBegin(j) * elementBytes(problem.inType) % problem.wordBytes != 0)
        return "cols=" + std::to_string(plan.cols) + " cuts " +
               std::string(elementTypeName(problem.inType)) +
               " rows of B off " + wordBits(problem) +
               " word boundaries, and B is an "
               "activation gathered by exchange";
  ElementType stored = problem.outType;
  if (problem.epilogue &&
      elementBytes(problem.epilogue->resultType) < elementBytes(stored))
    stored = problem.epilogue->resultType;
  if (elementBytes(stored) < 4 && problem.resultExchanged)
    for (uint32_t j = 1; j < plan.cols; ++j)
      if (columnBegin(j) * elementBytes(stored) % problem.wordBytes != 0)
        return "cols=" + std::to_string(plan.cols) + " cuts " +
               std::string(elementTypeName(stored)) + " rows of " +
               (stored == problem.outType ? "C" : "the epilogue's result") +
               " off " + wordBits(problem) + " word boundaries";
  if (plan.inner == 1 && plan.reduction != Reduction::Complete)
    return "a staged reduction needs inner > 1";
  if (plan.inner == 1 && plan.psums != MemoryClass::Standard)
    return "psums=interleaved keeps the partial sums of inner > 1 there; "
           "with inner = 1 the AMP writes the result";
  if (plan.reduction == Reduction::Staged &&
      problem.m / plan.rows < static_cast<int64_t>(plan.inner))
    return "a staged reduction splits each block's " +
           std::to_string(problem.m / plan.rows) + " rows into " +
           std::to_string(plan.inner) + " parts";
  if (plan.localStaging && plan.weights != MemoryClass::Standard)
    return "local staging copies standard weights to interleaved memory";
  if (problem.expandedFrom && plan.localStaging)
    return "an expanded weight (stored in " +
           std::string(elementTypeName(*problem.expandedFrom)) +
           ") is expanded into the class the AMP reads: not staged";
  if (plan.gatheredWeights) {
    if (!problem.rhsIsWeight)
      return "gathered weights need B to be a weight; an activation B is "
             "gathered anyway";
    if (plan.rows < 2)
      return "gathered weights need rows > 1: with one row block nothing is "
             "replicated";
    if (plan.weights != MemoryClass::Interleaved || plan.localStaging)
      return "gathered weights are gathered into interleaved memory, without "
             "staging";
  } else if (plan.homes != MemoryClass::Interleaved) {
    return "only gathered weights have homes apart from their blocks";
  }
  return std::nullopt;
}
