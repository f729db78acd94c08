// Fuzz target: the plan reader and validator (compiler/plan/plan_io.h, validate_plan) on
// any bytes. A plan they accept is printed (plan_to_string) and must round-trip exactly.
#include <cstddef>
#include <cstdint>

#include "compiler/plan/error.h"
#include "compiler/plan/plan_io.h"
#include "tests/fuzz/plan_contract.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ferrite;
  Plan plan;
  try {
    plan = deserialize_plan(data, size);
  } catch (const Error&) {
    return 0;
  }
  plan_to_string(plan);
  fuzz::check_round_trip(plan);
  return 0;
}
