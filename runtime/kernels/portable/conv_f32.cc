#include "runtime/kernels/portable/conv_f32.h"

#include <algorithm>
#include <array>
#include <iterator>
#include <string>

#include "compiler/plan/error.h"
#include "runtime/following_epilogue.h"
#include "runtime/kernels/portable/conv_padded_nan_f32.h"
#include "runtime/kernels/portable/conv_simd_f32.h"
#include "runtime/kernels/portable/epilogue.h"
#include "runtime/kernels/portable/float_buffer.h"
#include "runtime/kernels/portable/gemm_f32.h"
#include "runtime/kernels/portable/parallel.h"
#include "runtime/kernels/portable/shared_panels.h"
#include "runtime/kernels/reference/conv.h"
#include "runtime/kernels/reference/operand_checks.h"
#include "runtime/kernels/reference/post_ops_apply.h"

namespace ferrite {
namespace {

// Floats of ConvTranspose's col2im columns per chunk (1 MiB): enough columns per GEMM call
// to amortize packing W, few enough that the columns stay in cache between the GEMM that
// writes them and col2im.
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

// The 5-D strides of a [n, c, spatial...] view (as ConvArgs has them for X, W and Y).
Dims5 strides5(const TensorRef& r) {
  Dims5 s{};
  const size_t k = r.strides.size() - 2;
  s[0] = r.strides[0];
  s[1] = r.strides[1];
  for (size_t d = 0; d < k; ++d) s[2 + (3 - k) + d] = r.strides[2 + d];
  return s;
}

// The one stride that steps a post-op operand along the flattened output positions, when
// its spatial strides are those of a dense plane scaled (a residual: 1; a per-channel
// operand: 0); false when they do not flatten.
bool flat_stride(const Dims5& s, const ConvArgs& a, int64_t* cs) {
  int64_t unit = -1, inner = 1;
  for (int d = 2; d >= 0; --d) {
    if (a.out[d] == 1) continue;
    const int64_t st = s[2 + d];
    if (unit < 0) unit = st;
    if (st != unit * inner) return false;
    inner *= a.out[d];
  }
  *cs = unit < 0 ? 0 : unit;
  return true;
}

enum class Path { BiasOnly, Depthwise, Pointwise, Implicit, Windowed, Winograd, Transpose };

Path choose_path(const ConvArgs& a) {
  if (a.c_in_group() == 0) return Path::BiasOnly;  // an empty sum
  if (a.transpose) return Path::Transpose;
  if (a.c_in_group() == 1 && a.c_out_group() == 1) return Path::Depthwise;
  for (int d = 0; d < 3; ++d)
    if (a.kernel[d] != 1 || a.stride[d] != 1 || a.pad_begin[d] != 0 || a.pad_end[d] != 0)
      return Path::Implicit;
  return Path::Pointwise;
}

// Whether the windows layout (conv_simd_f32.h) beats packing im2col from X: it packs with
// plain copies but computes the columns between output rows too. Per im2col element the
// GEMM does M / group multiply-adds; packing from X costs about kPackFromX of them (the
// bounds of every run), from the copy kPackFromCopy (measured on wasm's resnet18 layers).
constexpr int64_t kPackFromX = 24, kPackFromCopy = 4;
bool windows_pay(const ConvArgs& a, const ConvWindows& w) {
  const int64_t mg = a.c_out_group();
  return w.cols * (mg + kPackFromCopy) < a.out_size() * (mg + kPackFromX);
}

// Winograd F(2x2, 3x3) needs its weights transformed, so a constant W; with fewer channels
// than this each way, the transforms cost more than the multiply-adds they save.
constexpr int64_t kWinogradMinChannels = 8;
// Floats of the transformed inputs and products of one block of tile rows (both GEMM
// operands of a block stay in L2), unless the transformed weights U are larger: every block
// reads all of U, so a block then takes as many floats as U has (re-reading U once more
// costs as much as those floats going through L3 instead). resnet18's 512-channel 7x7
// convolutions (U 16 MB, 4 tile rows) took 5.1 ms each on one AVX-512 core in 2-row blocks
// and 2.7 in one, its 256-channel 14x14 ones (U 4 MB) 2.2 and 1.8.
constexpr int64_t kWinogradBlock = int64_t{1} << 17;

int64_t checked_mul(const ConvArgs& a, int64_t x, int64_t y) {
  int64_t r = 0;
  if (__builtin_mul_overflow(x, y, &r) || r > kMaxScratch)
    fail(a.op(), ": scratch memory for these shapes is too large");
  return r;
}

class PortableConv : public PreparedExtern {
 public:
  PortableConv(const ExternCall& call, const std::vector<ExternBuffer>& constants,
               const std::vector<PackedInput>& packed, int threads, PackedStore* store)
      : call_(call), threads_(std::max(threads, 1)) {
    const ConvArgs a = parse_conv_shapes(call);
    path_ = choose_path(a);
    if (elements(y_dims(a)) == 0) return;  // nothing to compute
    if (path_ == Path::Implicit && a.kernel_size() > 1 && conv_windows_fit(a)) {
      windows_ = conv_windows(a);
      checked_mul(a, a.c_in, windows_.channel);
      checked_mul(a, a.c_out_group(), windows_.cols);
      if (windows_pay(a, windows_)) path_ = Path::Windowed;
      gapless_ = windows_.cols == a.out_size();
    }
    const bool w_constant = is_constant_input(constants, 1);
    const Path direct = path_;
    if (w_constant && im2col() && conv_winograd_applies(a) &&
        a.c_in_group() >= kWinogradMinChannels && a.c_out_group() >= kWinogradMinChannels) {
      path_ = Path::Winograd;
      wino_ = conv_winograd(a);
      checked_mul(a, a.c_in, wino_.windows.channel);
      const int64_t per_row = checked_mul(a, 16 * (a.c_in_group() + a.c_out_group()), wino_.twp);
      const int64_t u_floats = checked_mul(a, 16 * a.c_in_group(), a.c_out_group());
      const int64_t block = std::max(kWinogradBlock, u_floats);
      wino_rows_ = std::min(wino_.th, std::max<int64_t>(1, block / per_row));
      // Blocks run in parallel, each on one thread: at least one block per thread.
      wino_rows_ = std::min(wino_rows_, (wino_.th + threads_ - 1) / threads_);
      wino_parts_ = std::min<int64_t>(threads_, (wino_.th + wino_rows_ - 1) / wino_rows_);
      checked_mul(a, checked_mul(a, per_row, wino_rows_), wino_parts_);
    }
    fused_ = plan_post_ops(a);
    if (path_ == Path::Transpose) {
      // Columns come in chunks of whole input rows (all but the innermost spatial dim).
      const int64_t per_row = checked_mul(a, a.c_out_group() * a.kernel_size(), a.in[2]);
      chunk_rows_ = std::min(a.in[0] * a.in[1],
                             std::max<int64_t>(1, kColBudget / std::max<int64_t>(per_row, 1)));
      checked_mul(a, per_row, chunk_rows_);
    }
    pads_ = conv_pads(a);
    // A constant W with an infinity or NaN stays for the exact sums (conv_padded_nan_f32.h).
    w_nonfinite_ = pads_ && w_constant && conv_weight_nonfinite(call, a, constants[1]);
    if (w_constant) pack_weight(a, constants[1], packed, store);
    if (path_ == Path::Winograd && !w_packed_) path_ = direct;  // W's view is bad: run reports it
    scratch_floats_ = layout(a, nullptr).floats();
  }

