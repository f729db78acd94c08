#include "jit/jit_backend.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <fstream>
#include <mutex>

#include "compiler/plan/error.h"
#include "compiler/plan/externs/segment_reduce_call.h"
#include "compiler/plan/stage_times.h"
#include "jit/code_cache.h"
#include "jit/cpu_isa.h"
#include "jit/disasm.h"
#include "jit/kernel_analysis.h"
#include "jit/kernel_codegen.h"
#include "jit/segment_codegen.h"
#include "runtime/following_epilogue.h"
#include "runtime/kernels/dnnl/dnnl_externs.h"
#include "runtime/kernels/portable/matmul_f32.h"
#include "runtime/kernels/portable/portable_backend.h"
#include "runtime/kernels/portable/thread_pool.h"

namespace ferrite {
namespace jit {
namespace {

std::atomic<int64_t> g_compiled{0}, g_reused{0}, g_failed{0};

// Below this many points a kernel runs on the calling thread: a parallel region costs
// microseconds.
constexpr int64_t kMinPointsPerThread = 1 << 15;

class JitKernel : public PreparedKernel {
 public:
  JitKernel(Layout layout, std::shared_ptr<const CompiledCode> code, int threads,
            std::shared_ptr<const KernelBackend> portable)
      : L_(std::move(layout)),
        code_(std::move(code)),
        threads_(std::max(threads, 1)),
        portable_(std::move(portable)) {
    const Kernel& k = L_.k;
    rows_ = 1;
    for (int v : L_.outer_scalar) rows_ *= k.ranges[v];
    vec_ = L_.vec_var >= 0 ? k.ranges[L_.vec_var] : 1;
    int64_t points = 1;
    for (int64_t r : k.ranges) points *= r;
    int parts = static_cast<int>(std::min<int64_t>(threads_, points / kMinPointsPerThread));
    parts = std::max(parts, 1);
    // Rows split first; the vector range when there are too few rows (not in LanesInner,
    // whose vector dim is a reduction).
    split_vec_ = parts > 1 && rows_ < parts && L_.mode != Mode::LanesInner && L_.vec_var >= 0 &&
                 vec_ >= static_cast<int64_t>(parts) * L_.lanes;
    if (!split_vec_) parts = static_cast<int>(std::min<int64_t>(parts, rows_));
    parts_ = std::max(parts, 1);
  }

  // A failed index check ends the generated code at the first failure it meets, which is not
  // always the reference's first failing point (vector lanes, several checks, threads): the
  // kernel then runs on the portable backend, which fails with the reference's message.
  // Reads see the same inputs: an arg the kernel both reads and writes is written before it
  // is read at every point (kernel_analysis.cc), so the partial first run changes nothing.
  void run(void* const* args) override {
    try {
      run_parts(args);
    } catch (const Error&) {
      portable_->prepare(L_.k)->run(args);
      throw;  // the portable run did not fail: keep the JIT's own message
    }
  }

 private:
  void run_parts(void* const* args) {
    if (parts_ == 1) return run_part(args, 0, rows_, 0, L_.mode == Mode::LanesInner ? 0 : vec_);
    // Parts are claimed one at a time by whichever threads get a core (thread_pool.h); an
    // index error of the lowest failing part reaches the caller.
    ferrite::run_parts(threads_, parts_, [&](int64_t p) {
      int64_t r0 = 0, r1 = rows_, v0 = 0, v1 = L_.mode == Mode::LanesInner ? 0 : vec_;
      if (split_vec_) {
        const int64_t chunks = (vec_ + L_.lanes - 1) / L_.lanes;
        v0 = std::min(vec_, chunks * p / parts_ * L_.lanes);
        v1 = std::min(vec_, chunks * (p + 1) / parts_ * L_.lanes);
      } else {
        r0 = rows_ * p / parts_;
        r1 = rows_ * (p + 1) / parts_;
      }
      run_part(args, r0, r1, v0, v1);
    });
  }

