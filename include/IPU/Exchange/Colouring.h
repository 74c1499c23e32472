//===- Colouring.h - Few-colour proper colourings of conflict graphs -------===//
//
// The timed scheduler orders the messages of some phases by colour: messages
// of one colour share no resource, so each colour is a wave the placer packs
// back to back, and fewer colours make a shorter phase.
//
//===----------------------------------------------------------------------===//

#ifndef IPU_EXCHANGE_COLOURING_H
#define IPU_EXCHANGE_COLOURING_H

#include <cstdint>
#include <vector>

namespace ipu {

struct GraphColouring {
  std::vector<uint32_t> colour; ///< Per vertex, in [0, colours).
  uint32_t colours = 0;
};

/// A proper colouring (no edge between two vertices of one colour) of the
/// graph whose symmetric adjacency lists, without self-loops, are
/// `adjacency`: greedy in order of decreasing degree, then a tabu search
/// (TabuCol: Hertz and de Werra, "Using tabu search techniques for graph
/// coloring", Computing 39, 1987) for a colouring with one colour fewer, at
/// most `movesPerAttempt` moves per attempt, until an attempt fails. The
/// same graph gives the same colouring.
GraphColouring colourGraph(const std::vector<std::vector<uint32_t>> &adjacency,
                           uint64_t movesPerAttempt);

} // namespace ipu

#endif // IPU_EXCHANGE_COLOURING_H
