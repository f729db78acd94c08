// An extern's epilogue as a following kernel (compiler/plan/epilogue_kernel.h): random bodies
// over results and operands in dense, permuted, offset, reversed and broadcast views. The
// kernel validates, holds kernel.h's in-place rule, and the interpreter gives, bit for bit,
// what eval_epilogue (the reference's evaluation) gives at every element of the view, leaving
// the rest of the buffer alone.
#include "compiler/plan/epilogue_kernel.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "compiler/plan/interpret.h"

namespace ferrite {
namespace {

int64_t at(const TensorRef& r, const std::vector<int64_t>& c) {
  int64_t e = r.offset;
  for (size_t d = 0; d < c.size(); ++d) e += c[d] * r.strides[d];
  return e;
}

bool same(float a, float b) {
  return std::memcmp(&a, &b, sizeof a) == 0 || (a != a && b != b);
}

// A random valid body over y and inputs 0 and 1: float32 math, comparisons, logic, Where.
EpilogueBody random_body(std::mt19937* rng) {
  static const Op kUnary[] = {Op::Neg, Op::Abs, Op::Exp, Op::Tanh, Op::Sqrt, Op::Floor};
  static const Op kBinary[] = {Op::Add, Op::Sub, Op::Mul, Op::Div, Op::Max, Op::Min};
  static const Op kCompare[] = {Op::Lt, Op::Le, Op::Eq, Op::Gt};
  EpilogueBody e;
  std::vector<int32_t> f32, bools;
  auto push = [&](EpilogueStep s, bool is_bool) {
    e.steps.push_back(s);
    (is_bool ? bools : f32).push_back(static_cast<int32_t>(e.steps.size() - 1));
  };
  auto pick = [&](const std::vector<int32_t>& v) {
    return v[std::uniform_int_distribution<size_t>(0, v.size() - 1)(*rng)];
  };
  EpilogueStep load{Op::Load};
  push(load, false);
  const int n = std::uniform_int_distribution<int>(1, 12)(*rng);
  for (int i = 0; i < n; ++i) {
    EpilogueStep s;
    switch (std::uniform_int_distribution<int>(0, 6)(*rng)) {
      case 0:
        s.op = Op::Load;
        s.input = std::uniform_int_distribution<int32_t>(0, 1)(*rng);
        push(s, false);
        break;
      case 1:
        s.op = Op::Const;
        s.value = std::uniform_real_distribution<float>(-2, 2)(*rng);
        push(s, false);
        break;
      case 2:
        push(EpilogueStep{kUnary[(*rng)() % 6], pick(f32)}, false);
        break;
      case 3:
      case 4:
        push(EpilogueStep{kBinary[(*rng)() % 6], pick(f32), pick(f32)}, false);
        break;
      case 5:
        push(EpilogueStep{kCompare[(*rng)() % 4], pick(f32), pick(f32)}, true);
        break;
      default: {
        if (bools.empty()) break;
        const unsigned k = (*rng)() % 3;
        if (k == 0)
          push(EpilogueStep{Op::Where, pick(bools), pick(f32), pick(f32)}, false);
        else if (k == 1)
          push(EpilogueStep{Op::Not, pick(bools)}, true);
        else
          push(EpilogueStep{Op::And, pick(bools), pick(bools)}, true);
        break;
      }
    }
  }
  if (e.steps.size() - 1 != static_cast<size_t>(f32.back()))
    e.steps.push_back(EpilogueStep{Op::Add, f32.back(), 0});
  return e;
}

// Views of shape [2, 3, 4]: dense, stored permuted ([2, 4, 3]), at an offset, with the middle
// dim reversed; operands may also broadcast (stride 0).
TensorRef random_view(std::mt19937* rng, bool may_broadcast) {
  TensorRef r;
  r.shape = {2, 3, 4};
  switch (std::uniform_int_distribution<int>(0, may_broadcast ? 4 : 3)(*rng)) {
    case 0:
      r.strides = {12, 4, 1};
      break;
    case 1:
      r.strides = {12, 1, 3};
      break;
    case 2:
      r.strides = {12, 4, 1};
      r.offset = 5;
      break;
    case 3:
      r.strides = {12, -4, 1};
      r.offset = 8;
      break;
    default:
      r.strides = {0, (*rng)() % 2 ? 1 : 0, 0};
      break;
  }
  return r;
}

TEST(EpilogueKernel, RunsTheBodyAsTheReferenceEvaluatesIt) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 300; ++trial) {
    SCOPED_TRACE(trial);
    ExternCall call;
    call.op = ExternOp::MatMul;
    call.inputs = {TensorRef{0, {2, 3}, {3, 1}, 0}, random_view(&rng, true),
                   random_view(&rng, true)};
    call.outputs = {random_view(&rng, false)};
    EpilogueBody body = random_body(&rng);
    for (EpilogueStep& s : body.steps)
      if (s.op == Op::Load && s.input >= 0) s.input += 1;  // inputs 1 and 2: after the op's
    validate_epilogue(body, call.inputs.size(), "test");
    set_epilogue(&call, body);
    SCOPED_TRACE(epilogue_text(call.epilogue));

    const EpilogueKernel ek = epilogue_kernel(call);
    ASSERT_NO_THROW(validate_kernel(ek.kernel)) << kernel_to_string(ek.kernel);
    std::vector<std::vector<float>> in(call.inputs.size());
    for (size_t i = 1; i < in.size(); ++i) {
      in[i].resize(static_cast<size_t>(view_extent(call.inputs[i])));
      for (float& v : in[i]) v = std::uniform_real_distribution<float>(-3, 3)(rng);
    }
    std::vector<float> y(static_cast<size_t>(view_extent(call.outputs[0])) + 3);
    for (float& v : y) v = std::uniform_real_distribution<float>(-3, 3)(rng);
    std::vector<float> want = y;
    std::vector<float> scratch;
    const TensorRef& out = call.outputs[0];
    for (int64_t a = 0; a < 2; ++a)
      for (int64_t b = 0; b < 3; ++b)
        for (int64_t c = 0; c < 4; ++c) {
          const std::vector<int64_t> co{a, b, c};
          const int64_t e = at(out, co);
          want[static_cast<size_t>(e)] = eval_epilogue(
              call.epilogue, y[static_cast<size_t>(e)],
              [&](int32_t i) {
                return in[static_cast<size_t>(i)]
                         [static_cast<size_t>(at(call.inputs[static_cast<size_t>(i)], co))];
              },
              &scratch);
        }

    std::vector<void*> args{y.data()};
    for (int32_t i : ek.inputs) args.push_back(in[static_cast<size_t>(i)].data());
    args.push_back(y.data());
    ASSERT_EQ(args.size(), ek.kernel.args.size());
    interpret_kernel(ek.kernel, args.data());
    for (size_t i = 0; i < y.size(); ++i)
      ASSERT_TRUE(same(y[i], want[i])) << "element " << i << ": " << y[i] << " vs " << want[i];
  }
}

TEST(EpilogueKernel, AnEmptyResultGivesNoPoints) {
  ExternCall call;
  call.inputs = {TensorRef{0, {0, 3}, {3, 1}, 0}};
  call.outputs = {TensorRef{1, {0, 4}, {4, 1}, 0}};
  set_post_ops(&call, {PostOp{PostOpKind::Relu}});
  const EpilogueKernel ek = epilogue_kernel(call);
  EXPECT_EQ(ek.kernel.args[0].elements, 0);
  EXPECT_EQ(ek.kernel.outer_points(), 0);
  EXPECT_NO_THROW(validate_kernel(ek.kernel));
}

}  // namespace
}  // namespace ferrite
