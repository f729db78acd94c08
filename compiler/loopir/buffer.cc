#include "compiler/loopir/buffer.h"

#include "compiler/loopir/checked_int.h"
#include "compiler/loopir/shape_env.h"
#include "compiler/plan/error.h"

namespace ferrite {

int64_t Buffer::elements() const {
  int64_t n = 1;
  for (int64_t d : size) n *= d;
  return n;
}

Buffer* Buffer::storage_owner(int64_t* offset) const {
  const Buffer* b = this;
  *offset = 0;
  while (b->alias_of) {
    *offset += b->alias_offset;
    b = b->alias_of;
  }
  return const_cast<Buffer*>(b);
}

std::vector<int64_t> contiguous_strides(const std::vector<int64_t>& size) {
  std::vector<int64_t> s(size.size(), 1);
  for (int d = static_cast<int>(size.size()) - 2; d >= 0; --d)
    s[d] = checked_mul(s[d + 1], size[d + 1], "internal: a contiguous stride");
  return s;
}

Index linear_index(const std::vector<Index>& index, const std::vector<int64_t>& strides,
                   int64_t offset) {
  if (index.size() != strides.size()) {
    fail("internal: an index of rank ", index.size(), " into a layout of rank ", strides.size());
  }
  Index out = ix_const(offset);
  for (size_t d = 0; d < index.size(); ++d) out = ix_add(out, ix_mul(index[d], strides[d]));
  return out;
}

Index sym_linear_index(const std::vector<Index>& index, const std::vector<Index>& strides,
                       const Index& offset) {
  if (index.size() != strides.size()) {
    fail("internal: an index of rank ", index.size(), " into a layout of rank ", strides.size());
  }
  Index out = offset;
  for (size_t d = 0; d < index.size(); ++d) out = ix_add(out, sym_mul(index[d], strides[d]));
  return out;
}

Kernel build_kernel(Buffer* out, const std::string& name, std::vector<Buffer*>* arg_buffers,
                    std::optional<std::vector<Index>>* sym_ranges) {
  if (!out->def) fail("internal: buffer ", out->name, " has no definition");
  const ComputedDef& d = *out->def;
  std::vector<int64_t> ranges = d.ranges;
  int nr = 0;
  if (d.is_reduction) {
    ranges.insert(ranges.end(), d.reduction_ranges.begin(), d.reduction_ranges.end());
    nr = static_cast<int>(d.reduction_ranges.size());
  }
  KernelBuilder b(name, ranges, nr);
  if (out->sym) {
    if (!sym_ranges) fail("internal: a kernel over symbols built for ", out->name);
    if (out->alias_of) not_symbolic(d.origin, ": a kernel writing part of another buffer");
    std::vector<Index> sr = *out->sym;
    if (d.is_reduction) {
      if (!d.sym_reduction_ranges) not_symbolic(d.origin, ": a reduction of no symbolic ranges");
      sr.insert(sr.end(), d.sym_reduction_ranges->begin(), d.sym_reduction_ranges->end());
    }
    b.set_sym_ranges(sr);
    *sym_ranges = std::move(sr);
  } else if (sym_ranges) {
    sym_ranges->reset();
  }
  std::vector<Index> outer, red;
  for (size_t i = 0; i < d.ranges.size(); ++i) outer.push_back(ix_var(static_cast<int>(i)));
  for (int i = 0; i < nr; ++i) red.push_back(ix_var(static_cast<int>(d.ranges.size()) + i));
  V v;
  if (d.is_reduction) {
    v = b.reduce(d.reduce, d.rfn(b, outer, red));
    b.begin_post();
    if (d.post) v = d.post(b, v);
  } else {
    v = d.fn(b, outer);
  }
  b.store(out,
          out->sym ? sym_linear_index(outer, sym_contiguous_strides(*out->sym), ix_const(0))
                   : linear_index(outer, contiguous_strides(d.ranges)),
          v);
  Kernel k = b.finish();
  if (arg_buffers) *arg_buffers = b.arg_buffers();
  return k;
}

}  // namespace ferrite
