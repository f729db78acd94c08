// Session: a two-step plan (kernel into a pool temp, then a MatMul extern into the output)
// runs on both backends; input count, dtype and shape errors name the input; unknown
// backends and missing externs are reported by name; repeated runs with a large output take
// no fresh pages.
#include "runtime/session.h"

#include <gtest/gtest.h>

#include <cstring>

#if defined(__linux__) && !defined(__EMSCRIPTEN__)
#include <sys/resource.h>
#endif

#include "compiler/plan/error.h"
#include "tests/unit/runtime/kernel_builder.h"

namespace ferrite {
namespace testing {
namespace {

ConstantBytes bytes_of(const std::vector<float>& v) {
  ConstantBytes b(v.size() * sizeof(float));
  std::memcpy(b.mutable_data(), v.data(), b.size());
  return b;
}

PlanBuffer buffer(const char* name, std::vector<int64_t> shape, BufferKind kind) {
  PlanBuffer b;
  b.name = name;
  b.dtype = DType::F32;
  b.shape = std::move(shape);
  b.kind = kind;
  return b;
}

TensorRef ref(int32_t buffer, std::vector<int64_t> shape, std::vector<int64_t> strides) {
  TensorRef r;
  r.buffer = buffer;
  r.shape = std::move(shape);
  r.strides = std::move(strides);
  return r;
}

// y[2,2] = (x[2,3] + c[2,3]) @ w[3,2], with t = x + c in the pool at offset 64.
Plan two_step_plan() {
  Plan p;
  p.buffers.push_back(buffer("x", {2, 3}, BufferKind::Input));     // 0
  p.buffers.push_back(buffer("c", {2, 3}, BufferKind::Constant));  // 1
  p.buffers.push_back(buffer("w", {3, 2}, BufferKind::Constant));  // 2
  p.buffers.push_back(buffer("t", {2, 3}, BufferKind::Temp));      // 3
  p.buffers.push_back(buffer("y", {2, 2}, BufferKind::Output));    // 4
  p.buffers[1].constant = 0;
  p.buffers[2].constant = 1;
  p.buffers[3].offset = 64;
  p.pool_bytes = 128;
  p.constants.push_back(bytes_of({10, 20, 30, 40, 50, 60}));
  p.constants.push_back(bytes_of({1, 0, 0, 1, 1, 1}));
  KernelBuilder b({6});
  const int x = b.arg(DType::F32, 6), c = b.arg(DType::F32, 6), t = b.arg(DType::F32, 6, true);
  b.store(t, V(0), b.binary(Op::Add, b.load(x, V(0)), b.load(c, V(0))));
  p.kernels.push_back(b.build());
  ExternCall mm;
  mm.op = ExternOp::MatMul;
  mm.inputs = {ref(3, {2, 3}, {3, 1}), ref(2, {3, 2}, {2, 1})};
  mm.outputs = {ref(4, {2, 2}, {2, 1})};
  p.externs.push_back(mm);
  p.steps.push_back(Step{StepKind::Kernel, 0, {0, 1, 3}, {}});
  p.steps.push_back(Step{StepKind::Extern, 0, {}, {}});
  p.inputs = {0};
  p.outputs = {4};
  return p;
}

std::string error_of(Session& s, const std::vector<const Tensor*>& in) {
  try {
    s.run(in);
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(Session, RunsTwoStepPlanOnEveryBackend) {
  for (const char* backend : {"reference", "portable"}) {
    SessionOptions opts;
    opts.backend = backend;
    Session s(two_step_plan(), opts);
    ASSERT_EQ(s.inputs().size(), 1u);
    EXPECT_EQ(s.inputs()[0].name, "x");
    EXPECT_EQ(s.outputs()[0].name, "y");
    EXPECT_EQ(s.outputs()[0].shape, (std::vector<int64_t>{2, 2}));
    const std::vector<float> xv = {1, 2, 3, 4, 5, 6};
    const Tensor x(DType::F32, {2, 3}, xv.data());
    for (int rep = 0; rep < 2; ++rep) {  // a second run reuses the pool
      std::vector<Tensor> out = s.run({&x});
      ASSERT_EQ(out.size(), 1u);
      // t = [[11, 22, 33], [44, 55, 66]]; w = [[1, 0], [0, 1], [1, 1]].
      const float want[4] = {11 + 33, 22 + 33, 44 + 66, 55 + 66};
      for (int i = 0; i < 4; ++i) EXPECT_EQ(out[0].as<float>()[i], want[i]) << backend << i;
    }
  }
}

TEST(Session, InputErrorsNameTheInput) {
  Session s(two_step_plan(), SessionOptions{});
  const Tensor good(DType::F32, {2, 3});
  const Tensor wrong_shape(DType::F32, {3, 2});
  const Tensor wrong_type(DType::I64, {2, 3});
  EXPECT_EQ(error_of(s, {}), "expected 1 inputs, got 0");
  EXPECT_EQ(error_of(s, {&good, &good}), "expected 1 inputs, got 2");
  EXPECT_EQ(error_of(s, {&wrong_shape}), "input 'x': expected float32[2,3], got float32[3,2]");
  EXPECT_EQ(error_of(s, {&wrong_type}), "input 'x': expected float32[2,3], got int64[2,3]");
  EXPECT_EQ(error_of(s, {nullptr}), "input 'x': no tensor given");
  EXPECT_EQ(error_of(s, {&good}), "(no error)");
}

TEST(Session, UnknownBackendAndExternAreNamed) {
  SessionOptions opts;
  opts.backend = "gpu";
  try {
    Session s(two_step_plan(), opts);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("unknown backend 'gpu'"), std::string::npos) << e.what();
  }
  Plan p = two_step_plan();
  p.externs[0].op = static_cast<ExternOp>(kExternOpCount);
  try {
    Session s(std::move(p), SessionOptions{});
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), str_cat("plan: extern 0 has unknown op ", kExternOpCount));
  }
  const std::vector<std::string> names = available_backends();
  EXPECT_NE(std::find(names.begin(), names.end(), "portable"), names.end());
  EXPECT_NE(std::find(names.begin(), names.end(), "reference"), names.end());
}

// A backend whose externs ask for scratch memory, record what the Session gives them (while
// g_scratch_log is set), and compute through the reference after scribbling over the whole
// arena. It stays registered: tests that loop over every backend run it too, without a
// Session, so it then allocates its own scratch as the contract says.
struct ScratchLog {
  std::vector<std::vector<bool>> constant_inputs;  // per prepared extern
  std::vector<void*> bound;
};
ScratchLog* g_scratch_log = nullptr;

class ScratchExtern : public PreparedExtern {
 public:
  ScratchExtern(const ExternCall& call, size_t bytes) : call_(call), bytes_(bytes) {}
  void run(const ExternBuffer* inputs, const ExternBuffer* outputs) override {
    if (!scratch_) {
      own_.resize(bytes_ + 64);
      scratch_ = own_.data() + (64 - reinterpret_cast<uintptr_t>(own_.data()) % 64) % 64;
    }
    EXPECT_EQ(reinterpret_cast<uintptr_t>(scratch_) % 64, 0u);
    std::memset(scratch_, 0xab, bytes_);  // the whole arena is ours while we run
    make_backend("reference")->prepare_extern(call_)->run(inputs, outputs);
  }
  size_t scratch_bytes() const override { return bytes_; }
  void bind_scratch(void* scratch) override {
    scratch_ = scratch;
    if (g_scratch_log) g_scratch_log->bound.push_back(scratch);
  }

