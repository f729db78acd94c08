// Graph ordering and checking: topo_sort (Kahn, stable), validate, remove_dead.
// A node that owns subgraphs also depends on the outer values those subgraphs capture
// (Graph::captures), so an If is ordered after whatever its branches read by name.
#include <functional>
#include <queue>
#include <unordered_map>
#include <unordered_set>

#include "compiler/graph/graph.h"
#include "compiler/plan/error.h"

namespace ferrite {

namespace {

constexpr int kMaxGraphDepth = 64;

// The names the node's subgraphs read from the graph that holds the node.
std::vector<std::string> captured_names(const Node& n) {
  std::vector<std::string> names;
  auto add = [&](const std::shared_ptr<Graph>& g) {
    if (!g) return;
    for (const Value* c : g->captures) {
      if (c) names.push_back(c->name);
    }
  };
  for (const auto& kv : n.attrs) {
    add(kv.second.g);
    for (const auto& g : kv.second.graphs) add(g);
  }
  return names;
}

// What a graph provides without any node: inputs, constants, captures.
std::unordered_set<const Value*> predefined(const Graph& g) {
  std::unordered_set<const Value*> s(g.inputs.begin(), g.inputs.end());
  s.insert(g.captures.begin(), g.captures.end());
  for (const auto& v : g.values) {
    if (v->is_constant()) s.insert(v.get());
  }
  return s;
}

std::unordered_set<const Value*> owned_values(const Graph& g) {
  std::unordered_set<const Value*> s;
  for (const auto& v : g.values) s.insert(v.get());
  return s;
}

// Maps each produced value to the index of its producer; throws if produced twice or if a
// node output is also a graph input, constant or capture.
std::unordered_map<const Value*, size_t> producer_index(const Graph& g) {
  std::unordered_set<const Value*> owned = owned_values(g);
  std::unordered_set<const Value*> pre = predefined(g);
  std::unordered_map<const Value*, size_t> prod;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = *g.nodes[i];
    for (size_t k = 0; k < n.outputs.size(); ++k) {
      const Value* v = n.outputs[k];
      if (!v) fail("node ", n.describe(), ": output ", k, " is null");
      if (!owned.count(v)) {
        fail("node ", n.describe(), ": output '", v->name, "' is not in the graph");
      }
      if (pre.count(v)) {
        fail("value '", v->name, "' is produced by node ", n.describe(),
             " but is also a graph input, constant or capture");
      }
      auto [it, fresh] = prod.emplace(v, i);
      if (!fresh) {
        fail("value '", v->name, "' is produced twice: by node ", g.nodes[it->second]->describe(),
             " and by node ", n.describe());
      }
    }
  }
  return prod;
}

// Indices of the nodes `n` depends on (with repeats, one per edge).
std::vector<size_t> node_deps(const Graph& g, const Node& n,
                              const std::unordered_map<const Value*, size_t>& prod,
                              const std::unordered_set<const Value*>& pre,
                              const std::unordered_set<const Value*>& owned) {
  std::vector<size_t> deps;
  for (const Value* v : n.inputs) {
    if (!v) continue;
    if (!owned.count(v)) fail("node ", n.describe(), ": input '", v->name, "' is not in the graph");
    auto it = prod.find(v);
    if (it != prod.end()) {
      deps.push_back(it->second);
    } else if (!pre.count(v)) {
      fail("node ", n.describe(), ": input '", v->name,
           "' is not defined (no node, graph input or constant produces it)");
    }
  }
  for (const std::string& name : captured_names(n)) {
    const Value* v = g.find(name);
    auto it = v ? prod.find(v) : prod.end();
    if (it != prod.end()) {
      deps.push_back(it->second);
    } else if (!v || !pre.count(v)) {
      fail("node ", n.describe(), ": its subgraph reads '", name, "', which graph '", g.name,
           "' does not define");
    }
  }
  return deps;
}

[[noreturn]] void fail_cycle(const Graph& g, const std::vector<int>& indeg,
                             const std::unordered_map<const Value*, size_t>& prod) {
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    if (indeg[i] == 0) continue;
    for (const Value* v : g.nodes[i]->inputs) {
      auto it = v ? prod.find(v) : prod.end();
      if (it != prod.end() && indeg[it->second] != 0) {
        fail("graph '", g.name, "' has a cycle: node ", g.nodes[i]->describe(), " reads '", v->name,
             "', which depends on the node's own outputs");
      }
    }
    fail("graph '", g.name, "' has a cycle through node ", g.nodes[i]->describe());
  }
  fail("graph '", g.name, "' has a cycle");
}

void validate_node(const Graph& g, const Node& n, std::unordered_set<const Value*>* defined,
                   const std::unordered_set<const Value*>& owned) {
  if (n.op_type.empty()) fail("graph '", g.name, "': a node has no op_type");
  for (const Value* v : n.inputs) {
    if (!v) continue;
    if (!owned.count(v)) fail("node ", n.describe(), ": input '", v->name, "' is not in the graph");
    if (!defined->count(v)) {
      fail("node ", n.describe(), ": input '", v->name, "' is used before it is defined");
    }
  }
  for (const std::string& name : captured_names(n)) {
    const Value* v = g.find(name);
    if (!v || !defined->count(v)) {
      fail("node ", n.describe(), ": its subgraph reads '", name, "', not defined before it");
    }
  }
  for (size_t k = 0; k < n.outputs.size(); ++k) {
    const Value* v = n.outputs[k];
    if (!v || !owned.count(v)) fail("node ", n.describe(), ": output ", k, " is not in the graph");
    if (!defined->insert(v).second) {
      fail("value '", v->name, "' is defined twice (again by node ", n.describe(), ")");
    }
    if (v->producer != &n || v->output_index != static_cast<int>(k)) {
      fail("value '", v->name, "': stale producer link to node ", n.describe(),
           " (call rebuild_uses)");
    }
  }
}

