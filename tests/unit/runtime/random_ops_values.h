// The value half of the random kernel generator (random_ops_kernels.h): random op DAGs of
// one phase of a kernel (an inner loop, or the post phase) over the leaves of
// random_ops_leaves.h, each op given operands in its well-conditioned domain, with the static
// facts of each value (random_ops_bounds.h). Every value op of the Kernel contract (ops.h)
// is drawn; RandomOpsKernels.ReachEveryFeature checks that each one is reached.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <vector>

#include "tests/unit/runtime/random_ops_leaves.h"

namespace ferrite {
namespace random_ops {

class ValueGen : public ValueGenBase {
 public:
  explicit ValueGen(uint32_t seed) : ValueGenBase(seed) {}

 protected:
  // clang-format off
  enum Move {
    kAdd, kSub, kMul, kDiv, kMax, kMin, kNeg, kAbs, kRelu, kExp, kLog, kSqrt, kRsqrt,
    kReciprocal, kSigmoid, kTanh, kErf, kPow, kFloor, kCeil, kRound, kSign, kWhere,
    kIntTrip,  // f32 -> i64 -> an i64 op -> f32
    kF64Trip,  // f32 -> f64 -> an f64 op -> f32
    kFunction, // one of function_ops(): Sin, Cos, Tan, ..., Atanh
    kMod,      // Mod, FMod
    kMoves
  };
  // clang-format on
  struct MoveInfo {
    int weight;        // how often it is drawn
    int arity;         // operands it takes
    bool keeps_exact;  // exact operands give an exact value
    bool needs_exact;  // discontinuous: exact operands only
  };
  static const MoveInfo& info(Move m) {
    static const MoveInfo kInfo[kMoves] = {
        {8, 2, true, false},  {6, 2, true, false},  {8, 2, true, false},  {4, 2, false, false},
        {4, 2, true, false},  {4, 2, true, false},  {3, 1, true, false},  {3, 1, true, false},
        {3, 1, true, false},  {4, 1, false, false}, {3, 1, false, false}, {3, 1, false, false},
        {2, 1, false, false}, {2, 1, false, false}, {3, 1, false, false}, {3, 1, false, false},
        {2, 1, false, false}, {3, 2, false, false}, {2, 1, true, true},   {2, 1, true, true},
        {2, 1, true, true},   {2, 1, true, true},   {5, 2, true, false},  {2, 1, true, true},
        {1, 2, false, false}, {8, 1, false, false}, {2, 2, true, true},
    };
    return kInfo[m];
  }

  // ---- expressions ------------------------------------------------------------------------

  // Replaces NaN and infinities by a constant.
  int sanitize(int v) {
    if (!val(v).special) return v;
    const int nan = op1(Op::IsNaN, v);
    const int bad = op2(Op::Or, nan, op1(Op::IsInf, v));
    const int r = where(bad, konst(ScalarType::F32, rng_.pick(-2, 2)), v);
    vals_[r].special = false;
    return r;
  }

  // |v| <= b (keeps exact values exact).
  int bound(int v, double b) {
    const Val& x = val(v);
    if (x.mag() <= b) return v;
    // Clamping and tanh keep the absolute error: only for values known well enough.
    const bool scale_only = x.abs_err() > 1e-4 * b;
    const int r = scale_only ? 0 : rng_.pick(0, x.exact ? 1 : 2);
    if (r == 0) return op2c(Op::Mul, v, b / x.mag() * 0.99);
    if (r == 1) return op2c(Op::Min, op2c(Op::Max, v, -b), b);
    return op2c(Op::Mul, op1(Op::Tanh, v), b * 0.99);
  }

  // A finite value >= c > 0, with a relative error well below 1.
  int positive(int v) {
    v = bound(sanitize(v), 100);
    // c >> the error of v: the relative error of the result (and of what Log, Sqrt, Div make
    // of it) stays small
    const double c = std::max(rng_.chance(0.5) ? 0.5 : 2.0, 256 * val(v).abs_err());
    const int r = rng_.pick(0, 2);
    int p = -1;
    if (c > 100) {  // v is known too roughly to be worth keeping
    } else if (r == 0) {
      p = op2c(Op::Add, op1(Op::Abs, v), c);
    } else if (r == 1) {
      const int s = bound(v, 10);
      p = op2c(Op::Add, op2(Op::Mul, s, s), c);
    } else {
      p = op1(Op::Exp, bound(v, 4));
    }
    if (p >= 0 && val(p).lo > 0 && val(p).rel_err() < 0.25) return p;
    return op2c(Op::Add, op1(Op::Abs, real_load()), 1);
  }