  std::string implementation() const override {
    static constexpr const char* kNames[] = {"bias only",   "depthwise",    "gemm 1x1",
                                             "gemm im2col", "gemm windows", "winograd 2x2 3x3",
                                             "gemm col2im"};  // Path's order
    return kNames[static_cast<size_t>(path_)];
  }

  // A packed W is never read again, but for Winograd's: its outputs that the transforms
  // cannot give are summed from W, and U is made from it again to repack.
  std::vector<size_t> constants_copied() const override {
    const bool keep = path_ == Path::Winograd || w_nonfinite_;
    return w_packed_ && !keep ? std::vector<size_t>{1} : std::vector<size_t>{};
  }

  // Not Winograd's U: the filters it keeps (for the exact outputs) would have to travel
  // with it, 25/9 the raw weights, where the raw weights alone are the smaller plan and U is
  // made from them at load.
  std::vector<PackedConstant> packed_inputs() const override {
    if (!w_packed_ || path_ == Path::Winograd) return {};
    PackedConstant c;
    c.input = 1;
    const std::vector<PackedOperand>& w = w_packs();
    c.layout = gemm_f32_packed_layout(packed_what(), 'A', w[0].rows, w[0].cols, w.size());
    c.bytes = gemm_f32_packed_bytes(w, 'A');
    return {std::move(c)};
  }
  size_t packed_inputs_adopted() const override { return adopted_; }

