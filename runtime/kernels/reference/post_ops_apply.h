// Running an extern's fused epilogue (ExternCall::epilogue, semantics in
// compiler/plan/epilogue.h) after the op wrote its output: the reference, which evaluates
// the body with scalar_ops, and what every backend does with a body that is no chain of
// post-ops it takes natively.
#pragma once

#include <cstdint>
#include <vector>

#include "compiler/plan/plan.h"
#include "runtime/backend.h"

namespace ferrite {

// Checks the epilogue against the call (its operands: float32 views of outputs[0]'s shape
// inside their buffers). Throws ferrite::Error "<op>: epilogue operand <i> ...".
void check_post_ops(const ExternCall& call, const ExternBuffer* inputs,
                    const ExternBuffer* outputs);

// check_post_ops, then applies the epilogue to every element of outputs[0], one element at
// a time through the whole body (the reference; a backend may apply it per tile instead:
// each element's result is the same).
void apply_post_ops(const ExternCall& call, const ExternBuffer* inputs,
                    const ExternBuffer* outputs);

// The epilogue of the call applied to v, as the element of outputs[0] at coordinates `idx`
// (its rank); the operands as check_post_ops accepted them.
float apply_post_ops_at(const ExternCall& call, const ExternBuffer* inputs,
                        const std::vector<int64_t>& idx, float v);

}  // namespace ferrite
