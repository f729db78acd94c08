// Random calls of every extern op in the manifest (compiler/plan/externs/extern_op.h), for
// random_extern_test.cc: operands are views of their own buffers in any storage order, with
// broadcast (stride-0) dims and offsets where the op allows them; attributes, reductions,
// index dtypes and post-op chains are drawn too, and a few indices out of range, so that the
// error paths are compared as well.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "compiler/plan/error.h"
#include "compiler/plan/externs/attention_call.h"
#include "compiler/plan/externs/bitcast_call.h"
#include "compiler/plan/externs/conv_call.h"
#include "compiler/plan/externs/matmul_call.h"
#include "compiler/plan/externs/matmul_nbits_call.h"
#include "compiler/plan/externs/scatter_call.h"
#include "compiler/plan/externs/segment_reduce_call.h"
#include "compiler/plan/externs/topk_call.h"
#include "compiler/plan/plan.h"
#include "compiler/plan/scalar_ops.h"
#include "runtime/backend.h"
#include "tests/unit/runtime/conv_geometry.h"
#include "tests/unit/runtime/extern_runs.h"

namespace ferrite {
namespace random_externs {

using Dims = std::vector<int64_t>;

// One operand: a view (ref) of its own buffer, 8-byte aligned.
struct Operand {
  DType dtype = DType::F32;
  std::vector<uint64_t> storage;
  int64_t elements = 0;  // of the buffer
  TensorRef ref;

  void* data() { return storage.data(); }
  ExternBuffer buffer() const {
    return ExternBuffer{const_cast<uint64_t*>(storage.data()), dtype, elements};
  }
};

struct Case {
  ExternCall call;
  std::vector<Operand> ins, outs;
  std::vector<size_t> constants;  // inputs a Session would pass as plan constants (weights)
  // |got - want| <= tol * max(1, |want|) for float outputs; 0: every output bit for bit.
  double tol = 0;
  std::string text;
};

class Draw {
 public:
  explicit Draw(uint32_t seed) : rng_(seed) {}
  int64_t pick(int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng_);
  }
  bool chance(int one_in) { return pick(0, one_in - 1) == 0; }
  double real(double lo, double hi) { return std::uniform_real_distribution<double>(lo, hi)(rng_); }
  std::mt19937& rng() { return rng_; }

  // A storage order for `rank` dims, outermost first: row-major half of the time.
  std::vector<int> order(size_t rank) {
    std::vector<int> o(rank);
    std::iota(o.begin(), o.end(), 0);
    if (!chance(2)) std::shuffle(o.begin(), o.end(), rng_);
    return o;
  }

