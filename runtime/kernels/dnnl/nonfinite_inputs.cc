#include "runtime/kernels/dnnl/nonfinite_inputs.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <memory>
#include <utility>

#include "compiler/plan/post_ops.h"
#include "runtime/kernels/portable/simd_f32.h"
#include "runtime/kernels/reference/matmul.h"
#include "runtime/kernels/reference/operand_checks.h"
#include "runtime/kernels/reference/post_ops_apply.h"

namespace ferrite {
namespace onednn {
namespace {

bool finite(float v) {
  uint32_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  return (bits & 0x7f800000u) != 0x7f800000u;
}

// The class of a sum whose non-finite terms are x * w for the listed (x, sign of w): NaN, an
// infinity, or 0 when there is none (the primitive's value stands).
class SumClass {
 public:
  void add(float x, int w_sign) {
    if (std::isnan(x) || w_sign == 0) {  // NaN, or an infinity times 0
      nan_ = true;
      return;
    }
    ((x > 0) == (w_sign == 1) ? plus_ : minus_) = true;
  }
  float value() const {
    if (nan_ || (plus_ && minus_)) return NAN;
    return plus_ ? INFINITY : minus_ ? -INFINITY : 0.0f;
  }

 private:
  bool nan_ = false, plus_ = false, minus_ = false;
};

// The elements of a view of `shape` with `strides` from `offset`, as one run (its size),
// when the strides are a permutation of dense ones; else -1.
int64_t dense_run(const std::vector<int64_t>& shape, const std::vector<int64_t>& strides) {
  std::vector<std::pair<int64_t, int64_t>> dims;
  for (size_t d = 0; d < shape.size(); ++d) dims.emplace_back(strides[d], shape[d]);
  std::sort(dims.begin(), dims.end());
  int64_t dense = 1;
  for (const auto& [stride, size] : dims) {
    if (size != 1 && stride != dense) return -1;
    dense *= size;
  }
  return dense;
}

// Whether a view's strides are row-major dense.
bool row_major(const TensorRef& r) {
  int64_t dense = 1;
  for (size_t d = r.shape.size(); d-- > 0;) {
    if (r.shape[d] != 1 && r.strides[d] != dense) return false;
    dense *= r.shape[d];
  }
  return true;
}

// Calls f(index, offset) for every element of a view.
template <class F>
void for_each_in_view(const TensorRef& r, F f) {
  std::vector<int64_t> idx(r.shape.size(), 0);
  for (int64_t s : r.shape)
    if (s <= 0) return;
  while (true) {
    int64_t at = r.offset;
    for (size_t e = 0; e < idx.size(); ++e) at += idx[e] * r.strides[e];
    f(idx, at);
    size_t e = idx.size();
    while (e > 0 && ++idx[e - 1] == r.shape[e - 1]) idx[--e] = 0;
    if (e == 0) return;
  }
}

// ---- Conv -------------------------------------------------------------------------------

using Index = std::array<int64_t, 5>;  // (n, c or m, spatial 0..2) of ConvArgs' 5-D views

// The output position along spatial dim d whose kernel tap j reads input i, or -1.
int64_t output_of(const ConvArgs& a, int d, int64_t i, int64_t j) {
  const int64_t t = i + a.pad_begin[d] - j * a.dilation[d];
  if (t < 0 || t % a.stride[d] != 0 || t / a.stride[d] >= a.out[d]) return -1;
  return t / a.stride[d];
}

class ConvNonFinite : public NonFiniteInputs {
 public:
  bool prepare(const ExternCall& call, const ExternBuffer* w) {
    const ConvArgs a = parse_conv_shapes(call);
    if (a.transpose) return false;
    prepare_scan(call.inputs[0]);
    dynamic_ = !w;
    return dynamic_ || signs_of(call, static_cast<const float*>(w->data), &signs_);
  }

