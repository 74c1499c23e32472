//===- PhaseText.h - Exchange phases as text -----------------------------===//
//
// A plain text form of one exchange phase, so that phases can be dumped by
// the compiler and scheduled elsewhere (bench/run exchange --phase FILE):
//
//   # comments and blank lines are ignored
//   tiles 1472
//   source words destination [destination...] [@ sourceAddress destAddress]
//   ...
//
// The first non-comment line gives the tile count; each following line is
// one transfer. Tiles and words are decimal; byte addresses decimal or
// 0x-prefixed hex. A phase gives addresses on every transfer or on none (the
// compiler's dumps give the addresses placement chose, so that a benchmark
// schedules the phase under the memory-element rule as the compiler did).
// A `#` starts a comment anywhere on a line.
//
//===----------------------------------------------------------------------===//

#ifndef IPU_EXCHANGE_PHASETEXT_H
#define IPU_EXCHANGE_PHASETEXT_H

#include "IPU/Exchange/Phase.h"

#include <iosfwd>

namespace ipu {

/// Reads a phase; on failure returns a message naming the line and field
/// ("line 3: destination 2: ..."), and `phase` holds what was read so far.
/// The phase read is checked with validate(). `addresses`, when given,
/// receives the transfers' addresses (empty when the text has none).
std::optional<std::string> readPhaseText(std::istream &in,
                                         ExchangePhase &phase,
                                         TransferAddresses *addresses = nullptr);

/// Writes `phase` (with `addresses`, when given) so that readPhaseText gives
/// it back.
void writePhaseText(std::ostream &out, const ExchangePhase &phase,
                    const TransferAddresses *addresses = nullptr);

} // namespace ipu

#endif // IPU_EXCHANGE_PHASETEXT_H
