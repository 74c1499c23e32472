//===- PhaseText.cpp - Exchange phases as text ----------------------------===//

#include "IPU/Exchange/PhaseText.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <istream>
#include <ostream>

using namespace ipu;
using std::to_string;

namespace {

/// Splits a line (comment removed) into whitespace-separated fields.
std::vector<std::string> fieldsOf(const std::string &line) {
  std::vector<std::string> fields;
  size_t end = line.find('#');
  if (end == std::string::npos)
    end = line.size();
  size_t i = 0;
  while (i < end) {
    while (i < end && std::isspace(static_cast<unsigned char>(line[i])))
      ++i;
    size_t begin = i;
    while (i < end && !std::isspace(static_cast<unsigned char>(line[i])))
      ++i;
    if (i > begin)
      fields.push_back(line.substr(begin, i - begin));
  }
  return fields;
}

/// A decimal number that fits 32 bits, or a message saying why not.
std::optional<std::string> parseNumber(const std::string &text,
                                       uint32_t &value) {
  if (text.empty() || text.size() > 10)
    return "'" + text + "' is not a 32-bit unsigned number";
  uint64_t v = 0;
  for (char c : text) {
    if (c < '0' || c > '9')
      return "'" + text + "' is not a 32-bit unsigned number";
    v = v * 10 + uint64_t(c - '0');
  }
  if (v > UINT32_MAX)
    return "'" + text + "' is not a 32-bit unsigned number";
  value = static_cast<uint32_t>(v);
  return std::nullopt;
}

/// A byte address: decimal, or hex after 0x; below 2^32.
std::optional<std::string> parseAddress(const std::string &text,
                                        uint32_t &value) {
  if (text.size() < 3 || text.compare(0, 2, "0x") != 0)
    return parseNumber(text, value);
  if (text.size() > 10)
    return "'" + text + "' is not a 32-bit address";
  uint64_t v = 0;
  for (size_t i = 2; i < text.size(); ++i) {
    char c = text[i];
    int digit = c >= '0' && c <= '9'   ? c - '0'
                : c >= 'a' && c <= 'f' ? c - 'a' + 10
                : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                       : -1;
    if (digit < 0)
      return "'" + text + "' is not a 32-bit address";
    v = v * 16 + uint64_t(digit);
  }
  value = static_cast<uint32_t>(v);
  return std::nullopt;
}

} // namespace

std::optional<std::string> ipu::readPhaseText(std::istream &in,
                                              ExchangePhase &phase,
                                              TransferAddresses *addresses) {
  phase = ExchangePhase();
  TransferAddresses read;
  if (addresses)
    *addresses = TransferAddresses();
  std::string line;
  size_t lineNumber = 0;
  bool haveTiles = false;
  std::vector<uint32_t> destinations;
  std::vector<size_t> seenIn; // Per tile: the last line listing it.
  while (std::getline(in, line)) {
    ++lineNumber;
    std::vector<std::string> fields = fieldsOf(line);
    if (fields.empty())
      continue;
    std::string where = "line " + to_string(lineNumber) + ": ";
    if (!haveTiles) {
      if (fields[0] != "tiles" || fields.size() != 2)
        return where + "expected 'tiles N' before any transfer";
      if (auto error = parseNumber(fields[1], phase.tiles))
        return where + "tiles: " + *error;
      haveTiles = true;
      seenIn.assign(phase.tiles, 0);
      continue;
    }
    // An optional "@ sourceAddress destAddress" ends the line.
    std::optional<std::pair<uint32_t, uint32_t>> at;
    auto marker = std::find(fields.begin(), fields.end(), "@");
    if (marker != fields.end()) {
      if (fields.end() - marker != 3)
        return where + "expected '@ sourceAddress destAddress' at the end";
      uint32_t from, to;
      if (auto error = parseAddress(marker[1], from))
        return where + "source address: " + *error;
      if (auto error = parseAddress(marker[2], to))
        return where + "destination address: " + *error;
      at = {from, to};
      fields.erase(marker, fields.end());
    }
    if (phase.size() > 0 && at.has_value() != !read.source.empty())
      return where + (at ? "addresses on this transfer but not on the ones before"
                         : "no addresses on this transfer but on the ones before");
    if (at) {
      read.source.push_back(at->first);
      read.dest.push_back(at->second);
    }
    if (fields.size() < 3)
      return where + "expected 'source words destination [destination...]'";
    uint32_t source, words;
    if (auto error = parseNumber(fields[0], source))
      return where + "source: " + *error;
    if (auto error = parseNumber(fields[1], words))
      return where + "words: " + *error;
    destinations.clear();
    for (size_t i = 2; i < fields.size(); ++i) {
      uint32_t d;
      if (auto error = parseNumber(fields[i], d))
        return where + "destination " + to_string(i - 1) + ": " + *error;
      destinations.push_back(d);
    }
    phase.addTransfer(source, words, destinations);
    // Checks that name a single field are reported with its line here;
    // validate() below catches the rest.
    if (source >= phase.tiles)
      return where + "source: tile " + to_string(source) +
             " is out of range [0, " + to_string(phase.tiles) + ")";
    if (words == 0)
      return where + "words: a transfer needs at least one word";
    for (size_t i = 0; i < destinations.size(); ++i) {
      if (destinations[i] >= phase.tiles)
        return where + "destination " + to_string(i + 1) + ": tile " +
               to_string(destinations[i]) + " is out of range [0, " +
               to_string(phase.tiles) + ")";
      if (seenIn[destinations[i]] == lineNumber)
        return where + "destination " + to_string(i + 1) + ": tile " +
               to_string(destinations[i]) + " is listed twice";
      seenIn[destinations[i]] = lineNumber;
    }
  }
  if (!haveTiles)
    return std::string("missing 'tiles N' line");
  if (auto error = phase.validate())
    return "invalid phase: " + *error;
  if (addresses)
    *addresses = std::move(read);
  return std::nullopt;
}

void ipu::writePhaseText(std::ostream &out, const ExchangePhase &phase,
                         const TransferAddresses *addresses) {
  const bool withAddresses = addresses && addresses->source.size() == phase.size() &&
                             addresses->dest.size() == phase.size();
  out << "tiles " << phase.tiles << "\n";
  char hex[32];
  for (size_t t = 0, e = phase.size(); t < e; ++t) {
    out << phase.source[t] << ' ' << phase.words[t];
    for (const uint32_t *d = phase.destinationsBegin(t),
                        *de = phase.destinationsEnd(t);
         d != de; ++d)
      out << ' ' << *d;
    if (withAddresses) {
      std::snprintf(hex, sizeof(hex), " @ 0x%x 0x%x", addresses->source[t],
                    addresses->dest[t]);
      out << hex;
    }
    out << '\n';
  }
}
