//===- RepeatedLayers.cpp - N identical layers in a straight-line program -===//

#include "IPU/Planning/RepeatedLayers.h"

#include <algorithm>
#include <map>
#include <sstream>

using namespace ipu;

namespace {

/// Who reads each value: the ops (by position) and whether it is returned.
struct Readers {
  std::map<std::pair<uint32_t, uint32_t>, std::vector<uint32_t>> ofResult;
  std::vector<std::vector<uint32_t>> ofArgument;
  std::vector<bool> argumentReturned;
  std::map<std::pair<uint32_t, uint32_t>, bool> resultReturned;

  explicit Readers(const Sequence &sequence)
      : ofArgument(sequence.argumentTypes.size()),
        argumentReturned(sequence.argumentTypes.size(), false) {
    for (uint32_t position = 0; position < sequence.ops.size(); ++position)
      for (const SequenceValue &value : sequence.ops[position].operands)
        if (value.kind == SequenceValue::Kind::Argument) {
          if (value.index < ofArgument.size())
            ofArgument[value.index].push_back(position);
        } else {
          ofResult[{value.index, value.result}].push_back(position);
        }
    for (const SequenceValue &value : sequence.returned)
      if (value.kind == SequenceValue::Kind::Argument) {
        if (value.index < argumentReturned.size())
          argumentReturned[value.index] = true;
      } else {
        resultReturned[{value.index, value.result}] = true;
      }
  }
};

/// How layer 0 reads one operand, which every other layer must match.
struct OperandClass {
  enum class Kind : uint8_t { Internal, Outer, Weight } kind = Kind::Outer;
  SequenceValue value; ///< Internal: (op within the layer, result); Outer: the value.
  uint32_t slot = 0;   ///< Weight: its slot.
  bool input = false;  ///< Outer: the layers' input (the next layers read the output).
};

class Validation {
public:
  Validation(const Sequence &sequence, const Readers &readers, uint32_t first,
             uint32_t opsPerLayer, uint32_t layers)
      : sequence(sequence), readers(readers), first(first), opsPerLayer(opsPerLayer),
        layers(layers) {}

  std::optional<RepeatedLayers> run() {
    if (!classifyFirstLayer() || !matchLaterLayers() || !outputSet || !readsStayInside())
      return std::nullopt;
    RepeatedLayers found;
    found.first = first;
    found.opsPerLayer = opsPerLayer;
    found.layers = layers;
    found.input = input;
    found.output = output;
    found.weights = std::move(weights);
    return found;
  }

private:
  /// The layer holding op `position`, or -1 outside the layers.
  int64_t layerOf(uint32_t position) const {
    if (position < first || position >= first + opsPerLayer * layers)
      return -1;
    return (position - first) / opsPerLayer;
  }

  /// Whether argument `argument` is read by layer `layer` alone.
  bool ownedBy(uint32_t argument, int64_t layer) const {
    if (argument >= readers.ofArgument.size() || readers.argumentReturned[argument])
      return false;
    const std::vector<uint32_t> &users = readers.ofArgument[argument];
    return !users.empty() && std::all_of(users.begin(), users.end(), [&](uint32_t user) {
      return layerOf(user) == layer;
    });
  }

  bool classifyFirstLayer() {
    std::map<uint32_t, uint32_t> slotOf;
    for (uint32_t j = 0; j < opsPerLayer; ++j) {
      std::vector<OperandClass> &row = classes.emplace_back();
      const std::vector<SequenceValue> &operands = sequence.ops[first + j].operands;
      const std::vector<SequenceValue> &nextOperands =
          sequence.ops[first + opsPerLayer + j].operands;
      for (size_t k = 0; k < operands.size(); ++k) {
        const SequenceValue &value = operands[k];
        OperandClass &entry = row.emplace_back();
        entry.value = value;
        // Where layer 1 reads layer 0's value, layer 0 reads the input,
        // even an argument only it reads.
        const bool nextReadsLayer0 =
            k < nextOperands.size() &&
            nextOperands[k].kind == SequenceValue::Kind::Result &&
            layerOf(nextOperands[k].index) == 0;
        if (value.kind == SequenceValue::Kind::Result && layerOf(value.index) == 0) {
          entry.kind = OperandClass::Kind::Internal;
          entry.value.index -= first;
        } else if (value.kind == SequenceValue::Kind::Argument && !nextReadsLayer0 &&
                   ownedBy(value.index, 0)) {
          entry.kind = OperandClass::Kind::Weight;
          auto [it, inserted] = slotOf.try_emplace(value.index, uint32_t(weights.size()));
          if (inserted)
            weights.push_back({value.index});
          entry.slot = it->second;
        }
      }
    }
    return true;
  }

  bool matchLaterLayers() {
    for (uint32_t layer = 1; layer < layers; ++layer) {
      const uint32_t base = first + layer * opsPerLayer;
      std::vector<std::optional<uint32_t>> argumentOfSlot(weights.size());
      for (uint32_t j = 0; j < opsPerLayer; ++j) {
        const SequenceOp &op = sequence.ops[base + j];
        if (op.signature != sequence.ops[first + j].signature ||
            op.operands.size() != classes[j].size())
          return false;
        for (size_t k = 0; k < op.operands.size(); ++k)
          if (!matches(classes[j][k], op.operands[k], layer, argumentOfSlot))
            return false;
      }
      for (size_t slot = 0; slot < weights.size(); ++slot) {
        if (!argumentOfSlot[slot])
          return false;
        weights[slot].push_back(*argumentOfSlot[slot]);
      }
    }
    return true;
  }

