// Operand checks shared by the reference externs. An extern trusts nothing about the
// TensorRefs of its call: before touching memory it checks each one against the buffer
// behind it, and every failure is a ferrite::Error that starts with the op's name.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/backend.h"

namespace ferrite {

// "[2,3,4]"
std::string dims_text(const std::vector<int64_t>& dims);

// Every element the view `r` can reach lies inside `buf` (offsets computed without
// overflow). Throws "<op>: <what> reaches elements [lo, hi] outside its buffer of n elements".
void check_bounds(const char* op, const char* what, const TensorRef& r, const ExternBuffer& buf);

// One strides entry per dim, no negative dim, and check_bounds.
void check_view(const char* op, const char* what, const TensorRef& r, const ExternBuffer& buf);

// The number of elements of `shape` (dims checked non-negative); throws on overflow.
int64_t element_count(const char* op, const std::vector<int64_t>& shape);

}  // namespace ferrite
