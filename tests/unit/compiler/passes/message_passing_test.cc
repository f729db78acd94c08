// fuse_message_passing and the SegmentReduce extern: GCN-style gather -> scale ->
// scatter-add (and max / min, into zeros or into data) -> epilogue becomes one
// SegmentReduce with post-ops whose values are the unfused graph's on every backend, the
// same bits for 1 and 2 threads; what the extern does not take (per-element weights) falls
// back to the unfused nodes; bad indices are errors naming the node; a changed index
// tensor is not served a stale sort.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "compiler/compile.h"
#include "compiler/graph/ferrite_ops.h"
#include "compiler/plan/error.h"
#include "runtime/backend.h"
#include "tests/unit/compiler/lower/run_graph.h"

namespace ferrite {
namespace {

using lower_test::random_floats;
using lower_test::values_of;

constexpr int64_t kNodes = 37, kEdges = 301;

struct Gnn {
  std::string reduction = "add";
  bool weighted = true;
  bool per_element_weight = false;  // [E, F] weights: not the extern's
  bool zero_data = true;
  bool nan = false;  // NaN features in x
  // Odd: vector tails. 437 = 27 vectors of 16 and 5: more than the JIT's 24 accumulators.
  int64_t features = 35;
  bool gather_elements = false;  // GatherElements by src expanded to [E, F], not Gather
  bool scatter_nd = false;       // ScatterND by dst as a column, not ScatterElements
  int64_t expand_to = -1;        // the expanded indices' F (-1: the features)
};

// x [N, F] -> h = x * 2 -> ScatterElements(data, expand(dst), h[src] * w) + h + bias -> relu.
std::unique_ptr<Graph> build(const Gnn& p, bool fuse) {
  GraphBuilder b;
  Value* x = b.input("x", DType::F32, {kNodes, p.features});
  Value* src = b.input("src", DType::I64, {kEdges});
  Value* dst = b.input("dst", DType::I64, {kEdges});
  Value* w = b.input("w", DType::F32, {kEdges, p.per_element_weight ? p.features : 1});
  Value* h = b.op("Mul", {x, b.constant_f32({}, {2.0f})});
  const int64_t f = p.expand_to < 0 ? p.features : p.expand_to;
  auto column = [&](Value* v) { return b.op("Unsqueeze", {v, b.constant_i64({1}, {1})}); };
  auto expanded = [&](Value* v) {
    return b.op("Expand", {column(v), b.constant_i64({2}, {kEdges, f})});
  };
  Value* m = p.gather_elements ? b.op("GatherElements", {h, expanded(src)}, {{"axis", attr_i(0)}})
                               : b.op("Gather", {h, src}, {{"axis", attr_i(0)}});
  if (p.weighted) m = b.op("Mul", {w, m});
  std::vector<float> init(static_cast<size_t>(kNodes * p.features), 0.0f);
  if (!p.zero_data) init = random_floats(init.size(), 7);
  Value* data = b.constant_f32({kNodes, p.features}, init);
  Value* out = p.scatter_nd
                   ? b.op("ScatterND", {data, column(dst), m}, {{"reduction", attr_s(p.reduction)}})
                   : b.op("ScatterElements", {data, expanded(dst), m},
                          {{"axis", attr_i(0)}, {"reduction", attr_s(p.reduction)}});
  b.last_node()->name = "scatter";
  // GCN's epilogue: + another activation, + a bias, relu.
  Value* bias = b.constant_f32({p.features}, random_floats(p.features, 9));
  b.output(b.op("Relu", {b.op("Add", {b.op("Add", {out, h}), bias})}));
  std::unique_ptr<Graph> g = b.finish();
  CompileOptions o;
  o.fuse = fuse;
  prepare_graph(*g, o);
  return g;
}

std::vector<Tensor> inputs(const Gnn& p, uint32_t seed) {
  std::vector<float> x = random_floats(kNodes * p.features, seed);
  if (p.nan) x[5 * p.features + 20] = x[6 * p.features + p.features - 2] = std::nanf("");  // tail
  std::vector<int64_t> src(kEdges), dst(kEdges);
  for (int64_t e = 0; e < kEdges; ++e) {
    src[static_cast<size_t>(e)] = (e * 7 + seed) % kNodes - (e % 5 == 0 ? kNodes : 0);
    dst[static_cast<size_t>(e)] = (e * e + 3 * seed) % (kNodes - 3);  // rows 34..36: no edges
  }
  std::vector<float> w = random_floats(
      static_cast<size_t>(kEdges * (p.per_element_weight ? p.features : 1)), seed + 1);
  std::vector<Tensor> t;
  t.emplace_back(DType::F32, std::vector<int64_t>{kNodes, p.features}, x.data());
  t.emplace_back(DType::I64, std::vector<int64_t>{kEdges}, src.data());
  t.emplace_back(DType::I64, std::vector<int64_t>{kEdges}, dst.data());
  t.emplace_back(DType::F32, std::vector<int64_t>{kEdges, p.per_element_weight ? p.features : 1},
                 w.data());
  return t;
}

int count_op(const Graph& g, const std::string& op) {
  int n = 0;
  for (const auto& node : g.nodes) n += node->op_type == op;
  return n;
}

int count_externs(const Plan& plan, ExternOp op) {
  int n = 0;
  for (const auto& e : plan.externs) n += e.op == op;
  return n;
}

std::vector<float> run(const Graph& g, const std::vector<Tensor>& in, const std::string& backend,
                       int threads, Plan* plan = nullptr) {
  std::vector<TensorType> types;
  for (const Value* v : g.inputs) types.push_back(v->type);
  Plan p = compile_graph(g, types, CompileOptions());
  SessionOptions opts;
  opts.backend = backend;
  opts.threads = threads;
  Session s(p, opts);
  std::vector<const Tensor*> ptrs;
  for (const auto& t : in) ptrs.push_back(&t);
  std::vector<float> out = values_of<float>(s.run(ptrs)[0]);
  if (plan) *plan = std::move(p);
  return out;
}

void expect_matches_unfused(const Gnn& p) {
  std::unique_ptr<Graph> fused = build(p, true), unfused = build(p, false);
  EXPECT_EQ(count_op(*fused, "ScatterElements"), 0);
  EXPECT_EQ(count_op(*fused, "SegmentReduce"), 1);
  EXPECT_EQ(count_op(*unfused, "SegmentReduce"), 0);
  const std::vector<Tensor> in = inputs(p, 3);
  const std::vector<float> want = run(*unfused, in, "reference", 1);
  for (const std::string& backend : backend_names()) {
    SCOPED_TRACE(backend);
    Plan plan;
    const std::vector<float> one = run(*fused, in, backend, 1, &plan);
    const bool takes = !p.per_element_weight && p.expand_to < 0;
    EXPECT_EQ(count_externs(plan, ExternOp::SegmentReduce), takes ? 1 : 0);
    for (const ExternCall& e : plan.externs) {
      if (e.op != ExternOp::SegmentReduce) continue;
      ASSERT_EQ(e.post_ops.size(), 3u);  // the epilogue, fused
      EXPECT_EQ(e.post_ops[2].kind, PostOpKind::Relu);
    }
    EXPECT_EQ(count_externs(plan, p.scatter_nd ? ExternOp::ScatterND : ExternOp::ScatterElements),
              takes ? 0 : 1);
    ASSERT_EQ(one.size(), want.size());
    int nans = 0;
    for (size_t i = 0; i < want.size(); ++i) {
      nans += std::isnan(want[i]);
      if (std::isnan(want[i])) {
        ASSERT_TRUE(std::isnan(one[i])) << "at " << i;
      } else {
        ASSERT_NEAR(one[i], want[i], 1e-5f * (1 + std::abs(want[i]))) << "at " << i;
      }
    }
    EXPECT_EQ(nans > 0, p.nan);
    const std::vector<float> two = run(*fused, in, backend, 2);
    ASSERT_EQ(std::memcmp(one.data(), two.data(), one.size() * sizeof(float)), 0);
  }
}

TEST(MessagePassing, WeightedSumIntoZeros) {
  expect_matches_unfused(Gnn{});
}

TEST(MessagePassing, MaxAndMinIntoData) {
  for (const char* r : {"max", "min"}) {
    SCOPED_TRACE(r);
    Gnn p;
    p.reduction = r;
    p.zero_data = false;
    p.nan = true;
    expect_matches_unfused(p);
  }
}

TEST(MessagePassing, WideRowsMaxIntoData) {
  Gnn p;
  p.features = 437;
  p.reduction = "max";
  p.zero_data = false;
  expect_matches_unfused(p);
  p.reduction = "add";
  p.nan = true;
  expect_matches_unfused(p);
}

TEST(MessagePassing, UnweightedSum) {
  Gnn p;
  p.weighted = false;
  expect_matches_unfused(p);
}

// torch's other exports: x.gather(0, src[:, None].expand(-1, F)) and
// out.index_put_((dst,), m, accumulate=True).
TEST(MessagePassing, GatherElementsAndScatterNd) {
  Gnn p;
  p.gather_elements = true;
  expect_matches_unfused(p);
  p.gather_elements = false;
  p.scatter_nd = true;
  expect_matches_unfused(p);
  p.gather_elements = true;
  p.zero_data = false;
  expect_matches_unfused(p);
}

// Indices expanded to fewer features than the rows have: the scatter writes only the
// leading columns; the extern does not take that, the unfused nodes do.
TEST(MessagePassing, NarrowerExpandedIndexLowersTheUnfusedNodes) {
  Gnn p;
  p.expand_to = 20;
  p.weighted = false;
  p.gather_elements = true;
  expect_matches_unfused(p);
}

TEST(MessagePassing, PerElementWeightsLowerTheUnfusedNodes) {
  Gnn p;
  p.per_element_weight = true;
  expect_matches_unfused(p);
}

TEST(MessagePassing, OutOfRangeIndexNamesTheNode) {
  std::unique_ptr<Graph> g = build(Gnn{}, true);
  for (const std::string& backend : backend_names()) {
    SCOPED_TRACE(backend);
    std::vector<Tensor> in = inputs(Gnn{}, 3);
    in[2].as<int64_t>()[5] = kNodes;  // dst
    try {
      run(*g, in, backend, 1);
      ADD_FAILURE() << "no error";
    } catch (const Error& e) {
      const std::string msg = e.what();
      EXPECT_NE(msg.find("'scatter'"), std::string::npos) << msg;  // the node's name
      EXPECT_NE(msg.find("dst[5] = 37 is out of range"), std::string::npos) << msg;
    }
  }
}

// One session, three runs: the sort built for the first indices must not serve changed ones.
TEST(MessagePassing, ChangedIndicesAreResorted) {
  std::unique_ptr<Graph> fused = build(Gnn{}, true), unfused = build(Gnn{}, false);
  std::vector<TensorType> types;
  for (const Value* v : fused->inputs) types.push_back(v->type);
  const Plan plan = compile_graph(*fused, types, CompileOptions());
  for (const std::string& backend : backend_names()) {
    SCOPED_TRACE(backend);
    SessionOptions opts;
    opts.backend = backend;
    Session s(plan, opts);
    std::vector<Tensor> in = inputs(Gnn{}, 3);
    for (int round = 0; round < 3; ++round) {
      if (round == 1) in[2].as<int64_t>()[7] = (in[2].as<int64_t>()[7] + 1) % kNodes;
      if (round == 2) in[1].as<int64_t>()[kEdges - 1] = 0;
      const std::vector<float> want = run(*unfused, in, "reference", 1);
      std::vector<const Tensor*> ptrs;
      for (const auto& t : in) ptrs.push_back(&t);
      const std::vector<float> got = values_of<float>(s.run(ptrs)[0]);
      for (size_t i = 0; i < want.size(); ++i)
        ASSERT_NEAR(got[i], want[i], 1e-5f * (1 + std::abs(want[i]))) << round << " at " << i;
    }
  }
}

}  // namespace
}  // namespace ferrite
