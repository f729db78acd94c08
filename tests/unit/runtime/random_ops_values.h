// The value half of the random kernel generator (random_ops_kernels.h): emits SSA values of
// one phase of a kernel (an inner loop, or the post phase) and keeps the static facts of
// each (random_ops_bounds.h). Leaves are loads through random views (contiguous, strided,
// transposed, reshaped, broadcast, reversed), padded loads under a mask, gathers through a
// checked index (the index varying along the lanes or once per row), LoopVars, Consts,
// inputs holding NaN and infinities, and Reduce results of earlier loops; random op DAGs
// grow over them, each op given operands in its well-conditioned domain.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "compiler/loopir/simplify.h"
#include "compiler/plan/kernel.h"
#include "tests/unit/runtime/random_ops_bounds.h"
#include "tests/unit/support/random_views.h"

namespace ferrite {
namespace random_ops {

using test_support::Rng;
using test_support::View;

// How inputs() fills an arg: Real values uniform in [lo, hi], Quarter ones multiples of 1/4
// (ties for Round, Max, ArgMax; exact in f16), Special ones Quarter with NaN and infinities,
// Integer ones in [lo, hi]; an Output gets a fixed byte pattern.
struct ArgFill {
  enum Kind : uint8_t { Output, Real, Quarter, Special, Integer, Boolean };
  Kind kind = Real;
  double lo = -10, hi = 10;
  bool has_bad = false;  // a gather index arg with one element out of range: `bad`
  int64_t bad = 0;
};

// One generated kernel with what checking it needs.
struct Case {
  Kernel k;
  std::vector<ArgFill> fill;  // per arg
  std::vector<Val> stored;    // per arg: the bounds of the value stored into it
  std::string pattern;        // pointwise, reduce, softmax, layernorm, chain
  int lane_gathers = 0, row_gathers = 0, padded = 0, special = 0;
  bool error_planned = false;  // an index arg holds an out-of-range value
};

class ValueGen {
 public:
  explicit ValueGen(uint32_t seed) : rng_(seed) {}

 protected:
  // clang-format off
  enum Move {
    kAdd, kSub, kMul, kDiv, kMax, kMin, kNeg, kAbs, kRelu, kExp, kLog, kSqrt, kRsqrt,
    kReciprocal, kSigmoid, kTanh, kErf, kPow, kFloor, kCeil, kRound, kSign, kWhere,
    kIntTrip,  // f32 -> i64 -> an i64 op -> f32
    kF64Trip,  // f32 -> f64 -> an f64 op -> f32
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
        {1, 2, false, false},
    };
    return kInfo[m];
  }

  Kernel& k() { return c_.k; }
  const Kernel& k() const { return c_.k; }
  const Val& val(int id) const { return vals_[id]; }
  ScalarType type(int id) const { return vals_[id].type; }

  void reset() {
    c_ = Case();
    vals_.clear();
    pool_.clear();
    carried_.clear();
    pending_.clear();
    post_ = false;
  }

  // ---- phases -----------------------------------------------------------------------------

  // Starts a phase that may use loop variables [0, dims): the Reduce results of the phase
  // that ends become visible, everything else it defined does not (Consts always are).
  void begin_phase(int dims) {
    dims_ = dims;
    pool_.clear();
    carried_.insert(carried_.end(), pending_.begin(), pending_.end());
    pending_.clear();
  }

  // ---- emission ---------------------------------------------------------------------------

