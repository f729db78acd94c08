// What a vector backend may differ from the reference by, for the random kernels of
// random_ops_kernels.h: static facts per SSA value, propagated op by op as the generator
// emits them, and the check of one output element.
//
// The tolerance rule. Every value v carries an interval [lo, hi] that holds each finite value
// the reference can produce, and a first-order forward error bound between a backend's
// result (got) and the reference's (want):
//     |got - want| <= A(v) + R(v) * |want|.
// Per op, the bound of the result is the propagated error of the operands plus the op's own
// budget, in ulp of f32 (u = 2^-23, ulp(x) <= u*|x|), for the backend and the reference
// together. The budgets and the domains (below) are the op manifest's accuracy contract
// (compiler/plan/ops.h: the ulp and lo/hi columns); this comment restates them:
//   exact  Load, Const, Neg, Abs, Relu, Max, Min, Where, Floor, Ceil, Round, Sign, casts of
//          integers, comparisons, logic, Mul of exact operands, Add/Sub of exact operands that
//          are not products: A = R = 0, and got must equal want (NaN = NaN, +0 = -0). Exact
//          values are the only ones that feed a discontinuous op (Floor, Ceil, Round, Sign,
//          a comparison, a cast to an integer or Bool, ArgMax/ArgMin).
//   1 ulp  Add, Sub, Mul, Sqrt (correctly rounded, but a backend may fuse a*b + c into one
//          FMA: an Add/Sub of a product also gets an ulp of the product, absolute).
//   2 ulp  Div, Reciprocal;   3 ulp Rsqrt;   8 ulp Exp, Log (and 8 ulp of 1, absolute),
//          Tanh, Sigmoid, the trigonometric and hyperbolic functions (Sin and Cos also 8 ulp
//          of max(1, |x|), absolute, for the argument reduction; Acos/Asin 8 ulp of pi);
//          16 ulp Erf;   16 (1 + |y log x|) ulp Pow (a vector pow is exp(y log x));
//          1 ulp a cast of an inexact f64 to f32.
//   exact  Mod and FMod of exact operands (discontinuous; every backend evaluates their
//          scalar definition).
// Operand errors propagate through the op on the operands' intervals: absolute errors add
// through Add/Sub (relative ones when the operands cannot cancel), relative errors through
// Mul/Div/Sqrt/Rsqrt/Reciprocal; Exp turns an absolute error e into the relative e^e - 1, Log
// a relative error r into the absolute -log(1 - r); Tanh, Sigmoid, Erf, Max, Min, Relu pass
// their Lipschitz constant times the absolute error, and so do the trigonometric and
// hyperbolic functions, whose operands the generator keeps away from poles and branch points
// (Tan |x| <= 1.2, Asin/Acos/Atanh |x| <= 0.95/0.9, Acosh x >= 1.25).
// Reductions over n points: Sum may be reassociated, and any two summation orders differ by
// at most (n-1) u sum|x| <= (n-1) u n max|x| (relative (n-1) u when the terms have one sign),
// plus n times the input error; Prod: n times the relative input error and n ulp; Max
// and Min pass the input error on; ArgMax/ArgMin take exact inputs, so the index (first
// extremum) must match exactly, ties included. A sum of one point is exact.
// A float output element passes when
//     |got - want| <= 2 * (A + R * |want|) + FLT_MIN
// (2: slack for the second-order terms the bounds drop; FLT_MIN: a backend may flush a
// denormal result), NaN must meet NaN and an infinity the same infinity; an f16 store adds
// one f16 ulp (2^-10 |want| + 2^-24) when the value is inexact. Integers, Bools and exact
// floats must match exactly. The generator keeps every value well away from overflow,
// denormals and poles (Log, Sqrt, Rsqrt, Reciprocal, Div and Pow get operands bounded away
// from 0, Exp and Sigmoid bounded arguments), so the bounds stay meaningful.
#pragma once

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>

