// `ops`: MatMul and Conv externs against the machine's FMA peak, measured in the same run.
// The peak is a loop of independent vector FMAs (12 accumulators, more than latency x
// throughput needs) in an AVX-512 and an AVX2 build; the ops run through the oneDNN externs
// (weights prepacked as plan constants, and not) and the portable externs, in alternating
// order, one run of each per round, so that drifts in clock speed hit every variant alike.
#include <immintrin.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "compiler/plan/error.h"
#include "runtime/backend.h"
#include "runtime/kernels/dnnl/dnnl_externs.h"
#include "runtime/kernels/portable/portable_backend.h"
#include "runtime/tensor.h"
#include "tests/perf/kernel_bench.h"

namespace ferrite {
namespace bench {
namespace {

// ---- FMA peak ------------------------------------------------------------------------------

constexpr int kAccumulators = 12;

// `iters` rounds of kAccumulators independent FMAs on 16-float vectors; returns a sum of the
// accumulators so that the compiler keeps the work.
__attribute__((target("avx512f"))) float fma_loop_avx512(int64_t iters) {
  __m512 acc[kAccumulators];
  for (int j = 0; j < kAccumulators; ++j) acc[j] = _mm512_set1_ps(static_cast<float>(j));
  const __m512 a = _mm512_set1_ps(0.999999f), b = _mm512_set1_ps(1e-6f);
  for (int64_t i = 0; i < iters; ++i) {
#pragma GCC unroll 12
    for (int j = 0; j < kAccumulators; ++j) acc[j] = _mm512_fmadd_ps(acc[j], a, b);
  }
  __m512 s = acc[0];
  for (int j = 1; j < kAccumulators; ++j) s = _mm512_add_ps(s, acc[j]);
  // Not _mm512_reduce_add_ps: GCC 12 warns inside it (an uninitialized temporary).
  float lanes[16];
  _mm512_storeu_ps(lanes, s);
  float sum = 0;
  for (float v : lanes) sum += v;
  return sum;
}

__attribute__((target("avx2,fma"))) float fma_loop_avx2(int64_t iters) {
  __m256 acc[kAccumulators];
  for (int j = 0; j < kAccumulators; ++j) acc[j] = _mm256_set1_ps(static_cast<float>(j));
  const __m256 a = _mm256_set1_ps(0.999999f), b = _mm256_set1_ps(1e-6f);
  for (int64_t i = 0; i < iters; ++i) {
#pragma GCC unroll 12
    for (int j = 0; j < kAccumulators; ++j) acc[j] = _mm256_fmadd_ps(acc[j], a, b);
  }
  __m256 s = acc[0];
  for (int j = 1; j < kAccumulators; ++j) s = _mm256_add_ps(s, acc[j]);
  float lanes[8];
  _mm256_storeu_ps(lanes, s);
  float sum = 0;
  for (float v : lanes) sum += v;
  return sum;
}

struct Peak {
  std::string variant;
  double gflops = 0;  // the best of the timed repetitions, over all threads
};

// The FMA peak of each code variant this CPU runs, with `threads` threads each running the
// loop: the best of `reps` repetitions (a peak is a maximum, not a median).
std::vector<Peak> measure_peaks(int threads, int64_t reps) {
  __builtin_cpu_init();
  struct Variant {
    const char* name;
    float (*fn)(int64_t);
    int lanes;
    bool runs;
  };
  const Variant variants[] = {
      {"avx512f zmm", fma_loop_avx512, 16, static_cast<bool>(__builtin_cpu_supports("avx512f"))},
      {"avx2+fma ymm", fma_loop_avx2, 8,
       __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")}};
  constexpr int64_t kIters = 4000000;  // ~50M vector FMAs: tens of milliseconds
  std::vector<Peak> peaks;
  volatile float sink = 0;
  for (const Variant& v : variants) {
    if (!v.runs) continue;
    Peak p{v.name, 0};
    for (int64_t r = 0; r <= reps; ++r) {  // r == 0 warms up (clocks, page faults)
      const Clock::time_point start = Clock::now();
      float sum = 0;
#pragma omp parallel num_threads(threads) reduction(+ : sum)
      sum += v.fn(kIters);
      const double ms = ms_since(start);
      sink = sink + sum;
      const double flops = 2.0 * v.lanes * kAccumulators * static_cast<double>(kIters) * threads;
      if (r > 0) p.gflops = std::max(p.gflops, flops / ms / 1e6);
    }
    peaks.push_back(p);
  }
  return peaks;
}

// ---- the ops ---------------------------------------------------------------------------------

// Aligned like a session's buffers (runtime/tensor.h), which the kernels' speed depends on.
struct Buffer {
  AlignedBytes bytes;
  int64_t n = 0;
  float* data() const { return reinterpret_cast<float*>(bytes.get()); }
  ExternBuffer ext() const { return ExternBuffer{data(), DType::F32, n}; }
  std::vector<float> values() const { return std::vector<float>(data(), data() + n); }
};

TensorRef dense_ref(int32_t buffer, std::vector<int64_t> shape) {
  TensorRef r;
  r.buffer = buffer;
  r.strides.assign(shape.size(), 1);
  for (size_t d = shape.size(); d-- > 1;) r.strides[d - 1] = r.strides[d] * shape[d];
  r.shape = std::move(shape);
  return r;
}

// One extern call with its operands; inputs[weights...] are what a plan would hold as
// constants.
struct OpCase {
  std::string name;
  double flops = 0;
  ExternCall call;
  std::vector<Buffer> inputs;
  Buffer output;
  std::vector<size_t> weights;
};

Buffer random_buffer(int64_t n, std::mt19937& rng) {
  std::uniform_real_distribution<float> dist(-1, 1);
  Buffer b;
  b.bytes = aligned_alloc_bytes(static_cast<size_t>(n) * sizeof(float));
  b.n = n;
  for (int64_t i = 0; i < n; ++i) b.data()[i] = dist(rng);
  return b;
}

OpCase matmul_case(int64_t m, int64_t k, int64_t n, std::mt19937& rng) {
  OpCase c;
  c.name = str_cat("matmul ", m, "x", k, "x", n);
  c.flops = 2.0 * static_cast<double>(m * k * n);
  c.call.op = ExternOp::MatMul;
  c.call.inputs = {dense_ref(0, {m, k}), dense_ref(1, {k, n})};
  c.call.outputs = {dense_ref(2, {m, n})};
  c.inputs.push_back(random_buffer(m * k, rng));
  c.inputs.push_back(random_buffer(k * n, rng));
  c.output = random_buffer(m * n, rng);
  c.weights = {1};
  return c;
}

// A same-size 3x3 convolution, pad 1, with bias, batch 1.
OpCase conv_case(int64_t channels, int64_t size, std::mt19937& rng) {
  OpCase c;
  c.name = str_cat("conv ", channels, "ch ", size, "x", size, " 3x3 pad 1 +bias");
  c.flops = 2.0 * static_cast<double>(channels * channels * 9 * size * size);
  c.call.op = ExternOp::Conv;
  c.call.inputs = {dense_ref(0, {1, channels, size, size}),
                   dense_ref(1, {channels, channels, 3, 3}), dense_ref(2, {channels})};
  c.call.outputs = {dense_ref(3, {1, channels, size, size})};
  for (const char* key : {"pad_begin0", "pad_begin1", "pad_end0", "pad_end1"}) c.call.ints[key] = 1;
  c.inputs.push_back(random_buffer(channels * size * size, rng));
  c.inputs.push_back(random_buffer(channels * channels * 9, rng));
  c.inputs.push_back(random_buffer(channels, rng));
  c.output = random_buffer(channels * size * size, rng);
  c.weights = {1, 2};
  return c;
}

struct Variant {
  std::string name;
  std::unique_ptr<PreparedExtern> prepared;
  std::vector<double> ms;
  std::vector<float> result;
};

// The largest |a - b| / max(1, |b|).
double max_rel_diff(const std::vector<float>& a, const std::vector<float>& b) {
  double worst = 0;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i)
    worst =
        std::max(worst, std::fabs(double{a[i]} - b[i]) / std::max(1.0, std::fabs(double{b[i]})));
  return worst;
}

// Runs the variants of `c` round-robin for `rounds` rounds (after one warm-up run each);
// adds a row per variant. Returns false when a variant's output differs from the portable
// one by more than 1e-3 (relative).
bool bench_op(OpCase& c, int threads, int64_t rounds, double peak, Table* table, Report* report) {
  std::vector<ExternBuffer> inputs;
  for (Buffer& b : c.inputs) inputs.push_back(b.ext());
  std::vector<ExternBuffer> constants(inputs.size());
  for (size_t i : c.weights) constants[i] = inputs[i];
  std::vector<Variant> variants;
  variants.push_back({"oneDNN prepacked", prepare_dnnl_extern(c.call, constants, threads), {}, {}});
  variants.push_back({"oneDNN", prepare_dnnl_extern(c.call, {}, threads), {}, {}});
  variants.push_back(
      {"portable (1 thread)", make_portable_backend()->prepare_extern(c.call), {}, {}});
  const ExternBuffer out = c.output.ext();
  for (Variant& v : variants) {
    if (!v.prepared) continue;
    v.prepared->run(inputs.data(), &out);
    v.result = c.output.values();
  }
  for (int64_t r = 0; r < rounds; ++r)
    for (Variant& v : variants) {
      if (!v.prepared) continue;
      const Clock::time_point start = Clock::now();
      v.prepared->run(inputs.data(), &out);
      v.ms.push_back(ms_since(start));
    }
  bool ok = true;
  const std::vector<float>& portable = variants.back().result;
  for (Variant& v : variants) {
    if (!v.prepared) {
      table->add({c.name, v.name, "refused", "", "", "", ""});
      // oneDNN takes matmuls only on its AVX-512 brgemm kernels (worth_using).
      if (c.call.op != ExternOp::MatMul || dnnl_has_avx512()) ok = false;
      continue;
    }
    const double diff = max_rel_diff(v.result, portable);
    std::string impl = "-";
    if (auto* d = dynamic_cast<DnnlExtern*>(v.prepared.get())) impl = d->implementation();
    if (diff > 1e-3) {
      std::printf("MISMATCH: %s %s differs from portable by %.3g\n", c.name.c_str(), v.name.c_str(),
                  diff);
      ok = false;
    }
    const Summary s = summarize(v.ms);
    const double gflops = c.flops / s.median / 1e6;
    table->add({c.name, v.name, impl, fmt(s.median, 3), fmt(s.min, 3), fmt(gflops, 1),
                fmt(100 * gflops / peak, 1)});
    report->add({{"kind", json_str("op")},
                 {"op", json_str(c.name)},
                 {"variant", json_str(v.name)},
                 {"implementation", json_str(impl)},
                 {"threads", json_num(threads)},
                 {"median_ms", json_num(s.median)},
                 {"gflops", json_num(gflops)},
                 {"fraction_of_peak", json_num(gflops / peak)},
                 {"max_rel_diff_vs_portable", json_num(diff)},
                 {"samples_ms", json_array(v.ms)}});
  }
  return ok;
}

const std::vector<OptionSpec> kOpsOptions = {
    {"threads", true}, {"reps", true}, {"small", false}, {"json", true}};

}  // namespace

int ops_command(const std::vector<std::string>& arg_list) {
  const CliArgs args = parse_cli_args("ops", arg_list, kOpsOptions);
  if (!args.positional.empty()) throw UsageError("ops takes no positional arguments");
  const int threads = static_cast<int>(count_option(args, "threads", 1));
  const int64_t rounds = count_option(args, "reps", 20);
  const bool small = args.has("small");
  Report report("ops", arg_list);

  const std::vector<Peak> peaks = measure_peaks(threads, small ? 1 : 5);
  double peak = 0;
  for (const Peak& p : peaks) {
    std::printf("FMA peak %-13s %d thread(s): %8.1f GFLOP/s\n", p.variant.c_str(), threads,
                p.gflops);
    report.add({{"kind", json_str("fma_peak")},
                {"variant", json_str(p.variant)},
                {"threads", json_num(threads)},
                {"gflops", json_num(p.gflops)}});
    peak = std::max(peak, p.gflops);
  }
  if (peak <= 0) fail("no FMA variant runs on this CPU");

  std::mt19937 rng(1);
  std::vector<OpCase> cases;
  cases.push_back(small ? matmul_case(64, 64, 64, rng) : matmul_case(512, 512, 512, rng));
  cases.push_back(small ? conv_case(8, 14, rng) : conv_case(64, 56, rng));
  Table table({"op", "variant", "implementation", "median ms", "best ms", "GFLOP/s", "% peak"});
  bool ok = true;
  for (OpCase& c : cases) ok = bench_op(c, threads, rounds, peak, &table, &report) && ok;
  table.print();
  std::printf(
      "GFLOP/s from the median of %lld alternating rounds; %% of the best FMA peak above "
      "(%.1f GFLOP/s, %d thread(s)); the portable externs run on one thread\n",
      static_cast<long long>(rounds), peak, threads);
  report.write(args.get("json"));
  return ok ? 0 : 1;
}

}  // namespace bench
}  // namespace ferrite
