// The C API (bindings/c/ferrite.h), called as a C program would: sessions from files,
// bytes and compiled plans; the declared inputs and outputs; runs checked against values
// computed here and against the C++ Engine on the reference backend; every error status
// with its message; one session run from several threads (tests/c_api/threads.c runs the
// same under ThreadSanitizer).
#include "bindings/c/ferrite.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include "bindings/engine/engine.h"
#include "compiler/plan/plan_io.h"
#include "tests/unit/support/source_dir.h"
#ifdef FERRITE_HAS_JIT
#include "runtime/kernels/dnnl/dnnl_externs.h"
#endif

namespace ferrite {
namespace {

const std::string kFixtures = test::source_dir() + "/tests/cli/fixtures/";
const std::string kMlp = test::source_dir() + "/examples/models/mlp.onnx";

std::vector<uint8_t> file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>((std::istreambuf_iterator<char>(in)),
                              std::istreambuf_iterator<char>());
}

FerriteTensor view(FerriteDType dtype, const std::vector<int64_t>& shape, const void* data,
                   size_t nbytes) {
  return FerriteTensor{dtype, shape.size(), shape.data(), data, nbytes};
}

FerriteTensor f32_view(const std::vector<int64_t>& shape, const std::vector<float>& v) {
  return view(FERRITE_FLOAT32, shape, v.data(), v.size() * sizeof(float));
}

FerriteOutput output_into(std::vector<float>* buffer) {
  FerriteOutput o{};
  o.data = buffer->data();
  o.capacity = buffer->size() * sizeof(float);
  return o;
}

// Owns a session; fails the test on a creation error.
struct SessionPtr {
  FerriteSession* s = nullptr;
  ~SessionPtr() { ferrite_session_destroy(s); }
};

std::vector<float> mlp_input() {
  std::vector<float> x(64);
  for (int i = 0; i < 64; ++i) x[i] = std::sin(0.37f * static_cast<float>(i));
  return x;
}

// The mlp's output for mlp_input() from the C++ Engine on the reference backend.
std::vector<float> mlp_oracle() {
  EngineOptions options;
  options.session.backend = "reference";
  std::unique_ptr<Engine> engine = Engine::from_file(kMlp, options);
  const std::vector<float> x = mlp_input();
  const Tensor t(DType::F32, {1, 64}, x.data());
  const std::vector<Tensor> out = engine->run({{"x", &t}});
  return std::vector<float>(out[0].as<float>(), out[0].as<float>() + 10);
}

// Runs the mlp through the C API; returns y.
std::vector<float> run_mlp(FerriteSession* s) {
  const std::vector<float> x = mlp_input();
  const std::vector<int64_t> shape = {1, 64};
  const FerriteTensor in = f32_view(shape, x);
  const char* in_name = "x";
  std::vector<float> y(10, -1.0f);
  FerriteOutput out = output_into(&y);
  EXPECT_EQ(ferrite_session_run(s, 1, &in_name, &in, 1, nullptr, &out), FERRITE_OK)
      << ferrite_last_error();
  EXPECT_EQ(out.dtype, FERRITE_FLOAT32);
  EXPECT_EQ(out.rank, 2u);
  EXPECT_EQ(out.shape[0], 1);
  EXPECT_EQ(out.shape[1], 10);
  EXPECT_EQ(out.nbytes, 40u);
  return y;
}

void expect_near(const std::vector<float>& a, const std::vector<float>& b, const char* what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  for (size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], b[i], 1e-5f) << what << " " << i;
}

TEST(CApi, VersionAndNoErrorYet) {
  EXPECT_STREQ(ferrite_version(), "1.0.0");
  EXPECT_EQ(ferrite_api_version(), FERRITE_API_VERSION);
}

