#include "runtime/kernels/reference/post_ops_apply.h"

#include <vector>

#include "compiler/plan/error.h"
#include "runtime/kernels/reference/extern_operands.h"
#include "runtime/kernels/reference/strided_walk.h"

namespace ferrite {

void check_post_ops(const ExternCall& call, const ExternBuffer* inputs,
                    const ExternBuffer* outputs) {
  if (call.post_ops.empty()) return;
  const char* op = call.op.c_str();
  if (!extern_takes_post_ops(call.op)) fail(op, ": takes no post-ops");
  if (call.outputs.empty()) fail(op, ": post-ops need an output");
  const TensorRef& y = call.outputs[0];
  check_f32_view(op, "output", y, outputs[0], y.shape.size());
  for (size_t i = 0; i < call.post_ops.size(); ++i) {
    const PostOp& p = call.post_ops[i];
    const std::string what = str_cat("post-op ", i, " (", post_op_name(p.kind), ")");
    if (static_cast<int>(p.kind) >= kPostOpKinds) fail(op, ": ", what, " has an invalid kind");
    if (!post_op_is_binary(p.kind)) {
      if (p.input != -1) fail(op, ": ", what, " is unary but names input ", p.input);
      continue;
    }
    if (p.input < 0 || static_cast<size_t>(p.input) >= call.inputs.size())
      fail(op, ": ", what, " reads input ", p.input, " of ", call.inputs.size());
    const TensorRef& t = call.inputs[p.input];
    if (t.shape != y.shape)
      fail(op, ": ", what, " operand has shape ", dims_text(t.shape), ", the output ",
           dims_text(y.shape));
    check_f32_view(op, what.c_str(), t, inputs[p.input], y.shape.size());
  }
}

void apply_post_ops(const ExternCall& call, const ExternBuffer* inputs,
                    const ExternBuffer* outputs) {
  if (call.post_ops.empty()) return;
  check_post_ops(call, inputs, outputs);
  const TensorRef& y = call.outputs[0];
  for (int64_t d : y.shape)
    if (d == 0) return;
  float* out = static_cast<float*>(outputs[0].data);
  std::vector<int64_t> idx(y.shape.size(), 0);
  do {
    float& v = out[view_offset(y, idx)];
    for (const PostOp& p : call.post_ops) {
      if (!post_op_is_binary(p.kind)) {
        v = apply_unary_post_op(p, v);
      } else {
        const float* t = static_cast<const float*>(inputs[p.input].data);
        v = apply_binary_post_op(p.kind, v, t[view_offset(call.inputs[p.input], idx)]);
      }
    }
  } while (next_index(&idx, y.shape));
}

}  // namespace ferrite
