// The leaf half of the random kernel generator (random_ops_values.h builds expressions over
// it): the generator's state, the emission of instructions with the static facts of each
// value (random_ops_bounds.h), random views, and the leaves: loads through random views
// (contiguous, strided, transposed, reshaped, broadcast, reversed), padded loads under a
// mask, gathers through a checked index (the index varying along the lanes or once per
// row), LoopVars, Consts, inputs holding NaN and infinities, and Reduce results of earlier
// loops.
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

class ValueGenBase {
 public:
  explicit ValueGenBase(uint32_t seed) : rng_(seed) {}
  virtual ~ValueGenBase() = default;

 protected:
  // A Bool expression of about `budget` ops (random_ops_values.h).
  virtual int bool_expr(int budget) = 0;

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
