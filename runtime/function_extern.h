// An extern implemented by a plain function (ExternFn: the reference implementations, the
// portable ScatterElements) as a PreparedExtern: nothing is prepared, the function checks
// and computes on every run.
#pragma once

#include <memory>

#include "runtime/backend.h"

namespace ferrite {

// `call` must outlive the result.
std::unique_ptr<PreparedExtern> prepare_function_extern(const ExternCall& call, ExternFn fn);

}  // namespace ferrite
