// The ai.onnx.ml ops that scikit-learn exports write, on numeric tensors: Binarizer,
// ArrayFeatureExtractor and TreeEnsemble (opset 5).
//
// TreeEnsemble: every tree (its root in tree_roots) is walked per sample, one step per level
// up to the deepest leaf, in one kernel over [samples, trees]: at each step the node's
// feature, split, mode and branches are gathered from constant tables, x[sample, feature]
// is compared (x <= split, <, >=, >, ==, != or, for BRANCH_MEMBER, membership in the node's
// set: membership_values cut at its NaNs, one set per member node in node order), and the
// walk moves to the chosen node or stops at the chosen leaf; a NaN x goes the way
// nodes_missing_value_tracks_true says (false by default).
// Then per target, the leaves' weights of every tree aggregated (aggregate_function SUM,
// AVERAGE, MIN or MAX; a target no tree reaches is 0, as onnxruntime gives it);
// post_transform NONE only (onnxruntime and the spec number the others differently).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <tuple>

#include "compiler/lower/lowering.h"
#include "compiler/lower/ml_common.h"

namespace ferrite {
namespace {

using ml::cast_to;
using ml::doubles;
using ml::float_values;
using ml::post_transformed;
using ml::samples;
using ml::table;

constexpr const char* kMl = "ai.onnx.ml.";

std::vector<TensorBoxPtr> lower_binarizer(LowerCtx& c) {
  const TensorBoxPtr& x = c.input(0);
  const double threshold = c.node.attr_float("threshold", 0.0);
  return {make_pointwise(c, {x}, x->dtype, [threshold](KernelBuilder& b, const std::vector<V>& v) {
    return b.where(b.binary(Op::Gt, v[0], b.constant(v[0].type, threshold)),
                   b.constant(v[0].type, 1), b.constant(v[0].type, 0));
  })};
}

// Z[..., k] = X[..., Y[k]] over Y's elements in order; a 1-D X gives [1, K].
std::vector<TensorBoxPtr> lower_array_feature_extractor(LowerCtx& c) {
  const TensorBoxPtr &x = c.input(0), &y = c.input(1);
  if (x->size.empty()) c.error("X must have rank >= 1");
  if (y->dtype != DType::I64) c.error("Y must be int64, got ", dtype_name(y->dtype));
  const int64_t k = y->elements(), columns = x->size.back();
  const TensorBoxPtr flat = reshape_view(y, {k});
  std::vector<int64_t> out = x->size;
  out.back() = k;
  Loader fn = [x, flat, columns](KernelBuilder& b, const std::vector<Index>& i) {
    const V at = b.check_index(flat->load(b, {i.back()}), columns,
                               "ArrayFeatureExtractor: an index of Y outside X's last dim");
    std::vector<Index> xi(i.begin(), i.end() - 1);
    xi.push_back(ix_value(at.id));
    return x->load(b, xi);
  };
  TensorBoxPtr z = make_pointwise_box(x->dtype, out, fn, c.origin());
  if (x->size.size() == 1) z = reshape_view(z, {1, k});
  return {z};
}

// The trees as tables, checked: every branch inside the node or leaf arrays, no cycle.
struct Forest {
  std::vector<int64_t> feature, mode, true_id, true_leaf, false_id, false_leaf, member_row, missing;
  std::vector<double> split;
  std::vector<std::vector<double>> members;  // one set per BRANCH_MEMBER node
  std::vector<int64_t> roots;
  std::vector<double> leaf_root;  // per node: 1 for a root that is itself the leaf at its index
  // The leaves' weights per target, dense: weight[leaf * targets + t], and whether the leaf
  // holds target t at all.
  int64_t leaves = 0, targets = 0;
  std::vector<double> weight, holds;
  int64_t depth = 0;  // steps to the deepest leaf

