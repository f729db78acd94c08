#include "runtime/kernels/reference/conv.h"

#include <algorithm>
#include <string>

#include "compiler/plan/error.h"
#include "compiler/plan/externs/conv_call.h"
#include "runtime/kernels/reference/operand_checks.h"
#include "runtime/kernels/reference/post_ops_apply.h"

namespace ferrite {
namespace {

// Bound on every size (and, by decode_conv_call, stride, dilation and |pad|): products of two
// stay below 2^60, so the index arithmetic of every backend is free of overflow.
constexpr int64_t kMaxExtent = kMaxConvExtent;
// Bound on the product of an operand's dims (zeros counted as ones, since a stride-0 view
// of an empty tensor passes the bounds check with any other dims): every element count a
// backend forms from one operand's dims fits comfortably in int64.
constexpr int64_t kMaxElements = int64_t{1} << 40;

void check_shape(const ConvArgs& a, const char* what, const TensorRef& r, size_t rank) {
  if (r.shape.size() != rank || r.strides.size() != rank)
    fail(a.op(), ": ", what, " has rank ", r.shape.size(), " (strides ", r.strides.size(),
         "), expected ", rank);
  int64_t elements = 1;
  for (int64_t d : r.shape) {
    if (d < 0 || d >= kMaxExtent)
      fail(a.op(), ": ", what, " has a dimension out of range in ", dims_text(r.shape));
    elements *= std::max<int64_t>(d, 1);  // < 2^30 * kMaxElements: no overflow
    if (elements > kMaxElements) fail(a.op(), ": ", what, dims_text(r.shape), " is too large");
  }
}

// The 5-D strides of a [n, c, spatial...] view; the padded leading spatial dims have size 1.
std::array<int64_t, 5> strides5(const TensorRef& r) {
  std::array<int64_t, 5> s{};
  const size_t k = r.strides.size() - 2;
  s[0] = r.strides[0];
  s[1] = r.strides[1];
  for (size_t d = 0; d < k; ++d) s[2 + (3 - k) + d] = r.strides[2 + d];
  return s;
}

void parse_channels(ConvArgs& a, const TensorRef& x, const TensorRef& w, const TensorRef& y) {
  a.n = x.shape[0];
  a.c_in = x.shape[1];
  // W is [M, C/group, ...] for Conv and [C, M/group, ...] for ConvTranspose.
  a.c_out = a.transpose ? w.shape[1] * a.group : w.shape[0];
  const int64_t w_in = a.transpose ? w.shape[0] : w.shape[1] * a.group;
  if (a.c_in % a.group != 0 || a.c_out % a.group != 0 || w_in != a.c_in)
    fail(a.op(), ": X", dims_text(x.shape), " and W", dims_text(w.shape),
         " do not agree on the channels for group ", a.group);
  if (y.shape[0] != a.n || y.shape[1] != a.c_out)
    fail(a.op(), ": Y", dims_text(y.shape), " needs batch ", a.n, " and ", a.c_out, " channels");
}

void parse_spatial(ConvArgs& a, const ConvCall& c, const TensorRef& x, const TensorRef& w,
                   const TensorRef& y) {
  const size_t k = x.shape.size() - 2;
  a.in = a.out = a.kernel = a.stride = a.dilation = {1, 1, 1};
  a.pad_begin = a.pad_end = {0, 0, 0};
  for (size_t d = 0; d < k; ++d) {
    const size_t D = 3 - k + d;
    a.in[D] = x.shape[2 + d];
    a.kernel[D] = w.shape[2 + d];
    a.out[D] = y.shape[2 + d];
    a.stride[D] = c.stride[d];
    a.dilation[D] = c.dilation[d];
    a.pad_begin[D] = c.pad_begin[d];
    a.pad_end[D] = c.pad_end[d];
    if (a.kernel[D] < 1) fail(a.op(), ": W", dims_text(w.shape), " has an empty kernel");
    const int64_t span = (a.kernel[D] - 1) * a.dilation[D] + 1;
    int64_t want;
    if (a.transpose) {
      want = a.stride[D] * (a.in[D] - 1) + span - a.pad_begin[D] - a.pad_end[D];
    } else {
      const int64_t room = a.in[D] + a.pad_begin[D] + a.pad_end[D] - span;
      want = room >= 0 ? room / a.stride[D] + 1 : 0;
    }
    if (want < 0 || a.out[D] != want)
      fail(a.op(), ": Y", dims_text(y.shape), " has ", a.out[D], " elements in spatial dim ", d,
           ", the attributes give ", want);
  }
}

}  // namespace

ConvArgs parse_conv_shapes(const ExternCall& call) {
  ConvArgs a;
  const ExternOp op = call.op;
  if (op != ExternOp::Conv && op != ExternOp::ConvTranspose && op != ExternOp::ConvInteger)
    fail("extern '", extern_op_name(call.op), "' is not a convolution");
  a.transpose = op == ExternOp::ConvTranspose;
  a.integer = op == ExternOp::ConvInteger;
  const size_t n_in = op_input_count(call);
  const size_t least = a.integer ? 4 : 2;  // the optional bias follows
  // A requantizing ConvInteger: the bias, the multipliers and Y's zero point follow.
  const bool requantize = a.integer && decode_flag(call, a.op(), "requantize");
  if (requantize && (n_in != least + 3 || call.outputs.size() != 1))
    fail(a.op(), ": expected ", least + 3, " inputs (requantize) and 1 output, got ", n_in, " and ",
         call.outputs.size());
  if (!requantize && ((n_in != least && n_in != least + 1) || call.outputs.size() != 1))
    fail(a.op(), ": expected ", least, " or ", least + 1, " inputs and 1 output, got ", n_in,
         " and ", call.outputs.size());
  const TensorRef &x = call.inputs[0], &w = call.inputs[1], &y = call.outputs[0];
  const size_t rank = x.shape.size();
  if (rank < 3 || rank > 5)
    fail(a.op(), ": X has rank ", rank, ", expected 3 to 5 (1 to 3 spatial dims)");
  check_shape(a, "X", x, rank);
  check_shape(a, "W", w, rank);
  check_shape(a, "Y", y, rank);
  a.has_bias = n_in > least;
  const ConvCall attrs = decode_conv_call(call, rank - 2);
  a.group = attrs.group;
  parse_channels(a, x, w, y);
  if (a.has_bias) {
    const TensorRef& b = call.inputs[least];
    check_shape(a, "B", b, 1);
    if (b.shape[0] != a.c_out)
      fail(a.op(), ": B", dims_text(b.shape), " needs ", a.c_out, " elements");
    a.b_offset = b.offset;
    a.b_stride = b.strides[0];
  }
  parse_spatial(a, attrs, x, w, y);
  a.xs = strides5(x);
  a.ws = strides5(w);
  a.ys = strides5(y);
  a.x_offset = x.offset;
  a.w_offset = w.offset;
  a.y_offset = y.offset;
  return a;
}

ConvArgs parse_conv(const ExternCall& call, const ExternBuffer* inputs,
                    const ExternBuffer* outputs) {
  ConvArgs a = parse_conv_shapes(call);
  const size_t rank = call.inputs[0].shape.size();
  check_f32_view(a.op(), "X", call.inputs[0], inputs[0], rank);
  check_f32_view(a.op(), "W", call.inputs[1], inputs[1], rank);
  check_f32_view(a.op(), "Y", call.outputs[0], outputs[0], rank);
  if (a.has_bias) check_f32_view(a.op(), "B", call.inputs[2], inputs[2], 1);
  a.x = static_cast<const float*>(inputs[0].data);
  a.w = static_cast<const float*>(inputs[1].data);
  a.b = a.has_bias ? static_cast<const float*>(inputs[2].data) : nullptr;
  a.y = static_cast<float*>(outputs[0].data);
  return a;
}

namespace {

// Conv: i = o * stride + j * dilation - pad_begin, when inside X.
int64_t direct_source(const ConvArgs& a, int d, int64_t o, int64_t j) {
  const int64_t i = o * a.stride[d] + j * a.dilation[d] - a.pad_begin[d];
  return i >= 0 && i < a.in[d] ? i : -1;
}

// ConvTranspose: the input index i with i*stride + j*dilation == o + pad_begin, or -1 when
// there is none.
int64_t transpose_source(const ConvArgs& a, int d, int64_t o, int64_t j) {
  const int64_t t = o + a.pad_begin[d] - j * a.dilation[d];
  if (t < 0 || t % a.stride[d] != 0 || t / a.stride[d] >= a.in[d]) return -1;
  return t / a.stride[d];
}

// Y[n, m, o] = B[m] + sum over c < Cg and kernel positions j of X[n, xc, i] W[...], xc =
// g * Cg + c, for the input positions i = source(d, o, j) per dim (-1: none, padding: no
// term); W is [M, Cg, kernel] for Conv and [C, M / group, kernel] for ConvTranspose. Sums in
// double and rounds once.
template <class Source>
float output_at(const ConvArgs& a, int64_t n, int64_t m, const std::array<int64_t, 3>& o,
                Source source) {
  const int64_t cg = a.c_in_group(), mg = a.c_out_group();
  double acc = a.has_bias ? a.b[a.b_offset + m * a.b_stride] : 0.0;
  for (int64_t c = 0; c < cg; ++c)
    for (int64_t j0 = 0; j0 < a.kernel[0]; ++j0)
      for (int64_t j1 = 0; j1 < a.kernel[1]; ++j1)
        for (int64_t j2 = 0; j2 < a.kernel[2]; ++j2) {
          const int64_t i0 = source(0, o[0], j0), i1 = source(1, o[1], j1);
          const int64_t i2 = source(2, o[2], j2);
          if (i0 < 0 || i1 < 0 || i2 < 0) continue;
          const int64_t xc = (m / mg) * cg + c;
          const int64_t w0 = a.transpose ? xc : m, w1 = a.transpose ? m % mg : c;
          const float xv = a.x[a.x_offset + n * a.xs[0] + xc * a.xs[1] + i0 * a.xs[2] +
                               i1 * a.xs[3] + i2 * a.xs[4]];
          const float wv = a.w[a.w_offset + w0 * a.ws[0] + w1 * a.ws[1] + j0 * a.ws[2] +
                               j1 * a.ws[3] + j2 * a.ws[4]];
          acc += static_cast<double>(xv) * wv;
        }
  return static_cast<float>(acc);
}

}  // namespace

float conv_output_at(const ConvArgs& a, int64_t n, int64_t m, const std::array<int64_t, 3>& o) {
  if (a.transpose)
    return output_at(a, n, m, o,
                     [&a](int d, int64_t p, int64_t j) { return transpose_source(a, d, p, j); });
  return output_at(a, n, m, o,
                   [&a](int d, int64_t p, int64_t j) { return direct_source(a, d, p, j); });
}

void reference_conv(const ExternCall& call, const ExternBuffer* inputs,
                    const ExternBuffer* outputs) {
  const ConvArgs a = parse_conv(call, inputs, outputs);
  std::array<int64_t, 3> o{};
  for (int64_t n = 0; n < a.n; ++n)
    for (int64_t m = 0; m < a.c_out; ++m)
      for (o[0] = 0; o[0] < a.out[0]; ++o[0])
        for (o[1] = 0; o[1] < a.out[1]; ++o[1])
          for (o[2] = 0; o[2] < a.out[2]; ++o[2])
            a.y[a.y_offset + n * a.ys[0] + m * a.ys[1] + o[0] * a.ys[2] + o[1] * a.ys[3] +
                o[2] * a.ys[4]] = conv_output_at(a, n, m, o);
  apply_post_ops(call, inputs, outputs);
}

}  // namespace ferrite