  size_t scratch_bytes() const override { return scratch_floats_ * sizeof(float); }
  void bind_scratch(void* scratch) override { scratch_.bind(scratch, scratch_bytes()); }

  void run(const ExternBuffer* inputs, const ExternBuffer* outputs) override {
    const ConvArgs a = parse_conv(call_, inputs, outputs);
    check_post_ops(call_, inputs, outputs);
    if (elements(y_dims(a)) == 0) return;
    Offsets at;
    const ScratchLayout l = layout(a, &at);
    float* s = scratch_.get(l.floats());
    const float* x = dense_input(a.x, a.x_offset, x_dims(a), a.xs, at.x ? s + at.x_at : nullptr);
    const float* w = dense_input(a.w, a.w_offset, w_dims(a), a.ws, at.w ? s + at.w_at : nullptr);
    float* y = at.y ? s + at.y_at : a.y + a.y_offset;
    const bool packed = use_packed_weight(a);
    for (int64_t n = 0; n < a.n; ++n) {
      const float* xn = x + n * a.c_in * a.in_size();
      float* yn = y + n * a.c_out * a.out_size();
      image_epilogue(a, inputs, n);
      switch (path_) {
        case Path::BiasOnly:
          std::fill(yn, yn + a.c_out * a.out_size(), 0.0f);
          epilogue_apply_f32(epilogue_, yn, a.out_size(), a.c_out, a.out_size());
          break;
        case Path::Depthwise:
          depthwise(a, xn, w, yn, s + at.work_at, at.work_slot);
          break;
        case Path::Pointwise:
        case Path::Implicit:
          gemm(a, xn, w, packed, yn, s + at.work_at);
          break;
        case Path::Windowed:
          windowed(a, xn, w, packed, yn, s + at.copy_at, s + at.c_at, s + at.work_at);
          break;
        case Path::Winograd:
          winograd(a, xn, w, packed, yn, s + at.copy_at, s + at.col_at, s + at.c_at,
                   s + at.work_at);
          break;
        case Path::Transpose:
          conv_transpose(a, xn, w, packed, yn, s + at.col_at, s + at.work_at);
          break;
      }
    }
    if (at.y) {
      for_each_element(y_dims(a), a.ys, a.y_offset,
                       [&](int64_t view, int64_t k) { a.y[view] = y[k]; });
    }
    if (!fused_) apply_post_ops(call_, inputs, outputs);
    const bool w_runtime = a.w && a.w != weight_;
    if (pads_ && (w_nonfinite_ || (w_runtime && conv_weight_nonfinite(call_, a, inputs[1]))))
      conv_fix_padded_nan(call_, a, inputs);
  }

 private:
  // Where run() puts things in its scratch (`x`, `w`, `y`: whether that operand needs a
  // dense copy).
  struct Offsets {
    bool x = false, w = false, y = false;
    size_t x_at = 0, w_at = 0, y_at = 0, col_at = 0, work_at = 0, work_slot = 0;
    size_t copy_at = 0, c_at = 0;  // Windowed: X's windows copy, one group's GEMM result
  };