  int away_from_zero(int v) {
    const int p = positive(v);
    return rng_.chance(0.3) ? op1(Op::Neg, p) : p;
  }

  // A random move (one that keeps exact values exact, when asked).
  Move pick_move(bool exact) {
    int total = 0;
    for (int m = 0; m < kMoves; ++m) total += info(static_cast<Move>(m)).weight;
    for (;;) {
      int r = rng_.pick(0, total - 1), m = 0;
      while (r >= info(static_cast<Move>(m)).weight) r -= info(static_cast<Move>(m++)).weight;
      if (!exact || info(static_cast<Move>(m)).keeps_exact) return static_cast<Move>(m);
    }
  }

  // A float value of about `budget` ops over fresh leaves and reused values.
  int f32_expr(int budget, bool exact = false) {
    if (budget <= 0 || rng_.chance(0.12)) return f32_leaf(exact);
    if (rng_.chance(0.2)) {
      const int r = reuse(ScalarType::F32, exact);
      if (r >= 0) return r;
    }
    const Move m = pick_move(exact);
    const bool binary = info(m).arity == 2;
    const int right = binary ? budget / 2 : 0;
    const bool e = exact || info(m).needs_exact;
    const int a = f32_expr(budget - 1 - right, e);
    const int b = binary ? f32_expr(right, e) : -1;
    return apply(m, a, b, exact);
  }

  // a (and b) through int64 or float64 arithmetic and back to float32.
  int round_trip(Move m, int a, int b) {
    if (m == kIntTrip) {
      const int i = cast(ScalarType::I64, bound(sanitize(a), 1e6));
      const Op op = rng_.one_of(std::vector<Op>{Op::Add, Op::Sub, Op::Max, Op::Min});
      return cast(ScalarType::F32, op2(op, i, i64_expr(1)));
    }
    const int x = cast(ScalarType::F64, bound(sanitize(a), 1e4));
    const int y = rng_.chance(0.3) ? konst(ScalarType::F64, 8 * rng_.unit() - 4)
                                   : cast(ScalarType::F64, bound(sanitize(b), 1e4));
    const Op op = rng_.one_of(std::vector<Op>{Op::Add, Op::Sub, Op::Mul, Op::Max, Op::Min});
    return cast(ScalarType::F32, op2(op, x, y));
  }

  // The inexact unary ops of the manifest that no move of their own draws (the
  // trigonometric and hyperbolic functions today): a new one is drawn here in its domain, and
  // random_ops_bounds.h must bound it (function_float) before the tester passes.
  static const std::vector<Op>& function_ops() {
    static const std::vector<Op> ops = [] {
      static const Op kOwnMove[] = {Op::Exp,        Op::Log,     Op::Sqrt, Op::Rsqrt,
                                    Op::Reciprocal, Op::Sigmoid, Op::Tanh, Op::Erf};
      std::vector<Op> r;
      for (int o = 0; o < static_cast<int>(Op::kCount); ++o) {
        const Op op = static_cast<Op>(o);
        if (op_arity(op) == 1 && op_info(op).ulp > 0 &&
            std::find(std::begin(kOwnMove), std::end(kOwnMove), op) == std::end(kOwnMove))
          r.push_back(op);
      }
      return r;
    }();
    return ops;
  }

  // A function of a, the argument kept inside the manifest's domain of the op (away from
  // poles and branch points, where the derivative, and with it the error, is unbounded).
  int function(int a) {
    a = sanitize(a);
    const Op op = rng_.one_of(function_ops());
    const double lo = op_info(op).lo, hi = op_info(op).hi;
    if (lo > 0) return op1(op, op2c(Op::Add, op1(Op::Abs, bound(a, 100)), lo));
    if (std::isinf(hi)) return op1(op, bound(a, 1e4));
    if (hi > 10)
      return op1(op, bound(a, std::min(hi, rng_.one_of(std::vector<double>{3, 10, hi}))));
    return op1(op, bound(a, hi));
  }

  // An exact divisor away from 0: a constant, or |b| + 0.5 of an exact b.
  int divisor(int b) {
    if (!val(b).exact || val(b).product || val(b).special || rng_.chance(0.5))
      return konst(ScalarType::F32, rng_.one_of(std::vector<double>{1.5, -2, 0.75, 3, -0.5, 7}));
    return op2c(Op::Add, op1(Op::Abs, bound(b, 100)), 0.5);
  }

