//===- Escape.h - The one way to print text that came from input -*- C++ -*-===//
//
// Names, locations, paths and messages that come from a package, the IR or
// the command line are untrusted: a newline in a function name must not
// start a forged report line, and an escape sequence must not reach a
// terminal. Every such string goes through one of these before it is
// printed to stdout, stderr, a log, the trace or the profile.
//
//===----------------------------------------------------------------------===//

#ifndef IPU_SUPPORT_ESCAPE_H
#define IPU_SUPPORT_ESCAPE_H

#include <string>
#include <string_view>

namespace ipu {

/// `text` on one line of printable characters: a backslash doubled, \n,
/// \r and \t spelled so, every other control character (C0, DEL and the
/// C1 range U+0080-U+009F) and every byte that is not part of valid UTF-8
/// as \xHH, and every code point that is invisible or reorders the line
/// (format characters, category Cf: bidi overrides and isolates such as
/// U+202E, zero-width characters, U+FEFF...; line separators; spaces other
/// than U+0020; invisible fillers) as \u{HHHH}. Valid UTF-8 otherwise
/// stays as it is.
std::string escapeText(std::string_view text);

/// A value of a `key=value` report or log line: escapeText's with '=' as
/// \x3d (so that no `key=value` hides inside a value), then quoted ("...",
/// with \" for a quote) when it is empty or holds a space or a quote, so
/// that it always reads as one token.
std::string reportValue(std::string_view value);

/// A JSON string literal, quotes included: control characters, DEL, C1
/// controls and bytes outside valid UTF-8 as \u00XX, escapeText's
/// invisible code points as \uXXXX (a surrogate pair past U+FFFF), and
/// '<', '>' and '&' too, so that it is also safe inside an HTML <script>
/// element.
std::string jsonString(std::string_view text);

} // namespace ipu

#endif // IPU_SUPPORT_ESCAPE_H
