#include "runtime/kernels/reference/post_ops_apply.h"

#include <algorithm>
#include <charconv>
#include <vector>

#include "compiler/plan/error.h"
#include "runtime/kernels/reference/operand_checks.h"
#include "runtime/kernels/reference/strided_walk.h"

namespace ferrite {

void check_post_ops(const ExternCall& call, const ExternBuffer* inputs,
                    const ExternBuffer* outputs) {
  if (call.epilogue.empty()) return;
  const char* op = extern_op_name(call.op);
  if (!extern_op_info(call.op).takes_post_ops) fail(op, ": takes no epilogue");
  if (call.outputs.empty()) fail(op, ": an epilogue needs an output");
  const TensorRef& y = call.outputs[0];
  check_f32_view(op, "output", y, outputs[0], y.shape.size());
  // This runs before every run of an extern: no allocation unless something is wrong (an
  // operand read twice is checked twice).
  for (const EpilogueStep& s : call.epilogue.steps) {
    if (s.op != Op::Load || s.input < 0) continue;
    const int32_t i = s.input;
    char what[32] = "epilogue operand ";
    *std::to_chars(what + 17, what + sizeof what - 1, i).ptr = '\0';
    if (static_cast<size_t>(i) >= call.inputs.size())
      fail(op, ": ", what, " is not one of its ", call.inputs.size(), " inputs");
    const TensorRef& t = call.inputs[static_cast<size_t>(i)];
    if (t.shape != y.shape)
      fail(op, ": ", what, " has shape ", dims_text(t.shape), ", the output ", dims_text(y.shape));
    check_f32_view(op, what, t, inputs[i], y.shape.size());
  }
}

void apply_post_ops(const ExternCall& call, const ExternBuffer* inputs,
                    const ExternBuffer* outputs) {
  if (call.epilogue.empty()) return;
  check_post_ops(call, inputs, outputs);
  const TensorRef& y = call.outputs[0];
  for (int64_t d : y.shape)
    if (d == 0) return;
  float* out = static_cast<float*>(outputs[0].data);
  const std::vector<int32_t> used = epilogue_inputs(call.epilogue);
  std::vector<float> scratch;
  if (y.shape.empty()) {  // a scalar output
    auto operand = [&](int32_t i) {
      return static_cast<const float*>(inputs[i].data)[call.inputs[static_cast<size_t>(i)].offset];
    };
    *out = eval_epilogue(call.epilogue, *out, operand, &scratch);
    return;
  }
  // Row by row along the innermost dim: the offsets of a row's first elements once, then
  // strides (one element through the whole body at a time, as the contract says).
  const size_t inner = y.shape.size() - 1;
  std::vector<int64_t> outer(y.shape.begin(), y.shape.end() - 1);
  std::vector<int64_t> idx(inner, 0), full(y.shape.size(), 0);
  std::vector<int64_t> base(call.inputs.size()), step(call.inputs.size());
  do {
    std::copy(idx.begin(), idx.end(), full.begin());
    float* row = out + view_offset(y, full);
    for (int32_t i : used) {
      base[i] = view_offset(call.inputs[static_cast<size_t>(i)], full);
      step[i] = call.inputs[static_cast<size_t>(i)].strides[inner];
    }
    for (int64_t j = 0; j < y.shape[inner]; ++j) {
      float& v = row[j * y.strides[inner]];
      auto operand = [&](int32_t i) {
        return static_cast<const float*>(inputs[i].data)[base[i] + j * step[i]];
      };
      v = eval_epilogue(call.epilogue, v, operand, &scratch);
    }
  } while (next_index(&idx, outer));
}

float apply_post_ops_at(const ExternCall& call, const ExternBuffer* inputs,
                        const std::vector<int64_t>& idx, float v) {
  if (call.epilogue.empty()) return v;
  auto operand = [&](int32_t i) {
    const TensorRef& t = call.inputs[static_cast<size_t>(i)];
    int64_t off = t.offset;
    for (size_t e = 0; e < idx.size(); ++e) off += idx[e] * t.strides[e];
    return static_cast<const float*>(inputs[i].data)[off];
  };
  thread_local std::vector<float> scratch;
  return eval_epilogue(call.epilogue, v, operand, &scratch);
}

}  // namespace ferrite
