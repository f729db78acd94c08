// An extern whose epilogue is no chain of post-ops (match_post_ops), run the way backends
// with native epilogues run it: the op without its epilogue, then the epilogue as a
// following kernel (compiler/plan/epilogue_kernel.h), compiled by the same backend like every
// other kernel. The portable and JIT backends prepare such calls through this.
#pragma once

#include <memory>
#include <vector>

#include "runtime/backend.h"

namespace ferrite {

// Whether the call's epilogue needs a following kernel: a body that is no chain of post-ops.
inline bool needs_following_epilogue(const ExternCall& call) {
  return !call.epilogue.empty() && call.post_ops.empty();
}

// Fails ("internal: ...") for a call that needs_following_epilogue: the preparers of ops
// whose tiles apply chains of post-ops take no other body.
void check_chain_epilogue(const ExternCall& call);

// Prepares the call's op (its inputs before the epilogue's operands, no epilogue) with
// backend.prepare_extern, and its epilogue kernel with backend.prepare. `call` must outlive
// the result.
std::unique_ptr<PreparedExtern> prepare_with_following_epilogue(
    const KernelBackend& backend, const ExternCall& call,
    const std::vector<ExternBuffer>& constants, const std::vector<PackedInput>& packed);

}  // namespace ferrite
