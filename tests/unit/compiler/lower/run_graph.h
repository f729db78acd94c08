// Test helpers for end-to-end lowering tests: compile a small graph to a Plan and run it
// on a named backend, so a test reads as the graph and the values it expects.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <random>
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
                          const std::vector<std::shared_ptr<const TensorData>>& values = {},
                          const CompileOptions& options = {}) {
  std::vector<TensorType> types;
  for (const Value* v : g.inputs) types.push_back(v->type);
  Compiled r;
  r.plan = compile_graph(g, types, options, values);
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

inline std::vector<float> random_floats(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-2.f, 2.f);
  std::vector<float> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

template <class... T>
std::vector<Tensor> tensors(T&&... t) {
  std::vector<Tensor> v;
  (v.push_back(std::forward<T>(t)), ...);
  return v;
}

inline void expect_near(const Tensor& t, const std::vector<float>& want, float tol = 1e-5f) {
  ASSERT_EQ(t.elements(), static_cast<int64_t>(want.size()));
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_NEAR(t.as<float>()[i], want[i], tol * (1 + std::fabs(want[i]))) << "element " << i;
  }
}

}  // namespace lower_test
}  // namespace ferrite
