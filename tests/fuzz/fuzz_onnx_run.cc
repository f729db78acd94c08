// Fuzz target: a model compiled as fuzz_onnx_compile does, then run on generated inputs on
// every backend and compared with the reference backend (differential.h), when the plan is
// small (fuzz_inputs.h: fits_budget). What `ferrite run` does with a mutated model.
#include <cstddef>
#include <cstdint>

#include "compiler/frontend/onnx/onnx_import.h"
#include "compiler/plan/error.h"
#include "tests/fuzz/differential.h"
#include "tests/fuzz/fuzz_inputs.h"
#include "tests/fuzz/plan_contract.h"

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
