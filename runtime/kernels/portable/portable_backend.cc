#include "runtime/kernels/portable/portable_backend.h"

#include "compiler/plan/stage_times.h"

#include "runtime/kernels/portable/block_executor.h"
#include "runtime/kernels/portable/conv_f32.h"
#include "runtime/kernels/portable/matmul_f32.h"
#include "runtime/kernels/portable/scatter_f32.h"
#include "runtime/kernels/portable/segment_reduce_f32.h"
#include "runtime/kernels/portable/simd_f32.h"
#include "runtime/kernels/reference/reference_backend.h"

namespace ferrite {
namespace {

class PortableBackend : public KernelBackend {
 public:
  explicit PortableBackend(int threads) : threads_(threads) {}
  const char* name() const override { return "portable"; }
  std::unique_ptr<PreparedKernel> prepare(const Kernel& k) const override {
    validate_kernel(k);
    StageTimer timer("portable/block_program");
    return std::make_unique<portable::BlockExecutor>(k);
  }
  ExternFn find_extern(const std::string& op) const override { return portable_extern(op); }
  // MatMul and convolutions pack constant weights once and keep their scratch memory;
  // SegmentReduce keeps its destination-sorted edges while the indices stay the same.
  std::unique_ptr<PreparedExtern> prepare_extern(
      const ExternCall& call, const std::vector<ExternBuffer>& constants,
      const std::vector<PackedInput>& packed) const override {
    if (call.op == "MatMul") return prepare_portable_matmul(call, constants, packed, threads_);
    if (call.op == "Conv" || call.op == "ConvTranspose")
      return prepare_portable_conv(call, constants, packed, threads_);
    if (call.op == "SegmentReduce") return prepare_portable_segment_reduce(call, threads_);
    return KernelBackend::prepare_extern(call, constants, packed);
  }

 private:
  int threads_;
};

}  // namespace

std::unique_ptr<KernelBackend> make_portable_backend(const BackendOptions& options) {
  simd::apply_isa_from_environment();
  return std::make_unique<PortableBackend>(options.threads);
}

ExternFn portable_extern(const std::string& op) {
  if (op == "MatMul") return portable_matmul;
  if (op == "Conv") return portable_conv;
  if (op == "ConvTranspose") return portable_conv_transpose;
  if (op == "SegmentReduce") return portable_segment_reduce;
  if (op == "ScatterElements") return portable_scatter_elements;
  return reference_extern(op);
}

const char* portable_target_name() {
  return simd::target_name();
}

}  // namespace ferrite
