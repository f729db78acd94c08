// Fuzz target: import -> prepare_graph -> compile_graph for the declared input shapes
// (symbolic dims small; specialized on generated input values where the plan needs them),
// then the plan contract (plan_contract.h): validate_plan accepts what the compiler makes,
// and it survives serialization.
#include <cstddef>
#include <cstdint>

#include "compiler/frontend/onnx/onnx_import.h"
#include "compiler/plan/error.h"
#include "tests/fuzz/fuzz_inputs.h"
#include "tests/fuzz/plan_contract.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ferrite;
  const CompileOptions options = fuzz::options_for(size);
  std::unique_ptr<Graph> g;
  std::vector<TensorType> types;
  try {
    g = import_onnx(data, size, "");
    prepare_graph(*g, options);
    types = fuzz::small_input_types(*g);
  } catch (const Error&) {
    return 0;
  }
  std::vector<Tensor> values;
  try {
    values = fuzz::generated_inputs(types);
  } catch (const Error&) {
    // No values (strings, or too large): a plan that needs them fails to compile.
  }
  Plan plan;
  try {
    plan = fuzz::compile_for(*g, types, values, options);
  } catch (const Error&) {
    return 0;
  }
  fuzz::check_compiled_plan(plan);
  return 0;
}
