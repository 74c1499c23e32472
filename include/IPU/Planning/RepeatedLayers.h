//===- RepeatedLayers.h - N identical layers in a straight-line program ---===//
//
// Exporters unroll a model's layers: 27 SigLIP encoder layers arrive as 27
// copies of the same ops, each reading its own weights. Found, they compile
// once, as one body repeated over consecutive blocks of weights.
//
// The search works on a plain description of the program (ops in program
// order, each with a signature and its operands), so it runs without MLIR:
// the compiler's pass describes a function's ops and gives it here.
//
//===----------------------------------------------------------------------===//

#ifndef IPU_PLANNING_REPEATEDLAYERS_H
#define IPU_PLANNING_REPEATEDLAYERS_H

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ipu {

/// What an operand reads: a result of an earlier op of the sequence, or an
/// argument of the function.
struct SequenceValue {
  enum class Kind : uint8_t { Result, Argument };
  Kind kind = Kind::Result;
  uint32_t index = 0;  ///< The op's position, or the argument's number.
  uint32_t result = 0; ///< The result's number (Result only).

  static SequenceValue resultOf(uint32_t op, uint32_t result = 0) {
    return {Kind::Result, op, result};
  }
  static SequenceValue argument(uint32_t number) { return {Kind::Argument, number, 0}; }
  friend bool operator==(const SequenceValue &a, const SequenceValue &b) {
    return a.kind == b.kind && a.index == b.index && a.result == b.result;
  }
};

/// One op of the program, in program order.
struct SequenceOp {
  /// Equal for two ops that compute the same thing from their operands
  /// (name, attributes, result types, bodies): the caller's classes.
  uint32_t signature = 0;
  std::vector<SequenceValue> operands;
};

/// The program as the search sees it: its ops in order, each argument's type
/// (as a class: equal for equal types), and the values it returns.
struct Sequence {
  std::vector<SequenceOp> ops;
  std::vector<uint32_t> argumentTypes;
  std::vector<SequenceValue> returned;
};

/// `layers` consecutive runs of `opsPerLayer` ops from op `first`, each
/// computing what the first does, from the previous one's output and weights
/// of its own.
struct RepeatedLayers {
  uint32_t first = 0;
  uint32_t opsPerLayer = 0;
  uint32_t layers = 0;
  /// The value layer 0 reads as its input, from before the layers.
  SequenceValue input;
  /// The value each layer passes to the next one (and the last one to what
  /// follows the layers): a result of the op at `output.index` within a
  /// layer (0 to opsPerLayer - 1).
  SequenceValue output;
  /// weights[slot][layer]: the argument layer `layer` reads in weight slot
  /// `slot`, slots in the order layer 0 first reads them. Each argument is
  /// read by its layer alone.
  std::vector<std::vector<uint32_t>> weights;

  uint32_t end() const { return first + opsPerLayer * layers; }
};

/// The longest run of at least `minimumLayers` repeated layers in
/// `sequence` (most ops covered; of equal runs, the one with the shortest
/// layer), or nothing. A layer reads only its own ops' values, its input
/// (the previous layer's output), its own weights (arguments nothing else
/// reads, of the same types in every layer) and values from before the
/// layers that every layer reads alike; only the last layer's output is
/// read after them.
std::optional<RepeatedLayers> findRepeatedLayers(const Sequence &sequence,
                                                 uint32_t minimumLayers = 2);

/// A line for a remark: where the layers are and what each one reads.
std::string describe(const RepeatedLayers &layers);

} // namespace ipu

#endif // IPU_PLANNING_REPEATEDLAYERS_H
