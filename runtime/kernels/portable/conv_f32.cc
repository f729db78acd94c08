#include "runtime/kernels/portable/conv_f32.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <vector>

#include "compiler/plan/error.h"
#include "runtime/kernels/portable/conv_simd_f32.h"
#include "runtime/kernels/portable/gemm_f32.h"
#include "runtime/kernels/reference/conv.h"
#include "runtime/kernels/reference/post_ops_apply.h"

namespace ferrite {
namespace {

// Floats of im2col / col2im columns per chunk (1 MiB): enough columns per GEMM call to
// amortize packing W, few enough that the columns stay in cache between the im2col that
// writes them and the GEMM that packs them.
constexpr int64_t kColBudget = int64_t{1} << 18;
// More scratch than this (4 GiB) means a nonsensical call, not a model.
constexpr int64_t kMaxScratch = int64_t{1} << 30;

using Dims5 = std::array<int64_t, 5>;

Dims5 x_dims(const ConvArgs& a) {
  return {a.n, a.c_in, a.in[0], a.in[1], a.in[2]};
}
Dims5 w_dims(const ConvArgs& a) {
  if (a.transpose) return {a.c_in, a.c_out_group(), a.kernel[0], a.kernel[1], a.kernel[2]};
  return {a.c_out, a.c_in_group(), a.kernel[0], a.kernel[1], a.kernel[2]};
}
Dims5 y_dims(const ConvArgs& a) {
  return {a.n, a.c_out, a.out[0], a.out[1], a.out[2]};
}

int64_t elements(const Dims5& d) {
  return d[0] * d[1] * d[2] * d[3] * d[4];  // parse_conv_shapes bounded each product
}

// Whether the view has the row-major strides of its shape (dims of size 1 may have any).
bool is_dense(const Dims5& shape, const Dims5& strides) {
  int64_t want = 1;
  for (int d = 4; d >= 0; --d) {
    if (shape[d] != 1 && strides[d] != want) return false;
    want *= shape[d];
  }
  return true;
}

// Calls f(view element offset, dense index) over a strided 5-D view in row-major order.
template <class F>
void for_each_element(const Dims5& shape, const Dims5& strides, int64_t offset, F f) {
  int64_t k = 0;
  for (int64_t i0 = 0; i0 < shape[0]; ++i0)
    for (int64_t i1 = 0; i1 < shape[1]; ++i1)
      for (int64_t i2 = 0; i2 < shape[2]; ++i2)
        for (int64_t i3 = 0; i3 < shape[3]; ++i3)
          for (int64_t i4 = 0; i4 < shape[4]; ++i4)
            f(offset + i0 * strides[0] + i1 * strides[1] + i2 * strides[2] + i3 * strides[3] +
                  i4 * strides[4],
              k++);
}

enum class Path { BiasOnly, Depthwise, Pointwise, Im2Col, Transpose };

Path choose_path(const ConvArgs& a) {
  if (a.c_in_group() == 0) return Path::BiasOnly;  // an empty sum
  if (a.transpose) return Path::Transpose;
  if (a.c_in_group() == 1 && a.c_out_group() == 1) return Path::Depthwise;
  for (int d = 0; d < 3; ++d)
    if (a.kernel[d] != 1 || a.stride[d] != 1 || a.pad_begin[d] != 0 || a.pad_end[d] != 0)
      return Path::Im2Col;
  return Path::Pointwise;
}

int64_t checked_mul(const ConvArgs& a, int64_t x, int64_t y) {
  int64_t r = 0;
  if (__builtin_mul_overflow(x, y, &r) || r > kMaxScratch)
    fail(a.op(), ": scratch memory for these shapes is too large");
  return r;
}

// im2col for one image and group, output rows [r0, r1) (row = (o0, o1), out[2] columns
// each): col[(c, j), (r - r0) * out[2] + o2] = x[c, o * stride + j * dilation - pad_begin],
// zero in the padding. Rows are ordered like W's [C/group, kernel...] dims.
void im2col(const ConvArgs& a, const float* x, int64_t r0, int64_t r1, float* col) {
  const int64_t ow = a.out[2], iw = a.in[2], s2 = a.stride[2];
  const int64_t cols = (r1 - r0) * ow, plane = a.in_size();
  float* dst = col;
  for (int64_t c = 0; c < a.c_in_group(); ++c)
    for (int64_t j0 = 0; j0 < a.kernel[0]; ++j0)
      for (int64_t j1 = 0; j1 < a.kernel[1]; ++j1)
        for (int64_t j2 = 0; j2 < a.kernel[2]; ++j2, dst += cols) {
          const int64_t off = j2 * a.dilation[2] - a.pad_begin[2];
          int64_t lo, hi;
          conv_valid_range(ow, iw, s2, off, &lo, &hi);
          for (int64_t r = r0; r < r1; ++r) {
            float* out = dst + (r - r0) * ow;
            const int64_t o0 = r / a.out[1], o1 = r % a.out[1];
            const int64_t i0 = o0 * a.stride[0] + j0 * a.dilation[0] - a.pad_begin[0];
            const int64_t i1 = o1 * a.stride[1] + j1 * a.dilation[1] - a.pad_begin[1];
            if (i0 < 0 || i0 >= a.in[0] || i1 < 0 || i1 >= a.in[1] || lo == hi) {
              std::fill(out, out + ow, 0.0f);
              continue;
            }
            const float* xrow = x + c * plane + (i0 * a.in[1] + i1) * iw;
            std::fill(out, out + lo, 0.0f);
            if (s2 == 1) {
              std::memcpy(out + lo, xrow + lo + off, static_cast<size_t>(hi - lo) * sizeof(float));
            } else {
              for (int64_t o = lo; o < hi; ++o) out[o] = xrow[o * s2 + off];
            }
            std::fill(out + hi, out + ow, 0.0f);
          }
        }
}

// C[m x n] = A[m x k] B[k x n], C's rows `c_rs` apart, A given by its strides, B dense.
void gemm(const float* a, int64_t a_rs, int64_t a_cs, const float* b, int64_t b_rs, float* c,
          int64_t c_rs, int64_t m, int64_t n, int64_t k) {
  GemmF32 g;
  g.a = a;
  g.a_rs = a_rs;
  g.a_cs = a_cs;
  g.b = b;
  g.b_rs = b_rs;
  g.b_cs = 1;
  g.c = c;
  g.c_rs = c_rs;
  g.c_cs = 1;
  g.m = m;
  g.n = n;
  g.k = k;
  gemm_f32(g);
}

class PortableConv : public PreparedExtern {
 public:
  PortableConv(const ExternCall& call, bool transpose) : call_(call), transpose_(transpose) {
    const ConvArgs a = parse_conv_shapes(call, transpose);
    path_ = choose_path(a);
    if (elements(y_dims(a)) == 0) return;  // nothing to compute
    if (!is_dense(x_dims(a), a.xs)) x_dense_.resize(static_cast<size_t>(elements(x_dims(a))));
    if (!is_dense(w_dims(a), a.ws)) w_dense_.resize(static_cast<size_t>(elements(w_dims(a))));
    if (!is_dense(y_dims(a), a.ys)) y_dense_.resize(static_cast<size_t>(elements(y_dims(a))));
    // Columns come in chunks of whole rows (all but the innermost spatial dim) of the
    // output (im2col) or of the input (ConvTranspose).
    int64_t col_rows = 0, rows = 0, row_len = 0;
    if (path_ == Path::Im2Col) {
      col_rows = a.c_in_group() * a.kernel_size();
      rows = a.out[0] * a.out[1];
      row_len = a.out[2];
    } else if (path_ == Path::Transpose) {
      col_rows = a.c_out_group() * a.kernel_size();
      rows = a.in[0] * a.in[1];
      row_len = a.in[2];
    }
    const int64_t per_row = checked_mul(a, col_rows, row_len);
    chunk_rows_ = std::min(rows, std::max<int64_t>(1, kColBudget / std::max<int64_t>(per_row, 1)));
    col_.resize(static_cast<size_t>(checked_mul(a, per_row, chunk_rows_)));
  }

