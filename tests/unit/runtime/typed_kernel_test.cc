// Kernels over i64, bool, f64 and the storage conversions (f16, bf16, narrow ints): exact
// on every backend, checked against values computed here and against the reference.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "tests/unit/runtime/kernel_builder.h"

namespace ferrite {
namespace testing {
namespace {

const char* const kBackends[] = {"reference", "portable"};

int64_t i64_at(const Tensor& t, int64_t i) {
  return load_element(t.dtype(), t.data(), i).i64;
}

// out = [a + b, a * b, a / b, a mod b, a fmod b, max(a, b), -a, abs(a)] with row and column
// broadcasts over [rows, cols].
TEST(TypedKernel, Int64Arithmetic) {
  const int64_t rows = 3, cols = 260, n = rows * cols;
  const Op ops[] = {Op::Add, Op::Mul, Op::Div, Op::Mod, Op::FMod, Op::Max, Op::Pow, Op::Sub};
  for (Op op : ops) {
    KernelBuilder b({rows, cols});
    const int a = b.arg(DType::I64, n), bb = b.arg(DType::I32, cols),
              out = b.arg(DType::I64, n, true);
    const Index ix = Affine({{0, cols}, {1, 1}});
    b.store(out, ix, b.binary(op, b.load(a, ix), b.load(bb, V(1))));
    const Kernel k = b.build();
    std::vector<int64_t> av(n), bv(cols);
    for (int64_t i = 0; i < n; ++i) av[i] = (i * 37) % 201 - 100;
    for (int64_t j = 0; j < cols; ++j)
      bv[j] = op == Op::Pow ? j % 5 - 1 : (j % 13) - 6;  // includes 0
    av[0] = std::numeric_limits<int64_t>::max();
    const std::vector<Tensor> bufs =
        tensors(make_tensor(DType::I64, av), make_tensor(DType::I32, bv), zeros(DType::I64, n));
    const auto got = run_kernel("portable", k, bufs);
    for (int64_t i = 0; i < n; ++i) {
      const Scalar want =
          eval_binary(op, ScalarType::I64, scalar_i64(av[i]), scalar_i64(bv[i % cols]));
      ASSERT_EQ(i64_at(got[2], i), want.i64) << op_name(op) << " " << i;
    }
    expect_same_bytes(run_kernel("reference", k, bufs)[2], got[2], op_name(op));
  }
}

// Bool logic and i64 compares stored to bool, and a Where on i64.
TEST(TypedKernel, BoolLogicAndCompares) {
  const int64_t n = 300;
  KernelBuilder b({n});
  const int p = b.arg(DType::Bool, n), q = b.arg(DType::Bool, n), x = b.arg(DType::I64, n);
  const int o_and = b.arg(DType::Bool, n, true), o_or = b.arg(DType::Bool, n, true);
  const int o_xor = b.arg(DType::Bool, n, true), o_sel = b.arg(DType::I64, n, true);
  const int vp = b.load(p, V(0)), vq = b.load(q, V(0)), vx = b.load(x, V(0));
  b.store(o_and, V(0), b.binary(Op::And, vp, b.unary(Op::Not, vq)));
  b.store(o_or, V(0), b.binary(Op::Or, vp, b.binary(Op::Lt, vx, b.constant(ScalarType::I64, 0))));
  b.store(o_xor, V(0), b.binary(Op::Xor, vp, vq));
  b.store(o_sel, V(0), b.where(vq, vx, b.unary(Op::Neg, vx)));
  const Kernel k = b.build();
  std::vector<int64_t> pv(n), qv(n), xv(n);
  for (int64_t i = 0; i < n; ++i) pv[i] = i % 2, qv[i] = (i / 2) % 2, xv[i] = i % 11 - 5;
  for (const char* backend : kBackends) {
    const auto got =
        run_kernel(backend, k,
                   tensors(make_tensor(DType::Bool, pv), make_tensor(DType::Bool, qv),
                           make_tensor(DType::I64, xv), zeros(DType::Bool, n),
                           zeros(DType::Bool, n), zeros(DType::Bool, n), zeros(DType::I64, n)));
    for (int64_t i = 0; i < n; ++i) {
      ASSERT_EQ(got[3].data()[i], pv[i] && !qv[i]) << backend << i;
      ASSERT_EQ(got[4].data()[i], pv[i] || xv[i] < 0) << backend << i;
      ASSERT_EQ(got[5].data()[i], pv[i] != qv[i]) << backend << i;
      ASSERT_EQ(i64_at(got[6], i), qv[i] ? xv[i] : -xv[i]) << backend << i;
    }
  }
}

TEST(TypedKernel, Float64Math) {
  const int64_t n = 100;
  KernelBuilder b({n});
  const int x = b.arg(DType::F64, n), out = b.arg(DType::F64, n, true);
  const int v = b.load(x, V(0));
  b.store(out, V(0), b.binary(Op::Add, b.unary(Op::Exp, v), b.binary(Op::Mul, v, v)));
  const Kernel k = b.build();
  std::vector<double> xv(n);
  for (int64_t i = 0; i < n; ++i) xv[i] = (static_cast<double>(i) - 50) / 7;
  for (const char* backend : kBackends) {
    const auto got =
        run_kernel(backend, k, tensors(make_tensor(DType::F64, xv), zeros(DType::F64, n)));
    for (int64_t i = 0; i < n; ++i)
      ASSERT_DOUBLE_EQ(load_element(DType::F64, got[1].data(), i).f64,
                       std::exp(xv[i]) + xv[i] * xv[i]);
  }
}

// f32 -> i64 (truncating, NaN -> 0, saturating), f32 -> f16 and bf16 storage, f16 -> f32,
// i64 -> u8 (wrapping), bool -> f32.
TEST(TypedKernel, CastsAndStorageConversions) {
  const std::vector<float> xs = {1.5f,     -2.7f,    std::numeric_limits<float>::quiet_NaN(),
                                 1e30f,    -1e30f,   65504.0f,
                                 70000.0f, 1.0f / 3, 300.0f,
                                 0.0f,     -0.0f,    2.5f};
  const int64_t n = static_cast<int64_t>(xs.size());
  KernelBuilder b({n});
  const int x = b.arg(DType::F32, n);
  const int o_i = b.arg(DType::I64, n, true), o_h = b.arg(DType::F16, n, true);
  const int o_bf = b.arg(DType::BF16, n, true), o_u8 = b.arg(DType::U8, n, true);
  const int o_b = b.arg(DType::F32, n, true);
  const int v = b.load(x, V(0));
  const int vi = b.cast(ScalarType::I64, v);
  b.store(o_i, V(0), vi);
  b.store(o_h, V(0), v);
  b.store(o_bf, V(0), v);
  b.store(o_u8, V(0), vi);
  b.store(o_b, V(0), b.cast(ScalarType::F32, b.cast(ScalarType::Bool, v)));
  const Kernel k = b.build();
  for (const char* backend : kBackends) {
    const auto got =
        run_kernel(backend, k,
                   tensors(make_tensor(DType::F32, xs), zeros(DType::I64, n), zeros(DType::F16, n),
                           zeros(DType::BF16, n), zeros(DType::U8, n), zeros(DType::F32, n)));
    for (int64_t i = 0; i < n; ++i) {
      const int64_t want_i = eval_cast(ScalarType::F32, ScalarType::I64, scalar_f32(xs[i])).i64;
      EXPECT_EQ(i64_at(got[1], i), want_i) << backend << i;
      uint16_t h, bf;
      std::memcpy(&h, got[2].data() + 2 * i, 2);
      std::memcpy(&bf, got[3].data() + 2 * i, 2);
      EXPECT_EQ(h, float_to_half(xs[i])) << backend << i;
      EXPECT_EQ(bf, float_to_bfloat16(xs[i])) << backend << i;
      EXPECT_EQ(got[4].data()[i], static_cast<uint8_t>(static_cast<uint64_t>(want_i)))
          << backend << i;
      EXPECT_EQ(f32_at(got[5], i), xs[i] != 0 ? 1.0f : 0.0f) << backend << i;
    }
    EXPECT_EQ(i64_at(got[1], 2), 0);                                    // NaN
    EXPECT_EQ(i64_at(got[1], 3), std::numeric_limits<int64_t>::max());  // saturated
    uint16_t h65504;
    std::memcpy(&h65504, got[2].data() + 2 * 5, 2);
    EXPECT_EQ(h65504, 0x7BFF);
  }
}

// f16 and i8 inputs compute as f32 and i64: out = f16(x) * 2 and i8 sums.
TEST(TypedKernel, NarrowStorageLoads) {
  const std::vector<float> hv = {1.0f, 0.5f, -65504.0f, 0.000061035156f, 3.140625f};
  const std::vector<int64_t> iv = {-128, 127, -1, 0, 5};
  const int64_t n = 5;
  KernelBuilder b({n});
  const int h = b.arg(DType::F16, n), i8 = b.arg(DType::I8, n);
  const int of = b.arg(DType::F32, n, true), oi = b.arg(DType::I64, n, true);
  b.store(of, V(0), b.binary(Op::Mul, b.load(h, V(0)), b.constant(ScalarType::F32, 2)));
  const int vi = b.load(i8, V(0));
  b.store(oi, V(0), b.binary(Op::Add, vi, vi));
  const Kernel k = b.build();
  for (const char* backend : kBackends) {
    const auto got = run_kernel(backend, k,
                                tensors(make_tensor(DType::F16, hv), make_tensor(DType::I8, iv),
                                        zeros(DType::F32, n), zeros(DType::I64, n)));
    for (int64_t i = 0; i < n; ++i) {
      EXPECT_EQ(f32_at(got[2], i), hv[i] * 2) << backend << i;
      EXPECT_EQ(i64_at(got[3], i), 2 * iv[i]) << backend << i;
    }
  }
}

// LoopVar along the lanes and across rows: out[i, j] = float(i * 1000 + j).
TEST(TypedKernel, LoopVarIota) {
  const int64_t rows = 3, cols = 700;
  KernelBuilder b({rows, cols});
  const int out = b.arg(DType::F32, rows * cols, true);
  const int i = b.loop_var(0), j = b.loop_var(1);
  const int v = b.binary(Op::Add, b.binary(Op::Mul, i, b.constant(ScalarType::I64, 1000)), j);
  b.store(out, Affine({{0, cols}, {1, 1}}), b.cast(ScalarType::F32, v));
  const Kernel k = b.build();
  for (const char* backend : kBackends) {
    const auto got = run_kernel(backend, k, tensors(zeros(DType::F32, rows * cols)));
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c)
        ASSERT_EQ(f32_at(got[0], r * cols + c), static_cast<float>(r * 1000 + c)) << backend;
  }
}

// Scatter-add with repeated indices: out[idx[i]] += src[i]. The kernel reads what earlier
// points wrote, so every backend must keep the point order.
TEST(TypedKernel, ScatterAddWithDuplicateIndices) {
  const int64_t n = 600, m = 7;
  KernelBuilder b({n});
  const int src = b.arg(DType::F32, n), idx = b.arg(DType::I64, n),
            out = b.arg(DType::F32, m, true);
  const int at = b.check_index(b.load(idx, V(0)), m, "ScatterElements 's': indices");
  const int old = b.load(out, ix_value(at));
  b.store(out, ix_value(at), b.binary(Op::Add, old, b.load(src, V(0))));
  const Kernel k = b.build();
  std::vector<int64_t> iv(n);
  std::vector<float> sv(n);
  std::vector<double> want(m, 1.0);
  for (int64_t i = 0; i < n; ++i) {
    iv[i] = (i * 5) % m - (i % 2 ? m : 0);  // negative indices too
    sv[i] = static_cast<float>(i % 3);
    want[(iv[i] + m) % m] += sv[i];
  }
  for (const char* backend : kBackends) {
    const auto got = run_kernel(backend, k,
                                tensors(make_tensor(DType::F32, sv), make_tensor(DType::I64, iv),
                                        make_tensor(DType::F32, std::vector<float>(m, 1.0f))));
    for (int64_t j = 0; j < m; ++j) EXPECT_EQ(f32_at(got[2], j), want[j]) << backend << " " << j;
  }
}

// A kernel without dims is one point.
TEST(TypedKernel, ZeroDimKernel) {
  KernelBuilder b({});
  const int a = b.arg(DType::F32, 1), c = b.arg(DType::I64, 1), out = b.arg(DType::F32, 1, true);
  b.store(out, C(0), b.binary(Op::Mul, b.load(a, C(0)), b.cast(ScalarType::F32, b.load(c, C(0)))));
  const Kernel k = b.build();
  for (const char* backend : kBackends) {
    const auto got = run_kernel(
        backend, k,
        tensors(make_tensor(DType::F32, std::vector<float>{1.5f}),
                make_tensor(DType::I64, std::vector<int64_t>{-4}), zeros(DType::F32, 1)));
    EXPECT_EQ(f32_at(got[2], 0), -6.0f) << backend;
  }
}

}  // namespace
}  // namespace testing
}  // namespace ferrite