  // The dense leaf tables: n leaves by t targets, at most kMaxLeafEntries entries.
  void size_leaves(const LowerCtx& c, int64_t n, int64_t t) {
    constexpr int64_t kMaxLeafEntries = int64_t{1} << 24;
    if (t <= 0 || t > kMaxLeafEntries || n > kMaxLeafEntries / t)
      c.error("leaf tables of ", n, " leaves by ", t, " targets (at most 2^24 entries)");
    leaves = n;
    targets = t;
    weight.assign(static_cast<size_t>(n * t), 0.0);
    holds = weight;
  }
};

// Adds weight w for target t to leaf l.
void add_leaf_weight(const LowerCtx& c, Forest* f, int64_t l, int64_t t, double w) {
  if (l < 0 || l >= f->leaves) c.error("a weight for leaf ", l, " of ", f->leaves);
  if (t < 0 || t >= f->targets) c.error("a leaf's target ", t, " is outside ", f->targets);
  const size_t at = static_cast<size_t>(l * f->targets + t);
  f->weight[at] += w;
  f->holds[at] = 1;
}

// Checks every branch and fills f's depth by walking down from each root (a walk longer
// than the node count is a cycle).
void walk_depths(const LowerCtx& c, Forest* f) {
  const size_t n = f->feature.size();
  for (size_t i = 0; i < n; ++i)  // past X's features: checked when the tree reads one
    if (f->feature[i] < 0) c.error("node ", i, " reads feature ", f->feature[i]);
  for (size_t i = 0; i < n; ++i) {
    for (const auto& [id, leaf] :
         {std::pair{f->true_id[i], f->true_leaf[i]}, std::pair{f->false_id[i], f->false_leaf[i]}}) {
      const size_t limit = leaf ? static_cast<size_t>(f->leaves) : n;
      if (id < 0 || static_cast<size_t>(id) >= limit)
        c.error("node ", i, " branches to ", leaf ? "leaf " : "node ", id, " of ", limit);
    }
  }
  if (f->roots.empty()) c.error("there are no trees");
  for (int64_t root : f->roots) {
    if (root < 0 || static_cast<size_t>(root) >= n) c.error("tree root ", root, " of ", n);
    if (f->leaf_root[static_cast<size_t>(root)] != 0) continue;
    std::vector<std::pair<int64_t, int64_t>> stack{{root, 1}};
    while (!stack.empty()) {
      const auto [node, d] = stack.back();
      stack.pop_back();
      if (d > static_cast<int64_t>(n)) c.error("the trees have a cycle through node ", node);
      f->depth = std::max(f->depth, d);
      const size_t i = static_cast<size_t>(node);
      if (!f->true_leaf[i]) stack.push_back({f->true_id[i], d + 1});
      if (!f->false_leaf[i]) stack.push_back({f->false_id[i], d + 1});
    }
  }
}

// TreeEnsemble (ai.onnx.ml 5): interior nodes in nodes_*, leaves in leaf_*.
Forest read_forest(const LowerCtx& c) {
  Forest f;
  f.feature = c.node.attr_ints("nodes_featureids");
  f.true_id = c.node.attr_ints("nodes_truenodeids");
  f.true_leaf = c.node.attr_ints("nodes_trueleafs");
  f.false_id = c.node.attr_ints("nodes_falsenodeids");
  f.false_leaf = c.node.attr_ints("nodes_falseleafs");
  f.roots = c.node.attr_ints("tree_roots");
  f.missing = c.node.attr_ints("nodes_missing_value_tracks_true",
                               std::vector<int64_t>(f.feature.size(), 0));
  f.split = float_values(c, "nodes_splits");
  const std::vector<int64_t> leaf_target = c.node.attr_ints("leaf_targetids");
  const std::vector<double> leaf_weight = float_values(c, "leaf_weights");
  const size_t n = f.feature.size();
  if (c.node.has_attr("nodes_modes")) {
    const auto m = c.node.attr_tensor("nodes_modes");
    for (int64_t i = 0; i < m->elements(); ++i) f.mode.push_back(m->int_at(i));
  }
  for (const auto* v :
       {&f.true_id, &f.true_leaf, &f.false_id, &f.false_leaf, &f.mode, &f.missing}) {
    if (v->size() != n) c.error("the nodes_* attributes must all have ", n, " entries");
  }
  if (f.split.size() != n) c.error("nodes_splits must have ", n, " entries");
  if (leaf_weight.size() != leaf_target.size())
    c.error("leaf_weights and leaf_targetids differ in length");
  const int64_t targets = c.node.attr_int("n_targets", 0);
  if (targets <= 0) c.error("n_targets must be positive");
  f.size_leaves(c, static_cast<int64_t>(leaf_target.size()), targets);
  for (size_t l = 0; l < leaf_target.size(); ++l)
    add_leaf_weight(c, &f, static_cast<int64_t>(l), leaf_target[l], leaf_weight[l]);
  const std::vector<double> all_members = float_values(c, "membership_values");
  size_t next = 0;
  f.member_row.assign(n, -1);
  for (size_t i = 0; i < n; ++i) {
    if (f.mode[i] < 0 || f.mode[i] > 6) c.error("nodes_modes[", i, "] = ", f.mode[i], " (0 to 6)");
    if (f.true_leaf[i] < 0 || f.true_leaf[i] > 1 || f.false_leaf[i] < 0 || f.false_leaf[i] > 1)
      c.error("nodes_trueleafs and nodes_falseleafs must be 0 or 1");
    if (f.mode[i] != 6) continue;
    std::vector<double> set;
    while (next < all_members.size() && !std::isnan(all_members[next]))
      set.push_back(all_members[next++]);
    ++next;  // the NaN that ends the set
    f.member_row[i] = static_cast<int64_t>(f.members.size());
    f.members.push_back(std::move(set));
  }
  // A root whose two branches are one leaf is that tree's leaf itself, at the root's index
  // (as ONNX's reference reads it).
  f.leaf_root.assign(n, 0);
  for (int64_t r : f.roots) {
    if (r < 0 || static_cast<size_t>(r) >= n) c.error("tree root ", r, " of ", n);
    const size_t i = static_cast<size_t>(r);
    if (f.true_leaf[i] && f.false_leaf[i] && f.true_id[i] == f.false_id[i]) {
      if (r >= f.leaves) c.error("tree root ", r, " is a leaf but there are ", f.leaves, " leaves");
      f.leaf_root[i] = 1;
    }
  }
  walk_depths(c, &f);
  return f;
}

// TreeEnsembleRegressor and TreeEnsembleClassifier (ai.onnx.ml 1 and 3, what scikit-learn
// exporters write; their leaves' weights in `prefix`_* attributes, "target" or "class"): every
// node, leaves included (mode "LEAF"), named by (tree id, node id); a tree's root is its node no
// other node branches to; the leaves' weights come as (tree, node, target, weight) entries,
// several per leaf for several targets.
Forest read_legacy_forest(const LowerCtx& c, const std::string& prefix, int64_t targets) {
  Forest f;
  const std::vector<int64_t> trees = c.node.attr_ints("nodes_treeids"),
                             ids = c.node.attr_ints("nodes_nodeids"),
                             true_ids = c.node.attr_ints("nodes_truenodeids"),
                             false_ids = c.node.attr_ints("nodes_falsenodeids");
  f.feature = c.node.attr_ints("nodes_featureids");
  const size_t n = trees.size();
  std::vector<std::string> modes;
  if (c.node.has_attr("nodes_modes")) modes = c.node.attrs.at("nodes_modes").strings;
  f.split = float_values(
      c, c.node.has_attr("nodes_values_as_tensor") ? "nodes_values_as_tensor" : "nodes_values");
  f.missing = c.node.attr_ints("nodes_missing_value_tracks_true", std::vector<int64_t>(n, 0));
  if (ids.size() != n || true_ids.size() != n || false_ids.size() != n || f.feature.size() != n ||
      modes.size() != n || f.split.size() != n || f.missing.size() != n)
    c.error("the nodes_* attributes must all have ", n, " entries");
  std::map<std::pair<int64_t, int64_t>, int64_t> index;  // (tree, node) -> position
  for (size_t i = 0; i < n; ++i) {
    if (!index.emplace(std::pair{trees[i], ids[i]}, static_cast<int64_t>(i)).second)
      c.error("tree ", trees[i], " has two nodes ", ids[i]);
  }
  static const std::map<std::string, int64_t> kModes{
      {"BRANCH_LEQ", 0}, {"BRANCH_LT", 1},  {"BRANCH_GTE", 2}, {"BRANCH_GT", 3},
      {"BRANCH_EQ", 4},  {"BRANCH_NEQ", 5}, {"LEAF", -1}};
  std::vector<bool> leaf(n), child(n);
  for (size_t i = 0; i < n; ++i) {
    auto m = kModes.find(modes[i]);
    if (m == kModes.end()) c.unsupported("node mode '", modes[i], "'");
    leaf[i] = m->second < 0;
    f.mode.push_back(std::max<int64_t>(m->second, 0));
  }
  f.size_leaves(c, static_cast<int64_t>(n), targets);  // a leaf's id: its position
  for (size_t i = 0; i < n; ++i) {
    for (const auto& [branch, id, is_leaf] :
         {std::tuple{&f.true_id, true_ids[i], &f.true_leaf},
          std::tuple{&f.false_id, false_ids[i], &f.false_leaf}}) {
      int64_t at = 0;
      if (!leaf[i]) {
        auto it = index.find({trees[i], id});
        if (it == index.end()) c.error("tree ", trees[i], " has no node ", id);
        at = it->second;
        child[static_cast<size_t>(at)] = true;
      }
      branch->push_back(at);
      is_leaf->push_back(leaf[static_cast<size_t>(at)] ? 1 : 0);
    }
  }
  f.leaf_root.assign(n, 0);
  std::map<int64_t, int64_t> root_of;  // tree -> its root
  for (size_t i = 0; i < n; ++i) {
    if (child[i]) continue;
    if (!root_of.emplace(trees[i], static_cast<int64_t>(i)).second)
      c.error("tree ", trees[i], " has more than one root");
    f.roots.push_back(static_cast<int64_t>(i));
    f.leaf_root[i] = leaf[i] ? 1 : 0;
  }
  const std::vector<int64_t> t_trees = c.node.attr_ints(prefix + "_treeids"),
                             t_nodes = c.node.attr_ints(prefix + "_nodeids"),
                             t_ids = c.node.attr_ints(prefix + "_ids");
  const std::vector<double> t_weights =
      float_values(c, c.node.has_attr(prefix + "_weights_as_tensor") ? prefix + "_weights_as_tensor"
                                                                     : prefix + "_weights");
  if (t_nodes.size() != t_trees.size() || t_ids.size() != t_trees.size() ||
      t_weights.size() != t_trees.size())
    c.error("the ", prefix, "_* attributes must all have ", t_trees.size(), " entries");
  for (size_t k = 0; k < t_trees.size(); ++k) {
    auto it = index.find({t_trees[k], t_nodes[k]});
    if (it == index.end() || !leaf[static_cast<size_t>(it->second)])
      c.error("a ", prefix, " weight for tree ", t_trees[k], " node ", t_nodes[k], ", not a leaf");
    add_leaf_weight(c, &f, it->second, t_ids[k], t_weights[k]);
  }
  f.member_row.assign(n, -1);
  walk_depths(c, &f);
  return f;
}

// Per (sample, tree): the leaf the tree's walk ends at.
TensorBoxPtr leaves(LowerCtx& c, const Forest& f, const TensorBoxPtr& x) {
  const int64_t nodes = static_cast<int64_t>(f.feature.size());
  const int64_t features = x->size[1], width = [&] {
    size_t w = 1;
    for (const auto& s : f.members) w = std::max(w, s.size());
    return static_cast<int64_t>(w);
  }();
  std::vector<double> member_table(std::max<size_t>(f.members.size(), 1) * width, NAN);
  for (size_t r = 0; r < f.members.size(); ++r)
    std::copy(f.members[r].begin(), f.members[r].end(), member_table.begin() + r * width);
  GraphLowering& gl = c.gl;
  const std::string o = c.origin();
  const TensorBoxPtr feature = table(gl, doubles(f.feature), false, o + " features"),
                     mode = table(gl, doubles(f.mode), false, o + " modes"),
                     split = table(gl, f.split, true, o + " splits"),
                     tid = table(gl, doubles(f.true_id), false, o + " true ids"),
                     tleaf = table(gl, doubles(f.true_leaf), false, o + " true leaves"),
                     fid = table(gl, doubles(f.false_id), false, o + " false ids"),
                     fleaf = table(gl, doubles(f.false_leaf), false, o + " false leaves"),
                     row = table(gl, doubles(f.member_row), false, o + " member rows"),
                     members = table(gl, member_table, true, o + " members"),
                     roots = table(gl, doubles(f.roots), false, o + " roots"),
                     missing = table(gl, doubles(f.missing), false, o + " missing");
  const TensorBoxPtr root_leaf = table(gl, f.leaf_root, false, o + " root leaves");
  const int64_t depth = f.depth,
                sets = std::max<int64_t>(static_cast<int64_t>(f.members.size()), 1);
  Loader fn = [=](KernelBuilder& b, const std::vector<Index>& i) {
    auto at = [&b](const TensorBoxPtr& t, V index) { return t->load(b, {ix_value(index.id)}); };
    V node = b.check_index(roots->load(b, {i[1]}), nodes, "TreeEnsemble: a root");
    // A root that is itself a leaf (Forest::leaf_root) ends the walk at once.
    V done = b.unary(Op::Not, b.binary(Op::Eq, at(root_leaf, node), b.constant_i64(0)));
    V leaf = node;
    for (int64_t step = 0; step < depth; ++step) {
      const V fi = b.check_index(at(feature, node), features, "TreeEnsemble: a feature id");
      const V xv = b.cast(x->load(b, {i[0], ix_value(fi.id)}), ScalarType::F64);
      const V s = at(split, node), m = at(mode, node);
      auto is = [&](int64_t k) { return b.binary(Op::Eq, m, b.constant_i64(k)); };
      V cond = b.where(is(0), b.binary(Op::Le, xv, s), b.binary(Op::Lt, xv, s));
      cond = b.where(is(2), b.binary(Op::Ge, xv, s), cond);
      cond = b.where(is(3), b.binary(Op::Gt, xv, s), cond);
      cond = b.where(is(4), b.binary(Op::Eq, xv, s), cond);
      cond = b.where(is(5), b.unary(Op::Not, b.binary(Op::Eq, xv, s)), cond);
      // Membership: x equal to one entry of the node's row (NaN pads never equal).
      const V r = b.check_index(b.binary(Op::Max, at(row, node), b.constant_i64(0)), sets,
                                "TreeEnsemble: a membership row");
      V member = b.constant(ScalarType::Bool, 0);
      for (int64_t k = 0; k < width; ++k) {
        const V e =
            b.binary(Op::Add, b.binary(Op::Mul, r, b.constant_i64(width)), b.constant_i64(k));
        member = b.binary(Op::Or, member, b.binary(Op::Eq, xv, members->load(b, {ix_value(e.id)})));
      }
      cond = b.where(is(6), member, cond);
      // A missing (NaN) x goes where nodes_missing_value_tracks_true says.
      cond =
          b.where(b.unary(Op::IsNaN, xv),
                  b.unary(Op::Not, b.binary(Op::Eq, at(missing, node), b.constant_i64(0))), cond);
      const V next = b.where(cond, at(tid, node), at(fid, node));
      const V to_leaf = b.unary(
          Op::Not,
          b.binary(Op::Eq, b.where(cond, at(tleaf, node), at(fleaf, node)), b.constant_i64(0)));
      const V now = b.binary(Op::And, b.unary(Op::Not, done), to_leaf);
      leaf = b.where(now, next, leaf);
      done = b.binary(Op::Or, done, to_leaf);
      if (step + 1 < depth)
        node = b.check_index(b.where(done, node, next), nodes, "TreeEnsemble: a node id");
    }
    return leaf;
  };
  TensorBoxPtr t = make_pointwise_box(
      DType::I64, {x->size[0], static_cast<int64_t>(f.roots.size())}, fn, c.origin());
  c.gl.realize(t);
  return t;
}

// Per (sample, target): the trees' leaf weights aggregated (aggregate: 0 AVERAGE, 1 SUM,
// 2 MIN, 3 MAX, from +-inf), in the trees in order, in float32 unless x is float64 (as
// onnxruntime sums them: a label decided on a sum's last bit is its label), and, with
// `count`, how many trees reach a leaf holding the target (float64); realized.
struct TreeScores {
  TensorBoxPtr value, reached;
  DType type = DType::F32;  // value's

