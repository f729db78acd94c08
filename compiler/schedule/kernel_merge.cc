#include "compiler/schedule/kernel_merge.h"

#include <algorithm>
#include <climits>
#include <map>
#include <unordered_map>

#include "compiler/loopir/shape_env.h"
#include "compiler/loopir/simplify.h"
#include "compiler/plan/error.h"
#include "compiler/plan/kernel_symbols.h"

namespace ferrite {
namespace {

constexpr int kPost = INT_MAX;  // the post phase sorts after every inner loop
// Recomputing a value in a later inner loop costs this many instructions at most; a
// longer chain of a per-point value is re-loaded instead, of a post value refused.
constexpr int kRematLimit = 12;

struct Refuse {
  std::string reason;
};

template <class... Args>
[[noreturn]] void refuse(Args&&... args) {
  throw Refuse{str_cat(std::forward<Args>(args)...)};
}

std::string dims_text(const std::vector<int64_t>& r, int num_reduce) {
  std::string s = "[";
  const int outer = static_cast<int>(r.size()) - num_reduce;
  for (size_t i = 0; i < r.size(); ++i) {
    s += static_cast<int>(i) == outer ? (i == 0 ? "| " : " | ") : (i == 0 ? "" : ", ");
    s += std::to_string(r[i]);
  }
  return s + "]";
}

// The dims of r[begin, end) that are not 1 (a size-1 dim's variable is always 0).
std::vector<int> non_unit(const std::vector<int64_t>& r, int begin, int end) {
  std::vector<int> dims;
  for (int d = begin; d < end; ++d)
    if (r[d] != 1) dims.push_back(d);
  return dims;
}

bool same_sizes(const std::vector<int64_t>& ra, const std::vector<int>& da,
                const std::vector<int64_t>& rb, const std::vector<int>& db) {
  if (da.size() != db.size()) return false;
  for (size_t i = 0; i < da.size(); ++i)
    if (ra[da[i]] != rb[db[i]]) return false;
  return true;
}

using ValueMap = std::function<int(int)>;

// e with loop variables replaced by vars[v] (empty: unchanged) and Value leaves by values().
Index remap_index(const Index& e, const std::vector<Index>& vars, const ValueMap& values) {
  switch (e->kind) {
    case IndexKind::Const:
    case IndexKind::Sym:
      return e;
    case IndexKind::Var:
      return vars.empty() ? e : vars[e->id];
    case IndexKind::Value:
      return ix_value(values(e->id));
    default:
      return ix_binary(e->kind, remap_index(e->a, vars, values), remap_index(e->b, vars, values));
  }
}

// Calls f on each SSA operand of `in`: a, b, c (as many as its arity), mask, index values.
template <class F>
void for_each_operand(const Instr& in, F f) {
  for_each_value_operand(in, f);
  if (in.index) {
    std::vector<int> vals;
    index_values(*in.index, &vals);
    for (int v : vals) f(v);
  }
}

// Rewrites the operands a, b, c (as many as its arity) and the mask through f.
void remap_value_operands(Instr* in, const ValueMap& f) {
  auto m = [&](int op) { return op < 0 ? op : f(op); };
  const int arity = op_arity(in->op);
  if (arity >= 1) in->a = m(in->a);
  if (arity >= 2) in->b = m(in->b);
  if (arity >= 3) in->c = m(in->c);
  in->mask = m(in->mask);
}

// ... and the Value leaves of the index too.
void remap_operands(Instr* in, const ValueMap& f) {
  remap_value_operands(in, f);
  if (in->index) in->index = remap_index(in->index, {}, f);
}

// Collects an assembled kernel phase by phase: loops 0..n-1, then post. Instructions refer
// to each other by their position in `items` until finish() orders and renumbers them.
class Assembler {
 public:
  struct Item {
    int phase;
    Instr in;
  };

  int emit(int phase, Instr in) {
    items.push_back({phase, std::move(in)});
    return static_cast<int>(items.size()) - 1;
  }

  int arg_for(Buffer* buf, const KernelArg& a) {
    auto found = arg_index.emplace(buf, static_cast<int>(args.size()));
    if (!found.second) {
      KernelArg& k = kargs[static_cast<size_t>(found.first->second)];
      k.output = k.output || a.output;
      return found.first->second;
    }
    args.push_back(buf);
    kargs.push_back(a);
    return static_cast<int>(args.size()) - 1;
  }

