// Long chains compile in time linear in their length and with a bounded stack: inlining
// stops at a bounded depth (GraphLowering's kMaxInlineDepth) and fusion joins the pieces
// into one kernel again. Values against a direct computation, on every backend.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "compiler/compile.h"
#include "tests/unit/compiler/lower/run_graph.h"

namespace ferrite {
namespace {

using namespace lower_test;

class LongChain : public ::testing::TestWithParam<std::string> {};

// A chain of 20,000 Relu / Neg / Abs nodes: inlined whole it needed a stack of hundreds of
// MB (a segfault) and tracing it took O(N^2).
TEST_P(LongChain, PointwiseChainIsOneKernel) {
  constexpr int kNodes = 20000;
  const char* ops[] = {"Neg", "Relu", "Neg", "Abs"};
  GraphBuilder b;
  Value* v = b.input("x", DType::F32, {2, 3});
  for (int i = 0; i < kNodes; ++i) v = b.op(ops[i % 4], {v});
  b.output(v);
  auto g = b.finish();
  auto xs = random_floats(6, 7);
  Compiled r = run_graph(*g, tensors(Tensor(DType::F32, {2, 3}, xs.data())), GetParam());
  std::vector<float> want = xs;
  for (int i = 0; i < kNodes; ++i) {
    for (float& w : want) {
      const std::string op = ops[i % 4];
      w = op == "Neg" ? -w : op == "Relu" ? std::max(w, 0.f) : std::fabs(w);
    }
  }
  expect_near(r.outputs[0], want, 0);
  EXPECT_EQ(r.plan.kernels.size(), 1u);
}

// 3,000 views (Transpose, Reshape to 1-D, Reshape back): strides cannot express a
// transposed tensor flattened, so the composed index grew exponentially with the chain.
TEST_P(LongChain, ViewChainIsCopiedWhereItsIndexGrows) {
  constexpr int kNodes = 3000;
  GraphBuilder b;
  Value* v = b.input("x", DType::F32, {3, 5});
  std::vector<int64_t> shape = {3, 5};
  std::vector<int> order(15);  // order[i]: the element of x at flat position i of v
  for (int i = 0; i < 15; ++i) order[i] = i;
  for (int i = 0; i < kNodes; ++i) {
    if (i % 3 == 0) {
      v = b.op("Transpose", {v}, {{"perm", attr_is({1, 0})}});
      std::vector<int> t(15);
      for (int r = 0; r < shape[1]; ++r)
        for (int c = 0; c < shape[0]; ++c) t[r * shape[0] + c] = order[c * shape[1] + r];
      order = t;
      std::swap(shape[0], shape[1]);
    } else {
      v = b.op("Reshape", {v, b.constant_i64({i % 3 == 1 ? 1 : 2},
                                             i % 3 == 1 ? std::vector<int64_t>{15} : shape)});
    }
  }
  b.output(b.op("Neg", {v}));
  auto g = b.finish();
  auto xs = random_floats(15, 8);
  Compiled r = run_graph(*g, tensors(Tensor(DType::F32, {3, 5}, xs.data())), GetParam());
  std::vector<float> want(15);
  for (int i = 0; i < 15; ++i) want[i] = -xs[order[i]];
  ASSERT_EQ(r.outputs[0].shape(), shape);
  expect_near(r.outputs[0], want, 0);
}

#ifdef FERRITE_HAS_JIT
INSTANTIATE_TEST_SUITE_P(Backends, LongChain, ::testing::Values("reference", "portable", "jit"));
#else
INSTANTIATE_TEST_SUITE_P(Backends, LongChain, ::testing::Values("reference", "portable"));
#endif

}  // namespace
}  // namespace ferrite
