// The portable Conv's paths one by one (conv_f32.h): Winograd, windows and im2col implicit
// GEMMs, 1x1, depthwise, col2im, each geometry checked to take its path, against the
// reference on every SIMD target with the weights packed or not, one and two threads; packed
// weights run with their buffer freed; and the post-ops fused on every path.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <utility>

#include "tests/unit/runtime/conv_cases.h"
#include "tests/unit/runtime/extern_runs.h"

namespace ferrite {
namespace {

using namespace conv_cases;  // NOLINT: the shared cases of these tests

// The portable implementation `g` is prepared with as a session prepares it (W and B
// constants): PortableConv's path.
std::string portable_path(const Geometry& g, std::mt19937& rng) {
  Operand x = random_dense(g.x_dims(), rng), w = random_dense(g.w_dims(), rng);
  Operand b = random_dense({g.m}, rng), y = dense(g.y_dims(), std::vector<float>(1));
  std::vector<Operand*> ins{&x, &w};
  if (g.bias) ins.push_back(&b);
  std::vector<ExternBuffer> constants(ins.size());
  for (size_t i = 1; i < ins.size(); ++i) constants[i] = ins[i]->buffer();
  return make_backend("portable")
      ->prepare_extern(make_call(g, ins, y), constants)
      ->implementation();
}

// The call of a geometry on x, w, b into y (filled with `fill`), the reference's output,
// and the portable implementation prepared with W and B constants, as a session prepares it.
struct PreparedConv {
  ExternCall call;
  std::vector<ExternBuffer> in;
  ExternBuffer out;
  std::vector<float> want;
  std::unique_ptr<PreparedExtern> prepared;

