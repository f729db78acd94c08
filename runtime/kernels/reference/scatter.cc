#include "runtime/kernels/reference/scatter.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "compiler/plan/error.h"
#include "compiler/plan/externs/scatter_call.h"
#include "compiler/plan/scalar_ops.h"
#include "runtime/kernels/reference/operand_checks.h"
#include "runtime/kernels/reference/strided_walk.h"

namespace ferrite {
namespace {

// The checked operands of a scatter call, and the two things every scatter does: copy
// data to out, and apply one update element.
struct Scatter {
  const char* op = "";
  const TensorRef *data = nullptr, *indices = nullptr, *updates = nullptr, *out = nullptr;
  ExternBuffer data_buf, ind_buf, upd_buf, out_buf;
  size_t esize = 0;
  ScatterCall attrs;

  void copy_data() const;
  // The index stored at element `offset` of indices, for a data dim of size n, made
  // non-negative; `pos` (its position in indices) and `dim` only name it in the error.
  int64_t index_at(int64_t offset, int64_t n, const std::vector<int64_t>& pos, size_t dim) const;
  // out[o] = updates[u], or reduce(out[o], updates[u]).
  void apply(int64_t o, int64_t u) const;
};

void Scatter::copy_data() const {
  auto* dst = static_cast<uint8_t*>(out_buf.data);
  const auto* src = static_cast<const uint8_t*>(data_buf.data);
  const int64_t count = element_count(op, data->shape);
  if (count == 0) return;
  if (is_contiguous(*data) && is_contiguous(*out)) {
    std::memcpy(dst + out->offset * esize, src + data->offset * esize,
                static_cast<size_t>(count) * esize);
    return;
  }
  std::vector<int64_t> p(data->shape.size(), 0);
  for (int64_t i = 0; i < count; ++i) {
    std::memcpy(dst + view_offset(*out, p) * esize, src + view_offset(*data, p) * esize, esize);
    next_index(&p, data->shape);
  }
}

int64_t Scatter::index_at(int64_t offset, int64_t n, const std::vector<int64_t>& pos,
                          size_t dim) const {
  const int64_t k = load_element(ind_buf.dtype, ind_buf.data, offset).i64;
  if (k < -n || k >= n)
    fail(op, ": index ", k, " out of range [", -n, ", ", n, ") for data dim ", dim,
         " at indices position ", dims_text(pos));
  return k < 0 ? k + n : k;
}

void Scatter::apply(int64_t o, int64_t u) const {
  if (!attrs.reduction) {
    std::memcpy(static_cast<uint8_t*>(out_buf.data) + o * esize,
                static_cast<const uint8_t*>(upd_buf.data) + u * esize, esize);
    return;
  }
  const DType t = out_buf.dtype;
  const ScalarType ct = compute_type(t);
  const Scalar acc = load_element(t, out_buf.data, o), x = load_element(t, upd_buf.data, u);
  const ReduceKind kind = *attrs.reduction;
  Scalar r;
  if (t == DType::U64 && (kind == ReduceKind::Max || kind == ReduceKind::Min)) {
    // uint64 computes as int64: compare as unsigned so that values >= 2^63 order right.
    const uint64_t a = static_cast<uint64_t>(acc.i64), b = static_cast<uint64_t>(x.i64);
    r = (kind == ReduceKind::Max ? b > a : b < a) ? x : acc;
  } else {
    r = reduce_step(kind, ct, acc, x, 0, nullptr);
  }
  store_element(t, out_buf.data, o, ct, r);
}

Scatter parse_scatter(const char* op, const ExternCall& call, const ExternBuffer* inputs,
                      const ExternBuffer* outputs) {
  if (call.inputs.size() != 3 || call.outputs.size() != 1)
    fail(op, ": expected 3 inputs and 1 output, got ", call.inputs.size(), " and ",
         call.outputs.size());
  Scatter s;
  s.op = op;
  s.data = &call.inputs[0];
  s.indices = &call.inputs[1];
  s.updates = &call.inputs[2];
  s.out = &call.outputs[0];
  s.data_buf = inputs[0];
  s.ind_buf = inputs[1];
  s.upd_buf = inputs[2];
  s.out_buf = outputs[0];
  check_view(op, "data", *s.data, s.data_buf);
  check_view(op, "indices", *s.indices, s.ind_buf);
  check_view(op, "updates", *s.updates, s.upd_buf);
  check_view(op, "out", *s.out, s.out_buf);
  const DType t = s.data_buf.dtype;
  s.esize = dtype_size(t);
  if (s.esize == 0) fail(op, ": dtype ", dtype_name(t), " unsupported");
  if (s.upd_buf.dtype != t || s.out_buf.dtype != t)
    fail(op, ": data, updates and out must share one dtype, got ", dtype_name(t), ", ",
         dtype_name(s.upd_buf.dtype), " and ", dtype_name(s.out_buf.dtype));
  if (s.ind_buf.dtype != DType::I32 && s.ind_buf.dtype != DType::I64)
    fail(op, ": indices must be int32 or int64, got ", dtype_name(s.ind_buf.dtype));
  if (s.out->shape != s.data->shape)
    fail(op, ": out shape ", dims_text(s.out->shape), " differs from data shape ",
         dims_text(s.data->shape));
  s.attrs = decode_scatter_call(call, s.data->shape.size());
  return s;
}

}  // namespace

void reference_scatter_elements(const ExternCall& call, const ExternBuffer* inputs,
                                const ExternBuffer* outputs) {
  const char* op = "ScatterElements";
  const Scatter s = parse_scatter(op, call, inputs, outputs);
  const std::vector<int64_t>& ds = s.data->shape;
  const std::vector<int64_t>& us = s.updates->shape;
  const int64_t rank = static_cast<int64_t>(ds.size());
  const size_t axis = static_cast<size_t>(s.attrs.axis);
  if (s.indices->shape != us || us.size() != ds.size())
    fail(op, ": indices ", dims_text(s.indices->shape), " and updates ", dims_text(us),
         " must have one shape of data's rank ", rank);
  for (size_t d = 0; d < ds.size(); ++d) {
    if (d != axis && us[d] > ds[d])
      fail(op, ": updates ", dims_text(us), " exceed data ", dims_text(ds), " in dim ", d);
  }
  s.copy_data();
  const int64_t count = element_count(op, us), n = ds[axis];
  std::vector<int64_t> p(us.size(), 0);
  for (int64_t i = 0; i < count; ++i) {
    const int64_t k = s.index_at(view_offset(*s.indices, p), n, p, axis);
    const int64_t u = view_offset(*s.updates, p), pos = p[axis];
    p[axis] = k;  // the target; along `axis` updates may be longer than data
    s.apply(view_offset(*s.out, p), u);
    p[axis] = pos;
    next_index(&p, us);
  }
}

void reference_scatter_nd(const ExternCall& call, const ExternBuffer* inputs,
                          const ExternBuffer* outputs) {
  const char* op = "ScatterND";
  const Scatter s = parse_scatter(op, call, inputs, outputs);
  const std::vector<int64_t>& ds = s.data->shape;
  const std::vector<int64_t>& is = s.indices->shape;
  const std::vector<int64_t>& us = s.updates->shape;
  if (is.empty()) fail(op, ": indices must have rank >= 1");
  if (is.back() < 0 || is.back() > static_cast<int64_t>(ds.size()))
    fail(op, ": the last dim of indices ", dims_text(is), " must be at most data's rank ",
         ds.size());
  const size_t k = static_cast<size_t>(is.back());
  const std::vector<int64_t> lead(is.begin(), is.end() - 1), slice(ds.begin() + k, ds.end());
  std::vector<int64_t> want = lead;
  want.insert(want.end(), slice.begin(), slice.end());
  if (us != want)
    fail(op, ": updates ", dims_text(us), " must have shape ", dims_text(want),
         " (indices.shape[:-1] + data.shape[k:])");
  s.copy_data();
  const int64_t tuples = element_count(op, lead), per = element_count(op, slice);
  const size_t nl = lead.size();
  std::vector<int64_t> tuple(nl, 0), ipos(is.size(), 0), sp(slice.size(), 0);
  for (int64_t t = 0; t < tuples; ++t) {
    int64_t out_base = s.out->offset, upd_base = s.updates->offset;
    for (size_t d = 0; d < nl; ++d) {
      ipos[d] = tuple[d];
      upd_base += tuple[d] * s.updates->strides[d];
    }
    for (size_t j = 0; j < k; ++j) {
      ipos[nl] = static_cast<int64_t>(j);
      const int64_t v = s.index_at(view_offset(*s.indices, ipos), ds[j], ipos, j);
      out_base += v * s.out->strides[j];
    }
    std::fill(sp.begin(), sp.end(), 0);
    for (int64_t e = 0; e < per; ++e) {
      int64_t o = out_base, u = upd_base;
      for (size_t d = 0; d < sp.size(); ++d) {
        o += sp[d] * s.out->strides[k + d];
        u += sp[d] * s.updates->strides[nl + d];
      }
      s.apply(o, u);
      next_index(&sp, slice);
    }
    next_index(&tuple, lead);
  }
}

}  // namespace ferrite
