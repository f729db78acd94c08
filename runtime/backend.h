// The interface between the Session and the code that executes a Plan's steps. A backend
// turns each Kernel into a PreparedKernel once, at session load (analysis, dispatch
// tables, scratch memory), and implements extern calls (MatMul, ...) in prepare_extern, its
// switch over ExternOp. The Session then only passes base pointers. Built in: "reference" (the
// scalar oracle) and "portable" (Highway SIMD, the path for wasm and ARM); native x86 builds add
// "jit" (jit/) with register_backend.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "compiler/plan/kernel.h"
#include "compiler/plan/plan.h"

namespace ferrite {

class PackedStore;

class PreparedKernel {
 public:
  virtual ~PreparedKernel() = default;
  // args[i]: base of kernel arg i, holding Kernel::args[i].elements elements of its dtype,
  // aligned to the dtype's size. Throws ferrite::Error; a failed CheckIndex gives
  // "<messages[id]>: index V out of range [-n, n)". Not reentrant: one run at a time.
  virtual void run(void* const* args) = 0;
};

// The plan buffer behind one TensorRef of an extern call.
struct ExternBuffer {
  void* data = nullptr;
  DType dtype = DType::F32;
  int64_t elements = 0;
};

// An extern op: inputs[i] / outputs[i] are the buffers that call.inputs[i].buffer /
// call.outputs[i].buffer name. Checks its operands (ranks, shapes, dtypes, bounds) and
// throws ferrite::Error naming the op.
using ExternFn = void (*)(const ExternCall& call, const ExternBuffer* inputs,
                          const ExternBuffer* outputs);

// A constant input of an extern in the form the extern packed it at prepare time: what a
// compiled plan carries (PackedConstant) so that the next prepare, on a machine that would
// pack it the same way (same `layout`), copies the bytes instead of packing again.
struct PackedInput {
  size_t input = 0;
  std::string layout;
  const uint8_t* data = nullptr;
  size_t size = 0;
};

class PreparedExtern {
 public:
  virtual ~PreparedExtern() = default;
  virtual void run(const ExternBuffer* inputs, const ExternBuffer* outputs) = 0;
  // Scratch memory run() needs (im2col columns, oneDNN's scratchpad), in bytes. The Session
  // allocates one arena of the largest size, 64-byte aligned, shared by every extern (steps
  // run one at a time), and binds it before the first run. A prepared extern used without a
  // Session (tests) gets no binding and must then allocate its own.
  virtual size_t scratch_bytes() const { return 0; }
  virtual void bind_scratch(void* scratch) { (void)scratch; }
  // The library implementation that runs the call, e.g. oneDNN's "brg:avx512_core"; empty
  // when the backend's own code does (profiles, tests).
  virtual std::string implementation() const { return ""; }
  // The inputs that were plan constants (prepare's `constants`) which this call copied at
  // prepare time (reordered, prepacked) and never reads again: the Session frees their
  // buffers when nothing else reads them, and run() then gets {nullptr, dtype, elements}
  // for them (their views are still checked).
  virtual std::vector<size_t> constants_copied() const { return {}; }
  // Copies of the constant inputs this call holds packed, for a plan to carry (their
  // extern_index is left for the caller to set).
  virtual std::vector<PackedConstant> packed_inputs() const { return {}; }
  // How many of the packed inputs prepare was given it used instead of packing.
  virtual size_t packed_inputs_adopted() const { return 0; }
};

// Whether input i is a plan constant in prepare_extern's `constants`: its data, or only its
// element count when the plan holds it only packed (then data is null).
inline bool is_constant_input(const std::vector<ExternBuffer>& constants, size_t i) {
  return i < constants.size() && (constants[i].data || constants[i].elements > 0);
}

class KernelBackend {
 public:
  virtual ~KernelBackend() = default;
  virtual const char* name() const = 0;
  // Validates `k` (validate_kernel) and prepares it; the result keeps its own copy.
  virtual std::unique_ptr<PreparedKernel> prepare(const Kernel& k) const = 0;
  // Prepares one extern call; `call` must outlive the result. `constants` has one entry per
  // call.inputs[i]: its buffer when that is a plan constant (fixed for the session's life:
  // weights a backend may prepack here), else {nullptr, ...}; it may also be empty (nothing
  // known to be constant). `packed` lists the packed forms a plan carries for this call's
  // inputs: the call uses one (copies it, and counts it in packed_inputs_adopted) when its
  // layout is the one it would make, and then lists that input in constants_copied. A
  // constant's data is null when the plan holds it only packed; the Session refuses the plan
  // when such an input does not end up in constants_copied. Each backend's override is its
  // registration table (a switch over ExternOp); the default, for a backend of kernels only,
  // throws "extern '<op>': not implemented by backend '<name>'".
  virtual std::unique_ptr<PreparedExtern> prepare_extern(
      const ExternCall& call, const std::vector<ExternBuffer>& constants,
      const std::vector<PackedInput>& packed) const;
  std::unique_ptr<PreparedExtern> prepare_extern(const ExternCall& call,
                                                 const std::vector<ExternBuffer>& constants) const {
    return prepare_extern(call, constants, {});
  }
  std::unique_ptr<PreparedExtern> prepare_extern(const ExternCall& call) const {
    return prepare_extern(call, {}, {});
  }
};

// What a Session tells the backend it creates. Backends ignore what does not apply to them.
struct BackendOptions {
  std::string isa;  // the JIT's instruction set: "" (FERRITE_ISA, else the best), "avx2", "avx512"
  int threads = 1;  // threads a kernel may use (OpenMP); 1 = run on the caller's thread
  std::string dump_dir;  // when set, backends that generate code write it there
  // Fast math (off by default): float32 MatMul and Conv may multiply in bfloat16 (their
  // inputs and weights rounded to bfloat16, products summed in float32) where the CPU has
  // bfloat16 dot products (AVX-512 BF16: oneDNN's avx512_core_bf16 kernels). Its accuracy is
  // measured in the README ("Fast math"). Other backends and CPUs ignore it.
  bool fast_math = false;
  // Weights packed by the other sessions of the same model (packed_store.h), where the
  // backend's externs find the packed forms they would make and add those they make; null:
  // every extern packs its own.
  std::shared_ptr<PackedStore> packed_store;
};

using BackendFactory = std::unique_ptr<KernelBackend> (*)(const BackendOptions&);

// Adds (or replaces) a backend by name; "reference" and "portable" are always present.
void register_backend(const std::string& name, BackendFactory factory);
// Throws ferrite::Error naming `name` and the available backends when it is unknown.
std::unique_ptr<KernelBackend> make_backend(const std::string& name,
                                            const BackendOptions& options = BackendOptions());
std::vector<std::string> backend_names();

}  // namespace ferrite
