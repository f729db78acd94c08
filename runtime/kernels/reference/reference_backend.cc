#include "runtime/kernels/reference/reference_backend.h"

#include "compiler/plan/interpret.h"
#include "runtime/kernels/reference/conv.h"
#include "runtime/kernels/reference/matmul.h"
#include "runtime/kernels/reference/scatter.h"
#include "runtime/kernels/reference/segment_reduce.h"
#include "runtime/kernels/reference/topk.h"

namespace ferrite {
namespace {

class ReferenceKernel : public PreparedKernel {
 public:
  explicit ReferenceKernel(const Kernel& k) : k_(k) {}
  void run(void* const* args) override { interpret_kernel(k_, args); }

 private:
  Kernel k_;
};

class ReferenceBackend : public KernelBackend {
 public:
  const char* name() const override { return "reference"; }
  std::unique_ptr<PreparedKernel> prepare(const Kernel& k) const override {
    validate_kernel(k);
    return std::make_unique<ReferenceKernel>(k);
  }
  ExternFn find_extern(const std::string& op) const override { return reference_extern(op); }
};

}  // namespace

std::unique_ptr<KernelBackend> make_reference_backend() {
  return std::make_unique<ReferenceBackend>();
}

ExternFn reference_extern(const std::string& op) {
  if (op == "MatMul") return reference_matmul;
  if (op == "Conv") return reference_conv;
  if (op == "ConvTranspose") return reference_conv_transpose;
  if (op == "ScatterElements") return reference_scatter_elements;
  if (op == "ScatterND") return reference_scatter_nd;
  if (op == "SegmentReduce") return reference_segment_reduce;
  if (op == "TopK") return reference_topk;
  return nullptr;
}

}  // namespace ferrite
