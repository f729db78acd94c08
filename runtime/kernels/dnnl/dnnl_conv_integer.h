// The ConvInteger extern (runtime/kernels/reference/conv_integer.h) on oneDNN's int8
// convolution primitive.
#pragma once

#include <memory>
#include <vector>

#include "runtime/kernels/dnnl/dnnl_externs.h"
#include "runtime/kernels/dnnl/dnnl_steps.h"

namespace ferrite {
namespace onednn {

// prepare_dnnl_extern for a ConvInteger call: nullptr when oneDNN does not take it.
std::unique_ptr<DnnlExtern> prepare_conv_integer(const ExternCall& call,
                                                 const std::vector<ExternBuffer>& constants,
                                                 const PackedForms& packed, int threads);

}  // namespace onednn
}  // namespace ferrite
