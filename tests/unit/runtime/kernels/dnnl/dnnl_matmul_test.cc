// The MatMul extern on oneDNN against the reference: random shapes (batch dims with
// broadcast operands, transposed and permuted operands, offsets, M or N = 1, K up to 1000,
// alpha), B prepacked as a plan constant or not, every post-op kind and chains of three with
// broadcast and full-size operands, thread counts, the calls it refuses (and the jit
// backend's fallback for them), and the run-time operand checks.
#include <gtest/gtest.h>

#include <cstdlib>
#include <numeric>

#include "compiler/plan/error.h"
#include "jit/jit_backend.h"
#include "tests/unit/runtime/kernels/dnnl/dnnl_test_support.h"

namespace ferrite {
namespace dnnl_test {
namespace {

// Matrix products here are float sums of K products of values in [-1, 1], which oneDNN adds
// in another order than the reference's k loop: both round, by up to about K * 2^-24 of the
// magnitudes summed. The bound, relative to max(1, |C|), grows as sqrt(K) (random rounding).
double tol_for(int64_t k) {
  return 1e-5 * std::sqrt(static_cast<double>(std::max<int64_t>(k, 4)));
}

struct MatMulCase {
  ExternCall call;
  std::vector<Operand> ins;  // A, B, then post-op operands
  Operand out;