  int emit(Instr in, const Val& v) {
    const Op op = in.op;
    k().code.push_back(std::move(in));
    vals_.push_back(v);
    const int id = static_cast<int>(k().code.size()) - 1;
    if (op == Op::Const) {
      carried_.push_back(id);
    } else if (op == Op::Reduce) {
      pending_.push_back(id);
    } else if (op != Op::Store) {
      pool_.push_back(id);
    }
    return id;
  }
  static Instr instr(Op op, ScalarType t, int a = -1, int b = -1, int c = -1) {
    Instr in;
    in.op = op;
    in.type = t;
    in.a = a;
    in.b = b;
    in.c = c;
    return in;
  }
  int konst(ScalarType t, double v) {
    Instr in = instr(Op::Const, t);
    in.fimm = v;
    in.iimm = static_cast<int64_t>(v);
    const Scalar s = make_const(t, in.fimm, in.iimm);
    const double x = t == ScalarType::F32   ? s.f32
                     : t == ScalarType::F64 ? s.f64
                     : t == ScalarType::I64 ? static_cast<double>(s.i64)
                                            : s.b;
    return emit(in, exact_val(t, x, x));
  }
  int op1(Op op, int a) {
    return emit(instr(op, op_result_type(op, type(a)), a), unary(op, val(a)));
  }
  int op2(Op op, int a, int b) {
    Val v = binary(op, val(a), val(b));
    if (op == Op::Mul && a == b && v.lo < 0) v.lo = 0;  // a square
    return emit(instr(op, op_result_type(op, type(a)), a, b), v);
  }
  // op2 with a Const operand.
  int op2c(Op op, int a, double c) {
    const int k = konst(type(a), c);
    return op2(op, a, k);
  }
  int cast(ScalarType t, int a) { return emit(instr(Op::Cast, t, a), random_ops::cast(t, val(a))); }
  int where(int cond, int a, int b) {
    return emit(instr(Op::Where, type(a), cond, a, b), random_ops::where(val(a), val(b)));
  }
  int loop_var(int d) {
    Instr in = instr(Op::LoopVar, ScalarType::I64);
    in.arg = d;
    const double top = std::max<double>(0, static_cast<double>(k().ranges[d]) - 1);
    return emit(in, exact_val(ScalarType::I64, 0, top));
  }
  int add_arg(DType dtype, int64_t elements, const ArgFill& fill) {
    k().args.push_back(
        KernelArg{dtype, std::max<int64_t>(elements, 0), fill.kind == ArgFill::Output});
    c_.fill.push_back(fill);
    c_.stored.push_back(Val());
    return static_cast<int>(k().args.size()) - 1;
  }
  int load(int arg, const Index& index, int mask, Val v) {
    Instr in = instr(Op::Load, compute_type(k().args[arg].dtype));
    in.arg = arg;
    in.mask = mask;
    in.index = simplify(index);
    if (mask >= 0) v.lo = std::min(v.lo, 0.0), v.hi = std::max(v.hi, 0.0);
    return emit(in, v);
  }
  void store(int arg, const Index& index, int value) {
    Instr in = instr(Op::Store, type(value), value);
    in.arg = arg;
    in.index = simplify(index);
    c_.stored[arg] = val(value);
    emit(in, val(value));
  }
  int check_index(int a, int64_t n, int mask) {
    Instr in = instr(Op::CheckIndex, ScalarType::I64, a);
    in.iimm = n;
    in.mask = mask;
    in.arg = static_cast<int>(k().messages.size());
    k().messages.push_back("gather " + std::to_string(k().messages.size()) + " (arg %" +
                           std::to_string(a) + ")");
    return emit(in, exact_val(ScalarType::I64, 0, std::max<double>(0, n - 1)));
  }
  int reduce(ReduceKind kind, int a) {
    const bool arg = kind == ReduceKind::ArgMax || kind == ReduceKind::ArgMin;
    Instr in = instr(Op::Reduce, arg ? ScalarType::I64 : type(a), a);
    in.reduce = kind;
    return emit(in, random_ops::reduce(kind, val(a), k().reduce_points()));
  }

  // ---- views ------------------------------------------------------------------------------

  Index simplify(const Index& e) const { return IndexSimplifier(k().ranges).simplify(e); }

