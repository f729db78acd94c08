// Indexing: Gather, GatherElements, GatherND and ReverseSequence load through a checked
// index (CheckIndex), so an out-of-range index is a run-time error naming the node, never
// an out-of-bounds read.
#include <algorithm>

#include "compiler/lower/lowering.h"

namespace ferrite {
namespace {

std::vector<TensorBoxPtr> lower_gather(LowerCtx& c) {
  const TensorBoxPtr &data = c.input(0), &ind = c.input(1);
  if (dtype_is_float(ind->dtype) || ind->dtype == DType::Bool) c.error("indices must be integers");
  const size_t r = data->size.size(), q = ind->size.size();
  if (r == 0) c.error("data must have rank >= 1");
  int axis = c.axis(c.node.attr_int("axis", 0), r);
  std::vector<int64_t> size(data->size.begin(), data->size.begin() + axis);
  size.insert(size.end(), ind->size.begin(), ind->size.end());
  size.insert(size.end(), data->size.begin() + axis + 1, data->size.end());
  int64_t n = data->size[axis];
  std::string msg = str_cat(c.origin(), ": indices (axis ", axis, ")");
  Loader fn = [data, ind, axis, q, r, n, msg](KernelBuilder& b, const std::vector<Index>& idx) {
    std::vector<Index> iidx(idx.begin() + axis, idx.begin() + axis + q);
    V k = b.check_index(ind->load(b, iidx), n, msg);
    std::vector<Index> didx(idx.begin(), idx.begin() + axis);
    didx.push_back(ix_value(k.id));
    for (size_t d = axis + 1; d < r; ++d) didx.push_back(idx[d - 1 + q]);
    return data->load(b, didx);
  };
  TensorBoxPtr out = make_pointwise_box(data->dtype, size, fn, c.origin());
  // Over the symbols when the gathered dim is static (its size checks the indices).
  if (data->sym && ind->sym && sym_all_const({(*data->sym)[static_cast<size_t>(axis)]})) {
    const std::vector<Index>& ds = *data->sym;
    std::vector<Index> sym(ds.begin(), ds.begin() + axis);
    sym.insert(sym.end(), ind->sym->begin(), ind->sym->end());
    sym.insert(sym.end(), ds.begin() + axis + 1, ds.end());
    set_box_sym(out, std::move(sym));
  }
  return {out};
}

std::vector<TensorBoxPtr> lower_gather_elements(LowerCtx& c) {
  const TensorBoxPtr &data = c.input(0), &ind = c.input(1);
  if (dtype_is_float(ind->dtype) || ind->dtype == DType::Bool) c.error("indices must be integers");
  const size_t r = data->size.size();
  if (ind->size.size() != r) c.error("indices rank differs from data rank");
  int axis = c.axis(c.node.attr_int("axis", 0), r);
  // Off the axis, an output position reads data at the same position.
  for (size_t d = 0; d < r; ++d) {
    if (static_cast<int>(d) != axis && ind->size[d] > data->size[d])
      c.error("indices dim ", d, " (", ind->size[d], ") exceeds data's (", data->size[d], ")");
  }
  int64_t n = data->size[axis];
  std::string msg = str_cat(c.origin(), ": indices (axis ", axis, ")");
  Loader fn = [data, ind, axis, n, msg](KernelBuilder& b, const std::vector<Index>& idx) {
    V k = b.check_index(ind->load(b, idx), n, msg);
    std::vector<Index> didx = idx;
    didx[axis] = ix_value(k.id);
    return data->load(b, didx);
  };
  return {make_pointwise_box(data->dtype, ind->size, fn, c.origin())};
}

// out[B, I, S] = data[B, indices[B, I, 0], ..., indices[B, I, m-1], S]: B the batch_dims
// leading dims shared by data and indices, m = indices.shape[-1], S data's trailing dims.
std::vector<TensorBoxPtr> lower_gather_nd(LowerCtx& c) {
  const TensorBoxPtr &data = c.input(0), &ind = c.input(1);
  if (ind->dtype != DType::I64 && ind->dtype != DType::I32)
    c.error("indices must be int32 or int64, got ", dtype_name(ind->dtype));
  const size_t r = data->size.size(), q = ind->size.size();
  if (r == 0 || q == 0) c.error("data and indices must have rank >= 1");
  const int64_t batch = c.node.attr_int("batch_dims", 0);
  if (batch < 0 || batch >= static_cast<int64_t>(std::min(r, q)))
    c.error("batch_dims ", batch, " must be in [0, min(rank(data), rank(indices)))");
  const size_t b = static_cast<size_t>(batch);
  for (size_t d = 0; d < b; ++d) {
    if (data->size[d] != ind->size[d])
      c.error("batch dim ", d, " differs: data ", data->size[d], ", indices ", ind->size[d]);
  }
  const int64_t m = ind->size.back();
  if (m < 1 || m > static_cast<int64_t>(r - b))
    c.error("indices' last dim ", m, " must be in [1, ", r - b, "] (rank(data) - batch_dims)");
  const size_t mm = static_cast<size_t>(m);
  std::vector<int64_t> size(ind->size.begin(), ind->size.end() - 1);
  size.insert(size.end(), data->size.begin() + b + mm, data->size.end());
  std::vector<std::string> msgs;
  for (size_t j = 0; j < mm; ++j)
    msgs.push_back(str_cat(c.origin(), ": indices (data dim ", b + j, ")"));
  Loader fn = [data, ind, b, q, r, mm, msgs](KernelBuilder& kb, const std::vector<Index>& idx) {
    std::vector<Index> iidx(idx.begin(), idx.begin() + (q - 1));
    iidx.push_back(ix_const(0));
    std::vector<Index> didx(idx.begin(), idx.begin() + b);
    for (size_t j = 0; j < mm; ++j) {
      iidx.back() = ix_const(static_cast<int64_t>(j));
      V k = kb.check_index(ind->load(kb, iidx), data->size[b + j], msgs[j]);
      didx.push_back(ix_value(k.id));
    }
    for (size_t d = b + mm; d < r; ++d) didx.push_back(idx[q - 1 + d - b - mm]);
    return data->load(kb, didx);
  };
  return {make_pointwise_box(data->dtype, size, fn, c.origin())};
}

// ReverseSequence: out[t, b] = x[len[b] - 1 - t, b] for t < len[b], else x[t, b] (time and
// batch on axes 0 and 1, in either order); a length beyond the time steps fails the check.
std::vector<TensorBoxPtr> lower_reverse_sequence(LowerCtx& c) {
  const TensorBoxPtr &x = c.input(0), &lens = c.input(1);
  if (lens->dtype != DType::I64 && lens->dtype != DType::I32)
    c.error("sequence_lens must be int64, got ", dtype_name(lens->dtype));
  const size_t r = x->size.size();
  if (r < 2) c.error("input must have rank >= 2");
  const int bax = c.axis(c.node.attr_int("batch_axis", 1), r);
  const int tax = c.axis(c.node.attr_int("time_axis", 0), r);
  if (bax + tax != 1) c.error("batch_axis and time_axis must be 0 and 1, in either order");
  if (lens->size != std::vector<int64_t>{x->size[bax]})
    c.error("sequence_lens must have shape [", x->size[bax], "] (the batch size)");
  const int64_t steps = x->size[tax];
  const std::string msg = str_cat(c.origin(), ": sequence_lens (reversed time index)");
  Loader fn = [x, lens, bax, tax, steps, msg](KernelBuilder& b, const std::vector<Index>& idx) {
    V len = lens->load(b, {idx[bax]});
    V t = b.index_value(idx[tax]);
    V rev = b.binary(Op::Sub, b.binary(Op::Sub, len, b.constant(ScalarType::I64, 1)), t);
    V k = b.check_index(b.where(b.binary(Op::Lt, t, len), rev, t), steps, msg);
    std::vector<Index> didx = idx;
    didx[tax] = ix_value(k.id);
    return x->load(b, didx);
  };
  return {make_pointwise_box(x->dtype, x->size, fn, c.origin())};
}

}  // namespace

void register_index_ops(LoweringTable& t) {
  t.add("Gather", lower_gather);
  t.add("GatherElements", lower_gather_elements);
  t.add("GatherND", lower_gather_nd);
  t.add("ReverseSequence", lower_reverse_sequence);
}

}  // namespace ferrite