  // Op m on a (and b: the second operand of a binary move), after putting them into its
  // domain. A move that needs exact operands and gets an inexact one becomes a Neg.
  int apply(Move m, int a, int b, bool exact) {
    if (info(m).needs_exact && !val(a).exact) m = kNeg;
    int r = -1;
    switch (m) {
      case kAdd:
      case kSub: {
        a = bound(a, 1e4);
        b = bound(b, 1e4);
        // an exact value must not read a product (which a backend may fuse)
        const bool fused = val(a).product || val(b).product;
        r = op2(exact && fused ? Op::Max : m == kAdd ? Op::Add : Op::Sub, a, b);
        break;
      }
      case kMul: {
        a = bound(a, 100), b = bound(b, 100);
        const bool zero = val(a).mmin() == 0 || val(b).mmin() == 0;
        if (zero && (val(a).special || val(b).special)) {  // inf * 0 is NaN
          a = sanitize(a);
          b = sanitize(b);
        }
        r = op2(Op::Mul, a, b);
        break;
      }
      case kDiv:
        a = bound(sanitize(a), 100);
        r = op2(Op::Div, a, away_from_zero(b));
        break;
      case kMax:
      case kMin:
        r = op2(m == kMax ? Op::Max : Op::Min, a, b);
        break;
      case kNeg:
      case kAbs:
      case kRelu:
        r = op1(m == kNeg ? Op::Neg : m == kAbs ? Op::Abs : Op::Relu, a);
        break;
      case kExp:
        r = op1(Op::Exp, bound(a, rng_.one_of(std::vector<double>{3, 10, 20})));
        break;
      case kLog:
      case kSqrt:
      case kRsqrt:
      case kReciprocal: {
        const Op op = m == kLog     ? Op::Log
                      : m == kSqrt  ? Op::Sqrt
                      : m == kRsqrt ? Op::Rsqrt
                                    : Op::Reciprocal;
        r = op1(op, m == kReciprocal ? away_from_zero(a) : positive(a));
        break;
      }
      case kSigmoid:
        r = op1(Op::Sigmoid, bound(a, 30));
        break;
      case kTanh:
      case kErf:
        r = op1(m == kTanh ? Op::Tanh : Op::Erf, a);
        break;
      case kPow: {
        static const std::vector<double> kExponents = {2, 3, 0.5, -1, -0.5, 1.5, 0.25, -2};
        const int base = positive(bound(a, 50));
        const int e = rng_.chance(0.6) ? konst(ScalarType::F32, rng_.one_of(kExponents))
                                       : bound(sanitize(b), 2);
        r = op2(Op::Pow, base, e);
        break;
      }
      case kFloor:
      case kCeil:
      case kRound: {
        if (rng_.chance(0.4)) {  // scaled by a power of two: still exact, more fractions
          a = bound(a, 1e4);
          a = op2c(Op::Mul, a, rng_.one_of(std::vector<double>{0.5, 2, 4, 0.25}));
        }
        r = op1(m == kFloor ? Op::Floor : m == kCeil ? Op::Ceil : Op::Round, a);
        break;
      }
      case kSign:
        r = op1(Op::Sign, a);
        break;
      case kWhere:
        r = where(bool_expr(1), a, b);
        break;
      case kIntTrip:
      case kF64Trip:
        r = round_trip(m, a, b);
        break;
      case kFunction:
        r = function(a);
        break;
      case kMod:
        r = op2(rng_.chance(0.5) ? Op::Mod : Op::FMod, bound(sanitize(a), 1e4), divisor(b));
        break;
      case kMoves:
        break;
    }
    // Keep values far from overflow: later ops multiply and sum them.
    return val(r).mag() > 1e5 ? bound(r, rng_.chance(0.5) ? 10 : 1000) : r;
  }

  // ---- integers and bools -----------------------------------------------------------------

  int i64_leaf() {
    const int r = rng_.pick(0, 99);
    if (dims_ > 0 && r < 45) return loop_var(rng_.pick(0, dims_ - 1));
    if (dims_ > 0 && r < 65) return int_load();
    if (r < 80) return konst(ScalarType::I64, rng_.pick(-50, 50));
    if (r < 85) return cast(ScalarType::I64, bound(sanitize(f32_expr(1, true)), 1e6));
    if (dims_ > 0 && r < 87) return cast(ScalarType::I64, special_load());  // 0 and saturation
    if (r < 90) return cast(ScalarType::I64, bool_leaf());
    const int v = reuse(ScalarType::I64, true);
    return v >= 0 ? v : konst(ScalarType::I64, rng_.pick(-5, 5));
  }