  void run_part(void* const* args, int64_t r0, int64_t r1, int64_t v0, int64_t v1) {
    if (r1 <= r0) return;
    const Kernel& k = L_.k;
    int64_t vars[kMaxRowVars] = {0};
    int64_t rest = r0;
    for (size_t i = L_.outer_scalar.size(); i-- > 0;) {
      const int v = L_.outer_scalar[i];
      vars[i] = rest % k.ranges[v];
      rest /= k.ranges[v];
    }
    const size_t n = L_.accesses.size();
    std::vector<int64_t> ptrs(n);
    std::vector<uint64_t> bounds(2 * n);  // the first and the last element of each access's arg
    for (size_t a = 0; a < n; ++a) {
      const Access& acc = L_.accesses[a];
      uint64_t e = static_cast<uint64_t>(acc.form.offset);
      for (size_t i = 0; i < L_.outer_scalar.size(); ++i)
        e += static_cast<uint64_t>(acc.form.coeff[L_.outer_scalar[i]]) *
             static_cast<uint64_t>(vars[i]);
      const uint64_t base = reinterpret_cast<uintptr_t>(args[acc.arg]);
      ptrs[a] = static_cast<int64_t>(base + e * static_cast<uint64_t>(acc.esize));
      const int64_t elements = k.args[static_cast<size_t>(acc.arg)].elements;
      bounds[2 * a] = elements > 0 ? base : UINT64_MAX;  // no element: every address is outside
      bounds[2 * a + 1] = base + static_cast<uint64_t>(elements - 1) * acc.esize;
    }
    JitCall call;
    call.row_vars = vars;
    call.row_ptrs = ptrs.data();
    call.bounds = bounds.data();
    call.rows = r1 - r0;
    call.vec_begin = v0;
    call.vec_end = v1;
    code_->fn()(&call);
    if (call.error_id != 0) {
      const Instr& in = k.code[static_cast<size_t>(call.error_id - 1)];
      if (in.op == Op::Load) {  // a checked read (Access::checked), at this address
        const int64_t esize = static_cast<int64_t>(dtype_size(k.args[in.arg].dtype));
        fail("kernel '", k.name, "': Load of arg ", in.arg, " at element ",
             static_cast<int64_t>(static_cast<uint64_t>(call.error_value) -
                                  reinterpret_cast<uintptr_t>(args[in.arg])) /
                 esize,
             " is outside its ", k.args[in.arg].elements, " elements");
      }
      fail(k.messages[in.arg], ": index ", call.error_value, " out of range [", -in.iimm, ", ",
           in.iimm, ")");
    }
  }

  Layout L_;
  std::shared_ptr<const CompiledCode> code_;
  int threads_;
  int64_t rows_ = 1, vec_ = 1;
  int parts_ = 1;
  bool split_vec_ = false;
  std::shared_ptr<const KernelBackend> portable_;
};

std::string safe_name(const std::string& name) {
  std::string s;
  for (char c : name) s += (std::isalnum(static_cast<unsigned char>(c)) || c == '_') ? c : '_';
  return s.substr(0, 80);
}

class JitBackend : public KernelBackend {
 public:
  explicit JitBackend(const BackendOptions& options)
      : isa_(choose_isa(options.isa)),
        threads_(options.threads),
        dump_dir_(options.dump_dir),
        packed_store_(options.packed_store),
        fast_math_(options.fast_math),
        portable_(make_portable_backend(options)) {}

  const char* name() const override { return "jit"; }

  // The SegmentReduce extern with generated rows, or null for a call the generator does not
  // take (its run would reject it anyway). Throws on attributes that do not decode.
  std::unique_ptr<PreparedExtern> prepare_jit_segment_reduce(const ExternCall& call) const {
    const SegmentReduceCall attrs = decode_segment_reduce_call(call);
    if (call.inputs.empty() || call.inputs[0].shape.size() != 2) return nullptr;
    SegmentShape shape;
    shape.weighted = attrs.weighted;
    shape.features = call.inputs[0].shape[1];
    shape.kind = attrs.reduction;
    shape.with_data = op_input_count(call) == (shape.weighted ? 5u : 4u);
    std::shared_ptr<const SegmentCode> code = generate_segment_rows(shape);
    return prepare_segment_reduce_with(
        call, threads_,
        [code](const portable::SegmentRows& j, int64_t r0, int64_t r1) { code->run(j, r0, r1); },
        str_cat("jit:", isa_name(isa_)));
  }

  std::unique_ptr<PreparedKernel> prepare(const Kernel& k) const override {
    validate_kernel(k);
    Layout layout;
    std::string why;
    {
      StageTimer timer("jit/analyze");
      why = analyze_kernel(k, isa_, &layout);
    }
    std::shared_ptr<const CompiledCode> code;
    if (why.empty()) {
      try {
        bool reused = false;
        StageTimer timer("jit/codegen");
        code = cached_code(
            kernel_structure_key(layout.k, isa_), [&] { return generate_kernel(layout); }, &reused);
        ++(reused ? g_reused : g_compiled);
      } catch (const Error& e) {
        why = e.what();
        ++g_failed;
      }
    }
    dump(k, layout, code.get(), why);
    if (!why.empty()) return portable_->prepare(k);
    return std::make_unique<JitKernel>(std::move(layout), std::move(code), threads_, portable_);
  }

