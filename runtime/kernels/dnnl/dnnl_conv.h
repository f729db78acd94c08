// The Conv and ConvTranspose externs (runtime/kernels/reference/conv.h) on oneDNN's
// convolution and deconvolution primitives.
#pragma once

#include <memory>
#include <vector>

#include "runtime/kernels/dnnl/dnnl_externs.h"

namespace ferrite {
namespace onednn {

// prepare_dnnl_extern for a Conv or ConvTranspose call: nullptr when oneDNN does not take it.
std::unique_ptr<DnnlExtern> prepare_conv(const ExternCall& call,
                                         const std::vector<ExternBuffer>& constants,
                                         const std::vector<PackedInput>& packed, int threads);

}  // namespace onednn
}  // namespace ferrite
