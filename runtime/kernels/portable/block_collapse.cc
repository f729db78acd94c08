// collapse_dims (declared in block_program.h): merges loop dims that all accesses walk as
// one contiguous run, so that the interpreter's rows are as long as possible.
#include <vector>

#include "runtime/kernels/portable/block_program.h"

namespace ferrite {
namespace portable {
namespace {

// A run of adjacent original dims [first, last] that became one loop dim.
struct Group {
  int first = 0, last = 0;
  int64_t range = 1;
  bool blocked = false;        // used by a LoopVar or a non-affine index: never merged
  std::vector<int64_t> coeff;  // per affine access
};

Index rebuild(const AffineIndex& f) {
  Index e = ix_const(f.offset);
  for (size_t v = 0; v < f.coeff.size(); ++v) {
    if (f.coeff[v] == 0) continue;
    Index term = ix_var(static_cast<int>(v));
    if (f.coeff[v] != 1) term = ix_binary(IndexKind::Mul, term, ix_const(f.coeff[v]));
    e = ix_binary(IndexKind::Add, e, term);
  }
  return e;
}

Index remap_vars(const Index& e, const std::vector<int>& new_var) {
  switch (e->kind) {
    case IndexKind::Var:
      return ix_var(new_var[e->id]);
    case IndexKind::Const:
    case IndexKind::Value:
      return e;
    default:
      return ix_binary(e->kind, remap_vars(e->a, new_var), remap_vars(e->b, new_var));
  }
}

class Collapser {
 public:
  explicit Collapser(const Kernel& k) : k_(k), dims_(static_cast<int>(k.ranges.size())) {}

  Kernel run() {
    if (dims_ < 2) return k_;
    find_accesses();
    std::vector<Group> groups;  // innermost first
    for (int d = dims_ - 1; d >= 0; --d) {
      Group g = single(d);
      if (!groups.empty() && mergeable(g, groups.back())) {
        merge(g, &groups.back());
      } else {
        groups.push_back(std::move(g));
      }
    }
    if (static_cast<int>(groups.size()) == dims_) return k_;
    return rebuild_kernel(std::vector<Group>(groups.rbegin(), groups.rend()));
  }

 private:
  void find_accesses() {
    blocked_.assign(dims_, false);
    for (size_t i = 0; i < k_.code.size(); ++i) {
      const Instr& in = k_.code[i];
      if (in.op == Op::LoopVar) blocked_[in.arg] = true;
      if (in.op != Op::Load && in.op != Op::Store) continue;
      AffineIndex f;
      if (as_affine(*in.index, dims_, &f)) {
        affine_.push_back(static_cast<int>(i));
        forms_.push_back(std::move(f));
        continue;
      }
      for (int v = 0; v < dims_; ++v)
        if (index_uses_var(*in.index, v)) blocked_[v] = true;
    }
  }

  Group single(int d) const {
    Group g;
    g.first = g.last = d;
    g.range = k_.ranges[d];
    g.blocked = blocked_[d];
    for (const AffineIndex& f : forms_) g.coeff.push_back(f.coeff[d]);
    return g;
  }

  // Can `o` (the dim just outside `g`) join it? Every access must step through o exactly
  // one full run of g further; a dim of range 1 is never walked, so it always fits.
  bool mergeable(const Group& o, const Group& g) const {
    const int outer = k_.num_outer();
    if ((o.first < outer) != (g.first < outer) || o.blocked || g.blocked) return false;
    if (o.range == 1 || g.range == 1) return true;
    for (size_t a = 0; a < forms_.size(); ++a) {
      int64_t step;
      if (__builtin_mul_overflow(g.coeff[a], g.range, &step) || o.coeff[a] != step) return false;
    }
    return true;
  }

  static void merge(const Group& o, Group* g) {
    if (g->range == 1) g->coeff = o.coeff;
    g->range *= o.range;
    g->first = o.first;
  }

  Kernel rebuild_kernel(const std::vector<Group>& groups) const {
    Kernel out = k_;
    std::vector<int> new_var(dims_, 0);
    out.ranges.clear();
    out.num_reduce = 0;
    for (size_t g = 0; g < groups.size(); ++g) {
      for (int d = groups[g].first; d <= groups[g].last; ++d) new_var[d] = static_cast<int>(g);
      out.ranges.push_back(groups[g].range);
      if (groups[g].first >= k_.num_outer()) ++out.num_reduce;
    }
    for (size_t a = 0; a < affine_.size(); ++a) {
      AffineIndex f;
      f.offset = forms_[a].offset;
      for (const Group& g : groups) f.coeff.push_back(g.coeff[a]);
      out.code[affine_[a]].index = rebuild(f);
    }
    std::vector<bool> is_affine(out.code.size(), false);
    for (int i : affine_) is_affine[i] = true;
    for (size_t i = 0; i < out.code.size(); ++i) {
      Instr& in = out.code[i];
      if (in.op == Op::LoopVar) in.arg = new_var[in.arg];
      if ((in.op == Op::Load || in.op == Op::Store) && !is_affine[i])
        in.index = remap_vars(in.index, new_var);
    }
    return out;
  }

  const Kernel& k_;
  const int dims_;
  std::vector<bool> blocked_;
  std::vector<int> affine_;  // instructions with an affine index
  std::vector<AffineIndex> forms_;
};

}  // namespace

Kernel collapse_dims(const Kernel& validated) {
  return Collapser(validated).run();
}

}  // namespace portable
}  // namespace ferrite
