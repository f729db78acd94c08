// str_cat's number formatting (error.h), without iostreams.
#include "compiler/plan/error.h"

#include <cstdio>

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