  ScratchLayout layout(const ConvArgs& a, Offsets* out) const {
    Offsets at;
    ScratchLayout l;
    if (elements(y_dims(a)) == 0) return l;
    at.x = !is_dense(x_dims(a), a.xs) && elements(x_dims(a)) > 0;
    at.w = !is_dense(w_dims(a), a.ws) && elements(w_dims(a)) > 0;
    at.y = !is_dense(y_dims(a), a.ys);
    if (at.x) at.x_at = l.add(static_cast<size_t>(elements(x_dims(a))));
    if (at.w) at.w_at = l.add(static_cast<size_t>(elements(w_dims(a))));
    if (at.y) at.y_at = l.add(static_cast<size_t>(elements(y_dims(a))));
    const int64_t cg = a.c_in_group(), mg = a.c_out_group(), p = a.out_size();
    GemmF32 g;
    switch (path_) {
      case Path::BiasOnly:
        break;
      case Path::Depthwise:
        at.work_slot = conv_depthwise_scratch_floats(a);
        at.work_at = l.add(at.work_slot * static_cast<size_t>(depthwise_parts(a)));
        break;
      case Path::Pointwise:
      case Path::Implicit:
        g.m = mg;
        g.n = p;
        g.k = cg * (path_ == Path::Implicit ? a.kernel_size() : 1);
        at.work_at = l.add(gemm_f32_scratch_floats(g, threads_));
        break;
      case Path::Windowed:
        g.m = mg;
        g.n = windows_.cols;
        g.k = cg * a.kernel_size();
        at.copy_at = l.add(static_cast<size_t>(a.c_in * windows_.channel));
        if (!gapless_) at.c_at = l.add(static_cast<size_t>(mg * windows_.cols));
        at.work_at = l.add(gemm_f32_scratch_floats(g, threads_));
        break;
      case Path::Winograd: {  // the copy; per part V (col_at), the products (c_at), work
        const WinogradSlots slots = winograd_slots(a);
        const size_t parts = static_cast<size_t>(wino_parts_);
        at.copy_at = l.add(static_cast<size_t>(a.c_in * wino_.windows.channel));
        at.col_at = l.add(slots.v * parts);
        at.c_at = l.add(slots.products * parts);
        at.work_at = l.add(slots.work * parts);
        break;
      }
      case Path::Transpose:
        g.m = mg * a.kernel_size();
        g.n = chunk_rows_ * a.in[2];
        g.k = cg;
        at.col_at = l.add(static_cast<size_t>(g.m * g.n));
        at.work_at = l.add(gemm_f32_scratch_floats(g, threads_));
        break;
    }
    if (out) *out = at;
    return l;
  }

  // Decides whether the post-ops can run per block (each operand's spatial strides flatten)
  // and sizes the epilogue's operand list.
  bool plan_post_ops(const ConvArgs& a) {
    epilogue_.ops = call_.post_ops.data();
    epilogue_.op_count = call_.post_ops.size();
    epilogue_.operands.resize(call_.post_ops.size());
    for (const PostOp& p : call_.post_ops) {
      if (!post_op_is_binary(p.kind)) continue;
      if (p.input < 0 || static_cast<size_t>(p.input) >= call_.inputs.size()) return false;
      const TensorRef& t = call_.inputs[static_cast<size_t>(p.input)];
      int64_t cs = 0;
      if (t.strides.size() != call_.outputs[0].shape.size() || !flat_stride(strides5(t), a, &cs))
        return false;
    }
    return true;
  }

  // The epilogue of image n in its (channel, output position) coordinates: the bias (for the
  // paths that do not add it themselves) and, when fused, the post-ops.
  void image_epilogue(const ConvArgs& a, const ExternBuffer* inputs, int64_t n) {
    const bool bias = a.has_bias && (path_ == Path::BiasOnly || path_ == Path::Pointwise ||
                                     path_ == Path::Winograd || im2col());
    epilogue_.row_bias = bias ? a.b + a.b_offset : nullptr;
    epilogue_.row_bias_stride = a.b_stride;
    epilogue_.op_count = fused_ ? call_.post_ops.size() : 0;
    for (size_t k = 0; k < epilogue_.op_count; ++k) {
      const PostOp& p = call_.post_ops[k];
      if (!post_op_is_binary(p.kind)) continue;
      const TensorRef& t = call_.inputs[static_cast<size_t>(p.input)];
      const Dims5 s = strides5(t);
      int64_t cs = 0;
      flat_stride(s, a, &cs);
      epilogue_.operands[k] = {
          static_cast<const float*>(inputs[p.input].data) + t.offset + n * s[0], s[1], cs};
    }
  }

