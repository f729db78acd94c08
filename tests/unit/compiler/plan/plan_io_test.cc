// The plan serializer: exact round trips, and corrupt input (every truncation, random byte
// flips, bad magic or version) gives ferrite::Error, never a crash or a huge allocation.
#include "compiler/plan/plan_io.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <string>

#include "compiler/plan/error.h"
#include "tests/unit/compiler/plan/test_plans.h"

namespace ferrite {
namespace {

uint64_t bits(double d) {
  uint64_t b;
  std::memcpy(&b, &d, sizeof b);
  return b;
}

// Every field, including the ones a kind does not use; doubles compared by their bits.
void expect_index_eq(const Index& x, const Index& y) {
  ASSERT_EQ(x == nullptr, y == nullptr);
  if (!x) return;
  EXPECT_EQ(x->kind, y->kind);
  EXPECT_EQ(x->c, y->c);
  EXPECT_EQ(x->id, y->id);
  expect_index_eq(x->a, y->a);
  expect_index_eq(x->b, y->b);
}

void expect_kernel_eq(const Kernel& x, const Kernel& y) {
  EXPECT_EQ(x.name, y.name);
  EXPECT_EQ(x.ranges, y.ranges);
  EXPECT_EQ(x.num_reduce, y.num_reduce);
  ASSERT_EQ(x.args.size(), y.args.size());
  for (size_t i = 0; i < x.args.size(); ++i) {
    EXPECT_EQ(x.args[i].dtype, y.args[i].dtype);
    EXPECT_EQ(x.args[i].elements, y.args[i].elements);
    EXPECT_EQ(x.args[i].output, y.args[i].output);
  }
  ASSERT_EQ(x.code.size(), y.code.size());
  for (size_t i = 0; i < x.code.size(); ++i) {
    const Instr &a = x.code[i], &b = y.code[i];
    SCOPED_TRACE(i);
    EXPECT_EQ(a.op, b.op);
    EXPECT_EQ(a.type, b.type);
    EXPECT_EQ(a.a, b.a);
    EXPECT_EQ(a.b, b.b);
    EXPECT_EQ(a.c, b.c);
    EXPECT_EQ(a.arg, b.arg);
    EXPECT_EQ(a.reduce, b.reduce);
    EXPECT_EQ(a.mask, b.mask);
    expect_index_eq(a.index, b.index);
    EXPECT_EQ(bits(a.fimm), bits(b.fimm));
    EXPECT_EQ(a.iimm, b.iimm);
  }
  EXPECT_EQ(x.post_begin, y.post_begin);
  EXPECT_EQ(x.loop_ends, y.loop_ends);
  EXPECT_EQ(x.messages, y.messages);
}

void expect_ref_eq(const TensorRef& x, const TensorRef& y) {
  EXPECT_EQ(x.buffer, y.buffer);
  EXPECT_EQ(x.shape, y.shape);
  EXPECT_EQ(x.strides, y.strides);
  EXPECT_EQ(x.offset, y.offset);
}

void expect_extern_eq(const ExternCall& x, const ExternCall& y) {
  EXPECT_EQ(x.op, y.op);
  EXPECT_EQ(x.origin, y.origin);
  EXPECT_EQ(x.ints, y.ints);
  ASSERT_EQ(x.floats.size(), y.floats.size());
  for (auto i = x.floats.begin(), j = y.floats.begin(); i != x.floats.end(); ++i, ++j) {
    EXPECT_EQ(i->first, j->first);
    EXPECT_EQ(bits(i->second), bits(j->second));
  }
  ASSERT_EQ(x.inputs.size(), y.inputs.size());
  for (size_t i = 0; i < x.inputs.size(); ++i) expect_ref_eq(x.inputs[i], y.inputs[i]);
  ASSERT_EQ(x.outputs.size(), y.outputs.size());
  for (size_t i = 0; i < x.outputs.size(); ++i) expect_ref_eq(x.outputs[i], y.outputs[i]);
  EXPECT_EQ(x.epilogue, y.epilogue);
  EXPECT_EQ(x.post_ops, y.post_ops);
}

void expect_plan_eq(const Plan& x, const Plan& y) {
  ASSERT_EQ(x.buffers.size(), y.buffers.size());
  for (size_t i = 0; i < x.buffers.size(); ++i) {
    const PlanBuffer &a = x.buffers[i], &b = y.buffers[i];
    EXPECT_EQ(a.name, b.name);
    EXPECT_EQ(a.dtype, b.dtype);
    EXPECT_EQ(a.shape, b.shape);
    EXPECT_EQ(a.kind, b.kind);
    EXPECT_EQ(a.offset, b.offset);
    EXPECT_EQ(a.constant, b.constant);
  }
  EXPECT_EQ(x.constants, y.constants);
  ASSERT_EQ(x.packed.size(), y.packed.size());
  for (size_t i = 0; i < x.packed.size(); ++i) {
    EXPECT_EQ(x.packed[i].extern_index, y.packed[i].extern_index);
    EXPECT_EQ(x.packed[i].input, y.packed[i].input);
    EXPECT_EQ(x.packed[i].layout, y.packed[i].layout);
    EXPECT_EQ(x.packed[i].bytes, y.packed[i].bytes);
  }
  ASSERT_EQ(x.kernels.size(), y.kernels.size());
  for (size_t i = 0; i < x.kernels.size(); ++i) expect_kernel_eq(x.kernels[i], y.kernels[i]);
  ASSERT_EQ(x.externs.size(), y.externs.size());
  for (size_t i = 0; i < x.externs.size(); ++i) expect_extern_eq(x.externs[i], y.externs[i]);
  ASSERT_EQ(x.steps.size(), y.steps.size());
  for (size_t i = 0; i < x.steps.size(); ++i) {
    EXPECT_EQ(x.steps[i].kind, y.steps[i].kind);
    EXPECT_EQ(x.steps[i].index, y.steps[i].index);
    EXPECT_EQ(x.steps[i].buffers, y.steps[i].buffers);
    ASSERT_EQ(x.steps[i].guards.size(), y.steps[i].guards.size());
    for (size_t j = 0; j < x.steps[i].guards.size(); ++j) {
      EXPECT_EQ(x.steps[i].guards[j].buffer, y.steps[i].guards[j].buffer);
      EXPECT_EQ(x.steps[i].guards[j].value, y.steps[i].guards[j].value);
    }
  }
  EXPECT_EQ(x.inputs, y.inputs);
  EXPECT_EQ(x.outputs, y.outputs);
  EXPECT_EQ(x.pool_bytes, y.pool_bytes);
}

std::string error_of(const std::vector<uint8_t>& bytes) {
  try {
    deserialize_plan(bytes.data(), bytes.size());
  } catch (const Error& e) {
    return e.what();
  }
  return "<no error>";
}

TEST(PlanIoTest, RoundTripIsExact) {
  Plan p = plan_test::full_plan();
  std::vector<uint8_t> bytes = serialize_plan(p);
  Plan q = deserialize_plan(bytes.data(), bytes.size());
  expect_plan_eq(p, q);
  EXPECT_EQ(serialize_plan(q), bytes);  // and the encoding is deterministic
  EXPECT_EQ(bits(q.kernels[0].code[1].fimm), 0x7ff8000000000123ull);
}

// A kernel with inner loops: t1[i0] = sum(t0[i0, :] - max(t0[i0, :])), y1[i0] = argmax of
// the same, over loops [0, 2) and [2, 6).
TEST(PlanIoTest, InnerLoopsRoundTrip) {
  using plan_test::instr;
  using plan_test::mem;
  const ScalarType f = ScalarType::F32, i = ScalarType::I64;
  Plan p = plan_test::full_plan();
  Kernel& k = p.kernels[0];
  const Index x =
      ix_binary(IndexKind::Add, ix_binary(IndexKind::Mul, ix_var(0), ix_const(4)), ix_var(1));
  Instr mx = instr(Op::Reduce, f, 0), sum = instr(Op::Reduce, f, 3), amax = instr(Op::Reduce, i, 3);
  mx.reduce = ReduceKind::Max;
  sum.reduce = ReduceKind::Sum;
  amax.reduce = ReduceKind::ArgMax;
  k.code = {mem(Op::Load, f, 0, x),
            mx,
            mem(Op::Load, f, 0, x),
            instr(Op::Sub, f, 2, 1),
            sum,
            amax,
            mem(Op::Store, f, 1, ix_var(0), 4),
            mem(Op::Store, i, 2, ix_var(0), 5)};
  k.loop_ends = {2, 6};
  k.post_begin = 6;
  validate_plan(p);
  const std::vector<uint8_t> bytes = serialize_plan(p);
  const Plan q = deserialize_plan(bytes.data(), bytes.size());
  expect_plan_eq(p, q);
  EXPECT_EQ(q.kernels[0].loop_ends, (std::vector<int32_t>{2, 6}));
  EXPECT_EQ(q.kernels[1].loop_ends, std::vector<int32_t>{});
  EXPECT_EQ(serialize_plan(q), bytes);
}

TEST(PlanIoTest, HeaderIsMagicThenLittleEndianVersion) {
  std::vector<uint8_t> bytes = serialize_plan(plan_test::full_plan());
  ASSERT_GE(bytes.size(), 12u);
  EXPECT_EQ(std::memcmp(bytes.data(), "FRPLAN\0\0", 8), 0);
  EXPECT_EQ(bytes[8], kPlanFormatVersion);
  EXPECT_EQ(bytes[9] | bytes[10] | bytes[11], 0);
}

TEST(PlanIoTest, EmptyPlanRoundTrips) {
  std::vector<uint8_t> bytes = serialize_plan(Plan{});
  Plan q = deserialize_plan(bytes.data(), bytes.size());
  expect_plan_eq(Plan{}, q);
  EXPECT_THROW(deserialize_plan(nullptr, 0), Error);
}

TEST(PlanIoTest, EveryTruncationThrows) {
  std::vector<uint8_t> bytes = serialize_plan(plan_test::full_plan());
  for (size_t n = 0; n < bytes.size(); ++n) {
    // An exact-size copy, so that a read past the end is caught by ASan.
    std::vector<uint8_t> prefix(bytes.begin(), bytes.begin() + n);
    EXPECT_THROW(deserialize_plan(prefix.data(), n), Error) << "prefix of " << n << " bytes";
  }
  bytes.push_back(0);
  EXPECT_NE(error_of(bytes).find("1 trailing bytes"), std::string::npos) << error_of(bytes);
}

TEST(PlanIoTest, BadMagicAndVersion) {
  std::vector<uint8_t> bytes = serialize_plan(plan_test::full_plan());
  std::vector<uint8_t> bad = bytes;
  bad[0] = 'G';
  EXPECT_EQ(error_of(bad), "plan: not a Ferrite plan (bad magic)");
  bad = bytes;
  bad[8] = 7;
  EXPECT_EQ(error_of(bad), "plan: unsupported format version 7 (this build reads 5 and " +
                               std::to_string(kPlanFormatVersion) + ")");
  bad[8] = 0;
  bad[11] = 1;
  EXPECT_EQ(error_of(bad), "plan: unsupported format version 16777216 (this build reads 5 and " +
                               std::to_string(kPlanFormatVersion) + ")");
}

TEST(PlanIoTest, HugeCountsAreRejectedBeforeAllocating) {
  Plan p;
  std::vector<uint8_t> bytes = serialize_plan(p);
  bytes[12] = bytes[13] = bytes[14] = bytes[15] = 0xff;  // 4 billion buffers
  EXPECT_NE(error_of(bytes).find("buffers claims 4294967295 items"), std::string::npos)
      << error_of(bytes);
}

TEST(PlanIoTest, IndexDepthLimit) {
  // Leaves at depth 256 are the deepest validate_kernel accepts: they round-trip.
  Plan p = plan_test::full_plan();
  Index deep = ix_var(0);
  for (int i = 0; i < 256; ++i) deep = ix_binary(IndexKind::Add, deep, ix_const(0));
  p.kernels[1].code[0].index = deep;
  std::vector<uint8_t> bytes = serialize_plan(p);
  expect_plan_eq(p, deserialize_plan(bytes.data(), bytes.size()));
  // One level deeper is refused by the writer (and would be by the reader).
  p.kernels[1].code[0].index = ix_binary(IndexKind::Add, deep, ix_const(0));
  EXPECT_THROW(serialize_plan(p), Error);
}

TEST(PlanIoTest, InvalidPlansAreRejectedAfterParsing) {
  Plan p = plan_test::full_plan();
  p.buffers[3].offset = 3;
  std::vector<uint8_t> bytes = serialize_plan(p);
  EXPECT_NE(error_of(bytes).find("buffer 3 ('t0') has pool offset 3"), std::string::npos);
  p = plan_test::full_plan();
  p.kernels[0].code[0].op = static_cast<Op>(200);
  bytes = serialize_plan(p);
  EXPECT_NE(error_of(bytes).find("instr op has invalid value 200"), std::string::npos)
      << error_of(bytes);
}

// A plan file spells each extern op by name; one no build of Ferrite has is refused at read.
TEST(PlanIoTest, UnknownExternOpIsRefusedByName) {
  std::vector<uint8_t> bytes = serialize_plan(plan_test::full_plan());
  const std::string name = "MatMul";
  auto at = std::search(bytes.begin(), bytes.end(), name.begin(), name.end());
  ASSERT_NE(at, bytes.end());
  at[5] = 'x';
  EXPECT_EQ(error_of(bytes), "plan: extern 0 has unknown op 'MatMux'");
}

TEST(PlanIoTest, RandomByteFlipsNeverCrash) {
  const std::vector<uint8_t> bytes = serialize_plan(plan_test::full_plan());
  std::mt19937 rng(1234);
  std::uniform_int_distribution<size_t> pos(0, bytes.size() - 1);
  std::uniform_int_distribution<int> byte(0, 255), flips(1, 4);
  int accepted = 0;
  for (int iter = 0; iter < 3000; ++iter) {
    std::vector<uint8_t> bad = bytes;
    for (int f = flips(rng); f > 0; --f) bad[pos(rng)] = static_cast<uint8_t>(byte(rng));
    try {
      Plan q = deserialize_plan(bad.data(), bad.size());
      validate_plan(q);  // whatever parses is valid
      std::vector<uint8_t> again = serialize_plan(q);
      EXPECT_NO_THROW(deserialize_plan(again.data(), again.size()));
      ++accepted;
    } catch (const Error&) {
      // expected for most flips; anything but ferrite::Error fails the test
    }
  }
  // Flips inside names, constants and immediates are harmless, so some must parse.
  EXPECT_GT(accepted, 0);
  EXPECT_LT(accepted, 3000);
}

}  // namespace
}  // namespace ferrite
