#include "tests/fuzz/plan_contract.h"

#include <cstdio>
#include <cstdlib>
#include <string>

#include "compiler/plan/error.h"
#include "compiler/plan/plan_io.h"
#include "tests/fuzz/plan_hazards.h"

namespace ferrite::fuzz {
namespace {

[[noreturn]] void broken(const char* what, const std::string& detail) {
  std::fprintf(stderr, "==fuzz== plan contract: %s%s\n", what, detail.c_str());
  std::abort();
}

}  // namespace

void check_round_trip(const Plan& plan) {
  std::vector<uint8_t> bytes;
  try {
    bytes = serialize_plan(plan);
  } catch (const Error&) {
    return;  // too large to write (a list over 2^32 items): refused, not corrupted
  }
  Plan back;
  try {
    back = deserialize_plan(bytes.data(), bytes.size());
  } catch (const Error& e) {
    broken("a written plan fails to read back: ", e.what());
  }
  if (serialize_plan(back) != bytes) broken("a plan read back is written differently", "");
}

void check_compiled_plan(const Plan& plan) {
  try {
    validate_plan(plan);
  } catch (const Error& e) {
    broken("the compiler made a plan that validate_plan rejects: ", e.what());
  }
  const std::string hazard = order_dependence(plan);
  if (!hazard.empty()) broken("the compiler made an order-dependent plan: ", hazard);
  check_round_trip(plan);
}

}  // namespace ferrite::fuzz
