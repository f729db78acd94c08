// The MatMulInteger extern (runtime/kernels/reference/matmul_integer.h) on oneDNN's int8
// matmul primitive.
#pragma once

#include <memory>
#include <vector>

#include "runtime/kernels/dnnl/dnnl_externs.h"
#include "runtime/kernels/dnnl/dnnl_steps.h"

namespace ferrite {
namespace onednn {

// Whether input i of the call is a plan constant of 8-bit zero points (1-D, inside its
// buffer), all 0: oneDNN's int8 weights take no zero points.
bool constant_zeros(const ExternCall& call, const std::vector<ExternBuffer>& constants, size_t i);

// prepare_dnnl_extern for a MatMulInteger call: nullptr when oneDNN does not take it.
std::unique_ptr<DnnlExtern> prepare_matmul_integer(const ExternCall& call,
                                                   const std::vector<ExternBuffer>& constants,
                                                   const PackedForms& packed, int threads);

}  // namespace onednn
}  // namespace ferrite
