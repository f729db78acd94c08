#include "tests/fuzz/jittered_reference.h"

#include <cstdint>
#include <memory>
#include <vector>

#include "runtime/backend.h"

namespace ferrite::fuzz {
namespace {

void jitter(void* data, DType dtype, int64_t elements, bool up) {
  if (dtype != DType::F32 || !data) return;
  float* v = static_cast<float*>(data);
  const float scale = up ? 1.0f + 0x1p-20f : 1.0f - 0x1p-20f;
  for (int64_t i = 0; i < elements; ++i) v[i] *= scale;
}

class JitteredKernel : public PreparedKernel {
 public:
  JitteredKernel(std::unique_ptr<PreparedKernel> inner, const Kernel& k, bool up)
      : inner_(std::move(inner)), args_(k.args), up_(up) {}
  void run(void* const* args) override {
    inner_->run(args);
    for (size_t i = 0; i < args_.size(); ++i)
      if (args_[i].output) jitter(args[i], args_[i].dtype, args_[i].elements, up_);
  }

 private:
  std::unique_ptr<PreparedKernel> inner_;
  std::vector<KernelArg> args_;
  bool up_;
};

class JitteredExtern : public PreparedExtern {
 public:
  JitteredExtern(std::unique_ptr<PreparedExtern> inner, size_t outputs, bool up)
      : inner_(std::move(inner)), outputs_(outputs), up_(up) {}
  void run(const ExternBuffer* inputs, const ExternBuffer* outputs) override {
    inner_->run(inputs, outputs);
    for (size_t i = 0; i < outputs_; ++i)
      jitter(outputs[i].data, outputs[i].dtype, outputs[i].elements, up_);
  }
  size_t scratch_bytes() const override { return inner_->scratch_bytes(); }
  void bind_scratch(void* scratch) override { inner_->bind_scratch(scratch); }

 private:
  std::unique_ptr<PreparedExtern> inner_;
  size_t outputs_;
  bool up_;
};

class JitteredReference : public KernelBackend {
 public:
  explicit JitteredReference(bool up) : reference_(make_backend("reference")), up_(up) {}
  const char* name() const override { return jittered_reference(up_); }
  std::unique_ptr<PreparedKernel> prepare(const Kernel& k) const override {
    return std::make_unique<JitteredKernel>(reference_->prepare(k), k, up_);
  }
  std::unique_ptr<PreparedExtern> prepare_extern(
      const ExternCall& call, const std::vector<ExternBuffer>& constants,
      const std::vector<PackedInput>& packed) const override {
    return std::make_unique<JitteredExtern>(reference_->prepare_extern(call, constants, packed),
                                            call.outputs.size(), up_);
  }

 private:
  std::unique_ptr<KernelBackend> reference_;
  bool up_;
};

}  // namespace

const char* jittered_reference(bool up) {
  static const bool registered = [] {
    register_backend("reference-jittered-up", [](const BackendOptions&) {
      return std::unique_ptr<KernelBackend>(std::make_unique<JitteredReference>(true));
    });
    register_backend("reference-jittered-down", [](const BackendOptions&) {
      return std::unique_ptr<KernelBackend>(std::make_unique<JitteredReference>(false));
    });
    return true;
  }();
  (void)registered;
  return up ? "reference-jittered-up" : "reference-jittered-down";
}

}  // namespace ferrite::fuzz
