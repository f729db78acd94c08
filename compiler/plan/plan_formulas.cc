#include "compiler/plan/plan_formulas.h"

#include "compiler/plan/error.h"

namespace ferrite {
namespace {

int64_t* at(std::vector<int64_t>& v, int32_t i) {
  if (i < 0 || static_cast<size_t>(i) >= v.size()) fail("plan formula: dim ", i, " out of range");
  return &v[static_cast<size_t>(i)];
}

template <class T>
T& item(std::vector<T>& v, int32_t i) {
  if (i < 0 || static_cast<size_t>(i) >= v.size()) fail("plan formula: item ", i, " out of range");
  return v[static_cast<size_t>(i)];
}

TensorRef& ref_of(Plan& p, const FieldFormula& f) {
  ExternCall& x = item(p.externs, f.item);
  const bool input = f.field == FormulaField::InputShape || f.field == FormulaField::InputStride ||
                     f.field == FormulaField::InputOffset;
  return item(input ? x.inputs : x.outputs, f.operand);
}

int64_t* field_of(Plan& p, const FieldFormula& f) {
  switch (f.field) {
    case FormulaField::BufferShape:
      return at(item(p.buffers, f.item).shape, f.dim);
    case FormulaField::InputShape:
    case FormulaField::OutputShape:
      return at(ref_of(p, f).shape, f.dim);
    case FormulaField::InputStride:
    case FormulaField::OutputStride:
      return at(ref_of(p, f).strides, f.dim);
    case FormulaField::InputOffset:
    case FormulaField::OutputOffset:
      return &ref_of(p, f).offset;
    case FormulaField::SymbolValues:
      break;
  }
  fail("plan formula: unknown field ", static_cast<int>(f.field));
}

const char* field_name(FormulaField f) {
  switch (f) {
    case FormulaField::BufferShape:
      return "buffer shape";
    case FormulaField::InputShape:
      return "extern input shape";
    case FormulaField::InputStride:
      return "extern input stride";
    case FormulaField::InputOffset:
      return "extern input offset";
    case FormulaField::OutputShape:
      return "extern output shape";
    case FormulaField::OutputStride:
      return "extern output stride";
    case FormulaField::OutputOffset:
      return "extern output offset";
    case FormulaField::SymbolValues:
      return "symbol values in buffer";
  }
  return "?";
}

}  // namespace

void add_formula(std::vector<FieldFormula>* out, FormulaField field, int32_t item, int32_t operand,
                 int32_t dim, const Index& formula) {
  if (index_uses_sym(*formula)) out->push_back(FieldFormula{field, item, operand, dim, formula});
}

void add_ref_formulas(std::vector<FieldFormula>* out, bool input, int32_t extern_index,
                      int32_t operand, const std::vector<Index>& shape,
                      const std::vector<Index>& strides, const Index& offset) {
  for (size_t d = 0; d < shape.size(); ++d) {
    const int32_t dim = static_cast<int32_t>(d);
    add_formula(out, input ? FormulaField::InputShape : FormulaField::OutputShape, extern_index,
                operand, dim, shape[d]);
    add_formula(out, input ? FormulaField::InputStride : FormulaField::OutputStride, extern_index,
                operand, dim, strides.at(d));
  }
  add_formula(out, input ? FormulaField::InputOffset : FormulaField::OutputOffset, extern_index,
              operand, 0, offset);
}

Plan substitute_formulas(const Plan& plan, const std::vector<FieldFormula>& formulas,
                         const std::vector<int64_t>& values) {
  Plan p = plan;
  for (const FieldFormula& f : formulas) {
    if (f.field != FormulaField::SymbolValues) {
      *field_of(p, f) = eval_size_formula(*f.formula, values);
      continue;
    }
    const PlanBuffer& b = item(p.buffers, f.item);
    if (b.kind != BufferKind::Constant || b.dtype != DType::I64 ||
        b.shape != std::vector<int64_t>{static_cast<int64_t>(values.size())})
      fail("plan formula: buffer ", f.item, " cannot hold ", values.size(), " symbol values");
    const auto* bytes = reinterpret_cast<const uint8_t*>(values.data());
    item(p.constants, b.constant) = ConstantBytes(bytes, bytes + values.size() * sizeof(int64_t));
  }
  return p;
}

std::string formulas_to_string(const std::vector<FieldFormula>& formulas) {
  std::string out;
  for (const FieldFormula& f : formulas) {
    out += str_cat(field_name(f.field), " ", f.item);
    if (f.field == FormulaField::SymbolValues) {
      out += "\n";
      continue;
    }
    if (f.field != FormulaField::BufferShape) out += str_cat(" operand ", f.operand);
    if (f.field != FormulaField::InputOffset && f.field != FormulaField::OutputOffset)
      out += str_cat(" dim ", f.dim);
    out += str_cat(" = ", index_to_string(*f.formula), "\n");
  }
  return out;
}

}  // namespace ferrite
