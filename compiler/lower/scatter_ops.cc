// Scatters become extern calls (their meaning: runtime/kernels/reference/scatter.h): a
// fresh copy of data with the updates applied one by one, in order, which no pointwise or
// reduction kernel expresses. ScatterElements, the deprecated Scatter (ScatterElements
// without reduction) and ScatterND; shapes are checked here so that errors name the node,
// indices at run time by the extern.
#include "compiler/lower/lowering.h"

namespace ferrite {
namespace {

// ONNX's reduction attribute as the extern's ints["reduction"] (absent for "none").
void set_reduction(const LowerCtx& c, ExternNode* e) {
  const std::string r = c.node.attr_string("reduction", "none");
  if (r == "none") return;
  ReduceKind k;
  if (r == "add") {
    k = ReduceKind::Sum;
  } else if (r == "mul") {
    k = ReduceKind::Prod;
  } else if (r == "max") {
    k = ReduceKind::Max;
  } else if (r == "min") {
    k = ReduceKind::Min;
  } else {
    c.error("unknown reduction '", r, "' (none, add, mul, max or min)");
  }
  e->ints["reduction"] = static_cast<int64_t>(k);
}

std::string shape_text(const TensorBoxPtr& t) {
  return TensorType{t->dtype, t->size, {}, true}.to_string();
}

// The checks both scatters share: dtypes of data, indices and updates.
void check_operands(const LowerCtx& c) {
  const TensorBoxPtr &data = c.input(0), &ind = c.input(1), &upd = c.input(2);
  if (dtype_size(data->dtype) == 0) c.unsupported("data of type ", dtype_name(data->dtype));
  if (ind->dtype != DType::I32 && ind->dtype != DType::I64)
    c.error("indices must be int32 or int64, got ", dtype_name(ind->dtype));
  if (upd->dtype != data->dtype)
    c.error("updates ", shape_text(upd), " must have data's type ", dtype_name(data->dtype));
}

TensorBoxPtr scatter_extern(LowerCtx& c, ExternNode e) {
  const TensorBoxPtr &data = c.input(0), &ind = c.input(1), &upd = c.input(2);
  e.origin = c.origin();
  e.inputs.push_back(c.gl.extern_operand(data));
  e.inputs.push_back(c.gl.extern_operand(ind));
  e.inputs.push_back(c.gl.extern_operand(upd));
  Buffer* out = c.gl.new_buffer("", data->dtype, data->size, BufferOrigin::Extern);
  e.outputs.push_back(out);
  c.gl.add_extern(std::move(e));
  return make_buffer_box(out);
}

// ScatterElements, and Scatter (opset 9/10; no reduction attribute).
std::vector<TensorBoxPtr> lower_scatter_elements(LowerCtx& c) {
  check_operands(c);
  const TensorBoxPtr &data = c.input(0), &ind = c.input(1), &upd = c.input(2);
  const size_t r = data->size.size();
  if (r == 0) c.error("data must have rank >= 1");
  const int axis = c.axis(c.node.attr_int("axis", 0), r);
  if (ind->size != upd->size || ind->size.size() != r)
    c.error("indices ", shape_text(ind), " and updates ", shape_text(upd),
            " must have one shape of data's rank ", r);
  for (size_t d = 0; d < r; ++d) {
    if (static_cast<int>(d) != axis && ind->size[d] > data->size[d])
      c.error("indices ", shape_text(ind), " exceed data ", shape_text(data), " in dim ", d);
  }
  ExternNode e;
  e.op = "ScatterElements";
  e.ints["axis"] = axis;
  set_reduction(c, &e);
  return {scatter_extern(c, std::move(e))};
}

std::vector<TensorBoxPtr> lower_scatter_nd(LowerCtx& c) {
  check_operands(c);
  const TensorBoxPtr &data = c.input(0), &ind = c.input(1), &upd = c.input(2);
  if (ind->size.empty()) c.error("indices must have rank >= 1");
  const int64_t k = ind->size.back();
  if (k > static_cast<int64_t>(data->size.size()))
    c.error("indices ", shape_text(ind), ": the last dim exceeds data's rank ", data->size.size());
  std::vector<int64_t> want(ind->size.begin(), ind->size.end() - 1);
  want.insert(want.end(), data->size.begin() + k, data->size.end());
  if (upd->size != want)
    c.error("updates ", shape_text(upd), " must have shape ",
            TensorType{upd->dtype, want, {}, true}.to_string(),
            " (indices.shape[:-1] + data.shape[k:])");
  ExternNode e;
  e.op = "ScatterND";
  set_reduction(c, &e);
  return {scatter_extern(c, std::move(e))};
}

}  // namespace

void register_scatter_ops(LoweringTable& t) {
  t.add("ScatterElements", lower_scatter_elements);
  t.add("Scatter", lower_scatter_elements);
  t.add("ScatterND", lower_scatter_nd);
}

}  // namespace ferrite
