// Random kernels for differential tests of the vector backends against the reference
// (tests/unit/runtime/random_backend_test.cc). Each Case is a valid Kernel (validate_kernel)
// with its input contents and, per output, the bounds of the stored value:
//   - random op DAGs over f32 (Add Sub Mul Div Max Min Neg Abs Relu Exp Log Sqrt Rsqrt
//     Reciprocal Sigmoid Tanh Erf Pow Floor Ceil Round Sign Where, IsNaN/IsInf, comparisons,
//     And/Or/Xor/Not, casts among f32/i64/bool and a little f64, i64 arithmetic on LoopVars and
//     loaded integers) over the leaves of random_ops_values.h;
//   - shapes whose innermost dim has a tail for 8 and 16 lanes (1, 3, 7, 15, 16, 17, 31, 33,
//     100, 257), several dims, broadcast, strided, transposed, reshaped and reversed reads,
//     contiguous, strided and transposed writes;
//   - gathers through i64/i32 indices (lane-varying and per row), sometimes with one index out
//     of range: both sides must then fail with the reference's message;
//   - reductions (Sum Max Min Prod ArgMax ArgMin, f32 and i64) over the innermost and over
//     outer dims, with prologues, post-phase epilogues and body stores; inner loops
//     (Kernel::loop_ends): softmax, layer norm, and random chains of reductions where a loop
//     reads the results (and the stores) of earlier ones;
//   - stores to f32, f16, i64, i32, u8 and bool; loads of f32, f16, i64, i32, u8 and bool
//     (true as any nonzero byte).
// Values stay well conditioned, and their tolerance comes with them (random_ops_bounds.h
// states the rule); random_ops_check.h runs a Case on a backend and checks it.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "tests/unit/runtime/random_ops_values.h"

namespace ferrite {
namespace random_ops {

using Bytes = std::vector<std::vector<uint8_t>>;

class RandomOpsKernels : public ValueGen {
 public:
  explicit RandomOpsKernels(uint32_t seed) : ValueGen(seed) {}

  Case make() {
    reset();
    ends_.clear();
    error_planned_ = false;
    k().name = "random_ops";
    const int r = rng_.pick(0, 99);
    try {
      if (r < 40) {
        pointwise();
      } else if (r < 72) {
        reduction();
      } else if (r < 82) {
        softmax();
      } else if (r < 90) {
        layernorm();
      } else {
        chain();
      }
    } catch (const std::logic_error& e) {  // a generator bug: show what it built so far
      k().post_begin = static_cast<int>(k().code.size());
      k().loop_ends.clear();
      throw std::logic_error(std::string(e.what()) + " after\n" + kernel_to_string(k()));
    }
    if (k().num_reduce == 0) k().post_begin = static_cast<int>(k().code.size());
    validate_kernel(k());
    return std::move(c_);
  }

  // Contents for every arg of c: inputs as c.fill says, outputs a fixed pattern.
  Bytes inputs(const Case& c) {
    Bytes b(c.k.args.size());
    for (size_t a = 0; a < b.size(); ++a) {
      const KernelArg& arg = c.k.args[a];
      const ArgFill& f = c.fill[a];
      b[a].assign(static_cast<size_t>(arg.elements) * dtype_size(arg.dtype), 0x7F);
      if (f.kind == ArgFill::Output) continue;
      for (int64_t i = 0; i < arg.elements; ++i) fill_element(arg.dtype, f, b[a].data(), i);
      if (arg.dtype == DType::Bool && rng_.chance(0.3))  // a true byte is any nonzero byte
        for (uint8_t& byte : b[a])
          if (byte) byte = static_cast<uint8_t>(rng_.pick(1, 255));
      if (f.has_bad && arg.elements > 0)
        store_element(arg.dtype, b[a].data(), rng_.pick(0, static_cast<int>(arg.elements) - 1),
                      ScalarType::I64, scalar_i64(f.bad));
    }
    return b;
  }

 private:
  void fill_element(DType dtype, const ArgFill& f, void* data, int64_t i) {
    Scalar s;
    ScalarType t = ScalarType::F32;
    const double x = f.lo + (f.hi - f.lo) * rng_.unit();
    switch (f.kind) {
      case ArgFill::Real:
        s = scalar_f32(static_cast<float>(x));
        break;
      case ArgFill::Quarter:
        s = scalar_f32(static_cast<float>(std::round(4 * x) / 4));
        break;
      case ArgFill::Special: {
        static const float kSpecial[] = {NAN, INFINITY, -INFINITY};
        const bool special = rng_.chance(0.15);
        s = scalar_f32(special ? kSpecial[rng_.pick(0, 2)]
                               : static_cast<float>(std::round(4 * x) / 4));
        break;
      }
      case ArgFill::Integer:
        t = ScalarType::I64;
        s = scalar_i64(rng_.pick(static_cast<int>(f.lo), static_cast<int>(f.hi)));
        break;
      default:
        t = ScalarType::Bool;
        s = scalar_bool(x > 0);
        break;
    }
    store_element(dtype, data, i, t, s);
  }

