// The value operations a Kernel body is made of, and the op manifest: one row per op with
// everything the rest of the project derives from it. Every backend implements exactly these
// ops; their scalar meaning is in scalar_ops.h, which the reference backend and the
// compiler's constant folder both use (one semantics). Adding an op is one row here, its
// scalar definition, and whatever the row promises: a vector formula where it names a
// backend (the portable backend's Highway formulas report which ops they cover, and a test
// holds them to this table; the JIT's analysis admits exactly the ops named for it), and a
// bound in the random kernel tester, which draws every op of this table in its domain
// (RandomOpsKernels.ReachEveryFeature fails until it does).
#pragma once

#include <cstdint>
#include <limits>

namespace ferrite {

// Where an op runs on vector lanes (an op without its flag runs lane by lane through
// scalar_ops in the portable interpreter; a kernel with an op the JIT does not emit runs on
// the portable interpreter instead). Structural ops (memory, leaves, Cast, CheckIndex,
// Reduce, Where) have no flags: each backend handles them by its own layout rules.
namespace op_vec {
constexpr uint8_t P = 1;   // portable: a Highway formula on f32 lanes (every Highway target)
constexpr uint8_t J = 2;   // JIT: emitted on f32 lanes (AVX2 and AVX-512)
constexpr uint8_t I = 4;   // JIT: emitted on int32 lanes (lane-varying I64 of proven range)
constexpr uint8_t U = 8;   // JIT: emitted on uniform I64 scalars (general-purpose registers)
constexpr uint8_t B = 16;  // JIT: emitted on Bool lane masks
}  // namespace op_vec

// X(name, arity, vector, ulp, lo, hi)
//   arity   SSA operands (a, b, c); Load's mask is extra.
//   vector  op_vec flags.
//   ulp     the accuracy contract on float32: a backend's result is within `ulp` units in
//           the last place of the reference's (for the argument reduction of Sin and Cos,
//           ulp of max(1, |x|); for Pow, ulp times 1 + |y log x|); 0: bit for bit.
//   lo, hi  the argument range the bound holds on: away from poles and branch points, where
//           the derivative (and with it any error) is unbounded. The random kernel tester
//           draws the argument there.
// clang-format off
#define FERRITE_OPS(X)                                                                   \
  /* memory and leaves */                                                                \
  X(Load, 0, 0, 0, -kInf, kInf)           X(Store, 1, 0, 0, -kInf, kInf)                 \
  X(Const, 0, 0, 0, -kInf, kInf)          X(LoopVar, 0, 0, 0, -kInf, kInf)               \
  /* structure */                                                                        \
  X(Cast, 1, 0, 0, -kInf, kInf)           X(CheckIndex, 1, 0, 0, -kInf, kInf)            \
  X(Reduce, 1, 0, 0, -kInf, kInf)         X(Where, 3, 0, 0, -kInf, kInf)                 \
  /* unary */                                                                            \
  X(Neg, 1, P | J | I | U, 0, -kInf, kInf)  X(Abs, 1, P | J | I | U, 0, -kInf, kInf)     \
  X(Exp, 1, P | J, 8, -80, 80)            X(Log, 1, P | J, 8, 0, kInf)                   \
  X(Sqrt, 1, P | J, 1, 0, kInf)           X(Rsqrt, 1, P | J, 3, 0, kInf)                 \
  X(Reciprocal, 1, P | J, 2, -kInf, kInf)                                                \
  X(Relu, 1, P | J | I | U, 0, -kInf, kInf) X(Sigmoid, 1, P | J, 8, -80, 80)             \
  X(Tanh, 1, P | J, 8, -kInf, kInf)       X(Erf, 1, P | J, 16, -kInf, kInf)              \
  X(Floor, 1, P | J, 0, -kInf, kInf)      X(Ceil, 1, P | J, 0, -kInf, kInf)              \
  X(Round, 1, P | J, 0, -kInf, kInf)      X(Sign, 1, P | J | I | U, 0, -kInf, kInf)      \
  X(Sin, 1, P, 8, -1000, 1000)            X(Cos, 1, P, 8, -1000, 1000)                   \
  X(Tan, 1, 0, 8, -1.2, 1.2)              X(Asin, 1, P, 8, -0.95, 0.95)                  \
  X(Acos, 1, P, 8, -0.95, 0.95)           X(Atan, 1, P, 8, -kInf, kInf)                  \
  X(Sinh, 1, P, 8, -20, 20)               X(Cosh, 1, P, 8, -20, 20)                      \
  X(Asinh, 1, P, 8, -kInf, kInf)          X(Acosh, 1, P, 8, 1.25, kInf)                  \
  X(Atanh, 1, P, 8, -0.9, 0.9)            X(Not, 1, B, 0, -kInf, kInf)                   \
  X(IsNaN, 1, P | J, 0, -kInf, kInf)      X(IsInf, 1, P | J, 0, -kInf, kInf)             \
  /* binary arithmetic */                                                                \
  X(Add, 2, P | J | I | U, 1, -kInf, kInf)  X(Sub, 2, P | J | I | U, 1, -kInf, kInf)     \
  X(Mul, 2, P | J | I | U, 1, -kInf, kInf)  X(Div, 2, P | J | U, 2, -kInf, kInf)         \
  X(Pow, 2, J, 16, 0, kInf)               X(Max, 2, P | J | I | U, 0, -kInf, kInf)       \
  X(Min, 2, P | J | I | U, 0, -kInf, kInf)  X(Mod, 2, U, 0, -kInf, kInf)                 \
  X(FMod, 2, 0, 0, -kInf, kInf)                                                          \
  /* comparisons and logic: result is Bool */                                            \
  X(Eq, 2, P | J | I | U | B, 0, -kInf, kInf) X(Lt, 2, P | J | I | U, 0, -kInf, kInf)   \
  X(Le, 2, P | J | I | U, 0, -kInf, kInf)   X(Gt, 2, P | J | I | U, 0, -kInf, kInf)     \
  X(Ge, 2, P | J | I | U, 0, -kInf, kInf)   X(And, 2, B, 0, -kInf, kInf)                 \
  X(Or, 2, B, 0, -kInf, kInf)             X(Xor, 2, B, 0, -kInf, kInf)                   \
  /* bitwise, on the i64 bits: the shifts count 0..63 (64 or more, or negative: 0), Shr */ \
  /* is logical (zero-filling), so a uint64 held in i64 shifts as itself                */ \
  X(BitNot, 1, 0, 0, -kInf, kInf)         X(BitAnd, 2, 0, 0, -kInf, kInf)                \
  X(BitOr, 2, 0, 0, -kInf, kInf)          X(BitXor, 2, 0, 0, -kInf, kInf)                \
  X(Shl, 2, 0, 0, -kInf, kInf)            X(Shr, 2, 0, 0, -kInf, kInf)
// clang-format on

enum class Op : uint8_t {
#define FERRITE_OP_ENUM(name, ...) name,
  FERRITE_OPS(FERRITE_OP_ENUM)
#undef FERRITE_OP_ENUM
      kCount
};

// One row of the manifest.
struct OpInfo {
  const char* name;
  int arity;
  uint8_t vector;  // op_vec flags
  double ulp;      // the float32 accuracy contract, in ulp (0: bit for bit)
  double lo, hi;   // the argument range it holds on
};

const OpInfo& op_info(Op op);  // a static row ("?" with arity -1 past the table)
const char* op_name(Op op);
int op_arity(Op op);
bool op_from_name(const char* name, Op* out);
inline bool op_vector(Op op, uint8_t backend_flag) {
  return (op_info(op).vector & backend_flag) != 0;
}

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
// BitNot, BitAnd, BitOr, BitXor, Shl, Shr: i64 operands and result.
inline bool op_is_bitwise(Op op) {
  return op >= Op::BitNot && op <= Op::Shr;
}

enum class ReduceKind : uint8_t { Sum = 0, Prod, Max, Min, ArgMax, ArgMin, kCount };
const char* reduce_name(ReduceKind k);

}  // namespace ferrite