 protected:
  void check(const ExternCall& call, const ExternBuffer* inputs,
             const ExternBuffer* outputs) const override {
    parse_conv(call, inputs, outputs);
  }
  bool signs_of(const ExternCall& call, const float* w, Signs* out) const override {
    const ConvArgs a = parse_conv_shapes(call);
    const int64_t count = a.c_out * a.c_in_group() * a.kernel_size();
    const TensorRef& r = call.inputs[1];
    if (row_major(r)) return linear_signs(w + r.offset, count, out);
    out->assign(static_cast<size_t>((count + 3) / 4), 0);
    int64_t i = 0;
    for (int64_t m = 0; m < a.c_out; ++m)
      for (int64_t c = 0; c < a.c_in_group(); ++c)
        for (int64_t j0 = 0; j0 < a.kernel[0]; ++j0)
          for (int64_t j1 = 0; j1 < a.kernel[1]; ++j1)
            for (int64_t j2 = 0; j2 < a.kernel[2]; ++j2, ++i)
              if (!add_sign(w[a.w_offset + m * a.ws[0] + c * a.ws[1] + j0 * a.ws[2] + j1 * a.ws[3] +
                              j2 * a.ws[4]],
                            i, out))
                return false;
    return true;
  }
  void exact_outputs(const ExternCall& call, const Signs& signs, const ExternBuffer* inputs,
                     const ExternBuffer* outputs, std::vector<std::pair<int64_t, float>>* values,
                     std::vector<int64_t>* nonfinite) const override;
  void reference(const ExternCall& call, const ExternBuffer* inputs,
                 const ExternBuffer* outputs) const override {
    reference_conv(call, inputs, outputs);
  }

 private:
  // Calls f(index, offset) for every X element (n, c, i0, i1, i2).
  template <class F>
  static void for_each_x(const ConvArgs& a, F f) {
    Index i{};
    for (i[0] = 0; i[0] < a.n; ++i[0])
      for (i[1] = 0; i[1] < a.c_in; ++i[1])
        for (i[2] = 0; i[2] < a.in[0]; ++i[2])
          for (i[3] = 0; i[3] < a.in[1]; ++i[3])
            for (i[4] = 0; i[4] < a.in[2]; ++i[4]) {
              int64_t at = a.x_offset;
              for (int e = 0; e < 5; ++e) at += i[e] * a.xs[e];
              f(i, at);
            }
  }
};

void ConvNonFinite::exact_outputs(const ExternCall& call, const Signs& signs,
                                  const ExternBuffer* inputs, const ExternBuffer* outputs,
                                  std::vector<std::pair<int64_t, float>>* values,
                                  std::vector<int64_t>* nonfinite) const {
  const ConvArgs a = parse_conv(call, inputs, outputs);
  // The output positions (image, spatial) whose windows hold a non-finite X in some channel.
  const int64_t per_image = a.out_size();
  std::vector<bool> touched(static_cast<size_t>(a.n * per_image), false);
  for_each_x(a, [&](const Index& i, int64_t at) {
    if (finite(a.x[at])) return;
    nonfinite->push_back(at);
    for (int64_t j0 = 0; j0 < a.kernel[0]; ++j0)
      for (int64_t j1 = 0; j1 < a.kernel[1]; ++j1)
        for (int64_t j2 = 0; j2 < a.kernel[2]; ++j2) {
          const int64_t o0 = output_of(a, 0, i[2], j0), o1 = output_of(a, 1, i[3], j1);
          const int64_t o2 = output_of(a, 2, i[4], j2);
          if (o0 >= 0 && o1 >= 0 && o2 >= 0)
            touched[static_cast<size_t>(i[0] * per_image + (o0 * a.out[1] + o1) * a.out[2] + o2)] =
                true;
        }
  });
  const int64_t cg = a.c_in_group(), mg = a.c_out_group();
  auto sum_class = [&](const Index& o) {
    SumClass sum;
    int64_t w = o[1] * cg * a.kernel_size();
    for (int64_t c = 0; c < cg; ++c)
      for (int64_t j0 = 0; j0 < a.kernel[0]; ++j0)
        for (int64_t j1 = 0; j1 < a.kernel[1]; ++j1)
          for (int64_t j2 = 0; j2 < a.kernel[2]; ++j2, ++w) {
            const Index j{0, 0, j0, j1, j2};
            int64_t at = a.x_offset + o[0] * a.xs[0] + ((o[1] / mg) * cg + c) * a.xs[1];
            bool inside = true;
            for (int d = 0; d < 3; ++d) {
              const int64_t i = o[2 + d] * a.stride[d] + j[2 + d] * a.dilation[d] - a.pad_begin[d];
              inside = inside && i >= 0 && i < a.in[d];
              at += i * a.xs[2 + d];
            }
            if (inside && !finite(a.x[at])) sum.add(a.x[at], sign(signs, w));
          }
    return sum.value();
  };
  const TensorRef& y = call.outputs[0];
  const size_t rank = y.shape.size();
  for (int64_t n = 0; n < a.n; ++n)
    for (int64_t p = 0; p < per_image; ++p) {
      if (!touched[static_cast<size_t>(n * per_image + p)]) continue;
      Index o{n, 0, p / (a.out[1] * a.out[2]), p / a.out[2] % a.out[1], p % a.out[2]};
      std::vector<int64_t> idx{n, 0};
      for (size_t d = 3 - (rank - 2); d < 3; ++d) idx.push_back(o[2 + d]);
      for (int64_t m = 0; m < a.c_out; ++m) {
        o[1] = idx[1] = m;
        const float v = sum_class(o);
        if (finite(v)) continue;
        int64_t at = y.offset;
        for (size_t e = 0; e < rank; ++e) at += idx[e] * y.strides[e];
        values->emplace_back(at, finish_element(call, a.has_bias, inputs, idx, v));
      }
    }
}

// ---- MatMul -----------------------------------------------------------------------------

class MatMulNonFinite : public NonFiniteInputs {
 public:
  bool prepare(const ExternCall& call, const ExternBuffer* b) {
    if (call.inputs.size() < 2 || call.inputs[0].shape.size() < 2) return false;
    prepare_scan(call.inputs[0]);
    dynamic_ = !b;
    return dynamic_ || signs_of(call, static_cast<const float*>(b->data), &signs_);
  }