  // A constant W, dense, is packed now as the GEMM's A operand of each group (W_g, or W_g^T
  // for ConvTranspose); a bad view is left for run to report, as the reference would.
  void pack_weight(const ConvArgs& a, const ExternBuffer& buffer,
                   const std::vector<PackedInput>& packed, PackedStore* store) {
    if (path_ != Path::Pointwise && !im2col() && path_ != Path::Winograd &&
        path_ != Path::Transpose)
      return;
    const TensorRef& w = call_.inputs[1];
    try {
      check_f32_view(a.op(), "W", w, buffer, w.shape.size());
    } catch (const Error&) {
      return;
    }
    if (!is_dense(w_dims(a), a.ws)) return;
    weight_ = static_cast<const float*>(buffer.data);  // null: the plan holds it only packed
    packed_w_.resize(static_cast<size_t>(a.group * (path_ == Path::Winograd ? 16 : 1)));
    int64_t rows = 0, cols = 0;
    packed_dims(a, &rows, &cols);
    for (const PackedInput& p : packed) {
      if (p.input == 1 && path_ != Path::Winograd &&  // (packed_inputs)
          gemm_f32_adopt_packed(p.layout, p.data, p.size, packed_what(), 'A', rows, cols,
                                &packed_w_)) {
        adopted_ = 1;
        w_packed_ = true;
        return;
      }
    }
    if (!weight_) {  // packed for another target: the Session reports it
      packed_w_.clear();
      return;
    }
    w_packed_ = true;
    std::string key;  // in the store the model's sessions share, when there is one
    if (store) {
      key = panels_key(gemm_f32_packed_layout(packed_what(), 'A', rows, cols, packed_w_.size()),
                       buffer, w);
      if ((shared_w_ = store->find<std::vector<PackedOperand>>(key))) return;
    }
    for (int64_t g = 0; g < a.group; ++g) pack_group(a, weight_ + a.w_offset, g);
    if (store)
      shared_w_ = share_panels(store, key, &packed_w_, gemm_f32_packed_a_floats(rows, cols));
  }

  // The packed W: its own, or the store's.
  const std::vector<PackedOperand>& w_packs() const { return shared_w_ ? *shared_w_ : packed_w_; }

  // The dims of each packed A (per group, and per Winograd point), as pack_group packs them.
  void packed_dims(const ConvArgs& a, int64_t* rows, int64_t* cols) const {
    const int64_t cg = a.c_in_group(), mg = a.c_out_group(), ks = a.kernel_size();
    *rows = path_ == Path::Transpose ? mg * ks : mg;
    *cols = path_ == Path::Winograd || path_ == Path::Transpose ? cg : cg * (im2col() ? ks : 1);
  }
  const char* packed_what() const {
    return path_ == Path::Winograd    ? "conv winograd"
           : path_ == Path::Transpose ? "conv transpose"
                                      : "conv";
  }

  void pack_group(const ConvArgs& a, const float* w, int64_t g) {
    PackedOperand* out = &packed_w_[static_cast<size_t>(g)];
    const int64_t cg = a.c_in_group(), mg = a.c_out_group(), ks = a.kernel_size();
    if (path_ == Path::Winograd) {  // U_xi of the group, transformed from the filters
      std::vector<float> u(static_cast<size_t>(16 * mg * cg));
      conv_winograd_weights(a, w, g, u.data());
      for (int64_t xi = 0; xi < 16; ++xi)
        gemm_f32_pack_a(u.data() + xi * mg * cg, cg, 1, mg, cg,
                        &packed_w_[static_cast<size_t>(g * 16 + xi)]);
    } else if (path_ == Path::Transpose) {
      gemm_f32_pack_a(w + g * cg * mg * ks, 1, mg * ks, mg * ks, cg, out);
    } else {
      const int64_t kdim = cg * (im2col() ? ks : 1);
      gemm_f32_pack_a(w + g * mg * kdim, kdim, 1, mg, kdim, out);
    }
  }

  // Whether this run uses the packed W (packing it again if the dispatch target changed).
  // A null W is the constant the Session freed after prepare (constants_copied).
  bool use_packed_weight(const ConvArgs& a) {
    if (!w_packed_ || (a.w != weight_ && a.w != nullptr)) return false;
    const PackedOperand& p0 = w_packs()[0];
    if (!gemm_f32_packed_usable(&p0, p0.rows, p0.cols)) {
      if (!a.w) fail(a.op(), ": W was freed after packing for another SIMD target");
      shared_w_.reset();  // never written: packed again into its own (shared_panels.h)
      for (int64_t g = 0; g < a.group; ++g) pack_group(a, weight_ + a.w_offset, g);
    }
    return true;
  }

