// int64 arithmetic that wraps modulo 2^64, as the Kernel contract's index and integer ops
// are defined (scalar_ops.h, index_expr.h): an index computed from a corrupt plan may
// overflow, and signed overflow must not be undefined behaviour (bounds checks then refuse
// the result).
#pragma once

#include <cstdint>

namespace ferrite {

constexpr int64_t wrap_add(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}
constexpr int64_t wrap_sub(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b));
}
constexpr int64_t wrap_mul(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
}

}  // namespace ferrite