  int i64_expr(int budget) {
    if (budget <= 0 || rng_.chance(0.3)) return i64_leaf();
    const int r = rng_.pick(0, 7);
    if (r == 5) return op1(rng_.chance(0.7) ? Op::Neg : Op::BitNot, i64_expr(budget - 1));
    if (r == 7) return bitwise(budget);
    if (r == 6) {
      const int cond = bool_expr(1), a = i64_expr(budget / 2);
      return where(cond, a, i64_expr(budget / 2));
    }
    static const Op kOps[] = {Op::Add, Op::Sub, Op::Mul, Op::Max, Op::Min};
    if (r == 4 && rng_.chance(0.4)) {  // a remainder by a constant away from 0
      const int a = i64_expr(budget - 1);
      const int d = konst(ScalarType::I64, rng_.one_of(std::vector<double>{-7, -2, 3, 5, 16}));
      return op2(rng_.chance(0.5) ? Op::Mod : Op::FMod, a, d);
    }
    const int a = i64_expr(budget / 2), b = i64_expr(budget / 2);
    const Op op = kOps[r];
    if (op == Op::Mul && val(a).mag() * val(b).mag() > 0x1p24) return op2(Op::Add, a, b);
    return op2(op, a, b);
  }

  // BitAnd, BitOr, BitXor of any operands; shifts of a non-negative value by 0..5 (Shr of a
  // negative one is a huge number, Shl of a large one overflows the generator's bounds).
  int bitwise(int budget) {
    static const Op kOps[] = {Op::BitAnd, Op::BitOr, Op::BitXor, Op::Shl, Op::Shr};
    const Op op = kOps[rng_.pick(0, 4)];
    const int a = i64_expr(budget / 2);
    if (op != Op::Shl && op != Op::Shr) return op2(op, a, i64_expr(budget / 2));
    const int count = rng_.chance(0.5) ? konst(ScalarType::I64, rng_.pick(0, 5))
                                       : op2(Op::BitAnd, i64_expr(1), konst(ScalarType::I64, 3));
    const int base = val(a).lo < 0 ? op1(Op::Abs, a) : a;
    return op2(op, val(base).mag() > 0x1p40 ? konst(ScalarType::I64, 12345) : base, count);
  }

  int bool_leaf() {
    const int r = rng_.pick(0, 99);
    static const Op kCompare[] = {Op::Eq, Op::Lt, Op::Le, Op::Gt, Op::Ge};
    const Op cmp = kCompare[rng_.pick(0, 4)];
    if (r < 35) {
      const int a = f32_expr(rng_.pick(0, 2), true);
      return op2(cmp, a, rng_.chance(0.5) ? const_f32() : f32_expr(1, true));
    }
    if (r < 50) {
      const int a = i64_expr(1);
      return op2(cmp, a, i64_expr(1));
    }
    if (r < 60) {
      const Op op = rng_.chance(0.5) ? Op::IsNaN : Op::IsInf;
      return op1(op, dims_ > 0 && rng_.chance(0.6) ? special_load() : f32_expr(1));
    }
    if (dims_ > 0 && r < 70) return bool_load();
    if (r < 80) return cast(ScalarType::Bool, rng_.chance(0.5) ? f32_expr(1, true) : i64_expr(1));
    if (dims_ > 0 && r < 90) {
      const int d = rng_.pick(0, dims_ - 1);
      return op2c(cmp, loop_var(d), rng_.pick(0, static_cast<int>(k().ranges[d])));
    }
    const int v = reuse(ScalarType::Bool, true);
    if (v >= 0) return v;
    const int a = i64_expr(0);
    return op2(cmp, a, i64_expr(0));
  }

  int bool_expr(int budget) override {
    if (budget <= 0 || rng_.chance(0.4)) return bool_leaf();
    const int r = rng_.pick(0, 3);
    if (r == 3) return op1(Op::Not, bool_expr(budget - 1));
    static const Op kOps[] = {Op::And, Op::Or, Op::Xor};
    const int a = bool_expr(budget / 2);
    return op2(kOps[r], a, bool_expr(budget / 2));
  }
};

}  // namespace random_ops
}  // namespace ferrite