 private:
  const ExternCall& call_;
  size_t bytes_;
  void* scratch_ = nullptr;
  std::vector<uint8_t> own_;
};

class ScratchBackend : public KernelBackend {
 public:
  const char* name() const override { return "scratch_test"; }
  std::unique_ptr<PreparedKernel> prepare(const Kernel& k) const override {
    return make_backend("reference")->prepare(k);
  }
  std::unique_ptr<PreparedExtern> prepare_extern(
      const ExternCall& call, const std::vector<ExternBuffer>& constants,
      const std::vector<PackedInput>& /*packed*/) const override {
    if (!g_scratch_log) return std::make_unique<ScratchExtern>(call, 100);
    std::vector<bool> known;
    for (const ExternBuffer& b : constants) known.push_back(b.data != nullptr);
    g_scratch_log->constant_inputs.push_back(known);
    // Sizes differ per extern: the arena must fit the largest.
    return std::make_unique<ScratchExtern>(call, 1000 * g_scratch_log->constant_inputs.size());
  }
};

TEST(Session, ExternsShareOneScratchArenaAndSeeTheirConstants) {
  ScratchLog log;
  g_scratch_log = &log;
  register_backend("scratch_test", [](const BackendOptions&) -> std::unique_ptr<KernelBackend> {
    return std::make_unique<ScratchBackend>();
  });
  Plan p = two_step_plan();
  p.externs.push_back(p.externs[0]);  // the same MatMul twice, into a second output
  p.buffers.push_back(buffer("y2", {2, 2}, BufferKind::Output));
  p.externs[1].outputs[0].buffer = 5;
  p.steps.push_back(Step{StepKind::Extern, 1, {}, {}});
  p.outputs = {4, 5};
  SessionOptions opts;
  opts.backend = "scratch_test";
  Session s(std::move(p), opts);
  // Input 0 is the temp t, input 1 the constant w.
  EXPECT_EQ(log.constant_inputs, (std::vector<std::vector<bool>>{{false, true}, {false, true}}));
  ASSERT_EQ(log.bound.size(), 2u);
  EXPECT_EQ(log.bound[0], log.bound[1]);
  const std::vector<float> xv = {1, 2, 3, 4, 5, 6};
  const Tensor x(DType::F32, {2, 3}, xv.data());
  std::vector<Tensor> out = s.run({&x});
  const float want[4] = {11 + 33, 22 + 33, 44 + 66, 55 + 66};
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(out[0].as<float>()[i], want[i]);
    EXPECT_EQ(out[1].as<float>()[i], want[i]);
  }
  g_scratch_log = nullptr;
}

// A backend whose externs copy their constant inputs at prepare time (unless the call's
// origin is "reads"), say so (constants_copied), and at run compute from their copies,
// recording whether the Session passed those buffers freed (data null).
struct CopyLog {
  std::vector<bool> got_null;  // per run of a copying extern
};
CopyLog* g_copy_log = nullptr;

class CopyingExtern : public PreparedExtern {
 public:
  CopyingExtern(const ExternCall& call, const std::vector<ExternBuffer>& constants) : call_(call) {
    copies_.resize(call.inputs.size());
    for (size_t i = 0; i < constants.size() && call.origin != "reads"; ++i) {
      if (!constants[i].data) continue;
      const float* f = static_cast<const float*>(constants[i].data);
      copies_[i].assign(f, f + constants[i].elements);
      copied_.push_back(i);
    }
  }
  void run(const ExternBuffer* inputs, const ExternBuffer* outputs) override {
    std::vector<ExternBuffer> in(inputs, inputs + call_.inputs.size());
    for (size_t i : copied_) {
      if (g_copy_log) g_copy_log->got_null.push_back(in[i].data == nullptr);
      in[i].data = copies_[i].data();
    }
    make_backend("reference")->prepare_extern(call_)->run(in.data(), outputs);
  }
  std::vector<size_t> constants_copied() const override { return copied_; }