  // Value at i as float64; rounded(v): v (float64) rounded to value's type and back.
  V at(KernelBuilder& b, const std::vector<Index>& i) const {
    return b.cast(value->load(b, i), ScalarType::F64);
  }
  V rounded(KernelBuilder& b, V v) const {
    return type == DType::F64 ? v : b.cast(b.cast(v, ScalarType::F32), ScalarType::F64);
  }
};
TreeScores tree_scores(LowerCtx& c, const Forest& f, const TensorBoxPtr& x, int64_t aggregate,
                       bool count) {
  const TensorBoxPtr leaf = leaves(c, f, x);
  const TensorBoxPtr weight = table(c.gl, f.weight, true, c.origin() + " weights");
  const TensorBoxPtr holds = table(c.gl, f.holds, true, c.origin() + " weight holders");
  const int64_t n_leaves = f.leaves, targets = f.targets;
  const double trees = static_cast<double>(f.roots.size());
  const double none = aggregate == 2 ? INFINITY : aggregate == 3 ? -INFINITY : 0.0;
  const DType acc = x->dtype == DType::F64 ? DType::F64 : DType::F32;
  const ScalarType st = compute_type(acc);
  auto leaf_entry = [=](KernelBuilder& b, const std::vector<Index>& o, const std::vector<Index>& r,
                        const TensorBoxPtr& t) {
    const V l = b.check_index(leaf->load(b, {o[0], r[0]}), n_leaves, "TreeEnsemble: a leaf id");
    return t->load(b, {ix_add(ix_mul(ix_value(l.id), targets), o[1])});
  };
  auto def = std::make_shared<ComputedDef>();
  def->is_reduction = true;
  def->ranges = {x->size[0], targets};
  def->reduction_ranges = {static_cast<int64_t>(f.roots.size())};
  def->reduce = aggregate == 2   ? ReduceKind::Min
                : aggregate == 3 ? ReduceKind::Max
                                 : ReduceKind::Sum;
  def->rfn = [=](KernelBuilder& b, const std::vector<Index>& o, const std::vector<Index>& r) {
    const V held = b.unary(
        Op::Not, b.binary(Op::Eq, leaf_entry(b, o, r, holds), b.constant(ScalarType::F64, 0)));
    return b.where(held, b.cast(leaf_entry(b, o, r, weight), st), b.constant(st, none));
  };
  def->origin = c.origin();
  if (aggregate == 0)
    def->post = [trees](KernelBuilder& b, V v) {
      return b.binary(Op::Div, v, b.constant(v.type, trees));
    };
  TreeScores out;
  out.type = acc;
  out.value = make_reduction_box(acc, def);
  c.gl.realize(out.value);
  if (count) {
    auto n = std::make_shared<ComputedDef>(*def);
    n->reduce = ReduceKind::Sum;
    n->post = nullptr;
    n->rfn = [=](KernelBuilder& b, const std::vector<Index>& o, const std::vector<Index>& r) {
      return leaf_entry(b, o, r, holds);
    };
    out.reached = make_reduction_box(DType::F64, n);
    c.gl.realize(out.reached);
  }
  return out;
}

// The trees' leaves aggregated per target (a target no tree reaches is 0, as onnxruntime
// gives it), plus `base` per target (empty: none), then `post`, as `out`.
TensorBoxPtr aggregated(LowerCtx& c, const Forest& f, const TensorBoxPtr& x, int64_t aggregate,
                        const std::vector<double>& base, const std::string& post, DType out) {
  const TreeScores s = tree_scores(c, f, x, aggregate, aggregate >= 2);
  const int64_t targets = f.targets;
  std::vector<double> base_full(static_cast<size_t>(targets), 0.0);
  if (!base.empty()) {
    if (base.size() != base_full.size()) c.error("base_values must have ", targets, " entries");
    base_full = base;
  }
  const TensorBoxPtr base_t = table(c.gl, base_full, true, c.origin() + " base values");
  TensorBoxPtr z = make_pointwise_box(
      DType::F64, {x->size[0], targets},
      [s, base_t](KernelBuilder& b, const std::vector<Index>& i) {
        V r = s.at(b, i);
        if (s.reached)
          r = b.where(b.binary(Op::Gt, s.reached->load(b, i), b.constant(ScalarType::F64, 0)), r,
                      b.constant(ScalarType::F64, 0));
        return s.rounded(b, b.binary(Op::Add, r, base_t->load(b, {i[1]})));
      },
      c.origin());
  return cast_to(c, post_transformed(c, z, post), out);
}

std::vector<TensorBoxPtr> lower_tree_ensemble(LowerCtx& c) {
  const TensorBoxPtr& x = samples(c);
  const int64_t aggregate = c.node.attr_int("aggregate_function", 1);
  const int64_t post = c.node.attr_int("post_transform", 0);
  if (aggregate < 0 || aggregate > 3) c.error("aggregate_function ", aggregate, " (0 to 3)");
  // The spec numbers SOFTMAX 1 and LOGISTIC 2; onnxruntime 1.30 applies LOGISTIC for 1 and
  // SOFTMAX for 2, and ONNX's reference applies none: a model's intent is unknowable.
  if (post != 0)
    c.unsupported("post_transform ", post,
                  " (only NONE: onnxruntime and the ONNX spec number the others differently)");
  if (!dtype_is_float(x->dtype)) c.unsupported("TreeEnsemble on ", dtype_name(x->dtype));
  return {aggregated(c, read_forest(c), x, aggregate, {}, "NONE", x->dtype)};
}

std::vector<TensorBoxPtr> lower_tree_ensemble_regressor(LowerCtx& c) {
  const TensorBoxPtr& x = samples(c);
  static const std::map<std::string, int64_t> kAggregates{
      {"AVERAGE", 0}, {"SUM", 1}, {"MIN", 2}, {"MAX", 3}};
  const std::string agg = c.node.attr_string("aggregate_function", "SUM");
  auto a = kAggregates.find(agg);
  if (a == kAggregates.end()) c.error("aggregate_function '", agg, "'");
  const std::vector<double> base = float_values(
      c, c.node.has_attr("base_values_as_tensor") ? "base_values_as_tensor" : "base_values");
  const int64_t targets = c.node.attr_int("n_targets", 0);
  if (targets <= 0) c.error("n_targets must be positive");
  return {aggregated(c, read_legacy_forest(c, "target", targets), x, a->second, base,
                     c.node.attr_string("post_transform", "NONE"), DType::F32)};
}

// TreeEnsembleClassifier with int64 labels: per class the trees' leaf weights summed (plus
// base_values; a class neither reached nor given a base value scores 0 and is never the
// label). More than two classes: the label is the first best-scoring class, the scores go
// through post_transform. Two classes whose weights all name one class (scikit-learn's
// binary form), as onnxruntime reads them: the positive score s (class 1's, else class 0's
// plus one base value) gives label 1 when s > 0.5 (every weight >= 0) or s > 0 (some
// weight < 0); the scores are post_transform of [0, s] when class 1 holds the weights, else
// [logistic(-s), logistic(s)] (LOGISTIC), [1 - s, s] (weights >= 0) or [-s, s].
// What the classifier's two forms share.
struct Classifier {
  TreeScores s;
  TensorBoxPtr labels;  // int64 [classes]
  int64_t n = 0, classes = 0;
  std::string post;
  std::vector<double> base;
  bool positive = false;   // every class weight >= 0
  std::set<int64_t> used;  // the class ids the weights name

