#include "runtime/kernels/portable/portable_backend.h"

#include "compiler/plan/error.h"
#include "compiler/plan/externs/extern_op.h"
#include "compiler/plan/stage_times.h"
#include "runtime/following_epilogue.h"
#include "runtime/function_extern.h"

#include "runtime/kernels/portable/attention_f32.h"
#include "runtime/kernels/portable/block_executor.h"
#include "runtime/kernels/portable/conv_f32.h"
#include "runtime/kernels/portable/conv_int8.h"
#include "runtime/kernels/portable/matmul_f32.h"
#include "runtime/kernels/portable/matmul_int8.h"
#include "runtime/kernels/portable/matmul_nbits_f32.h"
#include "runtime/kernels/portable/scatter_f32.h"
#include "runtime/kernels/portable/segment_reduce_f32.h"
#include "runtime/kernels/portable/simd_f32.h"
#include "runtime/kernels/reference/reference_backend.h"
#include "runtime/packed_store.h"

namespace ferrite {
namespace {

class PortableBackend : public KernelBackend {
 public:
  PortableBackend(int threads, std::shared_ptr<PackedStore> packed_store)
      : threads_(threads), packed_store_(std::move(packed_store)) {}
  const char* name() const override { return "portable"; }
  std::unique_ptr<PreparedKernel> prepare(const Kernel& k) const override {
    validate_kernel(k);
    StageTimer timer("portable/block_program");
    return std::make_unique<portable::BlockExecutor>(k);
  }
  // The registration table. MatMul and convolutions pack constant weights once and keep
  // their scratch memory; SegmentReduce keeps its destination-sorted edges while the
  // indices stay the same; the rest are functions.
  std::unique_ptr<PreparedExtern> prepare_extern(
      const ExternCall& call, const std::vector<ExternBuffer>& constants,
      const std::vector<PackedInput>& packed) const override {
    if (needs_following_epilogue(call))
      return prepare_with_following_epilogue(*this, call, constants, packed);
    const ExternOp op = call.op;
    switch (op) {
      case ExternOp::MatMul:
        return prepare_portable_matmul(call, constants, packed, threads_, packed_store_.get());
      case ExternOp::Conv:
      case ExternOp::ConvTranspose:
        return prepare_portable_conv(call, constants, packed, threads_, packed_store_.get());
      case ExternOp::SegmentReduce:
        return prepare_portable_segment_reduce(call, threads_);
      case ExternOp::ScatterElements:
        return prepare_function_extern(call, portable_scatter_elements);
      case ExternOp::ScatterND:
      case ExternOp::TopK:
      case ExternOp::BitCast:
        return prepare_function_extern(call, reference_extern(op));
      case ExternOp::MatMulInteger:
        return prepare_portable_matmul_integer(call, constants, threads_);
      case ExternOp::ConvInteger:
        return prepare_portable_conv_integer(call, constants, threads_);
      case ExternOp::Attention:
        return prepare_portable_attention(call, threads_);
      case ExternOp::MatMulNBits:
        return prepare_portable_matmul_nbits(call, constants, threads_);
    }
    fail("extern '", extern_op_name(call.op), "': not an extern op");
  }

 private:
  int threads_;
  std::shared_ptr<PackedStore> packed_store_;
};

}  // namespace

std::unique_ptr<KernelBackend> make_portable_backend(const BackendOptions& options) {
  simd::apply_isa_from_environment();
  return std::make_unique<PortableBackend>(options.threads, options.packed_store);
}

const char* portable_target_name() {
  return simd::target_name();
}

}  // namespace ferrite