 private:
  const ExternCall& call_;
  std::vector<std::vector<float>> copies_;
  std::vector<size_t> copied_;
};

class CopyingBackend : public KernelBackend {
 public:
  const char* name() const override { return "copy_test"; }
  std::unique_ptr<PreparedKernel> prepare(const Kernel& k) const override {
    return make_backend("reference")->prepare(k);
  }
  std::unique_ptr<PreparedExtern> prepare_extern(
      const ExternCall& call, const std::vector<ExternBuffer>& constants,
      const std::vector<PackedInput>& /*packed*/) const override {
    return std::make_unique<CopyingExtern>(call, constants);
  }
};

TEST(Session, ConstantsThatExternsCopiedAreFreed) {
  register_backend("copy_test", [](const BackendOptions&) -> std::unique_ptr<KernelBackend> {
    return std::make_unique<CopyingBackend>();
  });
  CopyLog log;
  g_copy_log = &log;
  SessionOptions opts;
  opts.backend = "copy_test";
  const std::vector<float> xv = {1, 2, 3, 4, 5, 6};
  const Tensor x(DType::F32, {2, 3}, xv.data());
  const float want[4] = {11 + 33, 22 + 33, 44 + 66, 55 + 66};
  {
    // The MatMul copied w: w is freed (c, which the kernel reads, stays), and the MatMul
    // runs from its copy with w's buffer null.
    Session s(two_step_plan(), opts);
    EXPECT_EQ(s.constant_bytes(), 6 * sizeof(float));
    for (int run = 0; run < 2; ++run) {
      const std::vector<Tensor> out = s.run({&x});
      for (int i = 0; i < 4; ++i) EXPECT_EQ(out[0].as<float>()[i], want[i]);
    }
    EXPECT_EQ(log.got_null, (std::vector<bool>{true, true}));
  }
  log.got_null.clear();
  {
    // A second MatMul reads w itself: w stays, and the first one gets it as it is.
    Plan p = two_step_plan();
    p.externs.push_back(p.externs[0]);
    p.externs[1].origin = "reads";
    p.buffers.push_back(buffer("y2", {2, 2}, BufferKind::Output));
    p.externs[1].outputs[0].buffer = 5;
    p.steps.push_back(Step{StepKind::Extern, 1, {}, {}});
    p.outputs = {4, 5};
    Session s(std::move(p), opts);
    EXPECT_EQ(s.constant_bytes(), 12 * sizeof(float));
    const std::vector<Tensor> out = s.run({&x});
    for (int i = 0; i < 4; ++i) {
      EXPECT_EQ(out[0].as<float>()[i], want[i]);
      EXPECT_EQ(out[1].as<float>()[i], want[i]);
    }
    EXPECT_EQ(log.got_null, (std::vector<bool>{false}));
  }
  g_copy_log = nullptr;
}

#if defined(__linux__) && !defined(__EMSCRIPTEN__) && !defined(__SANITIZE_ADDRESS__) && \
    !defined(__SANITIZE_THREAD__)
int64_t minor_page_faults() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_minflt;
}

