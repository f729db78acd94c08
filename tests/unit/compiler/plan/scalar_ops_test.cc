// scalar_ops: the single definition of op semantics. Each test pins one edge case with a
// hand-computed expectation.
#include "compiler/plan/scalar_ops.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>

#include "compiler/plan/error.h"

namespace ferrite {
namespace {

constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
const float kNaN = std::numeric_limits<float>::quiet_NaN();
const float kInf = std::numeric_limits<float>::infinity();

int64_t ibin(Op op, int64_t a, int64_t b) {
  return eval_binary(op, ScalarType::I64, scalar_i64(a), scalar_i64(b)).i64;
}
float fbin(Op op, float a, float b) {
  return eval_binary(op, ScalarType::F32, scalar_f32(a), scalar_f32(b)).f32;
}
float fun(Op op, float x) {
  return eval_unary(op, ScalarType::F32, scalar_f32(x)).f32;
}
int64_t f2i(float x) {
  return eval_cast(ScalarType::F32, ScalarType::I64, scalar_f32(x)).i64;
}

TEST(ScalarOps, IntegerDivisionIsTotal) {
  EXPECT_EQ(ibin(Op::Div, 7, 0), 0);
  EXPECT_EQ(ibin(Op::Mod, 7, 0), 0);
  EXPECT_EQ(ibin(Op::FMod, 7, 0), 0);
  EXPECT_EQ(ibin(Op::Div, kMin, -1), kMin);  // wraps
  EXPECT_EQ(ibin(Op::Mod, kMin, -1), 0);
  EXPECT_EQ(ibin(Op::Div, -7, 2), -3);  // truncates
  EXPECT_EQ(ibin(Op::Div, 7, -2), -3);
}

TEST(ScalarOps, ModTakesDivisorSignFModDividendSign) {
  EXPECT_EQ(ibin(Op::Mod, -7, 3), 2);
  EXPECT_EQ(ibin(Op::Mod, 7, -3), -2);
  EXPECT_EQ(ibin(Op::FMod, -7, 3), -1);
  EXPECT_EQ(ibin(Op::FMod, 7, -3), 1);
  EXPECT_FLOAT_EQ(fbin(Op::Mod, -7.5f, 2.0f), 0.5f);
  EXPECT_FLOAT_EQ(fbin(Op::Mod, 7.5f, -2.0f), -0.5f);
  EXPECT_FLOAT_EQ(fbin(Op::FMod, -7.5f, 2.0f), -1.5f);
  EXPECT_TRUE(std::isnan(fbin(Op::Mod, 1.0f, 0.0f)));
}

TEST(ScalarOps, IntegerArithmeticWraps) {
  EXPECT_EQ(ibin(Op::Add, kMax, 1), kMin);
  EXPECT_EQ(ibin(Op::Sub, kMin, 1), kMax);
  EXPECT_EQ(ibin(Op::Mul, kMax, 2), -2);
  EXPECT_EQ(eval_unary(Op::Neg, ScalarType::I64, scalar_i64(kMin)).i64, kMin);
  EXPECT_EQ(eval_unary(Op::Abs, ScalarType::I64, scalar_i64(-5)).i64, 5);
}

TEST(ScalarOps, IntegerPow) {
  EXPECT_EQ(ibin(Op::Pow, 3, 4), 81);
  EXPECT_EQ(ibin(Op::Pow, -2, 3), -8);
  EXPECT_EQ(ibin(Op::Pow, 5, 0), 1);
  EXPECT_EQ(ibin(Op::Pow, 2, -1), 0);
  EXPECT_EQ(ibin(Op::Pow, 1, -7), 1);
  EXPECT_EQ(ibin(Op::Pow, -1, -3), -1);
  EXPECT_EQ(ibin(Op::Pow, -1, -4), 1);
  EXPECT_EQ(ibin(Op::Pow, 2, 64), 0);  // wraps
}

TEST(ScalarOps, BitwiseOnTheBitsOfI64) {
  EXPECT_EQ(ibin(Op::BitAnd, 0b1100, 0b1010), 0b1000);
  EXPECT_EQ(ibin(Op::BitOr, 0b1100, 0b1010), 0b1110);
  EXPECT_EQ(ibin(Op::BitXor, 0b1100, 0b1010), 0b0110);
  EXPECT_EQ(ibin(Op::BitAnd, -1, 0x7f), 0x7f);
  EXPECT_EQ(eval_unary(Op::BitNot, ScalarType::I64, scalar_i64(5)).i64, -6);
  EXPECT_EQ(eval_unary(Op::BitNot, ScalarType::I64, scalar_i64(kMin)).i64, kMax);
  EXPECT_EQ(ibin(Op::Shl, 1, 63), kMin);
  EXPECT_EQ(ibin(Op::Shl, 1, 64), 0);  // counts past the width give 0, not UB
  EXPECT_EQ(ibin(Op::Shr, 16, 2), 4);
  EXPECT_EQ(ibin(Op::Shr, -1, 60), 15);  // logical: a uint64 held in i64 shifts as itself
  EXPECT_EQ(ibin(Op::Shr, 8, -1), 0);    // a count of 2^64 - 1
  EXPECT_FALSE(op_accepts(Op::BitAnd, ScalarType::F32));
  EXPECT_FALSE(op_accepts(Op::BitNot, ScalarType::Bool));
  EXPECT_TRUE(op_accepts(Op::Shr, ScalarType::I64));
  EXPECT_THROW(eval_binary(Op::BitOr, ScalarType::F32, scalar_f32(1), scalar_f32(2)), Error);
}

TEST(ScalarOps, FloatToIntCastTruncatesAndSaturates) {
  EXPECT_EQ(f2i(2.9f), 2);
  EXPECT_EQ(f2i(-2.9f), -2);
  EXPECT_EQ(f2i(kNaN), 0);
  EXPECT_EQ(f2i(1e30f), kMax);
  EXPECT_EQ(f2i(-1e30f), kMin);
  EXPECT_EQ(f2i(kInf), kMax);
  EXPECT_EQ(eval_cast(ScalarType::F64, ScalarType::I64, scalar_f64(-9.3e18)).i64, kMin);
  EXPECT_FLOAT_EQ(eval_cast(ScalarType::F64, ScalarType::F32, scalar_f64(1e300)).f32, kInf);
}

TEST(ScalarOps, BoolCasts) {
  EXPECT_TRUE(eval_cast(ScalarType::F32, ScalarType::Bool, scalar_f32(kNaN)).b);
  EXPECT_FALSE(eval_cast(ScalarType::F32, ScalarType::Bool, scalar_f32(-0.0f)).b);
  EXPECT_TRUE(eval_cast(ScalarType::I64, ScalarType::Bool, scalar_i64(-3)).b);
  EXPECT_EQ(eval_cast(ScalarType::Bool, ScalarType::I64, scalar_bool(true)).i64, 1);
  EXPECT_FLOAT_EQ(eval_cast(ScalarType::Bool, ScalarType::F32, scalar_bool(true)).f32, 1.0f);
}

TEST(ScalarOps, RoundHalfToEven) {
  EXPECT_EQ(fun(Op::Round, 0.5f), 0.0f);
  EXPECT_EQ(fun(Op::Round, 1.5f), 2.0f);
  EXPECT_EQ(fun(Op::Round, 2.5f), 2.0f);
  EXPECT_EQ(fun(Op::Round, -2.5f), -2.0f);
  EXPECT_EQ(fun(Op::Round, -3.5f), -4.0f);
  EXPECT_EQ(fun(Op::Round, 2.6f), 3.0f);
}

TEST(ScalarOps, ReluSignMaxMinAndNaN) {
  EXPECT_EQ(fun(Op::Relu, -3.0f), 0.0f);
  EXPECT_EQ(fun(Op::Relu, 3.0f), 3.0f);
  EXPECT_TRUE(std::isnan(fun(Op::Relu, kNaN)));
  EXPECT_EQ(fun(Op::Sign, -0.5f), -1.0f);
  EXPECT_EQ(fun(Op::Sign, 0.0f), 0.0f);
  EXPECT_TRUE(std::isnan(fun(Op::Sign, kNaN)));
  EXPECT_TRUE(std::isnan(fbin(Op::Max, kNaN, 1.0f)));
  EXPECT_TRUE(std::isnan(fbin(Op::Max, 1.0f, kNaN)));
  EXPECT_TRUE(std::isnan(fbin(Op::Min, 1.0f, kNaN)));
  EXPECT_EQ(fbin(Op::Max, -1.0f, 2.0f), 2.0f);
}

TEST(ScalarOps, SigmoidIsStableAtExtremes) {
  EXPECT_EQ(fun(Op::Sigmoid, 1000.0f), 1.0f);
  EXPECT_EQ(fun(Op::Sigmoid, -1000.0f), 0.0f);
  EXPECT_FLOAT_EQ(fun(Op::Sigmoid, 0.0f), 0.5f);
  EXPECT_NEAR(fun(Op::Sigmoid, -20.0f), 2.0611536e-9f, 1e-15);
}

TEST(ScalarOps, ComparisonsAndLogic) {
  EXPECT_FALSE(eval_binary(Op::Eq, ScalarType::F32, scalar_f32(kNaN), scalar_f32(kNaN)).b);
  EXPECT_TRUE(eval_binary(Op::Lt, ScalarType::I64, scalar_i64(-1), scalar_i64(0)).b);
  EXPECT_TRUE(eval_binary(Op::Xor, ScalarType::Bool, scalar_bool(true), scalar_bool(false)).b);
  EXPECT_FALSE(eval_unary(Op::Not, ScalarType::Bool, scalar_bool(true)).b);
  EXPECT_TRUE(eval_unary(Op::IsNaN, ScalarType::F32, scalar_f32(kNaN)).b);
  EXPECT_TRUE(eval_unary(Op::IsInf, ScalarType::F32, scalar_f32(-kInf)).b);
  EXPECT_EQ(op_result_type(Op::Lt, ScalarType::F32), ScalarType::Bool);
}

TEST(ScalarOps, TypeRules) {
  EXPECT_TRUE(op_accepts(Op::Exp, ScalarType::F64));
  EXPECT_FALSE(op_accepts(Op::Exp, ScalarType::I64));
  EXPECT_TRUE(op_accepts(Op::Abs, ScalarType::I64));
  EXPECT_FALSE(op_accepts(Op::Floor, ScalarType::I64));
  EXPECT_FALSE(op_accepts(Op::Add, ScalarType::Bool));
  EXPECT_TRUE(op_accepts(Op::Not, ScalarType::Bool));
  EXPECT_FALSE(op_accepts(Op::Not, ScalarType::F32));
  EXPECT_TRUE(op_accepts(Op::Lt, ScalarType::Bool));
  EXPECT_THROW(eval_unary(Op::Exp, ScalarType::I64, scalar_i64(1)), Error);
}

TEST(ScalarOps, HalfKnownBitPatterns) {
  EXPECT_EQ(float_to_half(1.0f), 0x3C00);
  EXPECT_EQ(float_to_half(65504.0f), 0x7BFF);
  EXPECT_EQ(float_to_half(-2.0f), 0xC000);
  EXPECT_EQ(float_to_half(65520.0f), 0x7C00);                      // rounds to inf
  EXPECT_EQ(float_to_half(std::ldexp(1.0f, -24)), 0x0001);         // smallest subnormal
  EXPECT_EQ(float_to_half(std::ldexp(1.0f, -25)), 0x0000);         // tie rounds to even (0)
  EXPECT_EQ(float_to_half(1.0f + std::ldexp(1.0f, -11)), 0x3C00);  // tie to even
  EXPECT_EQ(float_to_half(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3C02);
  EXPECT_EQ(half_to_float(0x3C00), 1.0f);
  EXPECT_EQ(half_to_float(0x7BFF), 65504.0f);
  EXPECT_EQ(half_to_float(0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(half_to_float(0xFC00), -kInf);
  EXPECT_TRUE(std::isnan(half_to_float(float_to_half(kNaN))));
  // Every finite half survives the round trip through float.
  for (uint32_t h = 0; h < 0x10000; ++h) {
    if ((h & 0x7C00) == 0x7C00) continue;
    ASSERT_EQ(float_to_half(half_to_float(static_cast<uint16_t>(h))), h) << h;
  }
}

TEST(ScalarOps, BFloat16RoundsToNearestEven) {
  EXPECT_EQ(float_to_bfloat16(1.0f), 0x3F80);
  EXPECT_EQ(bfloat16_to_float(0x3F80), 1.0f);
  EXPECT_EQ(float_to_bfloat16(1.0f + std::ldexp(1.0f, -8)), 0x3F80);      // tie to even
  EXPECT_EQ(float_to_bfloat16(1.0f + 3 * std::ldexp(1.0f, -8)), 0x3F82);  // tie to even (up)
  EXPECT_TRUE(std::isnan(bfloat16_to_float(float_to_bfloat16(kNaN))));
}

TEST(ScalarOps, StorageConversions) {
  uint8_t u8[2] = {0, 0};
  store_element(DType::U8, u8, 1, ScalarType::I64, scalar_i64(300));
  EXPECT_EQ(u8[1], 300 % 256);
  int8_t i8[1];
  store_element(DType::I8, i8, 0, ScalarType::I64, scalar_i64(200));
  EXPECT_EQ(load_element(DType::I8, i8, 0).i64, 200 - 256);
  uint64_t u64[1];
  store_element(DType::U64, u64, 0, ScalarType::I64, scalar_i64(-1));
  EXPECT_EQ(u64[0], ~uint64_t{0});
  uint8_t b[1];
  store_element(DType::Bool, b, 0, ScalarType::F32, scalar_f32(0.25f));
  EXPECT_EQ(b[0], 1);
  uint16_t h[1];
  store_element(DType::F16, h, 0, ScalarType::F32, scalar_f32(1.0f));
  EXPECT_EQ(h[0], 0x3C00);
  EXPECT_EQ(load_element(DType::F16, h, 0).f32, 1.0f);
  EXPECT_THROW(load_element(DType::String, b, 0), Error);
}

TEST(ScalarOps, ReductionsIdentityAndFirstExtremum) {
  EXPECT_EQ(reduce_identity(ReduceKind::Max, ScalarType::I64).i64, kMin);
  EXPECT_EQ(reduce_identity(ReduceKind::Min, ScalarType::F32).f32, kInf);
  EXPECT_EQ(reduce_identity(ReduceKind::Prod, ScalarType::F32).f32, 1.0f);
  const float xs[] = {1, 5, 2, 5, kNaN, 7};
  int64_t best = 0;
  Scalar acc = reduce_identity(ReduceKind::ArgMax, ScalarType::F32);
  for (int i = 0; i < 4; ++i)
    acc = reduce_step(ReduceKind::ArgMax, ScalarType::F32, acc, scalar_f32(xs[i]), i, &best);
  EXPECT_EQ(best, 1);  // the first 5
  for (int i = 4; i < 6; ++i)
    acc = reduce_step(ReduceKind::ArgMax, ScalarType::F32, acc, scalar_f32(xs[i]), i, &best);
  EXPECT_EQ(best, 4);  // NaN wins and stays
  Scalar mx = reduce_identity(ReduceKind::Max, ScalarType::F32);
  for (int i = 0; i < 6; ++i)
    mx = reduce_step(ReduceKind::Max, ScalarType::F32, mx, scalar_f32(xs[i]), i, nullptr);
  EXPECT_TRUE(std::isnan(mx.f32));
}

}  // namespace
}  // namespace ferrite
