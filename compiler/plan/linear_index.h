// Index expressions seen as linear forms over the loop variables, for passes that rewrite a
// kernel's loop dimensions (compiler/plan/loop_dims.h). Every expression is
//   offset + sum(coeff[v] * var_v) + sum(factor * term)
// where a term is what is not linear in the variables: a loaded value, a floor-div, a mod,
// or a product of two non-constant expressions; the operands of a term are linear forms
// again. Changing the loop variables then means changing coefficient vectors, also under
// div/mod: (i2 // 64) keeps its meaning when i1 and i2 merge as long as the operand form
// i2 (and every other form) walks them as one.
//
// The forms use wrapping arithmetic, as eval_index does: int64 addition and multiplication
// wrap modulo 2^64, so regrouping and scaling sums gives bit-identical indices even where an
// intermediate would overflow.
#pragma once

#include <cstdint>
#include <vector>

#include "compiler/plan/index_expr.h"

namespace ferrite {

struct LinearTerm;

struct LinearForm {
  int64_t offset = 0;
  std::vector<int64_t> coeff;     // one per loop variable
  std::vector<LinearTerm> terms;  // factor * (non-linear node)
};

struct LinearTerm {
  int64_t factor = 1;
  IndexKind kind = IndexKind::Value;  // Value, FloorDiv, Mod or Mul
  int32_t id = 0;                     // Value: the SSA id
  std::vector<LinearForm> operands;   // FloorDiv, Mod, Mul: a and b
};

// The linear form of e over `num_vars` loop variables (Var leaves must be < num_vars).
LinearForm linearize(const IndexNode& e, int num_vars);

// An index expression with the value of f: variables in increasing order, then the terms,
// then the offset; products by 1 and zero coefficients are left out.
Index delinearize(const LinearForm& f);

// Calls fn(form) on f and on every form nested in its terms (operands first).
template <class F>
void for_each_form(const LinearForm& f, F&& fn) {
  for (const LinearTerm& t : f.terms)
    for (const LinearForm& o : t.operands) for_each_form(o, fn);
  fn(f);
}

// Replaces every coefficient vector c (over the old variables) by c * M, where
// M[v] = { (new variable j, weight) ... }: new coeff[j] = sum over v of c[v] * weight.
// Wrapping arithmetic; the caller proves the mapping keeps every index's value.
using CoeffMap = std::vector<std::vector<std::pair<int, int64_t>>>;
LinearForm map_coefficients(const LinearForm& f, const CoeffMap& m, int new_num_vars);

}  // namespace ferrite