TEST(Session, RunsWithLargeOutputsTakeNoFreshPages) {
  // y = 2x over 2 MiB: the output tensor each run returns comes from the heap, which reuses
  // what the last run's output freed. Mapped afresh (as weights are), every run took a page
  // fault per 4 KiB in the kernel writing it. (The sanitizers' allocators quarantine freed
  // memory; wasm has no page faults to count.)
  constexpr int64_t n = int64_t{1} << 19;
  Plan p;
  p.buffers.push_back(buffer("x", {n}, BufferKind::Input));
  p.buffers.push_back(buffer("y", {n}, BufferKind::Output));
  KernelBuilder b({n});
  const int x = b.arg(DType::F32, n), y = b.arg(DType::F32, n, true);
  b.store(y, V(0), b.binary(Op::Mul, b.load(x, V(0)), b.constant(ScalarType::F32, 2)));
  p.kernels.push_back(b.build());
  p.steps.push_back(Step{StepKind::Kernel, 0, {0, 1}, {}});
  p.inputs = {0};
  p.outputs = {1};
  Session s(std::move(p), SessionOptions());
  std::vector<float> xv(static_cast<size_t>(n));
  for (size_t i = 0; i < xv.size(); ++i) xv[i] = static_cast<float>(i % 1000);
  const Tensor xt(DType::F32, {n}, xv.data());
  for (int run = 0; run < 3; ++run) s.run({&xt});  // the heap grows to its size once
  const int64_t before = minor_page_faults();
  for (int run = 0; run < 4; ++run) {
    const std::vector<Tensor> out = s.run({&xt});
    ASSERT_EQ(out[0].as<float>()[n - 1], 2.0f * xv.back());
  }
  const int64_t pages_per_run = n * 4 / 4096;
  EXPECT_LT(minor_page_faults() - before, pages_per_run / 4) << "faults over 4 runs";
}
#endif

TEST(Session, ProfileTimesEveryStepOfEveryRun) {
  Plan p = two_step_plan();
  p.externs[0].origin = "MatMul 'mm'";
  const std::string kernel = "kernel " + p.kernels[0].name;
  SessionOptions opts;
  opts.backend = "portable";
  Session plain(two_step_plan(), opts);
  EXPECT_TRUE(plain.profile().empty());
  opts.profile = true;
  Session s(std::move(p), opts);
  const std::vector<float> xv = {1, 2, 3, 4, 5, 6};
  const Tensor x(DType::F32, {2, 3}, xv.data());
  for (int rep = 0; rep < 3; ++rep) {
    const std::vector<Tensor> got = s.run({&x}), want = plain.run({&x});
    for (int i = 0; i < 4; ++i) EXPECT_EQ(got[0].as<float>()[i], want[0].as<float>()[i]);
  }
  std::vector<StepTime> t = s.profile();
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t[0].label, kernel);
  EXPECT_EQ(t[1].label, "extern MatMul 'mm'");  // the portable MatMul names no library
  for (const StepTime& step : t) {
    EXPECT_EQ(step.runs, 3);
    EXPECT_GE(step.total_ms, 0.0);
  }
  s.reset_profile();
  s.run({&x});
  t = s.profile();
  EXPECT_EQ(t[0].runs, 1);
  EXPECT_EQ(t[1].runs, 1);
}

TEST(Session, InvalidPlanIsRejected) {
  Plan p = two_step_plan();
  p.buffers[3].offset = 4096;  // past the pool
  EXPECT_THROW(Session(std::move(p), SessionOptions{}), Error);
}

}  // namespace
}  // namespace testing
}  // namespace ferrite
