#include "runtime/following_epilogue.h"

#include <algorithm>
#include <string>

#include "compiler/plan/epilogue_kernel.h"
#include "compiler/plan/error.h"

namespace ferrite {
namespace {

class FollowingEpilogue final : public PreparedExtern {
 public:
  FollowingEpilogue(const KernelBackend& backend, const ExternCall& call,
                    const std::vector<ExternBuffer>& constants,
                    const std::vector<PackedInput>& packed)
      : call_(call), op_call_(call), epilogue_(epilogue_kernel(call)) {
    const size_t n = op_input_count(call);
    op_call_.inputs.resize(n);
    set_epilogue(&op_call_, EpilogueBody{});
    std::vector<ExternBuffer> op_constants(constants.begin(),
                                           constants.begin() + std::min(n, constants.size()));
    std::vector<PackedInput> op_packed;
    for (const PackedInput& p : packed)
      if (p.input < n) op_packed.push_back(p);
    op_ = backend.prepare_extern(op_call_, op_constants, op_packed);
    kernel_ = backend.prepare(epilogue_.kernel);
    args_.resize(epilogue_.kernel.args.size());
  }

  void run(const ExternBuffer* inputs, const ExternBuffer* outputs) override {
    op_->run(inputs, outputs);
    const std::vector<KernelArg>& a = epilogue_.kernel.args;
    if (a[0].elements == 0) return;  // an empty result
    auto bind = [&](size_t arg, const ExternBuffer& b, const char* what, int32_t input) {
      if (b.elements < a[arg].elements || !b.data)
        fail(call_.origin, ": the epilogue's ", what, input >= 0 ? str_cat(" ", input) : "",
             " reaches ", a[arg].elements, " elements of a buffer of ", b.elements);
      args_[arg] = b.data;
    };
    bind(0, outputs[0], "result", -1);
    for (size_t i = 0; i < epilogue_.inputs.size(); ++i) {
      const int32_t in = epilogue_.inputs[i];
      bind(i + 1, inputs[in], "input", in);
    }
    args_.back() = outputs[0].data;
    kernel_->run(args_.data());
  }

  size_t scratch_bytes() const override { return op_->scratch_bytes(); }
  void bind_scratch(void* scratch) override { op_->bind_scratch(scratch); }
  std::string implementation() const override {
    const std::string op = op_->implementation();
    return op.empty() ? std::string() : op + " + epilogue kernel";
  }
  std::vector<size_t> constants_copied() const override { return op_->constants_copied(); }
  std::vector<PackedConstant> packed_inputs() const override { return op_->packed_inputs(); }
  size_t packed_inputs_adopted() const override { return op_->packed_inputs_adopted(); }

 private:
  const ExternCall& call_;
  ExternCall op_call_;  // the op alone: prepared op_ refers to it
  EpilogueKernel epilogue_;
  std::unique_ptr<PreparedExtern> op_;
  std::unique_ptr<PreparedKernel> kernel_;
  std::vector<void*> args_;
};

}  // namespace

void check_chain_epilogue(const ExternCall& call) {
  if (needs_following_epilogue(call))
    fail("internal: ", extern_op_name(call.op), " prepared with an epilogue that is no chain of ",
         "post-ops (prepare_with_following_epilogue runs those)");
}

std::unique_ptr<PreparedExtern> prepare_with_following_epilogue(
    const KernelBackend& backend, const ExternCall& call,
    const std::vector<ExternBuffer>& constants, const std::vector<PackedInput>& packed) {
  return std::make_unique<FollowingEpilogue>(backend, call, constants, packed);
}

}  // namespace ferrite