  std::string text() const {
    std::string s = "A" + dims(call.inputs[0]) + " B" + dims(call.inputs[1]);
    for (const PostOp& p : call.post_ops) s += " " + post_op_text(p);
    return s;
  }
  static std::string dims(const TensorRef& r) {
    std::string s = "[";
    for (size_t d = 0; d < r.shape.size(); ++d)
      s += std::to_string(r.shape[d]) + ":" + std::to_string(r.strides[d]) + ",";
    return s + "]";
  }
  // Adds a post-op whose operand is `t`.
  void add_binary(PostOpKind kind, Operand t) {
    append_post_op(&call, PostOp{kind, 0, 0, static_cast<int32_t>(ins.size())});
    call.inputs.push_back(t.ref);
    call.inputs.back().buffer = static_cast<int32_t>(ins.size());
    ins.push_back(std::move(t));
  }
};

std::vector<int> matrix_transposed(size_t rank) {
  std::vector<int> order = identity_order(rank);
  std::swap(order[rank - 2], order[rank - 1]);
  return order;
}

// A MatMul over [batch..., m, k] x [batch..., k, n]; `a_bcast[d]` / `b_bcast[d]`: A or B is
// broadcast over batch dim d; orders as in make_operand.
MatMulCase make_matmul(const Dims& batch, int64_t m, int64_t k, int64_t n,
                       const std::vector<bool>& a_bcast, const std::vector<bool>& b_bcast,
                       const std::vector<int>& a_order, const std::vector<int>& b_order,
                       const std::vector<int>& c_order, double alpha, std::mt19937& rng) {
  MatMulCase c;
  auto shape = [&](int64_t r, int64_t col) {
    Dims s = batch;
    s.push_back(r);
    s.push_back(col);
    return s;
  };
  std::vector<bool> ab = a_bcast, bb = b_bcast;
  ab.resize(batch.size() + 2, false);
  bb.resize(batch.size() + 2, false);
  c.ins.push_back(make_operand(shape(m, k), a_order, ab, rng() % 3, rng));
  c.ins.push_back(make_operand(shape(k, n), b_order, bb, rng() % 3, rng));
  c.out = make_operand(shape(m, n), c_order, {}, rng() % 3, rng);
  c.call.op = ExternOp::MatMul;
  c.call.inputs = {c.ins[0].ref, c.ins[1].ref};
  c.call.inputs[0].buffer = 0;
  c.call.inputs[1].buffer = 1;
  c.call.outputs = {c.out.ref};
  if (alpha != 1) c.call.floats["alpha"] = alpha;
  return c;
}

MatMulCase plain_matmul(const Dims& batch, int64_t m, int64_t k, int64_t n, std::mt19937& rng) {
  const size_t r = batch.size() + 2;
  return make_matmul(batch, m, k, n, {}, {}, identity_order(r), identity_order(r),
                     identity_order(r), 1, rng);
}

// dnnl (B and the post-op operands as plan constants when `prepacked`) against the reference.
void check(const MatMulCase& c, bool prepacked, double tol, double* worst = nullptr) {
  SCOPED_TRACE(c.text() + (prepacked ? " prepacked" : ""));
  const std::vector<float> want = run_reference(c.call, c.ins, c.out);
  std::vector<size_t> constants;
  if (prepacked)
    for (size_t i = 1; i < c.ins.size(); ++i) constants.push_back(i);
  const std::vector<float> got = run_dnnl(c.call, c.ins, c.out, constants);
  expect_close(got, want, tol, "dnnl vs reference", worst);
}

TEST(DnnlMatMul, RandomShapesMatchReference) {
  SKIP_WITHOUT_DNNL_MATMUL();
  std::mt19937 rng(11);
  auto pick = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  const int64_t ks[] = {1, 3, 64, 300, 1000};
  double worst = 0;
  for (int i = 0; i < 60; ++i) {
    const size_t nb = static_cast<size_t>(pick(0, 2)), r = nb + 2;
    Dims batch;
    std::vector<bool> ab(nb, false), bb(nb, false);
    for (size_t d = 0; d < nb; ++d) {
      batch.push_back(pick(1, 3));
      const int64_t which = pick(0, 2);  // neither, A or B broadcast
      ab[d] = which == 1;
      bb[d] = which == 2;
    }
    auto dim = [&] { return pick(0, 3) == 0 ? 1 : pick(2, 70); };
    const int64_t m = dim(), n = dim(), k = ks[pick(0, 4)];
    auto order = [&](bool output) {
      const int64_t kind = pick(0, output ? 5 : 3);
      if (kind == 1) return matrix_transposed(r);
      std::vector<int> o = identity_order(r);
      if (kind == 2) std::shuffle(o.begin(), o.end(), rng);  // a permuted view
      return o;
    };
    const double alphas[] = {1, 0.5, -2};
    const MatMulCase c = make_matmul(batch, m, k, n, ab, bb, order(false), order(false),
                                     order(true), alphas[pick(0, 2)], rng);
    check(c, i % 2 == 1, tol_for(k), &worst);
    if (HasFatalFailure()) return;
  }
  RecordProperty("worst_relative_error", str_cat(worst));
}

TEST(DnnlMatMul, ExpandedRowsAndColumnsAreCopied) {
  SKIP_WITHOUT_DNNL_MATMUL();
  // A row of A repeated (stride 0 along M) and a column of B repeated (stride 0 along N):
  // copied into dense scratch around the matmul.
  std::mt19937 rng(15);
  const size_t r = 3;
  MatMulCase c = make_matmul({2}, 9, 40, 11, {}, {}, identity_order(r), identity_order(r),
                             identity_order(r), 1, rng);
  c.ins[0] = make_operand({2, 9, 40}, identity_order(r), {false, true, false}, 1, rng);
  c.ins[1] = make_operand({2, 40, 11}, matrix_transposed(r), {false, false, true}, 0, rng);
  c.call.inputs[0] = c.ins[0].ref;
  c.call.inputs[1] = c.ins[1].ref;
  check(c, false, tol_for(40));
  check(c, true, tol_for(40));
}

TEST(DnnlMatMul, StridedOperandsRunOnTheKernelOfDenseOnes) {
  SKIP_WITHOUT_DNNL_MATMUL();
  // The layouts models produce — x @ W^T, a weight shared by the batch, attention heads as
  // strided views of [S, H, D] with a leading batch dim of 1 and stride 0, as the compiler
  // emits them for Q @ K^T and P @ V — run on the same oneDNN kernel as dense operands of
  // the same shapes (brgemm on AVX-512), straight from the operands' strides.
  std::mt19937 rng(5);
  struct Layout {
    Dims batch;
    int64_t m, k, n;
    std::vector<bool> a_bcast, b_bcast;
    std::vector<int> a_order, b_order;
  };
  const std::vector<int> t = matrix_transposed(3);
  const Layout layouts[] = {
      {{4}, 33, 64, 48, {}, {true}, identity_order(3), t},
      {{3}, 20, 16, 20, {}, {}, {1, 0, 2}, {1, 2, 0}},
      {{1, 12}, 128, 64, 128, {true}, {true}, {0, 2, 1, 3}, {0, 3, 1, 2}},       // Q @ K^T
      {{1, 12}, 128, 128, 64, {true}, {true}, identity_order(4), {0, 2, 1, 3}},  // P @ V
      {{}, 1, 512, 100, {}, {}, identity_order(2), identity_order(2)},
  };
  for (const Layout& l : layouts) {
    const size_t r = l.batch.size() + 2;
    const MatMulCase c = make_matmul(l.batch, l.m, l.k, l.n, l.a_bcast, l.b_bcast, l.a_order,
                                     l.b_order, identity_order(r), 0.25, rng);
    const MatMulCase dense = make_matmul(l.batch, l.m, l.k, l.n, {}, {}, identity_order(r),
                                         identity_order(r), identity_order(r), 0.25, rng);
    std::string impl, dense_impl;
    const std::vector<float> want = run_reference(c.call, c.ins, c.out);
    expect_close(run_dnnl(c.call, c.ins, c.out, {}, 1, &impl), want, tol_for(l.k), c.text());
    run_dnnl(dense.call, dense.ins, dense.out, {}, 1, &dense_impl);
    EXPECT_EQ(impl, dense_impl) << c.text();
  }
}

// oneDNN evaluates gelu, tanh, sigmoid, elu and swish with its own polynomial and exp
// approximations; this bound, added to tol_for(K), covers them (measured worst over every
// kind: 1.0e-6 relative to max(1, |want|), the product's own rounding included).
constexpr double kApproxTol = 1e-5;

TEST(DnnlMatMul, EveryUnaryPostOp) {
  SKIP_WITHOUT_DNNL_MATMUL();
  std::mt19937 rng(3);
  double worst = 0;
  for (const PostOp& p : unary_post_ops()) {
    MatMulCase c = plain_matmul({2}, 13, 24, 37, rng);
    set_post_ops(&c.call, std::vector<PostOp>{p});
    check(c, false, tol_for(24) + kApproxTol, &worst);
    if (HasFatalFailure()) return;
  }
  RecordProperty("worst_relative_error", str_cat(worst));
}

TEST(DnnlMatMul, EveryBinaryPostOpAndOperandPattern) {
  SKIP_WITHOUT_DNNL_MATMUL();
  std::mt19937 rng(4);
  const Dims shape{2, 13, 37};
  for (PostOpKind kind : {PostOpKind::Add, PostOpKind::Sub, PostOpKind::Mul, PostOpKind::Div,
                          PostOpKind::Max, PostOpKind::Min}) {
    // Divisors away from 0.
    const float lo = kind == PostOpKind::Div ? 0.5f : -1.0f, hi = kind == PostOpKind::Div ? 2 : 1;
    // (Per row and per batch item operands are refused: oneDNN has only its reference loops.)
    const Operand operands[] = {
        broadcast_operand(shape, 2, rng, lo, hi),                    // per column (a bias)
        broadcast_operand(shape, -1, rng, lo, hi),                   // a scalar
        make_operand(shape, identity_order(3), {}, 2, rng, lo, hi),  // a residual
        make_operand(shape, {2, 0, 1}, {}, 0, rng, lo, hi),          // a permuted residual
    };
    for (bool prepacked : {false, true})
      for (const Operand& t : operands) {
        MatMulCase c = plain_matmul({2}, 13, 24, 37, rng);
        c.add_binary(kind, t);
        check(c, prepacked, tol_for(24));
        if (HasFatalFailure()) return;
      }
  }
}

// A C whose batch dim lies inside its rows makes oneDNN pick its GEMM-based matmul, which
// (oneDNN 2.6) crashed with a binary operand broadcast over the batch: such calls take a
// dense copy of C (found by random_extern_test).
TEST(DnnlMatMul, BatchInsideTheRowsOfCWithABroadcastOperand) {
  SKIP_WITHOUT_DNNL_MATMUL();
  std::mt19937 rng(5);
  const Dims shape{2, 4, 17};
  for (bool full : {false, true}) {
    MatMulCase c = make_matmul({2}, 4, 12, 17, {}, {}, identity_order(3), identity_order(3),
                               {1, 0, 2}, 1, rng);
    c.add_binary(PostOpKind::Max, full ? make_operand(shape, identity_order(3), {}, 0, rng)
                                       : broadcast_operand(shape, 2, rng));
    std::string impl;
    const std::vector<float> want = run_reference(c.call, c.ins, c.out);
    expect_close(run_dnnl(c.call, c.ins, c.out, {}, 1, &impl), want, tol_for(12),
                 "dnnl vs reference");
  }
}

TEST(DnnlMatMul, ChainsOfThreePostOps) {
  SKIP_WITHOUT_DNNL_MATMUL();
  std::mt19937 rng(8);
  const Dims shape{3, 16, 40};
  for (bool prepacked : {false, true}) {
    MatMulCase a = plain_matmul({3}, 16, 100, 40, rng);
    a.add_binary(PostOpKind::Add, broadcast_operand(shape, 2, rng));
    append_post_op(&a.call, PostOp{PostOpKind::GeluErf});
    a.add_binary(PostOpKind::Mul, dense(shape, rng));
    check(a, prepacked, tol_for(100) + kApproxTol);
    MatMulCase b = plain_matmul({3}, 16, 100, 40, rng);
    b.add_binary(PostOpKind::Mul, broadcast_operand(shape, -1, rng));
    append_post_op(&b.call, PostOp{PostOpKind::Tanh});
    b.add_binary(PostOpKind::Sub, make_operand(shape, {0, 2, 1}, {}, 1, rng));
    check(b, prepacked, tol_for(100) + kApproxTol);
    MatMulCase c = plain_matmul({3}, 16, 100, 40, rng);
    append_post_op(&c.call, PostOp{PostOpKind::HardSigmoid, 0.3f, 0.4f});
    c.add_binary(PostOpKind::Max, broadcast_operand(shape, 2, rng));
    append_post_op(&c.call, PostOp{PostOpKind::Clip, 0.1f, 0.6f});
    c.call.floats["alpha"] = 0.125;  // applies before the post-ops
    check(c, prepacked, tol_for(100) + kApproxTol);
  }
}

TEST(DnnlMatMul, ThreadCountsAgreeBitwise) {
  SKIP_WITHOUT_DNNL_MATMUL();
  // oneDNN splits the output among threads, never a dot product: each element is summed the
  // same way whatever the thread count (measured: bitwise equal).
  std::mt19937 rng(9);
  MatMulCase c = plain_matmul({2}, 96, 300, 160, rng);
  c.add_binary(PostOpKind::Add, broadcast_operand({2, 96, 160}, 2, rng));
  append_post_op(&c.call, PostOp{PostOpKind::GeluTanh});
  const std::vector<float> one = run_dnnl(c.call, c.ins, c.out, {1, 2}, 1);
  const std::vector<float> two = run_dnnl(c.call, c.ins, c.out, {1, 2}, 2);
  ASSERT_EQ(one.size(), two.size());
  for (size_t i = 0; i < one.size(); ++i) ASSERT_EQ(one[i], two[i]) << i;
}

TEST(DnnlMatMul, OneThreadCopiesGiveTheSameBits) {
  SKIP_WITHOUT_DNNL_MATMUL();
  // On a busy machine the primitives run as copies made for one thread (dnnl_one_thread.h),
  // with the same bits: B prepacked or not, and operands copied into dense scratch around
  // the matmul (reorders).
  std::mt19937 rng(10);
  MatMulCase plain = plain_matmul({2}, 96, 300, 160, rng);
  plain.add_binary(PostOpKind::Add, broadcast_operand({2, 96, 160}, 2, rng));
  append_post_op(&plain.call, PostOp{PostOpKind::GeluTanh});
  const size_t r = 3;
  MatMulCase copied = make_matmul({2}, 90, 400, 110, {}, {}, identity_order(r), identity_order(r),
                                  identity_order(r), 1, rng);
  copied.ins[0] = make_operand({2, 90, 400}, identity_order(r), {false, true, false}, 1, rng);
  copied.call.inputs[0] = copied.ins[0].ref;
  for (const MatMulCase* c : {&plain, &copied}) {
    for (const std::vector<size_t>& constants : {std::vector<size_t>{}, std::vector<size_t>{1}}) {
      size_t copies = 0;
      const std::vector<float> one =
          run_dnnl_one_thread(c->call, c->ins, c->out, constants, 2, &copies);
      EXPECT_GE(copies, c == &copied ? 2u : 1u);
      const std::vector<float> two = run_dnnl(c->call, c->ins, c->out, constants, 2);
      ASSERT_EQ(one.size(), two.size());
      for (size_t i = 0; i < one.size(); ++i) ASSERT_EQ(one[i], two[i]) << i;
    }
  }
}

TEST(DnnlMatMul, OneEltwiseAlgorithmWithTwoParameterSetsIsRefused) {
  SKIP_WITHOUT_DNNL_MATMUL();
  // oneDNN 2.6 would evaluate the second with the first one's parameters.
  std::mt19937 rng(12);
  const std::vector<std::vector<PostOp>> refused = {
      {{PostOpKind::Relu}, {PostOpKind::Linear, -1, 0}, {PostOpKind::LeakyRelu, 0.5f}},
      {{PostOpKind::Clip, 0, 1}, {PostOpKind::Clip, 0.1f, 0.6f}},
      {{PostOpKind::Linear, 2, 0}, {PostOpKind::HardSigmoid, 0.2f, 0.5f}}};
  for (const auto& ops : refused) {
    MatMulCase c = plain_matmul({}, 8, 16, 8, rng);
    set_post_ops(&c.call, ops);
    EXPECT_EQ(prepare_dnnl_extern(c.call, {}, 1), nullptr) << c.text();
  }
  // The same parameters twice, and a Clip beside HardSigmoid's clamp, are taken.
  MatMulCase same = plain_matmul({}, 8, 16, 8, rng);
  set_post_ops(&same.call, std::vector<PostOp>{{PostOpKind::Clip, -0.5f, 0.5f},
                                               {PostOpKind::Tanh},
                                               {PostOpKind::Clip, -0.5f, 0.5f}});
  check(same, false, tol_for(16) + kApproxTol);
  MatMulCase both = plain_matmul({}, 8, 16, 8, rng);
  set_post_ops(&both.call, std::vector<PostOp>{{PostOpKind::Clip, -0.2f, 0.3f},
                                               {PostOpKind::HardSigmoid, 2, 0.5f}});
  check(both, false, tol_for(16) + kApproxTol);
}

TEST(DnnlMatMul, RefusedCallsFallBackToPortableInTheJitBackend) {
  jit::register_jit_backend();
  std::mt19937 rng(2);
  MatMulCase clip = plain_matmul({}, 8, 16, 8, rng);
  set_post_ops(&clip.call, std::vector<PostOp>{{PostOpKind::Clip, 1.0f,
                                                -1.0f}});  // min > max: everything becomes max
  MatMulCase twice = plain_matmul({}, 8, 16, 8, rng);
  set_post_ops(&twice.call,
               std::vector<PostOp>{{PostOpKind::Clip, 0, 1}, {PostOpKind::Clip, 0.1f, 0.6f}});
  MatMulCase row_bias = plain_matmul({}, 9, 16, 12, rng);  // oneDNN: reference loops only
  row_bias.add_binary(PostOpKind::Add, broadcast_operand({9, 12}, 0, rng));
  MatMulCase batch_bias = plain_matmul({2}, 9, 16, 12, rng);
  batch_bias.add_binary(PostOpKind::Mul, broadcast_operand({2, 9, 12}, 0, rng));
  for (const MatMulCase* c : {&clip, &twice, &row_bias, &batch_bias}) {
    SCOPED_TRACE(c->text());
    EXPECT_EQ(prepare_dnnl_extern(c->call, {}, 1), nullptr);
    std::unique_ptr<PreparedExtern> p = make_backend("jit")->prepare_extern(c->call);
    EXPECT_EQ(dynamic_cast<DnnlExtern*>(p.get()), nullptr);
    Operand out = c->out;
    const ExternBuffer o = out.buffer();
    const std::vector<ExternBuffer> in = buffers(c->ins);
    p->run(in.data(), &o);
    expect_close(gather(out), run_reference(c->call, c->ins, c->out), tol_for(16), "jit backend");
  }
}

TEST(DnnlMatMul, JitBackendTakesTheDnnlPathUnlessDisabled) {
  SKIP_WITHOUT_DNNL_MATMUL();
  jit::register_jit_backend();
  std::mt19937 rng(1);
  const MatMulCase c = plain_matmul({}, 8, 16, 8, rng);
  auto p = make_backend("jit")->prepare_extern(c.call);
  EXPECT_NE(dynamic_cast<DnnlExtern*>(p.get()), nullptr);
  ASSERT_EQ(setenv("FERRITE_DNNL", "0", 1), 0);
  EXPECT_FALSE(dnnl_enabled());
  EXPECT_EQ(prepare_dnnl_extern(c.call, {}, 1), nullptr);
  auto q = make_backend("jit")->prepare_extern(c.call);
  EXPECT_EQ(dynamic_cast<DnnlExtern*>(q.get()), nullptr);
  ASSERT_EQ(unsetenv("FERRITE_DNNL"), 0);
  EXPECT_TRUE(dnnl_enabled());
}

TEST(DnnlMatMul, NonFiniteInputsGiveTheReferenceValues) {
  SKIP_WITHOUT_DNNL_MATMUL();
  // oneDNN's fused relu makes NaN 0; a run whose A holds an infinity or NaN gets the
  // reference's values instead (nonfinite_inputs.h), through alpha, a residual and relu.
  // B broadcast over the batch, constant (its signs kept) or given at run time; a B with an
  // infinity: a constant one has no such handling (no relu then), one given at run time
  // makes that run a reference matmul.
  std::mt19937 rng(41);
  const std::vector<int> rows = identity_order(3);
  for (int b_inf = 0; b_inf < 2; ++b_inf) {
    for (bool prepacked : {false, true}) {
      MatMulCase c = make_matmul({2}, 8, 16, 12, {}, {true}, rows, rows, rows, -0.5, rng);
      SCOPED_TRACE(c.text() + (b_inf ? ", an infinity in B" : "") +
                   (prepacked ? ", constant" : ""));
      c.add_binary(PostOpKind::Add, dense({2, 8, 12}, rng));
      const bool handled = !(b_inf && prepacked);
      if (handled) append_post_op(&c.call, PostOp{PostOpKind::Relu});
      Operand& a = c.ins[0];
      auto at = [](const Operand& o, const Dims& idx) {
        int64_t off = o.ref.offset;
        for (size_t e = 0; e < idx.size(); ++e) off += idx[e] * o.ref.strides[e];
        return static_cast<size_t>(off);
      };
      a.data[at(a, {0, 1, 3})] = INFINITY;
      a.data[at(a, {0, 1, 7})] = -INFINITY;  // both signs in one row
      a.data[at(a, {1, 4, 0})] = NAN;
      a.data[at(a, {1, 6, 15})] = -INFINITY;
      if (b_inf) c.ins[1].data[at(c.ins[1], {0, 5, 2})] = INFINITY;
      const std::vector<size_t> constants =
          prepacked ? std::vector<size_t>{1} : std::vector<size_t>{};
      const std::vector<float> got = run_dnnl(c.call, c.ins, c.out, constants);
      const std::vector<float> want = run_reference(c.call, c.ins, c.out);
      EXPECT_GT(expect_same_classes(got, want, tol_for(16)), 0u);
    }
  }
}

TEST(DnnlMatMul, BadBuffersGiveTheReferenceErrors) {
  SKIP_WITHOUT_DNNL_MATMUL();
  std::mt19937 rng(6);
  MatMulCase c = plain_matmul({2}, 4, 5, 6, rng);
  c.add_binary(PostOpKind::Add, broadcast_operand({2, 4, 6}, 2, rng));
  auto p = prepare_dnnl_extern(c.call, {}, 1);
  ASSERT_NE(p, nullptr);
  std::vector<ExternBuffer> f64 = buffers(c.ins), small = f64, small_t = f64;
  f64[1].dtype = DType::F64;
  small[0].elements -= 1;
  small_t[2].elements = 0;
  expect_reference_errors(c.call, p.get(), ExternOp::MatMul, c.out, {f64, small, small_t});
}

}  // namespace
}  // namespace dnnl_test
}  // namespace ferrite
