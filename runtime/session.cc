// The Session: everything that can be decided once is decided at load (validation, backend
// preparation, constant and pool memory, the per-buffer base table), so that run() only
// checks inputs, binds input/output memory and walks the steps.
#include "runtime/session.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <string>

#include "compiler/plan/error.h"
#include "compiler/plan/resource_limits.h"
#include "compiler/plan/stage_times.h"
#include "runtime/backend.h"

namespace ferrite {
namespace {

std::string type_text(DType dtype, const std::vector<int64_t>& shape) {
  std::string s = str_cat(dtype_name(dtype), "[");
  for (size_t i = 0; i < shape.size(); ++i) s += str_cat(i ? "," : "", shape[i]);
  return s + "]";
}

IoInfo io_info(const PlanBuffer& b) {
  return IoInfo{b.name, b.dtype, b.shape};
}

}  // namespace

struct Session::Impl {
  Plan plan;
  SessionOptions options;
  std::unique_ptr<KernelBackend> backend;
  std::vector<ConstantBytes> constants;  // taken from the plan (empty once released)
  AlignedBytes pool;
  AlignedBytes scratch;  // shared by every extern (PreparedExtern::scratch_bytes)
  std::vector<std::unique_ptr<PreparedKernel>> kernels;  // one per plan kernel
  std::vector<std::unique_ptr<PreparedExtern>> externs;  // one per plan extern
  std::vector<void*> bases;                              // one per plan buffer
  std::vector<IoInfo> inputs, outputs;
  // Scratch tables reused by every run.
  std::vector<void*> args;
  std::vector<ExternBuffer> ext_in, ext_out;
  std::vector<StepTime> times;  // one per step with options.profile
  size_t packed_used = 0;
  std::vector<bool> packed_only;  // per constant: the plan holds it only packed
  // Indexes, so that loading costs O(plan) and not O(externs x plan):
  std::vector<std::vector<int32_t>> constant_buffers;  // per constant: its plan buffers
  std::vector<std::vector<size_t>> packed_of_extern;   // per extern: its plan.packed entries