  void run(const ExternBuffer* inputs, const ExternBuffer* outputs) override {
    const ConvArgs a = parse_conv(call_, inputs, outputs, transpose_);
    if (elements(y_dims(a)) == 0) return;
    const float* x = dense_input(a.x, a.x_offset, x_dims(a), a.xs, &x_dense_);
    const float* w = dense_input(a.w, a.w_offset, w_dims(a), a.ws, &w_dense_);
    float* y = y_dense_.empty() ? a.y + a.y_offset : y_dense_.data();
    switch (path_) {
      case Path::BiasOnly:
      case Path::Transpose:
        fill_bias(a, y);
        if (path_ == Path::Transpose) conv_transpose(a, x, w, y);
        break;
      case Path::Depthwise:
        depthwise(a, x, w, y);
        break;
      case Path::Pointwise:
      case Path::Im2Col:
        if (path_ == Path::Pointwise) pointwise(a, x, w, y);
        if (path_ == Path::Im2Col) im2col_gemm(a, x, w, y);
        if (a.has_bias) {
          for (int64_t n = 0; n < a.n; ++n)
            conv_add_bias_f32(y + n * a.c_out * a.out_size(), a.c_out, a.out_size(),
                              a.b + a.b_offset, a.b_stride);
        }
        break;
    }
    if (!y_dense_.empty()) {
      for_each_element(y_dims(a), a.ys, a.y_offset,
                       [&](int64_t view, int64_t k) { a.y[view] = y_dense_[k]; });
    }
    apply_post_ops(call_, inputs, outputs);
  }

