//===- GemmPlanKeys.h - The words a printed plan is made of ----*- C++ -*-===//
//
// GemmPlan::str() prints a plan as key=value pairs, and a package carries
// each finalist's pairs as metadata, which validation accepts only when
// every key is a plan's own. One list serves both, so a new plan field
// cannot make the compiler write packages it refuses to load. Header only:
// the package library includes it without linking the planner.
//
//===----------------------------------------------------------------------===//

#ifndef IPU_PLANNING_GEMMPLANKEYS_H
#define IPU_PLANNING_GEMMPLANKEYS_H

#include <array>
#include <string_view>

namespace ipu {

/// The keys of GemmPlan::str(), in the order it prints them.
inline constexpr std::array<std::string_view, 13> kGemmPlanKeys = {
    "rows",     "cols",     "inner",    "orientation", "weights",
    "reduction", "staging", "partials", "gathered",    "homes",
    "psums",    "grain",    "serial"};

/// What a package's finalist entry adds to a plan's keys.
inline constexpr std::array<std::string_view, 3> kFinalistFigureKeys = {
    "analyticalCycles", "scheduledCycles", "fits"};

} // namespace ipu

#endif // IPU_PLANNING_GEMMPLANKEYS_H