TEST(CApi, DeclaredInputsAndOutputs) {
  SessionPtr p;
  ASSERT_EQ(ferrite_session_create(kMlp.c_str(), nullptr, &p.s), FERRITE_OK)
      << ferrite_last_error();
  ASSERT_EQ(ferrite_session_input_count(p.s), 1u);
  ASSERT_EQ(ferrite_session_output_count(p.s), 1u);
  FerriteTensorInfo info{};
  ASSERT_EQ(ferrite_session_input_info(p.s, 0, &info), FERRITE_OK);
  EXPECT_STREQ(info.name, "x");
  EXPECT_EQ(info.dtype, FERRITE_FLOAT32);
  ASSERT_EQ(info.rank, 2u);
  EXPECT_EQ(info.shape[0], 1);
  EXPECT_EQ(info.shape[1], 64);
  ASSERT_EQ(ferrite_session_output_info(p.s, 0, &info), FERRITE_OK);
  EXPECT_STREQ(info.name, "y");
  EXPECT_EQ(info.shape[1], 10);
  EXPECT_EQ(ferrite_session_input_info(p.s, 1, &info), FERRITE_INVALID_ARGUMENT);
  EXPECT_STREQ(ferrite_last_error(), "input index 1 is out of range (the model has 1)");
  EXPECT_EQ(ferrite_session_output_info(p.s, 0, nullptr), FERRITE_INVALID_ARGUMENT);

  SessionPtr sym;
  ASSERT_EQ(ferrite_session_create((kFixtures + "sym_add.onnx").c_str(), nullptr, &sym.s),
            FERRITE_OK);
  ASSERT_EQ(ferrite_session_input_info(sym.s, 1, &info), FERRITE_OK);
  EXPECT_STREQ(info.name, "b");
  EXPECT_EQ(info.shape[0], -1);  // N
  EXPECT_EQ(info.shape[1], 3);
  EXPECT_STREQ(ferrite_session_input_dim_name(sym.s, 1, 0), "N");
  EXPECT_EQ(ferrite_session_input_dim_name(sym.s, 1, 1), nullptr);  // static
  EXPECT_STREQ(ferrite_session_output_dim_name(sym.s, 0, 0), "N");
  EXPECT_EQ(ferrite_session_input_dim_name(sym.s, 2, 0), nullptr);  // no such input
  EXPECT_EQ(ferrite_session_input_dim_name(sym.s, 0, 2), nullptr);  // no such dim
  EXPECT_EQ(ferrite_session_input_dim_name(nullptr, 0, 0), nullptr);
  EXPECT_EQ(ferrite_session_input_dim_name(p.s, 0, 0), nullptr);  // the mlp's are static
}

TEST(CApi, RunsMatchTheReferenceOnEveryBackendFromFilesBytesAndPlans) {
  const std::vector<float> expected = mlp_oracle();
  float sum = 0;
  for (float v : expected) sum += v;
  ASSERT_NEAR(sum, 1.0f, 1e-5f);  // softmax

  FerriteOptions* options = nullptr;
  ASSERT_EQ(ferrite_options_create(&options), FERRITE_OK);
  std::vector<std::string> backends = {"reference", "portable"};
#ifdef FERRITE_HAS_JIT
  backends.push_back("jit");
#endif
  const std::vector<uint8_t> onnx = file_bytes(kMlp);
  for (const std::string& backend : backends) {
    ASSERT_EQ(ferrite_options_set_backend(options, backend.c_str()), FERRITE_OK);
    ASSERT_EQ(ferrite_options_set_threads(options, 2), FERRITE_OK);
    SessionPtr from_file, from_bytes;
    ASSERT_EQ(ferrite_session_create(kMlp.c_str(), options, &from_file.s), FERRITE_OK);
    ASSERT_EQ(ferrite_session_create_from_bytes(onnx.data(), onnx.size(), options, &from_bytes.s),
              FERRITE_OK);
    expect_near(run_mlp(from_file.s), expected, backend.c_str());
    expect_near(run_mlp(from_bytes.s), expected, backend.c_str());
    expect_near(run_mlp(from_file.s), expected, "second run");
  }
  ferrite_options_destroy(options);

  // A compiled plan (what `ferrite compile` writes), as bytes and as a file.
  EngineOptions engine_options;
  engine_options.compile_at_load = false;  // as `ferrite compile`: compile_plan compiles
  std::unique_ptr<Engine> engine = Engine::from_file(kMlp, engine_options);
  const std::vector<float> x = mlp_input();
  const Tensor t(DType::F32, {1, 64}, x.data());
  const std::vector<uint8_t> plan = serialize_plan(engine->compile_plan({{"x", &t}}));
  SessionPtr from_plan;
  ASSERT_EQ(ferrite_session_create_from_bytes(plan.data(), plan.size(), nullptr, &from_plan.s),
            FERRITE_OK)
      << ferrite_last_error();
  expect_near(run_mlp(from_plan.s), expected, "plan");
}

