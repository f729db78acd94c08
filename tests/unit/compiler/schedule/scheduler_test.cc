// The scheduler: dependencies, each fusion rule (fused and refused), and that fused plans
// compute what unfused ones do.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>

#include "compiler/graph/graph.h"
#include "compiler/lower/graph_lowering.h"
#include "compiler/schedule/scheduler.h"
#include "tests/unit/compiler/lower/run_graph.h"

namespace ferrite {
namespace {

using lower_test::Compiled;
using lower_test::random_floats;
using lower_test::run_graph;
using lower_test::tensors;

struct Lowered {
  std::unique_ptr<Graph> g;
  LoweredProgram prog;
};

Lowered lower(std::unique_ptr<Graph> g) {
  Lowered l;
  std::vector<TensorType> types;
  for (const Value* v : g->inputs) types.push_back(v->type);
  l.prog = GraphLowering(*g, types).run();
  l.g = std::move(g);
  return l;
}

// Compiles with and without fusion, runs both on every backend and expects equal outputs.
// Returns the fused plan's kernel count.
size_t check_fused_equals_unfused(const Graph& g, const std::vector<Tensor>& inputs) {
  CompileOptions unfused;
  unfused.fuse = false;
  size_t kernels = 0;
  for (const char* backend : {"reference", "portable"}) {
    Compiled u = run_graph(g, inputs, backend, {}, unfused);
    Compiled f = run_graph(g, inputs, backend);
    EXPECT_LE(f.plan.kernels.size(), u.plan.kernels.size());
    kernels = f.plan.kernels.size();
    for (size_t o = 0; o < u.outputs.size(); ++o) {
      const Tensor& a = u.outputs[o];
      const Tensor& b = f.outputs[o];
      EXPECT_EQ(a.elements(), b.elements());
      for (int64_t i = 0; i < a.elements(); ++i)
        EXPECT_NEAR(a.as<float>()[i], b.as<float>()[i], 1e-5 * (1 + std::fabs(a.as<float>()[i])))
            << backend << " output " << o << " element " << i;
    }
  }
  return kernels;
}

Tensor random_tensor(std::vector<int64_t> shape, uint32_t seed) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  auto xs = random_floats(static_cast<size_t>(n), seed);
  return Tensor(DType::F32, shape, xs.data());
}

const FusionDecision* find_decision(const Scheduler& s, const std::string& reason_part) {
  for (const FusionDecision& d : s.decisions())
    if (!d.fused && d.reason.find(reason_part) != std::string::npos) return &d;
  return nullptr;
}

int fused_count(const Scheduler& s) {
  int n = 0;
  for (const FusionDecision& d : s.decisions()) n += d.fused;
  return n;
}

TEST(SchedulerTest, DependenciesCarryIndexesAndKinds) {
  // e = exp(x) (two users, realized); m = MatMul(e, w) (an extern); y = e + m.
  GraphBuilder b;
  Value* x = b.input("x", DType::F32, {4, 4});
  Value* w = b.input("w", DType::F32, {4, 4});
  Value* e = b.op("Exp", {b.op("Sigmoid", {x})});
  Value* m = b.op("MatMul", {e, w});
  b.output(b.op("Add", {e, m}));
  Lowered l = lower(b.finish());
  Scheduler s(l.prog);
  std::vector<const SchedulerNode*> order = s.order();
  ASSERT_EQ(order.size(), 3u);  // kernel e, extern MatMul, kernel y
  const SchedulerNode& ke = *order[0];
  const SchedulerNode& mm = *order[1];
  const SchedulerNode& ky = *order[2];
  EXPECT_FALSE(ke.is_extern());
  EXPECT_TRUE(mm.is_extern());
  ASSERT_EQ(ke.writes.size(), 1u);
  EXPECT_EQ(ke.writes[0].kind, DepKind::Memory);
  ASSERT_TRUE(ke.writes[0].index);
  EXPECT_EQ(index_to_string(*ke.writes[0].index), "((i0*4) + i1)");
  for (const Dep& d : mm.reads) EXPECT_EQ(d.kind, DepKind::Star);
  // y reads e and the MatMul's result, which reads e: y follows both.
  EXPECT_TRUE(ky.preds.size() == 2u);
  // Fusing e and y would put the MatMul both before and after their kernel.
  s.fuse();
  EXPECT_NE(find_decision(s, "cycle"), nullptr);
  EXPECT_EQ(fused_count(s), 0);
}

// y[i] = -x[i] over n floats, as a lowered kernel item.
LoweredItem neg_item(Buffer* in, Buffer* out, const std::string& name) {
  Kernel k;
  k.name = name;
  k.ranges = {in->elements()};
  k.args = {KernelArg{DType::F32, in->elements(), false},
            KernelArg{DType::F32, in->elements(), true}};
  Instr load;
  load.op = Op::Load;
  load.arg = 0;
  load.index = ix_var(0);
  Instr neg;
  neg.op = Op::Neg;
  neg.a = 0;
  Instr store;
  store.op = Op::Store;
  store.arg = 1;
  store.a = 1;
  store.index = ix_var(0);
  k.code = {load, neg, store};
  k.post_begin = 3;
  validate_kernel(k);
  LoweredItem it;
  it.computed = out;
  it.kernel = k;
  it.args = {in, out};
  return it;
}

Buffer* add_buffer(LoweredProgram& prog, const std::string& name, BufferOrigin origin) {
  auto b = std::make_unique<Buffer>();
  b->name = name;
  b->size = {16};
  b->origin = origin;
  prog.buffers.push_back(std::move(b));
  return prog.buffers.back().get();
}

TEST(SchedulerTest, WriteAfterReadIsAnOrderingDependency) {
  // t = -x; u = -t; t = -u (t written again after u read it: a write after read).
  LoweredProgram prog;
  Buffer* x = add_buffer(prog, "x", BufferOrigin::Input);
  Buffer* t = add_buffer(prog, "t", BufferOrigin::Computed);
  Buffer* u = add_buffer(prog, "u", BufferOrigin::Computed);
  prog.inputs = {x};
  prog.outputs = {t, u};
  prog.order.push_back(neg_item(x, t, "k0"));
  prog.order.push_back(neg_item(t, u, "k1"));
  prog.order.push_back(neg_item(u, t, "k2"));
  Scheduler s(prog);
  std::vector<const SchedulerNode*> order = s.order();
  ASSERT_EQ(order.size(), 3u);
  EXPECT_EQ(order[1]->preds, (std::set<int>{0}));     // reads t after k0 wrote it
  EXPECT_EQ(order[2]->preds, (std::set<int>{0, 1}));  // rewrites t: after k0 (WAW), k1 (WAR)
  s.fuse();
  // k1 + k2 would read and overwrite t in one loop nest: refused.
  EXPECT_NE(find_decision(s, "writes t, which the first one uses"), nullptr);
  ASSERT_EQ(order[2]->weak.size(), 1u);
  EXPECT_EQ(order[2]->weak[0].buffer, t);
  EXPECT_TRUE(order[1]->weak.empty());
}

TEST(SchedulerTest, EdgesGoToTheLastWriteAndTheReadsSinceOnly) {
  // k0: t = -x; k1: u = -t; k2: t = -u; k3: v = -t; k4: t = -v. k3 reads the t of k2 only;
  // k4 waits for k2 (the last write) and k3 (the read since), not for k0 and k1, which k2
  // already follows: the order is the same, and the edges stay linear in an unrolled
  // recurrence.
  LoweredProgram prog;
  Buffer* x = add_buffer(prog, "x", BufferOrigin::Input);
  Buffer* t = add_buffer(prog, "t", BufferOrigin::Computed);
  Buffer* u = add_buffer(prog, "u", BufferOrigin::Computed);
  Buffer* v = add_buffer(prog, "v", BufferOrigin::Computed);
  prog.inputs = {x};
  prog.outputs = {t, u, v};
  prog.order.push_back(neg_item(x, t, "k0"));
  prog.order.push_back(neg_item(t, u, "k1"));
  prog.order.push_back(neg_item(u, t, "k2"));
  prog.order.push_back(neg_item(t, v, "k3"));
  prog.order.push_back(neg_item(v, t, "k4"));
  Scheduler s(prog);
  std::vector<const SchedulerNode*> order = s.order();
  ASSERT_EQ(order.size(), 5u);
  EXPECT_EQ(order[3]->preds, (std::set<int>{2}));
  EXPECT_EQ(order[4]->preds, (std::set<int>{2, 3}));
  for (int i = 0; i < 5; ++i) EXPECT_EQ(order[i]->name, "k" + std::to_string(i));
}

TEST(SchedulerTest, RefusesDifferentGuards) {
  // u = -t runs only when c holds (an If branch); t = -x always: they cannot share a kernel.
  LoweredProgram prog;
  Buffer* x = add_buffer(prog, "x", BufferOrigin::Input);
  Buffer* c = add_buffer(prog, "c", BufferOrigin::Input);
  c->dtype = DType::Bool;
  c->size = {};
  Buffer* t = add_buffer(prog, "t", BufferOrigin::Computed);
  Buffer* u = add_buffer(prog, "u", BufferOrigin::Computed);
  prog.inputs = {x, c};
  prog.outputs = {t, u};
  prog.order.push_back(neg_item(x, t, "k0"));
  prog.order.push_back(neg_item(t, u, "k1"));
  prog.order.back().guards = {LoweredGuard{c, true}};
  Scheduler s(prog);
  s.fuse();
  EXPECT_NE(find_decision(s, "different guards"), nullptr);
  ASSERT_EQ(s.order().size(), 2u);
  EXPECT_EQ(s.order()[1]->guards.size(), 1u);
  // The same pair without the guard fuses.
  prog.order[1].guards.clear();
  prog.order[0] = neg_item(x, t, "k0");
  prog.order[1] = neg_item(t, u, "k1");
  Scheduler s2(prog);
  s2.fuse();
  EXPECT_EQ(s2.order().size(), 1u);
}

TEST(SchedulerTest, PointwiseIntoPointwise) {
  GraphBuilder b;
  Value* x = b.input("x", DType::F32, {3, 50});
  Value* e =
      b.op("Tanh",
           {b.op("Exp", {b.op("Sin", {b.op("Sqrt", {b.op("Abs", {x})})})})});  // costly, two users
  b.output(b.op("Mul", {b.op("Neg", {e}), b.op("Cos", {e})}));
  auto g = b.finish();
  Lowered l = lower(std::move(g));
  Scheduler s(l.prog);
  s.fuse();
  EXPECT_EQ(fused_count(s), 1);
  ASSERT_EQ(s.order().size(), 1u) << s.report();
  // e has no reader left outside the fused kernel: its store (and buffer) is gone.
  EXPECT_EQ(s.order()[0]->writes.size(), 1u);
  EXPECT_EQ(check_fused_equals_unfused(*l.g, tensors(random_tensor({3, 50}, 5))), 1u);
}

TEST(SchedulerTest, SoftmaxIsOneKernelOfThreeLoops) {
  GraphBuilder b;
  Value* x = b.input("x", DType::F32, {5, 37});
  b.output(b.op("Softmax", {x}, {{"axis", attr_i(1)}}));
  Lowered l = lower(b.finish());
  Scheduler s(l.prog);
  s.fuse();
  ASSERT_EQ(s.order().size(), 1u) << s.report();
  EXPECT_EQ(s.order()[0]->kernel.kernel.num_loops(), 3);
  EXPECT_EQ(check_fused_equals_unfused(*l.g, tensors(random_tensor({5, 37}, 7))), 1u);
}

TEST(SchedulerTest, LayerNormWithResidualIsOneKernel) {
  // The decomposed layer norm torch exports before opset 17, after a residual add.
  GraphBuilder b;
  Value* x = b.input("x", DType::F32, {4, 96});
  Value* r = b.input("r", DType::F32, {4, 96});
  Value* s = b.op("Add", {x, r});
  Value* mean = b.op("ReduceMean", {s}, {{"axes", attr_is({-1})}});
  Value* d = b.op("Sub", {s, mean});
  Value* var = b.op("ReduceMean", {b.op("Mul", {d, d})}, {{"axes", attr_is({-1})}});
  Value* eps = b.constant_f32({}, {1e-5f});
  Value* y = b.op("Div", {d, b.op("Sqrt", {b.op("Add", {var, eps})})});
  b.output(b.op("Add", {s, y}));  // s is also the next residual
  Lowered l = lower(b.finish());
  Scheduler sch(l.prog);
  sch.fuse();
  ASSERT_EQ(sch.order().size(), 1u);
  EXPECT_EQ(check_fused_equals_unfused(
                *l.g, tensors(random_tensor({4, 96}, 9), random_tensor({4, 96}, 10))),
            1u);
}

TEST(SchedulerTest, ReductionEpilogueGoesToThePostPhase) {
  GraphBuilder b;
  Value* x = b.input("x", DType::F32, {6, 33});
  Value* m = b.op("ReduceMax", {x}, {{"axes", attr_is({1})}, {"keepdims", attr_i(0)}});
  b.output(b.op("Mul", {b.op("Exp", {m}), b.op("Log", {b.op("Abs", {m})})}));
  b.output(b.op("Neg", {m}));
  Lowered l = lower(b.finish());
  Scheduler s(l.prog);
  s.fuse();
  ASSERT_EQ(s.order().size(), 1u) << s.report();
  const Kernel& k = s.order()[0]->kernel.kernel;
  EXPECT_EQ(k.num_loops(), 1);
  EXPECT_EQ(k.num_reduce, 1);
  EXPECT_EQ(check_fused_equals_unfused(*l.g, tensors(random_tensor({6, 33}, 11))), 1u);
}

TEST(SchedulerTest, SiblingsReadingOneInputFuseHorizontally) {
  // Two reductions of the same input over the same space: one pass over x.
  GraphBuilder b;
  Value* x = b.input("x", DType::F32, {7, 64});
  b.output(b.op("ReduceMin", {x}, {{"axes", attr_is({1})}}));
  b.output(b.op("ReduceMax", {x}, {{"axes", attr_is({1})}}));
  Lowered l = lower(b.finish());
  Scheduler s(l.prog);
  s.fuse();
  ASSERT_EQ(s.order().size(), 1u) << s.report();
  EXPECT_EQ(s.order()[0]->kernel.kernel.num_loops(), 1);
  EXPECT_EQ(check_fused_equals_unfused(*l.g, tensors(random_tensor({7, 64}, 13))), 1u);
}

TEST(SchedulerTest, RefusesATransposedRead) {
  // e is realized (two costly users); one consumer reads it transposed.
  GraphBuilder b;
  Value* x = b.input("x", DType::F32, {8, 8});
  Value* e = b.op("Tanh", {b.op("Exp", {b.op("Sin", {b.op("Sqrt", {b.op("Abs", {x})})})})});
  b.output(b.op("Neg", {b.op("Transpose", {e}, {{"perm", attr_is({1, 0})}})}));
  b.output(b.op("Cos", {e}));
  Lowered l = lower(b.finish());
  Scheduler s(l.prog);
  s.fuse();
  EXPECT_NE(find_decision(s, "at another index"), nullptr) << s.report();
  check_fused_equals_unfused(*l.g, tensors(random_tensor({8, 8}, 15)));
}

TEST(SchedulerTest, RefusesDifferentIterationSpaces) {
  // A row reduction and a column reduction share x: their outer spaces differ.
  GraphBuilder b;
  Value* x = b.input("x", DType::F32, {6, 10});
  b.output(b.op("ReduceMax", {x}, {{"axes", attr_is({1})}}));
  b.output(b.op("ReduceMax", {x}, {{"axes", attr_is({0})}}));
  Lowered l = lower(b.finish());
  Scheduler s(l.prog);
  s.fuse();
  EXPECT_NE(find_decision(s, "iteration spaces differ"), nullptr) << s.report();
  check_fused_equals_unfused(*l.g, tensors(random_tensor({6, 10}, 17)));
}

TEST(SchedulerTest, RefusesExternsAndKeepsTheirOperandsStored) {
  GraphBuilder b;
  Value* x = b.input("x", DType::F32, {4, 4});
  Value* w = b.input("w", DType::F32, {4, 4});
  Value* e = b.op("Exp", {x});
  b.output(b.op("Relu", {b.op("MatMul", {e, w})}));
  Lowered l = lower(b.finish());
  Scheduler s(l.prog);
  s.fuse();
  EXPECT_NE(find_decision(s, "extern"), nullptr);
  EXPECT_EQ(s.order().size(), 3u);
}

TEST(SchedulerTest, WithoutFusionEveryNodeStays) {
  GraphBuilder b;
  Value* x = b.input("x", DType::F32, {5, 37});
  b.output(b.op("Softmax", {x}, {{"axis", attr_i(1)}}));
  Lowered l = lower(b.finish());
  SchedulerOptions o;
  o.fuse = false;
  Scheduler s(l.prog, o);
  s.fuse();
  EXPECT_EQ(s.order().size(), 3u);
  EXPECT_TRUE(s.decisions().empty());
}

// a = relu(x) feeds a MatMul s; b = |MatMul(y, w)| + x reads x too. a and b fuse as
// siblings, but a comes first in program order, s (after a) reads the fused kernel, and
// the fused kernel reads p (before b): the fused node moves after p and before s.
TEST(SchedulerTest, SiblingsFuseAcrossExterns) {
  GraphBuilder b;
  Value* x = b.input("x", DType::F32, {4, 4});
  Value* y = b.input("y", DType::F32, {4, 4});
  Value* w = b.input("w", DType::F32, {4, 4});
  Value* s = b.op("MatMul", {b.op("Relu", {x}), w});
  Value* p = b.op("MatMul", {y, w});
  b.output(s);
  b.output(b.op("Add", {b.op("Abs", {p}), x}));
  auto g = b.finish();
  Lowered l = lower(std::move(g));
  Scheduler sched(l.prog);
  sched.fuse();
  std::vector<const SchedulerNode*> order = sched.order();
  ASSERT_EQ(order.size(), 3u);
  EXPECT_TRUE(order[0]->is_extern() &&
              l.prog.externs[order[0]->extern_index].inputs[0].buffer->name == "y");
  EXPECT_FALSE(order[1]->is_extern());
  EXPECT_EQ(order[1]->members.size(), 2u);
  EXPECT_TRUE(order[2]->is_extern());
  check_fused_equals_unfused(
      *l.g, tensors(random_tensor({4, 4}, 1), random_tensor({4, 4}, 2), random_tensor({4, 4}, 3)));
}

// Random DAGs of pointwise ops, reductions and MatMuls whose values have several readers:
// fusion joins siblings across unrelated nodes, which moves the fused node in the
// topological order the cycle check relies on. The fused plans must compute what the
// unfused ones do.
TEST(SchedulerTest, RandomGraphsFuseCorrectly) {
  std::mt19937 rng(25);
  for (int graph = 0; graph < 30; ++graph) {
    GraphBuilder b;
    std::vector<Value*> vals = {b.input("x", DType::F32, {4, 4}), b.input("y", DType::F32, {4, 4})};
    std::vector<Tensor> inputs =
        tensors(random_tensor({4, 4}, 2 * graph), random_tensor({4, 4}, 2 * graph + 1));
    for (int i = 0; i < 40; ++i) {
      auto pick = [&] {
        // Mostly recent values, sometimes an old one: long-range siblings.
        const size_t n = vals.size();
        return vals[rng() % 4 == 0 ? rng() % n : n - 1 - rng() % std::min<size_t>(n, 3)];
      };
      Value* a = pick();
      Value* c = pick();
      switch (rng() % 6) {
        case 0:
          vals.push_back(b.op("Add", {a, c}));
          break;
        case 1:
          vals.push_back(b.op("Mul", {a, c}));
          break;
        case 2:
          vals.push_back(b.op("Tanh", {a}));
          break;
        case 3:
          vals.push_back(b.op("Neg", {a}));
          break;
        case 4:
          vals.push_back(b.op("MatMul", {a, c}));
          break;
        default:
          vals.push_back(b.op("Softmax", {a}, {{"axis", attr_i(1)}}));
          break;
      }
    }
    for (size_t i = vals.size() - 4; i < vals.size(); ++i) b.output(vals[i]);
    check_fused_equals_unfused(*b.finish(), inputs);
  }
}

}  // namespace
}  // namespace ferrite