#include "compiler/plan/kernel.h"
#include "compiler/plan/scalar_ops.h"

namespace ferrite {
namespace random_ops {

constexpr double kUlp = 0x1p-23;    // f32: ulp(x) <= kUlp * |x| for a normal x
constexpr double kUlp64 = 0x1p-52;  // f64
constexpr double kSlack = 2;        // the output check's factor on A + R |want|
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kPi = 3.14159265358979323846;

// Static facts of one SSA value (see the rule above).
struct Val {
  ScalarType type = ScalarType::F32;
  double lo = 0, hi = 0;  // every finite value the reference can produce
  double A = 0, R = 0;    // |got - want| <= A + R * |want|
  bool exact = true;      // got == want (as numbers; NaN == NaN)
  bool special = false;   // may be NaN or an infinity (then got is the same)
  bool product = false;   // a product a backend may fuse into the Add/Sub reading it

  bool is_float() const { return type == ScalarType::F32 || type == ScalarType::F64; }
  double ulp() const { return type == ScalarType::F64 ? kUlp64 : kUlp; }
  double mag() const { return std::max(std::fabs(lo), std::fabs(hi)); }
  // The smallest |x| over the interval (0 when it holds 0).
  double mmin() const { return lo > 0 ? lo : hi < 0 ? -hi : 0; }
  double abs_err() const { return A + R * mag(); }
  // A bound on |got - want| / |want|; only for values bounded away from 0.
  double rel_err() const { return A / mmin() + R; }
};

[[noreturn]] inline void generator_bug(const std::string& what) {
  throw std::logic_error("random_ops generator: " + what);
}

inline void require(bool ok, const char* what) {
  if (!ok) generator_bug(what);
}

inline Val exact_val(ScalarType t, double lo, double hi) {
  Val v;
  v.type = t;
  v.lo = lo;
  v.hi = hi;
  return v;
}

// Widens an interval computed in exact arithmetic so that it also holds the rounded results.
inline void widen(Val* v) {
  const double pad = 4 * v->ulp();
  v->lo -= std::fabs(v->lo) * pad + 1e-30;
  v->hi += std::fabs(v->hi) * pad + 1e-30;
}

// The result of an inexact op from its operands' absolute error `abs` (Lipschitz constant
// already applied) plus `ulps` of rounding relative to the result.
inline Val inexact(const Val& like, double lo, double hi, double abs, double rel) {
  Val r = like;
  r.lo = lo;
  r.hi = hi;
  r.A = abs;
  r.R = rel;
  r.exact = false;
  r.product = false;
  widen(&r);
  return r;
}

// The interval of a monotone op.
template <class F>
void monotone(const Val& x, F f, bool increasing, double* lo, double* hi) {
  *lo = increasing ? f(x.lo) : f(x.hi);
  *hi = increasing ? f(x.hi) : f(x.lo);
}

// The op's own error: its ulp in the manifest (ops.h), times u.
inline double own_ulps(Op op, double u) {
  return op_info(op).ulp * u;
}

// Whether x lies in the manifest's domain of op (its bounds widened by 5% for the interval
// arithmetic's padding).
inline bool in_domain(Op op, const Val& x) {
  const OpInfo& info = op_info(op);
  return x.lo >= info.lo - 0.05 * std::fabs(info.lo) && x.hi <= info.hi + 0.05 * std::fabs(info.hi);
}

// The trigonometric and hyperbolic functions: Lipschitz constant L over the operand's interval
// times its error, plus the manifest's ulp of the result and, for Sin and Cos, of the
// argument (the argument reduction's error grows with |x|).
inline Val function_float(Op op, const Val& x) {
  require(!x.special, "function of a special value");
  require(in_domain(op, x), "argument outside the manifest's domain");
  const double u = x.ulp(), e = x.abs_err(), m = x.mag(), ulps = own_ulps(op, u);
  double lo = 0, hi = 0, lipschitz = 1, own = 0;
  auto inc = [&](double (*f)(double)) { monotone(x, f, true, &lo, &hi); };
  switch (op) {
    case Op::Sin:
    case Op::Cos:
      lo = -1, hi = 1, own = ulps * std::max(1.0, m);
      break;
    case Op::Tan:
      inc([](double v) { return std::tan(v); });
      lipschitz = 1 / std::pow(std::cos(m), 2);
      break;
    case Op::Atan:
      inc([](double v) { return std::atan(v); });
      break;
    case Op::Asin:
    case Op::Acos:
      monotone(
          x, [](double v) { return std::asin(v); }, true, &lo, &hi);
      if (op == Op::Acos) std::tie(lo, hi) = std::make_pair(kPi / 2 - hi, kPi / 2 - lo);
      lipschitz = 1 / std::sqrt(1 - m * m), own = ulps * kPi;
      break;
    case Op::Sinh:
    case Op::Cosh:
      lipschitz = std::cosh(m);
      if (op == Op::Sinh) inc([](double v) { return std::sinh(v); });
      if (op == Op::Cosh) lo = std::cosh(x.mmin()), hi = std::cosh(m);
      break;
    case Op::Asinh:
      inc([](double v) { return std::asinh(v); });
      break;
    case Op::Acosh:
      inc([](double v) { return std::acosh(v); });
      lipschitz = 1 / std::sqrt(x.lo * x.lo - 1);
      break;
    case Op::Atanh:
      inc([](double v) { return std::atanh(v); });
      lipschitz = 1 / (1 - m * m);
      break;
    default:
      generator_bug(std::string("no bound for unary ") + op_name(op));
  }
  return inexact(x, lo, hi, lipschitz * e + own, ulps);
}

inline Val unary_float(Op op, const Val& x) {
  const double u = x.ulp(), e = x.abs_err(), ulps = own_ulps(op, u);
  double lo = 0, hi = 0;
  Val r = x;
  r.product = false;
  switch (op) {
    case Op::Neg:
      r.lo = -x.hi;
      r.hi = -x.lo;
      r.product = x.product;
      return r;
    case Op::Abs:
      r.lo = x.mmin();
      r.hi = x.mag();
      return r;
    case Op::Relu:
      r.lo = std::max(x.lo, 0.0);
      r.hi = std::max(x.hi, 0.0);
      if (x.lo < 0) r.A = e, r.R = 0;  // relu(x) may be much smaller than x
      return r;
    case Op::Floor:
    case Op::Ceil:
    case Op::Round:
    case Op::Sign:
      require(x.exact, "rounding an inexact value");
      if (op == Op::Floor) r.lo = std::floor(x.lo), r.hi = std::floor(x.hi);
      if (op == Op::Ceil) r.lo = std::ceil(x.lo), r.hi = std::ceil(x.hi);
      if (op == Op::Round) r.lo = std::nearbyint(x.lo), r.hi = std::nearbyint(x.hi);
      if (op == Op::Sign)
        r.lo = x.lo < 0 ? -1 : x.lo > 0 ? 1 : 0, r.hi = x.hi > 0 ? 1 : x.hi < 0 ? -1 : 0;
      return r;
    case Op::Exp:
      require(in_domain(op, x), "Exp argument not bounded");
      monotone(
          x, [](double v) { return std::exp(v); }, true, &lo, &hi);
      return inexact(x, lo, hi, 0, std::expm1(e) + ulps);
    case Op::Log:
      require(x.lo > 0 && !x.special && x.rel_err() < 0.5, "Log argument not positive");
      monotone(
          x, [](double v) { return std::log(v); }, true, &lo, &hi);
      return inexact(x, lo, hi, -std::log1p(-x.rel_err()) + ulps, ulps);
    case Op::Sqrt:
    case Op::Rsqrt:
    case Op::Reciprocal: {
      require(x.mmin() > 0 && !x.special && x.rel_err() < 0.5, "pole or branch point");
      const double q = x.rel_err();
      if (op == Op::Sqrt) {
        require(x.lo > 0, "Sqrt of a negative value");
        monotone(
            x, [](double v) { return std::sqrt(v); }, true, &lo, &hi);
        return inexact(x, lo, hi, 0, q / 2 * (1 + q) + ulps);
      }
      if (op == Op::Rsqrt) {
        require(x.lo > 0, "Rsqrt of a negative value");
        monotone(
            x, [](double v) { return 1 / std::sqrt(v); }, false, &lo, &hi);
        return inexact(x, lo, hi, 0, q / 2 * (1 + 2 * q) + ulps);
      }
      monotone(
          x, [](double v) { return 1 / v; }, false, &lo, &hi);
      return inexact(x, lo, hi, 0, q * (1 + 2 * q) + ulps);
    }
    case Op::Sigmoid:
      require(in_domain(op, x), "Sigmoid argument not bounded");
      monotone(
          x, [](double v) { return 1 / (1 + std::exp(-v)); }, true, &lo, &hi);
      return inexact(x, lo, hi, 0.25 * e, ulps);
    case Op::Tanh:
      monotone(
          x, [](double v) { return std::tanh(v); }, true, &lo, &hi);
      return inexact(x, lo, hi, e, ulps);
    case Op::Erf:
      monotone(
          x, [](double v) { return std::erf(v); }, true, &lo, &hi);
      return inexact(x, lo, hi, 1.1284 * e, ulps);
    default:
      return function_float(op, x);
  }
}

inline Val unary(Op op, const Val& x) {
  if (op == Op::IsNaN || op == Op::IsInf) return exact_val(ScalarType::Bool, 0, 1);
  if (op == Op::Not) return exact_val(ScalarType::Bool, 0, 1);
  if (x.type == ScalarType::I64) {
    require(op == Op::Neg || op == Op::Abs || op == Op::BitNot, "i64 unary");
    Val r = x;
    if (op == Op::BitNot) {  // ~x = -x - 1
      r.lo = -x.hi - 1;
      r.hi = -x.lo - 1;
      return r;
    }
    r.lo = op == Op::Neg ? -x.hi : x.mmin();
    r.hi = op == Op::Neg ? -x.lo : x.mag();
    return r;
  }
  return unary_float(op, x);
}

inline void corners(double a0, double a1, double b0, double b1, double (*f)(double, double),
                    double* lo, double* hi) {
  const double c[4] = {f(a0, b0), f(a0, b1), f(a1, b0), f(a1, b1)};
  *lo = *std::min_element(c, c + 4);
  *hi = *std::max_element(c, c + 4);
}

inline Val add_like(Op op, const Val& a, const Val& b) {
  const double u = a.ulp();
  const double lo = op == Op::Add ? a.lo + b.lo : a.lo - b.hi;
  const double hi = op == Op::Add ? a.hi + b.hi : a.hi - b.lo;
  Val r = a;
  r.special = a.special || b.special;
  if (a.exact && b.exact && !a.product && !b.product) {
    r.lo = lo, r.hi = hi, r.product = false;
    return r;
  }
  // a fused a*b + c skips the rounding of the product: half an ulp of it
  const double fused = (a.product ? a.mag() : 0) + (b.product ? b.mag() : 0);
  // the terms cannot cancel when (a, +-b) have one sign: relative errors carry over
  const double bl = op == Op::Add ? b.lo : -b.hi, bh = op == Op::Add ? b.hi : -b.lo;
  const bool one_sign = (a.lo >= 0 && bl >= 0) || (a.hi <= 0 && bh <= 0);
  const double ulps = own_ulps(op, u);
  if (one_sign) return inexact(r, lo, hi, a.A + b.A + u * fused, std::max(a.R, b.R) + ulps);
  return inexact(r, lo, hi, a.abs_err() + b.abs_err() + u * fused, ulps);
}

inline Val binary_float(Op op, const Val& a, const Val& b) {
  const double u = a.ulp();
  double lo = 0, hi = 0;
  switch (op) {
    case Op::Add:
    case Op::Sub:
      return add_like(op, a, b);
    case Op::Mul: {
      corners(
          a.lo, a.hi, b.lo, b.hi, [](double x, double y) { return x * y; }, &lo, &hi);
      Val r = a;
      r.special = a.special || b.special;
      require(!r.special || (a.special ? b : a).mmin() > 0, "inf * 0 possible");
      if (a.exact && b.exact) {
        r.lo = lo, r.hi = hi, r.product = true;
        return r;
      }
      r = inexact(r, lo, hi, a.A * b.mag() + b.A * a.mag() + a.A * b.A,
                  a.R + b.R + own_ulps(op, u));
      r.product = true;
      return r;
    }
    case Op::Div: {
      require(b.mmin() > 0 && !b.special && !a.special && b.rel_err() < 0.5, "Div pole");
      corners(
          a.lo, a.hi, b.lo, b.hi, [](double x, double y) { return x / y; }, &lo, &hi);
      const double q = b.rel_err();
      return inexact(a, lo, hi, a.A / b.mmin() * (1 + 2 * q),
                     a.R + q * (1 + 2 * q) + own_ulps(op, u));
    }
    case Op::Max:
    case Op::Min: {
      Val r = a;
      r.special = a.special || b.special;
      r.product = false;
      r.lo = op == Op::Max ? std::max(a.lo, b.lo) : std::min(a.lo, b.lo);
      r.hi = op == Op::Max ? std::max(a.hi, b.hi) : std::min(a.hi, b.hi);
      if (a.exact && b.exact) return r;
      r.A = std::max(a.abs_err(), b.abs_err());
      r.R = 0;
      r.exact = false;
      return r;
    }
    case Op::Pow: {
      require(a.lo > 0 && !a.special && !b.special && a.rel_err() < 0.5, "Pow base");
      corners(
          std::log(a.lo), std::log(a.hi), b.lo, b.hi, [](double x, double y) { return x * y; }, &lo,
          &hi);
      require(lo >= -40 && hi <= 40, "Pow result not bounded");
      const double q = a.rel_err(),
                   log_a = std::max(std::fabs(std::log(a.lo)), std::fabs(std::log(a.hi)));
      const double t = b.mag() * q * (1 + q) + log_a * b.abs_err();
      return inexact(
          a, std::exp(lo), std::exp(hi), 0,
          std::expm1(t) + own_ulps(op, u) * (1 + std::max(std::fabs(lo), std::fabs(hi))));
    }
    case Op::Mod:
    case Op::FMod: {
      // Discontinuous: exact operands only. Every backend computes the scalar definition, so
      // the result is the reference's bit for bit.
      require(a.exact && b.exact && b.mmin() > 0 && !b.special, "remainder operands");
      Val r = a;
      r.product = false;
      r.lo = -b.mag(), r.hi = b.mag();
      return r;
    }
    default:
      break;
  }
  generator_bug(std::string("no bound for binary ") + op_name(op));
}

inline Val binary(Op op, const Val& a, const Val& b) {
  require(a.type == b.type, "operand types differ");
  if (op_is_compare(op)) {
    require(a.exact && b.exact, "comparison of inexact values");
    return exact_val(ScalarType::Bool, 0, 1);
  }
  if (op_is_logic(op)) return exact_val(ScalarType::Bool, 0, 1);
  if (a.type == ScalarType::I64) {
    double lo = 0, hi = 0;
    switch (op) {
      case Op::Add:
        lo = a.lo + b.lo, hi = a.hi + b.hi;
        break;
      case Op::Sub:
        lo = a.lo - b.hi, hi = a.hi - b.lo;
        break;
      case Op::Mul:
        corners(
            a.lo, a.hi, b.lo, b.hi, [](double x, double y) { return x * y; }, &lo, &hi);
        break;
      case Op::Max:
        lo = std::max(a.lo, b.lo), hi = std::max(a.hi, b.hi);
        break;
      case Op::Min:
        lo = std::min(a.lo, b.lo), hi = std::min(a.hi, b.hi);
        break;
      case Op::BitAnd:
      case Op::BitOr:
      case Op::BitXor: {  // within the powers of two around the operands' magnitudes
        double p = 1;
        while (p <= std::max(a.mag(), b.mag())) p *= 2;
        lo = a.lo >= 0 && b.lo >= 0 ? 0 : -p;
        hi = p - 1;
        if (op == Op::BitAnd && (a.lo >= 0 || b.lo >= 0)) {  // a non-negative mask bounds it
          lo = 0;
          hi = a.lo >= 0 && b.lo >= 0 ? std::min(a.hi, b.hi) : a.lo >= 0 ? a.hi : b.hi;
        }
        break;
      }
      case Op::Shl:
      case Op::Shr:
        require(a.lo >= 0 && b.lo >= 0 && b.hi <= 8, "shift operands");
        lo = 0;
        hi = op == Op::Shl ? a.hi * std::ldexp(1.0, static_cast<int>(b.hi)) : a.hi;
        break;
      case Op::Mod:
      case Op::FMod:
        require(b.mmin() > 0, "i64 remainder by 0");
        lo = -(b.mag() - 1), hi = b.mag() - 1;
        break;
      default:
        generator_bug(std::string("no bound for i64 ") + op_name(op));
    }
    return exact_val(ScalarType::I64, lo, hi);
  }
  return binary_float(op, a, b);
}

inline Val where(const Val& a, const Val& b) {
  Val r = a;
  r.lo = std::min(a.lo, b.lo);
  r.hi = std::max(a.hi, b.hi);
  r.A = std::max(a.A, b.A);
  r.R = std::max(a.R, b.R);
  r.exact = a.exact && b.exact;
  r.special = a.special || b.special;
  r.product = false;
  return r;
}

inline Val cast(ScalarType to, const Val& x) {
  if (to == x.type) return x;
  if (to == ScalarType::Bool) {
    require(x.exact, "cast of an inexact value to bool");
    return exact_val(to, 0, 1);
  }
  if (x.type == ScalarType::Bool) return exact_val(to, 0, 1);
  if (to == ScalarType::I64) {
    require(x.exact, "cast of an inexact value to i64");
    Val r = exact_val(to, std::trunc(x.lo), std::trunc(x.hi));
    if (x.special) r.lo = -0x1p63, r.hi = 0x1p63;  // NaN -> 0, infinities saturate
    return r;
  }
  Val r = x;  // between floats, or an integer to a float: the same numbers
  r.type = to;
  r.product = false;
  if (x.type == ScalarType::F64 && to == ScalarType::F32 && !x.exact) r.R += kUlp;
  return r;
}

// The value of Reduce(kind) over n points of x.
inline Val reduce(ReduceKind kind, const Val& x, int64_t n) {
  const bool arg = kind == ReduceKind::ArgMax || kind == ReduceKind::ArgMin;
  if (arg) require(x.exact, "arg reduction of inexact values");
  if (arg || x.type == ScalarType::I64) require(x.type != ScalarType::F64, "f64 reduction");
  if (n == 0) {  // the identity
    if (arg) return exact_val(ScalarType::I64, 0, 0);
    Val r = exact_val(x.type, 0, 0);
    if (kind == ReduceKind::Prod) r.lo = r.hi = 1;
    if (kind == ReduceKind::Max || kind == ReduceKind::Min) {
      r.special = x.is_float();
      if (!x.is_float()) r.lo = r.hi = kind == ReduceKind::Max ? -0x1p63 : 0x1p63;
    }
    return r;
  }
  const double dn = static_cast<double>(n);
  if (arg) return exact_val(ScalarType::I64, 0, dn - 1);
  if (x.type == ScalarType::I64) {
    require(kind != ReduceKind::Prod, "i64 product");
    Val r = x;
    if (kind == ReduceKind::Sum) r.lo = std::min(x.lo * dn, x.lo), r.hi = std::max(x.hi * dn, x.hi);
    return r;
  }
  const double u = x.ulp();
  switch (kind) {
    case ReduceKind::Sum: {
      const double lo = std::min(x.lo * dn, x.lo), hi = std::max(x.hi * dn, x.hi);
      if (n == 1) {
        Val r = x;
        r.product = false;
        return r;
      }
      if (x.lo >= 0 || x.hi <= 0) return inexact(x, lo, hi, dn * x.A, x.R + (dn - 1) * u);
      return inexact(x, lo, hi, dn * x.abs_err() + (dn - 1) * u * dn * x.mag(), 0);
    }
    case ReduceKind::Prod: {
      require(x.lo > 0 && !x.special && x.rel_err() < 0.5, "product of values near 0");
      const double l = dn * std::log(x.lo), h = dn * std::log(x.hi);
      require(l >= -60 && h <= 60, "product not bounded");
      return inexact(x, std::exp(l), std::exp(h), 0, std::expm1(dn * (x.rel_err() + u)));
    }
    case ReduceKind::Max:
    case ReduceKind::Min: {
      Val r = x;
      r.product = false;
      if (!x.exact) r.A = x.abs_err(), r.R = 0;
      return r;
    }
    default:
      break;
  }
  generator_bug("no bound for reduction");
}

// ---- the check ----------------------------------------------------------------------------

// How much of the tolerance the backends use (how tight the bounds are).
struct Usage {
  int64_t exact = 0, inexact = 0;  // float elements checked exactly / with a tolerance
  int64_t differing = 0;           // inexact elements where got != want
  double worst = 0;                // the largest |got - want| / tolerance
};

// Compares element i of an output arg of storage `dtype` holding values with bounds `v`;
// returns "" or why it differs.
inline std::string check_element(DType dtype, const Val& v, const void* want_base,
                                 const void* got_base, int64_t i, Usage* usage = nullptr) {
  const Scalar want = load_element(dtype, want_base, i), got = load_element(dtype, got_base, i);
  std::ostringstream os;
  os.precision(9);
  const ScalarType t = compute_type(dtype);
  if (t == ScalarType::I64 || t == ScalarType::Bool) {
    const int64_t w = t == ScalarType::Bool ? want.b : want.i64;
    const int64_t g = t == ScalarType::Bool ? got.b : got.i64;
    if (w == g) return "";
    os << "want " << w << ", got " << g << " (exact)";
    return os.str();
  }
  const double w = t == ScalarType::F64 ? want.f64 : want.f32;
  const double g = t == ScalarType::F64 ? got.f64 : got.f32;
  if (std::isnan(w) || std::isnan(g) || std::isinf(w) || std::isinf(g)) {
    if ((std::isnan(w) && std::isnan(g)) || w == g) return "";
    os << "want " << w << ", got " << g << " (special values must match)";
    return os.str();
  }
  double tol = 0;
  if (!v.exact) {
    tol = kSlack * (v.A + v.R * std::fabs(w)) + FLT_MIN;
    if (dtype == DType::F16) tol += 0x1p-10 * std::fabs(w) + 0x1p-24;
  }
  if (usage && dtype != DType::F16) {  // (an f16 rounding flip would dominate `worst`)
    ++(v.exact ? usage->exact : usage->inexact);
    if (!v.exact && g != w) {
      ++usage->differing;
      usage->worst = std::max(usage->worst, std::fabs(g - w) / tol);
    }
  }
  if (std::fabs(g - w) <= tol) return "";
  os << "want " << w << ", got " << g << ", |diff| " << std::fabs(g - w) << " > tolerance " << tol
     << (v.exact ? " (exact)" : "") << " [A " << v.A << ", R " << v.R << ", interval " << v.lo
     << ".." << v.hi << "]";
  return os.str();
}

}  // namespace random_ops
}  // namespace ferrite