TEST(CApi, FastMathMultipliesInBfloat16WhereTheCpuCan) {
  const std::vector<float> expected = mlp_oracle();
  FerriteOptions* options = nullptr;
  ASSERT_EQ(ferrite_options_create(&options), FERRITE_OK);
  EXPECT_EQ(ferrite_options_set_fast_math(nullptr, 1), FERRITE_INVALID_ARGUMENT);
  ASSERT_EQ(ferrite_options_set_fast_math(options, 1), FERRITE_OK);
  ASSERT_EQ(ferrite_options_set_profiling(options, 1), FERRITE_OK);
  SessionPtr s;
  ASSERT_EQ(ferrite_session_create(kMlp.c_str(), options, &s.s), FERRITE_OK);
  ferrite_options_destroy(options);
  const std::vector<float> got = run_mlp(s.s);
  ASSERT_EQ(got.size(), expected.size());
  // Probabilities from logits whose products were rounded to bfloat16 (8 significant bits).
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], expected[i], 2e-2f) << i;
  // The mlp's matmuls are too small for oneDNN (the portable GEMM runs them, in float32);
  // where oneDNN takes a call it says which kernels (dnnl_fast_math_test.cc): never bfloat16
  // ones on a CPU without them.
  const std::string profile = ferrite_session_report(s.s);
  bool bf16 = false;
#ifdef FERRITE_HAS_JIT
  bf16 = dnnl_has_bf16();
#endif
  if (!bf16) {
    EXPECT_EQ(profile.find("bf16"), std::string::npos) << profile;
  }
}

TEST(CApi, ReportsThePlanAndProfilesItsSteps) {
  FerriteOptions* options = nullptr;
  ASSERT_EQ(ferrite_options_create(&options), FERRITE_OK);
  ASSERT_EQ(ferrite_options_set_backend(options, "portable"), FERRITE_OK);
  SessionPtr plain;
  ASSERT_EQ(ferrite_session_create(kMlp.c_str(), options, &plain.s), FERRITE_OK);
  EXPECT_EQ(ferrite_session_report(plain.s), nullptr);
  EXPECT_STREQ(ferrite_last_error(), "the session has not run yet");
  run_mlp(plain.s);
  const std::string report = ferrite_session_report(plain.s);
  // The mlp: two MatMul externs (bias and relu fused), the softmax kernels.
  EXPECT_NE(report.find("\"externs\": 2, "), std::string::npos) << report;
  EXPECT_NE(report.find("\"steps\": []}"), std::string::npos) << report;

  ASSERT_EQ(ferrite_options_set_profiling(options, 1), FERRITE_OK);
  SessionPtr profiled;
  ASSERT_EQ(ferrite_session_create(kMlp.c_str(), options, &profiled.s), FERRITE_OK);
  ferrite_options_destroy(options);
  run_mlp(profiled.s);
  run_mlp(profiled.s);
  const std::string profile = ferrite_session_report(profiled.s);
  EXPECT_NE(profile.find("{\"label\": \"extern MatMul 'fc1'"), std::string::npos) << profile;
  EXPECT_NE(profile.find("{\"label\": \"extern MatMul 'fc2'"), std::string::npos) << profile;
  EXPECT_NE(profile.find("\"runs\": 2, \"ms\": "), std::string::npos) << profile;
  EXPECT_EQ(profile.find("\"runs\": 1,"), std::string::npos) << profile;
}