  // ---- shapes and phases ------------------------------------------------------------------

  // `outer` pointwise dims then `reduce` reduction dims. The innermost dim (and, when asked,
  // the innermost outer dim) has a length with tails for 8 and 16 lanes.
  void shape(int outer, int reduce, bool tail_outer, bool allow_empty) {
    static const std::vector<int64_t> kTails = {1, 3, 7, 15, 16, 17, 31, 33, 100, 257};
    static const std::vector<int64_t> kSmall = {1, 2, 3, 4, 5, 8};
    const int n = outer + reduce;
    std::vector<int64_t>& ranges = k().ranges;
    do {
      ranges.clear();
      for (int d = 0; d < n; ++d) {
        const bool tail = d == n - 1 || (tail_outer && d == outer - 1);
        ranges.push_back(rng_.one_of(tail ? kTails : kSmall));
      }
    } while (test_support::elements(ranges) > kMaxPoints);
    if (allow_empty && n > 0 && rng_.chance(0.02)) ranges[rng_.pick(0, n - 1)] = 0;
    k().num_reduce = reduce;
  }
  int all_dims() const { return static_cast<int>(c_.k.ranges.size()); }

  // Ends the current inner loop; the next one starts.
  void next_loop() {
    ends_.push_back(static_cast<int32_t>(k().code.size()));
    begin_phase(all_dims());
  }
  void begin_post() {
    k().post_begin = static_cast<int>(k().code.size());
    if (!ends_.empty()) {
      ends_.push_back(k().post_begin);
      k().loop_ends = ends_;
    }
    begin_phase(k().num_outer());
    post_ = true;
  }

  // ---- stores -----------------------------------------------------------------------------

  // Stores v at each point of the phase through a one-to-one view (contiguous, strided,
  // transposed, reshaped), converted to a random storage type its value allows.
  void store_value(int v) {
    if (type(v) == ScalarType::F64) v = cast(ScalarType::F32, v);
    DType dtype = DType::F32;
    const int r = rng_.pick(0, 99);
    if (type(v) == ScalarType::F32) {
      if (r < 12 && val(v).mag() < 6e4) {
        dtype = DType::F16;
      } else if (r < 24 && val(v).exact) {
        v = cast(ScalarType::I64, bound(sanitize(v), 1e6));
        dtype = rng_.one_of(std::vector<DType>{DType::I64, DType::I32, DType::U8});
      } else if (r < 30 && val(v).exact) {
        v = cast(ScalarType::Bool, v);
        dtype = DType::Bool;
      }
    } else if (type(v) == ScalarType::I64) {
      dtype = r < 50 ? DType::I64 : r < 80 ? DType::I32 : DType::U8;
    } else {
      dtype = DType::Bool;
    }
    store_to(dtype, v);
  }
  std::pair<int, Index> store_to(DType dtype, int v) {
    int64_t size;
    const Index index = view_index(false, &size);
    ArgFill fill;
    fill.kind = ArgFill::Output;
    const int arg = add_arg(dtype, size, fill);
    store(arg, index, v);
    return {arg, index};
  }

  int store_candidate(int budget) {
    const int r = rng_.pick(0, 99);
    if (r < 75) return f32_expr(budget);
    if (r < 88) return i64_expr(budget / 2);
    return bool_expr(budget / 2);
  }

  // ---- patterns ---------------------------------------------------------------------------

  void pointwise() {
    c_.pattern = "pointwise";
    shape(rng_.chance(0.03) ? 0 : rng_.pick(1, 4), 0, false, true);
    begin_phase(all_dims());
    for (int s = rng_.pick(1, 3); s > 0; --s) store_value(store_candidate(rng_.pick(1, 8)));
  }

