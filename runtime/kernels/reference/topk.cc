#include "runtime/kernels/reference/topk.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <string>
#include <vector>

#include "compiler/plan/error.h"
#include "compiler/plan/externs/topk_call.h"
#include "compiler/plan/scalar_ops.h"
#include "runtime/kernels/reference/operand_checks.h"
#include "runtime/kernels/reference/strided_walk.h"

namespace ferrite {
namespace {

constexpr const char* kOp = "TopK";

struct TopK {
  const TensorRef *x = nullptr, *values = nullptr, *indices = nullptr;
  ExternBuffer x_buf, val_buf, ind_buf;
  size_t axis = 0;
  int64_t k = 0;
  bool largest = true;
};

TopK parse_topk(const ExternCall& call, const ExternBuffer* inputs, const ExternBuffer* outputs) {
  if (call.inputs.size() != 1 || call.outputs.size() != 2)
    fail(kOp, ": expected 1 input and 2 outputs, got ", call.inputs.size(), " and ",
         call.outputs.size());
  TopK t;
  t.x = &call.inputs[0];
  t.values = &call.outputs[0];
  t.indices = &call.outputs[1];
  t.x_buf = inputs[0];
  t.val_buf = outputs[0];
  t.ind_buf = outputs[1];
  check_view(kOp, "X", *t.x, t.x_buf);
  check_view(kOp, "Values", *t.values, t.val_buf);
  check_view(kOp, "Indices", *t.indices, t.ind_buf);
  if (dtype_size(t.x_buf.dtype) == 0)
    fail(kOp, ": dtype ", dtype_name(t.x_buf.dtype), " unsupported");
  if (t.val_buf.dtype != t.x_buf.dtype)
    fail(kOp, ": Values must have X's dtype ", dtype_name(t.x_buf.dtype), ", got ",
         dtype_name(t.val_buf.dtype));
  if (t.ind_buf.dtype != DType::I64)
    fail(kOp, ": Indices must be int64, got ", dtype_name(t.ind_buf.dtype));
  const std::vector<int64_t>& xs = t.x->shape;
  const TopKCall attrs = decode_topk_call(call, xs);
  t.axis = static_cast<size_t>(attrs.axis);
  t.k = attrs.k;
  t.largest = attrs.largest;
  std::vector<int64_t> want = xs;
  want[t.axis] = t.k;
  if (t.values->shape != want || t.indices->shape != want)
    fail(kOp, ": Values ", dims_text(t.values->shape), " and Indices ", dims_text(t.indices->shape),
         " must have shape ", dims_text(want));
  return t;
}

// Sort keys that order every dtype exactly: floats as double (NaN above all), integers as
// int64, uint64 as itself.
struct FloatKey {
  double v;
  static FloatKey of(DType t, const void* base, int64_t i) {
    const Scalar s = load_element(t, base, i);
    return {t == DType::F64 ? s.f64 : static_cast<double>(s.f32)};
  }
  bool greater(const FloatKey& o) const {
    if (std::isnan(v)) return !std::isnan(o.v);
    return !std::isnan(o.v) && v > o.v;
  }
};

struct IntKey {
  int64_t v;
  static IntKey of(DType t, const void* base, int64_t i) {
    const Scalar s = load_element(t, base, i);
    return {t == DType::Bool ? static_cast<int64_t>(s.b) : s.i64};
  }
  bool greater(const IntKey& o) const { return v > o.v; }
};

struct UIntKey {
  uint64_t v;
  static UIntKey of(DType, const void* base, int64_t i) {
    uint64_t x;
    std::memcpy(&x, static_cast<const uint8_t*>(base) + i * 8, 8);
    return {x};
  }
  bool greater(const UIntKey& o) const { return v > o.v; }
};

template <class Key>
void run_topk(const TopK& t) {
  const std::vector<int64_t>& xs = t.x->shape;
  const int64_t n = xs[t.axis];
  const DType dt = t.x_buf.dtype;
  const size_t esize = dtype_size(dt);
  std::vector<int64_t> outer = xs;  // the slices: X's shape with the axis collapsed
  outer[t.axis] = 1;
  const int64_t slices = element_count(kOp, outer);
  if (t.k == 0 || slices == 0) return;
  std::vector<Key> keys(static_cast<size_t>(n));
  std::vector<int64_t> order(static_cast<size_t>(n));
  std::vector<int64_t> p(xs.size(), 0);
  const bool largest = t.largest;
  // a before b: better key, or an equal key at a lower position.
  auto before = [&](int64_t a, int64_t b) {
    const Key &ka = keys[static_cast<size_t>(a)], &kb = keys[static_cast<size_t>(b)];
    if (largest ? ka.greater(kb) : kb.greater(ka)) return true;
    if (largest ? kb.greater(ka) : ka.greater(kb)) return false;
    return a < b;
  };
  const auto* src = static_cast<const uint8_t*>(t.x_buf.data);
  auto* vals = static_cast<uint8_t*>(t.val_buf.data);
  auto* inds = static_cast<uint8_t*>(t.ind_buf.data);
  const int64_t xstride = t.x->strides[t.axis], vstride = t.values->strides[t.axis],
                istride = t.indices->strides[t.axis];
  for (int64_t s = 0; s < slices; ++s) {
    const int64_t xbase = view_offset(*t.x, p), vbase = view_offset(*t.values, p),
                  ibase = view_offset(*t.indices, p);
    for (int64_t j = 0; j < n; ++j)
      keys[static_cast<size_t>(j)] = Key::of(dt, src, xbase + j * xstride);
    std::iota(order.begin(), order.end(), 0);
    std::partial_sort(order.begin(), order.begin() + t.k, order.end(), before);
    for (int64_t j = 0; j < t.k; ++j) {
      const int64_t from = order[static_cast<size_t>(j)];
      std::memcpy(vals + (vbase + j * vstride) * esize, src + (xbase + from * xstride) * esize,
                  esize);
      std::memcpy(inds + (ibase + j * istride) * 8, &from, 8);
    }
    next_index(&p, outer);
  }
}

}  // namespace

void reference_topk(const ExternCall& call, const ExternBuffer* inputs,
                    const ExternBuffer* outputs) {
  const TopK t = parse_topk(call, inputs, outputs);
  const DType dt = t.x_buf.dtype;
  if (dtype_is_float(dt)) {
    run_topk<FloatKey>(t);
  } else if (dt == DType::U64) {
    run_topk<UIntKey>(t);
  } else {
    run_topk<IntKey>(t);
  }
}

}  // namespace ferrite