  void load();
  // Per plan constant: how many kernel steps, guards, externs and plan outputs reference it.
  std::vector<int> constant_references() const;
  // After extern e is prepared: its copied constants (PreparedExtern::constants_copied) lose
  // a reference each, and those left with none are freed, so that prepacked weights are
  // held once, and the original goes before the next extern packs its own.
  void release_copied(size_t e, std::vector<int>* refs);
  // Prepares extern e with the packed forms the plan carries for it, then drops them.
  void prepare_extern(size_t e);
  void bind_inputs(const std::vector<const Tensor*>& in);
  // False when a guard skipped the step.
  bool run_step(const Step& step);
  ExternBuffer extern_buffer(int32_t id) const {
    const PlanBuffer& b = plan.buffers[id];
    return ExternBuffer{bases[id], b.dtype, b.elements()};
  }
};

void Session::Impl::load() {
  StageTimer timer("session_load");
  {
    StageTimer t("session_load/validate_plan");
    validate_plan(plan);
  }
  // Before the pool is allocated: the plan's sizes are untrusted (a plan file, or shapes
  // that declare hundreds of GB). Constants are counted as the plan carries them.
  const int64_t limit = memory_limit_or_default(options.memory_limit);
  check_plan_memory(plan, limit);
  const int64_t planned = plan_memory(plan).total();
  BackendOptions backend_options;
  backend_options.isa = options.isa;
  backend_options.threads = options.threads;
  backend_options.dump_dir = options.dump_dir;
  backend_options.fast_math = options.fast_math;
  backend_options.packed_store = options.packed_store;
  backend = make_backend(options.backend, backend_options);
  // The constants (64-byte aligned already) move out of the plan, which keeps their
  // buffers' sizes only: the session runs from the bytes the compiler or the plan reader
  // made, without a copy.
  packed_only = packed_only_constants(plan);
  for (size_t c = 0; c < plan.constants.size(); ++c) {
    constants.push_back(std::move(plan.constants[c]));
    ConstantBytes().swap(plan.constants[c]);
  }
  pool = aligned_alloc_bytes(checked_size(plan.pool_bytes, "the memory pool"));
  bases.assign(plan.buffers.size(), nullptr);
  for (size_t i = 0; i < plan.buffers.size(); ++i) {
    const PlanBuffer& b = plan.buffers[i];
    if (b.kind == BufferKind::Temp) bases[i] = pool.get() + b.offset;
    if (b.kind == BufferKind::Constant) {
      // A constant held only packed has a null base; one of no bytes a valid one (as every
      // buffer that is not packed away), never read.
      static const ConstantBytes kNoBytes(64);
      const ConstantBytes& c = constants[static_cast<size_t>(b.constant)];
      const uint8_t* base = packed_only[static_cast<size_t>(b.constant)] ? nullptr
                            : c.empty()                                  ? kNoBytes.data()
                                                                         : c.data();
      bases[i] = const_cast<uint8_t*>(base);  // kernels never write constants (validate_plan)
    }
  }
  {
    StageTimer t("session_load/kernels");
    for (const Kernel& k : plan.kernels) kernels.push_back(backend->prepare(k));
  }
  if (options.before_packing) options.before_packing();
  constant_buffers.assign(constants.size(), {});
  for (size_t i = 0; i < plan.buffers.size(); ++i) {
    const PlanBuffer& b = plan.buffers[i];
    if (b.kind == BufferKind::Constant && b.constant >= 0 &&
        static_cast<size_t>(b.constant) < constant_buffers.size())
      constant_buffers[static_cast<size_t>(b.constant)].push_back(static_cast<int32_t>(i));
  }
  packed_of_extern.assign(plan.externs.size(), {});
  for (size_t p = 0; p < plan.packed.size(); ++p) {
    const int32_t e = plan.packed[p].extern_index;
    if (e >= 0 && static_cast<size_t>(e) < packed_of_extern.size())
      packed_of_extern[static_cast<size_t>(e)].push_back(p);
  }
  std::vector<int> refs = constant_references();
  StageTimer externs_timer("session_load/externs");
  for (size_t e = 0; e < plan.externs.size(); ++e) {
    prepare_extern(e);
    release_copied(e, &refs);
  }
  size_t scratch_bytes = 0;
  for (const auto& e : externs) scratch_bytes = std::max(scratch_bytes, e->scratch_bytes());
  if (scratch_bytes > 0) {
    int64_t held = planned;
    if (__builtin_add_overflow(held, static_cast<int64_t>(scratch_bytes), &held)) held = INT64_MAX;
    check_memory_limit(held, limit,
                       str_cat("the model (with ", scratch_bytes, " bytes of extern scratch)"));
    scratch = aligned_alloc_bytes(scratch_bytes);
    for (const auto& e : externs) e->bind_scratch(scratch.get());
  }
  if (options.profile) {
    for (const Step& step : plan.steps) {
      StepTime t;
      if (step.kind == StepKind::Kernel) {
        t.label = "kernel " + plan.kernels[step.index].name;
      } else {
        const ExternCall& call = plan.externs[step.index];
        const std::string impl = externs[step.index]->implementation();
        t.label = "extern " + (call.origin.empty() ? extern_op_name(call.op) : call.origin) +
                  (impl.empty() ? "" : " [" + impl + "]");
      }
      times.push_back(std::move(t));
    }
  }
  for (int32_t id : plan.inputs) inputs.push_back(io_info(plan.buffers[id]));
  for (int32_t id : plan.outputs) outputs.push_back(io_info(plan.buffers[id]));
}

void Session::Impl::prepare_extern(size_t e) {
  const ExternCall& call = plan.externs[e];
  std::vector<ExternBuffer> known;
  for (const TensorRef& r : call.inputs)
    known.push_back(plan.buffers[r.buffer].kind == BufferKind::Constant ? extern_buffer(r.buffer)
                                                                        : ExternBuffer{});
  std::vector<PackedInput> packed;
  const std::vector<size_t>& packed_here = packed_of_extern[e];
  for (size_t p : packed_here) {
    const PackedConstant& c = plan.packed[p];
    packed.push_back(
        PackedInput{static_cast<size_t>(c.input), c.layout, c.bytes.data(), c.bytes.size()});
  }
  externs.push_back(backend->prepare_extern(call, known, packed));
  packed_used += externs.back()->packed_inputs_adopted();
  const std::vector<size_t> copied = externs.back()->constants_copied();
  for (size_t i = 0; i < call.inputs.size(); ++i) {
    const PlanBuffer& b = plan.buffers[static_cast<size_t>(call.inputs[i].buffer)];
    if (b.kind != BufferKind::Constant || !packed_only[static_cast<size_t>(b.constant)] ||
        std::find(copied.begin(), copied.end(), i) != copied.end())
      continue;
    std::string layouts;
    for (const PackedInput& p : packed)
      if (p.input == i) layouts += str_cat(layouts.empty() ? "" : ", ", "'", p.layout, "'");
    fail(call.origin.empty() ? std::string(extern_op_name(call.op)) : call.origin, ": input ", i,
         " ('", b.name, "') is in the plan only prepacked (", layouts, "), in a form backend '",
         options.backend,
         "' does not use on this machine; compile the plan for this backend on this machine, or "
         "without prepacking");
  }
  for (size_t p : packed_here)  // copied into the extern, or of no use here
    std::vector<uint8_t>().swap(plan.packed[p].bytes);
}

std::vector<int> Session::Impl::constant_references() const {
  std::vector<int> refs(constants.size(), 0);
  auto mark = [&](int32_t buffer) {
    const PlanBuffer& b = plan.buffers[static_cast<size_t>(buffer)];
    if (b.kind == BufferKind::Constant) ++refs[static_cast<size_t>(b.constant)];
  };
  for (const Step& step : plan.steps) {
    for (const Guard& g : step.guards) mark(g.buffer);
    if (step.kind == StepKind::Kernel)
      for (int32_t id : step.buffers) mark(id);
  }
  // Every extern is prepared and releases what it copied, whether or not a step runs it
  // (counting steps let an unstepped extern free a weight that a stepped one still reads).
  for (const ExternCall& call : plan.externs) {
    for (const TensorRef& r : call.inputs) mark(r.buffer);
    for (const TensorRef& r : call.outputs) mark(r.buffer);
  }
  for (int32_t id : plan.outputs) mark(id);
  return refs;
}

void Session::Impl::release_copied(size_t e, std::vector<int>* refs) {
  const ExternCall& call = plan.externs[e];
  for (size_t i : externs[e]->constants_copied()) {
    const int32_t id = call.inputs[i].buffer;
    const PlanBuffer& b = plan.buffers[static_cast<size_t>(id)];
    if (b.kind != BufferKind::Constant) continue;
    const size_t c = static_cast<size_t>(b.constant);
    if (--(*refs)[c] > 0) continue;
    ConstantBytes().swap(constants[c]);
    for (int32_t j : constant_buffers[c]) bases[static_cast<size_t>(j)] = nullptr;
  }
}

void Session::Impl::bind_inputs(const std::vector<const Tensor*>& in) {
  if (in.size() != plan.inputs.size())
    fail("expected ", plan.inputs.size(), " inputs, got ", in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    const IoInfo& want = inputs[i];
    if (!in[i]) fail("input '", want.name, "': no tensor given");
    if (in[i]->dtype() != want.dtype || in[i]->shape() != want.shape)
      fail("input '", want.name, "': expected ", type_text(want.dtype, want.shape), ", got ",
           type_text(in[i]->dtype(), in[i]->shape()));
    // Kernels only read inputs (validate_plan rejects writes to them).
    bases[plan.inputs[i]] = const_cast<uint8_t*>(in[i]->data());
  }
}

bool Session::Impl::run_step(const Step& step) {
  for (const Guard& g : step.guards) {
    if ((*static_cast<const uint8_t*>(bases[g.buffer]) != 0) != g.value) return false;
  }
  if (step.kind == StepKind::Kernel) {
    args.clear();
    for (int32_t id : step.buffers) args.push_back(bases[id]);
    kernels[step.index]->run(args.data());
    return true;
  }
  const ExternCall& call = plan.externs[step.index];
  ext_in.clear();
  ext_out.clear();
  for (const TensorRef& r : call.inputs) ext_in.push_back(extern_buffer(r.buffer));
  for (const TensorRef& r : call.outputs) ext_out.push_back(extern_buffer(r.buffer));
  try {
    externs[step.index]->run(ext_in.data(), ext_out.data());
  } catch (const Error& e) {
    if (call.origin.empty()) throw;
    fail(call.origin, ": ", e.what());
  }
  return true;
}

Session::Session(Plan plan, SessionOptions options) : impl_(std::make_unique<Impl>()) {
  impl_->plan = std::move(plan);
  impl_->options = std::move(options);
  impl_->load();
}

Session::~Session() = default;

size_t Session::packed_constants_used() const {
  return impl_->packed_used;
}

std::vector<PackedConstant> Session::packed_constants() const {
  std::vector<PackedConstant> out;
  for (size_t e = 0; e < impl_->externs.size(); ++e) {
    for (PackedConstant& c : impl_->externs[e]->packed_inputs()) {
      c.extern_index = static_cast<int32_t>(e);
      out.push_back(std::move(c));
    }
  }
  return out;
}

const std::vector<IoInfo>& Session::inputs() const {
  return impl_->inputs;
}
const std::vector<IoInfo>& Session::outputs() const {
  return impl_->outputs;
}
size_t Session::constant_bytes() const {
  size_t bytes = 0;
  for (const ConstantBytes& c : impl_->constants) bytes += c.size();
  return bytes;
}

const Plan& Session::plan() const {
  return impl_->plan;
}

std::vector<Tensor> Session::run(const std::vector<const Tensor*>& inputs) {
  Impl& s = *impl_;
  s.bind_inputs(inputs);
  std::vector<Tensor> out;
  out.reserve(s.plan.outputs.size());
  for (size_t i = 0; i < s.plan.outputs.size(); ++i) {
    out.emplace_back(s.outputs[i].dtype, s.outputs[i].shape);
    s.bases[s.plan.outputs[i]] = out.back().data();
  }
  // Input and output bases are rebound on every run, before any step reads them.
  if (s.times.empty()) {
    for (const Step& step : s.plan.steps) s.run_step(step);
    return out;
  }
  using Clock = std::chrono::steady_clock;
  for (size_t i = 0; i < s.plan.steps.size(); ++i) {
    const Clock::time_point start = Clock::now();
    if (!s.run_step(s.plan.steps[i])) continue;
    s.times[i].total_ms += std::chrono::duration<double, std::milli>(Clock::now() - start).count();
    ++s.times[i].runs;
  }
  return out;
}

std::vector<StepTime> Session::profile() const {
  return impl_->times;
}

void Session::reset_profile() {
  for (StepTime& t : impl_->times) {
    t.runs = 0;
    t.total_ms = 0;
  }
}

std::vector<std::string> available_backends() {
  return backend_names();
}

}  // namespace ferrite
