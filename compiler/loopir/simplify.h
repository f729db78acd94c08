// Index simplification (Inductor does this with sympy). Index expressions built by views
// (reshape, transpose, slice, broadcast) are raw trees full of `+ 0`, `* 1` and div/mod
// pairs; the simplifier canonicalises them into sums of terms and removes what the loop
// ranges prove redundant:
//   (c*q*x + r) // c  →  q*x + r // c          r // c → 0 when 0 <= r < c
//   (c*q*x + r) %  c  →  r % c                  r %  c → r when 0 <= r < c
//   (x // a) // b     →  x // (a*b)             (x // a) % b → x // a when x < a*b
// so that a contiguous access becomes affine again and backends see its strides.
#pragma once

#include <cstdint>
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

#include "compiler/plan/index_expr.h"

namespace ferrite {

class SimplifyImpl;

struct IndexRange {
  int64_t lo = 0;
  int64_t hi = 0;  // inclusive
};

class IndexSimplifier {
 public:
  // var_extent[v]: loop variable v takes values 0 .. extent-1.
  explicit IndexSimplifier(std::vector<int64_t> var_extent) : extent_(std::move(var_extent)) {}
  // Declares that SSA value `id` (a checked index) lies in [0, size).
  void set_value_range(int id, int64_t size);
  // Declares that symbol `id` (a Sym leaf: a size known at run time) lies in [lo, hi].
  // Without it a symbol is unbounded, and nothing is proved about the terms holding it.
  void set_symbol_range(int id, int64_t lo, int64_t hi);
  // Declares the range of every symbol that set_symbol_range did not name.
  void set_default_symbol_range(int64_t lo, int64_t hi) { default_symbol_range_ = {lo, hi}; }

  Index simplify(const Index& e) const;
  std::optional<IndexRange> range(const Index& e) const;

 private:
  friend class SimplifyImpl;
  std::vector<int64_t> extent_;
  std::unordered_map<int, int64_t> value_size_;
  std::unordered_map<int, IndexRange> symbol_range_;
  std::optional<IndexRange> default_symbol_range_;
};

// Light, range-free smart constructors used while building expressions: they fold
// constants and drop identities (x + 0, x * 1, x * 0, x // 1, x % 1). A constant that
// overflows int64, or a divisor or modulus below 1, is an Error.
Index ix_add(Index a, Index b);
Index ix_mul(Index a, int64_t c);
Index ix_floordiv(Index a, int64_t c);
Index ix_mod(Index a, int64_t c);

}  // namespace ferrite