  V reached(KernelBuilder& b, const std::vector<Index>& i) const {
    return b.binary(Op::Gt, s.reached->load(b, i), b.constant(ScalarType::F64, 0));
  }
};

V zero(KernelBuilder& b) {
  return b.constant(ScalarType::F64, 0);
}

// More than two classes: labels [N] and scores [N, classes] (float64).
std::pair<TensorBoxPtr, TensorBoxPtr> multiclass_outputs(LowerCtx& c, const Classifier& cls) {
  const TreeScores& s = cls.s;
  const int64_t n = cls.n, classes = cls.classes;
  const std::vector<double>& base = cls.base;
  const TensorBoxPtr& label_t = cls.labels;
  auto reached = [cls](KernelBuilder& b, const std::vector<Index>& i) { return cls.reached(b, i); };
  TensorBoxPtr label, scores;
  if (!base.empty() && base.size() != static_cast<size_t>(classes))
    c.error("base_values has ", base.size(), " entries for ", classes, " classes");
  std::vector<double> base_full(static_cast<size_t>(classes), 0.0), has_base = base_full;
  std::copy(base.begin(), base.end(), base_full.begin());
  std::fill(has_base.begin(), has_base.begin() + static_cast<int64_t>(base.size()), 1.0);
  const TensorBoxPtr bt = table(c.gl, base_full, true, c.origin() + " base values"),
                     hb = table(c.gl, has_base, true, c.origin() + " base flags");
  auto scored = [=](KernelBuilder& b, const std::vector<Index>& i) {
    return b.binary(Op::Or, reached(b, i),
                    b.binary(Op::Gt, hb->load(b, {i[1]}), b.constant(ScalarType::F64, 0)));
  };
  auto value = [=](KernelBuilder& b, const std::vector<Index>& i) {
    return s.rounded(
        b, b.binary(Op::Add, b.where(reached(b, i), s.at(b, i), zero(b)), bt->load(b, {i[1]})));
  };
  scores = make_pointwise_box(
      DType::F64, {n, classes},
      [=](KernelBuilder& b, const std::vector<Index>& i) {
        return b.where(scored(b, i), value(b, i), zero(b));
      },
      c.origin());
  auto best = std::make_shared<ComputedDef>();  // the first best-scoring class
  best->is_reduction = true;
  best->ranges = {n};
  best->reduction_ranges = {classes};
  best->reduce = ReduceKind::ArgMax;
  best->rfn = [=](KernelBuilder& b, const std::vector<Index>& o, const std::vector<Index>& r) {
    const std::vector<Index> i{o[0], r[0]};
    return b.where(scored(b, i), value(b, i), b.constant(ScalarType::F64, -INFINITY));
  };
  best->origin = c.origin();
  const TensorBoxPtr k = make_reduction_box(DType::I64, best);
  c.gl.realize(k);
  label = make_pointwise_box(
      DType::I64, {n},
      [=](KernelBuilder& b, const std::vector<Index>& i) {
        const V at = b.check_index(k->load(b, i), classes, "TreeEnsembleClassifier: a class");
        return label_t->load(b, {ix_value(at.id)});
      },
      c.origin());
  scores = post_transformed(c, scores, cls.post);
  return {label, scores};
}

// Two classes whose weights all name one class (scikit-learn's binary form).
std::pair<TensorBoxPtr, TensorBoxPtr> binary_outputs(LowerCtx& c, const Classifier& k_) {
  const TreeScores& s = k_.s;
  const int64_t n = k_.n;
  const std::vector<double>& base = k_.base;
  const std::string& post = k_.post;
  const bool positive = k_.positive;
  const std::set<int64_t>& used = k_.used;
  const TensorBoxPtr& label_t = k_.labels;
  auto reached = [k_](KernelBuilder& b, const std::vector<Index>& i) { return k_.reached(b, i); };
  TensorBoxPtr label, scores;
  if (used.size() != 1)
    c.unsupported(
        "two classes with weights for both (onnxruntime labels them by a rule of "
        "its own)");
  if (base.size() > 1)
    c.unsupported("two base values for two classes (onnxruntime then drops the trees' sum)");
  const int64_t k = *used.begin();
  const double bv = base.empty() ? 0.0 : base[0];
  // The positive score, and whether two scores are written (class 1 holds the weights).
  auto pos = [=](KernelBuilder& b, const Index& row) {
    const std::vector<Index> i{row, ix_const(k)};
    V v = s.at(b, i);
    if (k == 0) v = s.rounded(b, b.binary(Op::Add, v, b.constant(ScalarType::F64, bv)));
    return b.where(reached(b, i), v, zero(b));
  };
  label = make_pointwise_box(
      DType::I64, {n},
      [=](KernelBuilder& b, const std::vector<Index>& i) {
        const V over =
            b.binary(Op::Gt, pos(b, i[0]), b.constant(ScalarType::F64, positive ? 0.5 : 0));
        return b.where(over, label_t->load(b, {ix_const(1)}), label_t->load(b, {ix_const(0)}));
      },
      c.origin());
  const TensorBoxPtr pair = make_pointwise_box(
      DType::F64, {n, 2},
      [=](KernelBuilder& b, const std::vector<Index>& i) {
        return b.where(b.binary(Op::Eq, b.index_value(i[1]), b.constant_i64(1)), pos(b, i[0]),
                       zero(b));
      },
      c.origin());
  const TensorBoxPtr two = post_transformed(c, pair, post);  // [0, s] transformed
  scores = make_pointwise_box(
      DType::F64, {n, 2},
      [=](KernelBuilder& b, const std::vector<Index>& i) {
        const V sv = pos(b, i[0]);
        const V second = b.binary(Op::Eq, b.index_value(i[1]), b.constant_i64(1));
        // One score written as two: [sigmoid(-s), sigmoid(s)] with LOGISTIC, else [1 - s, s]
        // (weights >= 0) or [-s, s].
        V one;
        if (post == "LOGISTIC") {
          one = b.unary(Op::Sigmoid, b.where(second, sv, b.unary(Op::Neg, sv)));
        } else if (positive) {
          one = b.where(second, sv, b.binary(Op::Sub, b.constant(ScalarType::F64, 1), sv));
        } else {
          one = b.where(second, sv, b.unary(Op::Neg, sv));
        }
        if (k != 1) return one;
        return b.where(reached(b, {i[0], ix_const(1)}), two->load(b, i), one);
      },
      c.origin());
  return {label, scores};
}

std::vector<TensorBoxPtr> lower_tree_ensemble_classifier(LowerCtx& c) {
  const TensorBoxPtr& x = samples(c);
  if (c.node.has_attr("classlabels_strings")) c.unsupported("string class labels");
  const std::vector<int64_t> labels = c.node.attr_ints("classlabels_int64s");
  const int64_t classes = static_cast<int64_t>(labels.size());
  if (classes < 2) c.unsupported(classes, " class labels (at least two)");
  const Forest f = read_legacy_forest(c, "class", classes);
  const std::vector<int64_t> ids = c.node.attr_ints("class_ids");
  const std::vector<double> weights = float_values(
      c, c.node.has_attr("class_weights_as_tensor") ? "class_weights_as_tensor" : "class_weights");
  const std::set<int64_t> used(ids.begin(), ids.end());
  const bool positive =
      std::all_of(weights.begin(), weights.end(), [](double w) { return w >= 0; });
  const std::vector<double> base = float_values(
      c, c.node.has_attr("base_values_as_tensor") ? "base_values_as_tensor" : "base_values");
  const std::string post = c.node.attr_string("post_transform", "NONE");
  const TreeScores s = tree_scores(c, f, x, 1, true);
  const TensorBoxPtr label_t = table(c.gl, doubles(labels), false, c.origin() + " labels");
  Classifier k{s, label_t, x->size[0], classes, post, base, positive, used};
  const auto [label, scores] = classes > 2 ? multiclass_outputs(c, k) : binary_outputs(c, k);
  return {label, cast_to(c, scores, DType::F32)};
}

}  // namespace

void register_ml_ops(LoweringTable& t) {
  register_ml_linear_ops(t);
  register_ml_svm_ops(t);
  t.add(str_cat(kMl, "Binarizer"), lower_binarizer);
  t.add(str_cat(kMl, "ArrayFeatureExtractor"), lower_array_feature_extractor);
  t.add(str_cat(kMl, "TreeEnsemble"), lower_tree_ensemble);
  t.add(str_cat(kMl, "TreeEnsembleRegressor"), lower_tree_ensemble_regressor);
  t.add(str_cat(kMl, "TreeEnsembleClassifier"), lower_tree_ensemble_classifier);
}

}  // namespace ferrite
