#include "compiler/schedule/scheduler.h"

#include <algorithm>
#include <map>
#include <queue>

#include "compiler/plan/error.h"
#include "compiler/plan/stage_times.h"

namespace ferrite {
namespace {

Buffer* owner_of(Buffer* b) {
  int64_t offset;
  return b->storage_owner(&offset);
}

int64_t bytes_of(const Buffer* b) {
  return b->elements() * static_cast<int64_t>(dtype_size(b->dtype));
}

bool same_guards(const std::vector<LoweredGuard>& x, const std::vector<LoweredGuard>& y) {
  if (x.size() != y.size()) return false;
  for (size_t i = 0; i < x.size(); ++i)
    if (x[i].cond != y[i].cond || x[i].value != y[i].value) return false;
  return true;
}

// Buffers a node reads or writes (what a fused pair would share).
std::set<Buffer*> touched_buffers(const SchedulerNode& n) {
  std::set<Buffer*> out;
  for (const Dep& d : n.reads)
    if (d.kind != DepKind::Weak) out.insert(d.buffer);
  for (const Dep& d : n.writes)
    if (d.kind != DepKind::Weak) out.insert(d.buffer);
  return out;
}

}  // namespace

void compute_deps(SchedulerNode* n, const LoweredProgram& prog) {
  n->reads.clear();
  n->writes.clear();
  for (const LoweredGuard& g : n->guards) n->reads.push_back(Dep{DepKind::Star, g.cond, nullptr});
  if (n->is_extern()) {
    const ExternNode& e = prog.externs[n->extern_index];
    for (const ExternOperand& op : e.inputs)
      n->reads.push_back(Dep{DepKind::Star, owner_of(op.buffer), nullptr});
    for (Buffer* b : e.outputs) n->writes.push_back(Dep{DepKind::Star, owner_of(b), nullptr});
    return;
  }
  for (const Instr& in : n->kernel.kernel.code) {
    if (in.op == Op::Load)
      n->reads.push_back(Dep{DepKind::Memory, n->kernel.args[in.arg], in.index});
    if (in.op == Op::Store)
      n->writes.push_back(Dep{DepKind::Memory, n->kernel.args[in.arg], in.index});
  }
}

Scheduler::Scheduler(LoweredProgram& prog, SchedulerOptions options)
    : prog_(prog), options_(options) {
  std::vector<SchedulerNode> all;
  for (LoweredItem& it : prog.order) {
    SchedulerNode n;
    if (it.computed) {
      if (it.computed->origin != BufferOrigin::Computed) continue;  // folded to a constant
      n.kernel.kernel = std::move(it.kernel);
      n.kernel.args = it.args;
      n.kernel.sym_ranges = it.sym_ranges;
      n.name = n.kernel.kernel.name;
    } else {
      n.extern_index = it.extern_index;
      const ExternNode& e = prog.externs[it.extern_index];
      n.name = str_cat("extern ", extern_op_name(e.op), " (", e.origin, ")");
    }
    n.guards = it.guards;
    compute_deps(&n, prog);
    all.push_back(std::move(n));
  }
  // Dead-node elimination: keep what a graph output needs. A node writing part of an
  // Assembled buffer is needed when that buffer is.
  std::set<Buffer*> needed;
  for (Buffer* b : prog.outputs) needed.insert(owner_of(b));
  std::vector<bool> keep(all.size(), false);
  for (int i = static_cast<int>(all.size()) - 1; i >= 0; --i) {
    for (const Dep& d : all[i].writes) keep[i] = keep[i] || needed.count(d.buffer);
    if (!keep[i]) continue;
    for (const Dep& d : all[i].reads) needed.insert(d.buffer);
  }
  for (size_t i = 0; i < all.size(); ++i) {
    if (!keep[i]) continue;
    all[i].members = {static_cast<int>(nodes_.size())};
    nodes_.push_back(std::move(all[i]));
  }
  alive_.assign(nodes_.size(), true);
  compute_preds();
}

// Per buffer, the last node that wrote it and the nodes that read it since: a read waits for
// the last write, a write for the last write and the reads since. The earlier writes and
// reads are ordered before those already (writes are ordered among themselves, and each
// write after the reads before it), so the edges to them would add no order; leaving them
// out keeps this linear in the deps where one buffer is read and written by every step of
// an unrolled recurrence (a GRU of 1023 steps: 4.4 s in sets of all earlier readers).
// Reachability, and with it every fusion decision and the order, is the same.
void Scheduler::compute_preds() {
  struct Access {
    int last_writer = -1;
    std::vector<int> readers;  // since last_writer
    bool read = false;         // by any node so far
  };
  std::map<Buffer*, Access> acc;
  for (int i = 0; i < static_cast<int>(nodes_.size()); ++i) {
    SchedulerNode& n = nodes_[i];
    for (const Dep& d : n.reads) {
      const int w = acc[d.buffer].last_writer;  // read after write
      if (w >= 0) n.preds.insert(w);
    }
    for (const Dep& d : n.writes) {
      Access& a = acc[d.buffer];
      if (a.last_writer >= 0) n.preds.insert(a.last_writer);  // write after write
      n.preds.insert(a.readers.begin(), a.readers.end());     // write after read
      // the node's own reads are recorded below, so every reader so far is another node
      if (a.read) n.weak.push_back(Dep{DepKind::Weak, d.buffer, nullptr});
    }
    for (const Dep& d : n.writes) {
      Access& a = acc[d.buffer];
      a.last_writer = i;
      a.readers.clear();
    }
    for (const Dep& d : n.reads) {
      Access& a = acc[d.buffer];
      if (a.readers.empty() || a.readers.back() != i) a.readers.push_back(i);
      a.read = true;
    }
    n.preds.erase(i);
  }
  // Predecessors come earlier in program order, so the node ids are a topological order.
  succs_.assign(nodes_.size(), {});
  topo_.assign(nodes_.size(), 0);
  for (size_t i = 0; i < nodes_.size(); ++i) {
    topo_[i] = static_cast<double>(i);
    for (int p : nodes_[i].preds) succs_[p].insert(static_cast<int>(i));
  }
  seen_.assign(nodes_.size(), 0);
}

// Whether `to` depends on `from` through at least one other node (skip_direct: ignore the
// edge from -> to itself). Only nodes after `from` in the topological order (topo_) can
// depend on it, so the search stops below it: a chain's neighbours are checked in O(1).
// A search visits at most kReachBudget nodes; past that it answers true and sets
// search_cut_, and try_fuse declines the pair (never fusing is always safe). Without the
// cap, pairs far apart in an unrolled Scan of 65,536 steps made the fusion stage quadratic
// (14 s for a 380-byte model).
bool Scheduler::reaches(int from, int to, int skip_direct) const {
  constexpr int kReachBudget = 4096;
  ++stamp_;
  std::vector<int> stack;
  for (int p : nodes_[to].preds)
    if (!(skip_direct && p == from)) stack.push_back(p);
  int visited = 0;
  while (!stack.empty()) {
    int u = stack.back();
    stack.pop_back();
    if (u == from) return true;
    if (seen_[u] == stamp_ || topo_[u] <= topo_[from]) continue;
    if (++visited > kReachBudget) {
      search_cut_ = true;
      return true;
    }
    seen_[u] = stamp_;
    for (int p : nodes_[u].preds) stack.push_back(p);
  }
  return false;
}

// Keeps topo_ a topological order after `first` took in `second`'s edges: the fused node
// goes between its last predecessor and its first successor, or, where there is no room
// (a sibling fused across unrelated nodes), the alive nodes are numbered again.
void Scheduler::place_fused(int first) {
  double lo = -1, hi = static_cast<double>(nodes_.size()) + 1;
  for (int p : nodes_[first].preds) lo = std::max(lo, topo_[p]);
  for (int s : succs_[first]) hi = std::min(hi, topo_[s]);
  const double mid = lo + (hi - lo) / 2;
  if (lo < mid && mid < hi) {
    topo_[first] = mid;
    return;
  }
  StageTimer timer("fuse/renumber");
  std::vector<int> pending(nodes_.size(), 0), ready;
  for (size_t i = 0; i < nodes_.size(); ++i) {
    if (!alive_[i]) continue;
    pending[i] = static_cast<int>(nodes_[i].preds.size());
    if (pending[i] == 0) ready.push_back(static_cast<int>(i));
  }
  int next = 0;
  while (!ready.empty()) {
    const int u = ready.back();
    ready.pop_back();
    topo_[u] = next++;
    for (int s : succs_[u])
      if (--pending[s] == 0) ready.push_back(s);
  }
}

std::string Scheduler::try_fuse(int x, int y, int64_t score, int round) {
  SchedulerNode& nx = nodes_[x];
  SchedulerNode& ny = nodes_[y];
  FusionDecision d;
  d.round = round;
  d.score = score;
  d.first = nx.name;
  d.second = ny.name;
  auto decide = [&](const std::string& reason) {
    d.fused = reason.empty();
    d.reason = reason;
    decisions_.push_back(d);
    return reason;
  };
  search_cut_ = false;
  if (nx.is_extern() || ny.is_extern()) return decide("an extern call does not fuse");
  if (!same_guards(nx.guards, ny.guards)) return decide("they run under different guards");
  bool y_after_x, x_after_y, cycle;
  {
    StageTimer timer("fuse/reaches");
    y_after_x = reaches(x, y, /*skip_direct=*/false);
    x_after_y = reaches(y, x, /*skip_direct=*/false);
    cycle = reaches(x, y, true) || reaches(y, x, true);
  }
  if (search_cut_) return decide("too far apart in the graph to check for a cycle cheaply");
  if (cycle)
    return decide("fusing would create a cycle (a path between them runs through another node)");
  int first = x, second = y;
  if (x_after_y || (!y_after_x && nodes_[y].members.front() < nodes_[x].members.front()))
    std::swap(first, second);
  BoundKernel merged;
  std::string reason;
  {
    StageTimer timer("fuse/merge_kernels");
    reason = merge_kernels(nodes_[first].kernel, nodes_[second].kernel, &merged);
  }
  if (!reason.empty()) return decide(reason);
  SchedulerNode& f = nodes_[first];
  SchedulerNode& s = nodes_[second];
  f.kernel = std::move(merged);
  f.name = f.kernel.kernel.name;
  f.members.insert(f.members.end(), s.members.begin(), s.members.end());
  std::sort(f.members.begin(), f.members.end());
  f.preds.insert(s.preds.begin(), s.preds.end());
  f.weak.insert(f.weak.end(), s.weak.begin(), s.weak.end());
  f.preds.erase(first);
  f.preds.erase(second);
  compute_deps(&f, prog_);
  alive_[second] = false;
  ++version_[first];
  // The edges of `second` become edges of `first`.
  for (int p : s.preds) {
    succs_[p].erase(second);
    if (p != first) succs_[p].insert(first);
  }
  for (int u : succs_[second]) {
    nodes_[u].preds.erase(second);
    if (u != first) {
      nodes_[u].preds.insert(first);
      succs_[first].insert(u);
    }
  }
  succs_[first].erase(second);
  succs_[second].clear();
  place_fused(first);
  return decide("");
}

void Scheduler::fuse() {
  if (!options_.fuse) {
    drop_internal_stores();
    return;
  }
  for (int round = 1; round <= options_.max_rounds; ++round) {
    // Candidates: nodes sharing a buffer, scored by the bytes they share (pairs with an
    // extern are refused, but logged: they say where an epilogue could go).
    std::map<Buffer*, std::vector<int>> users;
    std::vector<std::set<Buffer*>> bufs(nodes_.size());
    for (size_t i = 0; i < nodes_.size(); ++i) {
      if (!alive_[i]) continue;
      bufs[i] = touched_buffers(nodes_[i]);
      for (Buffer* b : bufs[i]) users[b].push_back(static_cast<int>(i));
    }
    std::set<std::pair<int, int>> pairs;
    for (const auto& [buf, ids] : users) {
      const size_t n = std::min<size_t>(ids.size(), 32);  // bounds the pairs per buffer
      for (size_t i = 0; i < n; ++i)
        for (size_t j = i + 1; j < n; ++j) pairs.insert({ids[i], ids[j]});
    }
    struct Candidate {
      int x, y;
      int64_t score;
      int distance;
    };
    std::vector<Candidate> cands;
    for (const auto& [x, y] : pairs) {
      int64_t score = 0;
      const bool x_smaller = bufs[x].size() <= bufs[y].size();
      for (Buffer* b : bufs[x_smaller ? x : y])
        if (bufs[x_smaller ? y : x].count(b)) score += bytes_of(b);
      cands.push_back(
          {x, y, score, std::abs(nodes_[x].members.front() - nodes_[y].members.front())});
    }
    std::sort(cands.begin(), cands.end(), [](const Candidate& p, const Candidate& q) {
      if (p.score != q.score) return p.score > q.score;
      if (p.distance != q.distance) return p.distance < q.distance;
      return std::make_pair(p.x, p.y) < std::make_pair(q.x, q.y);
    });
    bool changed = false;
    version_.resize(nodes_.size(), 0);
    for (const Candidate& c : cands) {
      if (!alive_[c.x] || !alive_[c.y]) continue;
      const std::pair<int, int> versions{version_[c.x], version_[c.y]};
      auto was = refused_.find({c.x, c.y});
      if (was != refused_.end() && was->second == versions) continue;  // refused_'s comment
      if (try_fuse(c.x, c.y, c.score, round).empty()) {
        changed = true;
      } else if (!search_cut_) {
        refused_[{c.x, c.y}] = versions;
      }
    }
    if (!changed) break;
  }
  drop_internal_stores();
}

void Scheduler::drop_internal_stores() {
  StageTimer timer("fuse/drop_internal_stores");
  std::set<Buffer*> outputs;
  for (Buffer* b : prog_.outputs) outputs.insert(owner_of(b));
  std::map<Buffer*, std::set<int>> readers;
  for (size_t i = 0; i < nodes_.size(); ++i) {
    if (!alive_[i]) continue;
    for (const Dep& d : nodes_[i].reads) readers[d.buffer].insert(static_cast<int>(i));
  }
  for (size_t i = 0; i < nodes_.size(); ++i) {
    SchedulerNode& n = nodes_[i];
    if (!alive_[i] || n.is_extern() || n.members.size() < 2) continue;
    std::set<Buffer*> internal;
    for (const Dep& d : n.writes) {
      Buffer* b = d.buffer;
      if (outputs.count(b) || b->output_index >= 0 || b->alias_of) continue;
      const std::set<int>& r = readers[b];
      if (!r.empty()) continue;  // still loaded: by another node, or by this one from memory
      internal.insert(b);
    }
    if (internal.empty()) continue;
    n.kernel = finalize_kernel(n.kernel, internal);
    compute_deps(&n, prog_);
  }
}

std::vector<const SchedulerNode*> Scheduler::order() const {
  // Kahn's algorithm, releasing ready nodes in program order.
  std::vector<int> pending(nodes_.size(), 0);
  std::vector<std::vector<int>> succs(nodes_.size());
  for (size_t i = 0; i < nodes_.size(); ++i) {
    if (!alive_[i]) continue;
    for (int p : nodes_[i].preds) {
      if (!alive_[p]) fail("internal: scheduler node ", nodes_[i].name, " waits on a fused node");
      succs[p].push_back(static_cast<int>(i));
      ++pending[i];
    }
  }
  using Key = std::pair<int, int>;  // (first member, node)
  std::priority_queue<Key, std::vector<Key>, std::greater<Key>> ready;
  for (size_t i = 0; i < nodes_.size(); ++i)
    if (alive_[i] && pending[i] == 0) ready.push({nodes_[i].members.front(), static_cast<int>(i)});
  std::vector<const SchedulerNode*> out;
  while (!ready.empty()) {
    int u = ready.top().second;
    ready.pop();
    out.push_back(&nodes_[u]);
    for (int v : succs[u])
      if (--pending[v] == 0) ready.push({nodes_[v].members.front(), v});
  }
  size_t alive = static_cast<size_t>(std::count(alive_.begin(), alive_.end(), true));
  if (out.size() != alive) fail("internal: the scheduled nodes have a dependency cycle");
  return out;
}

std::string Scheduler::report() const {
  std::string out = "# fusion decisions (round, score in bytes, first + second: result)\n";
  for (const FusionDecision& d : decisions_) {
    out += str_cat("round ", d.round, " score ", d.score, ": ", d.first, " + ", d.second, ": ",
                   d.fused ? "fused" : "not fused, " + d.reason, "\n");
  }
  out += "\n# scheduled nodes\n";
  for (const SchedulerNode* n : order()) {
    if (n->is_extern()) {
      out += n->name + "\n";
      continue;
    }
    const Kernel& k = n->kernel.kernel;
    out += str_cat("kernel ", k.name, ": ", n->members.size(), " node(s), ", k.num_loops(),
                   " loop(s), ranges [");
    for (size_t i = 0; i < k.ranges.size(); ++i)
      out += str_cat(i ? ", " : "", static_cast<int>(i) == k.num_outer() ? "| " : "", k.ranges[i]);
    out += "], writes";
    for (const Dep& d : n->writes) out += " " + d.buffer->name;
    out += "\n";
  }
  return out;
}

}  // namespace ferrite