TEST(CApi, SymbolicDimsOutputSelectionAndIntegerInputs) {
  SessionPtr p;
  ASSERT_EQ(ferrite_session_create((kFixtures + "sym_add.onnx").c_str(), nullptr, &p.s),
            FERRITE_OK);
  for (int64_t n : {1, 5}) {
    std::vector<float> a(n * 3), b(n * 3);
    for (int64_t i = 0; i < n * 3; ++i) {
      a[i] = 0.5f * i;
      b[i] = 7.0f - i;
    }
    const std::vector<int64_t> shape = {n, 3};
    const FerriteTensor ins[2] = {f32_view(shape, b), f32_view(shape, a)};
    const char* names[2] = {"b", "a"};  // any order
    const char* out_name = "y";
    std::vector<float> y(n * 3);
    FerriteOutput out = output_into(&y);
    ASSERT_EQ(ferrite_session_run(p.s, 2, names, ins, 1, &out_name, &out), FERRITE_OK)
        << ferrite_last_error();
    EXPECT_EQ(out.shape[0], n);
    for (int64_t i = 0; i < n * 3; ++i) EXPECT_EQ(y[i], a[i] + b[i]);
  }

  SessionPtr g;
  ASSERT_EQ(ferrite_session_create((kFixtures + "gather.onnx").c_str(), nullptr, &g.s), FERRITE_OK);
  const std::vector<float> x = {0, 1, 10, 11, 20, 21, 30, 31};
  const std::vector<int64_t> x_shape = {4, 2}, i_shape = {3};
  const int64_t idx[3] = {3, -4, 2};  // negative indices count from the end
  const FerriteTensor ins[2] = {f32_view(x_shape, x),
                                view(FERRITE_INT64, i_shape, idx, sizeof(idx))};
  const char* names[2] = {"x", "i"};
  std::vector<float> y(6);
  FerriteOutput out = output_into(&y);
  ASSERT_EQ(ferrite_session_run(g.s, 2, names, ins, 1, nullptr, &out), FERRITE_OK)
      << ferrite_last_error();
  EXPECT_EQ(y, (std::vector<float>{30, 31, 0, 1, 20, 21}));
}

// strings.onnx (make_fixtures.py): strings in as `const char*`s, out as `char*`s into the
// caller's buffer, the text they point at after them.
TEST(CApi, StringTensorsInAndOut) {
  SessionPtr p;
  ASSERT_EQ(ferrite_session_create((kFixtures + "strings.onnx").c_str(), nullptr, &p.s),
            FERRITE_OK);
  FerriteTensorInfo info;
  ASSERT_EQ(ferrite_session_input_info(p.s, 0, &info), FERRITE_OK);
  EXPECT_EQ(info.dtype, FERRITE_STRING);
  const char* text[2] = {"Hello there", "World"};
  const std::vector<int64_t> shape = {2};
  const FerriteTensor in = view(FERRITE_STRING, shape, text, sizeof(text));
  const char* in_name = "text";
  const char* out_name = "shout";
  // Too small: the bytes needed are 2 pointers and "hello there!\0world!\0".
  alignas(char*) char buffer[64];
  FerriteOutput out{};
  out.data = buffer;
  out.capacity = 8;
  ASSERT_EQ(ferrite_session_run(p.s, 1, &in_name, &in, 1, &out_name, &out),
            FERRITE_BUFFER_TOO_SMALL);
  EXPECT_EQ(out.nbytes, 2 * sizeof(char*) + 13 + 7);
  out.capacity = sizeof(buffer);
  ASSERT_EQ(ferrite_session_run(p.s, 1, &in_name, &in, 1, &out_name, &out), FERRITE_OK)
      << ferrite_last_error();
  EXPECT_EQ(out.dtype, FERRITE_STRING);
  ASSERT_EQ(out.rank, 1u);
  EXPECT_EQ(out.shape[0], 2);
  char* const* strings = reinterpret_cast<char* const*>(buffer);
  EXPECT_STREQ(strings[0], "hello there!");
  EXPECT_STREQ(strings[1], "world!");
  // A NULL string and a misaligned output buffer are named.
  const char* holes[2] = {"a", nullptr};
  const FerriteTensor bad = view(FERRITE_STRING, shape, holes, sizeof(holes));
  EXPECT_EQ(ferrite_session_run(p.s, 1, &in_name, &bad, 1, &out_name, &out),
            FERRITE_INVALID_ARGUMENT);
  EXPECT_STREQ(ferrite_last_error(), "input 'text': string 1 is NULL");
  out.data = buffer + 1;
  out.capacity = sizeof(buffer) - 1;
  EXPECT_EQ(ferrite_session_run(p.s, 1, &in_name, &in, 1, &out_name, &out),
            FERRITE_INVALID_ARGUMENT);
  EXPECT_STREQ(ferrite_last_error(),
               "output 'shout': a string output's buffer must be aligned for pointers");
}

