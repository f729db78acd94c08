// In-place reuse (compiler/memory/in_place.h): a pair is found when every rule holds and
// refused, with its reason, when any one fails; chains share one offset; random plans of
// pointwise kernels give the same outputs with and without in-place offsets, on both
// backends; and a compiled graph with an in-place pair computes the right values.
#include "compiler/memory/in_place.h"

#include <gtest/gtest.h>

#include <random>

#include "compiler/memory/live_ranges.h"
#include "compiler/plan/error.h"
#include "runtime/session.h"
#include "tests/unit/compiler/lower/run_graph.h"
#include "tests/unit/runtime/kernel_builder.h"

namespace ferrite {
namespace {

using testing::Affine;
using testing::C;
using testing::KernelBuilder;
using testing::V;

constexpr int64_t kRows = 4, kCols = 16, kN = kRows * kCols;

Index row_major() {
  return Affine({{0, kCols}, {1, 1}});
}
Index reversed() {
  return Affine({{0, -kCols}, {1, -1}}, kN - 1);
}

// out[i] = -in[i] over [4, 16] (the index of each load/store given).
Kernel neg_kernel(Index load = row_major(), Index store = row_major()) {
  KernelBuilder b({kRows, kCols});
  int in = b.arg(DType::F32, kN);
  int out = b.arg(DType::F32, kN, true);
  b.store(out, store, b.unary(Op::Neg, b.load(in, load)));
  return b.build();
}

PlanBuffer buffer(const std::string& name, BufferKind kind, std::vector<int64_t> shape = {kN},
                  DType dtype = DType::F32) {
  PlanBuffer b;
  b.name = name;
  b.kind = kind;
  b.shape = std::move(shape);
  b.dtype = dtype;
  return b;
}

Step kernel_step(int kernel, std::vector<int32_t> buffers) {
  Step s;
  s.index = kernel;
  s.buffers = std::move(buffers);
  return s;
}

// x (input) -neg-> a -K-> b -neg-> y (output): step 1, kernel K, is the one looked at.
Plan three_steps(const Kernel& k) {
  Plan p;
  p.buffers = {buffer("x", BufferKind::Input), buffer("a", BufferKind::Temp),
               buffer("b", BufferKind::Temp), buffer("y", BufferKind::Output)};
  p.kernels = {neg_kernel(), k};
  p.steps = {kernel_step(0, {0, 1}), kernel_step(1, {1, 2}), kernel_step(0, {2, 3})};
  p.inputs = {0};
  p.outputs = {3};
  return p;
}

std::vector<LiveBuffer> ranges_of(const Plan& p) {
  std::vector<int64_t> bytes;
  for (const PlanBuffer& b : p.buffers) bytes.push_back(b.nbytes());
  return live_ranges(bytes, plan_step_uses(p));
}

std::string refusal(const Plan& p, int step, int32_t in, int32_t out) {
  return in_place_refusal(p, ranges_of(p), step, in, out);
}

TEST(InPlaceTest, PointwiseStepReusesItsDyingInput) {
  Plan p = three_steps(neg_kernel());
  EXPECT_EQ(refusal(p, 1, 1, 2), "");
  std::vector<InPlacePair> pairs = find_in_place_pairs(p, ranges_of(p));
  ASSERT_EQ(pairs.size(), 1u);
  EXPECT_EQ(pairs[0].step, 1);
  EXPECT_EQ(pairs[0].input, 1);
  EXPECT_EQ(pairs[0].output, 2);
  assign_pool_offsets(&p);
  EXPECT_NO_THROW(validate_plan(p));
  EXPECT_EQ(p.buffers[1].offset, p.buffers[2].offset);
  EXPECT_EQ(p.pool_bytes, kN * 4);
  // Without in-place reuse the two are live together at step 1.
  EXPECT_EQ(plan_temp_memory(p, false).pool.pool_bytes, 2 * kN * 4);
}

TEST(InPlaceTest, RefusedForADifferentIndex) {
  Plan p = three_steps(neg_kernel(reversed()));
  EXPECT_NE(refusal(p, 1, 1, 2).find("the input is loaded at"), std::string::npos)
      << refusal(p, 1, 1, 2);
  EXPECT_TRUE(find_in_place_pairs(p, ranges_of(p)).empty());
}

TEST(InPlaceTest, RefusedForALoadAfterTheStore) {
  // b[i] = -a[i]; b[i] = a[i] + -a[i]: the second load of a would see b's store.
  KernelBuilder b({kRows, kCols});
  int in = b.arg(DType::F32, kN);
  int out = b.arg(DType::F32, kN, true);
  int neg = b.unary(Op::Neg, b.load(in, row_major()));
  b.store(out, row_major(), neg);
  b.store(out, row_major(), b.binary(Op::Add, b.load(in, row_major()), neg));
  Plan p = three_steps(b.build());
  EXPECT_NE(refusal(p, 1, 1, 2).find("loads the input after the store"), std::string::npos)
      << refusal(p, 1, 1, 2);
}

TEST(InPlaceTest, RefusedForAReductionKernel) {
  // b[i] = sum over a size-1 reduction dim of a[i]: same index, but a reduction kernel.
  KernelBuilder b({kRows, kCols, 1}, 1);
  int in = b.arg(DType::F32, kN);
  int out = b.arg(DType::F32, kN, true);
  int sum = b.reduce(ReduceKind::Sum, b.load(in, row_major()));
  b.post();
  b.store(out, row_major(), sum);
  Plan p = three_steps(b.build());
  EXPECT_EQ(refusal(p, 1, 1, 2), "the kernel has reduction dims");
}

TEST(InPlaceTest, RefusedForAGuardedStep) {
  Plan p = three_steps(neg_kernel());
  p.buffers.push_back(buffer("cond", BufferKind::Constant, {}, DType::Bool));
  p.buffers.back().constant = 0;
  p.constants = {ConstantBytes(1, 1)};
  p.steps[1].guards = {Guard{4, true}};
  EXPECT_EQ(refusal(p, 1, 1, 2), "the step has guards");
}

TEST(InPlaceTest, RefusedWhenTheInputLivesOn) {
  // Step 2 reads a as well as b.
  Plan p = three_steps(neg_kernel());
  KernelBuilder add({kRows, kCols});
  int x = add.arg(DType::F32, kN), y = add.arg(DType::F32, kN);
  int out = add.arg(DType::F32, kN, true);
  add.store(out, row_major(),
            add.binary(Op::Add, add.load(x, row_major()), add.load(y, row_major())));
  p.kernels.push_back(add.build());
  p.steps[2] = kernel_step(2, {2, 1, 3});
  EXPECT_EQ(refusal(p, 1, 1, 2), "the input is used until step 2");
}

TEST(InPlaceTest, RefusedForDifferentSizes) {
  KernelBuilder b({kRows, kCols / 2});
  int in = b.arg(DType::F32, kN);
  int out = b.arg(DType::F32, kN / 2, true);
  Index ix = Affine({{0, kCols / 2}, {1, 1}});
  b.store(out, ix, b.unary(Op::Neg, b.load(in, ix)));
  Plan p = three_steps(b.build());
  p.buffers[2].shape = {kN / 2};
  p.kernels[0] = neg_kernel();
  KernelBuilder last({kN / 2});
  int li = last.arg(DType::F32, kN / 2), lo = last.arg(DType::F32, kN / 2, true);
  last.store(lo, V(0), last.load(li, V(0)));
  p.kernels.push_back(last.build());
  p.buffers[3].shape = {kN / 2};
  p.steps[2] = kernel_step(2, {2, 3});
  assign_pool_offsets(&p);
  EXPECT_NO_THROW(validate_plan(p));
  EXPECT_EQ(refusal(p, 1, 1, 2), str_cat("sizes differ: ", kN * 4, " and ", kN * 2));
}

TEST(InPlaceTest, RefusedForDifferentElementSizes) {
  // a: f32[64] and b: f16[128] have the same bytes, but element i is not at the same byte.
  KernelBuilder b({kRows, kCols});
  int in = b.arg(DType::F32, kN);
  int out = b.arg(DType::F16, 2 * kN, true);
  b.store(out, row_major(), b.unary(Op::Neg, b.load(in, row_major())));
  Plan p = three_steps(b.build());
  p.buffers[2] = buffer("b", BufferKind::Temp, {2 * kN}, DType::F16);
  EXPECT_EQ(refusal(p, 1, 1, 2), "element sizes differ");
}

TEST(InPlaceTest, RefusedForOutputAndInputBuffers) {
  // x -K-> y directly: x is the model's input, y its output; neither is in the pool.
  Plan p;
  p.buffers = {buffer("x", BufferKind::Input), buffer("y", BufferKind::Output)};
  p.kernels = {neg_kernel()};
  p.steps = {kernel_step(0, {0, 1})};
  p.inputs = {0};
  p.outputs = {1};
  EXPECT_EQ(refusal(p, 0, 0, 1), "only Temp buffers are in the pool");
  // a -K-> y, with a a Temp: still refused for y.
  Plan q = three_steps(neg_kernel());
  EXPECT_EQ(refusal(q, 2, 2, 3), "only Temp buffers are in the pool");
  EXPECT_EQ(refusal(q, 0, 0, 1), "only Temp buffers are in the pool");
  EXPECT_TRUE(find_in_place_pairs(p, ranges_of(p)).empty());
}

TEST(InPlaceTest, RefusedForAStoreThatIsNotOneToOne) {
  // Over [4, 16, 2], b[i0*16+i1] = -a[i0*16+i1]: the same index, but two points store
  // each element, so one point's store could clobber what the other still has to load.
  KernelBuilder b({kRows, kCols, 2});
  int in = b.arg(DType::F32, kN);
  int out = b.arg(DType::F32, kN, true);
  b.store(out, row_major(), b.unary(Op::Neg, b.load(in, row_major())));
  Plan p = three_steps(b.build());
  EXPECT_EQ(refusal(p, 1, 1, 2), "the store index is not provably one-to-one");
  // An index with floor-div is not affine: refused the same way.
  Index div = ix_binary(IndexKind::FloorDiv, Affine({{0, 2 * kCols}, {1, 2}}), C(2));
  Plan q = three_steps(neg_kernel(div, div));
  EXPECT_EQ(refusal(q, 1, 1, 2), "the store index is not provably one-to-one");
}

TEST(InPlaceTest, RefusedWhenTheOutputIsAlsoRead) {
  // b is bound to an input arg and to the output arg of one step.
  KernelBuilder b({kRows, kCols});
  int in = b.arg(DType::F32, kN), self = b.arg(DType::F32, kN);
  int out = b.arg(DType::F32, kN, true);
  b.store(out, row_major(), b.binary(Op::Add, b.load(in, row_major()), b.load(self, row_major())));
  Plan p = three_steps(b.build());
  p.steps[1].buffers = {1, 2, 2};
  EXPECT_EQ(refusal(p, 1, 1, 2), "the output is bound to 2 args");
}

TEST(InPlaceTest, RefusedAtAnExternStep) {
  Plan p = three_steps(neg_kernel());
  ExternCall x;
  x.op = ExternOp::TopK;  // any extern
  x.inputs = {TensorRef{1, {kN}, {1}, 0}};
  x.outputs = {TensorRef{2, {kN}, {1}, 0}};
  p.externs = {x};
  p.steps[1] = Step{StepKind::Extern, 0, {}, {}};
  EXPECT_EQ(refusal(p, 1, 1, 2), "not a kernel step");
}

TEST(InPlaceTest, AnInputIsGivenToOneOutputOnly) {
  // b[i] = -a[i] and c[i] = -a[i] in one kernel: a can go to b or c, not both.
  KernelBuilder b({kRows, kCols});
  int in = b.arg(DType::F32, kN);
  int o1 = b.arg(DType::F32, kN, true), o2 = b.arg(DType::F32, kN, true);
  int neg = b.unary(Op::Neg, b.load(in, row_major()));
  b.store(o1, row_major(), neg);
  b.store(o2, row_major(), neg);
  Plan p = three_steps(b.build());
  p.buffers.push_back(buffer("c", BufferKind::Temp));
  p.buffers.push_back(buffer("y2", BufferKind::Output));
  p.outputs = {3, 5};
  p.steps[1].buffers = {1, 2, 4};
  p.steps.push_back(kernel_step(0, {4, 5}));
  EXPECT_EQ(refusal(p, 1, 1, 2), "");
  EXPECT_EQ(refusal(p, 1, 1, 4), "");
  std::vector<InPlacePair> pairs = find_in_place_pairs(p, ranges_of(p));
  ASSERT_EQ(pairs.size(), 1u);
  EXPECT_EQ(pairs[0].output, 2);
  assign_pool_offsets(&p);
  EXPECT_NO_THROW(validate_plan(p));
  EXPECT_EQ(p.buffers[1].offset, p.buffers[2].offset);
  EXPECT_NE(p.buffers[2].offset, p.buffers[4].offset);
}

// ---- Random plans: in-place offsets change nothing the plan computes ----------------------

// A chain of random pointwise steps over [4, 16]: step s writes t_s = sum of c_k * (loads of
// 1-3 earlier values, each row-major or reversed) + s. Some temps are also copied to
// outputs; the last step writes the final output.
Plan random_plan(std::mt19937& rng) {
  std::uniform_int_distribution<int> num_steps(2, 24), arity(1, 3), coin(0, 3), back(1, 4);
  const int steps = num_steps(rng);
  Plan p;
  p.buffers.push_back(buffer("x", BufferKind::Input));
  p.inputs = {0};
  std::vector<int32_t> values = {0};  // buffers steps may read, newest last
  for (int s = 0; s < steps; ++s) {
    const bool last = s + 1 == steps;
    const bool copy = !last && coin(rng) == 0;
    KernelBuilder b({kRows, kCols});
    std::vector<int32_t> bound;
    int acc = b.constant(ScalarType::F32, s);
    const int n = arity(rng);
    for (int k = 0; k < n; ++k) {
      const int from = std::max(0, static_cast<int>(values.size()) - back(rng));
      bound.push_back(values[from]);
      int v = b.load(b.arg(DType::F32, kN), coin(rng) == 0 ? reversed() : row_major());
      v = b.binary(Op::Mul, v, b.constant(ScalarType::F32, 0.5 + 0.25 * k));
      acc = b.binary(Op::Add, acc, v);
    }
    const int out = b.arg(DType::F32, kN, true);
    b.store(out, row_major(), acc);
    if (copy) b.store(b.arg(DType::F32, kN, true), row_major(), b.unary(Op::Neg, acc));
    const int32_t id = static_cast<int32_t>(p.buffers.size());
    p.buffers.push_back(buffer(str_cat("t", s), last ? BufferKind::Output : BufferKind::Temp));
    bound.push_back(id);
    values.push_back(id);
    if (last) p.outputs.push_back(id);
    if (copy) {
      p.outputs.push_back(static_cast<int32_t>(p.buffers.size()));
      bound.push_back(p.outputs.back());
      p.buffers.push_back(buffer(str_cat("copy", s), BufferKind::Output));
    }
    p.kernels.push_back(b.build());
    p.steps.push_back(kernel_step(s, bound));
  }
  return p;
}

std::vector<Tensor> run_plan(const Plan& p, const std::string& backend, const Tensor& x) {
  SessionOptions options;
  options.backend = backend;
  Session session(p, options);
  return session.run({&x});
}

TEST(InPlaceTest, RandomPlansComputeTheSameWithAndWithoutInPlace) {
  std::mt19937 rng(77);
  std::vector<float> xs = lower_test::random_floats(kN, 5);
  const Tensor x(DType::F32, {kN}, xs.data());
  int pairs = 0, plans_with_pairs = 0;
  for (int t = 0; t < 200; ++t) {
    SCOPED_TRACE(t);
    Plan p = random_plan(rng);
    Plan plain = p;
    TempMemory m = plan_temp_memory(plain, false);
    for (size_t i = 0; i < m.temps.size(); ++i)
      plain.buffers[m.temps[i]].offset = m.pool.offsets[i];
    plain.pool_bytes = m.pool.pool_bytes;
    assign_pool_offsets(&p);
    ASSERT_NO_THROW(validate_plan(p));
    TempMemory in_place = plan_temp_memory(p);
    pairs += static_cast<int>(in_place.in_place.size());
    plans_with_pairs += in_place.in_place.empty() ? 0 : 1;
    EXPECT_LE(p.pool_bytes, plain.pool_bytes);
    // Temps live together share bytes only as an in-place pair, at its step.
    for (size_t i = 0; i < in_place.temps.size(); ++i) {
      for (size_t j = i + 1; j < in_place.temps.size(); ++j) {
        const LiveBuffer &a = in_place.ranges[i], &b = in_place.ranges[j];
        const PlanBuffer &ba = p.buffers[in_place.temps[i]], &bb = p.buffers[in_place.temps[j]];
        const bool together = a.first <= b.last && b.first <= a.last;
        const bool share =
            ba.offset < bb.offset + bb.nbytes() && bb.offset < ba.offset + ba.nbytes();
        if (!together || !share) continue;
        bool paired = false;
        for (const InPlacePair& q : in_place.in_place)
          paired = paired || (q.input == in_place.temps[i] && q.output == in_place.temps[j]);
        EXPECT_TRUE(paired) << ba.name << " and " << bb.name;
      }
    }
    for (const char* backend : {"reference", "portable"}) {
      std::vector<Tensor> want = run_plan(plain, backend, x);
      std::vector<Tensor> got = run_plan(p, backend, x);
      ASSERT_EQ(got.size(), want.size());
      for (size_t o = 0; o < got.size(); ++o)
        EXPECT_EQ(lower_test::values_of<float>(got[o]), lower_test::values_of<float>(want[o]))
            << backend << " output " << o;
    }
  }
  std::printf("random plans: %d in-place pairs in %d of 200 plans\n", pairs, plans_with_pairs);
  EXPECT_GT(plans_with_pairs, 50);  // the generator must exercise the rule
}

// ---- A compiled graph --------------------------------------------------------------------

class InPlaceGraph : public ::testing::TestWithParam<std::string> {};

TEST_P(InPlaceGraph, CompiledPairComputesTheRightValues) {
  // y = exp(x @ w1) @ w2: exp reads the first MatMul's result, which dies there, and
  // writes the second MatMul's operand, a Temp of the same size: an in-place pair.
  GraphBuilder b;
  Value* x = b.input("x", DType::F32, {3, 4});
  std::vector<float> w1 = lower_test::random_floats(16, 11), w2 = lower_test::random_floats(8, 12);
  Value* h = b.op("Exp", {b.op("MatMul", {x, b.constant_f32({4, 4}, w1)})});
  b.output(b.op("MatMul", {h, b.constant_f32({4, 2}, w2)}));
  auto g = b.finish();
  std::vector<float> xs = lower_test::random_floats(12, 13);
  lower_test::Compiled r = lower_test::run_graph(
      *g, lower_test::tensors(Tensor(DType::F32, {3, 4}, xs.data())), GetParam());
  TempMemory m = plan_temp_memory(r.plan);
  ASSERT_EQ(m.in_place.size(), 1u) << plan_to_string(r.plan);
  EXPECT_EQ(r.plan.buffers[m.in_place[0].input].offset,
            r.plan.buffers[m.in_place[0].output].offset);
  std::vector<float> want(6, 0.f);
  for (int i = 0; i < 3; ++i) {
    for (int k = 0; k < 4; ++k) {
      double acc = 0;
      for (int j = 0; j < 4; ++j) acc += static_cast<double>(xs[i * 4 + j]) * w1[j * 4 + k];
      for (int c = 0; c < 2; ++c)
        want[i * 2 + c] += static_cast<float>(std::exp(acc)) * w2[k * 2 + c];
    }
  }
  lower_test::expect_near(r.outputs[0], want, 1e-4f);
}

INSTANTIATE_TEST_SUITE_P(Backends, InPlaceGraph, ::testing::Values("reference", "portable"));

}  // namespace
}  // namespace ferrite
