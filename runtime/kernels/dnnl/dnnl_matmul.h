// The MatMul extern (runtime/kernels/reference/matmul.h) on oneDNN's matmul primitive.
#pragma once

#include <memory>
#include <vector>

#include "runtime/kernels/dnnl/dnnl_externs.h"
#include "runtime/kernels/dnnl/dnnl_steps.h"

namespace ferrite {
namespace onednn {

// prepare_dnnl_extern for a MatMul call: nullptr when oneDNN does not take it. With `bf16`
// (fast math on a CPU with dnnl_has_bf16) it multiplies in bfloat16.
std::unique_ptr<DnnlExtern> prepare_matmul(const ExternCall& call,
                                           const std::vector<ExternBuffer>& constants,
                                           const PackedForms& packed, int threads, bool bf16);

}  // namespace onednn
}  // namespace ferrite