  // A Reduce of a random kind over a prologue of about `budget` ops; with base >= 0, the
  // prologue also reads base (a result of an earlier loop).
  int reduce_random(int budget, int base = -1) {
    const int64_t n = k().reduce_points();
    const int r = rng_.pick(0, 99);
    if (r >= 82 && r < 92) {
      const ReduceKind kind =
          rng_.one_of(std::vector<ReduceKind>{ReduceKind::Sum, ReduceKind::Max, ReduceKind::Min});
      return reduce(kind, i64_expr(budget / 2));
    }
    if (r >= 92) return reduce(ReduceKind::Sum, cast(ScalarType::F32, bool_expr(1)));  // a count
    const ReduceKind kind = r < 28   ? ReduceKind::Sum
                            : r < 40 ? ReduceKind::Max
                            : r < 48 ? ReduceKind::Min
                            : r < 57 ? ReduceKind::Prod
                            : r < 72 ? ReduceKind::ArgMax
                                     : ReduceKind::ArgMin;
    const bool exact = kind == ReduceKind::ArgMax || kind == ReduceKind::ArgMin;
    int p = f32_expr(budget, exact);
    if (base >= 0 && (!exact || val(base).exact)) {
      const Move m = rng_.one_of(std::vector<Move>{kAdd, kSub, kMul, kMax, kMin});
      p = rng_.chance(0.5) ? apply(m, p, base, exact) : apply(m, base, p, exact);
    }
    if (kind == ReduceKind::Sum) p = bound(p, 1e4);
    if (kind == ReduceKind::Prod) {  // factors in [1 - c, 1 + c]: the product stays finite
      const double c = std::min(0.5, 30.0 / static_cast<double>(std::max<int64_t>(n, 1)));
      int t = op1(Op::Tanh, sanitize(p));
      if (val(t).abs_err() > 1e-3) t = op1(Op::Tanh, real_load());  // p is known too roughly
      p = op2c(Op::Add, op2c(Op::Mul, t, c), 1);
    }
    return reduce(kind, p);
  }

  // The post-phase value made of Reduce result r: r itself, grown by a few ops, or (an
  // index) used to gather.
  int epilogue(int r) {
    if (type(r) == ScalarType::I64) {
      const int c = rng_.pick(0, 9);
      if (c < 4) return r;
      if (c < 7 && val(r).lo >= 0 && val(r).hi < 4096) return gather_at(r);
      r = cast(ScalarType::F32, r);
    }
    for (int s = rng_.pick(0, 3); s > 0; --s) {
      const Move m = pick_move(false);
      const int other = info(m).arity == 2 ? f32_expr(rng_.pick(0, 2)) : -1;
      r = info(m).arity == 1 || rng_.chance(0.5) ? apply(m, r, other, false)
                                                 : apply(m, other, r, false);
    }
    return r;
  }

  // data[j * n + r] over the phase's dims: take along the axis with an ArgMax result.
  int gather_at(int r) {
    const int64_t n = static_cast<int64_t>(val(r).hi) + 1;
    const int checked = rng_.chance(0.5) ? check_index(r, n, -1) : r;
    int64_t size;
    Index rows = view_index(true, &size);
    ArgFill fill;
    const int data = add_arg(DType::F32, size * n, fill);
    ++c_.row_gathers;
    return load(data, ix_add(ix_mul(rows, n), ix_value(checked)), -1,
                exact_val(ScalarType::F32, fill.lo, fill.hi));
  }

  void reduction() {
    c_.pattern = "reduce";
    const int outer = rng_.pick(0, 2), red = rng_.chance(0.7) ? 1 : 2;
    shape(outer, red, rng_.chance(0.3), true);
    begin_phase(all_dims());
    std::vector<int> results;
    for (int i = rng_.chance(0.3) ? 2 : 1; i > 0; --i)
      results.push_back(reduce_random(rng_.pick(0, 6)));
    if (rng_.chance(0.15)) store_value(f32_expr(2));  // a body store: every point
    begin_post();
    for (int r : results) store_value(epilogue(r));
  }

  // The same load in every loop: x = in[view] * scale.
  struct Input {
    int arg = -1;
    Index index;
    double scale = 1;
  };
  Input input(double scale) {
    Input in;
    int64_t size;
    in.index = view_index(true, &size);
    ArgFill fill;
    fill.kind = rng_.chance(0.7) ? ArgFill::Real : ArgFill::Quarter;
    in.arg = add_arg(rng_.chance(0.1) ? DType::F16 : DType::F32, size, fill);
    if (k().args[in.arg].dtype == DType::F16) c_.fill[in.arg].kind = ArgFill::Quarter;
    in.scale = scale;
    return in;
  }
  int read(const Input& in) {
    const int x = load(in.arg, in.index, -1, exact_val(ScalarType::F32, -10, 10));
    return in.scale == 1 ? x : op2c(Op::Mul, x, in.scale);
  }