  BoundKernel finish(const std::string& name, const std::vector<int64_t>& ranges, int num_reduce,
                     const std::optional<std::vector<Index>>& sym_ranges) const {
    std::vector<int> order(items.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
    std::stable_sort(order.begin(), order.end(),
                     [&](int x, int y) { return items[x].phase < items[y].phase; });
    std::vector<int> final_id(items.size());
    for (size_t i = 0; i < order.size(); ++i) final_id[order[i]] = static_cast<int>(i);
    auto fid = [&](int id) { return id < 0 ? id : final_id[id]; };
    BoundKernel out;
    Kernel& k = out.kernel;
    k.name = name;
    k.ranges = ranges;
    k.num_reduce = num_reduce;
    k.args = kargs;
    k.messages = messages;
    out.args = args;
    out.sym_ranges = sym_ranges;
    int prev_phase = -1;
    for (int id : order) {
      const Item& it = items[id];
      if (it.phase != prev_phase && !k.code.empty() && prev_phase != kPost && num_reduce > 0)
        k.loop_ends.push_back(static_cast<int32_t>(k.code.size()));
      if (it.phase == kPost && prev_phase != kPost) k.post_begin = static_cast<int>(k.code.size());
      prev_phase = it.phase;
      Instr in = it.in;
      remap_operands(&in, fid);
      k.code.push_back(std::move(in));
    }
    if (prev_phase != kPost) {
      k.post_begin = static_cast<int>(k.code.size());
      if (num_reduce > 0 && !k.code.empty()) k.loop_ends.push_back(k.post_begin);
    }
    if (k.loop_ends.size() <= 1) k.loop_ends.clear();
    IndexSimplifier simp =
        sym_ranges ? symbolic_simplifier(*sym_ranges) : IndexSimplifier(k.ranges);
    for (size_t i = 0; i < k.code.size(); ++i)
      if (k.code[i].op == Op::CheckIndex) simp.set_value_range(static_cast<int>(i), k.code[i].iimm);
    for (Instr& in : k.code)
      if (in.index) in.index = simp.simplify(in.index);
    if (sym_ranges) {
      validate_kernel_over_symbols(k);
    } else {
      validate_kernel(k);
    }
    return out;
  }

  std::vector<Item> items;
  std::vector<Buffer*> args;
  std::unordered_map<const Buffer*, int> arg_index;
  std::vector<KernelArg> kargs;
  std::vector<std::string> messages;
};

// How a source kernel's loop nest sits in the merged one.
struct Placement {
  std::vector<Index> vars;  // source loop variable -> merged index (a var, or 0)
  bool in_post = false;     // a pointwise kernel over the merged outer space
};

bool same_index(const Index& x, const Index& y, int num_vars) {
  AffineIndex ax, ay;
  if (as_affine(*x, num_vars, &ax) && as_affine(*y, num_vars, &ay))
    return ax.offset == ay.offset && ax.coeff == ay.coeff;
  return index_equal(*x, *y);
}

class Merger {
 public:
  Merger(const BoundKernel& first, const BoundKernel& second) : a_(first), b_(second) {}

  BoundKernel run() {
    const Kernel& ka = a_.kernel;
    const Kernel& kb = b_.kernel;
    if (ka.outer_points() * ka.reduce_points() == 0 || kb.outer_points() * kb.reduce_points() == 0)
      refuse("an empty iteration space");
    if (a_.sym_ranges.has_value() != b_.sym_ranges.has_value())
      refuse("one kernel is over the symbols, the other is not");
    const BoundKernel& base = ka.num_reduce > 0 || kb.num_reduce == 0 ? a_ : b_;
    ranges_ = base.kernel.ranges;
    sym_ranges_ = base.sym_ranges;
    num_reduce_ = base.kernel.num_reduce;
    simp_ = std::make_unique<IndexSimplifier>(sym_ranges_ ? symbolic_simplifier(*sym_ranges_)
                                                          : IndexSimplifier(ranges_));
    Placement pa = place(a_, /*first=*/true), pb = place(b_, /*first=*/false);
    check_conflicts();
    // The first kernel keeps its phases.
    std::vector<int> phase_a(ka.num_loops());
    for (int L = 0; L < ka.num_loops(); ++L) phase_a[L] = pa.in_post ? kPost : L;
    copy(a_, pa, phase_a, nullptr);
    std::vector<int> phase_b = place_loops(pb);
    copy(b_, pb, phase_b, &stores_);
    std::string name = str_cat(ka.name, "+", kb.name);
    if (name.size() > 160) name = name.substr(0, 157) + "...";
    return as_.finish(name, ranges_, num_reduce_, sym_ranges_);
  }

