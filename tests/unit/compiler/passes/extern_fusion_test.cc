// The fusing graph passes: fold_conv_affine and fold_matmul_affine (BatchNormalization and
// per-channel Mul, Div, Add, Sub into conv and MatMul / Gemm weights) and
// fuse_extern_epilogues (activations and binary ops into extern epilogues, which the
// lowering builds and the pattern table reads as post-ops). Each case compiles the graph with
// and without the passes and checks the structure (what was absorbed, the plan's post-ops)
// and that every backend gives the unfused graph's values.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "compiler/compile.h"
#include "compiler/graph/ferrite_ops.h"
#include "compiler/plan/error.h"
#include "runtime/backend.h"
#include "tests/unit/compiler/lower/run_graph.h"
#include "tests/unit/compiler/passes/fusion_case.h"

namespace ferrite {
namespace {

using fusion_test::Case;
using fusion_test::count_ops;
using fusion_test::expect_same_values;
using fusion_test::make_case;
using lower_test::Compiled;
using lower_test::random_floats;
using lower_test::run_graph;

std::vector<PostOpKind> plan_post_ops(const Plan& p, size_t e = 0) {
  std::vector<PostOpKind> kinds;
  if (e < p.externs.size())
    for (const PostOp& po : p.externs[e].post_ops) kinds.push_back(po.kind);
  return kinds;
}

Value* conv_weights(GraphBuilder& b, int64_t m, int64_t c, int64_t k, uint32_t seed) {
  std::vector<float> w = random_floats(static_cast<size_t>(m * c * k * k), seed);
  return b.constant_f32({m, c, k, k}, w);
}

TEST(FoldConvAffine, BatchNormThenMulThenAddBecomeOneConv) {
  Case c = make_case([](GraphBuilder& b) {
    Value* x = b.input("x", DType::F32, {2, 3, 6, 5});
    Value* y = b.op("Conv", {x, conv_weights(b, 4, 3, 3, 1), b.constant_f32({4}, {1, 2, 3, 4})},
                    {{"pads", attr_is({1, 1, 1, 1})}});
    y = b.op("BatchNormalization",
             {y, b.constant_f32({4}, {0.5f, 2, -1, 1.5f}), b.constant_f32({4}, {0, 1, -2, 3}),
              b.constant_f32({4}, {0.1f, -0.2f, 0.3f, 0}), b.constant_f32({4}, {1, 4, 0.25f, 2})},
             {{"epsilon", attr_f(1e-3)}});
    y = b.op("Mul", {b.constant_f32({4, 1, 1}, {2, -1, 0.5f, 3}), y});
    y = b.op("Sub", {y, b.constant_f32({}, {0.75f})});
    b.output(b.op("Relu", {y}));
  });
  EXPECT_EQ(count_ops(*c.fused, "BatchNormalization"), 0);
  EXPECT_EQ(count_ops(*c.fused, "Mul"), 0);
  EXPECT_EQ(count_ops(*c.fused, "Sub"), 0);
  EXPECT_EQ(count_ops(*c.fused, "Conv"), 1);
  EXPECT_EQ(count_ops(*c.unfused, "BatchNormalization"), 1);
  const Compiled r = run_graph(*c.fused, c.inputs, "reference");
  EXPECT_TRUE(r.plan.kernels.empty());
  EXPECT_EQ(plan_post_ops(r.plan), std::vector<PostOpKind>{PostOpKind::Relu});
  expect_same_values(c);
}

TEST(FoldConvAffine, BatchNormAndMulIntoGroupedConvTranspose) {
  // W [C = 4, M / group = 3, 3, 3] in 2 groups: output channel m = group * 3 + j.
  Case c = make_case([](GraphBuilder& b) {
    Value* x = b.input("x", DType::F32, {1, 4, 5, 4});
    Value* w = b.constant_f32({4, 3, 3, 3}, random_floats(108, 9));
    Value* y = b.op("ConvTranspose", {x, w, b.constant_f32({6}, {1, -1, 2, 0, 0.5f, 3})},
                    {{"group", attr_i(2)}, {"strides", attr_is({2, 2})}});
    y = b.op("BatchNormalization", {y, b.constant_f32({6}, {0.5f, 2, -1, 1.5f, 1, -0.25f}),
                                    b.constant_f32({6}, {0, 1, -2, 3, 0.5f, 1}),
                                    b.constant_f32({6}, {0.1f, -0.2f, 0.3f, 0, 1, 2}),
                                    b.constant_f32({6}, {1, 4, 0.25f, 2, 0.5f, 3})});
    b.output(b.op("Mul", {y, b.constant_f32({1, 6, 1, 1}, {2, -1, 0.5f, 3, 1.5f, -2})}));
  });
  EXPECT_EQ(count_ops(*c.fused, "BatchNormalization"), 0);
  EXPECT_EQ(count_ops(*c.fused, "Mul"), 0);
  EXPECT_EQ(count_ops(*c.fused, "ConvTranspose"), 1);
  expect_same_values(c);
}

TEST(FoldConvAffine, LeavesWhatItCannotFold) {
  Case c = make_case([](GraphBuilder& b) {
    Value* x = b.input("x", DType::F32, {1, 2, 4, 4});
    Value* w = b.input("w", DType::F32, {2, 2, 1, 1});  // not a constant
    Value* y = b.op("Conv", {x, w});
    b.output(b.op("Mul", {y, b.constant_f32({2, 1, 1}, {2, 3})}));
    // A conv whose output is also read elsewhere, and a Mul that is not per channel.
    Value* z = b.op("Conv", {x, conv_weights(b, 2, 2, 1, 7)});
    b.output(b.op("Add", {z, b.constant_f32({1, 2, 1, 1}, {1, 2})}));
    b.output(b.op("Mul", {z, z}));
    Value* u = b.op("Conv", {x, conv_weights(b, 2, 2, 1, 8)});
    b.output(b.op("Mul", {u, b.constant_f32({4}, {1, 2, 3, 4})}));
  });
  EXPECT_EQ(count_ops(*c.fused, "Conv"), 3);
  // Nothing folded into a weight: the Muls/Add remain or became post-ops, never vanished
  // into the conv's constants (the first conv's W is an input).
  expect_same_values(c);
}

TEST(FoldMatMulAffine, BiasThenScaleThenShiftIntoMatMulWeights) {
  // MatMul -> bias Add -> Mul (per column) -> Div (scalar) -> Sub: the scales go into W's
  // columns, the shifts into one Add (then the bias post-op); the Relu stays a post-op.
  Case c = make_case([](GraphBuilder& b) {
    Value* x = b.input("x", DType::F32, {2, 3, 8});
    Value* y = b.op("MatMul", {x, b.constant_f32({8, 5}, random_floats(40, 21))});
    y = b.op("Add", {b.constant_f32({5}, {1, -1, 2, 0, 0.5f}), y});
    y = b.op("Mul", {y, b.constant_f32({1, 1, 5}, {2, -1, 0.5f, 3, 1.5f})});
    y = b.op("Div", {y, b.constant_f32({}, {4})});
    y = b.op("Sub", {y, b.constant_f32({5}, {0.25f, 0, -1, 2, 1})});
    b.output(b.op("Relu", {y}));
  });
  EXPECT_EQ(count_ops(*c.fused, "Mul"), 0);
  EXPECT_EQ(count_ops(*c.fused, "Div"), 0);
  EXPECT_EQ(count_ops(*c.fused, "Sub"), 0);
  EXPECT_EQ(count_ops(*c.fused, "MatMul"), 1);
  const Compiled r = run_graph(*c.fused, c.inputs, "reference");
  EXPECT_TRUE(r.plan.kernels.empty());
  EXPECT_EQ(plan_post_ops(r.plan), (std::vector<PostOpKind>{PostOpKind::Add, PostOpKind::Relu}));
  expect_same_values(c);
}

TEST(FoldMatMulAffine, GemmThenBatchNorm1d) {
  // torch's Linear -> BatchNorm1d: into Gemm's (transposed) B and C, beta folded too.
  Case c = make_case([](GraphBuilder& b) {
    Value* x = b.input("x", DType::F32, {4, 6});
    Value* w = b.constant_f32({3, 6}, random_floats(18, 22));
    Value* y = b.op("Gemm", {x, w, b.constant_f32({3}, {1, 2, -1})},
                    {{"transB", attr_i(1)}, {"beta", attr_f(0.5)}});
    y = b.op("BatchNormalization",
             {y, b.constant_f32({3}, {0.5f, 2, -1}), b.constant_f32({3}, {0, 1, -2}),
              b.constant_f32({3}, {0.1f, -0.2f, 0.3f}), b.constant_f32({3}, {1, 4, 0.25f})});
    b.output(y);
  });
  EXPECT_EQ(count_ops(*c.fused, "BatchNormalization"), 0);
  EXPECT_EQ(count_ops(*c.fused, "Gemm"), 1);
  expect_same_values(c);
}

TEST(FoldMatMulAffine, LeavesWhatItCannotFold) {
  Case c = make_case([](GraphBuilder& b) {
    Value* x = b.input("x", DType::F32, {2, 4});
    // Weights that are an input; a Mul along the rows; a bias Add alone (left to the
    // epilogue); an output read twice; BatchNormalization over dim 1 of a 3-D MatMul.
    Value* w = b.input("w", DType::F32, {4, 3});
    b.output(b.op("Mul", {b.op("MatMul", {x, w}), b.constant_f32({3}, {1, 2, 3})}));
    Value* r = b.op("MatMul", {x, b.constant_f32({4, 3}, random_floats(12, 23))});
    b.output(b.op("Mul", {r, b.constant_f32({2, 1}, {2, 3})}));
    Value* s = b.op("MatMul", {x, b.constant_f32({4, 3}, random_floats(12, 24))});
    b.output(b.op("Add", {s, b.constant_f32({3}, {1, 2, 3})}));
    Value* t = b.op("MatMul", {x, b.constant_f32({4, 3}, random_floats(12, 25))});
    b.output(b.op("Mul", {t, b.constant_f32({3}, {1, 2, 3})}));
    b.output(t);
    Value* x3 = b.input("x3", DType::F32, {2, 3, 4});
    Value* u = b.op("MatMul", {x3, b.constant_f32({4, 5}, random_floats(20, 26))});
    b.output(b.op("BatchNormalization",
                  {u, b.constant_f32({3}, {1, 2, 3}), b.constant_f32({3}, {0, 1, 0}),
                   b.constant_f32({3}, {0, 0, 1}), b.constant_f32({3}, {1, 1, 2})}));
  });
  EXPECT_EQ(count_ops(*c.fused, "BatchNormalization"), 1);
  EXPECT_EQ(count_ops(*c.fused, "MatMul"), 5);
  for (const auto& n : c.fused->nodes) {  // no weight was replaced by a folded one
    if (n->op_type == "MatMul") {
      EXPECT_EQ(n->inputs[1]->name.find("_folded"), std::string::npos) << n->describe();
    }
  }
  expect_same_values(c);
}

TEST(FuseExternEpilogues, MatMulBiasGeluResidual) {
  // torch's exported exact gelu between a bias add and a residual add.
  Case c = make_case([](GraphBuilder& b) {
    Value* x = b.input("x", DType::F32, {2, 5, 8});
    Value* w = b.constant_f32({8, 6}, random_floats(48, 3));
    Value* y = b.op("MatMul", {x, w});
    y = b.op("Add", {b.constant_f32({6}, random_floats(6, 4)), y});
    Value* d = b.op("Div", {y, b.constant_f32({}, {1.41421356f})});
    Value* e = b.op("Add", {b.op("Erf", {d}), b.constant_f32({}, {1})});
    Value* g = b.op("Mul", {b.op("Mul", {y, e}), b.constant_f32({}, {0.5f})});
    Value* res = b.input("r", DType::F32, {2, 5, 6});
    b.output(b.op("Add", {res, g}));
  });
  EXPECT_EQ(count_ops(*c.fused, "Erf"), 0);
  ASSERT_EQ(count_ops(*c.fused, "MatMul"), 1);
  for (const auto& n : c.fused->nodes) {
    if (n->op_type != "MatMul") continue;
    ASSERT_TRUE(n->has_attr(kEpilogueAttr));
    const Graph& body = *n->attrs.at(kEpilogueAttr).g;
    std::vector<std::string> ops;
    for (const auto& m : body.nodes) ops.push_back(m->op_type);
    EXPECT_EQ(ops, (std::vector<std::string>{"Add", "Gelu", "Add"}));  // gelu's five nodes: one
    EXPECT_EQ(body.inputs.size(), 2u);  // y and the residual (the bias is a constant there)
  }
  const Compiled r = run_graph(*c.fused, c.inputs, "reference");
  EXPECT_TRUE(r.plan.kernels.empty());
  EXPECT_EQ(plan_post_ops(r.plan),
            (std::vector<PostOpKind>{PostOpKind::Add, PostOpKind::GeluErf, PostOpKind::Add}));
  expect_same_values(c);
}

TEST(FuseExternEpilogues, ConvActivations) {
  Case c = make_case([](GraphBuilder& b) {
    Value* x = b.input("x", DType::F32, {1, 3, 7, 7});
    auto conv = [&](uint32_t seed) { return b.op("Conv", {x, conv_weights(b, 4, 3, 3, seed)}); };
    b.output(b.op("Sigmoid", {b.op("Clip", {conv(1), b.constant_f32({}, {-0.5f}),
                                            b.constant_f32({}, {0.5f})})}));
    b.output(b.op("HardSwish", {conv(2)}));
    Value* s = conv(3);
    b.output(b.op("Mul", {b.op("Sigmoid", {s}), s}));  // silu
    b.output(b.op("LeakyRelu", {b.op("Elu", {conv(4)}, {{"alpha", attr_f(0.5)}})},
                  {{"alpha", attr_f(0.2)}}));
    b.output(b.op("HardSigmoid", {b.op("Tanh", {conv(5)})}));
    // t - conv: no post-op computes it; it stays a kernel of its own.
    b.output(b.op("Sub", {b.input("t", DType::F32, {4, 1, 1}), conv(6)}));
  });
  const Compiled r = run_graph(*c.fused, c.inputs, "reference");
  EXPECT_EQ(r.plan.kernels.size(), 1u);
  ASSERT_EQ(r.plan.externs.size(), 6u);
  std::vector<std::vector<PostOpKind>> got;
  for (size_t e = 0; e < 6; ++e) got.push_back(plan_post_ops(r.plan, e));
  using K = PostOpKind;
  EXPECT_EQ(got, (std::vector<std::vector<K>>{{K::Clip, K::Sigmoid},
                                              {K::HardSwish},
                                              {K::Silu},
                                              {K::Elu, K::LeakyRelu},
                                              {K::Tanh, K::HardSigmoid},
                                              {}}));
  expect_same_values(c);
}

// An activation fused into an extern gives, on the reference backend, the very bits the
// unfused ONNX op gives: both come from one formula (compiler/plan/activations.h), here on
// y = x (a MatMul by ones) holding NaN, infinities, signed zeros and large values.
TEST(FuseExternEpilogues, ReferenceGivesTheUnfusedBits) {
  const std::vector<float> specials = {NAN,  INFINITY, -INFINITY, 0.0f,   -0.0f, 1e-30f,
                                       -100, 100,      87.5f,     -87.5f, 89,    -90,
                                       1e5f, -1e5f,    3,         -3,     0.3f,  -0.7f};
  const int64_t m = static_cast<int64_t>(specials.size());
  Case c = make_case([&](GraphBuilder& b) {
    Value* x = b.input("x", DType::F32, {m, 1});
    auto y = [&] { return b.op("MatMul", {x, b.constant_f32({1, 4}, {1, 1, 1, 1})}); };
    b.output(b.op("Relu", {y()}));
    b.output(b.op("Clip", {y(), b.constant_f32({}, {-0.5f}), b.constant_f32({}, {6.0f})}));
    b.output(b.op("LeakyRelu", {y()}, {{"alpha", attr_f(0.2)}}));
    b.output(b.op("Elu", {y()}, {{"alpha", attr_f(0.7)}}));
    b.output(b.op("HardSigmoid", {y()}, {{"alpha", attr_f(0.3)}, {"beta", attr_f(0.4)}}));
    b.output(b.op("HardSwish", {y()}));
    b.output(b.op("Sigmoid", {y()}));
    b.output(b.op("Tanh", {y()}));
    b.output(b.op("Gelu", {y()}));
    b.output(b.op("Gelu", {y()}, {{"approximate", attr_s("tanh")}}));
    Value* s = y();
    b.output(b.op("Mul", {s, b.op("Sigmoid", {s})}));  // silu
  });
  c.inputs.clear();
  c.inputs.emplace_back(DType::F32, std::vector<int64_t>{m, 1}, specials.data());
  const Compiled fused = run_graph(*c.fused, c.inputs, "reference");
  EXPECT_TRUE(fused.plan.kernels.empty()) << "every activation fused";
  CompileOptions off;
  off.fuse = false;
  const Compiled unfused = run_graph(*c.unfused, c.inputs, "reference", {}, off);
  ASSERT_EQ(fused.outputs.size(), unfused.outputs.size());
  for (size_t o = 0; o < fused.outputs.size(); ++o) {
    SCOPED_TRACE("output " + std::to_string(o));
    const std::vector<float> a = lower_test::values_of<float>(fused.outputs[o]);
    const std::vector<float> b = lower_test::values_of<float>(unfused.outputs[o]);
    ASSERT_EQ(a.size(), b.size());
    for (size_t i = 0; i < a.size(); ++i)
      EXPECT_EQ(std::memcmp(&a[i], &b[i], sizeof(float)), 0)
          << "x = " << specials[i / 4] << ": fused " << a[i] << ", unfused " << b[i];
  }
}

TEST(FuseExternEpilogues, GemmBiasThenRelu) {
  for (double beta : {1.0, 0.5}) {
    SCOPED_TRACE(beta);
    Case c = make_case([beta](GraphBuilder& b) {
      Value* a = b.input("a", DType::F32, {4, 3});
      Value* w = b.constant_f32({5, 3}, random_floats(15, 9));
      Value* bias = b.constant_f32({5}, random_floats(5, 10));
      b.output(b.op("Relu",
                    {b.op("Gemm", {a, w, bias}, {{"transB", attr_i(1)}, {"beta", attr_f(beta)}})}));
    });
    const Compiled r = run_graph(*c.fused, c.inputs, "reference");
    EXPECT_EQ(plan_post_ops(r.plan), (std::vector<PostOpKind>{PostOpKind::Add, PostOpKind::Relu}));
    expect_same_values(c);
  }
}

// The lowering traces what the absorbed nodes compute: a constant read at one element is a
// constant (Clip's bounds) or, where the chain of post-ops has it so, an operand (y / 8, and
// Clip's bounds as Max and Min by tensors in a chain with one); an operand that is itself
// computed is realized first, as any extern operand; and an operand order the model chose is
// matched either way. (W is an input: fold_matmul_affine would fold the scalars into it.)
TEST(FuseExternEpilogues, TracedBodies) {
  Case c = make_case([](GraphBuilder& b) {
    Value* x = b.input("x", DType::F32, {3, 4});
    Value* w = b.input("w", DType::F32, {4, 5});
    auto y = [&] { return b.op("MatMul", {x, w}); };
    auto scalar = [&](float v) { return b.constant_f32({}, {v}); };
    b.output(b.op("Div", {y(), scalar(8)}));
    b.output(b.op("Clip", {y(), scalar(0), scalar(6)}));
    Value* s = b.op("Mul", {b.input("a", DType::F32, {3, 5}), b.input("b", DType::F32, {1, 5})});
    b.output(b.op("Mul", {y(), s}));
    b.output(b.op("Mul", {b.op("Add", {y(), scalar(1)}), scalar(2)}));
    Value* v = y();
    b.output(b.op("Mul", {b.op("Sigmoid", {v}), v}));
    b.output(b.op("Mul", {b.op("Clip", {y(), scalar(0), scalar(6)}), scalar(3)}));
  });
  const Compiled r = run_graph(*c.fused, c.inputs, "reference");
  ASSERT_EQ(r.plan.externs.size(), 6u);
  std::vector<std::vector<PostOpKind>> got;
  for (size_t e = 0; e < 6; ++e) got.push_back(plan_post_ops(r.plan, e));
  using K = PostOpKind;
  EXPECT_EQ(
      got,
      (std::vector<std::vector<K>>{
          {K::Div}, {K::Clip}, {K::Mul}, {K::Add, K::Mul}, {K::Silu}, {K::Max, K::Min, K::Mul}}))
      << plan_to_string(r.plan);
  EXPECT_EQ(r.plan.kernels.size(), 1u);  // a * b, realized as the operand
  expect_same_values(c);
}

TEST(FuseExternEpilogues, WhatCannotBeFusedStaysCorrect) {
  Case c = make_case([](GraphBuilder& b) {
    Value* x = b.input("x", DType::F32, {3, 4});
    Value* w = b.constant_f32({4, 4}, random_floats(16, 11));
    // An operand larger than the matmul's result: lowered as a pointwise op instead.
    Value* big = b.input("big", DType::F32, {2, 3, 4});
    b.output(b.op("Relu", {b.op("Add", {b.op("MatMul", {x, w}), big})}));
    // An intermediate that is also a graph output stays a value of its own.
    Value* y = b.op("MatMul", {x, w});
    b.output(y);
    b.output(b.op("Relu", {y}));
    // 1-D operands: the result is squeezed; post-ops become pointwise.
    Value* v = b.input("v", DType::F32, {4});
    b.output(b.op("Tanh", {b.op("MatMul", {v, w})}));
  });
  const Compiled r = run_graph(*c.fused, c.inputs, "reference");
  ASSERT_EQ(r.plan.externs.size(), 3u);
  EXPECT_TRUE(r.plan.externs[0].post_ops.empty());  // add (broadcast up) and relu unfused
  EXPECT_TRUE(r.plan.externs[1].post_ops.empty());  // y is an output
  EXPECT_TRUE(r.plan.externs[2].post_ops.empty());  // squeezed
  expect_same_values(c);
}

TEST(ChannelsLast, ConvOutputsAreStoredNhwcAndReadAsNchw) {
  // conv -> relu -> maxpool -> conv + residual -> global average pool, a padded average
  // pool of the first conv, and a lone 1-D conv. The layout pass stores the first two
  // convolutions channels-last and the pools over them follow; the lone one stays NCHW.
  Case c = make_case(
      [](GraphBuilder& b) {
        Value* x = b.input("x", DType::F32, {2, 3, 9, 8});
        Value* r = b.op("Relu", {b.op("Conv", {x, conv_weights(b, 5, 3, 3, 1)},
                                      {{"pads", attr_is({1, 1, 1, 1})}})});
        b.output(b.op("AveragePool", {r},
                      {{"kernel_shape", attr_is({3, 2})}, {"pads", attr_is({1, 0, 1, 1})}}));
        Value* y =
            b.op("MaxPool", {r}, {{"kernel_shape", attr_is({2, 2})}, {"strides", attr_is({2, 2})}});
        Value* z =
            b.op("Conv", {y, conv_weights(b, 5, 5, 3, 2)}, {{"pads", attr_is({1, 1, 1, 1})}});
        b.output(b.op("GlobalAveragePool", {b.op("Add", {z, y})}));
        Value* s = b.input("s", DType::F32, {1, 2, 11});
        b.output(b.op("Conv", {s, b.constant_f32({4, 2, 3}, random_floats(24, 5))}));
      },
      true);
  const Compiled r = run_graph(*c.fused, c.inputs, "reference");
  ASSERT_EQ(r.plan.externs.size(), 3u);
  const TensorRef& y0 = r.plan.externs[0].outputs[0];
  EXPECT_EQ(y0.shape, (std::vector<int64_t>{2, 5, 9, 8}));
  EXPECT_EQ(y0.strides, (std::vector<int64_t>{360, 1, 40, 5}));  // [N, H, W, C] storage
  const TensorRef& x1 = r.plan.externs[1].inputs[0];  // the pooled value, a kernel's output
  EXPECT_EQ(x1.shape, (std::vector<int64_t>{2, 5, 4, 4}));
  EXPECT_EQ(x1.strides, (std::vector<int64_t>{80, 1, 20, 5}));  // the pool's [N, H, W, C]
  const TensorRef& s2 = r.plan.externs[2].outputs[0];
  EXPECT_EQ(s2.strides, (std::vector<int64_t>{36, 9, 1}));
  expect_same_values(c, 2e-5f);
}

TEST(ChannelsLast, QuantizedActivationsBetweenInt8ConvolutionsAreStoredNhwc) {
  // onnxruntime's QDQ form: x quantized, two convolutions of int8 weights each requantized
  // (Relu between, in float), then a MaxPool of the dequantized result. fuse_qdq makes the
  // convolutions QLinearConv; the layout pass stores their sums channels-last, and the
  // uint8 activations the lowering realizes between them (ferrite_store) and the pool follow,
  // so the second convolution reads its input channels-last without a reorder.
  Case c = make_case(
      [](GraphBuilder& b) {
        auto u8 = [&](float scale, uint8_t zero) {
          return std::make_pair(b.constant_f32({}, {scale}),
                                b.constant(str_cat("z", scale), DType::U8, {}, &zero));
        };
        auto qdq = [&](Value* v, float scale, uint8_t zero) {
          auto p = u8(scale, zero);
          Value* q = b.op("QuantizeLinear", {v, p.first, p.second});
          return b.op("DequantizeLinear", {q, p.first, p.second});
        };
        auto weights = [&](int64_t m, int64_t ch, uint32_t seed) {
          std::vector<int8_t> w(static_cast<size_t>(m * ch * 9));
          std::vector<float> r = random_floats(w.size(), seed);
          for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<int8_t>(r[i] * 100);
          const int8_t zero = 0;
          return b.op(
              "DequantizeLinear",
              {b.constant(str_cat("w", seed), DType::I8, {m, ch, 3, 3}, w.data()),
               b.constant_f32({}, {0.01f}), b.constant(str_cat("wz", seed), DType::I8, {}, &zero)});
        };
        Value* x = qdq(b.input("x", DType::F32, {1, 8, 7, 7}), 0.02f, 128);
        const std::map<std::string, Attribute> pads{{"pads", attr_is({1, 1, 1, 1})}};
        Value* y = qdq(b.op("Conv", {x, weights(16, 8, 1)}, pads), 0.05f, 120);
        y = qdq(b.op("Relu", {y}), 0.03f, 0);
        Value* z = qdq(b.op("Conv", {y, weights(16, 16, 2)}, pads), 0.1f, 128);
        b.output(b.op("MaxPool", {z},
                      {{"kernel_shape", attr_is({2, 2})}, {"strides", attr_is({2, 2})}}));
      },
      true);
  EXPECT_EQ(count_ops(*c.fused, "QLinearConv"), 2);
  const Compiled r = run_graph(*c.fused, c.inputs, "reference");
  ASSERT_EQ(r.plan.externs.size(), 2u);
  const TensorRef& y1 = r.plan.externs[1].inputs[0];  // the requantized, relu'd activation
  EXPECT_EQ(r.plan.buffers[static_cast<size_t>(y1.buffer)].dtype, DType::U8);
  EXPECT_EQ(y1.strides, (std::vector<int64_t>{784, 1, 112, 16}));  // [N, H, W, C] storage
  // Integer sums and requantization against float convolutions between the same QDQ pairs:
  // a requantized value may land one step (0.1) apart where rounding ties differ.
  expect_same_values(c, 0.1001f);
}

}  // namespace
}  // namespace ferrite
