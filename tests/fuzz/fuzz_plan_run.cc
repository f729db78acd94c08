// Fuzz target: plan bytes -> deserialize_plan -> Session load and run on generated inputs,
// on every backend (reference, portable, jit), compared with the reference backend
// (differential.h). Plans are untrusted input: whatever validate_plan accepts, every backend
// must run or refuse with a ferrite::Error. Plans over the run budget are read only.
#include <cstddef>
#include <cstdint>

#include "compiler/plan/error.h"
#include "compiler/plan/plan_io.h"
#include "tests/fuzz/differential.h"
#include "tests/fuzz/fuzz_inputs.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ferrite;
  Plan plan;
  std::vector<Tensor> inputs;
  try {
    plan = deserialize_plan(data, size);
    if (!fuzz::fits_budget(plan)) return 0;
    inputs = fuzz::generated_inputs(plan);
  } catch (const Error&) {
    return 0;
  }
  fuzz::run_on_every_backend(plan, inputs);
  return 0;
}
