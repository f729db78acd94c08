#include "runtime/kernels/reference/segment_reduce.h"

#include <cstring>
#include <vector>

#include "compiler/plan/error.h"
#include "compiler/plan/externs/segment_reduce_call.h"
#include "compiler/plan/scalar_ops.h"
#include "runtime/kernels/reference/operand_checks.h"
#include "runtime/kernels/reference/post_ops_apply.h"

namespace ferrite {
namespace {

constexpr const char* kOp = "SegmentReduce";

void check_index(const TensorRef& r, const ExternBuffer& buf, const char* what, int64_t edges) {
  check_view(kOp, what, r, buf);
  if (buf.dtype != DType::I32 && buf.dtype != DType::I64)
    fail(kOp, ": ", what, " must be int32 or int64, got ", dtype_name(buf.dtype));
  if (r.shape.size() != 1) fail(kOp, ": ", what, " must be 1-D, got ", dims_text(r.shape));
  if (r.shape[0] != edges) fail(kOp, ": ", what, " has ", r.shape[0], " edges, src has ", edges);
}

}  // namespace

SegmentOperands parse_segment_reduce(const ExternCall& call, const ExternBuffer* inputs,
                                     const ExternBuffer* outputs) {
  SegmentOperands s;
  const SegmentReduceCall attrs = decode_segment_reduce_call(call);
  const bool weighted = attrs.weighted;
  s.rows = attrs.rows;
  s.kind = attrs.reduction;
  const size_t own = 3 + (weighted ? 1 : 0), given = op_input_count(call);
  if ((given != own && given != own + 1) || call.outputs.size() != 1)
    fail(kOp, ": expected ", own, " or ", own + 1, " inputs (before post-op operands) and 1 ",
         "output, got ", given, " and ", call.outputs.size());
  s.x = &call.inputs[0];
  s.x_buf = inputs[0];
  s.out = &call.outputs[0];
  s.out_buf = outputs[0];
  check_view(kOp, "x", *s.x, s.x_buf);
  check_view(kOp, "out", *s.out, s.out_buf);
  const DType t = s.x_buf.dtype;
  if (dtype_size(t) == 0 || (t == DType::U64 && s.kind != ReduceKind::Sum))
    fail(kOp, ": dtype ", dtype_name(t), " unsupported", t == DType::U64 ? " for max / min" : "");
  if (s.x->shape.size() != 2) fail(kOp, ": x must be 2-D, got ", dims_text(s.x->shape));
  s.nodes = s.x->shape[0];
  s.features = s.x->shape[1];
  s.src = &call.inputs[1];
  s.src_buf = inputs[1];
  s.dst = &call.inputs[2];
  s.dst_buf = inputs[2];
  s.edges = s.src->shape.size() == 1 ? s.src->shape[0] : 0;
  check_index(*s.src, s.src_buf, "src", s.edges);
  check_index(*s.dst, s.dst_buf, "dst", s.edges);
  if (weighted) {
    s.weight = &call.inputs[3];
    s.weight_buf = inputs[3];
    check_view(kOp, "weight", *s.weight, s.weight_buf);
    if (s.weight->shape != std::vector<int64_t>{s.edges})
      fail(kOp, ": weight must have shape [", s.edges, "], got ", dims_text(s.weight->shape));
  }
  const std::vector<int64_t> out_shape{s.rows, s.features};
  if (given == own + 1) {
    s.data = &call.inputs[own];
    s.data_buf = inputs[own];
    check_view(kOp, "data", *s.data, s.data_buf);
    if (s.data->shape != out_shape)
      fail(kOp, ": data must have shape ", dims_text(out_shape), ", got ",
           dims_text(s.data->shape));
  }
  if (s.out->shape != out_shape)
    fail(kOp, ": out must have shape ", dims_text(out_shape), ", got ", dims_text(s.out->shape));
  for (const ExternBuffer* b : {&s.weight_buf, &s.data_buf, &s.out_buf}) {
    if (b->data && b->dtype != t)
      fail(kOp, ": x, weight, data and out must share one dtype, got ", dtype_name(t), " and ",
           dtype_name(b->dtype));
  }
  return s;
}

int64_t segment_index(const TensorRef& ref, const ExternBuffer& buf, int64_t e, int64_t n,
                      const char* what) {
  const int64_t k = load_element(buf.dtype, buf.data, ref.offset + e * ref.strides[0]).i64;
  if (k < -n || k >= n)
    fail(kOp, ": ", what, "[", e, "] = ", k, " is out of range [", -n, ", ", n, ")");
  return k < 0 ? k + n : k;
}

void reference_segment_reduce(const ExternCall& call, const ExternBuffer* inputs,
                              const ExternBuffer* outputs) {
  const SegmentOperands s = parse_segment_reduce(call, inputs, outputs);
  check_post_ops(call, inputs, outputs);
  const DType t = s.x_buf.dtype;
  const ScalarType ct = compute_type(t);
  auto at = [](const TensorRef& r, int64_t i, int64_t j) {
    return r.offset + i * r.strides[0] + j * r.strides[1];
  };
  for (int64_t r = 0; r < s.rows; ++r) {
    for (int64_t f = 0; f < s.features; ++f) {
      const Scalar v =
          s.data ? load_element(t, s.data_buf.data, at(*s.data, r, f)) : make_const(ct, 0, 0);
      store_element(t, s.out_buf.data, at(*s.out, r, f), ct, v);
    }
  }
  std::vector<uint8_t> rounded(8);  // one product, rounded to the element type
  for (int64_t e = 0; e < s.edges; ++e) {
    const int64_t i = segment_index(*s.src, s.src_buf, e, s.nodes, "src");
    const int64_t r = segment_index(*s.dst, s.dst_buf, e, s.rows, "dst");
    for (int64_t f = 0; f < s.features; ++f) {
      Scalar m = load_element(t, s.x_buf.data, at(*s.x, i, f));
      if (s.weight) {
        const Scalar w =
            load_element(t, s.weight_buf.data, s.weight->offset + e * s.weight->strides[0]);
        store_element(t, rounded.data(), 0, ct, eval_binary(Op::Mul, ct, m, w));
        m = load_element(t, rounded.data(), 0);
      }
      const int64_t o = at(*s.out, r, f);
      const Scalar acc = load_element(t, s.out_buf.data, o);
      store_element(t, s.out_buf.data, o, ct, reduce_step(s.kind, ct, acc, m, 0, nullptr));
    }
  }
  apply_post_ops(call, inputs, outputs);
}

}  // namespace ferrite
