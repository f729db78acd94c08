// The Conv and ConvTranspose externs (runtime/kernels/reference/conv.h) on oneDNN's
// convolution and deconvolution primitives.
#pragma once

#include <memory>
#include <vector>

#include "runtime/kernels/dnnl/dnnl_externs.h"
#include "runtime/kernels/dnnl/dnnl_steps.h"

namespace ferrite {
namespace onednn {

// prepare_dnnl_extern for a Conv or ConvTranspose call: nullptr when oneDNN does not take it.
std::unique_ptr<DnnlExtern> prepare_conv(const ExternCall& call,
                                         const std::vector<ExternBuffer>& constants,
                                         const PackedForms& packed, int threads);

}  // namespace onednn
}  // namespace ferrite
