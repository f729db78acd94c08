// Running an extern's fused epilogue (ExternCall::post_ops, semantics in
// compiler/plan/post_ops.h) after the op wrote its output.
#pragma once

#include <cstdint>
#include <vector>

#include "compiler/plan/plan.h"
#include "runtime/backend.h"

namespace ferrite {

// Checks the post-ops against the call (binary operands: float32 views of outputs[0]'s shape
// inside their buffers). Throws ferrite::Error "<op>: post-op <i> (<name>): ...".
void check_post_ops(const ExternCall& call, const ExternBuffer* inputs,
                    const ExternBuffer* outputs);

// check_post_ops, then applies the post-ops to every element of outputs[0], one element at a
// time through all of them (the reference; a backend may apply them per tile instead: each
// element's result is the same).
void apply_post_ops(const ExternCall& call, const ExternBuffer* inputs,
                    const ExternBuffer* outputs);

// The post-ops of the call applied to v, as the element of outputs[0] at coordinates `idx`
// (its rank); the operands as check_post_ops accepted them.
float apply_post_ops_at(const ExternCall& call, const ExternBuffer* inputs,
                        const std::vector<int64_t>& idx, float v);

}  // namespace ferrite
