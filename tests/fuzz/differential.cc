#include "tests/fuzz/differential.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "bindings/cli/tensor_values.h"
#include "compiler/plan/error.h"
#include "compiler/plan/externs/extern_op.h"
#include "runtime/session.h"
#include "tests/fuzz/fuzz_inputs.h"
#include "tests/fuzz/jittered_reference.h"
#include "tests/fuzz/plan_hazards.h"

namespace ferrite::fuzz {
namespace {

// Per-element tolerance relative to the element, plus an absolute one relative to the
// output's largest finite magnitude (a result that cancels to ~0 keeps the rounding error
// of terms at that scale). Half types get their own epsilon's worth.
// In a plan with an extern that sums float32 products (FloatSums, float_sums_of), a float32
// GEMM (oneDNN's, the portable one, MLAS in onnxruntime) overflows as its order of partial
// sums decides, where the reference sums in double and rounds once: where the reference
// gives an infinity any infinity or NaN agrees (Overflows); and when an operand passes
// sqrt(FLT_MAX), whose products overflow float32, a GEMM's infinity or NaN agrees wherever
// the reference is finite too (Huge: its double sums of such products may cancel to a
// finite value no float32 GEMM can give).
enum class FloatSums { None, Overflows, Huge };

std::string compare_one(const Tensor& ref, const Tensor& got, FloatSums sums) {
  if (ref.dtype() == DType::String && got.dtype() == DType::String) {  // byte for byte
    if (ref.shape() != got.shape() || ref.strings() != got.strings()) return "strings differ";
    return "";
  }
  if (sums != FloatSums::None && ref.dtype() == DType::F32 && got.dtype() == DType::F32 &&
      ref.shape() == got.shape()) {
    Tensor same(DType::F32, got.shape());
    std::memcpy(same.data(), got.data(), got.nbytes());
    float* g = same.as<float>();
    const float* r = ref.as<float>();
    for (int64_t i = 0; i < ref.elements(); ++i)
      if (!std::isfinite(g[i]) && (std::isinf(r[i]) || sums == FloatSums::Huge)) g[i] = r[i];
    return compare_one(ref, same, FloatSums::None);
  }
  double rtol = 1e-3;
  if (ref.dtype() == DType::F16) rtol = 4e-3;
  if (ref.dtype() == DType::BF16) rtol = 3e-2;
  double scale = 0;
  if (dtype_is_float(ref.dtype()) && ref.dtype() == got.dtype() && ref.shape() == got.shape()) {
    for (int64_t i = 0; i < ref.elements(); ++i) {
      const double v = std::fabs(element_as_double(ref, i));
      if (std::isfinite(v) && v > scale) scale = v;
    }
  }
  return compare_tensors(got, ref, rtol, 1e-5 + 1e-4 * scale);
}

// How the plan's float32 sums compare (compare_one): None without a MatMul, MatMulNBits,
// Conv or ConvTranspose extern; Huge when a float32 constant or input passes sqrt(FLT_MAX).
FloatSums float_sums_of(const Plan& plan, const std::vector<Tensor>& inputs) {
  bool sums = false;
  for (const ExternCall& x : plan.externs) {
    sums = sums || x.op == ExternOp::MatMul || x.op == ExternOp::Conv ||
           x.op == ExternOp::ConvTranspose || x.op == ExternOp::MatMulNBits;
  }
  if (!sums) return FloatSums::None;
  auto huge = [](const float* v, size_t n) {
    for (size_t i = 0; i < n; ++i)
      if (std::isfinite(v[i]) && std::fabs(v[i]) > 1.8e19f) return true;
    return false;
  };
  for (const PlanBuffer& b : plan.buffers) {
    if (b.kind != BufferKind::Constant || b.dtype != DType::F32 || b.constant < 0 ||
        static_cast<size_t>(b.constant) >= plan.constants.size())
      continue;
    const ConstantBytes& c = plan.constants[static_cast<size_t>(b.constant)];
    if (huge(reinterpret_cast<const float*>(c.data()), c.size() / sizeof(float)))
      return FloatSums::Huge;
  }
  for (const Tensor& t : inputs)
    if (t.dtype() == DType::F32 && huge(t.as<float>(), static_cast<size_t>(t.elements())))
      return FloatSums::Huge;
  return FloatSums::Overflows;
}

struct Outcome {
  bool loaded = false, ran = false;
  std::string error;
  std::vector<Tensor> outputs;
};

Outcome run_on(const std::string& backend, const Plan& plan, const std::vector<Tensor>& inputs) {
  Outcome o;
  SessionOptions options;
  options.backend = backend;
  options.threads = 1;
  std::optional<Session> session;
  try {
    session.emplace(plan, options);
  } catch (const Error& e) {
    o.error = e.what();
    return o;
  }
  o.loaded = true;
  std::vector<const Tensor*> feeds;
  for (const Tensor& t : inputs) feeds.push_back(&t);
  try {
    o.outputs = session->run(feeds);
    o.ran = true;
  } catch (const Error& e) {
    o.error = e.what();
  }
  return o;
}

// What the plan runs, for telling disagreements apart (triage.py groups them by this line):
// its extern ops, and whether it has kernels.
std::string plan_summary(const Plan& plan) {
  std::string ops;
  for (const Step& s : plan.steps) {
    if (s.kind != StepKind::Extern) continue;
    const std::string op = extern_op_name(plan.externs[static_cast<size_t>(s.index)].op);
    if (ops.find(op) == std::string::npos) ops += (ops.empty() ? "" : ",") + op;
  }
  return str_cat("externs [", ops, "], ", plan.kernels.empty() ? "no kernels" : "kernels");
}

[[noreturn]] void disagree(const std::string& backend, const Plan& plan, const std::string& what) {
  std::fprintf(stderr, "==fuzz== backend disagreement (%s): %s vs reference: %s\n",
               plan_summary(plan).c_str(), backend.c_str(), what.c_str());
  std::abort();
}

// FERRITE_FUZZ_DIFF: 0 compares nothing; strict also reports order-dependent plans
// (plan_hazards.h) that validate_plan accepted; anything else compares the rest.
enum class DiffMode { Off, Defined, Strict };

DiffMode diff_mode() {
  static const DiffMode mode = [] {
    const char* v = std::getenv("FERRITE_FUZZ_DIFF");
    const std::string s = v ? v : "";
    return s == "0" ? DiffMode::Off : s == "strict" ? DiffMode::Strict : DiffMode::Defined;
  }();
  return mode;
}

// The inputs with every float32 element moved by 2^-20 of itself, up or down by its index
// (a fixed pattern, or its opposite when `flip`): what an implementation's own rounding
// amounts to, since a sum taken in another order is the exact sum of inputs moved by a few
// ulps each.
std::vector<Tensor> perturbed(const std::vector<Tensor>& inputs, bool flip) {
  std::vector<Tensor> out;
  for (const Tensor& t : inputs) {
    Tensor c = Tensor::copy_of(t);
    if (t.dtype() == DType::F32) {
      float* v = c.as<float>();
      for (int64_t i = 0; i < c.elements(); ++i) {
        const uint64_t h = (static_cast<uint64_t>(i) + 1) * 0x9E3779B97F4A7C15ull;
        v[i] *= ((h >> 63) != flip) ? 1.0f + 0x1p-20f : 1.0f - 0x1p-20f;
      }
    }
    out.push_back(std::move(c));
  }
  return out;
}

bool is_f32_like(const Tensor& t, const Tensor& like) {
  return t.dtype() == DType::F32 && t.shape() == like.shape();
}

// Whether a and b are the same non-finite value (NaN, or an infinity of one sign).
bool same_non_finite(float a, float b) {
  return (std::isnan(a) && std::isnan(b)) || (std::isinf(a) && a == b);
}

// How far the reference's float32 outputs move when it is moved by 2^-20 (the reruns of
// `reruns`; jittered_reference.h), gathered one rerun at a time (a rerun's outputs are not
// kept: 34 copies of a large output would not fit): per element, 4 times the largest move,
// and whether a rerun left the element undefined.
struct Sensitivity {
  struct Output {
    bool comparable = false;
    std::vector<float> spread;
    std::vector<uint8_t> undefined;
  };
  std::vector<Output> outputs;