  // max; sum of exp(x - max); exp(x - max) / sum, and/or log-sum-exp in the post phase.
  void softmax() {
    c_.pattern = "softmax";
    const int outer = rng_.pick(0, 2);
    shape(outer, rng_.chance(0.8) ? 1 : 2, rng_.chance(0.3), false);
    begin_phase(all_dims());
    const Input x = input(rng_.one_of(std::vector<double>{1, 0.5, 2, 3}));
    const int m = reduce(ReduceKind::Max, read(x));
    auto shifted_exp = [&] {
      const int d = op2(Op::Sub, read(x), m);
      vals_[d].hi = std::min(vals_[d].hi, 1e-30);  // x <= max(x)
      return op1(Op::Exp, d);
    };
    next_loop();
    const int s = reduce(ReduceKind::Sum, shifted_exp());
    vals_[s].lo = std::max(vals_[s].lo, 1 - 1e-6);  // the max's own term is exp(0)
    const bool normalize = rng_.chance(0.7);
    if (normalize) {
      next_loop();
      const int e = shifted_exp();
      store_value(rng_.chance(0.5) ? op2(Op::Div, e, s) : op2(Op::Mul, e, op1(Op::Reciprocal, s)));
    }
    begin_post();
    if (!normalize || rng_.chance(0.4)) store_value(op2(Op::Add, op1(Op::Log, s), m));
  }

  // mean; variance; (x - mean) * rsqrt(var + eps) [* gamma + beta], and/or mean and rstd.
  void layernorm() {
    c_.pattern = "layernorm";
    const int outer = rng_.pick(0, 2);
    shape(outer, rng_.chance(0.8) ? 1 : 2, rng_.chance(0.3), false);
    begin_phase(all_dims());
    const Input x = input(1);
    const double inv_n = 1.0 / static_cast<double>(k().reduce_points());
    const int s1 = reduce(ReduceKind::Sum, read(x));
    auto centered = [&] {
      const int mean = op2c(Op::Mul, s1, inv_n);
      return op2(Op::Sub, read(x), mean);
    };
    next_loop();
    const int d = centered();
    const int s2 = reduce(ReduceKind::Sum, op2(Op::Mul, d, d));
    // eps well above the variance's error bound: rsqrt stays well conditioned even for a
    // variance of 0
    const double eps =
        std::max(rng_.one_of(std::vector<double>{1e-5, 1e-3, 1}), 256 * val(s2).abs_err() * inv_n);
    auto rstd = [&] { return op1(Op::Rsqrt, op2c(Op::Add, op2c(Op::Mul, s2, inv_n), eps)); };
    const bool normalize = rng_.chance(0.7);
    if (normalize) {
      next_loop();
      const int c = centered();
      int y = op2(Op::Mul, c, rstd());
      if (rng_.chance(0.5)) {  // gamma and beta along the reduction dims only
        View v = test_support::dims_view(k().ranges, all_dims());
        for (int o = 0; o < outer; ++o) v.expr[o] = ix_const(0), v.shape[o] = 1;
        const int64_t size = test_support::elements(v.shape);
        ArgFill fill;
        const int gamma = add_arg(DType::F32, size, fill);
        const int beta = add_arg(DType::F32, size, fill);
        const Val range = exact_val(ScalarType::F32, fill.lo, fill.hi);
        y = op2(Op::Mul, y, load(gamma, test_support::dense_index(v, 0), -1, range));
        y = op2(Op::Add, y, load(beta, test_support::dense_index(v, 0), -1, range));
      }
      store_value(y);
    }
    begin_post();
    const bool mean = rng_.chance(0.5);
    if (mean) store_value(op2c(Op::Mul, s1, inv_n));
    if (!normalize || !mean || rng_.chance(0.5)) store_value(rstd());
  }

  // 2-3 loops, each reducing a prologue that reads the results of earlier loops (and what
  // the previous loop stored at the same point).
  void chain() {
    c_.pattern = "chain";
    const int outer = rng_.pick(0, 2);
    shape(outer, rng_.chance(0.8) ? 1 : 2, rng_.chance(0.3), false);
    begin_phase(all_dims());
    std::vector<int> results;
    int stored_arg = -1;
    Index stored_index;
    Val stored;
    const int loops = rng_.pick(2, 3);
    for (int l = 0; l < loops; ++l) {
      if (l > 0) next_loop();
      int base = -1;
      if (!results.empty()) {
        base = rng_.one_of(results);
        if (type(base) == ScalarType::I64) base = cast(ScalarType::F32, base);
      }
      if (stored_arg >= 0) {
        const int back = load(stored_arg, stored_index, -1, stored);
        base = base >= 0 ? op2(Op::Add, bound(base, 1e4), back) : back;
        stored_arg = -1;
      }
      results.push_back(reduce_random(rng_.pick(0, 4), base));
      if (l + 1 < loops && rng_.chance(0.4)) {
        const int v = bound(f32_expr(2), 1e4);
        stored = val(v);
        std::tie(stored_arg, stored_index) = store_to(DType::F32, v);
      }
    }
    begin_post();
    store_value(epilogue(results.back()));
    if (rng_.chance(0.5)) store_value(epilogue(rng_.one_of(results)));
  }

  static constexpr int64_t kMaxPoints = 2500;
  std::vector<int32_t> ends_;
};

}  // namespace random_ops
}  // namespace ferrite
