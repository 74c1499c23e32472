//===- Nesting.cpp - A bound on bracket nesting in textual IR ------------===//

#include "IPU/Support/Nesting.h"

std::optional<std::string> ipu::checkNesting(std::string_view text,
                                             unsigned limit) {
  unsigned depth = 0, line = 1;
  bool inString = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '\n') {
      ++line;
      inString = false; // MLIR strings do not span lines.
      continue;
    }
    if (inString) {
      if (c == '\\')
        ++i; // Skip the escaped character.
      else if (c == '"')
        inString = false;
      continue;
    }
    if (c == '"') {
      inString = true;
    } else if (c == '/' && i + 1 < text.size() && text[i + 1] == '/') {
      size_t end = text.find('\n', i);
      i = (end == std::string_view::npos ? text.size() : end) - 1;
    } else if (c == '(' || c == '[' || c == '{' || c == '<') {
      if (++depth > limit)
        return "line " + std::to_string(line) + ": brackets nest more than " +
               std::to_string(limit) + " deep";
    } else if ((c == ')' || c == ']' || c == '}' || c == '>') && depth > 0) {
      // '->' is an arrow, not a bracket.
      if (!(c == '>' && i > 0 && text[i - 1] == '-'))
        --depth;
    }
  }
  return std::nullopt;
}
