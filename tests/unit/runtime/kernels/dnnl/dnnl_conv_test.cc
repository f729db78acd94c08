// The Conv and ConvTranspose externs on oneDNN against the reference: random geometries
// (1-D to 3-D, groups, depthwise, strides, dilations, asymmetric pads, bias or not, batch > 1)
// with weights and bias prepacked as plan constants or not, operands stored channels-first,
// channels-last or scattered, post-op chains with per-channel, scalar and residual operands,
// thread counts, negative ConvTranspose pads (a border oneDNN does not compute), the calls
// it refuses with the jit backend's fallback, and the run-time operand checks.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "compiler/plan/error.h"
#include "jit/jit_backend.h"
#include "runtime/tensor.h"
#include "tests/unit/runtime/conv_geometry.h"
#include "tests/unit/runtime/kernels/dnnl/dnnl_test_support.h"

namespace ferrite {
namespace dnnl_test {
namespace {

using conv_geometry::Geometry;
using conv_geometry::random_geometry;

// How an operand is stored.
enum class Storage { ChannelsFirst, ChannelsLast, Scattered };

std::vector<int> channels_last(size_t rank) {
  std::vector<int> order{0};
  for (size_t d = 2; d < rank; ++d) order.push_back(static_cast<int>(d));
  order.push_back(1);
  return order;
}

Operand stored(const Dims& shape, Storage s, std::mt19937& rng, float lo = -1, float hi = 1) {
  std::vector<int> order = identity_order(shape.size());
  if (s == Storage::ChannelsLast) order = channels_last(shape.size());
  if (s == Storage::Scattered) std::shuffle(order.begin(), order.end(), rng);
  return make_operand(shape, order, {}, s == Storage::ChannelsFirst ? 0 : 3, rng, lo, hi);
}

struct ConvCase {
  Geometry g;
  ExternCall call;
  std::vector<Operand> ins;  // X, W, optional B, then post-op operands
  Operand out;

