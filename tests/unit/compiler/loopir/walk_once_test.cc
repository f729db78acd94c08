// KernelBuilder's memoized walks (walk_once), which make tracing a chain of inlined values
// linear: each definition is walked once per index, and a memoized walk adds the same
// counts and gives the same value as walking it again.
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "compiler/loopir/ir.h"

namespace ferrite {
namespace {

std::vector<Index> identity(size_t rank) {
  std::vector<Index> idx;
  for (size_t d = 0; d < rank; ++d) idx.push_back(ix_var(static_cast<int>(d)));
  return idx;
}

struct Counts {
  int loads, compute, variable, height;
};

Counts trace(KernelBuilder& b, const TensorBoxPtr& t, V* value = nullptr) {
  const int loads = b.num_loads(), compute = b.num_compute(), variable = b.num_variable_loads();
  b.reset_walk_height();
  V v = t->load(b, identity(t->size.size()));
  if (value) *value = v;
  return {b.num_loads() - loads, b.num_compute() - compute, b.num_variable_loads() - variable,
          b.walk_height()};
}

// x (an input) and c (a constant), then a chain: each value is f(previous), where f loads
// its operand twice (a + a * c, so counted reads double) every 50th step and applies one
// op otherwise; `calls[i]` counts the walks of value i's definition.
struct Chain {
  Buffer x, c;
  std::vector<TensorBoxPtr> values;
  std::shared_ptr<std::vector<int>> calls = std::make_shared<std::vector<int>>();

  explicit Chain(int n) {
    x.name = "x";
    x.size = {4};
    x.origin = BufferOrigin::Input;
    c.name = "c";
    c.size = {4};
    c.origin = BufferOrigin::Constant;
    TensorBoxPtr prev = make_buffer_box(&x), cbox = make_buffer_box(&c);
    for (int i = 0; i < n; ++i) {
      calls->push_back(0);
      auto calls_ptr = calls;
      Loader fn = [prev, cbox, i, calls_ptr](KernelBuilder& b, const std::vector<Index>& idx) {
        ++(*calls_ptr)[static_cast<size_t>(i)];
        V a = prev->load(b, idx);
        if (i % 50 != 0) return b.unary(Op::Neg, a);
        return b.binary(Op::Add, a, b.binary(Op::Mul, prev->load(b, idx), cbox->load(b, idx)));
      };
      prev = make_pointwise_box(DType::F32, {4}, fn, "step");
      values.push_back(prev);
    }
  }
};

TEST(WalkOnce, TracingAChainWalksEachDefinitionOnce) {
  Chain chain(300);
  KernelBuilder memo("trace", {}, 0);
  memo.set_memoize(true);
  std::vector<Counts> got, again;
  for (const TensorBoxPtr& v : chain.values) {
    got.push_back(trace(memo, v));
    again.push_back(trace(memo, v));
  }
  // Each definition was walked once, however many later values inline it.
  for (size_t i = 0; i < chain.values.size(); ++i) EXPECT_EQ((*chain.calls)[i], 1) << i;
  // The counts of a builder that walks everything.
  for (size_t i = 0; i < chain.values.size(); ++i) {
    KernelBuilder fresh("fresh", {}, 0);
    const Counts want = trace(fresh, chain.values[i]);
    ASSERT_EQ(got[i].loads, want.loads) << "value " << i;
    ASSERT_EQ(got[i].compute, want.compute) << "value " << i;
    ASSERT_EQ(got[i].variable, want.variable) << "value " << i;
    ASSERT_EQ(got[i].height, want.height) << "value " << i;
    ASSERT_EQ(got[i].height, static_cast<int>(i) + 1);
    ASSERT_EQ(again[i].loads, want.loads) << "value " << i;
    ASSERT_EQ(again[i].compute, want.compute) << "value " << i;
  }
  // Loads of x doubled at values 0, 50, ..., 250, each doubling with a load of c.
  EXPECT_EQ(got.back().variable, 64);
  EXPECT_EQ(got.back().loads, 127);
}

TEST(WalkOnce, MemoizedValueIsTheWalkedValue) {
  Chain chain(10);
  KernelBuilder memo("trace", {}, 0);
  memo.set_memoize(true);
  V first, second;
  trace(memo, chain.values[5], &first);
  trace(memo, chain.values[5], &second);
  EXPECT_EQ(first.id, second.id);
  // Through CSE, a builder that walks again gives the same instruction too.
  KernelBuilder fresh("fresh", {}, 0);
  V a, b;
  trace(fresh, chain.values[5], &a);
  trace(fresh, chain.values[5], &b);
  EXPECT_EQ(a.id, b.id);
}

TEST(WalkOnce, ConstantOnlyDefinitionsHaveNoVariableLoads) {
  Buffer c;
  c.size = {4};
  c.origin = BufferOrigin::Constant;
  TensorBoxPtr cbox = make_buffer_box(&c);
  TensorBoxPtr sq = make_pointwise_box(
      DType::F32, {4},
      [cbox](KernelBuilder& b, const std::vector<Index>& i) {
        return b.binary(Op::Mul, cbox->load(b, i), cbox->load(b, i));
      },
      "square");
  KernelBuilder memo("trace", {}, 0);
  memo.set_memoize(true);
  Counts first = trace(memo, sq);
  EXPECT_EQ(first.loads, 2);
  EXPECT_EQ(first.variable, 0);
  // A buffer that stops being constant (the opposite of what folding does) shows only
  // after the memoized walks are forgotten.
  c.origin = BufferOrigin::Computed;
  EXPECT_EQ(trace(memo, sq).variable, 0);
  memo.forget_walks();
  EXPECT_EQ(trace(memo, sq).variable, 2);
}

}  // namespace
}  // namespace ferrite
