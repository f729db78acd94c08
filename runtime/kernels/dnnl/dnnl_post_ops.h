// ExternCall::post_ops (compiler/plan/post_ops.h) as oneDNN post-ops: unary kinds become
// eltwise post-ops, binary kinds binary post-ops whose second operand (a view of the
// output's shape, stride 0 along broadcast dims) becomes a tensor with those dims reduced to
// 1 — the per-channel, per-row, scalar and full-tensor operands oneDNN broadcasts itself.
#pragma once

#include <vector>

#include "compiler/plan/plan.h"
#include "runtime/kernels/dnnl/dnnl_steps.h"

namespace ferrite {
namespace onednn {

// One binary post-op's operand: call.inputs[input], as `view` (broadcast dims reduced to 1),
// and the position of its post-op among the oneDNN post-ops.
struct BinaryOperand {
  int position = 0;
  size_t input = 0;
  View view;
};

// Appends the call's post-ops to `ops`. A binary operand is read in the dense layout of its
// reduced dims in `order` (the layout the primitive's output has, which oneDNN's fused
// kernels want). False when some post-op has no exact oneDNN equivalent (a Clip whose
// minimum exceeds its maximum), when oneDNN 2.6 would compute the chain wrongly (one eltwise
// algorithm twice with different parameters: relu then leaky relu, two different clips), or
// when an operand is not a view of the output's shape.
//
// With `sum` (for a primitive writing scratch, which the caller fills with that operand
// first), the first Add of an operand of the output's full shape (no broadcast dim) becomes
// oneDNN's sum post-op instead (dst += its previous contents), `*sum` its operand; its
// `input` is SIZE_MAX when there is none. oneDNN's Winograd convolutions take sum, not
// binary post-ops.
bool append_post_ops(const ExternCall& call, const std::vector<int>& order, dnnl::post_ops* ops,
                     std::vector<BinaryOperand>* binaries, BinaryOperand* sum = nullptr);

// Gives each operand its memory in `steps` (bound directly, or copied: once now for a plan
// constant, else by a reorder step added now) and its execution argument in `args`. False
// when a constant operand lies outside its buffer (the fallback then reports it).
bool bind_binary_operands(const std::vector<BinaryOperand>& binaries, const std::vector<int>& order,
                          const std::vector<ExternBuffer>& constants, DnnlSteps* steps, Args* args);

}  // namespace onednn
}  // namespace ferrite
