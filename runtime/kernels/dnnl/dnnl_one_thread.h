// oneDNN primitives made again for one thread. A oneDNN primitive splits its work between
// OpenMP threads when it is created, statically: each thread computes its share, and the
// call ends when the last one has. On a machine busy with other work that last thread may
// wait milliseconds for a core, so while the machine is busy (thread_budget.h) DnnlSteps
// runs copies of its primitives made for one thread, on the caller's thread alone.
#pragma once

#include <oneapi/dnnl/dnnl.hpp>

namespace ferrite {
namespace onednn {

// `p` made again under the current OpenMP thread count (the caller sets it: ThreadScope),
// reading and writing the same memory layouts; *scratchpad receives the copy's scratchpad.
// Convolutions, deconvolutions, matmuls and reorders; an empty primitive for another kind,
// or when oneDNN has no implementation for it. Throws dnnl::error when oneDNN fails.
dnnl::primitive remake_primitive(const dnnl::primitive& p, dnnl::memory::desc* scratchpad);

}  // namespace onednn
}  // namespace ferrite
