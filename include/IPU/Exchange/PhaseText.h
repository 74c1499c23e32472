//===- PhaseText.h - Exchange phases as text -----------------------------===//
//
// A plain text form of one exchange phase, so that phases can be dumped by
// the compiler and scheduled elsewhere (bench/run exchange --phase FILE):
//
//   # comments and blank lines are ignored
//   tiles 1472
//   source words destination [destination...]
//   ...
//
// The first non-comment line gives the tile count; each following line is
// one transfer. Numbers are decimal. A `#` starts a comment anywhere on a
// line.
//
//===----------------------------------------------------------------------===//

#ifndef IPU_EXCHANGE_PHASETEXT_H
#define IPU_EXCHANGE_PHASETEXT_H

#include "IPU/Exchange/Phase.h"

#include <iosfwd>

namespace ipu {

/// Reads a phase; on failure returns a message naming the line and field
/// ("line 3: destination 2: ..."), and `phase` holds what was read so far.
/// The phase read is checked with validate().
std::optional<std::string> readPhaseText(std::istream &in,
                                         ExchangePhase &phase);

/// Writes `phase` so that readPhaseText gives it back.
void writePhaseText(std::ostream &out, const ExchangePhase &phase);

} // namespace ipu

#endif // IPU_EXCHANGE_PHASETEXT_H
