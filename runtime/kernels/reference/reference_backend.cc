#include "runtime/kernels/reference/reference_backend.h"

#include "compiler/plan/error.h"
#include "compiler/plan/externs/extern_op.h"
#include "compiler/plan/interpret.h"
#include "runtime/function_extern.h"
#include "runtime/kernels/reference/attention.h"
#include "runtime/kernels/reference/bitcast.h"
#include "runtime/kernels/reference/conv.h"
#include "runtime/kernels/reference/conv_integer.h"
#include "runtime/kernels/reference/matmul.h"
#include "runtime/kernels/reference/matmul_integer.h"
#include "runtime/kernels/reference/matmul_nbits.h"
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
  std::unique_ptr<PreparedExtern> prepare_extern(
      const ExternCall& call, const std::vector<ExternBuffer>& /*constants*/,
      const std::vector<PackedInput>& /*packed*/) const override {
    ExternFn fn = reference_extern(call.op);
    if (!fn) fail("extern '", extern_op_name(call.op), "': not an extern op");
    return prepare_function_extern(call, fn);
  }
};

}  // namespace

std::unique_ptr<KernelBackend> make_reference_backend() {
  return std::make_unique<ReferenceBackend>();
}

// The registration table: each extern op's definition.
ExternFn reference_extern(ExternOp op) {
  switch (op) {
    case ExternOp::MatMul:
      return reference_matmul;
    case ExternOp::Conv:
    case ExternOp::ConvTranspose:
      return reference_conv;
    case ExternOp::ScatterElements:
      return reference_scatter_elements;
    case ExternOp::ScatterND:
      return reference_scatter_nd;
    case ExternOp::SegmentReduce:
      return reference_segment_reduce;
    case ExternOp::TopK:
      return reference_topk;
    case ExternOp::MatMulInteger:
      return reference_matmul_integer;
    case ExternOp::ConvInteger:
      return reference_conv_integer;
    case ExternOp::Attention:
      return reference_attention;
    case ExternOp::MatMulNBits:
      return reference_matmul_nbits;
    case ExternOp::BitCast:
      return reference_bitcast;
  }
  return nullptr;  // not an ExternOp
}

}  // namespace ferrite
