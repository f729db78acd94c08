#include "runtime/kernels/portable/scatter_f32.h"

#include <cmath>
#include <cstring>
#include <vector>

#include "compiler/plan/error.h"
#include "compiler/plan/externs/scatter_call.h"
#include "compiler/plan/ops.h"
#include "runtime/kernels/reference/operand_checks.h"
#include "runtime/kernels/reference/scatter.h"
#include "runtime/kernels/reference/strided_walk.h"

namespace ferrite {
namespace {

// reduce(acc, x) as the reference's reduce_step computes it on float32.
template <ReduceKind K>
inline float reduce(float acc, float x) {
  if constexpr (K == ReduceKind::Sum) return acc + x;
  if constexpr (K == ReduceKind::Prod) return acc * x;
  if constexpr (K == ReduceKind::Max)
    return std::isnan(acc) || std::isnan(x) ? acc + x : (acc > x ? acc : x);
  if constexpr (K == ReduceKind::Min)
    return std::isnan(acc) || std::isnan(x) ? acc + x : (acc < x ? acc : x);
}

struct Walk {
  const float* upd;  // the updates' and the indices' buffers, read through their views
  const void* idx;
  const TensorRef* upd_ref;
  const TensorRef* idx_ref;
  bool idx64;
  float* out;                   // dense, data's shape
  std::vector<int64_t> us, ds;  // updates' and data's shapes
  size_t axis;
};

template <ReduceKind K, bool kReduce>
void apply_all(const Walk& w) {
  const size_t r = w.us.size();
  std::vector<int64_t> ostride(r, 1), p(r, 0);
  for (size_t d = r - 1; d-- > 0;) ostride[d] = ostride[d + 1] * w.ds[d + 1];
  const int64_t n = w.ds[w.axis], last = w.us[r - 1];
  const int64_t rows = element_count("ScatterElements", w.us) / std::max<int64_t>(last, 1);
  const int64_t u_step = w.upd_ref->strides[r - 1], i_step = w.idx_ref->strides[r - 1];
  for (int64_t row = 0; row < rows && last > 0; ++row) {
    // The offsets of p with p[r - 1] = 0 (and, in out, p[axis] = 0).
    int64_t base = 0, u = w.upd_ref->offset, i = w.idx_ref->offset;
    for (size_t d = 0; d + 1 < r; ++d) {
      if (d != w.axis) base += p[d] * ostride[d];
      u += p[d] * w.upd_ref->strides[d];
      i += p[d] * w.idx_ref->strides[d];
    }
    for (int64_t j = 0; j < last; ++j, u += u_step, i += i_step) {
      int64_t k =
          w.idx64 ? static_cast<const int64_t*>(w.idx)[i] : static_cast<const int32_t*>(w.idx)[i];
      if (k < -n || k >= n) {
        std::vector<int64_t> pos = p;
        pos[r - 1] = j;
        fail("ScatterElements: index ", k, " out of range [", -n, ", ", n, ") for data dim ",
             w.axis, " at indices position ", dims_text(pos));
      }
      if (k < 0) k += n;
      int64_t o = base + k * ostride[w.axis];
      if (w.axis != r - 1) o += j;
      if constexpr (kReduce) {
        w.out[o] = reduce<K>(w.out[o], w.upd[u]);
      } else {
        w.out[o] = w.upd[u];
      }
    }
    for (size_t d = r - 1; d-- > 0;) {  // the next row of updates
      if (++p[d] < w.us[d]) break;
      p[d] = 0;
    }
  }
}

}  // namespace

void portable_scatter_elements(const ExternCall& call, const ExternBuffer* inputs,
                               const ExternBuffer* outputs) {
  const bool fits =
      call.inputs.size() == 3 && call.outputs.size() == 1 && inputs[0].dtype == DType::F32 &&
      inputs[2].dtype == DType::F32 && outputs[0].dtype == DType::F32 &&
      (inputs[1].dtype == DType::I32 || inputs[1].dtype == DType::I64) &&
      call.inputs[0].shape == call.outputs[0].shape && !call.inputs[0].shape.empty() &&
      call.inputs[1].shape == call.inputs[2].shape &&
      call.inputs[1].shape.size() == call.inputs[0].shape.size() && is_contiguous(call.outputs[0]);
  if (!fits) {
    reference_scatter_elements(call, inputs, outputs);
    return;
  }
  const char* op = "ScatterElements";
  const char* names[] = {"data", "indices", "updates"};
  for (size_t i = 0; i < 3; ++i) check_view(op, names[i], call.inputs[i], inputs[i]);
  check_view(op, "out", call.outputs[0], outputs[0]);
  const ScatterCall attrs = decode_scatter_call(call, call.inputs[0].shape.size());
  Walk w;
  w.us = call.inputs[2].shape;
  w.ds = call.inputs[0].shape;
  w.axis = static_cast<size_t>(attrs.axis);
  for (size_t d = 0; d < w.ds.size(); ++d)
    if (d != w.axis && w.us[d] > w.ds[d])
      fail(op, ": updates ", dims_text(w.us), " exceed data ", dims_text(w.ds), " in dim ", d);
  w.out = static_cast<float*>(outputs[0].data) + call.outputs[0].offset;
  w.upd = static_cast<const float*>(inputs[2].data);
  w.upd_ref = &call.inputs[2];
  w.idx = inputs[1].data;
  w.idx_ref = &call.inputs[1];
  w.idx64 = inputs[1].dtype == DType::I64;
  // out = data (a broadcast constant, say, in any view).
  const TensorRef& dr = call.inputs[0];
  const auto* data = static_cast<const float*>(inputs[0].data);
  const int64_t count = element_count(op, w.ds);
  if (count > 0 && is_contiguous(dr)) {
    std::memmove(w.out, data + dr.offset, static_cast<size_t>(count) * sizeof(float));
  } else if (count > 0) {
    std::vector<int64_t> p(w.ds.size(), 0);
    for (int64_t e = 0; e < count; ++e, next_index(&p, w.ds)) w.out[e] = data[view_offset(dr, p)];
  }
  if (!attrs.reduction) return apply_all<ReduceKind::Sum, false>(w);
  switch (*attrs.reduction) {
    case ReduceKind::Sum:
      return apply_all<ReduceKind::Sum, true>(w);
    case ReduceKind::Prod:
      return apply_all<ReduceKind::Prod, true>(w);
    case ReduceKind::Max:
      return apply_all<ReduceKind::Max, true>(w);
    case ReduceKind::Min:
      return apply_all<ReduceKind::Min, true>(w);
    default:
      fail(op, ": invalid reduction ", static_cast<int>(*attrs.reduction));  // decode refused it
  }
}

}  // namespace ferrite
