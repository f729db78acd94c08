// The value operations a Kernel body is made of, with one table of their metadata.
// Every backend implements exactly these; their scalar meaning is in scalar_ops.h, which
// the reference backend and the compiler's constant folder both use (one semantics).
#pragma once

#include <cstdint>

namespace ferrite {

// X(name, arity) — arity counts SSA operands (a, b, c); Load's mask is extra.
// clang-format off
#define FERRITE_OPS(X)                                                                   \
  /* memory and leaves */                                                                \
  X(Load, 0) X(Store, 1) X(Const, 0) X(LoopVar, 0)                                       \
  /* structure */                                                                        \
  X(Cast, 1) X(CheckIndex, 1) X(Reduce, 1) X(Where, 3)                                   \
  /* unary */                                                                            \
  X(Neg, 1) X(Abs, 1) X(Exp, 1) X(Log, 1) X(Sqrt, 1) X(Rsqrt, 1) X(Reciprocal, 1)        \
  X(Relu, 1) X(Sigmoid, 1) X(Tanh, 1) X(Erf, 1) X(Floor, 1) X(Ceil, 1) X(Round, 1)       \
  X(Sign, 1) X(Sin, 1) X(Cos, 1) X(Tan, 1) X(Asin, 1) X(Acos, 1) X(Atan, 1) X(Sinh, 1)   \
  X(Cosh, 1) X(Asinh, 1) X(Acosh, 1) X(Atanh, 1) X(Not, 1) X(IsNaN, 1) X(IsInf, 1)       \
  /* binary arithmetic */                                                                \
  X(Add, 2) X(Sub, 2) X(Mul, 2) X(Div, 2) X(Pow, 2) X(Max, 2) X(Min, 2) X(Mod, 2)        \
  X(FMod, 2)                                                                             \
  /* comparisons and logic: result is Bool */                                            \
  X(Eq, 2) X(Lt, 2) X(Le, 2) X(Gt, 2) X(Ge, 2) X(And, 2) X(Or, 2) X(Xor, 2)
// clang-format on

enum class Op : uint8_t {
#define FERRITE_OP_ENUM(name, arity) name,
  FERRITE_OPS(FERRITE_OP_ENUM)
#undef FERRITE_OP_ENUM
      kCount
};

const char* op_name(Op op);
int op_arity(Op op);
bool op_from_name(const char* name, Op* out);

inline bool op_is_unary_math(Op op) {
  return op >= Op::Neg && op <= Op::IsInf;
}
inline bool op_is_binary_arith(Op op) {
  return op >= Op::Add && op <= Op::FMod;
}
inline bool op_is_compare(Op op) {
  return op >= Op::Eq && op <= Op::Ge;
}
inline bool op_is_logic(Op op) {
  return op >= Op::And && op <= Op::Xor;
}

enum class ReduceKind : uint8_t { Sum = 0, Prod, Max, Min, ArgMax, ArgMin, kCount };
const char* reduce_name(ReduceKind k);

}  // namespace ferrite
