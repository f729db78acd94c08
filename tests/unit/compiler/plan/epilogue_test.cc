// The epilogue body (compiler/plan/epilogue.h): every post-op kind's body gives its chain
// back through the pattern table, with its parameters and operands; chains of several; bodies
// that are no chain; the evaluator against each kind's reference meaning (post_ops.h); and
// the validation errors.
#include "compiler/plan/epilogue.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "compiler/plan/error.h"
#include "tests/unit/runtime/extern_runs.h"

namespace ferrite {
namespace {

std::vector<PostOp> every_kind() {
  std::vector<PostOp> ops = unary_post_ops();
  for (PostOpKind k : {PostOpKind::Add, PostOpKind::Sub, PostOpKind::Mul, PostOpKind::Div,
                       PostOpKind::Max, PostOpKind::Min})
    ops.push_back(PostOp{k, 0, 0, 1});
  return ops;
}

std::string error_of(const EpilogueBody& e, size_t inputs) {
  try {
    validate_epilogue(e, inputs, "x");
  } catch (const Error& err) {
    return err.what();
  }
  return "";
}

TEST(Epilogue, EveryKindIsMatchedBack) {
  for (const PostOp& p : every_kind()) {
    SCOPED_TRACE(post_op_text(p));
    const EpilogueBody e = epilogue_of({p});
    EXPECT_EQ(error_of(e, 2), "");
    const auto chain = match_post_ops(e);
    ASSERT_TRUE(chain.has_value());
    EXPECT_EQ(*chain, std::vector<PostOp>{p});
  }
}

TEST(Epilogue, ChainsAreMatchedBackInOrder) {
  const std::vector<PostOp> chain = {
      PostOp{PostOpKind::Add, 0, 0, 3},      PostOp{PostOpKind::HardSwish},
      PostOp{PostOpKind::Clip, -2, 2},       PostOp{PostOpKind::Mul, 0, 0, 4},
      PostOp{PostOpKind::LeakyRelu, 0.125f}, PostOp{PostOpKind::GeluTanh},
      PostOp{PostOpKind::Linear, 3, -1},     PostOp{PostOpKind::Elu, 0.5f},
      PostOp{PostOpKind::Max, 0, 0, 3}};
  EpilogueBody e;
  for (const PostOp& p : chain) append_post_op(&e, p);
  EXPECT_EQ(e, epilogue_of(chain));
  EXPECT_EQ(error_of(e, 5), "");
  EXPECT_EQ(epilogue_inputs(e), (std::vector<int32_t>{3, 4}));
  EXPECT_EQ(match_post_ops(e), chain);
  EXPECT_EQ(epilogue_text(epilogue_of({chain[0], chain[2]})), "add(in 3) then clip(-2, 2)");
}

// A lowering writes a commutative op's operands in the model's order: t + y is add(t), and
// sigmoid(y) * y is silu; t - y is none (no post-op computes it).
TEST(Epilogue, CommutativeOperandsInEitherOrder) {
  EpilogueStep y{Op::Load}, t{Op::Load};
  t.input = 2;
  EpilogueBody e;
  e.steps = {t, y, EpilogueStep{Op::Add, 0, 1}};
  EXPECT_EQ(match_post_ops(e), (std::vector<PostOp>{PostOp{PostOpKind::Add, 0, 0, 2}}));
  e.steps = {y, EpilogueStep{Op::Sigmoid, 0}, EpilogueStep{Op::Mul, 1, 0}};
  EXPECT_EQ(match_post_ops(e), (std::vector<PostOp>{PostOp{PostOpKind::Silu}}));
  e.steps = {t, y, EpilogueStep{Op::Max, 0, 1}, EpilogueStep{Op::Relu, 2}};
  EXPECT_EQ(match_post_ops(e),
            (std::vector<PostOp>{PostOp{PostOpKind::Max, 0, 0, 2}, PostOp{PostOpKind::Relu}}));
  e.steps = {t, y, EpilogueStep{Op::Sub, 0, 1}};
  EXPECT_FALSE(match_post_ops(e).has_value());
}

TEST(Epilogue, BodiesThatAreNoChain) {
  EpilogueBody e = epilogue_of({PostOp{PostOpKind::Relu}});
  e.steps.push_back(EpilogueStep{Op::Mul, 1, 1});  // relu(y)^2: Mul's operand is no input
  EXPECT_EQ(error_of(e, 0), "");
  EXPECT_FALSE(match_post_ops(e).has_value());
  EXPECT_EQ(epilogue_text(e), "%0 = load y; %1 = Relu %0; %2 = Mul %1 %1");
  // A Clip whose bound is another step, not a constant.
  e = epilogue_of({PostOp{PostOpKind::Clip, 0, 6}});
  e.steps[e.steps.size() - 1].b = 0;  // min(max(y, 0), y)
  EXPECT_FALSE(match_post_ops(e).has_value());
  // HardSwish with another constant is no HardSwish (nor any other kind).
  e = epilogue_of({PostOp{PostOpKind::HardSwish}});
  for (EpilogueStep& s : e.steps)
    if (s.op == Op::Const && s.value == 0.5f) s.value = 0.25f;
  EXPECT_FALSE(match_post_ops(e).has_value());
  // The empty body is the empty chain.
  EXPECT_EQ(match_post_ops(EpilogueBody{}), std::vector<PostOp>{});
}

TEST(Epilogue, EvaluatesAsEachKindsMeaning) {
  std::vector<float> scratch;
  for (const PostOp& p : every_kind()) {
    SCOPED_TRACE(post_op_text(p));
    const EpilogueBody e = epilogue_of({p});
    for (float y : {-3.5f, -0.25f, 0.0f, 0.7f, 4.0f, NAN}) {
      const float t = 1.75f;
      const float got = eval_epilogue(
          e, y, [&](int32_t) { return t; }, &scratch);
      const float want = post_op_is_binary(p.kind) ? apply_binary_post_op(p.kind, y, t)
                                                   : apply_unary_post_op(p, y);
      if (std::isnan(want)) {
        EXPECT_TRUE(std::isnan(got)) << y;
      } else {
        EXPECT_EQ(got, want) << y;
      }
    }
  }
}

TEST(Epilogue, ValidationNamesTheStep) {
  EpilogueBody e = epilogue_of({PostOp{PostOpKind::Add, 0, 0, 1}, PostOp{PostOpKind::Relu}});
  EXPECT_EQ(error_of(e, 1), "x epilogue step 1: loads input 1 of 1");
  e.steps[2].b = 2;
  EXPECT_EQ(error_of(e, 2), "x epilogue step 2: operand b is 2, not an earlier step");
  e = epilogue_of({PostOp{PostOpKind::LeakyRelu, 0.5f}});
  e.steps.back().a = 0;  // Where's condition: y, a float
  EXPECT_EQ(error_of(e, 0), "x epilogue step 5: Where's condition is not Bool");
  e = epilogue_of({PostOp{PostOpKind::Relu}});
  e.steps.push_back(EpilogueStep{Op::IsNaN, 1});
  EXPECT_EQ(error_of(e, 0), "x epilogue's result is bool, not float32");
  e.steps.back() = EpilogueStep{Op::Cast, 1};
  EXPECT_EQ(error_of(e, 0), "x epilogue step 2: Cast has no place in an epilogue");
  e.steps.back() = EpilogueStep{Op::Relu, 1, 1};
  EXPECT_EQ(error_of(e, 0), "x epilogue step 2: Relu takes 1 operands");
  e.steps.back() = EpilogueStep{Op::Not, 1};
  EXPECT_EQ(error_of(e, 0), "x epilogue step 2: Not does not take f32");
  e.steps.assign(kMaxEpilogueSteps + 1, EpilogueStep{Op::Load});
  EXPECT_EQ(error_of(e, 0), "x epilogue has 4097 steps (at most 4096)");
}

}  // namespace
}  // namespace ferrite
