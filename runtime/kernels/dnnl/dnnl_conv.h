// The Conv and ConvTranspose externs (runtime/kernels/reference/conv.h) on oneDNN's
// convolution and deconvolution primitives.
#pragma once

#include <memory>
#include <vector>

#include "runtime/kernels/dnnl/dnnl_externs.h"
#include "runtime/kernels/dnnl/dnnl_steps.h"
#include "runtime/kernels/reference/conv.h"

namespace ferrite {
namespace onednn {

// What the convolution externs share (ConvInteger's: dnnl_conv_integer.h).
// W as oneDNN's weights: [OC, IC, k...], or [G, OC/G, IC/G, k...] with groups (ConvArgs::
// transpose: W is [C, M/G, k...], its first two dims swapped).
View conv_weights_view(const ConvArgs& a, const TensorRef& w);
// The spatial attributes as oneDNN takes them; false for negative pads, which it has no
// equivalent of (ConvTranspose's are cropped away first).
struct ConvSpatial {
  Dims strides, dilations, pad_l, pad_r;
};
bool conv_spatial(const ConvArgs& a, size_t k, ConvSpatial* s);

// prepare_dnnl_extern for a Conv or ConvTranspose call: nullptr when oneDNN does not take it.
// With `bf16` (fast math on a CPU with dnnl_has_bf16) it multiplies in bfloat16.
std::unique_ptr<DnnlExtern> prepare_conv(const ExternCall& call,
                                         const std::vector<ExternBuffer>& constants,
                                         const PackedForms& packed, int threads, bool bf16);

}  // namespace onednn
}  // namespace ferrite
