#include "compiler/schedule/loop_normalize.h"

#include <algorithm>
#include <cstdlib>
#include <numeric>
#include <vector>

#include "compiler/loopir/simplify.h"
#include "compiler/plan/loop_dims.h"

namespace ferrite {
namespace {

bool is_access(const Instr& in) {
  return in.op == Op::Load || in.op == Op::Store;
}

int64_t bytes_of(const Kernel& k, const Instr& in) {
  return static_cast<int64_t>(dtype_size(k.args[in.arg].dtype));
}

// The elements of one arg that the accesses of a single outer point can touch: the
// offsets plus the reduction dims' spans, over every access of the arg.
struct Footprint {
  bool first = true;
  std::vector<int64_t> outer_coeff;
  int64_t lo = 0, hi = 0;
};

// Adds an affine access to fp; false when its outer coefficients differ from the earlier
// accesses' or the span overflows.
bool add_access(const Kernel& k, const LinearForm& f, Footprint* fp) {
  const int outer = k.num_outer();
  std::vector<int64_t> oc(f.coeff.begin(), f.coeff.begin() + outer);
  int64_t lo = f.offset, hi = f.offset;
  for (size_t d = outer; d < f.coeff.size(); ++d) {
    int64_t span;
    if (__builtin_mul_overflow(f.coeff[d], k.ranges[d] - 1, &span)) return false;
    int64_t* end = span < 0 ? &lo : &hi;
    if (__builtin_add_overflow(*end, span, end)) return false;
  }
  if (fp->first) {
    fp->first = false;
    fp->outer_coeff = oc;
    fp->lo = lo;
    fp->hi = hi;
    return true;
  }
  fp->lo = std::min(fp->lo, lo);
  fp->hi = std::max(fp->hi, hi);
  return fp->outer_coeff == oc;
}

// Do distinct outer points touch disjoint elements? With strides sorted by size, each must
// step over everything the smaller ones and one point's footprint can reach.
bool outer_points_apart(const Kernel& k, const Footprint& fp) {
  std::vector<std::pair<int64_t, int64_t>> dims;  // |stride|, range
  for (int d = 0; d < k.num_outer(); ++d) {
    if (k.ranges[d] == 1) continue;
    if (fp.outer_coeff[d] == INT64_MIN) return false;
    dims.push_back({std::llabs(fp.outer_coeff[d]), k.ranges[d]});
  }
  std::sort(dims.begin(), dims.end());
  int64_t reach;  // the largest distance between two elements reachable so far
  if (__builtin_sub_overflow(fp.hi, fp.lo, &reach)) return false;
  for (const auto& [stride, range] : dims) {
    int64_t span;
    if (stride <= reach) return false;
    if (__builtin_mul_overflow(stride, range - 1, &span) ||
        __builtin_add_overflow(reach, span, &reach))
      return false;
  }
  return true;
}

// Bytes of affine stores and loads that walk each outer dim with stride 1; the largest
// affine store (its instruction, or -1).
struct Contiguity {
  std::vector<int64_t> store_bytes, load_bytes;
  int main_store = -1;
};

Contiguity contiguity(const Kernel& k, const std::vector<LinearForm>& forms) {
  Contiguity c;
  const int outer = k.num_outer();
  c.store_bytes.assign(outer, 0);
  c.load_bytes.assign(outer, 0);
  int64_t main_bytes = 0;
  for (size_t i = 0; i < k.code.size(); ++i) {
    const Instr& in = k.code[i];
    if (!is_access(in) || !forms[i].terms.empty()) continue;
    const int64_t bytes = bytes_of(k, in);
    const bool store = in.op == Op::Store;
    for (int d = 0; d < outer; ++d)
      if (forms[i].coeff[d] == 1) (store ? c.store_bytes : c.load_bytes)[d] += bytes;
    if (store && bytes > main_bytes) {
      main_bytes = bytes;
      c.main_store = static_cast<int>(i);
    }
  }
  return c;
}

// The kernel with its outer dims in `order` (order[new position] = old dim).
Kernel permute_outer(const Kernel& k, const std::vector<int>& order) {
  const int dims = static_cast<int>(k.ranges.size());
  DimMap m;
  m.num_reduce = k.num_reduce;
  m.coeff.resize(dims);
  m.loop_var.resize(dims);
  std::vector<int> pos(dims);
  for (int d = 0; d < dims; ++d) pos[d] = d < k.num_outer() ? -1 : d;
  for (size_t p = 0; p < order.size(); ++p) pos[order[p]] = static_cast<int>(p);
  for (int d = 0; d < dims; ++d) {
    m.coeff[d] = {{pos[d], 1}};
    m.loop_var[d] = pos[d];
  }
  for (int p = 0; p < dims; ++p) m.ranges.push_back(k.ranges[p < k.num_outer() ? order[p] : p]);
  return remap_dims(k, m);
}

// FloorDiv and Mod nodes left in k's indices.
int divmod_count(const Kernel& k) {
  int n = 0;
  const std::vector<LinearForm> forms = index_forms(k);
  for (size_t i = 0; i < forms.size(); ++i) {
    if (!is_access(k.code[i])) continue;
    for_each_form(forms[i], [&](const LinearForm& f) {
      for (const LinearTerm& t : f.terms)
        n += t.kind == IndexKind::FloorDiv || t.kind == IndexKind::Mod;
    });
  }
  return n;
}

bool is_constant(const LinearForm& f, int64_t* c) {
  for (int64_t x : f.coeff)
    if (x != 0) return false;
  *c = f.offset;
  return f.terms.empty();
}

// (dim, q) pairs where an index divides c*x_dim by a multiple D of c (q = D / c) and q
// splits the dim's range.
std::vector<std::pair<int, int64_t>> split_candidates(const Kernel& k) {
  std::vector<std::pair<int, int64_t>> out;
  const std::vector<LinearForm> forms = index_forms(k);
  const std::vector<bool> loop_vars = loop_var_uses(k);
  auto consider = [&](const LinearTerm& t) {
    int64_t divisor;
    if ((t.kind != IndexKind::FloorDiv && t.kind != IndexKind::Mod) ||
        !is_constant(t.operands[1], &divisor) || divisor <= 1)
      return;
    const std::vector<int64_t>& c = t.operands[0].coeff;
    for (size_t d = 0; d < c.size(); ++d) {
      if (c[d] <= 0 || divisor % c[d] != 0 || loop_vars[d]) continue;
      const int64_t q = divisor / c[d], r = k.ranges[d];
      const std::pair<int, int64_t> cand{static_cast<int>(d), q};
      if (q > 1 && q < r && r % q == 0 && std::find(out.begin(), out.end(), cand) == out.end())
        out.push_back(cand);
    }
  };
  for (size_t i = 0; i < forms.size(); ++i) {
    if (!is_access(k.code[i])) continue;
    for_each_form(forms[i], [&](const LinearForm& f) {
      for (const LinearTerm& t : f.terms) consider(t);
    });
  }
  return out;
}

// Dim d as (x // q, x % q), indices simplified over the new ranges.
Kernel split_dim(const Kernel& k, int d, int64_t q) {
  const int dims = static_cast<int>(k.ranges.size());
  DimMap m;
  m.ranges = k.ranges;
  m.ranges[d] = k.ranges[d] / q;
  m.ranges.insert(m.ranges.begin() + d + 1, q);
  m.num_reduce = k.num_reduce + (d >= k.num_outer() ? 1 : 0);
  m.coeff.resize(dims);
  m.loop_var.resize(dims);
  for (int v = 0; v < dims; ++v) {
    const int to = v < d ? v : v + 1;
    m.coeff[v] = {{to, 1}};
    m.loop_var[v] = to;
  }
  m.coeff[d] = {{d, q}, {d + 1, 1}};
  m.loop_var[d] = kNoLoopVar;
  Kernel out = remap_dims(k, m);
  const IndexSimplifier simp(out.ranges);
  for (Instr& in : out.code)
    if (is_access(in)) in.index = simp.simplify(in.index);
  validate_kernel(out);
  return out;
}

}  // namespace

bool outer_points_commute(const Kernel& k) {
  for (int64_t r : k.ranges)
    if (r == 0) return false;  // nothing runs: nothing to gain
  const std::vector<LinearForm> forms = index_forms(k);
  std::vector<bool> stored(k.args.size(), false);
  for (const Instr& in : k.code) {
    if (in.op == Op::CheckIndex) return false;
    if (in.op == Op::Store) stored[in.arg] = true;
  }
  std::vector<Footprint> fp(k.args.size());
  for (size_t i = 0; i < k.code.size(); ++i) {
    const Instr& in = k.code[i];
    if (!is_access(in) || !stored[in.arg]) continue;
    if (!forms[i].terms.empty() || !add_access(k, forms[i], &fp[in.arg])) return false;
  }
  for (size_t a = 0; a < k.args.size(); ++a)
    if (stored[a] && !outer_points_apart(k, fp[a])) return false;
  return true;
}

Kernel reorder_outer_dims(const Kernel& k) {
  const int outer = k.num_outer();
  if (outer < 2 || !outer_points_commute(k)) return k;
  const std::vector<LinearForm> forms = index_forms(k);
  const Contiguity c = contiguity(k, forms);
  auto score = [&](int d) { return std::make_pair(c.store_bytes[d], c.load_bytes[d]); };
  int inner = outer - 1;
  for (int d = outer - 2; d >= 0; --d)
    if (score(d) > score(inner)) inner = d;
  std::vector<int> order;
  for (int d = 0; d < outer; ++d)
    if (d != inner) order.push_back(d);
  if (c.main_store >= 0) {
    const std::vector<int64_t>& sc = forms[c.main_store].coeff;
    std::stable_sort(order.begin(), order.end(),
                     [&](int x, int y) { return std::llabs(sc[x]) > std::llabs(sc[y]); });
  }
  order.push_back(inner);
  std::vector<int> identity(outer);
  std::iota(identity.begin(), identity.end(), 0);
  return order == identity ? k : permute_outer(k, order);
}

Kernel tile_transpose(const Kernel& k, const LoopNormalizeOptions& options) {
  const int dims = static_cast<int>(k.ranges.size());
  const int64_t tile = options.transpose_tile;
  if (tile < 2 || k.num_reduce != 0 || dims < 2) return k;
  const int s = dims - 1;
  if (k.ranges[s] < options.transpose_min_row || !outer_points_commute(k)) return k;
  const std::vector<LinearForm> forms = index_forms(k);
  const Contiguity c = contiguity(k, forms);
  if (c.main_store < 0 || forms[c.main_store].coeff[s] != 1) return k;
  std::vector<int64_t> bytes(s, 0);  // loads contiguous along l, strided along s
  for (size_t i = 0; i < k.code.size(); ++i) {
    const LinearForm& f = forms[i];
    if (k.code[i].op != Op::Load || !f.terms.empty() || std::llabs(f.coeff[s]) <= 1) continue;
    const KernelArg& arg = k.args[k.code[i].arg];
    if (arg.elements * static_cast<int64_t>(dtype_size(arg.dtype)) < options.transpose_min_bytes)
      continue;
    for (int l = 0; l < s; ++l)
      if (f.coeff[l] == 1) bytes[l] += bytes_of(k, k.code[i]);
  }
  const int l = static_cast<int>(std::max_element(bytes.begin(), bytes.end()) - bytes.begin());
  const std::vector<bool> loop_vars = loop_var_uses(k);
  if (bytes[l] == 0 || k.ranges[s] % tile != 0 || k.ranges[l] % tile != 0 || loop_vars[s] ||
      loop_vars[l])
    return k;
  // Old dim d keeps position d (l and s as their outer halves); the tile goes last.
  DimMap m;
  m.ranges = k.ranges;
  m.ranges[l] /= tile;
  m.ranges[s] /= tile;
  m.ranges.push_back(tile);
  m.ranges.push_back(tile);
  m.coeff.resize(dims);
  m.loop_var.resize(dims);
  for (int d = 0; d < dims; ++d) {
    m.coeff[d] = {{d, 1}};
    m.loop_var[d] = d;
  }
  m.coeff[l] = {{l, tile}, {dims, 1}};
  m.coeff[s] = {{s, tile}, {dims + 1, 1}};
  m.loop_var[l] = m.loop_var[s] = kNoLoopVar;
  return remap_dims(k, m);
}

Kernel split_divmod_dims(const Kernel& validated) {
  Kernel k = validated;
  for (int count = divmod_count(k); count > 0;) {
    Kernel best;
    int best_count = count;
    for (const auto& [d, q] : split_candidates(k)) {
      Kernel split = split_dim(k, d, q);
      const int n = divmod_count(split);
      if (n < best_count) {
        best = std::move(split);
        best_count = n;
      }
    }
    if (best_count == count) break;
    k = std::move(best);
    count = best_count;
  }
  return k;
}

Kernel normalize_loops(const Kernel& validated, const LoopNormalizeOptions& options) {
  Kernel k = merge_loop_dims(split_divmod_dims(merge_loop_dims(validated)));
  k = merge_loop_dims(reorder_outer_dims(k));
  if (options.transpose_tile > 0) k = merge_loop_dims(tile_transpose(k, options));
  return k;
}

}  // namespace ferrite
