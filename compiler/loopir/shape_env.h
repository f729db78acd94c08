// ShapeEnv (Inductor's ShapeEnv, docs/shapes.md step 1): the symbols of a compile that keeps
// a model's symbolic dims symbolic. A symbol is a named input dim (or an unnamed one of its
// own), read at run time from one input's dim; its hint is the size the compile was given,
// which lowerings still read where they are not yet symbolic.
//
// Sizes are Index expressions over Sym leaves (compiler/plan/index_expr.h). A TensorBox,
// StorageBox or Buffer whose `sym` sizes are set promises that they hold for every value of
// the symbols in their ranges, and that every index its loader builds does too (a size enters
// as a Sym leaf, never as its hint). Only lowerings that keep that promise set them; a value
// without them stops the symbolic compile (NotSymbolicError), and the model is compiled per
// shape as before. Symbols range over [1, 2^31), but a compile is hinted by sizes of at
// least 2: a lowering that reads a hint of 1 broadcasts it, so a symbolic dim fed 0 or 1 is
// specialized, a constant in that plan (as Inductor does; the engine keeps a plan per
// pattern of such dims). At run time a symbol may be 1: every decision a ported lowering
// makes is on the sym sizes (a Const 1 broadcasts, a symbol never does, and a loop over a
// range of 1 is still right), and the simplifier proves only what holds down to 1.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "compiler/graph/graph.h"
#include "compiler/loopir/simplify.h"
#include "compiler/plan/error.h"
#include "compiler/plan/index_expr.h"

namespace ferrite {

struct ShapeSymbol {
  std::string name;  // the dim's name in the model ("" for an unnamed dynamic dim)
  int input = 0;     // read from this graph input's dim `dim`
  int dim = 0;
  int64_t hint = 0;
};

struct ShapeEnv {
  static constexpr int64_t kMinHint = 2;  // the least size a symbolic compile is hinted by
  static constexpr int64_t kMinSize = 1;  // the least value of a symbol
  static constexpr int64_t kMaxSize = (int64_t{1} << 31) - 1;

  std::vector<ShapeSymbol> symbols;
  // The symbolic size of each graph input (per dim: a Const or a Sym leaf).
  std::vector<std::vector<Index>> input_sizes;

  // Symbols for `declared` (the graph's input types, with their dim names), hinted by `fed`
  // (concrete shapes). A dim declared static is a Const, as is a symbolic one fed 0 or 1
  // (specialized); dims of one name share a symbol. A fed shape that is not the declared
  // rank, a negative or too large size, or one name fed two sizes is an Error (the caller
  // compiles that shape on its own).
  static ShapeEnv for_inputs(const std::vector<TensorType>& declared,
                             const std::vector<TensorType>& fed);

  // The symbols' values for these fed shapes, or false when the shapes do not fit the
  // symbols (a size outside their range, one name fed two sizes, a static dim changed).
  bool values_for(const std::vector<std::vector<int64_t>>& shapes,
                  std::vector<int64_t>* values) const;

  // The symbols' values at their hints.
  std::vector<int64_t> hints() const;
};

// Thrown while compiling symbolically where a value, kernel or call is not yet symbolic:
// the caller compiles per shape instead. `what()` names the node and why.
// Not an Error: no lowering's handler for its own errors catches it.
class NotSymbolicError : public std::runtime_error {
 public:
  explicit NotSymbolicError(const std::string& m) : std::runtime_error(m) {}
};

template <class... Args>
[[noreturn]] void not_symbolic(const Args&... args) {
  throw NotSymbolicError(str_cat(args...));
}

// Size arithmetic on Index expressions: constants folded, as ix_add and ix_mul do.
Index sym_mul(const Index& a, const Index& b);
// Row-major strides of `size` (the innermost 1).
std::vector<Index> sym_contiguous_strides(const std::vector<Index>& size);
std::vector<Index> sym_consts(const std::vector<int64_t>& values);
// Whether two sizes are the same expression (structurally, as simplified by construction).
bool sym_equal(const Index& a, const Index& b);
bool sym_is_const(const Index& a, int64_t c);
// a // d and a % d (Python's, as the Index tree's), folded when d is a constant.
Index sym_floordiv(const Index& a, const Index& d);
Index sym_mod(const Index& a, const Index& d);
// `e` simplified over the symbols' ranges (a canonical sum of terms, so that sizes computed
// two ways compare equal with sym_equal), and its range over them, when bounded.
Index sym_simplify(const Index& e);
std::optional<IndexRange> sym_range(const Index& e);

// An assumption a symbolic compile made about its symbols (Inductor's guard): lo <= formula
// <= hi. A plan compiled under it is an instance only for symbol values that satisfy it.
struct SymGuard {
  Index formula;
  int64_t lo = 0, hi = 0;
  std::string why;  // the node that assumed it
};
bool guards_hold(const std::vector<SymGuard>& guards, const std::vector<int64_t>& values);

// A size that is a product: coeff times the symbols in `syms` (sorted, with repeats).
// Sizes of reshapes are products, and these compare, multiply and divide exactly.
struct SymMonomial {
  int64_t coeff = 1;
  std::vector<int32_t> syms;
};
// `e` as a monomial, or nothing when it is not a product of constants and symbols.
std::optional<SymMonomial> sym_monomial(const Index& e);
Index monomial_index(const SymMonomial& m);
bool monomial_equal(const SymMonomial& a, const SymMonomial& b);
SymMonomial monomial_mul(const SymMonomial& a, const SymMonomial& b);
// a / b when b divides a exactly for every value of the symbols (its coefficient divides
// a's, its symbols are among a's), else nothing.
std::optional<SymMonomial> monomial_div(const SymMonomial& a, const SymMonomial& b);
// The product of `sizes` as a monomial, or nothing when one is not a product.
std::optional<SymMonomial> sym_product(const std::vector<Index>& sizes);

// Whether every size is a constant (no symbol).
bool sym_all_const(const std::vector<Index>& sizes);

// A simplifier for the indices of a kernel over loop ranges `sym_ranges` (sizes over the
// symbols), whose proofs hold for every value of the symbols: a loop over a symbolic range
// is known only to lie in [0, kMaxSize), and every symbol in [kMinSize, kMaxSize].
IndexSimplifier symbolic_simplifier(const std::vector<Index>& sym_ranges);

}  // namespace ferrite
