// TopK becomes a "TopK" extern call (its meaning: runtime/kernels/reference/topk.h): a
// partial sort per slice, with ties going to the lower index. K is an attribute up to
// opset 9 and an input after; a K fed at run time makes the plan specialize on its value
// (const_ints throws NeedsInputValueError and the Engine compiles again for it).
#include "compiler/lower/lowering.h"
#include "compiler/plan/externs/topk_call.h"

namespace ferrite {
namespace {

std::vector<TensorBoxPtr> lower_topk(LowerCtx& c) {
  const TensorBoxPtr& x = c.input(0);
  const size_t r = x->size.size();
  if (r == 0) c.error("X must have rank >= 1");
  if (dtype_size(x->dtype) == 0) c.unsupported("X of type ", dtype_name(x->dtype));
  const int axis = c.axis(c.node.attr_int("axis", -1), r);
  int64_t k;
  if (c.opset < 10) {
    k = c.node.attr_int("k", -1);
  } else {
    std::vector<int64_t> kv = c.const_ints(1);
    if (kv.size() != 1) c.error("K must hold one value, got ", kv.size());
    k = kv[0];
  }
  if (k < 0 || k > x->size[axis])
    c.error("K = ", k, " outside [0, ", x->size[axis], "] for axis ", axis, " of ",
            TensorType{x->dtype, x->size, {}, true}.to_string());
  std::vector<int64_t> out_size = x->size;
  out_size[axis] = k;
  ExternNode e;
  encode_extern(TopKCall{axis, k, c.node.attr_int("largest", 1) != 0}, &e);
  e.origin = c.origin();
  // sorted = 0 leaves the order open: the extern's sorted order is one of the allowed.
  e.inputs.push_back(c.gl.extern_operand(x));
  Buffer* values = c.gl.new_buffer("", x->dtype, out_size, BufferOrigin::Extern);
  Buffer* indices = c.gl.new_buffer("", DType::I64, out_size, BufferOrigin::Extern);
  e.outputs = {values, indices};
  c.gl.add_extern(std::move(e));
  return {make_buffer_box(values), make_buffer_box(indices)};
}

}  // namespace

void register_topk_ops(LoweringTable& t) {
  t.add("TopK", lower_topk);
}

}  // namespace ferrite
