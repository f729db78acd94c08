#include "runtime/kernels/reference/conv_integer.h"

#include "compiler/plan/error.h"
#include "compiler/plan/externs/conv_call.h"
#include "runtime/kernels/reference/operand_checks.h"

namespace ferrite {
namespace {

constexpr const char* kOp = "ConvInteger";

void check_operand(const char* what, const TensorRef& r, const ExternBuffer& buf, size_t rank,
                   bool is_signed) {
  const DType want = is_signed ? DType::I8 : DType::U8;
  if (buf.dtype != want)
    fail(kOp, ": ", what, " must be ", dtype_name(want), " (the call's type), got ",
         dtype_name(buf.dtype));
  if (r.shape.size() != rank)
    fail(kOp, ": ", what, " has rank ", r.shape.size(), ", expected ", rank);
  check_view(kOp, what, r, buf);
}

// The requantizing inputs (M float32 [M], YZ [1] of Y's type) and ranges.
void parse_requantize(const ExternCall& call, const ExternBuffer* inputs,
                      const ConvIntegerCall& attrs, ConvIntegerArgs* g) {
  const TensorRef &rm = call.inputs[5], &ryz = call.inputs[6];
  const int64_t m = g->shape.c_out;
  if (inputs[5].dtype != DType::F32)
    fail(kOp, ": M must be float32, got ", dtype_name(inputs[5].dtype));
  if (rm.shape.size() != 1 || rm.shape[0] != m)
    fail(kOp, ": M must be M = ", m, " values, got ", dims_text(rm.shape));
  check_view(kOp, "M", rm, inputs[5]);
  check_operand("YZ", ryz, inputs[6], 1, attrs.y_signed);
  if (ryz.shape[0] != 1) fail(kOp, ": YZ must be one value, got ", dims_text(ryz.shape));
  g->requantize = true;
  g->y_signed = attrs.y_signed;
  g->multiplier = static_cast<const float*>(inputs[5].data) + rm.offset;
  g->multiplier_stride = rm.strides[0];
  g->y_zero_point = static_cast<float>(int8_element(inputs[6], ryz.offset));
  g->type_lo = attrs.y_signed ? -128.0f : 0.0f;
  g->type_hi = attrs.y_signed ? 127.0f : 255.0f;
  g->y_lo = static_cast<float>(attrs.y_lo);
  g->y_hi = static_cast<float>(attrs.y_hi);
}

}  // namespace

ConvIntegerArgs parse_conv_integer(const ExternCall& call, const ExternBuffer* inputs,
                                   const ExternBuffer* outputs) {
  ConvIntegerArgs g;
  g.shape = parse_conv_shapes(call);
  if (!call.post_ops.empty() || !call.epilogue.empty()) fail(kOp, ": takes no epilogue");
  const size_t rank = call.inputs[0].shape.size();
  const ConvIntegerCall attrs = decode_conv_integer_call(call, rank - 2);
  g.x_signed = attrs.x_signed;
  g.w_signed = attrs.w_signed;
  const TensorRef &rxz = call.inputs[2], &rwz = call.inputs[3], &ry = call.outputs[0];
  check_operand("X", call.inputs[0], inputs[0], rank, g.x_signed);
  check_operand("W", call.inputs[1], inputs[1], rank, g.w_signed);
  check_operand("XZ", rxz, inputs[2], 1, g.x_signed);
  check_operand("WZ", rwz, inputs[3], 1, g.w_signed);
  if (!attrs.requantize && outputs[0].dtype != DType::I32)
    fail(kOp, ": Y must be int32, got ", dtype_name(outputs[0].dtype));
  if (attrs.requantize) check_operand("Y", ry, outputs[0], rank, attrs.y_signed);
  check_view(kOp, "Y", ry, outputs[0]);
  if (rxz.shape[0] != 1) fail(kOp, ": XZ must be one value, got ", dims_text(rxz.shape));
  const int64_t m = g.shape.c_out;
  if (rwz.shape[0] != m) fail(kOp, ": WZ must be M = ", m, " values, got ", dims_text(rwz.shape));
  if (g.shape.has_bias) {
    if (inputs[4].dtype != DType::I32)
      fail(kOp, ": B must be int32, got ", dtype_name(inputs[4].dtype));
    check_view(kOp, "B", call.inputs[4], inputs[4]);
    g.b = static_cast<const int32_t*>(inputs[4].data);
  }
  g.x = inputs[0].data;
  g.w = inputs[1].data;
  if (attrs.requantize) {
    parse_requantize(call, inputs, attrs, &g);
    g.y8 = outputs[0].data;
  } else {
    g.y = static_cast<int32_t*>(outputs[0].data);
  }
  g.x_zero_point = int8_element(inputs[2], rxz.offset);
  g.w_zero_points.resize(static_cast<size_t>(m));
  for (int64_t j = 0; j < m; ++j)
    g.w_zero_points[static_cast<size_t>(j)] =
        int8_element(inputs[3], rwz.offset + j * rwz.strides[0]);
  return g;
}

void reference_conv_integer(const ExternCall& call, const ExternBuffer* inputs,
                            const ExternBuffer* outputs) {
  const ConvIntegerArgs g = parse_conv_integer(call, inputs, outputs);
  const ConvArgs& a = g.shape;
  const int64_t cg = a.c_in_group(), mg = a.c_out_group();
  auto source = [&a](int d, int64_t o, int64_t j) {
    const int64_t i = o * a.stride[d] + j * a.dilation[d] - a.pad_begin[d];
    return i >= 0 && i < a.in[d] ? i : -1;
  };
  std::array<int64_t, 3> o{};
  for (int64_t n = 0; n < a.n; ++n)
    for (int64_t m = 0; m < a.c_out; ++m)
      for (o[0] = 0; o[0] < a.out[0]; ++o[0])
        for (o[1] = 0; o[1] < a.out[1]; ++o[1])
          for (o[2] = 0; o[2] < a.out[2]; ++o[2]) {
            int64_t acc = 0;
            const int32_t wz = g.w_zero_points[static_cast<size_t>(m)];
            for (int64_t c = 0; c < cg; ++c)
              for (int64_t j0 = 0; j0 < a.kernel[0]; ++j0)
                for (int64_t j1 = 0; j1 < a.kernel[1]; ++j1)
                  for (int64_t j2 = 0; j2 < a.kernel[2]; ++j2) {
                    const int64_t i0 = source(0, o[0], j0), i1 = source(1, o[1], j1),
                                  i2 = source(2, o[2], j2);
                    if (i0 < 0 || i1 < 0 || i2 < 0) continue;
                    const int64_t xc = (m / mg) * cg + c;
                    const int32_t xv = g.x_at(a.x_offset + n * a.xs[0] + xc * a.xs[1] +
                                              i0 * a.xs[2] + i1 * a.xs[3] + i2 * a.xs[4]);
                    const int32_t wv = g.w_at(a.w_offset + m * a.ws[0] + c * a.ws[1] +
                                              j0 * a.ws[2] + j1 * a.ws[3] + j2 * a.ws[4]);
                    acc += int64_t{xv - g.x_zero_point} * (wv - wz);
                  }
            g.store(a.y_offset + n * a.ys[0] + m * a.ys[1] + o[0] * a.ys[2] + o[1] * a.ys[3] +
                        o[2] * a.ys[4],
                    acc, m);
          }
}

}  // namespace ferrite
