// Fuzz target: a model compiled as fuzz_onnx_compile does, then run on generated inputs on
// every backend and compared with the reference backend (differential.h), when the plan is
// small (fuzz_inputs.h: fits_budget). What `ferrite run` does with a mutated model.
// A model no one plan holds (NeedsCutError: a value-sized op, an If whose branches differ, a
// Loop or Scan at run time) runs in parts through the Engine on every backend instead
// (run_in_parts): the parts are plans the path above already compares value by value, so
// there the backends must agree on what the parts compose: which outputs, of what types
// and shapes.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "bindings/engine/engine.h"
#include "compiler/frontend/onnx/onnx_import.h"
#include "compiler/plan/error.h"
#include "tests/fuzz/differential.h"
#include "tests/fuzz/fuzz_inputs.h"
#include "tests/fuzz/plan_contract.h"

namespace {

using namespace ferrite;

// Loops and Scans at run time stop after this many body runs (a LimitError), so that a run
// stays well under the fuzzer's time limit under its instrumentation.
constexpr int64_t kMaxIterations = 64;

struct PartsOutcome {
  bool ran = false;
  std::string error;
  std::vector<Tensor> outputs;
};

PartsOutcome run_engine(const uint8_t* data, size_t size, const std::string& backend,
                        const CompileOptions& options, const Graph& g,
                        const std::vector<Tensor>& inputs) {
  PartsOutcome o;
  EngineOptions eo;
  eo.compile = options;
  eo.session.backend = backend;
  eo.session.memory_limit = fuzz::kCompileMemoryLimit;
  eo.max_iterations = kMaxIterations;
  try {
    std::unique_ptr<Engine> e = Engine::from_bytes(data, size, eo);
    std::vector<std::pair<std::string, const Tensor*>> feeds;
    for (size_t i = 0; i < g.inputs.size() && i < inputs.size(); ++i)
      feeds.emplace_back(g.inputs[i]->name, &inputs[i]);
    o.outputs = e->run(feeds);
    o.ran = true;
  } catch (const Error& err) {
    o.error = err.what();
  }
  return o;
}

std::string type_text(const Tensor& t) {
  std::string s = str_cat(dtype_name(t.dtype()), '[');
  for (size_t d = 0; d < t.shape().size(); ++d) s += str_cat(d ? "," : "", t.shape()[d]);
  return s + ']';
}

void run_in_parts(const uint8_t* data, size_t size, const CompileOptions& options, const Graph& g,
                  const std::vector<Tensor>& inputs) {
  const std::vector<std::string>& backends = fuzz::fuzz_backends();
  const PartsOutcome ref = run_engine(data, size, backends[0], options, g, inputs);
  for (size_t b = 1; b < backends.size(); ++b) {
    const PartsOutcome got = run_engine(data, size, backends[b], options, g, inputs);
    // A backend may refuse a part's plan (a kernel it cannot compile): only two runs that
    // both succeeded are compared.
    if (!ref.ran || !got.ran) continue;
    std::string d;
    if (got.outputs.size() != ref.outputs.size())
      d = str_cat(got.outputs.size(), " outputs, the reference gave ", ref.outputs.size());
    for (size_t k = 0; d.empty() && k < ref.outputs.size(); ++k) {
      if (type_text(got.outputs[k]) != type_text(ref.outputs[k]))
        d = str_cat("output ", k, " is ", type_text(got.outputs[k]), ", the reference's ",
                    type_text(ref.outputs[k]));
    }
    if (d.empty()) continue;
    std::fprintf(stderr, "==fuzz== the model in parts: backend %s disagrees with reference: %s\n",
                 backends[b].c_str(), d.c_str());
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ferrite;
  const CompileOptions options = fuzz::options_for(size);
  std::unique_ptr<Graph> g;
  std::vector<TensorType> types;
  std::vector<Tensor> inputs;
  try {
    g = import_onnx(data, size, "");
    prepare_graph(*g, options);
    types = fuzz::small_input_types(*g);
    inputs = fuzz::generated_inputs(types);
  } catch (const Error&) {
    return 0;
  }
  Plan plan;
  try {
    plan = fuzz::compile_for(*g, types, inputs, options);
  } catch (const NeedsCutError&) {
    run_in_parts(data, size, options, *g, inputs);
    return 0;
  } catch (const Error&) {
    return 0;
  }
  fuzz::check_compiled_plan(plan);
  CompileOptions unfused = options;
  unfused.fuse = false;
  if (fuzz::fits_budget(plan)) {
    fuzz::run_on_every_backend(plan, inputs,
                               [&] { return fuzz::compile_for(*g, types, inputs, unfused); });
  }
  return 0;
}
