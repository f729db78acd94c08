#include "compiler/loopir/ir.h"

#include "compiler/loopir/checked_int.h"
#include "compiler/loopir/shape_env.h"
#include "compiler/loopir/simplify.h"
#include "compiler/plan/error.h"

namespace ferrite {
namespace {

std::string shape_string(const std::vector<int64_t>& size) {
  std::string s = "[";
  for (size_t i = 0; i < size.size(); ++i) s += str_cat(i ? ", " : "", size[i]);
  return s + "]";
}

// Every load and view remap checks its index's rank: a lowering that builds an index of
// the wrong rank (an input whose rank it did not check) gets an Error naming what it
// loads, instead of reading past a vector of strides or of index expressions.
[[noreturn]] void rank_error(size_t rank, const std::vector<int64_t>& size,
                             const std::string& what) {
  fail("internal: an index of rank ", rank, " into ", what, " of shape ", shape_string(size));
}

std::string describe(const StorageBox& s) {
  if (s.buffer) return str_cat("buffer '", s.buffer->name, "'");
  return str_cat("the value computed by ", s.def ? s.def->origin : std::string("?"));
}

}  // namespace

V StorageBox::load(KernelBuilder& b, const std::vector<Index>& index) const {
  if (index.size() != size.size()) rank_error(index.size(), size, describe(*this));
  if (buffer && buffer->sym)
    return b.load(buffer,
                  sym_linear_index(index, sym_contiguous_strides(*buffer->sym), ix_const(0)));
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
  if (index.size() != size.size()) {
    rank_error(index.size(), size, str_cat("a view of ", describe(*storage)));
  }
  if (storage->realized() && strided && strided->sym_offset) {
    return b.load(storage->buffer,
                  sym_linear_index(index, strided->sym_strides, strided->sym_offset));
  }
  if (storage->realized() && strided && !sym) {
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
  check_shape(s->size, s->buffer ? s->buffer->name : s->def->origin);
  auto t = std::make_shared<TensorBox>();
  t->dtype = s->dtype;
  t->size = s->size;
  t->storage = std::move(s);
  t->strided = StridedView{contiguous_strides(t->size), 0, {}, nullptr};
  if (t->storage->sym) {
    t->sym = t->storage->sym;
    t->strided->sym_strides = sym_contiguous_strides(*t->sym);
    t->strided->sym_offset = ix_const(0);
  }
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

TensorBoxPtr copy_box(const TensorBoxPtr& t, const std::string& origin) {
  TensorBoxPtr c = make_pointwise_box(t->dtype, t->size, t->loader(), origin);
  if (t->sym) set_box_sym(c, *t->sym);
  return c;
}

TensorBoxPtr make_reduction_box(DType dtype, std::shared_ptr<ComputedDef> def) {
  // The reduction's loop nest: its outer and reduced ranges together.
  std::vector<int64_t> loops = def->ranges;
  loops.insert(loops.end(), def->reduction_ranges.begin(), def->reduction_ranges.end());
  check_shape(loops, def->origin, 2 * kMaxRank);
  auto s = std::make_shared<StorageBox>();
  s->dtype = dtype;
  s->size = def->ranges;
  s->def = std::move(def);
  return fresh_box(std::move(s));
}

void set_box_sym(const TensorBoxPtr& t, std::vector<Index> sym) {
  if (!t->is_identity_view() || sym.size() != t->size.size() || !t->strided)
    fail("internal: symbolic sizes for a view, or of another rank");
  t->strided->sym_strides = sym_contiguous_strides(sym);
  t->strided->sym_offset = ix_const(0);
  t->storage->sym = sym;
  if (t->storage->buffer) t->storage->buffer->sym = sym;
  t->sym = std::move(sym);
}

TensorBoxPtr make_buffer_box(Buffer* buf) {
  auto s = std::make_shared<StorageBox>();
  s->dtype = buf->dtype;
  s->size = buf->size;
  s->sym = buf->sym;
  s->buffer = buf;
  return fresh_box(std::move(s));
}

TensorBoxPtr make_view(const TensorBoxPtr& base, std::vector<int64_t> size, Reindex reindex) {
  check_shape(size, "a view");
  auto t = std::make_shared<TensorBox>();
  t->dtype = base->dtype;
  t->size = std::move(size);
  t->storage = base->storage;
  t->view_depth = base->view_depth + 1;
  // The remap must give an index of base's rank; checked here, as it leaves the view.
  const std::vector<int64_t> base_size = base->size;
  const std::shared_ptr<StorageBox> storage = base->storage;
  Reindex checked = [reindex, base_size, storage](const std::vector<Index>& i) {
    std::vector<Index> o = reindex(i);
    if (o.size() != base_size.size())
      rank_error(o.size(), base_size, str_cat("the base of a view of ", describe(*storage)));
    return o;
  };
  std::shared_ptr<const Reindex> base_re = base->reindex;
  if (base_re) {
    t->reindex = std::make_shared<const Reindex>(
        [base_re, checked](const std::vector<Index>& i) { return (*base_re)(checked(i)); });
  } else {
    t->reindex = std::make_shared<const Reindex>(checked);
  }
  if (base->strided) {
    std::vector<Index> vars;
    for (size_t d = 0; d < t->size.size(); ++d) vars.push_back(ix_var(static_cast<int>(d)));
    Index lin = linear_index(checked(vars), base->strided->strides, base->strided->offset);
    Index simple = IndexSimplifier(t->size).simplify(lin);
    AffineIndex aff;
    if (as_affine(*simple, static_cast<int>(t->size.size()), &aff)) {
      t->strided = StridedView{aff.coeff, aff.offset, {}, nullptr};
    }
  }
  return t;
}

}  // namespace ferrite
