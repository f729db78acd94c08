#include "runtime/kernels/portable/conv_padded_nan_f32.h"

#include <array>
#include <cmath>
#include <vector>

#include "runtime/kernels/reference/operand_checks.h"
#include "runtime/kernels/reference/post_ops_apply.h"

namespace ferrite {

bool conv_pads(const ConvArgs& a) {
  if (a.transpose) return false;  // col2im adds no term for positions outside the output
  for (int d = 0; d < 3; ++d)
    if (a.pad_begin[d] > 0 || a.pad_end[d] > 0) return true;
  return false;
}

bool conv_weight_nonfinite(const ExternCall& call, const ConvArgs& a, const ExternBuffer& buffer) {
  if (!buffer.data) return false;
  const TensorRef& w = call.inputs[1];
  check_f32_view(a.op(), "W", w, buffer, w.shape.size());
  const float* data = static_cast<const float*>(buffer.data);
  const int64_t rows = a.transpose ? a.c_in : a.c_out;
  const int64_t cols = a.transpose ? a.c_out_group() : a.c_in_group();
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      for (int64_t j0 = 0; j0 < a.kernel[0]; ++j0)
        for (int64_t j1 = 0; j1 < a.kernel[1]; ++j1)
          for (int64_t j2 = 0; j2 < a.kernel[2]; ++j2) {
            const float v = data[w.offset + r * a.ws[0] + c * a.ws[1] + j0 * a.ws[2] +
                                 j1 * a.ws[3] + j2 * a.ws[4]];
            if (!std::isfinite(v)) return true;
          }
  return false;
}

void conv_fix_padded_nan(const ExternCall& call, const ConvArgs& a, const ExternBuffer* inputs) {
  const size_t rank = call.outputs[0].shape.size();
  std::array<int64_t, 3> o{};
  std::vector<int64_t> idx(rank);
  for (int64_t n = 0; n < a.n; ++n)
    for (int64_t m = 0; m < a.c_out; ++m)
      for (o[0] = 0; o[0] < a.out[0]; ++o[0])
        for (o[1] = 0; o[1] < a.out[1]; ++o[1])
          for (o[2] = 0; o[2] < a.out[2]; ++o[2]) {
            float& y = a.y[a.y_offset + n * a.ys[0] + m * a.ys[1] + o[0] * a.ys[2] +
                           o[1] * a.ys[3] + o[2] * a.ys[4]];
            if (!std::isnan(y)) continue;
            idx[0] = n;
            idx[1] = m;
            for (size_t e = 2; e < rank; ++e) idx[e] = o[3 - rank + e];
            y = apply_post_ops_at(call, inputs, idx, conv_output_at(a, n, m, o));
          }
}

}  // namespace ferrite