  // The operand as a dense array: in place when it is one, else copied into `scratch`.
  static const float* dense_input(const float* base, int64_t offset, const Dims5& shape,
                                  const Dims5& strides, float* scratch) {
    if (elements(shape) == 0) return base;  // never read; the offset may point anywhere
    if (!base) return nullptr;              // W freed by the Session after packing: never read
    if (!scratch) return base + offset;
    for_each_element(shape, strides, offset,
                     [&](int64_t view, int64_t k) { scratch[k] = base[view]; });
    return scratch;
  }

  int64_t depthwise_parts(const ConvArgs& a) const {
    return std::max<int64_t>(1, std::min<int64_t>(threads_, a.c_out));
  }

  void depthwise(const ConvArgs& a, const float* x, const float* w, float* y, float* work,
                 size_t slot) {
    const Epilogue* post_ops = epilogue_.active() ? &epilogue_ : nullptr;
    const int64_t parts = depthwise_parts(a);
    parallel_parts(threads_, parts, [&](int64_t part) {
      conv_depthwise_f32(a, x, w, y, post_ops, a.c_out * part / parts, a.c_out * (part + 1) / parts,
                         work + static_cast<size_t>(part) * slot);
    });
  }

  // Per group: Y_g [Mg, out] = W_g [Mg, Cg * kernel] @ B, B the group's X [Cg, in] itself
  // (Pointwise) or its im2col matrix packed on the fly (Implicit); the epilogue per tile.
  void gemm(const ConvArgs& a, const float* x, const float* w, bool packed, float* y, float* work) {
    const int64_t cg = a.c_in_group(), mg = a.c_out_group(), p = a.out_size();
    const int64_t kdim = cg * (path_ == Path::Implicit ? a.kernel_size() : 1);
    for (int64_t grp = 0; grp < a.group; ++grp) {
      group_epilogue_ = epilogue_;  // (reuses its operand list: no allocation)
      group_epilogue_.shift(grp * mg, 0);
      const Im2ColSource source{&a, x + grp * cg * a.in_size()};
      GemmF32 g;
      g.a = packed ? nullptr : w + grp * mg * kdim;
      g.a_rs = kdim;
      g.a_cs = 1;
      g.a_packed = packed ? &w_packs()[static_cast<size_t>(grp)] : nullptr;
      if (path_ == Path::Implicit) {
        g.b_packer = conv_pack_im2col_f32;
        g.b_ctx = &source;
      } else {
        g.b = x + grp * cg * p;
        g.b_rs = p;
        g.b_cs = 1;
      }
      g.c = y + grp * mg * p;
      g.c_rs = p;
      g.c_cs = 1;
      g.m = mg;
      g.n = p;
      g.k = kdim;
      g.epilogue = &group_epilogue_;
      gemm_f32(g, threads_, work);
    }
  }

  // The windows path: X copied into the windows layout, then per group Y_g = W_g @ B with B
  // packed from the copy, into `c` (the GEMM's columns have gaps between output rows) and
  // from there into Y through the epilogue; without gaps (1-D), straight into Y.
  void windowed(const ConvArgs& a, const float* x, const float* w, bool packed, float* y,
                float* copy, float* c, float* work) {
    const int64_t cg = a.c_in_group(), mg = a.c_out_group(), p = a.out_size();
    const int64_t kdim = cg * a.kernel_size();
    parallel_ranges(threads_, a.c_in, [&](int64_t c0, int64_t c1) {
      conv_windows_fill_f32(a, windows_, x, c0, c1, copy);
    });
    for (int64_t grp = 0; grp < a.group; ++grp) {
      group_epilogue_ = epilogue_;
      group_epilogue_.shift(grp * mg, 0);
      const Epilogue* post_ops = group_epilogue_.active() ? &group_epilogue_ : nullptr;
      const WindowsSource source{&windows_, copy + grp * cg * windows_.channel};
      float* yg = y + grp * mg * p;
      GemmF32 g;
      g.a = packed ? nullptr : w + grp * mg * kdim;
      g.a_rs = kdim;
      g.a_cs = 1;
      g.a_packed = packed ? &w_packs()[static_cast<size_t>(grp)] : nullptr;
      g.b_packer = conv_pack_windows_f32;
      g.b_ctx = &source;
      g.c = gapless_ ? yg : c;
      g.c_rs = windows_.cols;
      g.c_cs = 1;
      g.m = mg;
      g.n = windows_.cols;
      g.k = kdim;
      g.epilogue = gapless_ ? post_ops : nullptr;
      gemm_f32(g, threads_, work);
      if (gapless_) continue;
      parallel_ranges(threads_, mg, [&](int64_t m0, int64_t m1) {
        conv_windows_unpad_f32(a, windows_, c, post_ops, m0, m1, yg);
      });
    }
  }

