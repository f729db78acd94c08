#include "compiler/passes/qdq_match.h"

namespace ferrite {

bool is_onnx_op(const Node* n, const char* op) {
  return n && n->op_type == op && (n->domain.empty() || n->domain == "ai.onnx");
}

bool eight_bit(DType t) {
  return t == DType::U8 || t == DType::I8;
}

DType quantized_type(const Node* n, const Value* tensor) {
  DType t = tensor ? tensor->type.dtype : DType::Undefined;
  if (n->input(2)) t = n->input(2)->type.dtype;
  if (t == DType::Undefined && n->op_type == "QuantizeLinear" && !n->has_attr("output_dtype"))
    t = DType::U8;
  return eight_bit(t) ? t : DType::Undefined;
}

bool per_tensor(const Node* n) {
  const Value *s = n->input(1), *z = n->input(2);
  auto one = [](const Value* v) {
    return v->type.rank_known &&
           (v->type.shape.empty() || (v->type.shape.size() == 1 && v->type.shape[0] == 1));
  };
  return s && s->type.dtype == DType::F32 && one(s) && (!z || one(z)) &&
         n->attr_int("block_size", 0) == 0;
}

const Node* dequantize_of(const Value* v) {
  const Node* d = v ? v->producer : nullptr;
  if (!is_onnx_op(d, "DequantizeLinear") || quantized_type(d, d->input(0)) == DType::Undefined ||
      d->input(1)->type.dtype != DType::F32 || d->attr_int("block_size", 0) != 0 ||
      (d->has_attr("output_dtype") && d->attr_int("output_dtype", 1) != 1))
    return nullptr;
  return d;
}

}  // namespace ferrite
