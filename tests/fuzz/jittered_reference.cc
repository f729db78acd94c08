#include "tests/fuzz/jittered_reference.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <vector>

#include "compiler/plan/ops.h"
#include "runtime/backend.h"

namespace ferrite::fuzz {
namespace {

struct Jitter {
  int group = 0, groups = 0;
  bool up = true;
  int next_ordinal = 0;  // of the next step prepared
};
Jitter g_jitter;  // the fuzz targets run on one thread

// Whether the step prepared next moves, and which way.
bool next_step_moves() {
  const int ordinal = g_jitter.next_ordinal++;
  return g_jitter.groups > 0 && ordinal % g_jitter.groups == g_jitter.group;
}

// Every element moved by `rel` of its magnitude or of `scale`, whichever is larger, up or
// down by a fixed pattern of its index (all reversed when !up); one within that of 0 goes to
// 0 instead of up. `scale` is the largest
// finite magnitude the step read: a sum is determined only to float32's rounding of its
// terms, not of itself (E[X - mean] of uniform data is about 1e-8 where a float32 mean of it
// errs by 3e-8), and a pattern moves a later sum over the elements either way.
void jitter(void* data, DType dtype, int64_t elements, bool up, float scale, float rel) {
  if (dtype != DType::F32 || !data) return;
  float* v = static_cast<float*>(data);
  for (int64_t i = 0; i < elements; ++i) {
    const uint64_t h = (static_cast<uint64_t>(i) + 1) * 0x9E3779B97F4A7C15ull;
    const float move = rel * std::max(std::fabs(v[i]), scale);
    const bool plus = ((h >> 63) != 0) == up;
    if (!std::isfinite(v[i])) continue;
    // A value within its move of 0 has no determined sign, nor is it determined not to be
    // 0: one run of the pair makes it 0 (x / x of a cancellation that one backend rounds
    // to exactly 0 is NaN there, 1 on the reference: a fuzz report at 279,337 runs).
    if (plus && std::fabs(v[i]) < move) {
      v[i] = 0;
      continue;
    }
    v[i] += plus ? move : -move;
  }
}

// The largest finite magnitude among n float32 values (0 for other dtypes).
float largest(const void* data, DType dtype, int64_t n) {
  if (dtype != DType::F32 || !data) return 0;
  const float* v = static_cast<const float*>(data);
  float m = 0;
  for (int64_t i = 0; i < n; ++i)
    if (std::isfinite(v[i])) m = std::max(m, std::fabs(v[i]));
  return m;
}

// How far a kernel's results move: 2^-20, or its least accurate op's contract (ops.h: Pow
// and Erf may be 16 ulp off, 2^-19 of a value; a Pow of 3.4e38 within that of FLT_MAX is
// infinite on a vector backend, finite on the reference, and 2^-20 did not reach it).
float kernel_rel(const Kernel& k) {
  double ulps = 0;
  for (const Instr& in : k.code)
    if (in.type == ScalarType::F32) ulps = std::max(ulps, op_info(in.op).ulp);
  return std::max(0x1p-20f, static_cast<float>(ulps) * 0x1p-23f);
}

class JitteredKernel : public PreparedKernel {
 public:
  JitteredKernel(std::unique_ptr<PreparedKernel> inner, const Kernel& k, bool up)
      : inner_(std::move(inner)), args_(k.args), up_(up), rel_(kernel_rel(k)) {}
  void run(void* const* args) override {
    float scale = 0;
    for (size_t i = 0; i < args_.size(); ++i)
      if (!args_[i].output)
        scale = std::max(scale, largest(args[i], args_[i].dtype, args_[i].elements));
    inner_->run(args);
    for (size_t i = 0; i < args_.size(); ++i)
      if (args_[i].output) jitter(args[i], args_[i].dtype, args_[i].elements, up_, scale, rel_);
  }

 private:
  std::unique_ptr<PreparedKernel> inner_;
  std::vector<KernelArg> args_;
  bool up_;
  float rel_;
};

class JitteredExtern : public PreparedExtern {
 public:
  JitteredExtern(std::unique_ptr<PreparedExtern> inner, size_t inputs, size_t outputs, bool up)
      : inner_(std::move(inner)), inputs_(inputs), outputs_(outputs), up_(up) {}
  void run(const ExternBuffer* inputs, const ExternBuffer* outputs) override {
    float scale = 0;
    for (size_t i = 0; i < inputs_; ++i)
      scale = std::max(scale, largest(inputs[i].data, inputs[i].dtype, inputs[i].elements));
    inner_->run(inputs, outputs);
    for (size_t i = 0; i < outputs_; ++i)
      jitter(outputs[i].data, outputs[i].dtype, outputs[i].elements, up_, scale, 0x1p-20f);
  }
  size_t scratch_bytes() const override { return inner_->scratch_bytes(); }
  void bind_scratch(void* scratch) override { inner_->bind_scratch(scratch); }

 private:
  std::unique_ptr<PreparedExtern> inner_;
  size_t inputs_, outputs_;
  bool up_;
};

class JitteredReference : public KernelBackend {
 public:
  JitteredReference() : reference_(make_backend("reference")) {}
  const char* name() const override { return jittered_reference(); }
  std::unique_ptr<PreparedKernel> prepare(const Kernel& k) const override {
    std::unique_ptr<PreparedKernel> p = reference_->prepare(k);
    if (!next_step_moves()) return p;
    return std::make_unique<JitteredKernel>(std::move(p), k, g_jitter.up);
  }
  std::unique_ptr<PreparedExtern> prepare_extern(
      const ExternCall& call, const std::vector<ExternBuffer>& constants,
      const std::vector<PackedInput>& packed) const override {
    std::unique_ptr<PreparedExtern> p = reference_->prepare_extern(call, constants, packed);
    if (!next_step_moves()) return p;
    return std::make_unique<JitteredExtern>(std::move(p), call.inputs.size(), call.outputs.size(),
                                            g_jitter.up);
  }

 private:
  std::unique_ptr<KernelBackend> reference_;
};

}  // namespace

void set_jitter(int group, int groups, bool up) {
  g_jitter = Jitter{group, groups, up, 0};
}

const char* jittered_reference() {
  static const bool registered = [] {
    register_backend("reference-jittered", [](const BackendOptions&) {
      return std::unique_ptr<KernelBackend>(std::make_unique<JitteredReference>());
    });
    return true;
  }();
  (void)registered;
  return "reference-jittered";
}

}  // namespace ferrite::fuzz
