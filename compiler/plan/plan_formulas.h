// The formulas of a plan compiled once for every value of its symbols (docs/shapes.md,
// step 3): the Plan keeps its int64 fields, which the backends and the plan format read,
// at the symbols' hints, and each field that depends on a symbol has its formula beside it,
// an Index expression of Const and Sym leaves. Instantiating the plan for the symbols'
// values writes each field from its formula; the pool is then placed for those sizes.
#pragma once

#include <cstdint>
#include <vector>

#include "compiler/plan/index_expr.h"
#include "compiler/plan/plan.h"

namespace ferrite {

enum class FormulaField : uint8_t {
  BufferShape,   // plan.buffers[item].shape[dim]
  InputShape,    // plan.externs[item].inputs[operand].shape[dim]
  InputStride,   // ... .strides[dim]
  InputOffset,   // ... .offset
  OutputShape,   // plan.externs[item].outputs[operand].shape[dim]
  OutputStride,  // ... .strides[dim]
  OutputOffset,  // ... .offset
  SymbolValues,  // plan.buffers[item], a constant: the symbols' values (int64, in order)
};

struct FieldFormula {
  FormulaField field = FormulaField::BufferShape;
  int32_t item = 0;
  int32_t operand = 0;
  int32_t dim = 0;
  Index formula;
};

// Appends a formula for the field when `formula` holds a symbol (else the field is the
// same at every size, and the plan's value is it).
void add_formula(std::vector<FieldFormula>* out, FormulaField field, int32_t item, int32_t operand,
                 int32_t dim, const Index& formula);
void add_ref_formulas(std::vector<FieldFormula>* out, bool input, int32_t extern_index,
                      int32_t operand, const std::vector<Index>& shape,
                      const std::vector<Index>& strides, const Index& offset);

// `plan` with every formula's field written for symbol values `values`. An out-of-range
// field or a formula that does not evaluate is an Error.
Plan substitute_formulas(const Plan& plan, const std::vector<FieldFormula>& formulas,
                         const std::vector<int64_t>& values);

std::string formulas_to_string(const std::vector<FieldFormula>& formulas);

}  // namespace ferrite
