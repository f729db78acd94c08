// str_cat's number formatting and the escaping of messages (error.h), without iostreams.
#include "compiler/plan/error.h"

#include <cstdio>

namespace ferrite {
namespace {

// The length of the valid UTF-8 sequence at s[i] (RFC 3629: no overlong forms, no
// surrogates, nothing past U+10FFFF), or 0.
size_t utf8_length(std::string_view s, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = byte(i);
  size_t n = 0;
  unsigned char lo = 0x80, hi = 0xBF;  // the range of the second byte
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  if (i + n > s.size() || byte(i + 1) < lo || byte(i + 1) > hi) return 0;
  for (size_t k = 2; k < n; ++k)
    if (byte(i + k) < 0x80 || byte(i + k) > 0xBF) return 0;
  return n;
}

// The code point of one valid UTF-8 sequence.
unsigned code_point(std::string_view s) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]) & 0x3Fu; };
  const unsigned lead = static_cast<unsigned char>(s[0]);
  unsigned code = s.size() == 2 ? lead & 0x1F : s.size() == 3 ? lead & 0x0F : lead & 0x07;
  for (size_t k = 1; k < s.size(); ++k) code = code << 6 | byte(k);
  return code;
}

// Code points that are valid UTF-8 but still steer a terminal or a log line: the C1
// controls (U+009B is CSI), the line and paragraph separators, and the bidirectional
// embeddings, overrides and isolates, which reorder what a line shows.
bool invisible_control(unsigned code) {
  return (code >= 0x80 && code <= 0x9F) || (code >= 0x2028 && code <= 0x202E) ||
         (code >= 0x2066 && code <= 0x2069);
}

void append_escape(std::string* out, const char* format, unsigned value) {
  char buf[8];
  const int n = std::snprintf(buf, sizeof(buf), format, value);
  if (n > 0) out->append(buf, static_cast<size_t>(n));
}

}  // namespace

std::string printable(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x7F) {
      out += static_cast<char>(c);
      ++i;
    } else if (c == '\n' || c == '\r' || c == '\t') {
      out += c == '\n' ? "\\n" : c == '\r' ? "\\r" : "\\t";
      ++i;
    } else if (const size_t n = c >= 0x80 ? utf8_length(text, i) : 0) {
      const unsigned code = code_point(text.substr(i, n));
      if (invisible_control(code)) {
        append_escape(&out, "\\u%04x", code);
      } else {
        out.append(text.substr(i, n));
      }
      i += n;
    } else {
      append_escape(&out, "\\x%02x", c);  // C0, DEL, or a byte of invalid UTF-8
      ++i;
    }
  }
  return out;
}

}  // namespace ferrite

namespace ferrite::detail {

void append_signed(std::string* s, long long v) {
  s->append(std::to_string(v));
}

void append_unsigned(std::string* s, unsigned long long v) {
  s->append(std::to_string(v));
}

void append_double(std::string* s, double v) {
  char buf[32];
  const int n = std::snprintf(buf, sizeof(buf), "%g", v);
  if (n > 0) s->append(buf, static_cast<size_t>(n));
}

}  // namespace ferrite::detail
