#include "compiler/schedule/loop_normalize.h"

#include <algorithm>
#include <cstdlib>
#include <numeric>
#include <vector>

#include "compiler/loopir/simplify.h"
#include "compiler/plan/loop_dims.h"
#include "compiler/plan/outer_order.h"

namespace ferrite {
namespace {

bool is_access(const Instr& in) {
  return in.op == Op::Load || in.op == Op::Store;
}

int64_t bytes_of(const Kernel& k, const Instr& in) {
  return static_cast<int64_t>(dtype_size(k.args[in.arg].dtype));
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
  return order == identity ? k : permute_outer_dims(k, order);
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