 private:
  struct StoreRec {
    Buffer* buf;
    Index index;  // over the merged loop variables, simplified
    int value;    // assembler id
    int phase;
  };

  // Maps a kernel's loop nest onto the merged one, or refuses.
  // Whether dims dk of k's loops are dims dm of the merged loops, size for size (over the
  // symbols too, when compiling symbolically).
  bool same(const BoundKernel& bk, const std::vector<int>& dk, const std::vector<int>& dm) const {
    if (!same_sizes(bk.kernel.ranges, dk, ranges_, dm)) return false;
    if (!sym_ranges_) return true;
    for (size_t i = 0; i < dk.size(); ++i)
      if (!sym_equal(bk.sym_ranges->at(dk[i]), sym_ranges_->at(dm[i]))) return false;
    return true;
  }

  Placement place(const BoundKernel& bk, bool first) const {
    const Kernel& k = bk.kernel;
    const int nm = static_cast<int>(ranges_.size()), om = nm - num_reduce_;
    const std::vector<int> m_outer = non_unit(ranges_, 0, om), m_inner = non_unit(ranges_, om, nm);
    const int nk = static_cast<int>(k.ranges.size()), ok = nk - k.num_reduce;
    Placement p;
    p.vars.assign(nk, ix_const(0));
    auto bind = [&](const std::vector<int>& src, const std::vector<int>& dst) {
      for (size_t i = 0; i < src.size(); ++i) p.vars[src[i]] = ix_var(dst[i]);
    };
    const std::vector<int> k_all = non_unit(k.ranges, 0, nk);
    if (k.num_reduce > 0) {
      const std::vector<int> k_outer = non_unit(k.ranges, 0, ok),
                             k_inner = non_unit(k.ranges, ok, nk);
      if (num_reduce_ == 0 || !same(bk, k_outer, m_outer) || !same(bk, k_inner, m_inner))
        refuse("iteration spaces differ: ", dims_text(k.ranges, k.num_reduce), " vs ",
               dims_text(ranges_, num_reduce_));
      bind(k_outer, m_outer);
      bind(k_inner, m_inner);
      return p;
    }
    std::vector<int> m_all = m_outer;
    m_all.insert(m_all.end(), m_inner.begin(), m_inner.end());
    const bool whole = same(bk, k_all, m_all);
    const bool outer = num_reduce_ > 0 && same(bk, k_all, m_outer);
    if (outer && (!whole || !first)) {
      p.in_post = true;
      bind(k_all, m_outer);
      return p;
    }
    if (!whole)
      refuse("iteration spaces differ: ", dims_text(k.ranges, 0), " vs ",
             dims_text(ranges_, num_reduce_));
    bind(k_all, m_all);
    return p;
  }

  void check_conflicts() const {
    std::set<Buffer*> a_loads, a_stores, b_loads, b_stores;
    auto scan = [](const BoundKernel& bk, std::set<Buffer*>* loads, std::set<Buffer*>* stores) {
      for (const Instr& in : bk.kernel.code) {
        if (in.op == Op::Load) loads->insert(bk.args[in.arg]);
        if (in.op == Op::Store) stores->insert(bk.args[in.arg]);
      }
    };
    scan(a_, &a_loads, &a_stores);
    scan(b_, &b_loads, &b_stores);
    for (Buffer* buf : b_stores) {
      if (a_loads.count(buf) || a_stores.count(buf))
        refuse("the second kernel writes ", buf->name, ", which the first one uses");
      if (b_loads.count(buf)) refuse("the second kernel reads and writes ", buf->name);
    }
    for (Buffer* buf : a_stores)
      if (a_loads.count(buf) && b_loads.count(buf))
        refuse("the first kernel reads and writes ", buf->name);
  }

  Index mapped_index(const Index& e, const Placement& p, const std::vector<int>& ids) const {
    return simp_->simplify(remap_index(e, p.vars, [&](int id) { return ids[id]; }));
  }

  // The first kernel's stores of `buf`, in code order (null: none).
  const std::vector<StoreRec>* stores_of(const Buffer* buf) const {
    auto it = stores_.find(buf);
    return it == stores_.end() ? nullptr : &it->second;
  }

  const StoreRec* find_store(Buffer* buf, const Index& index) const {
    if (const std::vector<StoreRec>* stores = stores_of(buf)) {
      for (const StoreRec& s : *stores)
        if (same_index(s.index, index, static_cast<int>(ranges_.size()))) return &s;
    }
    return nullptr;
  }

