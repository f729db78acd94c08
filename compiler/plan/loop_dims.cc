#include "compiler/plan/loop_dims.h"

#include "compiler/plan/error.h"

namespace ferrite {
namespace {

// A run of kept dims [first, last] (size-1 dims in between are dropped) walked as one.
struct Group {
  int first = 0, last = 0;
  int64_t range = 1;
};

class Merger {
 public:
  explicit Merger(const Kernel& k)
      : k_(k), dims_(static_cast<int>(k.ranges.size())), forms_(index_forms(k)) {
    for (size_t i = 0; i < forms_.size(); ++i) {
      const Op op = k.code[i].op;
      if (op != Op::Load && op != Op::Store) continue;  // no index, no form
      for_each_form(forms_[i], [&](const LinearForm& g) { coeffs_.push_back(&g.coeff); });
    }
    blocked_ = loop_var_uses(k);
    keep_ = kept_dims();
  }

  Kernel run() const {
    for (int64_t r : k_.ranges)
      if (r == 0) return k_;
    std::vector<Group> groups;  // innermost first
    for (int d = dims_ - 1; d >= 0; --d) {
      if (!keep_[d]) continue;
      if (!groups.empty() && joins(d, groups.back())) {
        groups.back().first = d;
        groups.back().range *= k_.ranges[d];
      } else {
        groups.push_back(Group{d, d, k_.ranges[d]});
      }
    }
    if (static_cast<int>(groups.size()) == dims_) return k_;
    return remap_dims(k_, dim_map(std::vector<Group>(groups.rbegin(), groups.rend())));
  }

 private:
  // Size-1 dims go, except the last reduction dim of a kernel whose reduction dims all
  // have size 1 (a reduction kernel keeps one).
  std::vector<bool> kept_dims() const {
    std::vector<bool> keep(dims_);
    bool any_reduce = false;
    for (int d = 0; d < dims_; ++d) {
      keep[d] = k_.ranges[d] != 1;
      if (d >= k_.num_outer()) any_reduce = any_reduce || keep[d];
    }
    if (k_.num_reduce > 0 && !any_reduce) keep[dims_ - 1] = true;
    return keep;
  }

  // Can dim d (the next kept dim outside g) join g? Every form must step through d exactly
  // one full run of g further.
  bool joins(int d, const Group& g) const {
    const int outer = k_.num_outer();
    if ((d < outer) != (g.first < outer) || blocked_[d] || blocked_[g.first]) return false;
    for (const std::vector<int64_t>* c : coeffs_) {
      int64_t step;
      if (__builtin_mul_overflow((*c)[g.last], g.range, &step) || (*c)[d] != step) return false;
    }
    return true;
  }

  DimMap dim_map(const std::vector<Group>& groups) const {
    DimMap m;
    m.coeff.resize(dims_);
    m.loop_var.assign(dims_, kZeroVar);
    for (size_t j = 0; j < groups.size(); ++j) {
      const Group& g = groups[j];
      m.ranges.push_back(g.range);
      if (g.first >= k_.num_outer()) ++m.num_reduce;
      // The group's variable walks with the stride of its innermost dim (of a kept size-1
      // reduction dim: not at all).
      if (g.range > 1) m.coeff[g.last].push_back({static_cast<int>(j), 1});
      for (int d = g.first; d <= g.last; ++d)
        if (keep_[d]) m.loop_var[d] = g.first == g.last ? static_cast<int>(j) : kNoLoopVar;
    }
    return m;
  }

  const Kernel& k_;
  const int dims_;
  std::vector<LinearForm> forms_;
  std::vector<const std::vector<int64_t>*> coeffs_;  // every form, nested ones included
  std::vector<bool> blocked_;
  std::vector<bool> keep_;
};

Instr zero_i64() {
  Instr in;
  in.op = Op::Const;
  in.type = ScalarType::I64;
  return in;
}

}  // namespace

std::vector<LinearForm> index_forms(const Kernel& k) {
  std::vector<LinearForm> forms(k.code.size());
  const int dims = static_cast<int>(k.ranges.size());
  for (size_t i = 0; i < k.code.size(); ++i) {
    const Instr& in = k.code[i];
    if (in.op == Op::Load || in.op == Op::Store) forms[i] = linearize(*in.index, dims);
  }
  return forms;
}

std::vector<bool> loop_var_uses(const Kernel& k) {
  std::vector<bool> used(k.ranges.size(), false);
  for (const Instr& in : k.code)
    if (in.op == Op::LoopVar) used[in.arg] = true;
  return used;
}

Kernel merge_loop_dims(const Kernel& validated) {
  return Merger(validated).run();
}

Kernel remap_dims(const Kernel& validated, const DimMap& m) {
  Kernel out = validated;
  const int old_dims = static_cast<int>(validated.ranges.size());
  const int new_dims = static_cast<int>(m.ranges.size());
  out.ranges = m.ranges;
  out.num_reduce = m.num_reduce;
  for (Instr& in : out.code) {
    if (in.op == Op::Load || in.op == Op::Store) {
      in.index = delinearize(map_coefficients(linearize(*in.index, old_dims), m.coeff, new_dims));
    } else if (in.op == Op::LoopVar) {
      const int v = m.loop_var[in.arg];
      if (v == kNoLoopVar)
        fail("kernel '", validated.name, "': internal: LoopVar i", in.arg, " has no new dim");
      if (v == kZeroVar) {
        in = zero_i64();
      } else {
        in.arg = v;
      }
    }
  }
  validate_kernel(out);
  return out;
}

}  // namespace ferrite