  // A random view of the phase's dims as a dense tensor (size in *size). Reads may broadcast
  // and reverse dims; writes are one to one.
  Index view_index(bool read, int64_t* size) {
    View v = test_support::dims_view(k().ranges, dims_);
    if (test_support::elements(v.shape) > 0) {
      for (int s = rng_.pick(0, 3); s > 0; --s) test_support::view_step(rng_, &v, read);
      if (read && !v.shape.empty() && rng_.chance(0.1)) {  // reversed: a negative stride
        const int d = rng_.pick(0, static_cast<int>(v.shape.size()) - 1);
        v.expr[d] = ix_add(ix_const(v.shape[d] - 1), ix_mul(v.expr[d], -1));
      }
    }
    const bool offset = rng_.chance(0.4);
    const int64_t start = offset ? rng_.pick(1, 7) : 0;
    *size = start + test_support::elements(v.shape) + rng_.pick(0, 3);
    return test_support::dense_index(v, start);
  }

  // ---- leaves -----------------------------------------------------------------------------

  int real_load() {
    int64_t size;
    const Index index = view_index(true, &size);
    ArgFill fill;
    const int r = rng_.pick(0, 9);
    fill.kind = r < 6 ? ArgFill::Real : ArgFill::Quarter;
    const DType dtype = r == 9 ? DType::F16 : DType::F32;  // f16: quarters are exact in it
    const int arg = add_arg(dtype, size, fill);
    return load(arg, index, -1, exact_val(ScalarType::F32, fill.lo, fill.hi));
  }
  int special_load() {
    int64_t size;
    const Index index = view_index(true, &size);
    ArgFill fill;
    fill.kind = ArgFill::Special;
    const int arg = add_arg(DType::F32, size, fill);
    Val v = exact_val(ScalarType::F32, fill.lo, fill.hi);
    v.special = true;
    ++c_.special;
    return load(arg, index, -1, v);
  }
  int int_load() {
    int64_t size;
    const Index index = view_index(true, &size);
    ArgFill fill;
    fill.kind = ArgFill::Integer;
    const int r = rng_.pick(0, 9);
    const DType dtype = r < 4 ? DType::I64 : r < 7 ? DType::I32 : DType::U8;
    fill.lo = dtype == DType::U8 ? 0 : rng_.chance(0.5) ? -20 : -1000;
    fill.hi = dtype == DType::U8 ? 255 : -fill.lo;
    const int arg = add_arg(dtype, size, fill);
    return load(arg, index, -1, exact_val(ScalarType::I64, fill.lo, fill.hi));
  }
  int bool_load() {
    int64_t size;
    const Index index = view_index(true, &size);
    ArgFill fill;
    fill.kind = ArgFill::Boolean;
    const int arg = add_arg(DType::Bool, size, fill);
    return load(arg, index, -1, exact_val(ScalarType::Bool, 0, 1));
  }

  int lane_var() const { return dims_ - 1; }

  // A load of a tensor padded along dim d: points outside [p, p + len) read 0 and their
  // (negative or too large) index must not touch memory.
  int padded_load() {
    const int d = rng_.pick(0, dims_ - 1);
    const int64_t r = k().ranges[d];
    if (r == 0) return real_load();
    const int p = rng_.pick(1, 3);
    const int64_t len = rng_.pick(1, static_cast<int>(r));
    View v = test_support::dims_view(k().ranges, dims_);
    v.expr[d] = ix_add(ix_var(d), ix_const(-p));
    v.shape[d] = len;
    if (rng_.chance(0.5)) test_support::view_step(rng_, &v, false, test_support::kPermute);
    const int var = loop_var(d);
    const int from = op2c(Op::Ge, var, p);
    const int mask = op2(Op::And, from, op2c(Op::Lt, var, static_cast<double>(p + len)));
    ArgFill fill;
    fill.kind = rng_.chance(0.5) ? ArgFill::Real : ArgFill::Quarter;
    const int arg = add_arg(DType::F32, test_support::elements(v.shape) + rng_.pick(0, 2), fill);
    ++c_.padded;
    return load(arg, test_support::dense_index(v, 0), mask, exact_val(ScalarType::F32, -10, 10));
  }

