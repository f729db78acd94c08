#include "compiler/loopir/ir.h"

#include "compiler/loopir/simplify.h"
#include "compiler/plan/error.h"

namespace ferrite {

V StorageBox::load(KernelBuilder& b, const std::vector<Index>& index) const {
  if (buffer) return b.load(buffer, linear_index(index, contiguous_strides(size)));
  if (!def || def->is_reduction) fail("internal: loading an unrealized reduction");
  return b.walk_once(def, index, [&] { return def->fn(b, index); });
}

int64_t TensorBox::elements() const {
  int64_t n = 1;
  for (int64_t d : size) n *= d;
  return n;
}

V TensorBox::load(KernelBuilder& b, const std::vector<Index>& index) const {
  if (storage->realized() && strided) {
    return b.load(storage->buffer, linear_index(index, strided->strides, strided->offset));
  }
  return storage->load(b, reindex ? (*reindex)(index) : index);
}

Loader TensorBox::loader() const {
  // Captures a copy, so the loader outlives later rebinding of this box's fields.
  TensorBox self = *this;
  return [self](KernelBuilder& b, const std::vector<Index>& index) { return self.load(b, index); };
}

namespace {

TensorBoxPtr fresh_box(std::shared_ptr<StorageBox> s) {
  auto t = std::make_shared<TensorBox>();
  t->dtype = s->dtype;
  t->size = s->size;
  t->storage = std::move(s);
  t->strided = StridedView{contiguous_strides(t->size), 0};
  return t;
}

}  // namespace

TensorBoxPtr make_pointwise_box(DType dtype, std::vector<int64_t> size, Loader fn,
                                const std::string& origin) {
  auto s = std::make_shared<StorageBox>();
  s->dtype = dtype;
  s->size = size;
  s->def = std::make_shared<ComputedDef>();
  s->def->ranges = std::move(size);
  s->def->fn = std::move(fn);
  s->def->origin = origin;
  return fresh_box(std::move(s));
}

TensorBoxPtr make_reduction_box(DType dtype, std::shared_ptr<ComputedDef> def) {
  auto s = std::make_shared<StorageBox>();
  s->dtype = dtype;
  s->size = def->ranges;
  s->def = std::move(def);
  return fresh_box(std::move(s));
}

TensorBoxPtr make_buffer_box(Buffer* buf) {
  auto s = std::make_shared<StorageBox>();
  s->dtype = buf->dtype;
  s->size = buf->size;
  s->buffer = buf;
  return fresh_box(std::move(s));
}

TensorBoxPtr make_view(const TensorBoxPtr& base, std::vector<int64_t> size, Reindex reindex) {
  auto t = std::make_shared<TensorBox>();
  t->dtype = base->dtype;
  t->size = std::move(size);
  t->storage = base->storage;
  t->view_depth = base->view_depth + 1;
  std::shared_ptr<const Reindex> base_re = base->reindex;
  if (base_re) {
    t->reindex = std::make_shared<const Reindex>(
        [base_re, reindex](const std::vector<Index>& i) { return (*base_re)(reindex(i)); });
  } else {
    t->reindex = std::make_shared<const Reindex>(reindex);
  }
  if (base->strided) {
    std::vector<Index> vars;
    for (size_t d = 0; d < t->size.size(); ++d) vars.push_back(ix_var(static_cast<int>(d)));
    Index lin = linear_index(reindex(vars), base->strided->strides, base->strided->offset);
    Index simple = IndexSimplifier(t->size).simplify(lin);
    AffineIndex aff;
    if (as_affine(*simple, static_cast<int>(t->size.size()), &aff)) {
      t->strided = StridedView{aff.coeff, aff.offset};
    }
  }
  return t;
}

}  // namespace ferrite