TEST(CApi, RunErrorsNameTheInputOrNode) {
  SessionPtr g;
  ASSERT_EQ(ferrite_session_create((kFixtures + "gather.onnx").c_str(), nullptr, &g.s), FERRITE_OK);
  const std::vector<float> x(8, 1.0f);
  const std::vector<int64_t> x_shape = {4, 2}, i_shape = {3}, bad_shape = {2, 4};
  int64_t idx[3] = {0, 1, 2};
  const int32_t idx32[3] = {0, 1, 2};
  const char* names[2] = {"x", "i"};
  std::vector<float> y(6);
  FerriteOutput out = output_into(&y);
  auto run = [&](const FerriteTensor& xt, const FerriteTensor& it, const char* n0 = "x") {
    const FerriteTensor ins[2] = {xt, it};
    const char* ns[2] = {n0, "i"};
    return ferrite_session_run(g.s, 2, ns, ins, 1, nullptr, &out);
  };
  const FerriteTensor xt = f32_view(x_shape, x);
  const FerriteTensor it = view(FERRITE_INT64, i_shape, idx, sizeof(idx));

  EXPECT_EQ(run(xt, it, "z"), FERRITE_RUN_ERROR);
  EXPECT_STREQ(ferrite_last_error(), "unknown input 'z' (model inputs: x, i)");
  EXPECT_EQ(run(f32_view(bad_shape, x), it), FERRITE_RUN_ERROR);
  EXPECT_STREQ(ferrite_last_error(), "input 'x': expected shape [4,2], got [2,4]");
  EXPECT_EQ(run(xt, view(FERRITE_INT32, i_shape, idx32, sizeof(idx32))), FERRITE_RUN_ERROR);
  EXPECT_STREQ(ferrite_last_error(), "input 'i': expected int64, got int32");
  EXPECT_EQ(ferrite_session_run(g.s, 1, names, &xt, 1, nullptr, &out), FERRITE_RUN_ERROR);
  EXPECT_STREQ(ferrite_last_error(), "missing input 'i' (expected int64[3])");
  idx[1] = 4;
  EXPECT_EQ(run(xt, it), FERRITE_RUN_ERROR);
  EXPECT_NE(std::string(ferrite_last_error()).find("gather"), std::string::npos)
      << ferrite_last_error();
  EXPECT_NE(std::string(ferrite_last_error()).find("out of range"), std::string::npos)
      << ferrite_last_error();
  idx[1] = 1;

  // The caller's buffers.
  EXPECT_EQ(run(view(FERRITE_FLOAT32, x_shape, x.data(), 7 * sizeof(float)), it),
            FERRITE_INVALID_ARGUMENT);
  EXPECT_STREQ(ferrite_last_error(),
               "input 'x': nbytes is 28, but its shape and dtype make 8 elements of 4 bytes");
  EXPECT_EQ(run(view(static_cast<FerriteDType>(14), x_shape, x.data(), 32), it),  // complex64
            FERRITE_INVALID_ARGUMENT);
  EXPECT_STREQ(ferrite_last_error(), "input 'x': unknown or unsupported dtype code 14");
  EXPECT_EQ(run(view(FERRITE_FLOAT32, x_shape, nullptr, 32), it), FERRITE_INVALID_ARGUMENT);
  EXPECT_EQ(ferrite_session_run(g.s, 2, names, nullptr, 1, nullptr, &out),
            FERRITE_INVALID_ARGUMENT);
  EXPECT_EQ(ferrite_session_run(nullptr, 0, nullptr, nullptr, 0, nullptr, nullptr),
            FERRITE_INVALID_ARGUMENT);
  const char* bad_out = "w";
  EXPECT_EQ(ferrite_session_run(g.s, 0, nullptr, nullptr, 1, &bad_out, &out), FERRITE_RUN_ERROR);
  EXPECT_STREQ(ferrite_last_error(), "unknown output 'w' (model outputs: y)");
  EXPECT_EQ(ferrite_session_run(g.s, 0, nullptr, nullptr, 2, nullptr, &out),
            FERRITE_INVALID_ARGUMENT);

  // Too small: nothing written, the sizes reported; then a big enough buffer works.
  std::vector<float> small(2, -5.0f);
  FerriteOutput small_out = output_into(&small);
  const FerriteTensor ins[2] = {xt, it};
  EXPECT_EQ(ferrite_session_run(g.s, 2, names, ins, 1, nullptr, &small_out),
            FERRITE_BUFFER_TOO_SMALL);
  EXPECT_EQ(small_out.nbytes, 24u);
  EXPECT_EQ(small_out.rank, 2u);
  EXPECT_EQ(small_out.shape[0], 3);
  EXPECT_EQ(small, (std::vector<float>{-5.0f, -5.0f}));
  EXPECT_STREQ(ferrite_last_error(), "output buffers too small or NULL: 'y' 24 bytes (capacity 8)");
  EXPECT_EQ(ferrite_session_run(g.s, 2, names, ins, 1, nullptr, &out), FERRITE_OK);
  EXPECT_EQ(y, std::vector<float>(6, 1.0f));
}

