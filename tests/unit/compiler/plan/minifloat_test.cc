// minifloat: the float8, float4 and e8m0 codes. Expectations are the formats' definitions
// (the OCP 8-bit and MX specifications, the fnuz variants as ONNX documents them), worked
// by hand: largest values, subnormals, ties to even, and what overflow and NaN become.
#include "compiler/plan/minifloat.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "compiler/plan/scalar_ops.h"

namespace ferrite {
namespace {

const float kNaN = std::numeric_limits<float>::quiet_NaN();
const float kInf = std::numeric_limits<float>::infinity();

int codes_of(DType t) {
  return t == DType::F4E2M1 ? 16 : 256;
}

constexpr DType kTypes[] = {DType::F8E4M3FN,   DType::F8E4M3FNUZ, DType::F8E5M2,
                            DType::F8E5M2FNUZ, DType::F4E2M1,     DType::F8E8M0};

TEST(Minifloat, EveryCodeRoundTrips) {
  for (DType t : kTypes) {
    for (int c = 0; c < codes_of(t); ++c) {
      const float f = minifloat_to_float(t, static_cast<uint8_t>(c));
      const uint8_t back = float_to_minifloat(t, f);
      if (std::isnan(f)) {
        EXPECT_TRUE(std::isnan(minifloat_to_float(t, back))) << dtype_name(t) << " " << c;
      } else {
        EXPECT_EQ(back, c) << dtype_name(t) << " code " << c << " = " << f;
      }
    }
  }
}

TEST(Minifloat, DecodesKnownCodes) {
  EXPECT_EQ(minifloat_to_float(DType::F8E4M3FN, 0x7E), 448.0f);
  EXPECT_EQ(minifloat_to_float(DType::F8E4M3FN, 0x38), 1.0f);
  EXPECT_EQ(minifloat_to_float(DType::F8E4M3FN, 0x01), std::ldexp(1.0f, -9));  // subnormal
  EXPECT_TRUE(std::isnan(minifloat_to_float(DType::F8E4M3FN, 0xFF)));
  EXPECT_EQ(minifloat_to_float(DType::F8E4M3FNUZ, 0x7F), 240.0f);
  EXPECT_EQ(minifloat_to_float(DType::F8E4M3FNUZ, 0x40), 1.0f);
  EXPECT_TRUE(std::isnan(minifloat_to_float(DType::F8E4M3FNUZ, 0x80)));
  EXPECT_EQ(minifloat_to_float(DType::F8E5M2, 0x7B), 57344.0f);
  EXPECT_EQ(minifloat_to_float(DType::F8E5M2, 0x7C), kInf);
  EXPECT_EQ(minifloat_to_float(DType::F8E5M2, 0xFC), -kInf);
  EXPECT_TRUE(std::isnan(minifloat_to_float(DType::F8E5M2, 0x7D)));
  EXPECT_EQ(minifloat_to_float(DType::F8E5M2, 0x3C), 1.0f);
  EXPECT_EQ(minifloat_to_float(DType::F8E5M2FNUZ, 0x7F), 57344.0f);
  EXPECT_EQ(minifloat_to_float(DType::F8E5M2FNUZ, 0x40), 1.0f);
  const float e2m1[8] = {0, 0.5f, 1, 1.5f, 2, 3, 4, 6};
  for (int c = 0; c < 8; ++c) {
    EXPECT_EQ(minifloat_to_float(DType::F4E2M1, static_cast<uint8_t>(c)), e2m1[c]);
    EXPECT_EQ(minifloat_to_float(DType::F4E2M1, static_cast<uint8_t>(c | 8)), -e2m1[c]);
  }
  EXPECT_EQ(minifloat_to_float(DType::F8E8M0, 127), 1.0f);
  EXPECT_EQ(minifloat_to_float(DType::F8E8M0, 0), std::ldexp(1.0f, -127));
  EXPECT_EQ(minifloat_to_float(DType::F8E8M0, 254), std::ldexp(1.0f, 127));
  EXPECT_TRUE(std::isnan(minifloat_to_float(DType::F8E8M0, 255)));
}

TEST(Minifloat, RoundsToNearestEven) {
  // e4m3fn near 1: codes 1.0 (0x38) and 1.125 (0x39); 1.0625 is the tie, 0x38 even.
  EXPECT_EQ(float_to_minifloat(DType::F8E4M3FN, 1.0625f), 0x38);
  EXPECT_EQ(float_to_minifloat(DType::F8E4M3FN, 1.0626f), 0x39);
  EXPECT_EQ(float_to_minifloat(DType::F8E4M3FN, 1.1875f), 0x3A);  // tie of 0x39, 0x3A
  // 464 lies halfway from 448 (mantissa 110) to 480 (the NaN code): even, so 448.
  EXPECT_EQ(float_to_minifloat(DType::F8E4M3FN, 464.0f), 0x7E);
  // Rounding that carries into the next binade: 1.96875 -> 2.0 in e5m2.
  EXPECT_EQ(float_to_minifloat(DType::F8E5M2, 1.9375f), 0x40);
  // Subnormals: half the smallest e4m3fn subnormal ties to 0; just above rounds up.
  EXPECT_EQ(float_to_minifloat(DType::F8E4M3FN, std::ldexp(1.0f, -10)), 0x00);
  EXPECT_EQ(float_to_minifloat(DType::F8E4M3FN, std::ldexp(1.5f, -10)), 0x01);
  // float4: 0.25 ties to 0, 0.75 to 1.0 (mantissa even), 2.5 to 2, 3.5 to 4, 5 to 4.
  EXPECT_EQ(float_to_minifloat(DType::F4E2M1, 0.25f), 0x0);
  EXPECT_EQ(float_to_minifloat(DType::F4E2M1, 0.75f), 0x2);
  EXPECT_EQ(float_to_minifloat(DType::F4E2M1, 2.5f), 0x4);
  EXPECT_EQ(float_to_minifloat(DType::F4E2M1, -3.5f), 0xE);
  EXPECT_EQ(float_to_minifloat(DType::F4E2M1, 5.0f), 0x6);
}

TEST(Minifloat, OverflowAndSpecials) {
  EXPECT_EQ(float_to_minifloat(DType::F8E4M3FN, 1e6f), 0x7F);  // NaN: no infinity
  EXPECT_EQ(float_to_minifloat(DType::F8E4M3FN, -kInf), 0xFF);
  EXPECT_EQ(float_to_minifloat(DType::F8E4M3FN, kNaN), 0x7F);
  EXPECT_EQ(float_to_minifloat(DType::F8E4M3FN, -0.0f), 0x80);
  EXPECT_EQ(float_to_minifloat(DType::F8E5M2, 1e6f), 0x7C);  // infinity
  EXPECT_EQ(float_to_minifloat(DType::F8E5M2, -kInf), 0xFC);
  EXPECT_EQ(float_to_minifloat(DType::F8E5M2, 61440.0f), 0x7C);  // the tie past the max
  EXPECT_EQ(float_to_minifloat(DType::F8E5M2, 61439.0f), 0x7B);
  EXPECT_EQ(float_to_minifloat(DType::F8E4M3FNUZ, 1e6f), 0x80);
  EXPECT_EQ(float_to_minifloat(DType::F8E4M3FNUZ, -1e-7f), 0x00);  // no negative zero
  EXPECT_EQ(float_to_minifloat(DType::F8E5M2FNUZ, -kInf), 0x80);
  EXPECT_EQ(float_to_minifloat(DType::F4E2M1, 1e6f), 0x7);  // float4 saturates
  EXPECT_EQ(float_to_minifloat(DType::F4E2M1, -kInf), 0xF);
  EXPECT_EQ(float_to_minifloat(DType::F4E2M1, kNaN), 0x8);
  EXPECT_EQ(minifloat_max(DType::F8E4M3FN), 448.0);
  EXPECT_EQ(minifloat_max(DType::F8E4M3FNUZ), 240.0);
  EXPECT_EQ(minifloat_max(DType::F8E5M2), 57344.0);
  EXPECT_EQ(minifloat_max(DType::F8E5M2FNUZ), 57344.0);
  EXPECT_EQ(minifloat_max(DType::F4E2M1), 6.0);
}

TEST(Minifloat, E8M0RoundsUp) {
  EXPECT_EQ(float_to_minifloat(DType::F8E8M0, 1.0f), 127);
  EXPECT_EQ(float_to_minifloat(DType::F8E8M0, 1.1f), 128);
  EXPECT_EQ(float_to_minifloat(DType::F8E8M0, 0.124f), 124);
  EXPECT_EQ(float_to_minifloat(DType::F8E8M0, -4.0f), 129);  // no sign: the magnitude
  EXPECT_EQ(float_to_minifloat(DType::F8E8M0, 0.0f), 0);
  EXPECT_EQ(float_to_minifloat(DType::F8E8M0, 1e-40f), 0);    // below 2^-127: up to it
  EXPECT_EQ(float_to_minifloat(DType::F8E8M0, 3e38f), 0xFF);  // past 2^127
  EXPECT_EQ(float_to_minifloat(DType::F8E8M0, kInf), 0xFF);
}

TEST(Minifloat, StorageOfSmallIntegers) {
  EXPECT_EQ(narrow_to_bits(DType::I4, -9), 0x07);  // wraps, as ONNX Cast does
  EXPECT_EQ(narrow_to_bits(DType::I4, -8), 0xF8);  // sign-extended into the byte
  EXPECT_EQ(narrow_to_bits(DType::U4, 17), 0x01);
  EXPECT_EQ(narrow_to_bits(DType::I2, 2), 0xFE);
  EXPECT_EQ(narrow_to_bits(DType::U2, -1), 0x03);
  uint8_t byte = 0;
  store_element(DType::I4, &byte, 0, ScalarType::I64, scalar_i64(-3));
  EXPECT_EQ(load_element(DType::I4, &byte, 0).i64, -3);
  store_element(DType::F8E4M3FN, &byte, 0, ScalarType::F32, scalar_f32(-1.5f));
  EXPECT_EQ(byte, 0xBC);
  EXPECT_EQ(load_element(DType::F8E4M3FN, &byte, 0).f32, -1.5f);
}

}  // namespace
}  // namespace ferrite
