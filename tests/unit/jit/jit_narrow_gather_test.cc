// Byte and float16 loads the JIT gathers through the aligned dwords that hold them, against
// the reference: strided uint8/int8/float16 loads, masked ones whose masked-off lanes lie
// outside the buffer (a pool's or a padded convolution's edges along the vector dim), and
// gathers by an index loaded per lane; tails of both ISAs, and elements at every alignment.
#include <gtest/gtest.h>

#include "tests/unit/jit/jit_test_util.h"
#include "tests/unit/runtime/kernel_builder.h"

namespace ferrite {
namespace {

constexpr DType kNarrow[] = {DType::U8, DType::I8, DType::F16};

// What a load of t computes in (float16 widens to float32), and the buffer type holding it.
ScalarType value_type(DType t) {
  return t == DType::F16 ? ScalarType::F32 : ScalarType::I64;
}
DType value_dtype(DType t) {
  return t == DType::F16 ? DType::F32 : DType::I64;
}

using jit_test::expect_jit_matches;
using jit_test::isas;
using jit_test::random_tensor;
using testing::Affine;
using testing::KernelBuilder;
using testing::V;

// y[i] = float(x[offset + stride * i]) for every narrow type, where stride * i + offset
// stays inside x: every lane gathers an element at a different position in its dword.
TEST(JitNarrowGather, Strided) {
  for (DType t : kNarrow) {
    for (int64_t stride : {2, 3, 5}) {
      for (int64_t n : {5, 16, 37}) {
        SCOPED_TRACE(str_cat(dtype_name(t), " stride ", stride, " n ", n));
        const int64_t offset = n % 4;
        const int64_t xn = offset + stride * (n - 1) + 1;  // the last byte is the buffer's
        KernelBuilder b({n});
        const int x = b.arg(t, xn), y = b.arg(DType::F32, n, true);
        b.store(y, V(0), b.cast(ScalarType::F32, b.load(x, Affine({{0, stride}}, offset))));
        const Kernel k = b.build();
        for (const std::string& isa : isas()) EXPECT_EQ(jit::jit_refusal(k, isa), "");
        expect_jit_matches(
            k, testing::tensors(random_tensor(t, xn, 7, -128, 255), testing::zeros(DType::F32, n)));
      }
    }
  }
}

// A 3-tap max over x padded by one on each side, as a pool's window: taps at i*s - 1 + j,
// each masked to [0, xn); the first and last windows reach outside x, where the masked-off
// lanes' indices (-1, xn) must not be read.
TEST(JitNarrowGather, MaskedAtTheBufferEdges) {
  for (DType t : kNarrow) {
    for (int64_t stride : {1, 2}) {
      for (int64_t n : {5, 16, 37}) {
        SCOPED_TRACE(str_cat(dtype_name(t), " stride ", stride, " n ", n));
        const int64_t xn = stride * (n - 1) + 1;
        KernelBuilder b({n});
        const int x = b.arg(t, xn), y = b.arg(value_dtype(t), n, true);
        const int i = b.loop_var(0);
        int acc = -1;
        for (int64_t j = 0; j < 3; ++j) {
          const int at =
              b.binary(Op::Add, b.binary(Op::Mul, i, b.constant(ScalarType::I64, stride)),
                       b.constant(ScalarType::I64, j - 1));
          const int inside = b.binary(Op::And, b.binary(Op::Ge, at, b.constant(ScalarType::I64, 0)),
                                      b.binary(Op::Lt, at, b.constant(ScalarType::I64, xn)));
          const int v = b.where(inside, b.load(x, Affine({{0, stride}}, j - 1), inside),
                                b.constant(value_type(t), -1000));
          acc = acc < 0 ? v : b.binary(Op::Max, acc, v);
        }
        b.store(y, V(0), acc);
        const Kernel k = b.build();
        for (const std::string& isa : isas()) EXPECT_EQ(jit::jit_refusal(k, isa), "");
        expect_jit_matches(k, testing::tensors(random_tensor(t, xn, 11, -128, 255),
                                               testing::zeros(value_dtype(t), n)));
      }
    }
  }
}

// y[i] = x[idx[i]]: a gather by checked per-lane indices.
TEST(JitNarrowGather, ByIndex) {
  for (DType t : kNarrow) {
    for (int64_t n : {5, 16, 37}) {
      SCOPED_TRACE(str_cat(dtype_name(t), " n ", n));
      const int64_t xn = 23;
      KernelBuilder b({n});
      const int x = b.arg(t, xn), idx = b.arg(DType::I64, n), y = b.arg(value_dtype(t), n, true);
      const int at = b.check_index(b.load(idx, V(0)), xn, "index out of range");
      b.store(y, V(0), b.load(x, ix_value(at)));
      const Kernel k = b.build();
      for (const std::string& isa : isas()) EXPECT_EQ(jit::jit_refusal(k, isa), "");
      expect_jit_matches(k, testing::tensors(random_tensor(t, xn, 3, -128, 255),
                                             random_tensor(DType::I64, n, 5, -xn, xn),
                                             testing::zeros(value_dtype(t), n)));
    }
  }
}

}  // namespace
}  // namespace ferrite