  void add_binary(PostOpKind kind, Operand t) {
    append_post_op(&call, PostOp{kind, 0, 0, static_cast<int32_t>(ins.size())});
    call.inputs.push_back(t.ref);
    ins.push_back(std::move(t));
  }
  // The weights and bias (and post-op operands) as plan constants.
  std::vector<size_t> constants() const {
    std::vector<size_t> c;
    for (size_t i = 1; i < ins.size(); ++i) c.push_back(i);
    return c;
  }
};

ConvCase make_conv(const Geometry& g, Storage xs, Storage ys, std::mt19937& rng) {
  ConvCase c;
  c.g = g;
  c.ins.push_back(stored(g.x_dims(), xs, rng));
  c.ins.push_back(stored(g.w_dims(), Storage::ChannelsFirst, rng));
  if (g.bias) c.ins.push_back(dense({g.m}, rng));
  c.out = stored(g.y_dims(), ys, rng);
  encode_extern(g.attrs(), &c.call);
  for (const Operand& o : c.ins) c.call.inputs.push_back(o.ref);
  c.call.outputs = {c.out.ref};
  return c;
}

Geometry conv2d(int64_t n, int64_t c, int64_t m, int64_t group, Dims in, int64_t kernel,
                int64_t stride, int64_t pad) {
  return conv_geometry::conv2d(n, c, m, group, std::move(in), kernel, stride, 1, pad);
}

void check(const ConvCase& c, bool prepacked, double* worst = nullptr) {
  SCOPED_TRACE(c.g.text() + (prepacked ? " prepacked" : ""));
  const std::vector<float> want = run_reference(c.call, c.ins, c.out);
  const std::vector<float> got =
      run_dnnl(c.call, c.ins, c.out, prepacked ? c.constants() : std::vector<size_t>{});
  expect_close(got, want, c.g.tol(), "dnnl vs reference", worst);
}

TEST(DnnlConv, RandomGeometriesMatchReference) {
  std::mt19937 rng(42);
  const Storage storages[] = {Storage::ChannelsFirst, Storage::ChannelsLast, Storage::Scattered};
  double worst = 0;
  for (int i = 0; i < 160; ++i) {
    const Geometry g = random_geometry(rng, i % 2 == 1);
    const ConvCase c = make_conv(g, storages[i % 3], storages[(i / 3) % 3], rng);
    check(c, (i / 2) % 2 == 1, &worst);
    if (HasFatalFailure()) return;
  }
  RecordProperty("worst_relative_error", str_cat(worst));
}

TEST(DnnlConv, ModelShapesWithPostOps) {
  std::mt19937 rng(7);
  Geometry transpose = conv2d(1, 16, 8, 1, {12, 12}, 4, 2, 1);
  transpose.transpose = true;
  Geometry grouped_transpose = conv2d(2, 8, 12, 4, {5, 7}, 3, 2, 0);
  grouped_transpose.transpose = true;
  const Geometry geometries[] = {
      conv2d(1, 64, 64, 1, {20, 20}, 3, 1, 1),   // resnet body
      conv2d(2, 3, 16, 1, {33, 33}, 7, 2, 3),    // stem
      conv2d(1, 32, 32, 32, {17, 19}, 3, 2, 1),  // depthwise
      conv2d(1, 32, 48, 1, {14, 14}, 1, 1, 0),   // pointwise
      transpose,
      grouped_transpose,
  };
  double worst = 0;
  for (const Geometry& g : geometries) {
    const Dims y = g.y_dims();
    for (bool prepacked : {false, true}) {
      // bias + per-channel scale, relu6; a residual then swish; per-channel shift, gelu,
      // times a scalar, minus a channels-last residual.
      ConvCase a = make_conv(g, Storage::ChannelsFirst, Storage::ChannelsFirst, rng);
      a.add_binary(PostOpKind::Mul, broadcast_operand(y, 1, rng));
      append_post_op(&a.call, PostOp{PostOpKind::Clip, 0, 6});
      check(a, prepacked, &worst);
      ConvCase b = make_conv(g, Storage::ChannelsFirst, Storage::ChannelsFirst, rng);
      b.add_binary(PostOpKind::Add, dense(y, rng));
      append_post_op(&b.call, PostOp{PostOpKind::Silu});
      check(b, prepacked, &worst);
      ConvCase c = make_conv(g, Storage::ChannelsLast, Storage::ChannelsLast, rng);
      c.add_binary(PostOpKind::Sub, broadcast_operand(y, 1, rng));
      append_post_op(&c.call, PostOp{PostOpKind::GeluErf});
      c.add_binary(PostOpKind::Mul, broadcast_operand(y, -1, rng));
      c.add_binary(PostOpKind::Sub, stored(y, Storage::ChannelsLast, rng));
      check(c, prepacked, &worst);
      if (HasFatalFailure()) return;
    }
  }
  RecordProperty("worst_relative_error", str_cat(worst));
}

TEST(DnnlConv, EveryPostOpKind) {
  std::mt19937 rng(5);
  const Geometry g = conv2d(2, 8, 16, 1, {9, 9}, 3, 1, 1);
  const Dims y = g.y_dims();
  for (const PostOp& p : unary_post_ops()) {
    ConvCase c = make_conv(g, Storage::ChannelsFirst, Storage::ChannelsFirst, rng);
    set_post_ops(&c.call, std::vector<PostOp>{p});
    check(c, false);
  }
  for (PostOpKind kind : {PostOpKind::Add, PostOpKind::Sub, PostOpKind::Mul, PostOpKind::Div,
                          PostOpKind::Max, PostOpKind::Min}) {
    const float lo = kind == PostOpKind::Div ? 0.5f : -1.0f, hi = kind == PostOpKind::Div ? 2 : 1;
    ConvCase c = make_conv(g, Storage::ChannelsFirst, Storage::ChannelsFirst, rng);
    c.add_binary(kind, broadcast_operand(y, 1, rng, lo, hi));
    c.add_binary(kind, stored(y, Storage::Scattered, rng, lo, hi));
    check(c, true);
  }
}

TEST(DnnlConv, BroadcastOperandsAreCopied) {
  // Stride-0 views (an input expanded over the batch, a bias shared by every channel) are
  // reordered into dense scratch like any other layout.
  std::mt19937 rng(14);
  const Geometry g = conv2d(3, 8, 16, 1, {7, 7}, 3, 1, 1);
  ConvCase c = make_conv(g, Storage::ChannelsFirst, Storage::ChannelsFirst, rng);
  c.ins[0] = make_operand(g.x_dims(), identity_order(4), {true, false, false, false}, 0, rng);
  c.ins[2] = make_operand({g.m}, {0}, {true}, 0, rng);
  c.call.inputs[0] = c.ins[0].ref;
  c.call.inputs[2] = c.ins[2].ref;
  check(c, false);
  check(c, true);
}

TEST(DnnlConv, TakesTheFastKernels) {
  // Channels-last scratch around the primitive is what gets oneDNN's brgemm / jit kernels
  // (not im2col + GEMM) for channels-first operands.
  std::mt19937 rng(3);
  Geometry transpose = conv2d(1, 16, 16, 1, {10, 10}, 4, 2, 1);
  transpose.transpose = true;
  for (const Geometry& g : {conv2d(1, 64, 64, 1, {14, 14}, 3, 1, 1),
                            conv2d(1, 16, 16, 16, {14, 14}, 3, 1, 1), transpose}) {
    const ConvCase c = make_conv(g, Storage::ChannelsFirst, Storage::ChannelsFirst, rng);
    std::string impl;
    run_dnnl(c.call, c.ins, c.out, c.constants(), 1, &impl);
    EXPECT_EQ(impl.find("gemm:jit"), std::string::npos) << g.text() << ": " << impl;
  }
}

TEST(DnnlConv, WinogradForLarge3x3ConvolutionsWithTheResidualAsSum) {
  // 3x3 stride-1 convolutions with 32+ channels and a large output run on oneDNN's
  // Winograd kernels, activations reordered to and from its blocked layout around them, a
  // full-size residual Add turned into oneDNN's sum post-op (the residual copied into the
  // output first). Other binary post-ops keep the direct kernels. A 28x28 output takes
  // F(4x4, 3x3). Same error bound as the direct ones, and the same bits for any thread count.
  std::mt19937 rng(21);
  const Geometry g = conv2d(1, 64, 48, 1, {28, 28}, 3, 1, 1);
  const Dims y = g.y_dims();
  for (bool prepacked : {false, true}) {
    ConvCase residual = make_conv(g, Storage::ChannelsLast, Storage::ChannelsLast, rng);
    residual.add_binary(PostOpKind::Add, stored(y, Storage::ChannelsLast, rng));
    append_post_op(&residual.call, PostOp{PostOpKind::Relu});
    ConvCase plain = make_conv(g, Storage::ChannelsFirst, Storage::Scattered, rng);
    append_post_op(&plain.call, PostOp{PostOpKind::Relu});
    ConvCase scaled = make_conv(g, Storage::ChannelsLast, Storage::ChannelsLast, rng);
    scaled.add_binary(PostOpKind::Add, stored(y, Storage::ChannelsFirst, rng));
    scaled.add_binary(PostOpKind::Mul, broadcast_operand(y, 1, rng));
    for (const ConvCase* c : {&residual, &plain, &scaled}) {
      std::string impl;
      const std::vector<size_t> constants = prepacked ? c->constants() : std::vector<size_t>{};
      const std::vector<float> one = run_dnnl(c->call, c->ins, c->out, constants, 1, &impl);
      // oneDNN has Winograd kernels on AVX-512 only: capped at AVX2, all stay direct.
      EXPECT_EQ(impl.find("wino") != std::string::npos, c != &scaled && dnnl_has_avx512()) << impl;
      if (c != &scaled && dnnl_has_avx512()) {
        EXPECT_NE(impl.find("wino_4x3"), std::string::npos) << impl;
      }
      expect_close(one, run_reference(c->call, c->ins, c->out), c->g.tol(), "wino vs reference");
      const std::vector<float> two = run_dnnl(c->call, c->ins, c->out, constants, 2);
      ASSERT_EQ(one.size(), two.size());
      for (size_t i = 0; i < one.size(); ++i) ASSERT_EQ(one[i], two[i]) << i;
    }
  }
  // A small output stays on the direct kernels (too few tiles to gain).
  const ConvCase small = make_conv(conv2d(1, 64, 64, 1, {12, 12}, 3, 1, 1), Storage::ChannelsLast,
                                   Storage::ChannelsLast, rng);
  std::string impl;
  run_dnnl(small.call, small.ins, small.out, {}, 1, &impl);
  EXPECT_EQ(impl.find("wino"), std::string::npos) << impl;
}

TEST(DnnlConv, NonFiniteInputsGiveTheReferenceValues) {
  // Around an infinity or NaN in X, oneDNN's Winograd kernels make whole tiles NaN and its
  // fused relu makes NaN 0; those runs get the reference's values instead, with the
  // residual sum and relu after them (nonfinite_inputs.h). A Winograd convolution and a
  // grouped, strided, dilated direct one; W constant (its signs kept) or given at run time.
  // A W with an infinity: a constant one is refused (padded windows: oneDNN's AVX2 kernels
  // multiply the padding's zeros by it, 0 * inf = NaN, where the reference adds no term),
  // one given at run time makes that run a reference convolution.
  std::mt19937 rng(31);
  Geometry direct = conv_geometry::conv2d(2, 16, 12, 2, {13, 11}, 3, 2, 2, 1);
  const Geometry geometries[] = {conv2d(1, 64, 48, 1, {28, 28}, 3, 1, 1), direct};
  auto at = [](const Operand& o, const Dims& idx) {
    int64_t off = o.ref.offset;
    for (size_t e = 0; e < idx.size(); ++e) off += idx[e] * o.ref.strides[e];
    return static_cast<size_t>(off);
  };
  for (const Geometry& g : geometries) {
    for (int w_inf = 0; w_inf < 2; ++w_inf) {
      for (bool prepacked : {false, true}) {
        SCOPED_TRACE(
            str_cat(g.text(), w_inf ? ", an infinity in W" : "", prepacked ? ", constant" : ""));
        ConvCase c = make_conv(g, Storage::ChannelsLast, Storage::ChannelsLast, rng);
        if (&g == &geometries[1]) {  // W strided: its signs taken element by element
          c.ins[1] = stored(g.w_dims(), Storage::Scattered, rng);
          c.call.inputs[1] = c.ins[1].ref;
        }
        c.add_binary(PostOpKind::Add, stored(g.y_dims(), Storage::ChannelsLast, rng));
        const bool handled = !(w_inf && prepacked);
        if (handled) append_post_op(&c.call, PostOp{PostOpKind::Relu});
        Operand& x = c.ins[0];
        x.data[at(x, {0, 3, 10, 10})] = INFINITY;
        x.data[at(x, {0, 5, 0, 10})] = -INFINITY;  // an edge
        x.data[at(x, {0, 7, 12, 7})] = NAN;
        x.data[at(x, {0, 9, 12, 9})] = INFINITY;  // windows meeting the NaN's
        if (w_inf) c.ins[1].data[at(c.ins[1], {4, 2, 1, 1})] = -INFINITY;
        const std::vector<size_t> constants = prepacked ? c.constants() : std::vector<size_t>{};
        if (!handled) {
          std::vector<ExternBuffer> in = buffers(c.ins), known(c.ins.size());
          for (size_t i : constants) known[i] = in[i];
          EXPECT_EQ(prepare_dnnl_extern(c.call, known, 1), nullptr);
          continue;
        }
        std::string impl;
        const std::vector<float> got = run_dnnl(c.call, c.ins, c.out, constants, 1, &impl);
        const bool wino = &g == &geometries[0] && dnnl_has_avx512() && handled;
        EXPECT_EQ(impl.find("wino") != std::string::npos, wino) << impl;
        const std::vector<float> want = run_reference(c.call, c.ins, c.out);
        const size_t finite = expect_same_classes(got, want, c.g.tol());
        EXPECT_GT(finite, 0u);
      }
    }
  }
}

TEST(DnnlConv, SharesOneScratchArena) {
  // As in a Session: two calls whose channels-first operands are copied channels-last into
  // scratch, and their scratchpads, in one arena, refilled with junk before every run.
  std::mt19937 rng(13);
  ConvCase a = make_conv(conv2d(1, 16, 16, 1, {12, 12}, 3, 1, 1), Storage::ChannelsFirst,
                         Storage::ChannelsFirst, rng);
  a.add_binary(PostOpKind::Add, dense(a.g.y_dims(), rng));
  Geometry tg = conv2d(2, 8, 12, 2, {7, 9}, 3, 2, 1);
  tg.transpose = true;
  const ConvCase b = make_conv(tg, Storage::Scattered, Storage::ChannelsFirst, rng);
  std::vector<std::unique_ptr<PreparedExtern>> prepared;
  size_t bytes = 0;
  for (const ConvCase* c : {static_cast<const ConvCase*>(&a), &b}) {
    prepared.push_back(prepare_dnnl_extern(c->call, {}, 1));
    ASSERT_NE(prepared.back(), nullptr);
    EXPECT_GT(prepared.back()->scratch_bytes(), 0u);
    bytes = std::max(bytes, prepared.back()->scratch_bytes());
  }
  AlignedBytes arena = aligned_alloc_bytes(bytes);
  for (auto& p : prepared) p->bind_scratch(arena.get());
  for (int round = 0; round < 2; ++round)
    for (size_t i = 0; i < 2; ++i) {
      const ConvCase& c = i == 0 ? a : b;
      std::memset(arena.get(), 0xFF, bytes);  // NaNs
      const std::vector<ExternBuffer> in = buffers(c.ins);
      Operand out = c.out;
      const ExternBuffer o = out.buffer();
      prepared[i]->run(in.data(), &o);
      expect_close(gather(out), run_reference(c.call, c.ins, c.out), c.g.tol(), c.g.text());
    }
}

TEST(DnnlConv, ThreadCountsAgreeBitwise) {
  // oneDNN splits the output among threads, not the reduction (measured: bitwise equal).
  std::mt19937 rng(9);
  const Geometry g = conv2d(2, 32, 32, 1, {16, 16}, 3, 1, 1);
  ConvCase c = make_conv(g, Storage::ChannelsFirst, Storage::ChannelsFirst, rng);
  c.add_binary(PostOpKind::Add, dense(g.y_dims(), rng));
  append_post_op(&c.call, PostOp{PostOpKind::Relu});
  const std::vector<float> one = run_dnnl(c.call, c.ins, c.out, c.constants(), 1);
  const std::vector<float> two = run_dnnl(c.call, c.ins, c.out, c.constants(), 2);
  ASSERT_EQ(one.size(), two.size());
  for (size_t i = 0; i < one.size(); ++i) ASSERT_EQ(one[i], two[i]) << i;
}

TEST(DnnlConv, OneThreadCopiesGiveTheSameBits) {
  // On a busy machine the primitives run as copies made for one thread (dnnl_one_thread.h):
  // Winograd with the residual as sum, direct kernels with channels-first operands reordered
  // around them, depthwise, and a transposed convolution; every step gets its copy, and the
  // results are the bits of the primitives made for two threads.
  std::mt19937 rng(31);
  const Geometry wino = conv2d(1, 64, 48, 1, {28, 28}, 3, 1, 1);
  ConvCase residual = make_conv(wino, Storage::ChannelsLast, Storage::ChannelsLast, rng);
  residual.add_binary(PostOpKind::Add, stored(wino.y_dims(), Storage::ChannelsLast, rng));
  append_post_op(&residual.call, PostOp{PostOpKind::Relu});
  ConvCase first = make_conv(conv2d(2, 32, 32, 1, {16, 16}, 3, 1, 1), Storage::ChannelsFirst,
                             Storage::ChannelsFirst, rng);
  append_post_op(&first.call, PostOp{PostOpKind::Relu});
  const ConvCase depthwise = make_conv(conv2d(1, 96, 96, 96, {28, 28}, 3, 2, 1),
                                       Storage::ChannelsLast, Storage::ChannelsLast, rng);
  Geometry tg = conv2d(1, 32, 16, 1, {14, 14}, 3, 2, 1);
  tg.transpose = true;
  const ConvCase transposed = make_conv(tg, Storage::ChannelsFirst, Storage::ChannelsFirst, rng);
  const ConvCase* cases[] = {&residual, &first, &depthwise, &transposed};
  for (const ConvCase* c : cases) {
    for (bool prepacked : {false, true}) {
      const std::vector<size_t> constants = prepacked ? c->constants() : std::vector<size_t>{};
      size_t copies = 0;
      const std::vector<float> one =
          run_dnnl_one_thread(c->call, c->ins, c->out, constants, 2, &copies);
      EXPECT_GE(copies, c == &first || c == &transposed ? 3u : 1u) << c->g.text();
      const std::vector<float> two = run_dnnl(c->call, c->ins, c->out, constants, 2);
      ASSERT_EQ(one.size(), two.size());
      for (size_t i = 0; i < one.size(); ++i) ASSERT_EQ(one[i], two[i]) << c->g.text() << " " << i;
    }
  }
}

TEST(DnnlConv, NegativeTransposePadsGetTheBorderWithPostOps) {
  // ONNX's output_padding (a negative pad_end) and an output_shape past the full output (a
  // negative pad_begin): oneDNN computes the part its full output covers, the border gets
  // the bias and the post-ops; with every kind of post-op operand, 1-D to 3-D.
  std::mt19937 rng(4);
  Geometry a = conv2d(1, 4, 6, 2, {5, 6}, 3, 2, 1);
  a.transpose = true;
  a.pad_end = {0, -1};
  Geometry b = a;
  b.pad_begin = {-1, 1};
  b.pad_end = {1, -2};
  Geometry c = conv2d(2, 8, 8, 1, {4, 4}, 4, 2, 1);
  c.transpose = true;
  c.in = {3, 4, 4};
  c.kernel = {3, 4, 4};
  c.stride = {1, 2, 2};
  c.dilation = {1, 1, 1};  // dilated: gemm-based in oneDNN, refused with binary post-ops
  c.pad_begin = {-1, 1, 0};
  c.pad_end = {0, -1, -1};
  // 1-D: oneDNN's AVX2 kernels have only GEMM for it, refused with binary post-ops, so
  // unary ones here.
  Geometry d = conv2d(1, 3, 5, 1, {7}, 2, 3, 0);
  d.transpose = true;
  d.kernel = {2};
  d.stride = {3};
  d.dilation = {1};
  d.pad_begin = {-2};
  d.pad_end = {-1};
  for (const Geometry& g : {a, b, c, d}) {
    const Dims y = g.y_dims();
    for (bool prepacked : {false, true}) {
      ConvCase t = make_conv(g, Storage::ChannelsFirst, Storage::ChannelsLast, rng);
      if (g.k() > 1) {
        t.add_binary(PostOpKind::Add, broadcast_operand(y, 1, rng));
        append_post_op(&t.call, PostOp{PostOpKind::Tanh});
        t.add_binary(PostOpKind::Mul, broadcast_operand(y, -1, rng));
        t.add_binary(PostOpKind::Sub, stored(y, Storage::Scattered, rng));
      } else {
        set_post_ops(&t.call,
                     std::vector<PostOp>{{PostOpKind::Linear, -2, 0.5f}, {PostOpKind::Elu, 0.5f}});
      }
      check(t, prepacked);
      if (HasFatalFailure()) return;
    }
  }
}

TEST(DnnlConv, RefusedCallsFallBackInTheJitBackend) {
  jit::register_jit_backend();
  std::mt19937 rng(4);
  // A ConvTranspose output of bias only: pads crop the whole full output and extend it.
  Geometry all_border = conv2d(1, 2, 2, 1, {1, 1}, 1, 1, 0);
  all_border.transpose = true;
  all_border.pad_begin = {1, 1};
  all_border.pad_end = {-2, -2};
  ConvCase clip = make_conv(conv2d(1, 4, 6, 2, {5, 6}, 3, 2, 1), Storage::ChannelsFirst,
                            Storage::ChannelsFirst, rng);
  set_post_ops(&clip.call, std::vector<PostOp>{{PostOpKind::Clip, 1, 0}});  // min > max
  ConvCase border = make_conv(all_border, Storage::ChannelsFirst, Storage::ChannelsFirst, rng);
  set_post_ops(&border.call, std::vector<PostOp>{{PostOpKind::Sigmoid}});
  for (const ConvCase* c : {&clip, &border}) {
    SCOPED_TRACE(c->g.text());
    EXPECT_EQ(prepare_dnnl_extern(c->call, {}, 1), nullptr);
    auto p = make_backend("jit")->prepare_extern(c->call);
    EXPECT_EQ(dynamic_cast<DnnlExtern*>(p.get()), nullptr);
    const std::vector<ExternBuffer> in = buffers(c->ins);
    Operand out = c->out;
    const ExternBuffer o = out.buffer();
    p->run(in.data(), &o);
    expect_close(gather(out), run_reference(c->call, c->ins, c->out), c->g.tol(), "jit backend");
  }
}

TEST(DnnlConv, JitBackendTakesTheDnnlPath) {
  jit::register_jit_backend();
  std::mt19937 rng(1);
  const ConvCase c = make_conv(conv2d(1, 8, 8, 1, {6, 6}, 3, 1, 1), Storage::ChannelsFirst,
                               Storage::ChannelsFirst, rng);
  const std::vector<ExternBuffer> in = buffers(c.ins);
  auto p = make_backend("jit")->prepare_extern(c.call, in);  // every input a constant
  ASSERT_NE(dynamic_cast<DnnlExtern*>(p.get()), nullptr);
  Operand out = c.out;
  const ExternBuffer o = out.buffer();
  p->run(in.data(), &o);
  expect_close(gather(out), run_reference(c.call, c.ins, c.out), c.g.tol(), "jit backend");
}

TEST(DnnlConv, WeightsReorderedAtPrepareAreNotReadAgain) {
  // Constant W reordered into oneDNN's blocked layout at prepare: the call says so
  // (constants_copied), and runs with W's buffer gone (as a Session passes it once it has
  // freed it). The channels-last X, bound as it is, is not listed.
  std::mt19937 rng(9);
  const ConvCase c = make_conv(conv2d(1, 16, 32, 1, {10, 10}, 3, 1, 1), Storage::ChannelsLast,
                               Storage::ChannelsLast, rng);
  const std::vector<ExternBuffer> all = buffers(c.ins);
  std::vector<ExternBuffer> constants(all.size());
  for (size_t i : c.constants()) constants[i] = all[i];
  auto p = prepare_dnnl_extern(c.call, constants, 1);
  ASSERT_NE(p, nullptr);
  const std::vector<size_t> copied = p->constants_copied();
  ASSERT_NE(std::find(copied.begin(), copied.end(), size_t{1}), copied.end());
  EXPECT_EQ(std::find(copied.begin(), copied.end(), size_t{0}), copied.end());
  std::vector<ExternBuffer> in = all;
  for (size_t i : copied) in[i].data = nullptr;
  Operand out = c.out;
  const ExternBuffer o = out.buffer();
  p->run(in.data(), &o);
  expect_close(gather(out), run_reference(c.call, c.ins, c.out), c.g.tol(), c.g.text());
}

TEST(DnnlConv, BadBuffersGiveTheReferenceErrors) {
  std::mt19937 rng(6);
  ConvCase c = make_conv(conv2d(1, 4, 6, 2, {5, 5}, 3, 1, 1), Storage::ChannelsFirst,
                         Storage::ChannelsFirst, rng);
  c.add_binary(PostOpKind::Add, broadcast_operand(c.g.y_dims(), 1, rng));
  append_post_op(&c.call, PostOp{PostOpKind::Relu});  // X scanned first (nonfinite_inputs.h)
  auto p = prepare_dnnl_extern(c.call, {}, 1);
  ASSERT_NE(p, nullptr);
  std::vector<ExternBuffer> f64 = buffers(c.ins), small_w = f64, small_t = f64, f16 = f64;
  f64[0].dtype = DType::F64;
  f16[0].dtype = DType::F16;  // half the bytes: a scan taking it for float32 reads past it
  small_w[1].elements -= 1;
  small_t[3].elements = 2;
  expect_reference_errors(c.call, p.get(), ExternOp::Conv, c.out, {f64, f16, small_w, small_t});
  // Shapes the attributes contradict: refused when prepared, so the fallback reports them.
  ExternCall bad = c.call;
  bad.outputs[0].shape[3] = 4;
  EXPECT_EQ(prepare_dnnl_extern(bad, {}, 1), nullptr);
}

}  // namespace
}  // namespace dnnl_test
}  // namespace ferrite