  bool first_stores(Buffer* buf) const { return stores_of(buf) != nullptr; }

  // 1 + the last inner loop whose Reduce results value `id` depends on (0: none).
  int reduce_depth(int id) {
    auto it = depth_.find(id);
    if (it != depth_.end()) return it->second;
    const Assembler::Item& item = as_.items[id];
    int d = 0;
    if (item.in.op == Op::Reduce) {
      d = item.phase + 1;
    } else if (item.phase == kPost) {
      for_each_operand(item.in, [&](int op) { d = std::max(d, reduce_depth(op)); });
    }
    depth_[id] = d;
    return d;
  }

  // The merged phase of each of the second kernel's inner loops: after every value of the
  // first kernel it loads, and in order.
  std::vector<int> place_loops(const Placement& pb) {
    const Kernel& kb = b_.kernel;
    std::vector<int> phase(kb.num_loops(), 0);
    std::vector<int> ids(kb.code.size(), 0);  // value leaves only matter for indirect loads
    int lower = 0;
    for (int L = 0; L < kb.num_loops(); ++L) {
      for (int i = kb.loop_begin(L); i < kb.loop_end(L); ++i) {
        const Instr& in = kb.code[i];
        if (in.op != Op::Load || !first_stores(b_.args[in.arg])) continue;
        if (index_uses_value(*in.index))
          refuse("the second kernel reads ", b_.args[in.arg]->name, " through an indirect index");
        const StoreRec* s = find_store(b_.args[in.arg], mapped_index(in.index, pb, ids));
        if (!s)
          refuse("the second kernel reads ", b_.args[in.arg]->name,
                 " at another index than the first one writes it");
        lower = std::max(lower, s->phase == kPost ? reduce_depth(s->value) : s->phase);
      }
      phase[L] = pb.in_post ? kPost : num_reduce_ == 0 ? 0 : lower;
      ++lower;
    }
    return phase;
  }

  // Whether `id` can be recomputed in inner loop `phase`, and at what cost.
  bool remat_cost(int id, int phase, std::set<int>* seen, int* cost) {
    if (!seen->insert(id).second) return true;
    const Assembler::Item& item = as_.items[id];
    if (item.in.op == Op::Const || item.phase == phase) return true;
    if (item.in.op == Op::Reduce) return item.phase < phase;
    if (item.in.op == Op::Store || (item.phase != kPost && item.phase > phase)) return false;
    if (item.in.op == Op::Load) {
      // Memory written by this kernel is only safe to re-read from a later loop.
      if (const std::vector<StoreRec>* stores = stores_of(as_.args[item.in.arg])) {
        for (const StoreRec& s : *stores)
          if (s.phase >= phase) return false;
      }
    } else if (item.in.op != Op::LoopVar && item.in.op != Op::Cast) {
      ++*cost;
    }
    bool ok = true;
    for_each_operand(item.in, [&](int op) { ok = ok && remat_cost(op, phase, seen, cost); });
    return ok && *cost <= kRematLimit;
  }

  int remat(int id, int phase) {
    const Assembler::Item item = as_.items[id];
    if (item.in.op == Op::Const || item.in.op == Op::Reduce || item.phase == phase) return id;
    auto key = std::make_pair(id, phase);
    auto it = remat_.find(key);
    if (it != remat_.end()) return it->second;
    Instr in = item.in;
    remap_operands(&in, [&](int op) { return remat(op, phase); });
    int out = as_.emit(phase, std::move(in));
    remat_[key] = out;
    return out;
  }

  // The value of a load of `s`'s buffer at its index, in `phase`: -1 to load it anyway.
  int resolve(const StoreRec& s, int phase) {
    if (s.phase == phase) return s.value;
    if (phase == kPost) refuse("the second kernel needs a per-point value in its post phase");
    std::set<int> seen;
    int cost = 0;
    const bool ok = remat_cost(s.value, phase, &seen, &cost);
    if (s.phase == kPost) {
      if (!ok) refuse("recomputing ", s.buf->name, " in a later loop is too costly or unsafe");
      return remat(s.value, phase);
    }
    return ok ? remat(s.value, phase) : -1;  // an earlier loop stored it for this point
  }