  bool im2col() const { return path_ == Path::Implicit || path_ == Path::Windowed; }

  // Floats of one part's V, products and GEMM packing blocks (Winograd).
  struct WinogradSlots {
    size_t v = 0, products = 0, work = 0;
  };
  WinogradSlots winograd_slots(const ConvArgs& a) const {
    const int64_t cg = a.c_in_group(), mg = a.c_out_group(), tb = wino_rows_ * wino_.twp;
    GemmF32 g;
    g.m = mg;
    g.n = tb;
    g.k = cg;
    return {static_cast<size_t>(16 * cg * tb), static_cast<size_t>(16 * mg * tb),
            gemm_f32_scratch_floats(g, 1)};
  }

  // Winograd F(2x2, 3x3): X copied into 2 x 2 phases, then per group and block of tile rows
  // V = the input transform, 16 GEMMs U_xi @ V_xi, and the output transform with the
  // epilogue into Y. The blocks are split among the threads (one parallel step per group,
  // each block computed whole by one thread, its operands in that core's cache), not each
  // transform and GEMM among them: in wasm every parallel step hands work to web workers,
  // which costs more than a small GEMM. U is packed at prepare time; if this run's W is
  // another buffer than the constant it was prepared with (no plan does that), U is
  // transformed here.
  void winograd(const ConvArgs& a, const float* x, const float* w, bool packed, float* y,
                float* copy, float* v, float* products, float* work) {
    const int64_t cg = a.c_in_group(), mg = a.c_out_group();
    parallel_ranges(threads_, a.c_in, [&](int64_t c0, int64_t c1) {
      conv_windows_fill_f32(wino_.fill, wino_.windows, x, c0, c1, copy);
    });
    std::vector<float> u_run(packed ? 0 : static_cast<size_t>(16 * mg * cg));
    const float* u = u_run.data();
    const WinogradSlots slots = winograd_slots(a);
    const int64_t blocks = (wino_.th + wino_rows_ - 1) / wino_rows_;
    for (int64_t grp = 0; grp < a.group; ++grp) {
      if (!packed) conv_winograd_weights(a, w, grp, u_run.data());
      group_epilogue_ = epilogue_;
      group_epilogue_.shift(grp * mg, 0);
      const Epilogue* post_ops = group_epilogue_.active() ? &group_epilogue_ : nullptr;
      const float* group_copy = copy + grp * cg * wino_.windows.channel;
      WinogradExact exact;
      exact.a = &a;
      exact.x = x + grp * cg * a.in_size();
      exact.w = w + grp * mg * cg * 9;  // (W stays: constants_copied)
      parallel_parts(threads_, wino_parts_, [&](int64_t part) {
        const size_t at = static_cast<size_t>(part);
        float* pv = v + at * slots.v;
        float* pproducts = products + at * slots.products;
        float* pwork = work + at * slots.work;
        for (int64_t b = blocks * part / wino_parts_; b < blocks * (part + 1) / wino_parts_; ++b)
          winograd_block(a, u, packed, grp, group_copy, post_ops, exact, b * wino_rows_, pv,
                         pproducts, pwork, y);
      });
    }
  }

