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
// shape as before. Symbols range over [2, 2^31): sizes 0 and 1 (broadcasting, empty tensors)
// are compiled per shape, as Inductor specializes them.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "compiler/graph/graph.h"
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
  static constexpr int64_t kMinSize = 2;
  static constexpr int64_t kMaxSize = (int64_t{1} << 31) - 1;

  std::vector<ShapeSymbol> symbols;
  // The symbolic size of each graph input (per dim: a Const or a Sym leaf).
  std::vector<std::vector<Index>> input_sizes;

  // Symbols for `declared` (the graph's input types, with their dim names), hinted by `fed`
  // (concrete shapes). A dim declared static is a Const; dims of one name share a symbol.
  // A fed shape that is not the declared rank, or a size outside the symbols' range, is an
  // Error (the caller compiles that shape on its own).
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

}  // namespace ferrite