  // Copies a kernel's instructions into the assembler: loop L into phase[L], post into
  // the post phase. With `first_stores`, loads of what the first kernel stores resolve to
  // its values.
  void copy(const BoundKernel& src, const Placement& p, const std::vector<int>& phase,
            const std::unordered_map<const Buffer*, std::vector<StoreRec>>* first_stores) {
    const Kernel& k = src.kernel;
    std::vector<int> ids(k.code.size(), -1);
    const int msg_base = static_cast<int>(as_.messages.size());
    as_.messages.insert(as_.messages.end(), k.messages.begin(), k.messages.end());
    const int phase0 = 0;  // Consts go to the first loop, where every phase sees them
    for (int i = 0; i < static_cast<int>(k.code.size()); ++i) {
      Instr in = k.code[i];
      const int ph = i >= k.post_begin ? kPost : (p.in_post ? kPost : phase[k.loop_of(i)]);
      if (in.op == Op::Const) {
        ids[i] = as_.emit(phase0, in);
        continue;
      }
      if (in.op == Op::LoopVar) {
        const Index& v = p.vars[in.arg];
        if (v->kind == IndexKind::Const) {
          Instr c;
          c.op = Op::Const;
          c.type = ScalarType::I64;
          ids[i] = as_.emit(phase0, c);
          continue;
        }
        in.arg = v->id;
        ids[i] = as_.emit(ph, in);
        continue;
      }
      remap_value_operands(&in, [&](int op) { return ids[op]; });
      if (in.op == Op::CheckIndex) in.arg += msg_base;
      if (in.index) in.index = mapped_index(in.index, p, ids);
      if (in.op == Op::Load || in.op == Op::Store) {
        Buffer* buf = src.args[in.arg];
        if (in.op == Op::Load && first_stores && this->first_stores(buf)) {
          const StoreRec* s = find_store(buf, in.index);
          if (!s) refuse("internal: a load of ", buf->name, " lost its store");
          const int v = resolve(*s, ph);
          if (v >= 0) {
            ids[i] = v;
            continue;
          }
        }
        in.arg = as_.arg_for(buf, k.args[in.arg]);
        ids[i] = as_.emit(ph, in);
        if (in.op == Op::Store && !first_stores)
          stores_[buf].push_back(StoreRec{buf, in.index, in.a, ph});
        continue;
      }
      ids[i] = as_.emit(ph, in);
    }
  }

  const BoundKernel& a_;
  const BoundKernel& b_;
  std::vector<int64_t> ranges_;
  std::optional<std::vector<Index>> sym_ranges_;
  int num_reduce_ = 0;
  std::unique_ptr<IndexSimplifier> simp_;
  Assembler as_;
  std::unordered_map<const Buffer*, std::vector<StoreRec>> stores_;  // the first kernel's
  std::map<int, int> depth_;
  std::map<std::pair<int, int>, int> remat_;
};

}  // namespace

std::string merge_kernels(const BoundKernel& first, const BoundKernel& second, BoundKernel* out) {
  try {
    *out = Merger(first, second).run();
    return "";
  } catch (const Refuse& r) {
    return r.reason;
  }
}

BoundKernel finalize_kernel(const BoundKernel& bk, const std::set<Buffer*>& internal) {
  const Kernel& k = bk.kernel;
  const int n = static_cast<int>(k.code.size());
  std::vector<bool> live(n, false);
  for (int i = n - 1; i >= 0; --i) {
    const Instr& in = k.code[i];
    if (in.op == Op::Store) live[i] = !internal.count(bk.args[in.arg]);
    if (in.op == Op::CheckIndex) live[i] = true;  // an index error is observable
    if (!live[i]) continue;
    for_each_operand(in, [&](int op) { live[op] = true; });
  }
  Assembler as;
  as.messages = k.messages;
  std::vector<int> ids(n, -1);
  for (int i = 0; i < n; ++i) {
    if (!live[i]) continue;
    Instr in = k.code[i];
    remap_operands(&in, [&](int op) { return ids[op]; });
    if (in.op == Op::Load || in.op == Op::Store)
      in.arg = as.arg_for(bk.args[in.arg], k.args[in.arg]);
    ids[i] = as.emit(i >= k.post_begin ? kPost : k.loop_of(i), std::move(in));
  }
  // An arg only stored to keeps its output flag; one only loaded loses it.
  for (KernelArg& a : as.kargs) a.output = false;
  for (const Assembler::Item& it : as.items)
    if (it.in.op == Op::Store) as.kargs[it.in.arg].output = true;
  return as.finish(k.name, k.ranges, k.num_reduce, bk.sym_ranges);
}

}  // namespace ferrite