 private:
  std::mt19937 rng_;
};

// A view of `shape` stored in `order`, stride 0 where `broadcast` says, starting at `offset`
// of a buffer whose elements (junk before the offset included) are value(i).
template <class F>
Operand make_operand(DType dtype, const Dims& shape, const std::vector<int>& order,
                     const std::vector<bool>& broadcast, int64_t offset, F value) {
  Operand o;
  o.dtype = dtype;
  o.ref.shape = shape;
  int64_t span = 0;
  o.ref.strides = view_strides(shape, order, broadcast, &span);
  o.ref.offset = offset;
  o.elements = offset + span;
  o.storage.assign(static_cast<size_t>(o.elements + 1), 0);
  const ScalarType ct = compute_type(dtype);
  for (int64_t i = 0; i < o.elements; ++i) {
    const double v = value(i);
    store_element(dtype, o.data(), i, ct == ScalarType::I64 ? ScalarType::I64 : ScalarType::F64,
                  ct == ScalarType::I64 ? scalar_i64(static_cast<int64_t>(v)) : scalar_f64(v));
  }
  return o;
}

// Values uniform in [lo, hi] (whole numbers for integer dtypes), in a random view.
inline Operand random_operand(Draw& d, DType dtype, const Dims& shape, double lo, double hi) {
  const bool ints = compute_type(dtype) == ScalarType::I64;
  return make_operand(dtype, shape, d.order(shape.size()), {}, d.pick(0, 3), [&](int64_t) {
    return ints ? static_cast<double>(d.pick(static_cast<int64_t>(lo), static_cast<int64_t>(hi)))
                : d.real(lo, hi);
  });
}

// An output: a view in a random order (or dense), its buffer full of junk that a backend must
// leave alone outside the view (NaN for floats).
inline Operand output_operand(Draw& d, DType dtype, const Dims& shape, bool any_order = true) {
  std::vector<int> order(shape.size());
  std::iota(order.begin(), order.end(), 0);
  if (any_order) order = d.order(shape.size());
  const double junk = compute_type(dtype) == ScalarType::I64 ? 77.0 : std::nan("");
  return make_operand(dtype, shape, order, {}, any_order ? d.pick(0, 2) : 0,
                      [junk](int64_t) { return junk; });
}

inline DType any_dtype(Draw& d) {
  const DType types[] = {DType::F32, DType::F32, DType::F64, DType::I32, DType::I64, DType::U8};
  return types[d.pick(0, 5)];
}

// Indices into a dim of size n, in [-n, n), one in 30 out of range when `stray`.
inline Operand index_operand(Draw& d, const Dims& shape, int64_t n, bool stray) {
  const DType t = d.chance(2) ? DType::I32 : DType::I64;
  const bool bad = stray && d.chance(30);
  int64_t bad_at = -1;
  int64_t count = 1;
  for (int64_t x : shape) count *= x;
  if (bad && count > 0) bad_at = d.pick(0, count - 1);
  std::vector<int> order(shape.size());
  std::iota(order.begin(), order.end(), 0);
  int64_t i = 0;
  return make_operand(t, shape, order, {}, 0, [&](int64_t) {
    if (i++ == bad_at) return static_cast<double>(d.chance(2) ? n : -n - 1);
    return static_cast<double>(d.pick(-n, std::max<int64_t>(n - 1, -n)));
  });
}

// 0 to 3 post-ops on an output of shape `y`: unary ones, and binary ones whose operand is a
// scalar, a vector along `channel` or a full tensor (positive, so Div stays tame).
inline void add_post_ops(Draw& d, Case* c, const Dims& y, size_t channel) {
  const std::vector<PostOp> unary = unary_post_ops();
  const PostOpKind binary[] = {PostOpKind::Add, PostOpKind::Sub, PostOpKind::Mul,
                               PostOpKind::Div, PostOpKind::Max, PostOpKind::Min};
  for (int64_t n = d.pick(0, 3); n > 0; --n) {
    if (d.chance(2)) {
      append_post_op(&c->call, unary[static_cast<size_t>(d.pick(0, unary.size() - 1))]);
      continue;
    }
    std::vector<bool> broadcast(y.size(), false);
    const int64_t form = d.pick(0, 2);
    for (size_t i = 0; i < y.size(); ++i) broadcast[i] = form == 0 || (form == 1 && i != channel);
    std::vector<int> order(y.size());
    std::iota(order.begin(), order.end(), 0);
    Operand t =
        make_operand(DType::F32, y, order, broadcast, 0, [&](int64_t) { return d.real(0.5, 1.5); });
    const int32_t input = static_cast<int32_t>(c->call.inputs.size());
    append_post_op(&c->call, PostOp{binary[d.pick(0, 5)], 0, 0, input});
    c->call.inputs.push_back(t.ref);
    c->ins.push_back(std::move(t));
  }
  if (d.chance(5)) {  // then v * |v|: a body that is no chain (a following kernel runs it)
    EpilogueBody e = c->call.epilogue;
    if (e.empty()) e.steps.push_back(EpilogueStep{Op::Load});
    const int32_t v = static_cast<int32_t>(e.steps.size() - 1);
    e.steps.push_back(EpilogueStep{Op::Abs, v});
    e.steps.push_back(EpilogueStep{Op::Mul, v, v + 1});
    set_epilogue(&c->call, std::move(e));
  }
}

inline void set_operands(Case* c) {
  for (const Operand& o : c->ins) c->call.inputs.push_back(o.ref);
  for (const Operand& o : c->outs) c->call.outputs.push_back(o.ref);
}

// Relative bound for a float sum of `terms` products of values in [-1, 1] (the reference
// accumulates in double, backends in float: the error grows as sqrt(terms) ulps), post-op
// approximations included.
inline double sum_tol(int64_t terms) {
  return 1e-5 + 2e-6 * std::sqrt(static_cast<double>(std::max<int64_t>(terms, 1)));
}

Case random_matmul(Draw& d);
Case random_conv(Draw& d, bool transpose);
Case random_scatter_elements(Draw& d);
Case random_scatter_nd(Draw& d);
Case random_segment_reduce(Draw& d);
Case random_topk(Draw& d);
Case random_matmul_integer(Draw& d);
Case random_conv_integer(Draw& d);
Case random_attention(Draw& d);
Case random_matmul_nbits(Draw& d);
Case random_bitcast(Draw& d);

// The generator of each op; the switch names every op in the manifest (-Wswitch).
inline Case random_case(ExternOp op, Draw& d) {
  switch (op) {
    case ExternOp::MatMul:
      return random_matmul(d);
    case ExternOp::Conv:
      return random_conv(d, false);
    case ExternOp::ConvTranspose:
      return random_conv(d, true);
    case ExternOp::ScatterElements:
      return random_scatter_elements(d);
    case ExternOp::ScatterND:
      return random_scatter_nd(d);
    case ExternOp::SegmentReduce:
      return random_segment_reduce(d);
    case ExternOp::TopK:
      return random_topk(d);
    case ExternOp::MatMulInteger:
      return random_matmul_integer(d);
    case ExternOp::ConvInteger:
      return random_conv_integer(d);
    case ExternOp::Attention:
      return random_attention(d);
    case ExternOp::MatMulNBits:
      return random_matmul_nbits(d);
    case ExternOp::BitCast:
      return random_bitcast(d);
  }
  return Case{};
}

}  // namespace random_externs
}  // namespace ferrite
