// libFuzzer's hooks for the plan targets: the plan-aware mutator (plan_mutator.h).
#include <cstddef>
#include <cstdint>

#include "tests/fuzz/plan_mutator.h"

extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size);

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size,
                                          unsigned int seed) {
  return ferrite::fuzz::mutate_plan(data, size, max_size, seed, LLVMFuzzerMutate);
}

extern "C" size_t LLVMFuzzerCustomCrossOver(const uint8_t* a, size_t a_size, const uint8_t* b,
                                            size_t b_size, uint8_t* out, size_t max_out,
                                            unsigned int seed) {
  return ferrite::fuzz::cross_over_plan(a, a_size, b, b_size, out, max_out, seed);
}
