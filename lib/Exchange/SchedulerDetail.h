//===- SchedulerDetail.h - Strategy entry points for scheduleBest --------===//
//
// Internal to the exchange library.
//
//===----------------------------------------------------------------------===//

#ifndef IPU_LIB_EXCHANGE_SCHEDULERDETAIL_H
#define IPU_LIB_EXCHANGE_SCHEDULERDETAIL_H

#include "ReceiverGroups.h"

namespace ipu::detail {

/// scheduleExact on groups computed already.
ExchangeSchedule scheduleExact(const ExchangePhase &phase,
                               const ReceiverGroups &groups);

/// schedulePreemptive that gives up (returns nothing) after `budget`
/// candidate evaluations, so that scheduleBest can bound its time without
/// depending on a clock.
std::optional<ExchangeSchedule>
schedulePreemptiveWithin(const ExchangePhase &phase, uint64_t budget);

} // namespace ipu::detail

#endif // IPU_LIB_EXCHANGE_SCHEDULERDETAIL_H