  // A load masked by a data-dependent condition (masked lanes read 0).
  int masked_load() {
    const int mask = bool_expr(1);
    int64_t size;
    const Index index = view_index(true, &size);
    ArgFill fill;
    const int arg = add_arg(DType::F32, size, fill);
    ++c_.padded;
    return load(arg, index, mask, exact_val(ScalarType::F32, fill.lo, fill.hi));
  }

  // data[checked(i) * W + j] or data[j * G + checked(i)]: i an index loaded from an i64/i32
  // arg (varying along the lanes, or once per row), computed from a LoopVar, or a Reduce
  // result of an earlier loop (ArgMax: take along the axis).
  int gather() {
    static const std::vector<int64_t> kSizes = {1, 2, 3, 5, 8, 16, 33};
    int64_t g = rng_.one_of(kSizes);
    const bool lanes = rng_.chance(0.5);
    int idx = -1, mask = -1, idx_arg = -1;
    bool varies = false;  // the index varies along the phase's innermost loop variable
    const int src = rng_.pick(0, 9);
    const int carried = pick_value(carried_, ScalarType::I64, true);
    const int d = lanes ? lane_var() : rng_.pick(0, lane_var());  // of a computed index
    if (src == 9 && carried >= 0 && val(carried).lo >= 0 && val(carried).hi < 4096) {
      idx = carried;
      g = static_cast<int64_t>(val(carried).hi) + 1;
      varies = post_;  // a result per outer point
    } else if (src >= 7 && k().ranges[d] > 0) {
      g = k().ranges[d];
      varies = d == lane_var();
      const int var = loop_var(d);
      if (rng_.chance(0.5)) {  // reversed
        idx = op2(Op::Sub, konst(ScalarType::I64, static_cast<double>(g - 1)), var);
      } else {  // shifted: negative values count from the end
        idx = op2c(Op::Sub, var, rng_.pick(0, static_cast<int>(g)));
      }
    } else {
      View iv = test_support::dims_view(k().ranges, dims_);
      if (!lanes) iv.expr[lane_var()] = ix_const(0), iv.shape[lane_var()] = 1;
      if (test_support::elements(iv.shape) > 0 && rng_.chance(0.5))
        test_support::view_step(rng_, &iv, true);
      ArgFill fill;
      fill.kind = ArgFill::Integer;
      fill.lo = static_cast<double>(-g);
      fill.hi = static_cast<double>(g - 1);
      if (!error_planned_ && rng_.chance(0.2)) {
        fill.has_bad = error_planned_ = c_.error_planned = true;
        fill.bad = rng_.chance(0.5) ? g + rng_.pick(0, 2) : -g - 1 - rng_.pick(0, 2);
      }
      idx_arg = add_arg(rng_.chance(0.3) ? DType::I32 : DType::I64,
                        test_support::elements(iv.shape) + rng_.pick(0, 2), fill);
      if (rng_.chance(0.2)) {
        const int64_t r = k().ranges[lane_var()];
        mask = op2c(Op::Lt, loop_var(lane_var()), rng_.pick(0, static_cast<int>(r)));
      }
      idx = load(idx_arg, test_support::dense_index(iv, 0), mask,
                 exact_val(ScalarType::I64, fill.lo, fill.hi));
      varies = index_uses_var(*k().code[idx].index, lane_var());
    }
    // an index known to be in [0, g) may go unchecked (the backends bound-check it)
    const bool in_range = idx_arg < 0 && val(idx).lo >= 0;
    const int checked = !in_range || rng_.chance(0.5) ? check_index(idx, g, mask) : idx;
    const int p = rng_.pick(-1, lane_var());  // the data's other dim
    const int64_t w = p >= 0 ? k().ranges[p] : 1;
    const Index other = p >= 0 ? ix_var(p) : ix_const(0);
    const Index e = rng_.chance(0.5) ? ix_add(ix_mul(ix_value(checked), w), other)
                                     : ix_add(ix_mul(other, g), ix_value(checked));
    ArgFill fill;
    fill.kind = rng_.chance(0.7) ? ArgFill::Real : ArgFill::Quarter;
    const int data = add_arg(DType::F32, g * w + rng_.pick(0, 2), fill);
    ++(varies ? c_.lane_gathers : c_.row_gathers);
    return load(data, e, mask, exact_val(ScalarType::F32, fill.lo, fill.hi));
  }

