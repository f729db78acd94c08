// The builders the op lowerings share: broadcasting, pointwise and reduction kernels, and
// views (reshape, permute, expand) of a tensor without a kernel.
#include <algorithm>
#include <numeric>

#include "compiler/loopir/checked_int.h"
#include "compiler/lower/lowering.h"

namespace ferrite {

std::vector<int64_t> broadcast_shapes(const LowerCtx& c,
                                      const std::vector<std::vector<int64_t>>& s) {
  size_t rank = 0;
  for (const auto& x : s) rank = std::max(rank, x.size());
  std::vector<int64_t> out(rank, 1);
  for (const auto& x : s) {
    for (size_t i = 0; i < x.size(); ++i) {
      int64_t& o = out[rank - x.size() + i];
      int64_t d = x[i];
      if (d == o || d == 1) continue;
      if (o == 1) {
        o = d;
        continue;
      }
      std::string shapes;
      for (const auto& y : s) {
        shapes += shapes.empty() ? "" : " and ";
        shapes += TensorType{DType::F32, y, {}, true}.to_string();
      }
      c.error("shapes cannot be broadcast: ", shapes);
    }
  }
  return out;
}

V load_broadcast(KernelBuilder& b, const TensorBoxPtr& t, const std::vector<Index>& index,
                 const std::vector<int64_t>& out_size) {
  size_t lead = out_size.size() - t->size.size();
  std::vector<Index> idx(t->size.size());
  for (size_t i = 0; i < t->size.size(); ++i) {
    idx[i] = (t->size[i] == 1 && out_size[lead + i] != 1) ? ix_const(0) : index[lead + i];
  }
  return t->load(b, idx);
}

TensorBoxPtr make_pointwise(const LowerCtx& c, const std::vector<TensorBoxPtr>& ins, DType out,
                            std::function<V(KernelBuilder&, const std::vector<V>&)> fn) {
  std::vector<std::vector<int64_t>> shapes;
  for (const auto& t : ins) shapes.push_back(t->size);
  std::vector<int64_t> size = broadcast_shapes(c, shapes);
  auto loaders = ins;
  Loader body = [loaders, size, fn, out](KernelBuilder& b, const std::vector<Index>& index) {
    std::vector<V> vals;
    for (const auto& t : loaders) vals.push_back(load_broadcast(b, t, index, size));
    return b.cast(fn(b, vals), compute_type(out));
  };
  TensorBoxPtr r = make_pointwise_box(out, size, std::move(body), c.origin());
  if (c.gl.symbolic()) {
    // load_broadcast broadcasts a dim of size 1: one whose sym is the Const 1 (a symbol is
    // never 1). Every other input dim must be the result's for every value of the symbols.
    std::vector<Index> sym(size.size(), ix_const(1));
    bool known = true;
    for (const auto& t : ins) {
      if (!t->sym) known = false;
      for (size_t k = 0; known && k < t->sym->size(); ++k) {
        const Index& d = (*t->sym)[k];
        Index& o = sym[size.size() - t->sym->size() + k];
        if (sym_is_const(d, 1)) continue;
        if (!sym_is_const(o, 1) && !sym_equal(o, d)) known = false;
        o = d;
      }
    }
    if (known) set_box_sym(r, std::move(sym));
  }
  return r;
}

TensorBoxPtr make_reduction(const LowerCtx& c, const TensorBoxPtr& x, std::vector<int> axes,
                            bool keepdims, ReduceKind kind, DType out,
                            std::function<V(KernelBuilder&, V)> prologue,
                            std::function<V(KernelBuilder&, V)> post, bool count_free) {
  std::sort(axes.begin(), axes.end());
  axes.erase(std::unique(axes.begin(), axes.end()), axes.end());
  const size_t rank = x->size.size();
  std::vector<bool> reduced(rank, false);
  for (int a : axes) reduced[a] = true;
  auto def = std::make_shared<ComputedDef>();
  def->is_reduction = true;
  def->reduce = kind;
  def->origin = c.origin();
  std::vector<int64_t> out_size;
  for (size_t d = 0; d < rank; ++d) {
    if (reduced[d]) {
      def->reduction_ranges.push_back(x->size[d]);
      if (keepdims) out_size.push_back(1);
    } else {
      out_size.push_back(x->size[d]);
    }
  }
  // Reduction kernels iterate over the output's own (possibly keepdims) shape.
  def->ranges = out_size;
  TensorBoxPtr src = x;
  def->rfn = [src, reduced, keepdims, prologue](KernelBuilder& b, const std::vector<Index>& outer,
                                                const std::vector<Index>& red) {
    std::vector<Index> idx;
    size_t o = 0, r = 0;
    for (size_t d = 0; d < reduced.size(); ++d) {
      if (reduced[d]) {
        idx.push_back(red[r++]);
        if (keepdims) ++o;
      } else {
        idx.push_back(outer[o++]);
      }
    }
    V v = src->load(b, idx);
    return prologue ? prologue(b, v) : v;
  };
  ScalarType ct = compute_type(out);
  def->post = [post, ct](KernelBuilder& b, V v) { return b.cast(post ? post(b, v) : v, ct); };
  TensorBoxPtr t = make_reduction_box(out, def);
  if (x->sym) {
    // Over the symbols when every reduced dim is static: the caller may hold the count of
    // reduced elements (a mean's, in `post` or in a pointwise op after it, as
    // QLinearGlobalAveragePool's), which then is the same at every size; over symbolic
    // dims only when the caller says it holds none.
    std::vector<Index> outer_sym, reduced_sym;
    for (size_t d = 0; d < rank; ++d) {
      const Index& s = (*x->sym)[d];
      if (reduced[d]) reduced_sym.push_back(s);
      if (!reduced[d]) outer_sym.push_back(s);
      if (reduced[d] && keepdims) outer_sym.push_back(ix_const(1));
    }
    if (count_free || sym_all_const(reduced_sym)) {
      def->sym_reduction_ranges = reduced_sym;
      set_box_sym(t, outer_sym);
    }
  }
  c.gl.realize(t);
  return t;
}

TensorBoxPtr reshape_view(const TensorBoxPtr& t, const std::vector<int64_t>& new_size) {
  if (new_size == t->size) return t;
  std::vector<int64_t> old_size = t->size;
  if (t->elements() == 0) {
    // Nothing to map (and the zero strides of an empty shape are no divisors).
    return make_view(t, new_size, [old_size](const std::vector<Index>&) {
      return std::vector<Index>(old_size.size(), ix_const(0));
    });
  }
  std::vector<int64_t> new_strides = contiguous_strides(new_size);
  std::vector<int64_t> old_strides = contiguous_strides(old_size);
  Reindex re = [old_size, old_strides, new_strides](const std::vector<Index>& idx) {
    Index lin = linear_index(idx, new_strides);
    std::vector<Index> out(old_size.size());
    for (size_t d = 0; d < old_size.size(); ++d) {
      out[d] =
          old_size[d] == 1 ? ix_const(0) : ix_mod(ix_floordiv(lin, old_strides[d]), old_size[d]);
    }
    return out;
  };
  return make_view(t, new_size, re);
}

TensorBoxPtr permute_view(const TensorBoxPtr& t, const std::vector<int>& perm) {
  std::vector<int64_t> size(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) size[i] = t->size[perm[i]];
  Reindex re = [perm](const std::vector<Index>& idx) {
    std::vector<Index> out(perm.size());
    for (size_t i = 0; i < perm.size(); ++i) out[perm[i]] = idx[i];
    return out;
  };
  TensorBoxPtr v = make_view(t, size, re);
  if (t->sym) {  // a permutation holds for every size
    std::vector<Index> sym(perm.size());
    for (size_t i = 0; i < perm.size(); ++i) sym[i] = (*t->sym)[static_cast<size_t>(perm[i])];
    v->sym = std::move(sym);
    if (v->strided && t->strided && t->strided->sym_offset) {
      v->strided->sym_strides.resize(perm.size());
      for (size_t i = 0; i < perm.size(); ++i)
        v->strided->sym_strides[i] = t->strided->sym_strides[static_cast<size_t>(perm[i])];
      v->strided->sym_offset = t->strided->sym_offset;
    }
  }
  return v;
}

TensorBoxPtr expand_view(const TensorBoxPtr& t, const std::vector<int64_t>& new_size) {
  if (new_size == t->size) return t;
  std::vector<int64_t> old = t->size;
  Reindex re = [old, new_size](const std::vector<Index>& idx) {
    size_t lead = new_size.size() - old.size();
    std::vector<Index> out(old.size());
    for (size_t i = 0; i < old.size(); ++i) {
      out[i] = (old[i] == 1 && new_size[lead + i] != 1) ? ix_const(0) : idx[lead + i];
    }
    return out;
  };
  return make_view(t, new_size, re);
}

TensorBoxPtr expand_view_sym(const TensorBoxPtr& t, const std::vector<int64_t>& new_size,
                             const std::optional<std::vector<Index>>& new_sym) {
  auto v = std::make_shared<TensorBox>(*expand_view(t, new_size));  // may be t itself
  v->sym = t->sym ? new_sym : std::nullopt;
  if (v->sym && v->strided && t->strided && t->strided->sym_offset) {
    const size_t lead = new_size.size() - t->size.size();
    v->strided->sym_strides.assign(new_size.size(), ix_const(0));
    for (size_t k = 0; k < t->size.size(); ++k)
      if (!(t->size[k] == 1 && new_size[lead + k] != 1))
        v->strided->sym_strides[lead + k] = t->strided->sym_strides[k];
    v->strided->sym_offset = t->strided->sym_offset;
  } else if (v->strided) {
    v->strided->sym_strides.clear();
    v->strided->sym_offset = nullptr;
  }
  return v;
}

std::optional<std::vector<Index>> broadcast_sym(const std::vector<std::vector<Index>>& shapes) {
  size_t r = 0;
  for (const auto& s : shapes) r = std::max(r, s.size());
  std::vector<Index> out(r, ix_const(1));
  for (const auto& s : shapes) {
    for (size_t k = 0; k < s.size(); ++k) {
      const Index d = sym_simplify(s[k]);
      Index& o = out[r - s.size() + k];
      if (sym_is_const(d, 1)) continue;
      if (!sym_is_const(o, 1) && !sym_equal(o, d)) return std::nullopt;
      o = d;
    }
  }
  return out;
}

TensorBoxPtr concat_boxes(const std::vector<TensorBoxPtr>& ins, int axis,
                          const std::string& origin) {
  std::vector<int64_t> size = ins.at(0)->size, offsets{0};
  size[axis] = 0;
  for (const auto& t : ins) {
    size[axis] = checked_add(size[axis], t->size[axis], "the concatenated dim");
    offsets.push_back(size[axis]);
  }
  Loader fn = [ins, offsets, axis](KernelBuilder& b, const std::vector<Index>& idx) {
    V pos = b.index_value(idx[axis]);
    V result;
    for (int k = static_cast<int>(ins.size()) - 1; k >= 0; --k) {
      if (ins[k]->size[axis] == 0) continue;
      std::vector<Index> sub = idx;
      sub[axis] = ix_add(idx[axis], ix_const(-offsets[k]));
      V lo = b.binary(Op::Ge, pos, b.constant_i64(offsets[k]));
      V hi = b.binary(Op::Lt, pos, b.constant_i64(offsets[k + 1]));
      V in_range = b.binary(Op::And, lo, hi);
      V v;
      {
        MaskScope scope(b, in_range);
        v = ins[k]->load(b, sub);
      }
      result = result.id < 0 ? v : b.where(in_range, v, result);
    }
    return result;
  };
  return make_pointwise_box(ins[0]->dtype, size, fn, origin);
}

namespace {

// The most inputs one concatenation kernel takes: each of its elements evaluates a masked
// load (and two compares and a select) per input. With 16, an element of a concatenation of
// N values costs about 16 log16(N) of those, its values copied log16(N) times.
constexpr size_t kMaxConcatFanIn = 16;

}  // namespace

TensorBoxPtr concat_values(GraphLowering& gl, std::vector<TensorBoxPtr> ins, int axis,
                           const std::string& origin) {
  if (ins.size() > kMaxConcatFanIn) {
    std::vector<TensorBoxPtr> nonempty;
    for (const TensorBoxPtr& t : ins)
      if (t->size[axis] != 0) nonempty.push_back(t);
    if (!nonempty.empty()) ins = std::move(nonempty);
  }
  while (ins.size() > kMaxConcatFanIn) {
    std::vector<TensorBoxPtr> groups;
    for (size_t i = 0; i < ins.size(); i += kMaxConcatFanIn) {
      const size_t end = std::min(ins.size(), i + kMaxConcatFanIn);
      if (end - i == 1) {
        groups.push_back(ins[i]);
        continue;
      }
      TensorBoxPtr g = concat_boxes({ins.begin() + i, ins.begin() + end}, axis, origin);
      gl.realize(g);
      groups.push_back(g);
    }
    ins = std::move(groups);
  }
  return concat_boxes(ins, axis, origin);
}

}  // namespace ferrite
