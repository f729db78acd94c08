// compile_symbolic and instantiate_plan (docs/shapes.md): a graph compiled once for its
// symbolic dims gives, at every size, the plan compile_graph makes for that size (the
// oracle: the compiler itself, per shape), and runs to values worked out here; what is not
// symbolic yet says where, and sizes outside the symbols' range are refused.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "compiler/compile.h"
#include "compiler/plan/error.h"
#include "compiler/plan/resource_limits.h"
#include "runtime/session.h"
#include "tests/unit/compiler/lower/run_graph.h"

namespace ferrite {
namespace {

using namespace lower_test;

constexpr int64_t kIn = 8, kHidden = 16, kOut = 4;

struct Mlp {
  std::unique_ptr<Graph> g;
  std::vector<float> w1, b1, w2, b2;
};

// x [N, 8] -> Gemm(w1 [16, 8], transB) + b1 -> Relu -> Gemm(w2 [16, 4]) + b2 -> y [N, 4].
Mlp mlp() {
  Mlp m;
  m.w1 = random_floats(kHidden * kIn, 1);
  m.b1 = random_floats(kHidden, 2);
  m.w2 = random_floats(kHidden * kOut, 3);
  m.b2 = random_floats(kOut, 4);
  GraphBuilder b;
  Value* x = b.input("x", DType::F32, {-1, kIn});
  x->type.dim_names = {"N", ""};
  Value* h =
      b.op("Gemm", {x, b.constant_f32({kHidden, kIn}, m.w1), b.constant_f32({kHidden}, m.b1)},
           {{"transB", attr_i(1)}});
  Value* r = b.op("Relu", {h});
  b.output(b.op("Gemm", {r, b.constant_f32({kHidden, kOut}, m.w2), b.constant_f32({kOut}, m.b2)}));
  m.g = b.finish();
  prepare_graph(*m.g, CompileOptions{});  // the epilogue fusion passes, as the engine runs
  return m;
}

std::vector<TensorType> batch(int64_t n) {
  return {TensorType{DType::F32, {n, kIn}, {}, true}};
}

std::vector<float> mlp_values(const Mlp& m, const std::vector<float>& x, int64_t n) {
  std::vector<float> y(static_cast<size_t>(n * kOut));
  for (int64_t i = 0; i < n; ++i) {
    std::vector<float> h(kHidden);
    for (int64_t j = 0; j < kHidden; ++j) {
      float s = m.b1[j];
      for (int64_t k = 0; k < kIn; ++k) s += x[i * kIn + k] * m.w1[j * kIn + k];
      h[j] = std::max(s, 0.f);
    }
    for (int64_t o = 0; o < kOut; ++o) {
      float s = m.b2[o];
      for (int64_t j = 0; j < kHidden; ++j) s += h[j] * m.w2[j * kOut + o];
      y[i * kOut + o] = s;
    }
  }
  return y;
}

TEST(SymbolicCompile, MlpInstancesAreThePlansCompiledPerShape) {
  const Mlp m = mlp();
  const SymbolicPlan sp = compile_symbolic(*m.g, batch(3), CompileOptions{});
  ASSERT_EQ(sp.shapes.symbols.size(), 1u);
  EXPECT_EQ(sp.shapes.symbols[0].name, "N");
  EXPECT_FALSE(sp.formulas.empty());
  EXPECT_NE(formulas_to_string(sp.formulas).find("buffer shape 0 dim 0 = s0"), std::string::npos);
  for (int64_t n : {2, 3, 5, 17, 64, 1}) {
    std::vector<int64_t> values;
    ASSERT_TRUE(sp.shapes.values_for({{n, kIn}}, &values));
    const Plan plan = instantiate_plan(sp, values, CompileOptions{});
    EXPECT_EQ(plan_to_string(plan), plan_to_string(compile_graph(*m.g, batch(n), {}))) << "N=" << n;
    const std::vector<float> x = random_floats(static_cast<size_t>(n * kIn), 10 + n);
    for (const char* backend : {"reference", "portable"}) {
      SessionOptions opts;
      opts.backend = backend;
      Session s(plan, opts);
      const Tensor xt(DType::F32, {n, kIn}, x.data());
      const std::vector<Tensor> out = s.run({&xt});
      ASSERT_EQ(out[0].shape(), (std::vector<int64_t>{n, kOut}));
      expect_near(out[0], mlp_values(m, x, n), 1e-4f);
    }
  }
}

TEST(SymbolicCompile, WhatIsNotSymbolicYetSaysWhere) {
  GraphBuilder b;
  Value* x = b.input("x", DType::F32, {-1, 3});
  x->type.dim_names = {"N", ""};
  b.output(b.op("CumSum", {x, b.constant_i64({}, {0})}));
  auto g = b.finish();
  try {
    compile_symbolic(*g, {TensorType{DType::F32, {4, 3}, {}, true}}, CompileOptions{});
    FAIL() << "compiled symbolically";
  } catch (const NotSymbolicError& e) {
    EXPECT_NE(std::string(e.what()).find("CumSum"), std::string::npos) << e.what();
  }
  // Static inputs have no symbols to compile for.
  GraphBuilder s;
  s.output(s.op("Exp", {s.input("x", DType::F32, {2, 3})}));
  EXPECT_THROW(compile_symbolic(*s.finish(), {TensorType{DType::F32, {2, 3}, {}, true}}, {}),
               NotSymbolicError);
}

TEST(SymbolicCompile, InnerDimsOfTwoSymbolsAreNotAssumedEqual) {
  // K and M are equal at the hints, but not at every size: a plan for all would be wrong.
  GraphBuilder b;
  Value* x = b.input("x", DType::F32, {-1, -1});
  x->type.dim_names = {"N", "K"};
  Value* w = b.input("w", DType::F32, {-1, 4});
  w->type.dim_names = {"M", ""};
  b.output(b.op("MatMul", {x, w}));
  auto g = b.finish();
  const std::vector<TensorType> hints{TensorType{DType::F32, {2, 5}, {}, true},
                                      TensorType{DType::F32, {5, 4}, {}, true}};
  try {
    compile_symbolic(*g, hints, CompileOptions{});
    FAIL() << "compiled symbolically";
  } catch (const NotSymbolicError& e) {
    EXPECT_NE(std::string(e.what()).find("inner dims"), std::string::npos) << e.what();
  }
}

TEST(SymbolicCompile, SizesOutsideTheSymbolsAreRefused) {
  const Mlp m = mlp();
  // A compile is not hinted by a size of 1 (a lowering reading that hint would broadcast
  // it), nor by a changed static dim; an instance may be of size 1, but not 0.
  EXPECT_THROW(compile_symbolic(*m.g, batch(1), {}), NotSymbolicError);
  EXPECT_THROW(compile_symbolic(*m.g, {TensorType{DType::F32, {3, 9}, {}, true}}, {}),
               NotSymbolicError);
  const SymbolicPlan sp = compile_symbolic(*m.g, batch(2), {});
  std::vector<int64_t> v;
  EXPECT_TRUE(sp.shapes.values_for({{1, kIn}}, &v));
  EXPECT_FALSE(sp.shapes.values_for({{0, kIn}}, &v));
  EXPECT_FALSE(sp.shapes.values_for({{4, kIn + 1}}, &v));
  EXPECT_FALSE(sp.shapes.values_for({{4, kIn, 1}}, &v));
  EXPECT_FALSE(sp.shapes.values_for({{int64_t{1} << 31, kIn}}, &v));
  EXPECT_TRUE(sp.shapes.values_for({{(int64_t{1} << 31) - 1, kIn}}, &v));
  // The largest batch is a plan past the memory limit: the compile's own error, per size.
  CompileOptions small;
  small.memory_limit = int64_t{1} << 20;
  EXPECT_THROW(instantiate_plan(sp, v, small), LimitError);
  EXPECT_THROW(instantiate_plan(sp, {}, {}), Error);
}

TEST(SymbolicCompile, OneNameIsOneSymbol) {
  // a and b share N: one symbol, and shapes that feed it two sizes do not fit.
  GraphBuilder b;
  Value* a = b.input("a", DType::F32, {-1, 3});
  Value* c = b.input("b", DType::F32, {-1, 3});
  a->type.dim_names = c->type.dim_names = {"N", ""};
  b.output(a);
  auto g = b.finish();
  const ShapeEnv env = ShapeEnv::for_inputs(
      {a->type, c->type},
      {TensorType{DType::F32, {4, 3}, {}, true}, TensorType{DType::F32, {4, 3}, {}, true}});
  ASSERT_EQ(env.symbols.size(), 1u);
  std::vector<int64_t> v;
  EXPECT_TRUE(env.values_for({{6, 3}, {6, 3}}, &v));
  EXPECT_EQ(v, (std::vector<int64_t>{6}));
  EXPECT_FALSE(env.values_for({{6, 3}, {5, 3}}, &v));
  EXPECT_THROW(ShapeEnv::for_inputs({a->type, c->type}, {TensorType{DType::F32, {4, 3}, {}, true},
                                                         TensorType{DType::F32, {5, 3}, {}, true}}),
               Error);
}

}  // namespace
}  // namespace ferrite
