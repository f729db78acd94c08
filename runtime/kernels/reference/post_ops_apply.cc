#include "runtime/kernels/reference/post_ops_apply.h"

#include <algorithm>
#include <vector>

#include "compiler/plan/error.h"
#include "runtime/kernels/reference/operand_checks.h"
#include "runtime/kernels/reference/strided_walk.h"

namespace ferrite {

void check_post_ops(const ExternCall& call, const ExternBuffer* inputs,
                    const ExternBuffer* outputs) {
  if (call.post_ops.empty()) return;
  const char* op = extern_op_name(call.op);
  if (!extern_op_info(call.op).takes_post_ops) fail(op, ": takes no post-ops");
  if (call.outputs.empty()) fail(op, ": post-ops need an output");
  const TensorRef& y = call.outputs[0];
  check_f32_view(op, "output", y, outputs[0], y.shape.size());
  for (size_t i = 0; i < call.post_ops.size(); ++i) {
    const PostOp& p = call.post_ops[i];
    // Named only when something is wrong: this runs before every run of an extern.
    auto what = [&] { return str_cat("post-op ", i, " (", post_op_name(p.kind), ")"); };
    if (static_cast<int>(p.kind) >= kPostOpKinds) fail(op, ": ", what(), " has an invalid kind");
    if (!post_op_is_binary(p.kind)) {
      if (p.input != -1) fail(op, ": ", what(), " is unary but names input ", p.input);
      continue;
    }
    if (p.input < 0 || static_cast<size_t>(p.input) >= call.inputs.size())
      fail(op, ": ", what(), " reads input ", p.input, " of ", call.inputs.size());
    const TensorRef& t = call.inputs[p.input];
    if (t.shape != y.shape)
      fail(op, ": ", what(), " operand has shape ", dims_text(t.shape), ", the output ",
           dims_text(y.shape));
    // Checked under a fixed name, and again under its own to word the error.
    try {
      check_f32_view(op, "post-op operand", t, inputs[p.input], y.shape.size());
    } catch (const Error&) {
      check_f32_view(op, what().c_str(), t, inputs[p.input], y.shape.size());
      throw;
    }
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
  if (y.shape.empty()) {  // a scalar output
    for (const PostOp& p : call.post_ops)
      *out = post_op_is_binary(p.kind)
                 ? apply_binary_post_op(
                       p.kind, *out,
                       static_cast<const float*>(inputs[p.input].data)[call.inputs[p.input].offset])
                 : apply_unary_post_op(p, *out);
    return;
  }
  // Row by row along the innermost dim: the offsets of a row's first elements once, then
  // strides (one element through every post-op at a time, as the contract says).
  const size_t inner = y.shape.size() - 1;
  std::vector<int64_t> outer(y.shape.begin(), y.shape.end() - 1);
  std::vector<int64_t> idx(inner, 0), full(y.shape.size(), 0);
  std::vector<int64_t> base(call.post_ops.size()), step(call.post_ops.size());
  do {
    std::copy(idx.begin(), idx.end(), full.begin());
    float* row = out + view_offset(y, full);
    for (size_t k = 0; k < call.post_ops.size(); ++k) {
      const PostOp& p = call.post_ops[k];
      if (!post_op_is_binary(p.kind)) continue;
      base[k] = view_offset(call.inputs[p.input], full);
      step[k] = call.inputs[p.input].strides[inner];
    }
    for (int64_t j = 0; j < y.shape[inner]; ++j) {
      float& v = row[j * y.strides[inner]];
      for (size_t k = 0; k < call.post_ops.size(); ++k) {
        const PostOp& p = call.post_ops[k];
        if (!post_op_is_binary(p.kind)) {
          v = apply_unary_post_op(p, v);
        } else {
          const float* t = static_cast<const float*>(inputs[p.input].data);
          v = apply_binary_post_op(p.kind, v, t[base[k] + j * step[k]]);
        }
      }
    }
  } while (next_index(&idx, outer));
}

float apply_post_ops_at(const ExternCall& call, const ExternBuffer* inputs,
                        const std::vector<int64_t>& idx, float v) {
  for (const PostOp& p : call.post_ops) {
    if (!post_op_is_binary(p.kind)) {
      v = apply_unary_post_op(p, v);
      continue;
    }
    const TensorRef& t = call.inputs[static_cast<size_t>(p.input)];
    int64_t off = t.offset;
    for (size_t e = 0; e < idx.size(); ++e) off += idx[e] * t.strides[e];
    v = apply_binary_post_op(p.kind, v, static_cast<const float*>(inputs[p.input].data)[off]);
  }
  return v;
}

}  // namespace ferrite