  bool matches(OperandClass &entry, const SequenceValue &value, uint32_t layer,
               std::vector<std::optional<uint32_t>> &argumentOfSlot) {
    const bool isResult = value.kind == SequenceValue::Kind::Result;
    const int64_t from = isResult ? layerOf(value.index) : -1;
    switch (entry.kind) {
    case OperandClass::Kind::Internal:
      return from == int64_t(layer) &&
             value.index - (first + layer * opsPerLayer) == entry.value.index &&
             value.result == entry.value.result;
    case OperandClass::Kind::Weight: {
      if (isResult || !ownedBy(value.index, layer) ||
          sequence.argumentTypes[value.index] !=
              sequence.argumentTypes[weights[entry.slot].front()])
        return false;
      std::optional<uint32_t> &bound = argumentOfSlot[entry.slot];
      if (bound && *bound != value.index)
        return false;
      bound = value.index;
      return true;
    }
    case OperandClass::Kind::Outer:
      if (from == int64_t(layer) - 1) {
        // The previous layer's output, where layer 0 read the input.
        SequenceValue produced =
            SequenceValue::resultOf(value.index - (first + (layer - 1) * opsPerLayer),
                                    value.result);
        if (layer == 1 && !entry.input) {
          if (outputSet && (!(output == produced) || !(input == entry.value)))
            return false;
          entry.input = true;
          input = entry.value;
          output = produced;
          outputSet = true;
          return true;
        }
        return entry.input && output == produced;
      }
      return !entry.input && value == entry.value;
    }
    return false;
  }

  /// Only the layer itself reads its values, but for its output, which the
  /// next layer reads (and, from the last one, what follows the layers).
  bool readsStayInside() const {
    for (uint32_t layer = 0; layer < layers; ++layer) {
      for (uint32_t j = 0; j < opsPerLayer; ++j) {
        const uint32_t position = first + layer * opsPerLayer + j;
        for (const auto &[key, users] : readersOfResults(position)) {
          const bool isOutput = key.first - (first + layer * opsPerLayer) == output.index &&
                                key.second == output.result;
          for (uint32_t user : users) {
            const int64_t at = layerOf(user);
            if (at == int64_t(layer))
              continue;
            if (isOutput && (at == int64_t(layer) + 1 ||
                             (layer + 1 == layers && at == -1)))
              continue;
            return false;
          }
        }
        if (hasReturnedResult(position) &&
            !(layer + 1 == layers && j == output.index))
          return false;
      }
    }
    return true;
  }

  /// The readers of every result of op `position`.
  std::vector<std::pair<std::pair<uint32_t, uint32_t>, std::vector<uint32_t>>>
  readersOfResults(uint32_t position) const {
    std::vector<std::pair<std::pair<uint32_t, uint32_t>, std::vector<uint32_t>>> found;
    for (auto it = readers.ofResult.lower_bound({position, 0});
         it != readers.ofResult.end() && it->first.first == position; ++it)
      found.emplace_back(it->first, it->second);
    return found;
  }

  bool hasReturnedResult(uint32_t position) const {
    auto it = readers.resultReturned.lower_bound({position, 0});
    return it != readers.resultReturned.end() && it->first.first == position;
  }

  const Sequence &sequence;
  const Readers &readers;
  uint32_t first, opsPerLayer, layers;
  std::vector<std::vector<OperandClass>> classes;
  std::vector<std::vector<uint32_t>> weights;
  SequenceValue input, output;
  bool outputSet = false;
};

} // namespace

std::optional<RepeatedLayers> ipu::findRepeatedLayers(const Sequence &sequence,
                                                      uint32_t minimumLayers) {
  minimumLayers = std::max<uint32_t>(minimumLayers, 2);
  const uint32_t count = static_cast<uint32_t>(sequence.ops.size());
  const Readers readers(sequence);
  std::optional<RepeatedLayers> best;
  uint64_t bestCovered = 0;
  // run[k]: how many positions from k on match the op a period later.
  std::vector<uint32_t> run(count + 1, 0);
  for (uint32_t period = 1; period <= count / minimumLayers; ++period) {
    run[count - period] = 0;
    for (uint32_t k = count - period; k-- > 0;)
      run[k] = sequence.ops[k].signature == sequence.ops[k + period].signature
                   ? run[k + 1] + 1
                   : 0;
    for (uint32_t k = 0; k + period < count; ++k) {
      if (run[k] == 0 || (k > 0 && run[k - 1] != 0))
        continue;
      // Ops [k, regionEnd) repeat with this period.
      const uint32_t regionEnd = k + run[k] + period;
      if (uint64_t(regionEnd - k) / period * period <= bestCovered)
        continue;
      for (uint32_t start = k; start < k + period; ++start) {
        for (uint32_t layers = (regionEnd - start) / period; layers >= minimumLayers;
             --layers) {
          if (uint64_t(layers) * period <= bestCovered)
            break;
          if (std::optional<RepeatedLayers> found =
                  Validation(sequence, readers, start, period, layers).run()) {
            best = std::move(found);
            bestCovered = uint64_t(layers) * period;
            break;
          }
        }
      }
    }
  }
  return best;
}

std::string ipu::describe(const RepeatedLayers &layers) {
  std::ostringstream out;
  out << "layers=" << layers.layers << " opsPerLayer=" << layers.opsPerLayer
      << " firstOp=" << layers.first << " endOp=" << layers.end()
      << " weightsPerLayer=" << layers.weights.size() << " outputOp=" << layers.output.index;
  return out.str();
}
