// Fast math on oneDNN (BackendOptions::fast_math): a float32 MatMul or Conv multiplies in
// bfloat16 where the CPU has AVX-512 BF16. Its result must equal the reference's on the
// operands rounded to bfloat16 (products of bfloat16 values are exact in float32, so only
// the float32 sums' order differs), and differ from the float32 result by no more than
// bfloat16's rounding; a call it cannot take in bfloat16 runs in float32, and without fast
// math nothing changes.
#include <gtest/gtest.h>

#include <cmath>

#include "compiler/plan/error.h"
#include "compiler/plan/scalar_ops.h"
#include "tests/unit/runtime/conv_geometry.h"
#include "tests/unit/runtime/kernels/dnnl/dnnl_test_support.h"

namespace ferrite {
namespace dnnl_test {
namespace {

#define SKIP_WITHOUT_BF16()                                  \
  if (!::ferrite::dnnl_has_bf16())                           \
  GTEST_SKIP() << "no AVX-512 BF16 here: fast math changes " \
                  "nothing"

// The operand with every value rounded to bfloat16 (to nearest even).
Operand rounded(Operand o) {
  for (float& x : o.data) x = bfloat16_to_float(float_to_bfloat16(x));
  return o;
}

struct Run {
  std::vector<float> values;
  std::string implementation;
};

// The call prepared on oneDNN with or without fast math (the inputs in `constant_inputs` as
// plan constants) and run once.
Run run_prepared(const ExternCall& call, const std::vector<Operand>& ins, Operand out,
                 const std::vector<size_t>& constant_inputs, bool fast_math) {
  const std::vector<ExternBuffer> in = buffers(ins);
  std::vector<ExternBuffer> constants(ins.size());
  for (size_t i : constant_inputs) constants[i] = in[i];
  std::unique_ptr<PreparedExtern> p =
      prepare_dnnl_extern(call, constants, {}, 1, nullptr, fast_math);
  auto* d = dynamic_cast<DnnlExtern*>(p.get());
  if (!d) {
    ADD_FAILURE() << "oneDNN refused the call";
    return {};
  }
  const ExternBuffer o = out.buffer();
  std::fill(out.data.begin(), out.data.end(), NAN);
  p->run(in.data(), &o);
  return Run{gather(out), d->implementation()};
}

// Fast math against the reference on the rounded operands (within `tol`: the float32 sums'
// order) and on the exact ones, without fast math too. Each of the `k` products summed
// into an output is off by up to about 2^-8 of its size after rounding (random signs): the
// bound, relative to max(1, |want|), grows as sqrt(k). Values are in [-1, 1].
void check_fast_math(const ExternCall& call, const std::vector<Operand>& ins, const Operand& out,
                     const std::vector<size_t>& constant_inputs, int64_t k, double tol,
                     double strict_tol) {
  std::vector<Operand> r = ins;
  for (size_t i = 0; i < 2; ++i) r[i] = rounded(ins[i]);  // A and B, or X and W
  const std::vector<float> want_rounded = run_reference(call, r, out);
  const std::vector<float> want_exact = run_reference(call, ins, out);
  const Run fast = run_prepared(call, ins, out, constant_inputs, true);
  EXPECT_NE(fast.implementation.find("bf16"), std::string::npos) << fast.implementation;
  double worst = 0;
  expect_close(fast.values, want_rounded, tol, "fast math vs the rounded operands' reference");
  expect_close(fast.values, want_exact, 5e-3 * std::sqrt(static_cast<double>(k)),
               "fast math vs float32", &worst);
  EXPECT_GT(worst, 1e-4) << "no bfloat16 rounding seen";
  const Run strict = run_prepared(call, ins, out, constant_inputs, false);
  EXPECT_EQ(strict.implementation.find("bf16"), std::string::npos) << strict.implementation;
  expect_close(strict.values, want_exact, strict_tol, "without fast math vs float32");
}

ExternCall matmul_call(const Operand& a, const Operand& b, const Operand& c) {
  ExternCall call;
  call.op = ExternOp::MatMul;
  call.inputs = {a.ref, b.ref};
  call.inputs[0].buffer = 0;
  call.inputs[1].buffer = 1;
  call.outputs = {c.ref};
  return call;
}

TEST(DnnlFastMath, MatMulMultipliesInBfloat16) {
  SKIP_WITHOUT_BF16();
  std::mt19937 rng(3);
  // B a plan constant (packed once as bfloat16) and B computed at run time; a batch and a
  // transposed A (rounded into a dense copy at each run); M = 1 (a decoder's step).
  for (bool constant_b : {true, false}) {
    const Operand a = dense({2, 37, 96}, rng), b = dense({2, 96, 53}, rng),
                  c = dense({2, 37, 53}, rng);
    SCOPED_TRACE(constant_b ? "constant B" : "run-time B");
    check_fast_math(matmul_call(a, b, c), {a, b}, c,
                    constant_b ? std::vector<size_t>{1} : std::vector<size_t>{}, 96, 1e-5, 1e-4);
  }
  const Operand at = make_operand({64, 300}, {1, 0}, {}, 2, rng), b = dense({300, 40}, rng),
                c = dense({64, 40}, rng);
  check_fast_math(matmul_call(at, b, c), {at, b}, c, {1}, 300, 2e-5, 2e-4);
  const Operand row = dense({1, 768}, rng), w = dense({768, 200}, rng), y = dense({1, 200}, rng);
  check_fast_math(matmul_call(row, w, y), {row, w}, y, {1}, 768, 3e-5, 3e-4);
}

TEST(DnnlFastMath, ConvMultipliesInBfloat16) {
  SKIP_WITHOUT_BF16();
  std::mt19937 rng(5);
  // A direct convolution with a bias, and one oneDNN would run on its float32 Winograd
  // kernels (64 channels, 28x28), which fast math runs direct in bfloat16 instead.
  for (const conv_geometry::Geometry& g :
       {conv_geometry::conv2d(1, 16, 24, 1, {12, 12}, 3, 1, 1, 1),
        conv_geometry::conv2d(1, 64, 64, 1, {28, 28}, 3, 1, 1, 1)}) {
    SCOPED_TRACE(g.text());
    std::vector<Operand> ins = {dense(g.x_dims(), rng), dense(g.w_dims(), rng)};
    if (g.bias) ins.push_back(dense({g.m}, rng));
    const Operand y = dense(g.y_dims(), rng);
    ExternCall call;
    encode_extern(g.attrs(), &call);
    for (const Operand& o : ins) call.inputs.push_back(o.ref);
    call.outputs = {y.ref};
    const std::vector<size_t> constants =
        g.bias ? std::vector<size_t>{1, 2} : std::vector<size_t>{1};
    check_fast_math(call, ins, y, constants, g.c * 9, 3e-5, g.tol());
  }
}

TEST(DnnlFastMath, RefusedCallsStayRefused) {
  SKIP_WITHOUT_BF16();
  // A call oneDNN has no form for (a matmul broadcast in both A's and B's batch dim) is
  // refused with fast math too, for the fallback to run in float32.
  std::mt19937 rng(9);
  const Operand a = make_operand({3, 4, 8}, identity_order(3), {true, false, false}, 0, rng);
  const Operand b = make_operand({3, 8, 5}, identity_order(3), {true, false, false}, 0, rng);
  const Operand c = dense({3, 4, 5}, rng);
  const ExternCall call = matmul_call(a, b, c);
  EXPECT_EQ(prepare_dnnl_extern(call, {}, {}, 1, nullptr, true), nullptr);
  EXPECT_EQ(prepare_dnnl_extern(call, {}, {}, 1, nullptr, false), nullptr);
}

}  // namespace
}  // namespace dnnl_test
}  // namespace ferrite
