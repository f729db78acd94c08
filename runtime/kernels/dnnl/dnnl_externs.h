// The MatMul, Conv and ConvTranspose externs on oneDNN (native x86 builds only; the "jit"
// backend prepares these calls here first). Semantics are the reference's
// (runtime/kernels/reference/matmul.h, conv.h) with the fused epilogue of
// compiler/plan/post_ops.h carried by oneDNN post-ops, weights that are plan constants
// reordered once into the layout the primitive wants, and the primitives, their scratchpad
// and every scratch buffer created when the call is prepared, so a run allocates nothing.
//
// A call oneDNN cannot take exactly, or only with its slow reference implementation, is
// refused (nullptr) and the caller runs it elsewhere: see prepare_dnnl_extern.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "compiler/plan/plan.h"
#include "runtime/backend.h"

namespace ferrite {

// A prepared extern that runs on oneDNN.
class DnnlExtern : public PreparedExtern {
 public:
  // The oneDNN implementation of the op's primitive, e.g. "brg:avx512_core" (tests, reports).
  std::string implementation() const override = 0;
  // How many of its primitives have a copy made for one thread, for runs on a busy machine
  // (made on the first such run; dnnl_one_thread.h).
  virtual size_t one_thread_steps() const { return 0; }
};

// `call` prepared on oneDNN (a DnnlExtern), or nullptr when oneDNN does not take it: an op
// other than MatMul, Conv and ConvTranspose; an empty tensor; a layout, broadcast or post-op
// chain oneDNN cannot express or would get wrong; a ConvTranspose whose pads leave nothing
// of its full output; a call only oneDNN's reference loops (or, for a convolution with
// binary post-ops, its GEMM fallback) would take; FERRITE_DNNL=0 in the environment; or a
// call whose shapes are wrong (the fallback reports those). `constants` as in
// KernelBackend::prepare_extern, and so are `packed` (weights oneDNN reordered into a
// layout equal to the one it wants now are copied, not reordered again); with a `store`
// (packed_store.h), weights packed by another session of the model are used in place, and
// those packed here are added to it. oneDNN (OpenMP)
// uses `threads` threads, both to plan its work here and to run. With `fast_math`, a float32
// MatMul or Conv multiplies in bfloat16 where the CPU has AVX-512 BF16 (BackendOptions::
// fast_math): the weights packed as bfloat16, the input rounded to it on each run, float32
// sums and output; elsewhere fast_math changes nothing. `call` must outlive the
// result, whose run() checks the buffers with the shared parsers and throws ferrite::Error
// naming the op, never aborting.
class PackedStore;
std::unique_ptr<PreparedExtern> prepare_dnnl_extern(const ExternCall& call,
                                                    const std::vector<ExternBuffer>& constants,
                                                    const std::vector<PackedInput>& packed,
                                                    int threads, PackedStore* store = nullptr,
                                                    bool fast_math = false);
inline std::unique_ptr<PreparedExtern> prepare_dnnl_extern(
    const ExternCall& call, const std::vector<ExternBuffer>& constants, int threads) {
  return prepare_dnnl_extern(call, constants, {}, threads);
}

// False when the environment sets FERRITE_DNNL=0 (for A/B comparisons against the portable
// externs).
bool dnnl_enabled();

// Whether oneDNN runs AVX-512 code here: the CPU has it and ONEDNN_MAX_CPU_ISA does not cap
// it below. Its Winograd convolutions exist only then.
bool dnnl_has_avx512();

// Whether oneDNN runs bfloat16 dot products here (AVX-512 BF16, not capped by
// ONEDNN_MAX_CPU_ISA): where fast math takes effect.
bool dnnl_has_bf16();

}  // namespace ferrite
