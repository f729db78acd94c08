// Casts from float32 to integers on the JIT against the reference: conversions stored as
// int64 (truncation, NaN, saturation), and clamped floats in int32 lanes narrowed into bytes
// (quantization).
#include <gtest/gtest.h>

#include <cmath>

#include "tests/unit/jit/jit_test_util.h"
#include "tests/unit/runtime/kernel_builder.h"

namespace ferrite {
namespace {

using jit_test::expect_jit_matches;
using jit_test::isas;
using testing::KernelBuilder;
using testing::V;

TEST(JitKernel, CastsF32ToInt64AlongLanes) {
  // Truncation, NaN -> 0, saturation at both ends, values past int32; tails of both ISAs.
  for (int64_t n : {5, 16, 37}) {
    KernelBuilder b({n});
    const int x = b.arg(DType::F32, n), y = b.arg(DType::I64, n, true);
    b.store(y, V(0),
            b.cast(ScalarType::I64,
                   b.binary(Op::Mul, b.load(x, V(0)), b.constant(ScalarType::F32, 3))));
    const float specials[] = {NAN,   INFINITY, -INFINITY,     3e18f,         -3e18f,
                              5e9f,  -5e9f,    -2.9f,         2.9f,          0.0f,
                              -0.0f, 1e-30f,   2147483520.0f, -2147483648.0f};
    Tensor in(DType::F32, {n});
    for (int64_t i = 0; i < n; ++i)
      reinterpret_cast<float*>(in.data())[i] = specials[i % 14] * (i < 14 ? 1.0f : 0.37f);
    expect_jit_matches(b.build(), testing::tensors(std::move(in), testing::zeros(DType::I64, n)));
  }
}

TEST(JitKernel, QuantizesClampedFloatsIntoBytes) {
  // round(x / s) clamped to a byte type's range (NaN to the zero point), then cast and
  // stored as uint8 and int8: the clamp proves int32 bounds, so the cast is int32 lanes
  // and the stores narrow them; tails of both ISAs.
  for (int64_t n : {5, 16, 37}) {
    KernelBuilder b({n});
    const int x = b.arg(DType::F32, n), u = b.arg(DType::U8, n, true),
              s = b.arg(DType::I8, n, true);
    const int q =
        b.unary(Op::Round, b.binary(Op::Div, b.load(x, V(0)), b.constant(ScalarType::F32, 0.25)));
    auto clamp = [&](double lo, double hi, double zero) {
      const int c = b.binary(Op::Min, b.binary(Op::Max, q, b.constant(ScalarType::F32, lo)),
                             b.constant(ScalarType::F32, hi));
      const int z = b.constant(ScalarType::F32, zero);
      return b.cast(ScalarType::I64, b.where(b.unary(Op::IsNaN, c), z, c));
    };
    b.store(u, V(0), clamp(0, 255, 128));
    b.store(s, V(0), clamp(-128, 127, 0));
    const float specials[] = {NAN,    INFINITY, -INFINITY, 3e9f,    -3e9f,  31.9f,
                              -32.1f, 0.125f,   0.375f,    -0.125f, 63.75f, -0.0f};
    Tensor in(DType::F32, {n});
    for (int64_t i = 0; i < n; ++i)
      reinterpret_cast<float*>(in.data())[i] =
          i < 12 ? specials[i] : 0.7f * static_cast<float>(i - 20);
    const Kernel k = b.build();
    for (const std::string& isa : isas()) EXPECT_EQ(jit::jit_refusal(k, isa), "");
    expect_jit_matches(k, testing::tensors(std::move(in), testing::zeros(DType::U8, n),
                                           testing::zeros(DType::I8, n)));
  }
}

}  // namespace
}  // namespace ferrite