void validate_graph(const Graph& g, int depth) {
  if (depth > kMaxGraphDepth) fail("graph '", g.name, "': subgraphs nested too deeply");
  std::unordered_set<const Value*> owned = owned_values(g);
  std::unordered_set<std::string> names;
  for (const auto& v : g.values) {
    if (v->name.empty()) fail("graph '", g.name, "': a value has no name");
    if (!names.insert(v->name).second) {
      fail("graph '", g.name, "': two values are named '", v->name, "'");
    }
  }
  for (const Value* v : g.inputs) {
    if (!v || !owned.count(v)) fail("graph '", g.name, "': an input is not in the graph");
    if (v->is_constant()) fail("graph '", g.name, "': input '", v->name, "' is also a constant");
  }
  std::unordered_set<const Value*> defined = predefined(g);
  for (const auto& n : g.nodes) {
    validate_node(g, *n, &defined, owned);
    for (const auto& kv : n->attrs) {
      if (kv.second.g) validate_graph(*kv.second.g, depth + 1);
      for (const auto& sub : kv.second.graphs) {
        if (sub) validate_graph(*sub, depth + 1);
      }
    }
  }
  for (const Value* v : g.outputs) {
    if (!v || !owned.count(v)) fail("graph '", g.name, "': an output is not in the graph");
    if (!defined.count(v)) fail("graph '", g.name, "': output '", v->name, "' is not defined");
  }
}

}  // namespace

void Graph::topo_sort() {
  std::unordered_map<const Value*, size_t> prod = producer_index(*this);
  std::unordered_set<const Value*> pre = predefined(*this);
  std::unordered_set<const Value*> owned = owned_values(*this);
  size_t n = nodes.size();
  std::vector<int> indeg(n, 0);
  std::vector<std::vector<size_t>> consumers(n);
  for (size_t i = 0; i < n; ++i) {
    for (size_t d : node_deps(*this, *nodes[i], prod, pre, owned)) {
      consumers[d].push_back(i);
      ++indeg[i];
    }
  }
  // A min-heap of ready indices keeps the original order wherever dependencies allow.
  std::priority_queue<size_t, std::vector<size_t>, std::greater<size_t>> ready;
  for (size_t i = 0; i < n; ++i) {
    if (indeg[i] == 0) ready.push(i);
  }
  std::vector<size_t> order;
  while (!ready.empty()) {
    size_t i = ready.top();
    ready.pop();
    order.push_back(i);
    for (size_t c : consumers[i]) {
      if (--indeg[c] == 0) ready.push(c);
    }
  }
  if (order.size() != n) fail_cycle(*this, indeg, prod);
  std::vector<std::unique_ptr<Node>> sorted;
  sorted.reserve(n);
  for (size_t i : order) sorted.push_back(std::move(nodes[i]));
  nodes = std::move(sorted);
  rebuild_uses();
}

void Graph::validate() const {
  validate_graph(*this, 0);
}

void Graph::remove_dead() {
  std::unordered_map<const Value*, size_t> prod;
  for (size_t i = 0; i < nodes.size(); ++i) {
    for (const Value* v : nodes[i]->outputs) prod.emplace(v, i);
  }
  std::vector<bool> live(nodes.size(), false);
  std::vector<const Value*> work(outputs.begin(), outputs.end());
  while (!work.empty()) {
    const Value* v = work.back();
    work.pop_back();
    auto it = v ? prod.find(v) : prod.end();
    if (it == prod.end() || live[it->second]) continue;
    live[it->second] = true;
    const Node& n = *nodes[it->second];
    work.insert(work.end(), n.inputs.begin(), n.inputs.end());
    for (const std::string& name : captured_names(n)) work.push_back(find(name));
  }
  std::unordered_set<const Value*> keep(inputs.begin(), inputs.end());
  keep.insert(outputs.begin(), outputs.end());
  keep.insert(captures.begin(), captures.end());
  std::vector<std::unique_ptr<Node>> kept;
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (!live[i]) continue;
    keep.insert(nodes[i]->inputs.begin(), nodes[i]->inputs.end());
    keep.insert(nodes[i]->outputs.begin(), nodes[i]->outputs.end());
    for (const std::string& name : captured_names(*nodes[i])) keep.insert(find(name));
    kept.push_back(std::move(nodes[i]));
  }
  nodes = std::move(kept);
  std::vector<std::unique_ptr<Value>> kept_values;
  for (auto& v : values) {
    if (keep.count(v.get())) kept_values.push_back(std::move(v));
  }
  values = std::move(kept_values);
  rebuild_uses();  // also drops the removed values from the name index
}

}  // namespace ferrite