TEST(CApi, LoadErrorsAndOptions) {
  FerriteSession* s = reinterpret_cast<FerriteSession*>(0x1);
  const std::string missing = kFixtures + "missing.onnx";
  EXPECT_EQ(ferrite_session_create(missing.c_str(), nullptr, &s), FERRITE_MODEL_ERROR);
  EXPECT_EQ(s, nullptr);
  EXPECT_NE(std::string(ferrite_last_error()).find("missing.onnx"), std::string::npos);
  EXPECT_EQ(ferrite_session_create((kFixtures + "unknown_op.onnx").c_str(), nullptr, &s),
            FERRITE_UNSUPPORTED);
  EXPECT_NE(std::string(ferrite_last_error()).find("FancyOp"), std::string::npos)
      << ferrite_last_error();
  const std::vector<uint8_t> onnx = file_bytes(kMlp);
  for (size_t cut : {size_t{0}, size_t{5}, onnx.size() / 2}) {
    EXPECT_NE(ferrite_session_create_from_bytes(onnx.data(), cut, nullptr, &s), FERRITE_OK);
    EXPECT_EQ(s, nullptr);
  }
  EXPECT_EQ(ferrite_session_create_from_bytes("FRPLAN\0\0\4\0", 10, nullptr, &s),
            FERRITE_MODEL_ERROR);
  EXPECT_EQ(ferrite_session_create(nullptr, nullptr, &s), FERRITE_INVALID_ARGUMENT);
  EXPECT_EQ(ferrite_session_create(kMlp.c_str(), nullptr, nullptr), FERRITE_INVALID_ARGUMENT);

  FerriteOptions* options = nullptr;
  ASSERT_EQ(ferrite_options_create(&options), FERRITE_OK);
  EXPECT_EQ(ferrite_options_set_backend(options, "gpu"), FERRITE_INVALID_ARGUMENT);
  EXPECT_NE(std::string(ferrite_last_error()).find("unknown backend 'gpu' (available: "),
            std::string::npos);
  EXPECT_EQ(ferrite_options_set_threads(options, 0), FERRITE_INVALID_ARGUMENT);
  EXPECT_STREQ(ferrite_last_error(), "threads must be 1..1024, got 0");
  EXPECT_EQ(ferrite_options_set_isa(options, "sse2"), FERRITE_INVALID_ARGUMENT);
  EXPECT_EQ(ferrite_options_set_backend(nullptr, "portable"), FERRITE_INVALID_ARGUMENT);
  ferrite_options_destroy(options);
  ferrite_options_destroy(nullptr);
  ferrite_session_destroy(nullptr);
  EXPECT_EQ(ferrite_session_input_count(nullptr), 0u);
}

