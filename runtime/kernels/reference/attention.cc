#include "runtime/kernels/reference/attention.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "compiler/plan/error.h"
#include "runtime/kernels/reference/operand_checks.h"

namespace ferrite {
namespace {

constexpr const char* kOp = "Attention";

AttentionOperand operand(const TensorRef& r, const ExternBuffer& buf) {
  AttentionOperand o;
  o.data = static_cast<const float*>(buf.data) + r.offset;
  for (size_t i = 0; i < 4; ++i) o.stride[i] = r.strides[i];
  return o;
}

void expect_shape(const char* what, const TensorRef& r, const std::vector<int64_t>& want) {
  if (r.shape != want)
    fail(kOp, ": ", what, " must have shape ", dims_text(want), ", got ", dims_text(r.shape));
}

// A rank-1 view of `n` elements of `dtype` (KeyLengths, Sinks).
void check_vector(const char* what, const TensorRef& r, const ExternBuffer& buf, DType dtype,
                  int64_t n) {
  if (buf.dtype != dtype)
    fail(kOp, ": ", what, " must be ", dtype_name(dtype), ", got ", dtype_name(buf.dtype));
  check_view(kOp, what, r, buf);
  expect_shape(what, r, {n});
}

}  // namespace

AttentionArgs parse_attention(const ExternCall& call, const ExternBuffer* inputs,
                              const ExternBuffer* outputs) {
  if (call.inputs.size() < 3 || call.outputs.size() != 1)
    fail(kOp, ": expected at least 3 inputs and 1 output, got ", call.inputs.size(), " and ",
         call.outputs.size());
  const char* names[] = {"Q", "K", "V"};
  for (size_t i = 0; i < 3; ++i) check_f32_view(kOp, names[i], call.inputs[i], inputs[i], 4);
  check_f32_view(kOp, "Y", call.outputs[0], outputs[0], 4);
  const std::vector<int64_t>&q = call.inputs[0].shape, &k = call.inputs[1].shape,
        &v = call.inputs[2].shape;
  AttentionArgs a;
  a.attrs = decode_attention_call(call, q[3]);
  if (call.inputs.size() != a.attrs.inputs())
    fail(kOp, ": expected ", a.attrs.inputs(), " inputs, got ", call.inputs.size());
  a.batch = q[0];
  a.q_heads = q[1];
  a.q_len = q[2];
  a.head = q[3];
  a.kv_heads = k[1];
  a.kv_len = k[2];
  a.v_head = v[3];
  if (a.kv_heads < 1 || a.q_heads % a.kv_heads != 0)
    fail(kOp, ": K's ", a.kv_heads, " heads must divide Q's ", a.q_heads);
  expect_shape("K", call.inputs[1], {a.batch, a.kv_heads, a.kv_len, a.head});
  expect_shape("V", call.inputs[2], {a.batch, a.kv_heads, a.kv_len, a.v_head});
  expect_shape("Y", call.outputs[0], {a.batch, a.q_heads, a.q_len, a.v_head});
  a.q = operand(call.inputs[0], inputs[0]);
  a.k = operand(call.inputs[1], inputs[1]);
  a.v = operand(call.inputs[2], inputs[2]);
  size_t next = 3;
  if (a.attrs.mask) {
    check_f32_view(kOp, "Mask", call.inputs[next], inputs[next], 4);
    expect_shape("Mask", call.inputs[next], {a.batch, a.q_heads, a.q_len, a.kv_len});
    a.mask = operand(call.inputs[next], inputs[next]);
    ++next;
  }
  if (a.attrs.key_lengths) {
    const TensorRef& r = call.inputs[next];
    check_vector("KeyLengths", r, inputs[next], DType::I64, a.batch);
    a.lengths = static_cast<const int64_t*>(inputs[next].data) + r.offset;
    a.length_stride = r.strides[0];
    for (int64_t b = 0; b < a.batch; ++b) {
      const int64_t n = a.lengths[b * a.length_stride];
      if (n < 0 || n > a.kv_len)
        fail(kOp, ": key length ", n, " of batch entry ", b, " outside [0, ", a.kv_len, "]");
    }
    ++next;
  }
  if (a.attrs.sinks) {
    const TensorRef& r = call.inputs[next];
    check_vector("Sinks", r, inputs[next], DType::F32, a.q_heads);
    a.sinks = static_cast<const float*>(inputs[next].data) + r.offset;
    a.sink_stride = r.strides[0];
  }
  a.y = static_cast<float*>(outputs[0].data) + call.outputs[0].offset;
  for (size_t i = 0; i < 4; ++i) a.y_stride[i] = call.outputs[0].strides[i];
  return a;
}

void reference_attention(const ExternCall& call, const ExternBuffer* inputs,
                         const ExternBuffer* outputs) {
  const AttentionArgs a = parse_attention(call, inputs, outputs);
  const AttentionCall& c = a.attrs;
  const int64_t group = a.q_heads / a.kv_heads;
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> s(static_cast<size_t>(a.kv_len)), acc(static_cast<size_t>(a.v_head));
  for (int64_t b = 0; b < a.batch; ++b)
    for (int64_t h = 0; h < a.q_heads; ++h) {
      const float* q = a.q.data + b * a.q.stride[0] + h * a.q.stride[1];
      const float* k = a.k.data + b * a.k.stride[0] + (h / group) * a.k.stride[1];
      const float* v = a.v.data + b * a.v.stride[0] + (h / group) * a.v.stride[1];
      const double sink = a.sinks ? a.sinks[h * a.sink_stride] : -inf;
      for (int64_t i = 0; i < a.q_len; ++i) {
        const auto [lo, hi] = visible_keys(a, b, i);
        double top = sink;
        bool nan = std::isnan(sink);
        for (int64_t j = 0; j < a.kv_len; ++j) {
          double x = -inf;
          if (j >= lo && j < hi) {
            double dot = 0;
            for (int64_t d = 0; d < a.head; ++d)
              dot += static_cast<double>(q[i * a.q.stride[2] + d * a.q.stride[3]]) *
                     k[j * a.k.stride[2] + d * a.k.stride[3]];
            // Each step rounded to float32, as a backend's scores are: one that overflows
            // is infinite here too.
            x = static_cast<float>(c.scale * dot);
            if (c.softcap > 0) x = static_cast<float>(c.softcap * std::tanh(x / c.softcap));
            if (a.mask.data)
              x = static_cast<float>(x + a.mask.data[b * a.mask.stride[0] + h * a.mask.stride[1] +
                                                     i * a.mask.stride[2] + j * a.mask.stride[3]]);
          }
          s[static_cast<size_t>(j)] = x;
          nan = nan || std::isnan(x);
          top = std::max(top, x);
        }
        double sum = top > -inf ? std::exp(sink - top) : 0.0;
        std::fill(acc.begin(), acc.end(), nan ? std::nan("") : 0.0);
        for (int64_t j = 0; j < a.kv_len && top > -inf; ++j) {
          const double p = std::exp(s[static_cast<size_t>(j)] - top);
          sum += p;
          for (int64_t e = 0; e < a.v_head; ++e)
            acc[static_cast<size_t>(e)] += p * v[j * a.v.stride[2] + e * a.v.stride[3]];
        }
        float* y = a.y + b * a.y_stride[0] + h * a.y_stride[1] + i * a.y_stride[2];
        for (int64_t e = 0; e < a.v_head; ++e)
          y[e * a.y_stride[3]] = nan || sum > 0 || std::isnan(sum)  // an infinite score: NaN
                                     ? static_cast<float>(acc[static_cast<size_t>(e)] / sum)
                                     : c.empty_rows_nan ? std::nanf("") : 0.0f;
      }
    }
}

}  // namespace ferrite
