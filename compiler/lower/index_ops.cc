// Indexing: Gather and GatherElements load through a checked index (CheckIndex), so an
// out-of-range index is a run-time error naming the node, never an out-of-bounds read.
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
  return {make_pointwise_box(data->dtype, size, fn, c.origin())};
}

std::vector<TensorBoxPtr> lower_gather_elements(LowerCtx& c) {
  const TensorBoxPtr &data = c.input(0), &ind = c.input(1);
  if (dtype_is_float(ind->dtype) || ind->dtype == DType::Bool) c.error("indices must be integers");
  const size_t r = data->size.size();
  if (ind->size.size() != r) c.error("indices rank differs from data rank");
  int axis = c.axis(c.node.attr_int("axis", 0), r);
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

}  // namespace

void register_index_ops(LoweringTable& t) {
  t.add("Gather", lower_gather);
  t.add("GatherElements", lower_gather_elements);
}

}  // namespace ferrite
