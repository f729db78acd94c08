#include "compiler/loopir/checked_int.h"

#include <cmath>
#include <string>

#include "compiler/plan/error.h"

namespace ferrite {
namespace {

[[noreturn]] void overflow(std::string_view what, int64_t a, char op, int64_t b) {
  fail(what, " overflows int64 (", a, ' ', op, ' ', b, ")");
}

std::string shape_string(const std::vector<int64_t>& size) {
  std::string s = "[";
  for (size_t i = 0; i < size.size(); ++i) s += str_cat(i ? ", " : "", size[i]);
  return s + "]";
}

}  // namespace

int64_t checked_add(int64_t a, int64_t b, std::string_view what) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) overflow(what, a, '+', b);
  return r;
}

int64_t checked_sub(int64_t a, int64_t b, std::string_view what) {
  int64_t r;
  if (__builtin_sub_overflow(a, b, &r)) overflow(what, a, '-', b);
  return r;
}

int64_t checked_mul(int64_t a, int64_t b, std::string_view what) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) overflow(what, a, '*', b);
  return r;
}

int64_t checked_product(const std::vector<int64_t>& dims, std::string_view what) {
  int64_t n = 1;
  for (int64_t d : dims) {
    if (d < 0) fail(what, ": negative dim ", d, " in ", shape_string(dims));
    if (__builtin_mul_overflow(n, d, &n))
      fail(what, ": the element count of ", shape_string(dims), " overflows int64");
  }
  return n;
}

int64_t checked_int(double v, std::string_view what) {
  // 2^63 is exactly representable; every double below it converts without overflow.
  if (!(v >= -9223372036854775808.0 && v < 9223372036854775808.0))
    fail(what, " (", v, ") is not a finite int64");
  return static_cast<int64_t>(v);
}

void check_shape(const std::vector<int64_t>& size, std::string_view what, size_t max_rank) {
  if (size.size() > max_rank) fail(what, ": ", size.size(), " dims, more than ", max_rank);
  int64_t n = 1;
  for (int64_t d : size) {
    if (d < 0) fail(what, ": negative dim ", d, " in shape ", shape_string(size));
    if (d != 0 && (__builtin_mul_overflow(n, d, &n) || n > kMaxShapeElements))
      fail(what, ": shape ", shape_string(size), " has more than 2^58 elements");
  }
}

}  // namespace ferrite
