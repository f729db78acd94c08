// The plan-aware mutator, libFuzzer's LLVMFuzzerCustomMutator and LLVMFuzzerCustomCrossOver
// for the plan targets (plan_hooks.cc). It edits a serialized plan where plan_layout.h says
// its fields are, with values that fit what each means (ids near the counts they index, dims
// and strides at boundaries, enums in range, valid dtypes), and edits its lists (items
// duplicated, dropped, swapped, taken from another plan) and index trees, keeping every
// length consistent: mutants get past the reader and reach validate_plan and the backends.
// Bytes that are no plan, and one mutation in twenty, go to the byte-level mutator.
#pragma once

#include "tests/fuzz/onnx_mutator.h"  // ByteMutator

namespace ferrite::fuzz {

size_t mutate_plan(uint8_t* data, size_t size, size_t max_size, unsigned seed, ByteMutator bytes);
size_t cross_over_plan(const uint8_t* a, size_t a_size, const uint8_t* b, size_t b_size,
                       uint8_t* out, size_t max_out, unsigned seed);

}  // namespace ferrite::fuzz
