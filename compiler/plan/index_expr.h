// Index expressions of the Kernel contract: how a load or store finds its element.
// An expression is a small immutable tree over loop variables (Var), constants, values
// loaded earlier in the kernel body (Value: indirect indexing, e.g. Gather), and the
// operators + * floordiv mod. The compiler also writes sizes with them: a Sym leaf is a
// symbolic dimension (docs/shapes.md), a size known only when the model runs. Symbols are
// bound to values before a plan reaches a backend (bind_syms): a kernel holds none. floordiv and
// mod follow Python: floor rounding, and a result with the divisor's sign. The compiler simplifies
// these (compiler/loopir); the backends only evaluate them or ask for their affine form.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace ferrite {

// Sym comes last: plans written before it read the same kinds.
enum class IndexKind : uint8_t { Const, Var, Value, Add, Mul, FloorDiv, Mod, Sym };

struct IndexNode;
using Index = std::shared_ptr<const IndexNode>;

struct IndexNode {
  IndexKind kind = IndexKind::Const;
  int64_t c = 0;   // Const: the value
  int32_t id = 0;  // Var: loop variable number; Value: SSA id of an i64 value in the body;
                   // Sym: symbol number
  Index a, b;      // operands of Add, Mul, FloorDiv, Mod
};

// Raw constructors: no simplification (see compiler/loopir/simplify.h for that).
Index ix_const(int64_t c);
Index ix_var(int id);
Index ix_value(int ssa_id);
Index ix_sym(int symbol);
Index ix_binary(IndexKind kind, Index a, Index b);

int64_t floordiv64(int64_t a, int64_t b);
int64_t mod64(int64_t a, int64_t b);

// Evaluates with loop variables `vars` and SSA values `values` (indexed by SSA id). The
// expression holds no Sym leaf (bind_syms first; a kernel never holds one).
int64_t eval_index(const IndexNode& e, const int64_t* vars, const int64_t* values);

// offset + sum(coeff[v] * var_v). Only for expressions of Const, Var, Add and Mul by a
// constant; anything else (Value, FloorDiv, Mod) is not affine. Computed with wrapping
// arithmetic, as eval_index: the form gives eval_index's value at every point (the
// constants of a plan from elsewhere may overflow).
struct AffineIndex {
  int64_t offset = 0;
  std::vector<int64_t> coeff;  // one per loop variable
};
bool as_affine(const IndexNode& e, int num_vars, AffineIndex* out);

// True when the expression mentions loop variable `var` (directly or under div/mod).
bool index_uses_var(const IndexNode& e, int var);
// True when the expression contains a Value leaf.
bool index_uses_value(const IndexNode& e);
// Collects the SSA ids of Value leaves.
void index_values(const IndexNode& e, std::vector<int>* out);
// True when the expression contains a Sym leaf.
bool index_uses_sym(const IndexNode& e);
// `e` with each Sym leaf s replaced by the constant values[s] (unsimplified: simplify.h
// folds the constants). A symbol past `values` is an Error.
Index bind_syms(const Index& e, const std::vector<int64_t>& values);
// Evaluates a size formula (an expression of Const and Sym leaves) with symbol s equal to
// syms[s]. Formulas come from plans, which are untrusted: a loop variable or loaded value, a
// symbol past `syms`, a division by zero or an int64 overflow is an Error.
int64_t eval_size_formula(const IndexNode& e, const std::vector<int64_t>& syms);

std::string index_to_string(const IndexNode& e);

bool index_equal(const IndexNode& x, const IndexNode& y);

}  // namespace ferrite