  // MatMul and convolutions on oneDNN when it takes the call, SegmentReduce with a row loop
  // generated for it (AVX-512), else (and every other extern) on the portable backend. A
  // GEMV by a weight goes to the portable GEMM, which streams the weight faster.
  std::unique_ptr<PreparedExtern> prepare_extern(
      const ExternCall& call, const std::vector<ExternBuffer>& constants,
      const std::vector<PackedInput>& packed) const override {
    if (needs_following_epilogue(call))  // oneDNN and the portable tiles take chains only
      return prepare_with_following_epilogue(*this, call, constants, packed);
    switch (call.op) {  // the registration table
      case ExternOp::MatMul:
        if (portable_matmul_streams_weights(call, constants)) break;
        [[fallthrough]];
      case ExternOp::Conv:
      case ExternOp::ConvTranspose:
      case ExternOp::MatMulInteger:
      case ExternOp::ConvInteger:
        if (auto dnnl = prepare_dnnl_extern(call, constants, packed, threads_, packed_store_.get(),
                                            fast_math_))
          return dnnl;
        break;
      case ExternOp::SegmentReduce:
        if (isa_ != Isa::Avx512) break;
        if (auto jit = prepare_jit_segment_reduce(call)) return jit;
        break;
      case ExternOp::ScatterElements:
      case ExternOp::ScatterND:
      case ExternOp::TopK:
      case ExternOp::Attention:
      case ExternOp::MatMulNBits:
      case ExternOp::BitCast:
        break;
    }
    return portable_->prepare_extern(call, constants, packed);
  }

 private:
  void dump(const Kernel& k, const Layout& layout, const CompiledCode* code,
            const std::string& why) const {
    if (dump_dir_.empty()) return;
    std::lock_guard<std::mutex> lock(dump_mu_);
    const int n = dumped_++;
    std::ofstream out(dump_dir_ + "/80_jit_" + std::to_string(n) + "_" + safe_name(k.name) +
                      ".txt");
    out << "kernel " << k.name << " (isa " << isa_name(isa_) << ")\n";
    if (!why.empty()) {
      out << "not compiled, runs on the portable backend: " << why << "\n";
      return;
    }
    static const char* modes[] = {"pointwise", "lanes-inner", "lanes-outer"};
    out << "mode " << modes[static_cast<int>(layout.mode)] << ", vector var " << layout.vec_var
        << ", " << layout.lanes << " lanes, " << code->size() << " bytes of code\n";
    for (size_t i = 0; i < layout.k.code.size(); ++i)
      out << "  %" << i << " " << op_name(layout.k.code[i].op) << " @"
          << where_name(layout.where[i]) << (layout.uniform[i] ? " uniform" : "")
          << (layout.access[i] >= 0 && layout.accesses[layout.access[i]].checked ? " bounds-checked"
                                                                                 : "")
          << "\n";
    out << kernel_to_string(layout.k);
    // Offsets from the start of the code, so listings of two runs compare line by line.
    const size_t n_code = code->instruction_bytes();
    out << "code:\n" << disassemble_x86(code->code(), n_code);
    if (n_code < code->size())
      out << "constants:\n" << data_listing(code->code() + n_code, code->size() - n_code, n_code);
    std::ofstream bin(dump_dir_ + "/80_jit_" + std::to_string(n) + ".bin", std::ios::binary);
    bin.write(reinterpret_cast<const char*>(code->code()),
              static_cast<std::streamsize>(code->size()));
  }

  Isa isa_;
  int threads_;
  std::string dump_dir_;
  std::shared_ptr<PackedStore> packed_store_;
  bool fast_math_;
  std::shared_ptr<const KernelBackend> portable_;
  mutable std::mutex dump_mu_;
  mutable int dumped_ = 0;
};

}  // namespace

std::unique_ptr<KernelBackend> make_jit_backend(const BackendOptions& options) {
  if (choose_isa(options.isa) == Isa::None) return make_portable_backend(options);
  return std::make_unique<JitBackend>(options);
}

void register_jit_backend() {
  static std::once_flag once;
  std::call_once(once, [] { register_backend("jit", make_jit_backend); });
}

std::string jit_refusal(const Kernel& k, const std::string& isa) {
  validate_kernel(k);
  Layout layout;
  return analyze_kernel(k, choose_isa(isa), &layout);
}

JitCacheStats jit_cache_stats() {
  return JitCacheStats{g_compiled.load(), g_reused.load(), g_failed.load()};
}

}  // namespace jit
}  // namespace ferrite
