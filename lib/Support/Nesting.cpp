//===- Nesting.cpp - A bound on bracket nesting in textual IR ------------===//

#include "IPU/Support/Nesting.h"

#include <algorithm>
#include <cctype>

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

std::optional<std::string> ipu::checkLinalgDimensionLists(std::string_view text) {
  auto isSpace = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; };
  for (std::string_view key : {std::string_view("permutation"),
                               std::string_view("dimensions")}) {
    for (size_t at = text.find(key); at != std::string_view::npos;
         at = text.find(key, at + 1)) {
      size_t i = at + key.size();
      // Only `key = [` starts such a list (as an attribute name, not part
      // of a longer identifier).
      if (at > 0 && (std::isalnum(static_cast<unsigned char>(text[at - 1])) ||
                     text[at - 1] == '_'))
        continue;
      // The custom forms write the list right after `outs(...)`; in an
      // attribute dictionary (the generic form) the parser checks it.
      size_t before = at;
      while (before > 0 && isSpace(text[before - 1]))
        --before;
      if (before == 0 || text[before - 1] != ')')
        continue;
      while (i < text.size() && isSpace(text[i]))
        ++i;
      if (i >= text.size() || text[i] != '=')
        continue;
      ++i;
      while (i < text.size() && isSpace(text[i]))
        ++i;
      // `[` (integer (`,` integer)*)? `]`
      bool expectValue = true, ok = false, empty = true;
      if (i < text.size() && text[i] == '[')
        ++i;
      else
        i = text.size(); // Anything but a list: refused below.
      while (i < text.size()) {
        char c = text[i];
        if (isSpace(c)) {
          ++i;
        } else if (c == ']' && (!expectValue || empty)) {
          ok = true;
          break;
        } else if (expectValue && (c == '-' || std::isdigit(static_cast<unsigned char>(c)))) {
          size_t start = i++;
          while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])))
            ++i;
          if (i == start + 1 && c == '-')
            break;
          expectValue = empty = false;
        } else if (!expectValue && c == ',') {
          expectValue = true;
          ++i;
        } else {
          break;
        }
      }
      if (!ok) {
        size_t line = 1 + std::count(text.begin(), text.begin() + at, '\n');
        return "line " + std::to_string(line) + ": malformed '" +
               std::string(key) +
               "' list (LLVM 22's linalg parser would crash on it)";
      }
    }
  }
  return std::nullopt;
}
