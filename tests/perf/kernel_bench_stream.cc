// `stream` and `chain`: the memory bandwidth ceiling (STREAM triad) and how close a
// backend's fused pointwise kernel gets to it.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>

#include "compiler/plan/error.h"
#include "compiler/plan/kernel.h"
#include "runtime/backend.h"
#include "tests/perf/kernel_bench.h"

namespace ferrite {
namespace bench {
namespace {

constexpr int64_t kDefaultN = int64_t{1} << 26;  // 64M floats: 256 MiB per array
constexpr int64_t kDefaultReps = 10;

// 64-byte aligned floats, not touched here: whoever writes them first places the pages.
struct FreeDeleter {
  void operator()(float* p) const { std::free(p); }
};
using Floats = std::unique_ptr<float[], FreeDeleter>;

Floats alloc_floats(int64_t n) {
  const size_t bytes = (static_cast<size_t>(n) * sizeof(float) + 63) / 64 * 64;
  auto* p = static_cast<float*>(std::aligned_alloc(64, bytes == 0 ? 64 : bytes));
  if (!p) fail("cannot allocate ", bytes, " bytes");
  return Floats(p);
}

// The triad in three builds of the same loop. The OpenMP `simd` loop is vectorized for
// the function's target; the schedule matches the first touch in triad_fill.
using TriadFn = void (*)(float* a, const float* b, const float* c, float s, int64_t n, int threads);

void triad_x86_64(float* a, const float* b, const float* c, float s, int64_t n, int threads) {
#pragma omp parallel for simd num_threads(threads) schedule(static)
  for (int64_t i = 0; i < n; ++i) a[i] = b[i] + s * c[i];
}

__attribute__((target("avx2,fma"))) void triad_avx2(float* a, const float* b, const float* c,
                                                    float s, int64_t n, int threads) {
#pragma omp parallel for simd num_threads(threads) schedule(static)
  for (int64_t i = 0; i < n; ++i) a[i] = b[i] + s * c[i];
}

__attribute__((target("avx512f,prefer-vector-width=512"))) void triad_avx512(
    float* a, const float* b, const float* c, float s, int64_t n, int threads) {
#pragma omp parallel for simd num_threads(threads) schedule(static)
  for (int64_t i = 0; i < n; ++i) a[i] = b[i] + s * c[i];
}

void triad_fill(float* a, float* b, float* c, int64_t n, int threads) {
#pragma omp parallel for simd num_threads(threads) schedule(static)
  for (int64_t i = 0; i < n; ++i) {
    a[i] = 0.0f;
    b[i] = 1.0f;
    c[i] = 2.0f;
  }
}

struct TriadVariant {
  const char* name;
  TriadFn fn;
  bool runs_here;
};

std::vector<TriadVariant> triad_variants() {
  __builtin_cpu_init();
  return {{"x86-64 (sse2)", triad_x86_64, true},
          {"avx2+fma", triad_avx2, __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")},
          {"avx512f", triad_avx512, static_cast<bool>(__builtin_cpu_supports("avx512f"))}};
}

}  // namespace

std::vector<TriadResult> run_triad(int64_t n, int threads, int64_t reps) {
  Floats a = alloc_floats(n), b = alloc_floats(n), c = alloc_floats(n);
  triad_fill(a.get(), b.get(), c.get(), n, threads);
  std::vector<TriadResult> results;
  for (const TriadVariant& v : triad_variants()) {
    if (!v.runs_here) continue;
    TriadResult r;
    r.variant = v.name;
    r.threads = threads;
    r.n = n;
    v.fn(a.get(), b.get(), c.get(), 3.0f, n, threads);  // warm-up
    for (int64_t i = 0; i < reps; ++i) {
      const Clock::time_point start = Clock::now();
      v.fn(a.get(), b.get(), c.get(), 3.0f, n, threads);
      r.ms.push_back(ms_since(start));
    }
    for (int64_t i = 0; i < n; i += std::max<int64_t>(1, n / 64)) {
      if (a[i] != 7.0f) fail("triad ", v.name, ": a[", i, "] = ", a[i], ", expected 7");
    }
    results.push_back(std::move(r));
  }
  return results;
}

const TriadResult& best_triad(const std::vector<TriadResult>& results) {
  size_t best = 0;
  for (size_t i = 1; i < results.size(); ++i) {
    if (summarize(results[i].ms).median < summarize(results[best].ms).median) best = i;
  }
  return results.at(best);
}

void add_triad_rows(const std::vector<TriadResult>& results, Table* table, Report* report) {
  for (const TriadResult& r : results) {
    const Summary s = summarize(r.ms);
    table->add({"triad " + r.variant, std::to_string(r.threads), std::to_string(r.n),
                fmt(r.gbs(s.min), 2), fmt(r.gbs(s.median), 2), fmt(s.min, 3), fmt(s.median, 3)});
    report->add({{"kind", json_str("triad")},
                 {"variant", json_str(r.variant)},
                 {"threads", json_num(r.threads)},
                 {"n", json_num(static_cast<double>(r.n))},
                 {"bytes_per_element", json_num(12)},
                 {"best_gbs", json_num(r.gbs(s.min))},
                 {"median_gbs", json_num(r.gbs(s.median))},
                 {"samples_ms", json_array(r.ms)}});
  }
}

namespace {

const std::vector<OptionSpec> kStreamOptions = {
    {"n", true}, {"reps", true}, {"threads", true}, {"json", true}};

Table bandwidth_table() {
  return Table({"what", "threads", "elements", "best GB/s", "median GB/s", "best ms", "median ms"});
}

}  // namespace

int stream_command(const std::vector<std::string>& arg_list) {
  const CliArgs args = parse_cli_args("stream", arg_list, kStreamOptions);
  if (!args.positional.empty()) throw UsageError("stream takes no positional arguments");
  const int64_t n = count_option(args, "n", kDefaultN);
  const int64_t reps = count_option(args, "reps", kDefaultReps);
  const int threads = static_cast<int>(count_option(args, "threads", 1));
  Report report("stream", arg_list);
  Table table = bandwidth_table();
  add_triad_rows(run_triad(n, threads, reps), &table, &report);
  table.print();
  std::printf("GB/s = 12 bytes/element (read b, c; write a) / time; write-allocate not counted\n");
  report.write(args.get("json"));
  return 0;
}

// ---- chain ------------------------------------------------------------------------------
namespace {

const std::vector<OptionSpec> kChainOptions = {{"backend", true}, {"isa", true},  {"threads", true},
                                               {"n", true},       {"reps", true}, {"json", true}};

// y[i] = |(clamp(x*1.5 + 0.25, -1, 2) * x + x) - 0.5|: a hardtanh-like clamp, a gate by
// the input, a residual add, a shift and an abs — the kind of chain Inductor fuses.
Kernel chain_kernel(int64_t n) {
  Kernel k;
  k.name = "bench_chain8";
  k.ranges = {n};
  k.args = {KernelArg{DType::F32, n, false}, KernelArg{DType::F32, n, true}};
  auto emit = [&](Op op, int a = -1, int b = -1) {
    Instr in;
    in.op = op;
    in.type = ScalarType::F32;
    in.a = a;
    in.b = b;
    k.code.push_back(in);
    return static_cast<int>(k.code.size()) - 1;
  };
  auto constant = [&](double v) {
    const int id = emit(Op::Const);
    k.code[id].fimm = v;
    return id;
  };
  const int x = emit(Op::Load);
  k.code[x].arg = 0;
  k.code[x].index = ix_var(0);
  int t = emit(Op::Mul, x, constant(1.5));
  t = emit(Op::Add, t, constant(0.25));
  t = emit(Op::Max, t, constant(-1.0));
  t = emit(Op::Min, t, constant(2.0));
  t = emit(Op::Mul, t, x);
  t = emit(Op::Add, t, x);
  t = emit(Op::Sub, t, constant(0.5));
  t = emit(Op::Abs, t);
  const int store = emit(Op::Store, t);
  k.code[store].arg = 1;
  k.code[store].index = ix_var(0);
  k.post_begin = static_cast<int>(k.code.size());
  validate_kernel(k);
  return k;
}

float chain_expected(float x) {
  float t = x * 1.5f;
  t = t + 0.25f;
  t = std::max(t, -1.0f);
  t = std::min(t, 2.0f);
  t = t * x;
  t = t + x;
  t = t - 0.5f;
  return std::fabs(t);
}

// Deterministic inputs in [-2, 2), written by the threads that will run on them.
void chain_fill(float* x, float* y, int64_t n, int threads) {
#pragma omp parallel for num_threads(threads) schedule(static)
  for (int64_t i = 0; i < n; ++i) {
    uint64_t h = static_cast<uint64_t>(i) * 0x9E3779B97F4A7C15ull;
    h ^= h >> 29;
    h *= 0xBF58476D1CE4E5B9ull;
    h ^= h >> 32;
    x[i] = static_cast<float>(h >> 40) * (4.0f / 16777216.0f) - 2.0f;
    y[i] = 0.0f;
  }
}

// Compares the first and last 64 elements and 4096 spread over the rest (fused multiply-
// adds may differ in the last bits). Returns the number of mismatches, printing the first.
int64_t chain_check(const float* x, const float* y, int64_t n) {
  std::vector<int64_t> sample;
  for (int64_t i = 0; i < std::min<int64_t>(n, 64); ++i) sample.push_back(i);
  for (int64_t i = std::max<int64_t>(0, n - 64); i < n; ++i) sample.push_back(i);
  for (int64_t j = 0; j < 4096 && n > 0; ++j) {
    sample.push_back(
        static_cast<int64_t>((static_cast<uint64_t>(j) * 2654435761u) % static_cast<uint64_t>(n)));
  }
  int64_t bad = 0;
  for (int64_t i : sample) {
    const float want = chain_expected(x[i]);
    if (std::fabs(y[i] - want) <= 4e-6f + 1e-5f * std::fabs(want)) continue;
    if (++bad <= 5)
      std::printf("WRONG: y[%lld] = %.9g, expected %.9g (x = %.9g)\n", static_cast<long long>(i),
                  y[i], want, x[i]);
  }
  std::printf("check: %zu sampled elements, %lld wrong\n", sample.size(),
              static_cast<long long>(bad));
  return bad;
}

}  // namespace

int chain_command(const std::vector<std::string>& arg_list) {
  const CliArgs args = parse_cli_args("chain", arg_list, kChainOptions);
  if (!args.positional.empty()) throw UsageError("chain takes no positional arguments");
  if (!args.has("backend")) throw UsageError("chain needs --backend NAME");
  const int64_t n = count_option(args, "n", kDefaultN);
  const int64_t reps = count_option(args, "reps", kDefaultReps);
  BackendOptions options;
  options.isa = args.get("isa");
  options.threads = static_cast<int>(count_option(args, "threads", 1));
  const std::string backend_name = args.get("backend");
  std::unique_ptr<KernelBackend> backend = make_backend(backend_name, options);
  Report report("chain", arg_list);
  Table table = bandwidth_table();

  // The ceiling, measured first in this same process (its arrays are freed before the
  // chain's are allocated).
  const std::vector<TriadResult> triads = run_triad(n, options.threads, reps);
  add_triad_rows(triads, &table, &report);
  const TriadResult& triad = best_triad(triads);
  const double triad_gbs = triad.gbs(summarize(triad.ms).median);
  const double triad_best_gbs = triad.gbs(summarize(triad.ms).min);

  const Kernel kernel = chain_kernel(n);
  Floats x = alloc_floats(n), y = alloc_floats(n);
  chain_fill(x.get(), y.get(), n, options.threads);
  Clock::time_point start = Clock::now();
  std::unique_ptr<PreparedKernel> prepared = backend->prepare(kernel);
  const double prepare_ms = ms_since(start);
  void* kernel_args[2] = {x.get(), y.get()};
  prepared->run(kernel_args);  // warm-up
  std::vector<double> ms;
  for (int64_t i = 0; i < reps; ++i) {
    start = Clock::now();
    prepared->run(kernel_args);
    ms.push_back(ms_since(start));
  }
  const Summary s = summarize(ms);
  auto gbs = [&](double t) { return 8.0 * static_cast<double>(n) / t / 1e6; };
  table.add({"chain " + backend_name, std::to_string(options.threads), std::to_string(n),
             fmt(gbs(s.min), 2), fmt(gbs(s.median), 2), fmt(s.min, 3), fmt(s.median, 3)});
  table.print();
  const double fraction = gbs(s.median) / triad_gbs;
  std::printf(
      "triad: 12 B/element, chain: 8 B/element (read x, write y); write-allocate not "
      "counted\n");
  std::printf(
      "chain %s (isa %s, threads %d): prepare %.3f ms; median %.2f GB/s = %.1f%% of "
      "the triad's %.2f GB/s (%s, median; target >= 85%%); best/best %.1f%%\n",
      backend_name.c_str(), options.isa.empty() ? "default" : options.isa.c_str(), options.threads,
      prepare_ms, gbs(s.median), 100 * fraction, triad_gbs, triad.variant.c_str(),
      100 * gbs(s.min) / triad_best_gbs);
  const int64_t wrong = chain_check(x.get(), y.get(), n);
  report.add({{"kind", json_str("chain")},
              {"backend", json_str(backend_name)},
              {"isa", json_str(options.isa)},
              {"threads", json_num(options.threads)},
              {"n", json_num(static_cast<double>(n))},
              {"bytes_per_element", json_num(8)},
              {"prepare_ms", json_num(prepare_ms)},
              {"best_gbs", json_num(gbs(s.min))},
              {"median_gbs", json_num(gbs(s.median))},
              {"triad_variant", json_str(triad.variant)},
              {"triad_median_gbs", json_num(triad_gbs)},
              {"fraction_of_triad", json_num(fraction)},
              {"wrong_elements", json_num(static_cast<double>(wrong))},
              {"samples_ms", json_array(ms)}});
  report.write(args.get("json"));
  return wrong == 0 ? 0 : 1;
}

}  // namespace bench
}  // namespace ferrite