  // One block of tile rows [ty0, ty0 + wino_rows_) of group `grp`, on the calling thread.
  void winograd_block(const ConvArgs& a, const float* u, bool packed, int64_t grp,
                      const float* group_copy, const Epilogue* post_ops, const WinogradExact& exact,
                      int64_t ty0, float* v, float* products, float* work, float* y) const {
    const int64_t cg = a.c_in_group(), mg = a.c_out_group(), p = a.out_size();
    const int64_t ty1 = std::min(wino_.th, ty0 + wino_rows_), tb = (ty1 - ty0) * wino_.twp;
    conv_winograd_input_f32(wino_, group_copy, 0, cg, ty0, ty1, v);
    for (int64_t xi = 0; xi < 16; ++xi) {
      GemmF32 g;
      g.a = packed ? nullptr : u + xi * mg * cg;
      g.a_rs = cg;
      g.a_cs = 1;
      g.a_packed = packed ? &w_packs()[static_cast<size_t>(grp * 16 + xi)] : nullptr;
      g.b = v + xi * cg * tb;
      g.b_rs = tb;
      g.b_cs = 1;
      g.c = products + xi * mg * tb;
      g.c_rs = tb;
      g.c_cs = 1;
      g.m = mg;
      g.n = tb;
      g.k = cg;
      gemm_f32(g, 1, work);
    }
    conv_winograd_output_f32(wino_, products, 0, mg, ty0, ty1, post_ops, exact, y + grp * mg * p);
  }

  // Per group: columns = W_g^T [Mg*kernel x Cg] @ X_g [Cg x in], added into Y (which starts
  // as the bias) by col2im, a chunk of input rows at a time; then the post-ops.
  void conv_transpose(const ConvArgs& a, const float* x, const float* w, bool packed, float* y,
                      float* col, float* work) {
    const int64_t cg = a.c_in_group(), mg = a.c_out_group(), mk = mg * a.kernel_size();
    const int64_t pin = a.in_size(), rows = a.in[0] * a.in[1], iw = a.in[2], p = a.out_size();
    for (int64_t m = 0; m < a.c_out; ++m) {
      const float b = a.has_bias ? a.b[a.b_offset + m * a.b_stride] : 0.0f;
      std::fill(y + m * p, y + (m + 1) * p, b);
    }
    for (int64_t grp = 0; grp < a.group; ++grp) {
      for (int64_t r0 = 0; r0 < rows; r0 += chunk_rows_) {
        const int64_t r1 = std::min(rows, r0 + chunk_rows_), cols = (r1 - r0) * iw;
        GemmF32 g;
        g.a = packed ? nullptr : w + grp * cg * mk;
        g.a_rs = 1;
        g.a_cs = mk;
        g.a_packed = packed ? &w_packs()[static_cast<size_t>(grp)] : nullptr;
        g.b = x + grp * cg * pin + r0 * iw;
        g.b_rs = pin;
        g.b_cs = 1;
        g.c = col;
        g.c_rs = cols;
        g.c_cs = 1;
        g.m = mk;
        g.n = cols;
        g.k = cg;
        gemm_f32(g, threads_, work);
        conv_col2im_add_f32(a, col, r0, r1, y + grp * mg * p);
      }
    }
    epilogue_apply_f32(epilogue_, y, p, a.c_out, p);
  }

  const ExternCall& call_;
  int threads_;
  Path path_ = Path::BiasOnly;
  bool fused_ = true;  // post-ops per block (else after the op, by the reference walk)
  int64_t chunk_rows_ = 0;
  ConvWinograd wino_;       // Winograd
  int64_t wino_rows_ = 0;   // tile rows per block
  int64_t wino_parts_ = 1;  // blocks split into this many parts, one per thread
  ConvWindows windows_;     // Windowed
  bool gapless_ = false;    // its GEMM's columns are the output positions (no gaps: 1-D)
  Epilogue epilogue_, group_epilogue_;   // of the image, of the group being computed
  const float* weight_ = nullptr;        // W's buffer when it is a plan constant
  bool w_packed_ = false;                // packed_w_ holds W
  bool pads_ = false;                    // a Conv with padding
  bool w_nonfinite_ = false;             // its constant W holds an infinity or NaN
  std::vector<PackedOperand> packed_w_;  // per group (per group and point for Winograd)
  SharedPanels shared_w_;                // or the store's (w_packs)
  size_t adopted_ = 0;                   // packed_w_ came from the plan
  size_t scratch_floats_ = 0;
  Scratch scratch_;
};

}  // namespace

std::unique_ptr<PreparedExtern> prepare_portable_conv(const ExternCall& call,
                                                      const std::vector<ExternBuffer>& constants,
                                                      const std::vector<PackedInput>& packed,
                                                      int threads, PackedStore* store) {
  check_chain_epilogue(call);
  return std::make_unique<PortableConv>(call, constants, packed, threads, store);
}

}  // namespace ferrite