TEST(CApi, ResourceLimits) {
  FerriteOptions* options = nullptr;
  ASSERT_EQ(ferrite_options_create(&options), FERRITE_OK);
  ASSERT_EQ(ferrite_options_set_backend(options, "reference"), FERRITE_OK);  // mlp_oracle's
  EXPECT_EQ(ferrite_options_set_memory_limit(options, -1), FERRITE_INVALID_ARGUMENT);
  EXPECT_EQ(ferrite_options_set_max_unrolled_nodes(options, -1), FERRITE_INVALID_ARGUMENT);
  EXPECT_EQ(ferrite_options_set_memory_limit(nullptr, 1), FERRITE_INVALID_ARGUMENT);
  // The example MLP's weights alone are past 1 KiB: its compilation (at load: its input is
  // static) is refused before anything is allocated, and no session is made.
  ASSERT_EQ(ferrite_options_set_memory_limit(options, 1024), FERRITE_OK);
  FerriteSession* s = nullptr;
  EXPECT_NE(ferrite_session_create(kMlp.c_str(), options, &s), FERRITE_OK);
  EXPECT_EQ(s, nullptr);
  EXPECT_NE(std::string(ferrite_last_error()).find("more than the memory limit of 1024 bytes"),
            std::string::npos)
      << ferrite_last_error();
  // 0: the default limit again.
  ASSERT_EQ(ferrite_options_set_memory_limit(options, 0), FERRITE_OK);
  ASSERT_EQ(ferrite_options_set_max_unrolled_nodes(options, 0), FERRITE_OK);
  ASSERT_EQ(ferrite_session_create(kMlp.c_str(), options, &s), FERRITE_OK) << ferrite_last_error();
  EXPECT_EQ(run_mlp(s), mlp_oracle());
  ferrite_session_destroy(s);
  ferrite_options_destroy(options);
}

#ifndef __EMSCRIPTEN__  // no threads in the wasm build
TEST(CApi, TheLastErrorIsPerThread) {
  FerriteOptions* options = nullptr;
  ASSERT_EQ(ferrite_options_create(&options), FERRITE_OK);
  ASSERT_EQ(ferrite_options_set_threads(options, -3), FERRITE_INVALID_ARGUMENT);
  std::string other;
  std::thread t([&] {
    ferrite_options_set_isa(options, "mmx");
    other = ferrite_last_error();
  });
  t.join();
  EXPECT_EQ(other, "unknown isa 'mmx' (avx2 or avx512)");
  EXPECT_STREQ(ferrite_last_error(), "threads must be 1..1024, got -3");
  ferrite_options_destroy(options);
}

TEST(CApi, OneSessionFromSeveralThreads) {
  const std::vector<float> expected = mlp_oracle();
  SessionPtr p;
  ASSERT_EQ(ferrite_session_create(kMlp.c_str(), nullptr, &p.s), FERRITE_OK);
  SessionPtr sym;
  ASSERT_EQ(ferrite_session_create((kFixtures + "sym_add.onnx").c_str(), nullptr, &sym.s),
            FERRITE_OK);
  std::vector<int> bad(4, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int r = 0; r < 20; ++r) {
        const std::vector<float> y = run_mlp(p.s);
        for (size_t i = 0; i < y.size(); ++i) bad[t] += std::fabs(y[i] - expected[i]) > 1e-5f;
        // Each thread its own batch size: new plans compiled while others run.
        const int64_t n = 1 + t;
        std::vector<float> a(n * 3, static_cast<float>(t)), b(n * 3, static_cast<float>(r));
        const std::vector<int64_t> shape = {n, 3};
        const FerriteTensor ins[2] = {f32_view(shape, a), f32_view(shape, b)};
        const char* names[2] = {"a", "b"};
        std::vector<float> out(n * 3);
        FerriteOutput o = output_into(&out);
        bad[t] += ferrite_session_run(sym.s, 2, names, ins, 1, nullptr, &o) != FERRITE_OK;
        for (float v : out) bad[t] += v != static_cast<float>(t + r);
      }
    });
  }
  for (std::thread& th : threads) th.join();
  EXPECT_EQ(bad, std::vector<int>(4, 0));
}
#endif

}  // namespace
}  // namespace ferrite