  explicit Sensitivity(const std::vector<Tensor>& ref) : outputs(ref.size()) {
    for (size_t k = 0; k < ref.size(); ++k) {
      if (ref[k].dtype() != DType::F32) continue;
      const size_t n = static_cast<size_t>(ref[k].elements());
      outputs[k] = Output{true, std::vector<float>(n, 0.0f), std::vector<uint8_t>(n, 0)};
    }
  }

  // Where a moved result is not finite where the reference's is, or finite or another
  // non-finite value where it is not, or moves by a quarter of the element or more, float32
  // does not determine the element to two bits, nor its domain (1 / sqrt of a variance that
  // cancels to about 0 is huge, NaN or moderate by a rounding).
  void add(const std::vector<Tensor>& ref, const std::vector<Tensor>& moved) {
    for (size_t k = 0; k < outputs.size(); ++k) {
      Output& o = outputs[k];
      if (!o.comparable) continue;
      if (k >= moved.size() || !is_f32_like(moved[k], ref[k])) {
        o.comparable = false;
        continue;
      }
      const float *r = ref[k].as<float>(), *m = moved[k].as<float>();
      for (size_t i = 0; i < o.spread.size(); ++i) {
        if (!std::isfinite(r[i]) || !std::isfinite(m[i])) {
          if (!same_non_finite(r[i], m[i])) o.undefined[i] = 1;
          continue;
        }
        const float spread = static_cast<float>(4.0 * std::fabs(double{r[i]} - m[i]));
        o.spread[i] = std::max(o.spread[i], spread);
        if (o.spread[i] > 0 && o.spread[i] >= std::fabs(r[i])) o.undefined[i] = 1;
      }
    }
  }
};

// `got` with its float32 elements set to the reference's where they lie within the
// reference's own spread (Sensitivity), or where that leaves them undefined: elements whose
// result so small a change moves that far (a division by a cancellation, the edge of a
// rounding) are as well-defined as float32 makes them, no better; undefined ones are not
// compared. (A wrong value there goes unseen; a wrong kernel is wrong at well-conditioned
// elements too.)
std::vector<Tensor> within_sensitivity(const std::vector<Tensor>& ref,
                                       const std::vector<Tensor>& got, const Sensitivity& s) {
  std::vector<Tensor> out;
  for (size_t k = 0; k < got.size(); ++k) {
    Tensor c = Tensor::copy_of(got[k]);
    if (k < ref.size() && k < s.outputs.size() && s.outputs[k].comparable &&
        c.dtype() == DType::F32 && is_f32_like(ref[k], c)) {
      const Sensitivity::Output& o = s.outputs[k];
      float* g = c.as<float>();
      const float* r = ref[k].as<float>();
      for (size_t i = 0; i < o.spread.size(); ++i) {
        if (o.undefined[i] ||
            (std::isfinite(r[i]) && std::fabs(double{g[i]} - r[i]) <= o.spread[i]))
          g[i] = r[i];
      }
    }
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace

std::string compare_outputs(const std::vector<Tensor>& ref, const std::vector<Tensor>& got,
                            const Plan& plan, const std::vector<Tensor>& inputs) {
  const FloatSums float_sums = float_sums_of(plan, inputs);
  if (ref.size() != got.size()) {
    return str_cat(got.size(), " outputs, the reference ", ref.size());
  }
  for (size_t i = 0; i < ref.size(); ++i) {
    const std::string d = compare_one(ref[i], got[i], float_sums);
    if (!d.empty()) return str_cat("output ", i, ": ", d);
  }
  return "";
}

namespace {

// The plan the jittered reruns run: `unfused()` when given and it compiles, else `plan`.
Plan rerun_plan(const Plan& plan, const std::function<Plan()>& unfused) {
  if (unfused) {
    try {
      return unfused();
    } catch (const Error&) {
    }
  }
  return plan;
}

// The reference's outputs moved by 2^-20 every way, each added to a Sensitivity: its inputs
// up and down by a fixed pattern, then the results of each group of steps up and down (at
// most kJitterGroups groups: each step alone in a plan of as many steps or fewer), a pair
// at a time, until the disagreement at hand is within what the reference itself moves
// (`settled`). The moves are the reference's alone, so the pairs run for one backend's
// disagreement serve the next backend's. Under the fuzz build's instrumentation the
// reference interprets about 1e7 operations a second: 34 reruns of an unfused normalization
// of a [20,13,48,38] input (2e7 operations each) took 13 s per backend. Bounding the groups
// by work left some too few to excuse a cancellation (a variance of exactly 0 in real
// numbers, whose rounding sign decides a Sqrt's NaN): a false report at 566,371 runs. So
// past kRerunWork (all pairs together; the first pair always runs) they end without a
// verdict instead: OverBudget, a disagreement neither excused nor reported.
class Reruns {
 public:
  enum class Verdict { Settled, Unsettled, OverBudget, Failed };

  Reruns(const Plan& plan, const std::vector<Tensor>& inputs, const std::function<Plan()>& unfused,
         const std::vector<Tensor>& ref)
      : plan_(plan), inputs_(inputs), unfused_(unfused), ref_(ref), sensitivity_(ref) {}

  Verdict until(const std::function<bool(const Sensitivity&)>& settled) {
    if (next_ > -1 && !failed_ && settled(sensitivity_)) return Verdict::Settled;
    if (!p_) {
      p_ = rerun_plan(plan_, unfused_);
      work_ = std::max(1.0, estimated_work(*p_));
      groups_ =
          std::min<int>(kJitterGroups, static_cast<int>(p_->kernels.size() + p_->externs.size()));
    }
    for (;;) {
      if (failed_) return Verdict::Failed;
      if (next_ >= groups_) return Verdict::Unsettled;
      if (next_ >= 0 && spent_ + 2 * work_ > kRerunWork) return Verdict::OverBudget;
      run_pair(next_++);
      if (!failed_ && settled(sensitivity_)) return Verdict::Settled;
    }
  }

 private:
  static constexpr int kJitterGroups = 16;
  static constexpr double kRerunWork = 4e7;

  void run_pair(int g) {
    for (const bool up : {true, false}) {
      set_jitter(std::max(g, 0), g < 0 ? 0 : groups_, up);
      std::vector<Tensor> shifted;
      if (g < 0) shifted = perturbed(inputs_, !up);
      Outcome o = run_on(jittered_reference(), *p_, g < 0 ? shifted : inputs_);
      spent_ += work_;
      set_jitter(0, 0, true);
      if (!o.ran) {
        failed_ = true;
        return;
      }
      sensitivity_.add(ref_, o.outputs);
    }
  }

  const Plan& plan_;
  const std::vector<Tensor>& inputs_;
  const std::function<Plan()>& unfused_;
  const std::vector<Tensor>& ref_;
  Sensitivity sensitivity_;
  std::optional<Plan> p_;
  double work_ = 1, spent_ = 0;
  int groups_ = 0, next_ = -1;
  bool failed_ = false;
};

}  // namespace

void run_on_every_backend(const Plan& plan, const std::vector<Tensor>& inputs,
                          const std::function<Plan()>& unfused) {
  const std::vector<std::string>& backends = fuzz_backends();
  DiffMode mode = diff_mode();
  if (mode != DiffMode::Off) {
    const std::string hazard = order_dependence(plan);
    if (!hazard.empty() && mode == DiffMode::Strict) {
      std::fprintf(stderr, "==fuzz== order-dependent plan accepted: %s\n", hazard.c_str());
      std::abort();
    }
    if (!hazard.empty()) mode = DiffMode::Off;  // no result to compare with
  }
  const Outcome ref = run_on(backends[0], plan, inputs);
  std::optional<Reruns> jittered;  // made at the first disagreement
  for (size_t b = 1; b < backends.size(); ++b) {
    const Outcome got = run_on(backends[b], plan, inputs);
    if (mode == DiffMode::Off || !ref.loaded || !got.loaded) continue;
    if (ref.ran != got.ran) {
      disagree(backends[b], plan,
               ref.ran ? str_cat("it failed: ", got.error)
                       : str_cat("it ran, the reference failed: ", ref.error));
    }
    if (!ref.ran) continue;
    std::string d = compare_outputs(ref.outputs, got.outputs, plan, inputs);
    if (d.empty()) continue;
    // Before reporting: how far the reference itself moves when moved by 2^-20.
    if (!jittered) jittered.emplace(plan, inputs, unfused, ref.outputs);
    std::string within = d;
    auto settled = [&](const Sensitivity& s) {
      within = compare_outputs(ref.outputs, within_sensitivity(ref.outputs, got.outputs, s), plan,
                               inputs);
      return within.empty();
    };
    switch (jittered->until(settled)) {
      case Reruns::Verdict::Settled:
        continue;
      case Reruns::Verdict::OverBudget:
        std::fprintf(stderr, "==fuzz== not compared (reruns over their budget): %s\n",
                     within.c_str());
        continue;
      case Reruns::Verdict::Unsettled:
        d = within;
        break;
      case Reruns::Verdict::Failed:
        break;
    }
    disagree(backends[b], plan, d);
  }
}

}  // namespace ferrite::fuzz
