// A padded convolution whose W holds an infinity or NaN: the portable paths multiply the
// zeros of the padding too (im2col panels, windows), and 0 times an infinite or NaN weight is
// NaN where the reference, oneDNN and the Winograd path add no term for a padded tap
// (reference/conv.h, conv_output_at). The output elements that come out NaN are summed
// again as the reference sums them, then finished with the post-ops; every other element
// already agrees (the extra terms are zeros, 0 * finite). Only NaN can be wrong: the padded
// terms add NaN or nothing.
#pragma once

#include "compiler/plan/plan.h"
#include "runtime/backend.h"
#include "runtime/kernels/reference/conv.h"

namespace ferrite {

// Whether the call can meet it: a Conv (not ConvTranspose) with some padding.
bool conv_pads(const ConvArgs& a);

// Whether W, the call's float32 view inputs[1] in `buffer` (its shapes in `a`), holds an
// infinity or NaN; false when the buffer has no data (W only prepacked). Throws
// ferrite::Error when the view does not fit the buffer.
bool conv_weight_nonfinite(const ExternCall& call, const ConvArgs& a, const ExternBuffer& buffer);

// Outputs[0]'s NaN elements (after its post-ops) as the reference gives them. `a` holds the
// buffers (parse_conv); W must still be there.
void conv_fix_padded_nan(const ExternCall& call, const ConvArgs& a, const ExternBuffer* inputs);

}  // namespace ferrite