 protected:
  void check(const ExternCall& call, const ExternBuffer* inputs,
             const ExternBuffer* outputs) const override {
    parse_matmul(call, inputs, outputs);
  }
  // Signs per element of B's buffer from its offset (a broadcast dim reads the same ones).
  bool signs_of(const ExternCall& call, const float* w, Signs* out) const override {
    const TensorRef& b = call.inputs[1];
    const int64_t run = dense_run(b.shape, b.strides);
    if (run >= 0) return linear_signs(w + b.offset, run, out);  // (memory order: span = run)
    int64_t span = 1;
    for (size_t d = 0; d < b.shape.size(); ++d) span += (b.shape[d] - 1) * b.strides[d];
    out->assign(static_cast<size_t>((span + 3) / 4), 0);
    bool ok = true;
    for_each_in_view(b, [&](const std::vector<int64_t>&, int64_t at) {
      ok = ok && add_sign(w[at], at - b.offset, out);
    });
    return ok;
  }
  void exact_outputs(const ExternCall& call, const Signs& signs, const ExternBuffer* inputs,
                     const ExternBuffer* outputs, std::vector<std::pair<int64_t, float>>* values,
                     std::vector<int64_t>* nonfinite) const override;
  void reference(const ExternCall& call, const ExternBuffer* inputs,
                 const ExternBuffer* outputs) const override {
    reference_matmul(call, inputs, outputs);
  }
};

void MatMulNonFinite::exact_outputs(const ExternCall& call, const Signs& signs,
                                    const ExternBuffer* inputs, const ExternBuffer* outputs,
                                    std::vector<std::pair<int64_t, float>>* values,
                                    std::vector<int64_t>* nonfinite) const {
  const MatMulArgs x = parse_matmul(call, inputs, outputs);
  const MatMulLayout &la = x.la, &lb = x.lb, &lc = x.lc;
  for (int64_t i = 0; i < x.batch_count(); ++i) {
    int64_t oa = 0, ob = 0, oc = 0;
    x.batch_offsets(i, &oa, &ob, &oc);
    std::vector<int64_t> idx(x.batch.size() + 2, 0);
    for (size_t d = x.batch.size(), rest = static_cast<size_t>(i); d-- > 0;) {
      idx[d] = static_cast<int64_t>(rest % static_cast<size_t>(x.batch[d]));
      rest /= static_cast<size_t>(x.batch[d]);
    }
    for (int64_t r = 0; r < x.m; ++r) {
      bool row = false;
      for (int64_t k = 0; k < x.k; ++k) {
        const int64_t at = oa + r * la.row_stride + k * la.col_stride;
        if (finite(x.a[at])) continue;
        row = true;
        nonfinite->push_back(at);
      }
      if (!row) continue;
      idx[x.batch.size()] = r;
      for (int64_t c = 0; c < x.n; ++c) {
        SumClass sum;
        for (int64_t k = 0; k < x.k; ++k) {
          const float a = x.a[oa + r * la.row_stride + k * la.col_stride];
          if (!finite(a))
            sum.add(a, sign(signs, ob + k * lb.row_stride + c * lb.col_stride - lb.offset));
        }
        const float v = sum.value() * x.alpha;  // (alpha 0: NaN)
        idx[x.batch.size() + 1] = c;
        values->emplace_back(oc + r * lc.row_stride + c * lc.col_stride,
                             finish_element(call, false, inputs, idx, v));
      }
    }
  }
}

}  // namespace

bool finite_weights(const ExternCall& call, const ExternBuffer& w) {
  const ConvArgs a = parse_conv_shapes(call);
  const auto* bits = static_cast<const uint32_t*>(w.data);
  // An infinity or NaN has every exponent bit set; an integer test, so the loop vectorizes.
  auto bad = [](uint32_t b) { return static_cast<uint32_t>((b & 0x7F800000u) == 0x7F800000u); };
  uint32_t any = 0;
  if (row_major(call.inputs[1])) {
    const int64_t n = a.c_out * a.c_in_group() * a.kernel_size();
    for (int64_t i = 0; i < n; ++i) any |= bad(bits[a.w_offset + i]);
    return any == 0;
  }
  for (int64_t m = 0; m < (a.transpose ? a.c_in : a.c_out); ++m)
    for (int64_t c = 0; c < (a.transpose ? a.c_out_group() : a.c_in_group()); ++c)
      for (int64_t j0 = 0; j0 < a.kernel[0]; ++j0)
        for (int64_t j1 = 0; j1 < a.kernel[1]; ++j1)
          for (int64_t j2 = 0; j2 < a.kernel[2]; ++j2)
            any |= bad(bits[a.w_offset + m * a.ws[0] + c * a.ws[1] + j0 * a.ws[2] + j1 * a.ws[3] +
                            j2 * a.ws[4]]);
  return any == 0;
}

bool flushes_nan(const ExternCall& call) {
  for (const PostOp& p : call.post_ops) {
    switch (p.kind) {
      case PostOpKind::Relu:
      case PostOpKind::LeakyRelu:
      case PostOpKind::Clip:
      case PostOpKind::HardSigmoid:
      case PostOpKind::HardSwish:
      case PostOpKind::Max:
      case PostOpKind::Min:
        return true;
      default:
        break;
    }
  }
  return false;
}

bool NonFiniteInputs::linear_signs(const float* w, int64_t n, Signs* out) {
  if (simd::any_nonfinite_f32(w, static_cast<size_t>(n))) return false;
  out->assign(static_cast<size_t>((n + 3) / 4), 0);
  // From the bits (the weights are finite here): 0 for ±0, else 1 shifted by the sign bit
  // (1: > 0, 2: < 0). Branch-free over 16 weights at a time, which the compiler vectorizes.
  auto code = [w](int64_t i) {
    uint32_t b;
    std::memcpy(&b, w + i, sizeof(b));
    return static_cast<uint32_t>((b & 0x7FFFFFFFu) != 0) << (b >> 31);
  };
  uint8_t* o = out->data();
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    uint32_t packed = 0;
    for (int k = 0; k < 16; ++k) packed |= code(i + k) << (2 * k);
    std::memcpy(o + i / 4, &packed, sizeof(packed));  // little-endian: weight i in bits 0-1
  }
  for (; i < n; ++i) o[i / 4] |= static_cast<uint8_t>(code(i) << (2 * (i % 4)));
  return true;
}

bool NonFiniteInputs::add_sign(float v, int64_t i, Signs* out) {
  if (!finite(v)) return false;
  const int s = v > 0 ? 1 : v < 0 ? 2 : 0;
  (*out)[static_cast<size_t>(i / 4)] |= static_cast<uint8_t>(s << (2 * (i % 4)));
  return true;
}

void NonFiniteInputs::prepare_scan(const TensorRef& input) {
  input_run_ = dense_run(input.shape, input.strides);
}

void NonFiniteInputs::run(const ExternCall& call, const ExternBuffer* inputs,
                          const ExternBuffer* outputs, const RunSteps& steps) const {
  // A dense input inside its buffer is scanned without parsing the call (this runs before
  // every call); anything else is parsed, and so checked, first.
  const float* x = static_cast<const float*>(inputs[0].data);
  const int64_t offset = call.inputs[0].offset;
  if (!dynamic_ && input_run_ >= 0 && x && inputs[0].dtype == DType::F32 && offset >= 0 &&
      offset <= inputs[0].elements && input_run_ <= inputs[0].elements - offset &&
      !simd::any_nonfinite_f32(x + offset, static_cast<size_t>(input_run_)))
    return steps(inputs, outputs);
  check(call, inputs, outputs);  // every view inside its buffer
  Signs run_signs;
  if (dynamic_ && !signs_of(call, static_cast<const float*>(inputs[1].data), &run_signs))
    return reference(call, inputs, outputs);
  bool found = false;
  for_each_in_view(call.inputs[0], [&](const std::vector<int64_t>&, int64_t at) {
    found = found || !finite(x[at]);
  });
  if (!found) return steps(inputs, outputs);
  // The exact values first (a post-op operand may share the output's buffer), then the
  // primitive on the input with its non-finite values zeroed.
  std::vector<std::pair<int64_t, float>> values;
  std::vector<int64_t> nonfinite;
  exact_outputs(call, dynamic_ ? run_signs : signs_, inputs, outputs, &values, &nonfinite);
  std::vector<float> copy(x, x + inputs[0].elements);
  for (int64_t at : nonfinite) copy[static_cast<size_t>(at)] = 0.0f;
  std::vector<ExternBuffer> in(inputs, inputs + call.inputs.size());
  in[0].data = copy.data();
  steps(in.data(), outputs);
  float* out = static_cast<float*>(outputs[0].data);
  for (const auto& [at, v] : values) out[at] = v;
}

std::unique_ptr<NonFiniteInputs> conv_nonfinite_inputs(const ExternCall& call,
                                                       const ExternBuffer* w) {
  auto n = std::make_unique<ConvNonFinite>();
  if ((w && !w->data) || !n->prepare(call, w)) return nullptr;  // (W only prepacked)
  return n;
}

std::unique_ptr<NonFiniteInputs> matmul_nonfinite_inputs(const ExternCall& call,
                                                         const ExternBuffer* b) {
  auto n = std::make_unique<MatMulNonFinite>();
  if ((b && !b->data) || !n->prepare(call, b)) return nullptr;  // (B only prepacked)
  return n;
}

float finish_element(const ExternCall& call, bool has_bias, const ExternBuffer* inputs,
                     const std::vector<int64_t>& idx, float v) {
  if (has_bias) {
    const TensorRef& b = call.inputs[2];
    v += static_cast<const float*>(inputs[2].data)[b.offset + idx[1] * b.strides[0]];
  }
  return apply_post_ops_at(call, inputs, idx, v);
}

}  // namespace onednn
}  // namespace ferrite
