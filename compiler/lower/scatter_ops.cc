// Scatters become extern calls (their meaning: runtime/kernels/reference/scatter.h): a
// fresh copy of data with the updates applied one by one, in order, which no pointwise or
// reduction kernel expresses. ScatterElements, the deprecated Scatter (ScatterElements
// without reduction), ScatterND and MaxUnpool; shapes are checked here so that errors name
// the node, indices at run time by the extern.
#include "compiler/loopir/checked_int.h"
#include "compiler/lower/lowering.h"
#include "compiler/plan/externs/scatter_call.h"

namespace ferrite {
namespace {

// ONNX's reduction attribute ("none": no reduction).
std::optional<ReduceKind> reduction_of(const LowerCtx& c) {
  const std::string r = c.node.attr_string("reduction", "none");
  if (r == "none") return std::nullopt;
  if (r == "add") return ReduceKind::Sum;
  if (r == "mul") return ReduceKind::Prod;
  if (r == "max") return ReduceKind::Max;
  if (r == "min") return ReduceKind::Min;
  c.error("unknown reduction '", r, "' (none, add, mul, max or min)");
}

std::string shape_text(const TensorBoxPtr& t) {
  return TensorType{t->dtype, t->size, {}, true}.to_string();
}

// The checks both scatters share: dtypes of data, indices and updates.
void check_operands(const LowerCtx& c) {
  const TensorBoxPtr &data = c.input(0), &ind = c.input(1), &upd = c.input(2);
  if (dtype_size(data->dtype) == 0) c.unsupported("data of type ", dtype_name(data->dtype));
  if (ind->dtype != DType::I32 && ind->dtype != DType::I64)
    c.error("indices must be int32 or int64, got ", dtype_name(ind->dtype));
  if (upd->dtype != data->dtype)
    c.error("updates ", shape_text(upd), " must have data's type ", dtype_name(data->dtype));
}

TensorBoxPtr scatter_extern(LowerCtx& c, const ScatterCall& call, const TensorBoxPtr& data,
                            const TensorBoxPtr& ind, const TensorBoxPtr& upd) {
  ExternNode e;
  encode_extern(call, &e);
  e.origin = c.origin();
  e.inputs.push_back(c.gl.extern_operand(data));
  e.inputs.push_back(c.gl.extern_operand(ind));
  e.inputs.push_back(c.gl.extern_operand(upd));
  Buffer* out = c.gl.new_buffer("", data->dtype, data->size, BufferOrigin::Extern);
  e.outputs.push_back(out);
  c.gl.add_extern(std::move(e));
  return make_buffer_box(out);
}

// ScatterElements, and Scatter (opset 9/10; no reduction attribute).
std::vector<TensorBoxPtr> lower_scatter_elements(LowerCtx& c) {
  check_operands(c);
  const TensorBoxPtr &data = c.input(0), &ind = c.input(1), &upd = c.input(2);
  const size_t r = data->size.size();
  if (r == 0) c.error("data must have rank >= 1");
  const int axis = c.axis(c.node.attr_int("axis", 0), r);
  if (ind->size != upd->size || ind->size.size() != r)
    c.error("indices ", shape_text(ind), " and updates ", shape_text(upd),
            " must have one shape of data's rank ", r);
  for (size_t d = 0; d < r; ++d) {
    if (static_cast<int>(d) != axis && ind->size[d] > data->size[d])
      c.error("indices ", shape_text(ind), " exceed data ", shape_text(data), " in dim ", d);
  }
  return {scatter_extern(c, ScatterCall{false, axis, reduction_of(c)}, data, ind, upd)};
}

std::vector<TensorBoxPtr> lower_scatter_nd(LowerCtx& c) {
  check_operands(c);
  const TensorBoxPtr &data = c.input(0), &ind = c.input(1), &upd = c.input(2);
  if (ind->size.empty()) c.error("indices must have rank >= 1");
  const int64_t k = ind->size.back();
  if (k > static_cast<int64_t>(data->size.size()))
    c.error("indices ", shape_text(ind), ": the last dim exceeds data's rank ", data->size.size());
  std::vector<int64_t> want(ind->size.begin(), ind->size.end() - 1);
  want.insert(want.end(), data->size.begin() + k, data->size.end());
  if (upd->size != want)
    c.error("updates ", shape_text(upd), " must have shape ",
            TensorType{upd->dtype, want, {}, true}.to_string(),
            " (indices.shape[:-1] + data.shape[k:])");
  return {scatter_extern(c, ScatterCall{true, 0, reduction_of(c)}, data, ind, upd)};
}

// MaxUnpool's Indices, flattened and checked: each must be a position in [0, total) (a
// scatter would take a negative one as counted from the end). A negative index i is
// checked as i - total, so that the CheckIndex fails on it too.
TensorBoxPtr checked_positions(const LowerCtx& c, const TensorBoxPtr& ind, int64_t total) {
  const std::string msg = str_cat(c.origin(), ": Indices must be in [0, ", total,
                                  ") (a negative index i shows as i - ", total, ")");
  TensorBoxPtr flat = reshape_view(ind, {ind->elements()});
  Loader fn = [flat, total, msg](KernelBuilder& b, const std::vector<Index>& idx) {
    V i = flat->load(b, idx);
    V zero = b.constant_i64(0);
    V shifted = b.binary(Op::Sub, i, b.constant_i64(total));
    return b.check_index(b.where(b.binary(Op::Lt, i, zero), shifted, i), total, msg);
  };
  return make_pointwise_box(DType::I64, flat->size, fn, c.origin());
}

// MaxUnpool is a scatter too: zeros with X's elements put at their Indices, which (as
// MaxPool's Indices output) are flat positions in the whole N x C x spatial tensor of the
// inferred shape, (in - 1) * stride + kernel - pad_begin - pad_end per spatial dim: a 1-D
// ScatterElements. With an output_shape input, that result fills the leading corner of a
// zero tensor of output_shape, as ONNX's reference implementation and its conformance
// test (test_maxunpool_export_with_output_shape) define it.
std::vector<TensorBoxPtr> lower_max_unpool(LowerCtx& c) {
  const TensorBoxPtr &x = c.input(0), &ind = c.input(1);
  if (ind->dtype != DType::I64) c.error("indices must be int64, got ", dtype_name(ind->dtype));
  const size_t r = x->size.size();
  if (r < 3) c.error("X must have rank >= 3");
  const size_t k = r - 2;
  if (ind->size != x->size)
    c.error("indices ", shape_text(ind), " must have X's shape ", shape_text(x));
  const std::vector<int64_t> kernel = c.node.attr_ints("kernel_shape");
  const std::vector<int64_t> strides = c.node.attr_ints("strides", std::vector<int64_t>(k, 1));
  const std::vector<int64_t> pads = c.node.attr_ints("pads", std::vector<int64_t>(2 * k, 0));
  if (kernel.size() != k || strides.size() != k || pads.size() != 2 * k)
    c.error("kernel_shape, strides or pads have the wrong length");
  for (size_t d = 0; d < k; ++d) {
    if (kernel[d] < 1 || strides[d] < 1 || pads[d] < 0 || pads[k + d] < 0)
      c.error("kernel_shape and strides must be >= 1 and pads >= 0");
  }
  std::vector<int64_t> inferred = {x->size[0], x->size[1]};
  for (size_t d = 0; d < k; ++d) {
    const char* what = "the inferred output dim";
    const int64_t span = checked_add(
        checked_mul(std::max<int64_t>(x->size[2 + d] - 1, 0), strides[d], what), kernel[d], what);
    inferred.push_back(checked_sub(checked_sub(span, pads[d], what), pads[k + d], what));
  }
  const int64_t total = checked_product(inferred, "the inferred output shape");
  const DType dt = x->dtype;
  TensorBoxPtr zeros = make_pointwise_box(
      dt, {total},
      [dt](KernelBuilder& b, const std::vector<Index>&) { return b.constant(compute_type(dt), 0); },
      c.origin());
  const int64_t n = x->elements();
  TensorBoxPtr y =
      reshape_view(scatter_extern(c, ScatterCall{}, zeros, checked_positions(c, ind, total),
                                  reshape_view(x, {n})),
                   inferred);
  if (!c.has(2)) return {y};
  const std::vector<int64_t> out_size = c.const_ints(2);
  if (out_size.size() != r) c.error("output_shape must have ", r, " entries");
  for (size_t d = 0; d < r; ++d) {
    if (out_size[d] < inferred[d])
      c.error("output_shape ", TensorType{dt, out_size, {}, true}.to_string(),
              " is smaller than the inferred shape ",
              TensorType{dt, inferred, {}, true}.to_string());
  }
  if (out_size == inferred) return {y};
  Loader corner = [y, inferred](KernelBuilder& b, const std::vector<Index>& idx) {
    V inside = b.constant(ScalarType::Bool, 1);
    for (size_t d = 0; d < idx.size(); ++d) {
      V lt = b.binary(Op::Lt, b.index_value(idx[d]), b.constant_i64(inferred[d]));
      inside = b.binary(Op::And, inside, lt);
    }
    V v;
    {
      MaskScope scope(b, inside);
      v = y->load(b, idx);
    }
    return b.where(inside, v, b.constant(v.type, 0));
  };
  return {make_pointwise_box(dt, out_size, corner, c.origin())};
}

// TensorScatter (24): a KV cache [batch, ..., max_seq, ...] with `update` written along
// `axis` at each batch entry's write index (linear: it must fit; circular: wrapping modulo
// max_seq). Pointwise over the cache: an element reads the update when its position, less
// the write index, falls inside the update, else the past cache.
std::vector<TensorBoxPtr> lower_tensor_scatter(LowerCtx& c) {
  const TensorBoxPtr &past = c.input(0), &update = c.input(1);
  const size_t r = past->size.size();
  if (r < 2) c.error("past_cache must have rank >= 2");
  const int axis = c.axis(c.node.attr_int("axis", -2), r);
  if (axis == 0) c.error("axis must not be the batch axis");
  const std::string mode = c.node.attr_string("mode", "linear");
  if (mode != "linear" && mode != "circular") c.error("mode '", mode, "'");
  if (update->dtype != past->dtype || update->size.size() != r) {
    c.error("update must have past_cache's type and rank");
  }
  for (size_t d = 0; d < r; ++d) {
    const bool fits = static_cast<int>(d) == axis ? update->size[d] <= past->size[d]
                                                  : update->size[d] == past->size[d];
    if (!fits) {
      c.error("update ", TensorType{update->dtype, update->size, {}, true}.to_string(),
              " does not fit past_cache ",
              TensorType{past->dtype, past->size, {}, true}.to_string());
    }
  }
  const TensorBoxPtr write = c.has(2) ? c.input(2) : nullptr;
  if (write && (write->dtype != DType::I64 || write->size != std::vector<int64_t>{past->size[0]})) {
    c.error("write_indices must be int64 [", past->size[0], "]");
  }
  const int64_t max_seq = past->size[static_cast<size_t>(axis)];
  const int64_t seq = update->size[static_cast<size_t>(axis)];
  const bool circular = mode == "circular";
  const std::string msg = c.origin() + ": a write index puts the update past the cache's end";
  Loader fn = [=](KernelBuilder& b, const std::vector<Index>& idx) {
    const size_t a = static_cast<size_t>(axis);
    Index start = ix_const(0);
    if (write) {
      V w = write->load(b, {idx[0]});
      if (!circular) {  // 0 <= w <= max_seq - seq, or the run fails
        const V bad = b.constant_i64(max_seq + 1);
        w = b.check_index(b.where(b.binary(Op::Lt, w, b.constant_i64(0)), bad, w),
                          max_seq - seq + 1, msg);
      }
      start = ix_value(w.id);
    }
    Index pos = ix_add(idx[a], ix_mul(start, -1));
    if (circular) pos = ix_mod(pos, std::max<int64_t>(1, max_seq));
    const V p = b.index_value(pos);
    const V inside = b.binary(Op::And, b.binary(Op::Ge, p, b.constant_i64(0)),
                              b.binary(Op::Lt, p, b.constant_i64(seq)));
    std::vector<Index> at = idx;
    at[a] = pos;
    V u;
    {
      MaskScope scope(b, inside);
      u = update->load(b, at);
    }
    return b.where(inside, u, past->load(b, idx));
  };
  return {make_pointwise_box(past->dtype, past->size, fn, c.origin())};
}

}  // namespace

void register_scatter_ops(LoweringTable& t) {
  t.add("TensorScatter", lower_tensor_scatter);
  t.add("ScatterElements", lower_scatter_elements);
  t.add("Scatter", lower_scatter_elements);
  t.add("ScatterND", lower_scatter_nd);
  t.add("MaxUnpool", lower_max_unpool);
}

}  // namespace ferrite