  int const_f32() {
    static const std::vector<double> kNice = {0.5, 1, 2, -1, 0.25, 3, 0.1, 1.5, -0.75, 10, 0};
    return konst(ScalarType::F32, rng_.chance(0.6) ? rng_.one_of(kNice) : 8 * rng_.unit() - 4);
  }

  // A value of `pool` of type t (exact ones only when asked), or -1.
  int pick_value(const std::vector<int>& pool, ScalarType t, bool exact) {
    std::vector<int> fit;
    for (int id : pool)
      if (type(id) == t && (!exact || val(id).exact) && k().code[id].op != Op::Const)
        fit.push_back(id);
    return fit.empty() ? -1 : rng_.one_of(fit);
  }
  int reuse(ScalarType t, bool exact) {
    const int carried = pick_value(carried_, t, exact);
    if (carried >= 0 && rng_.chance(0.5)) return carried;
    const int own = pick_value(pool_, t, exact);
    return own >= 0 ? own : carried;
  }

  int f32_leaf(bool exact) {
    const int r = rng_.pick(0, 99);
    if (dims_ == 0) return r < 50 ? const_f32() : real_load();
    if (r < 40) return real_load();
    if (r < 47) return cast(ScalarType::F32, int_load());
    if (r < 53) return cast(ScalarType::F32, loop_var(rng_.pick(0, dims_ - 1)));
    if (r < 60) return const_f32();
    if (r < 71) return gather();
    if (r < 76) return padded_load();
    if (r < 80) return masked_load();
    if (r < 86) return special_load();
    const int carried = pick_value(carried_, ScalarType::F32, exact);
    return carried >= 0 ? carried : real_load();
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
    const int r = rng_.pick(0, 6);
    if (r == 5) return op1(Op::Neg, i64_expr(budget - 1));
    if (r == 6) {
      const int cond = bool_expr(1), a = i64_expr(budget / 2);
      return where(cond, a, i64_expr(budget / 2));
    }
    static const Op kOps[] = {Op::Add, Op::Sub, Op::Mul, Op::Max, Op::Min};
    const int a = i64_expr(budget / 2), b = i64_expr(budget / 2);
    const Op op = kOps[r];
    if (op == Op::Mul && val(a).mag() * val(b).mag() > 0x1p24) return op2(Op::Add, a, b);
    return op2(op, a, b);
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

  int bool_expr(int budget) {
    if (budget <= 0 || rng_.chance(0.4)) return bool_leaf();
    const int r = rng_.pick(0, 3);
    if (r == 3) return op1(Op::Not, bool_expr(budget - 1));
    static const Op kOps[] = {Op::And, Op::Or, Op::Xor};
    const int a = bool_expr(budget / 2);
    return op2(kOps[r], a, bool_expr(budget / 2));
  }

  Rng rng_;
  Case c_;
  std::vector<Val> vals_;     // per SSA id
  int dims_ = 0;              // loop variables the current phase may use
  std::vector<int> pool_;     // values of the current phase
  std::vector<int> carried_;  // Consts, and Reduce results of finished loops
  std::vector<int> pending_;  // Reduce results of the current loop
  bool error_planned_ = false;
  bool post_ = false;  // emitting the post phase
};

}  // namespace random_ops
}  // namespace ferrite
