// A small valid Plan with every field of every struct populated, shared by the Plan and
// plan serializer tests: a MatMul extern, a reduction kernel and a gather kernel.
#pragma once

#include <cstring>
#include <string>
#include <type_traits>

#include "compiler/plan/error.h"
#include "compiler/plan/plan.h"

namespace ferrite {
namespace plan_test {

inline Instr instr(Op op, ScalarType t, int a = -1, int b = -1, int c = -1) {
  Instr in;
  in.op = op;
  in.type = t;
  in.a = a;
  in.b = b;
  in.c = c;
  return in;
}

inline Instr mem(Op op, ScalarType t, int arg, Index index, int value = -1) {
  Instr in = instr(op, t, value);
  in.arg = arg;
  in.index = std::move(index);
  return in;
}

inline double double_from_bits(uint64_t bits) {
  double d;
  std::memcpy(&d, &bits, sizeof d);
  return d;
}

// t1[i0] = sum_i1 t0[i0, i1] * c;  y1[i0] = argmax_i1 t0[i0, i1], over ranges [2 | 4].
inline Kernel reduce_kernel() {
  const ScalarType f = ScalarType::F32, i = ScalarType::I64;
  Kernel k;
  k.name = "row_sum";
  k.ranges = {2, 4};
  k.num_reduce = 1;
  k.args = {{DType::F32, 8, false}, {DType::F32, 2, true}, {DType::I64, 2, true}};
  // An Add node with stray c/id fields: they must survive a round trip too.
  auto odd = std::make_shared<IndexNode>();
  odd->kind = IndexKind::Add;
  odd->c = 99;
  odd->id = -3;
  odd->a = ix_binary(IndexKind::Mul, ix_var(0), ix_const(4));
  odd->b = ix_var(1);
  Instr c = instr(Op::Const, f);
  c.fimm = double_from_bits(0x7ff8000000000123ull);  // a NaN with a payload
  c.iimm = -77;                                      // ignored for f32 but kept
  Instr sum = instr(Op::Reduce, f, 2);
  sum.reduce = ReduceKind::Sum;
  Instr amax = instr(Op::Reduce, i, 0);
  amax.reduce = ReduceKind::ArgMax;
  k.code = {mem(Op::Load, f, 0, odd),
            c,
            instr(Op::Mul, f, 0, 1),
            sum,
            amax,
            mem(Op::Store, f, 1, ix_var(0), 3),
            mem(Op::Store, i, 2, ix_var(0), 4)};
  k.post_begin = 5;
  return k;
}

// y0[i0] = idx[i0] >= 0 ? t1[check(idx[i0], 2)] : 0, over [3].
inline Kernel gather_kernel() {
  const ScalarType f = ScalarType::F32, i = ScalarType::I64, b = ScalarType::Bool;
  Kernel k;
  k.name = "gather";
  k.ranges = {3};
  k.args = {{DType::F32, 2, false}, {DType::I64, 3, false}, {DType::F32, 3, true}};
  Instr zero = instr(Op::Const, i);
  zero.iimm = 0;
  zero.fimm = -0.0;
  Instr check = instr(Op::CheckIndex, i, 0);
  check.arg = 0;
  check.iimm = 2;
  check.mask = 2;
  Instr gathered = mem(Op::Load, f, 0, ix_value(3));
  gathered.mask = 2;
  k.code = {mem(Op::Load, i, 1, ix_var(0)),
            zero,
            instr(Op::Ge, b, 0, 1),
            check,
            gathered,
            mem(Op::Store, f, 2, ix_binary(IndexKind::Mod, ix_var(0), ix_const(3)), 4)};
  k.post_begin = 6;
  k.messages = {"Gather: index out of range", ""};
  return k;
}

inline PlanBuffer buffer(const char* name, DType t, std::vector<int64_t> shape, BufferKind kind,
                         int64_t offset = -1, int32_t constant = -1) {
  PlanBuffer b;
  b.name = name;
  b.dtype = t;
  b.shape = std::move(shape);
  b.kind = kind;
  b.offset = offset;
  b.constant = constant;
  return b;
}

inline TensorRef ref(int32_t buffer, std::vector<int64_t> shape, std::vector<int64_t> strides,
                     int64_t offset = 0) {
  TensorRef r;
  r.buffer = buffer;
  r.shape = std::move(shape);
  r.strides = std::move(strides);
  r.offset = offset;
  return r;
}

// Buffers: 0 x (input), 1 w, 2 idx (constants), 3 t0, 4 t1 (temps), 5 y0, 6 y1 (outputs).
inline Plan full_plan() {
  Plan p;
  p.buffers = {buffer("x", DType::F32, {2, 8}, BufferKind::Input),
               buffer("w", DType::F32, {8, 4}, BufferKind::Constant, -1, 0),
               buffer("idx", DType::I64, {3}, BufferKind::Constant, -1, 1),
               buffer("t0", DType::F32, {2, 4}, BufferKind::Temp, 0),
               buffer("t1", DType::F32, {2}, BufferKind::Temp, 64),
               buffer("y0", DType::F32, {3}, BufferKind::Output),
               buffer("y1", DType::I64, {2}, BufferKind::Output)};
  p.constants.resize(2);
  uint8_t w[128];
  for (int i = 0; i < 128; ++i) w[i] = static_cast<uint8_t>(i * 7);
  p.constants[0].assign(w, w + 128);
  const int64_t idx[3] = {1, -1, 0};
  p.constants[1].assign(reinterpret_cast<const uint8_t*>(idx),
                        reinterpret_cast<const uint8_t*>(idx) + 24);
  p.kernels = {reduce_kernel(), gather_kernel()};
  ExternCall mm;
  mm.op = ExternOp::MatMul;
  mm.origin = "MatMul 'mm'";
  mm.ints = {{"trans_a", 0}, {"huge", INT64_MIN}};
  mm.floats = {{"alpha", 1.0}, {"beta", -0.0}, {"tiny", 1e-310}};
  // The second input reads x upside down (negative stride): still inside x.
  mm.inputs = {ref(0, {2, 8}, {8, 1}), ref(1, {8, 4}, {4, 1}), ref(0, {2, 8}, {-8, 1}, 8)};
  mm.outputs = {ref(3, {2, 4}, {4, 1})};
  // Epilogue: + w[0:4] broadcast over the rows, then clip to [0, 6], then a leaky relu.
  mm.inputs.push_back(ref(1, {2, 4}, {0, 1}));
  set_post_ops(
      &mm, std::vector<PostOp>{PostOp{PostOpKind::Add, 0, 0, 3}, PostOp{PostOpKind::Clip, 0, 6, -1},
                               PostOp{PostOpKind::LeakyRelu, 0.125f, 0, -1}});
  p.externs = {mm};
  // A packed form of w (the MatMul's B), as a backend would carry it.
  p.packed = {PackedConstant{0, 1, "test layout 8x4", {1, 2, 3, 4, 5}}};
  Step s0;
  s0.kind = StepKind::Extern;
  s0.index = 0;
  Step s1;
  s1.index = 0;
  s1.buffers = {3, 4, 6};
  Step s2;
  s2.index = 1;
  s2.buffers = {4, 2, 5};
  p.steps = {s0, s1, s2};
  p.inputs = {0};
  p.outputs = {5, 6};
  p.pool_bytes = 128;
  return p;
}

// validate_plan's / validate_kernel's message, or "<no error>".
template <class T>
std::string error_of(const T& planOrKernel) {
  try {
    if constexpr (std::is_same_v<T, Plan>) {
      validate_plan(planOrKernel);
    } else {
      validate_kernel(planOrKernel);
    }
  } catch (const Error& e) {
    return e.what();
  }
  return "<no error>";
}

}  // namespace plan_test
}  // namespace ferrite

// Expects validate_plan (validate_kernel) to refuse `x` with a message containing `text`.
#define EXPECT_VALIDATION_ERROR(x, text)                                  \
  do {                                                                    \
    const std::string msg_ = ::ferrite::plan_test::error_of(x);           \
    EXPECT_NE(msg_.find(text), std::string::npos) << "message: " << msg_; \
  } while (0)
#define EXPECT_PLAN_ERROR(plan, text) EXPECT_VALIDATION_ERROR(plan, text)
#define EXPECT_KERNEL_ERROR(kernel, text) EXPECT_VALIDATION_ERROR(kernel, text)
