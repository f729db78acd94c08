// Kernels compiled once for every size (docs/shapes.md, kernel templates): pointwise ops,
// reductions over static dims (Softmax, LayerNormalization) and reshapes over symbolic
// sizes, instantiated at sizes other than the hints. Oracles: values worked out here, and
// the plan compile_graph makes for each size, run on the reference backend.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "compiler/compile.h"
#include "compiler/plan/error.h"
#include "runtime/session.h"
#include "tests/unit/compiler/lower/run_graph.h"

namespace ferrite {
namespace {

using namespace lower_test;

// Shapes of one input per dim name: {"N", 3} and so on (a name: a symbolic dim).
using Dims = std::vector<std::pair<std::string, int64_t>>;

Value* sym_input(GraphBuilder& b, const std::string& name, const Dims& dims) {
  std::vector<int64_t> shape;
  std::vector<std::string> names;
  for (const auto& [n, size] : dims) {
    shape.push_back(n.empty() ? size : -1);
    names.push_back(n);
  }
  Value* v = b.input(name, DType::F32, shape);
  v->type.dim_names = names;
  return v;
}

TensorType f32(std::vector<int64_t> shape) {
  return TensorType{DType::F32, std::move(shape), {}, true};
}

std::vector<Tensor> run_plan(const Plan& plan, const std::string& backend,
                             const std::vector<Tensor>& inputs) {
  SessionOptions opts;
  opts.backend = backend;
  Session s(plan, opts);
  std::vector<const Tensor*> ptrs;
  for (const Tensor& t : inputs) ptrs.push_back(&t);
  return s.run(ptrs);
}

std::vector<Tensor> run_plan(const Plan& plan, const std::string& backend, const Tensor& input) {
  std::vector<Tensor> inputs;
  inputs.push_back(Tensor::copy_of(input));
  return run_plan(plan, backend, inputs);
}

// Compiles `g` once at `hints`; at each shape set, its instance runs (reference and portable
// backends) to the values of the plan compiled for that shape set.
void expect_instances_match(const Graph& g, const std::vector<TensorType>& hints,
                            const std::vector<std::vector<std::vector<int64_t>>>& shape_sets) {
  const SymbolicPlan sp = compile_symbolic(g, hints, CompileOptions{});
  EXPECT_FALSE(sp.kernels.empty());
  uint32_t seed = 1;
  for (const auto& shapes : shape_sets) {
    std::vector<int64_t> values;
    ASSERT_TRUE(sp.shapes.values_for(shapes, &values));
    const Plan plan = instantiate_plan(sp, values, CompileOptions{});
    std::vector<TensorType> types;
    std::vector<Tensor> inputs;
    for (const auto& s : shapes) {
      types.push_back(f32(s));
      int64_t n = 1;
      for (int64_t d : s) n *= d;
      const std::vector<float> x = random_floats(static_cast<size_t>(n), seed++);
      inputs.emplace_back(DType::F32, s, x.data());
    }
    const std::vector<Tensor> want = run_plan(compile_graph(g, types, {}), "reference", inputs);
    for (const char* backend : {"reference", "portable"}) {
      const std::vector<Tensor> got = run_plan(plan, backend, inputs);
      ASSERT_EQ(got.size(), want.size());
      for (size_t i = 0; i < got.size(); ++i) {
        SCOPED_TRACE(str_cat(backend, " output ", i, " at ", plan_to_string(plan)));
        ASSERT_EQ(got[i].shape(), want[i].shape());
        expect_near(got[i], values_of<float>(want[i]), 1e-5f);
      }
    }
  }
}

TEST(SymbolicKernels, SoftmaxOverAStaticDimIsOneKernelForEverySize) {
  GraphBuilder b;
  Value* x = sym_input(b, "x", {{"N", 0}, {"", 6}});
  b.output(b.op("Mul", {b.op("Softmax", {x}, {{"axis", attr_i(-1)}}), x}));
  auto g = b.finish();
  prepare_graph(*g, CompileOptions{});
  const SymbolicPlan sp = compile_symbolic(*g, {f32({3, 6})}, CompileOptions{});
  ASSERT_FALSE(sp.kernels.empty());
  EXPECT_NE(kernel_templates_to_string(sp.kernels).find("s0"), std::string::npos);
  for (int64_t n : {2, 3, 7, 40}) {
    std::vector<int64_t> values;
    ASSERT_TRUE(sp.shapes.values_for({{n, 6}}, &values));
    const Plan plan = instantiate_plan(sp, values, CompileOptions{});
    const std::vector<float> x = random_floats(static_cast<size_t>(n * 6), 7 + n);
    std::vector<float> want(x.size());
    for (int64_t i = 0; i < n; ++i) {
      const float* r = &x[i * 6];
      const float m = *std::max_element(r, r + 6);
      double s = 0;
      for (int j = 0; j < 6; ++j) s += std::exp(r[j] - m);
      for (int j = 0; j < 6; ++j)
        want[i * 6 + j] = static_cast<float>(std::exp(r[j] - m) / s) * r[j];
    }
    for (const char* backend : {"reference", "portable"}) {
      const std::vector<Tensor> out = run_plan(plan, backend, Tensor(DType::F32, {n, 6}, x.data()));
      ASSERT_EQ(out[0].shape(), (std::vector<int64_t>{n, 6}));
      expect_near(out[0], want, 1e-5f);
    }
  }
}

TEST(SymbolicKernels, LayerNormHeadSplitAndTranspose) {
  // x [B, S, 8] -> LayerNormalization -> Reshape [0, 0, 2, 4] -> Softmax -> [B, 2, S, 4].
  GraphBuilder b;
  Value* x = sym_input(b, "x", {{"B", 0}, {"S", 0}, {"", 8}});
  Value* ln =
      b.op("LayerNormalization",
           {x, b.constant_f32({8}, random_floats(8, 3)), b.constant_f32({8}, random_floats(8, 4))},
           {{"axis", attr_i(-1)}});
  Value* heads = b.op("Reshape", {ln, b.constant_i64({4}, {0, 0, 2, 4})});
  Value* p = b.op("Softmax", {heads}, {{"axis", attr_i(-1)}});
  b.output(b.op("Transpose", {p}, {{"perm", attr_is({0, 2, 1, 3})}}));
  auto g = b.finish();
  prepare_graph(*g, CompileOptions{});
  expect_instances_match(*g, {f32({2, 3, 8})},
                         {{{2, 3, 8}}, {{3, 5, 8}}, {{4, 2, 8}}, {{7, 11, 8}}, {{3, 3, 8}}});
}

TEST(SymbolicKernels, SoftmaxAndSumsOverASymbolicDim) {
  // Attention-like scores [B, S, S] (S twice: one symbol), softmax over the last S; a
  // ReduceSum over S (no count in it). A mean over S is not symbolic yet (below).
  GraphBuilder b;
  Value* x = sym_input(b, "x", {{"B", 0}, {"S", 0}, {"", 4}});
  Value* scores = b.op("MatMul", {x, b.op("Transpose", {x}, {{"perm", attr_is({0, 2, 1})}})});
  b.output(b.op("Softmax", {scores}, {{"axis", attr_i(-1)}}));
  b.output(b.op("ReduceSum", {x, b.constant_i64({1}, {1})}));
  auto g = b.finish();
  prepare_graph(*g, CompileOptions{});
  expect_instances_match(*g, {f32({2, 3, 4})}, {{{2, 5, 4}}, {{1, 1, 4}}, {{3, 2, 4}}});
}

TEST(SymbolicKernels, ACacheConcatenatedAndPositionsFromThePastLength) {
  // A decoder's step: past [B, P, 4] and new [B, S, 4] concatenated along the symbolic dim
  // (offset P, known at run time), positions Range(P, P + S) read from a table.
  GraphBuilder b;
  Value* past = sym_input(b, "past", {{"B", 0}, {"P", 0}, {"", 4}});
  Value* x = sym_input(b, "x", {{"B", 0}, {"S", 0}, {"", 4}});
  b.output(b.op("Concat", {past, x}, {{"axis", attr_i(1)}}));
  auto dim = [&](Value* v, int64_t d) {
    return b.op("Gather", {b.op("Shape", {v}), b.constant_i64({}, {d})});
  };
  Value* p = dim(past, 1);
  Value* pos = b.op("Range", {p, b.op("Add", {p, dim(x, 1)}), b.constant_i64({}, {1})});
  b.output(b.op("Add", {x, b.op("Gather", {b.constant_f32({64, 4}, random_floats(256, 4)), pos})}));
  auto g = b.finish();
  prepare_graph(*g, CompileOptions{});
  expect_instances_match(*g, {f32({2, 3, 4}), f32({2, 5, 4})},
                         {{{2, 3, 4}, {2, 5, 4}},
                          {{1, 7, 4}, {1, 1, 4}},
                          {{3, 2, 4}, {3, 9, 4}},
                          {{2, 40, 4}, {2, 1, 4}}});
}

TEST(SymbolicKernels, ReshapesThatMergeSymbolicDims) {
  // [B, S, 8] -> [B*S, 8] (Reshape -1) and [B, S*8] (Flatten at 1), each through a kernel.
  GraphBuilder b;
  Value* x = sym_input(b, "x", {{"B", 0}, {"S", 0}, {"", 8}});
  b.output(b.op("Relu", {b.op("Reshape", {x, b.constant_i64({2}, {-1, 8})})}));
  b.output(b.op("Exp", {b.op("Flatten", {b.op("Neg", {x})}, {{"axis", attr_i(1)}})}));
  b.output(b.op("Unsqueeze", {b.op("Sigmoid", {x}), b.constant_i64({1}, {1})}));
  auto g = b.finish();
  prepare_graph(*g, CompileOptions{});
  expect_instances_match(*g, {f32({3, 4, 8})}, {{{2, 5, 8}}, {{6, 2, 8}}, {{3, 4, 8}}});
}

TEST(SymbolicKernels, KernelsEqualOnlyAtTheHintsAreNotFused) {
  // N and M are both 3 at the hints: the kernels over [N, M] and [M, N] have the same
  // ranges there, but one loop nest for both would be wrong at any other size.
  GraphBuilder b;
  Value* in = sym_input(b, "x", {{"N", 0}, {"M", 0}});
  b.output(b.op("Exp", {in}));
  b.output(b.op("Exp", {b.op("Transpose", {in}, {{"perm", attr_is({1, 0})}})}));
  auto g = b.finish();
  prepare_graph(*g, CompileOptions{});
  const SymbolicPlan sp = compile_symbolic(*g, {f32({3, 3})}, CompileOptions{});
  std::vector<int64_t> values;
  ASSERT_TRUE(sp.shapes.values_for({{2, 5}}, &values));
  const Plan plan = instantiate_plan(sp, values, CompileOptions{});
  const std::vector<float> x = random_floats(10, 5);
  std::vector<float> e(10), et(10);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 5; ++j) {
      e[i * 5 + j] = std::exp(x[i * 5 + j]);
      et[j * 2 + i] = e[i * 5 + j];
    }
  for (const char* backend : {"reference", "portable"}) {
    const std::vector<Tensor> out = run_plan(plan, backend, Tensor(DType::F32, {2, 5}, x.data()));
    ASSERT_EQ(out[1].shape(), (std::vector<int64_t>{5, 2}));
    expect_near(out[0], e, 1e-6f);
    expect_near(out[1], et, 1e-6f);
  }
}

TEST(SymbolicKernels, ShapeArithmeticAndASliceGuardedByItsBound) {
  // y = x + positions[:N] (positions a [16, 4] table), N read through Shape -> Gather ->
  // Unsqueeze as exporters write it: the slice is of the table's 16 rows only while N <= 16,
  // which the plan assumes (a guard); y also goes through a Reshape to [N * 2, 2] computed
  // from the shape, and a ConstantOfShape of x's shape.
  GraphBuilder b;
  Value* x = sym_input(b, "x", {{"N", 0}, {"", 4}});
  Value* shape = b.op("Shape", {x});
  Value* n = b.op("Unsqueeze",
                  {b.op("Gather", {shape, b.constant_i64({}, {0})}), b.constant_i64({1}, {0})});
  Value* pos = b.op("Slice", {b.constant_f32({16, 4}, random_floats(64, 9)),
                              b.constant_i64({1}, {0}), n, b.constant_i64({1}, {0})});
  Value* y = b.op("Add", {x, pos});
  Value* n2 = b.op("Mul", {n, b.constant_i64({1}, {2})});
  b.output(
      b.op("Reshape", {y, b.op("Concat", {n2, b.constant_i64({1}, {2})}, {{"axis", attr_i(0)}})}));
  b.output(b.op("ConstantOfShape", {shape}));
  auto g = b.finish();
  prepare_graph(*g, CompileOptions{});
  const SymbolicPlan sp = compile_symbolic(*g, {f32({3, 4})}, CompileOptions{});
  ASSERT_EQ(sp.guards.size(), 1u);
  std::vector<int64_t> values;
  ASSERT_TRUE(sp.shapes.values_for({{17, 4}}, &values));
  EXPECT_FALSE(guards_hold(sp.guards, values));  // the slice would be clamped to 16 rows
  EXPECT_THROW(instantiate_plan(sp, values, CompileOptions{}), Error);
  expect_instances_match(*g, {f32({3, 4})}, {{{2, 4}}, {{16, 4}}, {{1, 4}}, {{9, 4}}});
}

TEST(SymbolicKernels, WhatIsNotSymbolicYetSaysWhere) {
  // A mean over a symbolic dim (its count would be a symbol), and a reshape whose sizes are
  // constants that fit the hints only.
  for (const char* op : {"ReduceMean", "Reshape"}) {
    GraphBuilder b;
    Value* x = sym_input(b, "x", {{"N", 0}, {"", 4}});
    if (std::string(op) == "ReduceMean")
      b.output(b.op("ReduceMean", {x}, {{"axes", attr_is({0})}}));
    else
      b.output(b.op("Relu", {b.op("Reshape", {x, b.constant_i64({2}, {4, 3})})}));
    auto g = b.finish();
    prepare_graph(*g, CompileOptions{});
    try {
      compile_symbolic(*g, {f32({3, 4})}, CompileOptions{});
      FAIL() << op << " compiled symbolically";
    } catch (const NotSymbolicError& e) {
      EXPECT_NE(std::string(e.what()).find(op), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace ferrite
