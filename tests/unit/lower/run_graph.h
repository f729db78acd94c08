// Test helper for end-to-end lowering tests: compiles a small graph to a Plan and runs it
// on a named backend, so a test reads as the graph and the values it expects.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "compiler/compile.h"
#include "runtime/session.h"

namespace ferrite {
namespace lower_test {

struct Compiled {
  Plan plan;
  std::vector<Tensor> outputs;
};

// Compiles g for its declared input types (specialized on `values` where given, see
// compile_graph) and runs it on `backend`.
inline Compiled run_graph(const Graph& g, const std::vector<Tensor>& inputs,
                          const std::string& backend,
                          const std::vector<std::shared_ptr<const TensorData>>& values = {}) {
  std::vector<TensorType> types;
  for (const Value* v : g.inputs) types.push_back(v->type);
  Compiled r;
  r.plan = compile_graph(g, types, {}, values);
  SessionOptions opts;
  opts.backend = backend;
  Session s(r.plan, opts);
  std::vector<const Tensor*> ptrs;
  for (const auto& t : inputs) ptrs.push_back(&t);
  r.outputs = s.run(ptrs);
  return r;
}

// The elements of `t` as T (T must match its dtype's size).
template <class T>
std::vector<T> values_of(const Tensor& t) {
  return std::vector<T>(t.as<T>(), t.as<T>() + t.elements());
}

}  // namespace lower_test
}  // namespace ferrite