  PreparedConv(const Geometry& g, Operand* x, Operand* w, Operand* b, Operand* y, float fill)
      : call(make_call(g, {x, w, b}, *y)), in{x->buffer(), w->buffer(), b->buffer()} {
    out = y->buffer();
    run_reference_extern(call, in.data(), &out);
    want = y->data;
    prepared = make_backend("portable")->prepare_extern(call, {{}, in[1], in[2]});
    std::fill(y->data.begin(), y->data.end(), fill);
  }
};

TEST(Conv, WinogradMatchesReference) {
  std::mt19937 rng(5);
  // Odd outputs (tiles past the edge) and a batch; two groups of 8 channels without padding;
  // 64 channels on 31 x 31: tile rows in several blocks; 128 channels on 7 x 7: the
  // transformed weights outgrow a block, which then takes every tile row. Tile rows 9, 4, 16
  // and 4 tiles wide: the transforms' vectors of 4, 8 and 16 lanes where the target has them.
  const Geometry cases[] = {
      conv2d(2, 16, 24, 1, {13, 17}, 3, 1, 1, 1), conv2d(1, 16, 16, 2, {10, 9}, 3, 1, 1, 0),
      conv2d(1, 64, 64, 1, {31, 31}, 3, 1, 1, 1), conv2d(1, 128, 128, 1, {7, 7}, 3, 1, 1, 1)};
  for (const Geometry& g : cases) {
    SCOPED_TRACE(g.text());
    EXPECT_EQ(portable_path(g, rng), "winograd 2x2 3x3");
    check_geometry(g, rng, false, false);
    if (HasFatalFailure()) return;
    // Run with W in another buffer than the one it was prepared with: U transformed per run.
    Operand x = random_dense(g.x_dims(), rng), w = random_dense(g.w_dims(), rng);
    Operand b = random_dense({g.m}, rng);
    Operand y = dense(g.y_dims(), std::vector<float>(product(g.y_dims()), NAN));
    const ExternCall call = make_call(g, {&x, &w, &b}, y);
    Operand w_elsewhere = w;
    std::vector<ExternBuffer> in{x.buffer(), w.buffer(), b.buffer()};
    const std::vector<ExternBuffer> constants{{}, w.buffer(), b.buffer()};
    ExternBuffer out = y.buffer();
    run_reference_extern(call, in.data(), &out);
    const std::vector<float> want = y.data;
    auto prepared = make_backend("portable")->prepare_extern(call, constants);
    in[1] = w_elsewhere.buffer();
    std::fill(y.data.begin(), y.data.end(), NAN);
    prepared->run(in.data(), &out);
    const double tol = 1e-4 * max_abs(want);
    for (size_t i = 0; i < want.size(); ++i)
      ASSERT_NEAR(y.data[i], want[i], tol) << "W elsewhere, at " << i;
  }
}

TEST(Conv, WinogradGivesTheExactSumNextToNonFiniteValues) {
  // The transforms mix a 4x4 patch, so an infinity or NaN there (or an overflow in them)
  // makes every output of its tile NaN, also those whose own 3x3 window is finite; those
  // come out as the exact sum instead. Infinities and a NaN in X, a value whose products
  // overflow, and then an infinity in W.
  std::mt19937 rng(23);
  const Geometry g = conv2d(1, 16, 16, 1, {12, 13}, 3, 1, 1, 1);
  for (int w_inf = 0; w_inf < 2; ++w_inf) {
    SCOPED_TRACE(w_inf ? "an infinity in W" : "non-finite values in X");
    Operand x = random_dense(g.x_dims(), rng), w = random_dense(g.w_dims(), rng);
    Operand b = random_dense({g.m}, rng);
    x.data[5 * 13 + 6] = INFINITY;                       // channel 0, (5, 6)
    x.data[3 * 156 + 11 * 13 + 0] = -INFINITY;           // channel 3, the bottom-left corner
    x.data[7 * 156 + 2 * 13 + 9] = NAN;                  // channel 7, (2, 9)
    x.data[9 * 156 + 8 * 13 + 3] = 3e37f;                // its products overflow the transform
    if (w_inf) w.data[(4 * 16 + 2) * 9 + 4] = INFINITY;  // output 4, input 2, the center
    Operand y = dense(g.y_dims(), std::vector<float>(product(g.y_dims()), 0));
    PreparedConv p(g, &x, &w, &b, &y, 0.0f);
    EXPECT_EQ(p.prepared->implementation(), "winograd 2x2 3x3");
    p.prepared->run(p.in.data(), &p.out);
    const std::vector<float>& want = p.want;
    size_t finite = 0;
    for (size_t i = 0; i < want.size(); ++i) {
      if (std::isnan(want[i])) {
        ASSERT_TRUE(std::isnan(y.data[i])) << "at " << i << ": " << y.data[i];
      } else if (std::isinf(want[i])) {
        ASSERT_EQ(y.data[i], want[i]) << "at " << i;
      } else {
        ++finite;
        ASSERT_NEAR(y.data[i], want[i], 1e-4 * std::max(1.0, std::fabs(double{want[i]})) + 1e-3)
            << "at " << i;
      }
    }
    EXPECT_GT(finite, want.size() / 2);  // most windows hold none of them
  }
}

// The portable paths multiply the padding's zeros too; 0 times an infinite or NaN weight is
// NaN where the reference adds no term for a padded tap: those outputs come out as the
// reference's (conv_padded_nan_f32.h), with W a constant (kept, not freed) or given per run.
// im2col, strided im2col, 1x1 with padding, depthwise, and a 3-D convolution padded past its
// kernel (the fuzz finding diff_conv_padded_nan_957bb6768a).
TEST(Conv, PaddedTapsAddNoTermForNonFiniteWeights) {
  std::mt19937 rng(29);
  Geometry three_d = conv2d(2, 3, 4, 1, {2, 3}, 2, 1, 1, 0);
  three_d.in = {2, 3, 4};
  three_d.kernel = {2, 3, 4};
  three_d.stride = three_d.dilation = {1, 1, 1};
  three_d.pad_begin = {1, 0, 0};
  three_d.pad_end = {3, 0, 0};
  const Geometry cases[] = {
      conv2d(1, 4, 6, 1, {9, 9}, 3, 1, 1, 1), conv2d(1, 4, 6, 1, {9, 9}, 3, 2, 1, 1),
      conv2d(1, 8, 6, 2, {5, 7}, 1, 1, 1, 1), conv2d(1, 6, 6, 6, {9, 9}, 3, 1, 1, 1), three_d};
  for (const Geometry& g : cases) {
    for (int runtime_w = 0; runtime_w < 2; ++runtime_w) {
      SCOPED_TRACE(g.text() + (runtime_w ? ", W per run" : ", W constant"));
      Operand x = random_dense(g.x_dims(), rng), w = random_dense(g.w_dims(), rng);
      Operand b = random_dense({g.m}, rng);
      w.data.front() = NAN;  // output 0's first tap: padding for the first outputs
      w.data.back() = INFINITY;
      Operand y = dense(g.y_dims(), std::vector<float>(product(g.y_dims()), 0));
      PreparedConv p(g, &x, &w, &b, &y, 0.0f);
      if (runtime_w) p.prepared = make_backend("portable")->prepare_extern(p.call);
      if (!runtime_w) {
        EXPECT_TRUE(p.prepared->constants_copied().empty());
      }
      p.prepared->run(p.in.data(), &p.out);
      size_t finite = 0;
      for (size_t i = 0; i < p.want.size(); ++i) {
        const float want = p.want[i];
        if (!std::isfinite(want)) {
          ASSERT_TRUE(std::isnan(want) ? std::isnan(y.data[i]) : y.data[i] == want)
              << "at " << i << ": " << y.data[i] << ", the reference " << want;
        } else {
          ++finite;
          ASSERT_NEAR(y.data[i], want, 1e-4 * std::max(1.0, std::fabs(double{want}))) << "at " << i;
        }
      }
      EXPECT_GT(finite, 0u);
    }
  }
}

TEST(Conv, PackedWeightsRunWithoutTheirBuffer) {
  // Prepared with W constant, the paths that pack it say so (constants_copied) and run
  // with W's buffer freed, as a Session runs them; the depthwise loop reads W itself, and
  // Winograd (the first) its exact outputs.
  std::mt19937 rng(17);
  Geometry transpose = conv2d(1, 8, 6, 2, {7, 6}, 3, 2, 1, 1);
  transpose.transpose = true;
  const std::pair<Geometry, bool> cases[] = {{conv2d(1, 16, 16, 1, {9, 9}, 3, 1, 1, 1), false},
                                             {conv2d(1, 4, 6, 1, {9, 9}, 3, 2, 1, 1), true},
                                             {conv2d(1, 8, 6, 2, {5, 7}, 1, 1, 1, 0), true},
                                             {transpose, true},
                                             {conv2d(1, 6, 6, 6, {9, 9}, 3, 1, 1, 1), false}};
  for (const auto& [g, copies] : cases) {
    SCOPED_TRACE(g.text());
    Operand x = random_dense(g.x_dims(), rng), w = random_dense(g.w_dims(), rng);
    Operand b = random_dense({g.m}, rng);
    Operand y = dense(g.y_dims(), std::vector<float>(product(g.y_dims()), NAN));
    PreparedConv p(g, &x, &w, &b, &y, NAN);
    EXPECT_EQ(p.prepared->constants_copied(),
              copies ? std::vector<size_t>{1} : std::vector<size_t>{});
    if (!copies) continue;
    p.in[1].data = nullptr;
    p.prepared->run(p.in.data(), &p.out);
    const std::vector<float>& want = p.want;
    const double tol = 1e-4 * max_abs(want);
    for (size_t i = 0; i < want.size(); ++i) ASSERT_NEAR(y.data[i], want[i], tol) << "at " << i;
  }
}

TEST(Conv, FastPathsAndChunksMatchReference) {
  std::mt19937 rng(7);
  // K in 3 blocks; small M: im2col rows copied from the windows layout (padded, dilated).
  Geometry windows = conv2d(1, 64, 64, 1, {31, 31}, 3, 1, 2, 2);
  // Large M over short rows: the columns between output rows would cost more than packing
  // im2col straight from X (K in 3 blocks).
  Geometry im2col = conv2d(1, 64, 256, 1, {14, 14}, 3, 1, 2, 0);
  Geometry pointwise = conv2d(2, 32, 48, 1, {20, 20}, 1, 1, 1, 0);
  Geometry pointwise_groups = conv2d(1, 32, 16, 2, {9, 11}, 1, 1, 1, 0);
  Geometry depthwise = conv2d(2, 16, 16, 16, {17, 19}, 3, 1, 1, 1);
  Geometry depthwise_strided = conv2d(1, 8, 8, 8, {17, 19}, 3, 2, 2, 2);
  Geometry depthwise_multiplier = conv2d(1, 8, 16, 8, {9, 9}, 3, 1, 1, 1);
  Geometry stem = conv2d(1, 3, 16, 1, {40, 40}, 7, 2, 1, 3);     // windows over 2 x 2 phases
  Geometry dilated = conv2d(2, 6, 10, 2, {15, 13}, 3, 3, 2, 2);  // phases of dilated taps
  Geometry strided_1x1 = conv2d(1, 16, 24, 1, {15, 15}, 1, 2, 1, 0);
  Geometry conv_1d = conv1d(8, 12, 1, 300, 5, 1, 2, 2);             // windows without gaps
  Geometry transpose = conv2d(1, 16, 16, 1, {40, 40}, 4, 2, 1, 1);  // col2im in 2 chunks
  transpose.transpose = true;
  const std::pair<Geometry, const char*> cases[] = {{windows, "gemm windows"},
                                                    {im2col, "gemm im2col"},
                                                    {pointwise, "gemm 1x1"},
                                                    {pointwise_groups, "gemm 1x1"},
                                                    {depthwise, "depthwise"},
                                                    {depthwise_strided, "depthwise"},
                                                    {depthwise_multiplier, "gemm windows"},
                                                    {stem, "gemm windows"},
                                                    {dilated, "gemm windows"},
                                                    {strided_1x1, "gemm im2col"},
                                                    {conv_1d, "gemm windows"},
                                                    {transpose, "gemm col2im"}};
  for (const auto& c : cases) {
    SCOPED_TRACE(c.first.text());
    EXPECT_EQ(portable_path(c.first, rng), c.second);
    check_geometry(c.first, rng, false, false);
    if (HasFatalFailure()) return;
  }
}

// Post-ops on `g`'s output: a per-channel Add, an activation, a full residual Mul, a scalar
// Sub, and (with `spatial`) a Max with an operand broadcast along all but one spatial dim,
// whose strides do not flatten (then the post-ops run after the op). Portable against the
// reference on every SIMD target, weights constant, one and two threads bitwise equal.
void check_fused_post_ops(const Geometry& g, PostOpKind activation, bool spatial,
                          std::mt19937& rng) {
  SCOPED_TRACE(g.text() + " then " + post_op_name(activation) + (spatial ? " + spatial" : ""));
  const Dims yd = g.y_dims();
  Operand x = random_dense(g.x_dims(), rng), w = random_dense(g.w_dims(), rng);
  Operand b = random_dense({g.m}, rng), chan = random_dense({g.m}, rng);
  Operand res = random_dense(yd, rng), scalar = random_dense({1}, rng);
  Operand row = random_dense({yd[yd.size() - 2]}, rng);
  Operand y = dense(yd, std::vector<float>(static_cast<size_t>(product(yd)), NAN));
  std::vector<Operand*> ins{&x, &w};
  if (g.bias) ins.push_back(&b);
  ExternCall call = make_call(g, ins, y);
  auto operand = [&](Operand* o, Dims strides) {
    o->ref = TensorRef{0, yd, std::move(strides), 0};
    ins.push_back(o);
    call.inputs.push_back(o->ref);
    return static_cast<int32_t>(call.inputs.size() - 1);
  };
  Dims per_channel(yd.size(), 0), per_row(yd.size(), 0);
  per_channel[1] = 1;
  per_row[yd.size() - 2] = 1;
  set_post_ops(&call, std::vector<PostOp>{
                          PostOp{PostOpKind::Add, 0, 0, operand(&chan, per_channel)},
                          PostOp{activation, 0.1f, 0.6f},
                          PostOp{PostOpKind::Mul, 0, 0, operand(&res, dense_strides(yd))},
                          PostOp{PostOpKind::Sub, 0, 0, operand(&scalar, Dims(yd.size(), 0))}});
  if (spatial) append_post_op(&call, PostOp{PostOpKind::Max, 0, 0, operand(&row, per_row)});
  std::vector<ExternBuffer> bufs;
  for (Operand* o : ins) bufs.push_back(o->buffer());
  ExternBuffer out = y.buffer();
  run_reference_extern(call, bufs.data(), &out);
  const std::vector<float> want = y.data;
  const double tol = 1e-4 * max_abs(want);
  testing::for_each_simd_target([&] {
    run_with_weights(call, bufs, &y, 1);
    for (size_t i = 0; i < want.size(); ++i) ASSERT_NEAR(y.data[i], want[i], tol) << "at " << i;
    const std::vector<float> one = y.data;
    run_with_weights(call, bufs, &y, 2);
    ASSERT_EQ(std::memcmp(one.data(), y.data.data(), one.size() * sizeof(float)), 0)
        << "two threads differ from one";
    std::fill(y.data.begin(), y.data.end(), NAN);
    run_backend_extern("portable", call, bufs.data(), &out);
    for (size_t i = 0; i < want.size(); ++i) ASSERT_NEAR(y.data[i], want[i], tol) << "at " << i;
  });
}

TEST(Conv, PostOpsFusedOnEveryPath) {
  std::mt19937 rng(11);
  Geometry implicit = conv2d(2, 5, 14, 1, {9, 11}, 3, 1, 1, 1);  // tile remainders
  Geometry winograd = conv2d(2, 8, 12, 1, {9, 11}, 3, 1, 1, 1);
  Geometry strided = conv2d(1, 4, 8, 2, {13, 10}, 3, 2, 1, 1);
  Geometry pointwise = conv2d(2, 16, 13, 1, {7, 9}, 1, 1, 1, 0);
  Geometry depthwise = conv2d(2, 6, 6, 6, {11, 13}, 3, 1, 1, 1);
  Geometry depthwise_s2 = conv2d(1, 5, 5, 5, {12, 9}, 3, 2, 2, 1);
  Geometry transpose = conv2d(1, 6, 4, 2, {5, 6}, 3, 2, 1, 1);
  transpose.transpose = true;
  Geometry bias_only = conv1d(0, 3, 1, 7, 3, 1, 1, 1);  // no input channels: an empty sum
  bias_only.bias = true;
  for (const Geometry& g :
       {implicit, winograd, strided, pointwise, depthwise, depthwise_s2, transpose, bias_only}) {
    for (PostOpKind act : {PostOpKind::Relu, PostOpKind::GeluErf, PostOpKind::Clip})
      check_fused_post_ops(g, act, false, rng);
    check_fused_post_ops(g, PostOpKind::Sigmoid, true, rng);
    if (HasFatalFailure()) return;
  }
}

// A depthwise convolution whose epilogue is unary post-ops that fit in registers (Relu,
// Clip, LeakyRelu, Linear) applies them to its accumulators, whole vectors past the row's
// end included; the values are the reference's, NaN and infinities among the inputs too.
TEST(Conv, UnaryEpilogueOnDepthwiseRegisters) {
  std::mt19937 rng(5);
  Geometry narrow = conv2d(1, 6, 6, 6, {11, 13}, 3, 1, 1, 1);
  Geometry wide = conv2d(2, 3, 3, 3, {4, 70}, 3, 1, 1, 1);  // four-vector tiles and a tail
  Geometry strided = conv2d(1, 5, 5, 5, {12, 9}, 3, 2, 2, 1);
  for (const Geometry& g : {narrow, wide, strided}) {
    for (const PostOp& op :
         {PostOp{PostOpKind::Relu}, PostOp{PostOpKind::Clip, 0, 6},
          PostOp{PostOpKind::LeakyRelu, 0.1f}, PostOp{PostOpKind::Linear, 0.5f, 0.25f}}) {
      SCOPED_TRACE(g.text() + " then " + post_op_name(op.kind));
      Operand x = random_dense(g.x_dims(), rng), w = random_dense(g.w_dims(), rng);
      for (size_t i = 0; i < x.data.size(); i += 37)
        x.data[i] = i % 3 == 0 ? NAN : i % 3 == 1 ? INFINITY : -INFINITY;
      for (float& v : w.data) v *= 8;  // past Clip's bounds
      const Dims yd = g.y_dims();
      Operand y = dense(yd, std::vector<float>(static_cast<size_t>(product(yd)), 0.0f));
      std::vector<Operand*> ins{&x, &w};
      ExternCall call = make_call(g, ins, y);
      set_post_ops(&call, std::vector<PostOp>{op});
      std::vector<ExternBuffer> bufs;
      for (Operand* o : ins) bufs.push_back(o->buffer());
      ExternBuffer out = y.buffer();
      run_reference_extern(call, bufs.data(), &out);
      const std::vector<float> want = y.data;
      testing::for_each_simd_target([&] {
        run_with_weights(call, bufs, &y, 1);
        for (size_t i = 0; i < want.size(); ++i) {
          if (!std::isfinite(want[i])) {
            ASSERT_EQ(std::isnan(y.data[i]), std::isnan(want[i])) << "at " << i;
            if (!std::isnan(want[i])) {
              ASSERT_EQ(y.data[i], want[i]) << "at " << i;
            }
          } else {
            ASSERT_NEAR(y.data[i], want[i], 1e-4 * std::max(1.0f, std::fabs(want[i])))
                << "at " << i;
          }
        }
      });
      if (HasFatalFailure()) return;
    }
  }
}

}  // namespace
}  // namespace ferrite