 private:
  // The operand as a dense array: in place when it is one, else copied into `scratch`.
  static const float* dense_input(const float* base, int64_t offset, const Dims5& shape,
                                  const Dims5& strides, std::vector<float>* scratch) {
    if (elements(shape) == 0) return base;  // never read; the offset may point anywhere
    if (scratch->empty()) return base + offset;
    float* dst = scratch->data();
    for_each_element(shape, strides, offset, [&](int64_t view, int64_t k) { dst[k] = base[view]; });
    return dst;
  }

  static void fill_bias(const ConvArgs& a, float* y) {
    const int64_t plane = a.out_size();
    for (int64_t n = 0; n < a.n; ++n)
      for (int64_t m = 0; m < a.c_out; ++m) {
        const float b = a.has_bias ? a.b[a.b_offset + m * a.b_stride] : 0.0f;
        float* p = y + (n * a.c_out + m) * plane;
        std::fill(p, p + plane, b);
      }
  }

  static void depthwise(const ConvArgs& a, const float* x, const float* w, float* y) {
    const int64_t k = a.kernel_size();
    for (int64_t n = 0; n < a.n; ++n)
      for (int64_t c = 0; c < a.c_out; ++c) {
        const float b = a.has_bias ? a.b[a.b_offset + c * a.b_stride] : 0.0f;
        conv_depthwise_plane_f32(a, x + (n * a.c_in + c) * a.in_size(), w + c * k, b,
                                 y + (n * a.c_out + c) * a.out_size());
      }
  }

  static void pointwise(const ConvArgs& a, const float* x, const float* w, float* y) {
    const int64_t cg = a.c_in_group(), mg = a.c_out_group(), p = a.out_size();
    for (int64_t n = 0; n < a.n; ++n)
      for (int64_t g = 0; g < a.group; ++g)
        gemm(w + g * mg * cg, cg, 1, x + (n * a.c_in + g * cg) * p, p,
             y + (n * a.c_out + g * mg) * p, p, mg, p, cg);
  }

  void im2col_gemm(const ConvArgs& a, const float* x, const float* w, float* y) {
    const int64_t cg = a.c_in_group(), mg = a.c_out_group(), kdim = cg * a.kernel_size();
    const int64_t p = a.out_size(), rows = a.out[0] * a.out[1], ow = a.out[2];
    for (int64_t n = 0; n < a.n; ++n)
      for (int64_t g = 0; g < a.group; ++g) {
        const float* xg = x + (n * a.c_in + g * cg) * a.in_size();
        float* yg = y + (n * a.c_out + g * mg) * p;
        for (int64_t r0 = 0; r0 < rows; r0 += chunk_rows_) {
          const int64_t r1 = std::min(rows, r0 + chunk_rows_), cols = (r1 - r0) * ow;
          im2col(a, xg, r0, r1, col_.data());
          gemm(w + g * mg * kdim, kdim, 1, col_.data(), cols, yg + r0 * ow, p, mg, cols, kdim);
        }
      }
  }

  // Per image and group: columns = W_g^T [Mg*kernel x Cg] @ X_g [Cg x in], added into Y by
  // col2im, a chunk of input rows at a time.
  void conv_transpose(const ConvArgs& a, const float* x, const float* w, float* y) {
    const int64_t cg = a.c_in_group(), mg = a.c_out_group(), mk = mg * a.kernel_size();
    const int64_t pin = a.in_size(), rows = a.in[0] * a.in[1], iw = a.in[2];
    for (int64_t n = 0; n < a.n; ++n)
      for (int64_t g = 0; g < a.group; ++g) {
        const float* xg = x + (n * a.c_in + g * cg) * pin;
        float* yg = y + (n * a.c_out + g * mg) * a.out_size();
        for (int64_t r0 = 0; r0 < rows; r0 += chunk_rows_) {
          const int64_t r1 = std::min(rows, r0 + chunk_rows_), cols = (r1 - r0) * iw;
          gemm(w + g * cg * mk, 1, mk, xg + r0 * iw, pin, col_.data(), cols, mk, cols, cg);
          conv_col2im_add_f32(a, col_.data(), r0, r1, yg);
        }
      }
  }

  const ExternCall& call_;
  bool transpose_;
  Path path_ = Path::BiasOnly;
  int64_t chunk_rows_ = 0;
  std::vector<float> col_, x_dense_, w_dense_, y_dense_;
};

}  // namespace

std::unique_ptr<PreparedExtern> prepare_portable_conv(const ExternCall& call) {
  if (call.op != "Conv" && call.op != "ConvTranspose")
    fail("prepare_portable_conv: op '", call.op, "' is not a convolution");
  return std::make_unique<PortableConv>(call, call.op == "ConvTranspose");
}

void portable_conv(const ExternCall& call, const ExternBuffer* inputs,
                   const ExternBuffer* outputs) {
  PortableConv(call, false).run(inputs, outputs);
}

void portable_conv_transpose(const ExternCall& call, const ExternBuffer* inputs,
                             const ExternBuffer* outputs) {
  PortableConv(call, true).run(inputs, outputs);
}

}  // namespace ferrite
