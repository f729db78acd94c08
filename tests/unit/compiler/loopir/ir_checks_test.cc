// The loop IR refuses what no lowering should build, with an Error instead of a read past
// a vector or an int64 overflow: an index of the wrong rank (into a value, a view, a
// layout), shapes past int64 counts, index constants that overflow, division by < 1.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

#include "compiler/loopir/checked_int.h"
#include "compiler/loopir/ir.h"
#include "compiler/plan/error.h"

namespace ferrite {
namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

template <class F>
void expect_error(F&& f, const std::string& what) {
  try {
    f();
    ADD_FAILURE() << "no error; expected: " << what;
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
  }
}

TEST(LoopIrChecks, LoadsCheckTheIndexRank) {
  Buffer buf;
  buf.name = "w";
  buf.size = {};
  buf.origin = BufferOrigin::Input;
  TensorBoxPtr scalar = make_buffer_box(&buf);
  KernelBuilder b("k", {3}, 0);
  expect_error([&] { scalar->load(b, {ix_var(0)}); },
               "an index of rank 1 into a view of buffer 'w' of shape []");
  TensorBoxPtr value = make_pointwise_box(
      DType::F32, {2, 3},
      [](KernelBuilder& kb, const std::vector<Index>&) { return kb.constant(ScalarType::F32, 1); },
      "Op 'n'");
  expect_error([&] { value->load(b, {ix_var(0)}); },
               "an index of rank 1 into a view of the value computed by Op 'n' of shape [2, 3]");
  // A remap that drops a dim: caught where the view's index leaves it (here as soon as
  // make_view traces the remap for the view's strides).
  expect_error([&] { make_view(value, {6}, [](const std::vector<Index>& i) { return i; }); },
               "an index of rank 1 into the base of a view of the value computed by Op 'n'");
  expect_error([&] { linear_index({ix_var(0)}, {}); },
               "an index of rank 1 into a layout of rank 0");
}

TEST(LoopIrChecks, ShapesMustBeCountable) {
  expect_error([] { check_shape({2, -1}, "x"); }, "x: negative dim -1 in shape [2, -1]");
  expect_error(
      [] {
        check_shape({int64_t{1} << 40, int64_t{1} << 40}, "x");
      },
      "has more than 2^58 elements");
  // Beside a zero dim the others still make strides: they must be countable too.
  expect_error(
      [] {
        check_shape({0, int64_t{1} << 40, int64_t{1} << 40}, "x");
      },
      "has more than 2^58 elements");
  check_shape({0, int64_t{1} << 40}, "x");
  expect_error(
      [] {
        make_pointwise_box(
            DType::F32, {kMax, 2},
            [](KernelBuilder& kb, const std::vector<Index>&) {
              return kb.constant(ScalarType::F32, 0);
            },
            "Op 'n'");
      },
      "Op 'n': shape [9223372036854775807, 2] has more than 2^58 elements");
}

TEST(LoopIrChecks, CheckedArithmetic) {
  EXPECT_EQ(checked_mul(int64_t{1} << 31, int64_t{1} << 31, "m"), int64_t{1} << 62);
  expect_error([] { checked_mul(int64_t{1} << 32, int64_t{1} << 32, "bs^2"); },
               "bs^2 overflows int64 (4294967296 * 4294967296)");
  expect_error([] { checked_add(kMax, 1, "a"); }, "a overflows int64");
  expect_error([] { checked_sub(-kMax, 2, "s"); }, "s overflows int64");
  expect_error([] { checked_product({3, -2}, "p"); }, "p: negative dim -2");
  expect_error([] { checked_int(9.3e18, "d"); }, "d (9.3e+18) is not a finite int64");
  expect_error([] { checked_int(std::nan(""), "d"); }, "is not a finite int64");
  EXPECT_EQ(checked_int(-9223372036854775808.0, "d"), std::numeric_limits<int64_t>::min());
}

TEST(LoopIrChecks, IndexConstantsAndDivisors) {
  expect_error([] { ix_add(ix_const(kMax), ix_const(1)); }, "an index constant overflows");
  expect_error([] { ix_mul(ix_const(int64_t{1} << 40), int64_t{1} << 40); },
               "an index constant overflows");
  expect_error([] { ix_floordiv(ix_var(0), 0); }, "an index divided by 0");
  expect_error([] { ix_mod(ix_const(5), -3); }, "an index modulo -3");
  // A range past int64 proves nothing rather than a wrapped bound.
  IndexSimplifier simp({kMax});
  EXPECT_FALSE(simp.range(ix_binary(IndexKind::Mul, ix_var(0), ix_const(4))).has_value());
  KernelBuilder b("k", {1}, 0);
  expect_error([&] { b.constant(ScalarType::I64, 1e19); }, "is not a finite int64");
  EXPECT_EQ(b.instr(b.constant_i64(kMax)).iimm, kMax);
}

}  // namespace
}  // namespace ferrite
