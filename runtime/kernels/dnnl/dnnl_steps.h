// What the oneDNN externs share: the CPU engine, the OpenMP thread count around oneDNN calls,
// memory descriptors of strided views, the test of whether oneDNN chose an implementation
// worth using, DnnlSteps — the primitives of one prepared call (reorders in, the op,
// reorders out) with the memory they run on, bound to the call's buffers at each run — and
// SteppedExtern, the prepared extern that runs them.
#pragma once

#include <oneapi/dnnl/dnnl.hpp>

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "runtime/backend.h"
#include "runtime/kernels/dnnl/dnnl_externs.h"
#include "runtime/packed_store.h"
#include "runtime/tensor.h"

namespace ferrite {
namespace onednn {

using Dims = std::vector<int64_t>;
using Args = std::unordered_map<int, dnnl::memory>;

const dnnl::engine& cpu_engine();

// Sets OpenMP's thread count for the scope's life. oneDNN reads it (omp_get_max_threads) when
// it creates a primitive, which fixes the primitive's work split, and again when it runs
// one, so both happen inside a scope with the session's count.
class ThreadScope {
 public:
  explicit ThreadScope(int threads);
  ~ThreadScope();
  ThreadScope(const ThreadScope&) = delete;
  ThreadScope& operator=(const ThreadScope&) = delete;

 private:
  int saved_;
};

// A strided view of a call operand: dims and element strides as oneDNN will see them
// (groups split out of a weight's channel dim, broadcast dims reduced to 1), the element
// offset of its first element, and its element type (float32 but for MatMulInteger's).
struct View {
  Dims dims;
  Dims strides;
  int64_t offset = 0;
  dnnl::memory::data_type type = dnnl::memory::data_type::f32;
};

// Dense strides of `dims` stored in `order` (outermost dim first).
Dims dense_strides(const Dims& dims, const std::vector<int>& order);
// The dims in order 0, 1, ..., n-1 (row-major) and 0, 2, ..., n-1, 1 (channels last).
std::vector<int> row_major_order(size_t n);
std::vector<int> channels_last_order(size_t n);

// Whether the strides agree on every dim of extent > 1 (the others are never stepped).
bool same_layout(const Dims& dims, const Dims& a, const Dims& b);

// A float32 descriptor with explicit strides.
dnnl::memory::desc f32_desc(const Dims& dims, const Dims& strides);
// The strides of a plain (unblocked) descriptor; false for a blocked one.
bool plain_strides(const dnnl::memory::desc& d, Dims* strides);

// Whether oneDNN's choice `impl` (impl_info_str) beats the portable externs: never its
// reference loops ("ref:any"), nor GEMM-based convolution when binary post-ops are fused
// (it applies them element by element: measured 6x slower than unfused), nor its sgemm for a
// matmul ("gemm:jit", what it takes without AVX-512's brgemm): it may split the sum over K
// between threads, so a result would depend on the thread count (gcn's matmuls on an
// AVX2-only EPYC), and the portable GEMM was faster there (bert2: 67.9 against 75.6 ms on
// one core).
bool worth_using(const std::string& impl, bool is_conv, bool binary_post_ops);

// The exact name of a memory layout (oneDNN's version, dims, data type, blocking or
// Winograd format, padding, extra flags): weights packed into equal layouts are the same
// bytes, so a plan's packed constants are reused only on an equal name. Empty for a layout
// it cannot name (neither blocked nor Winograd), which is never reused.
std::string desc_layout(const dnnl::memory::desc& d);

// Where prepare takes a constant's packed form from instead of packing it: the packed forms
// a plan carries (copied: PackedInput) and the store the sessions of one model share (used
// in place; null when there is none).
struct PackedForms {
  const std::vector<PackedInput>& plan;
  PackedStore* store;
};

// An attribute whose primitive takes its scratchpad from the caller (DnnlSteps owns one).
dnnl::primitive_attr user_scratchpad_attr();

// The primitives of one call, run in order. Their memory is bound to a call operand (its
// handle set at each run), owned (prepacked weights, allocated once), or scratch: the
// copies a run makes (operands reordered channels-last, weights that are not constants) and
// oneDNN's scratchpad, which live only during a run and so sit in the arena the Session
// shares among its externs (PreparedExtern::scratch_bytes / bind_scratch).
class DnnlSteps {
 public:
  explicit DnnlSteps(int threads) : threads_(threads < 1 ? 1 : threads) {}
  int threads() const { return threads_; }

  // Memory over call operand inputs[index] (outputs[index] when `output`), offset by
  // `offset` elements (of d's type), set at each run.
  dnnl::memory bind(const dnnl::memory::desc& d, bool output, size_t index, int64_t offset);
  // Memory allocated now, kept for the steps' life.
  dnnl::memory own(const dnnl::memory::desc& d);
  // Memory in the scratch arena, valid during a run.
  dnnl::memory scratch(const dnnl::memory::desc& d);

  // The memory a primitive reading `want` gets for input `index` seen as `v`: the operand
  // itself when the layouts agree; else a copy in `want`, reordered once now into owned
  // memory when the input is a plan constant (`constant` non-null, checked inside its
  // buffer by the caller; taken from the packed forms (use_packed) when one has this layout,
  // and throwing dnnl::error when the plan holds it only packed in another; with a store,
  // the packed bytes are shared: found there, or added), otherwise into scratch by a reorder
  // step added now, before the primitive that reads it.
  dnnl::memory input(const View& v, const dnnl::memory::desc& want, size_t index,
                     const ExternBuffer* constant);
  // The memory a primitive writing `want` gets for output `index` seen as `v`: the operand
  // itself when the layouts agree, else scratch, with `*copy_back` set to the operand
  // (for add_reorder after the primitive); `*copy_back` is empty otherwise.
  dnnl::memory output(const View& v, const dnnl::memory::desc& want, size_t index,
                      dnnl::memory* copy_back);

  // A reorder step copying input `index` seen as `v` into `to` (which a primitive then
  // updates in place: oneDNN's sum post-op).
  void add_copy(const View& v, size_t index, const dnnl::memory& to);

  // A primitive created with user_scratchpad_attr, run with `args` at each run.
  void add(const dnnl::primitive& p, const dnnl::memory::desc& scratchpad, Args args);
  void add_reorder(const dnnl::memory& from, const dnnl::memory& to);

  // The inputs given as constants that input() copied into owned memory and that no step
  // reads at run time.
  std::vector<size_t> constants_copied() const;

  // Packed forms of constant inputs (KernelBackend::prepare_extern's, and the store): input()
  // takes one whose layout is desc_layout(want) instead of reordering. Read during prepare
  // only (until finish()).
  void use_packed(const PackedForms* packed) { packed_ = packed; }
  // The constants input() copied, as owned memory in their primitive's layout.
  std::vector<PackedConstant> packed_inputs() const;
  size_t packed_adopted() const { return adopted_; }
  // The steps whose primitive has a copy made for one thread.
  size_t one_thread_steps() const;

  // Lays out the scratch arena; after the last add.
  void finish();
  size_t scratch_bytes() const { return scratch_bytes_; }
  // Points the scratch memory into `arena` (scratch_bytes() bytes, 64-byte aligned).
  void bind_scratch(void* arena);
  // Without a bound arena (no Session: tests, benchmarks) the first run allocates one.
  // While the machine is too busy for its threads (budget_threads), a run uses copies of
  // the primitives made for one thread (dnnl_one_thread.h), the first such run makes them.
  void run(const ExternBuffer* inputs, const ExternBuffer* outputs);

 private:
  // Copies the packed form of input `index` in `layout` into `to`; false when none is given.
  bool adopt(size_t index, const std::string& layout, const dnnl::memory& to);
  // Constant input `index` (`v` of `constant`) in `want`, whose name is `layout`: owned
  // memory, or (with a store) memory over the store's bytes, found or packed now.
  dnnl::memory packed_constant(const View& v, const dnnl::memory::desc& want, size_t index,
                               const ExternBuffer& constant, const std::string& layout);
  // Reorders `v` of `constant` into `to` (adopting a plan's packed form when it has one).
  void pack(const View& v, const ExternBuffer& constant, size_t index, const std::string& layout,
            const dnnl::memory& to);

  struct Binding {
    dnnl::memory memory;
    bool output;
    size_t index;
    int64_t offset;  // in bytes
  };
  struct Step {
    dnnl::primitive primitive;
    dnnl::memory::desc scratchpad;
    Args args;
    dnnl::primitive one;  // made for one thread, when made and possible
    Args one_args;
  };
  // Makes each step's primitive for one thread, where oneDNN can and its scratchpad fits.
  void make_one_thread();
  struct Scratch {
    dnnl::memory memory;
    size_t offset;  // bytes into the arena
  };
  int threads_;
  std::vector<Binding> bindings_;
  std::vector<Step> steps_;
  std::vector<dnnl::memory> owned_;
  std::vector<size_t> copied_;  // inputs copied into owned_ by input()
  struct Packed {
    size_t index;
    std::string layout;
    dnnl::memory memory;
  };
  std::vector<Packed> packed_out_;  // those copies, with their layouts
  const PackedForms* packed_ = nullptr;
  std::vector<std::shared_ptr<const PackedBytes>> shared_;  // the store's bytes it reads
  size_t adopted_ = 0;
  std::vector<Scratch> scratch_;
  size_t scratch_bytes_ = 0;
  size_t scratchpad_at_ = 0, scratchpad_room_ = 0;  // the steps' shared scratchpad
  uint8_t* arena_ = nullptr;
  bool bound_ = false;
  bool one_made_ = false;
  AlignedBytes own_arena_;
  dnnl::stream stream_{cpu_engine()};
};

// A prepared call: check() validates the buffers as the other backends do, then the steps
// run; a dnnl::error becomes a ferrite::Error naming the op.
class SteppedExtern : public DnnlExtern {
 public:
  SteppedExtern(const ExternCall& call, int threads) : call_(call), steps_(threads) {}
  void run(const ExternBuffer* inputs, const ExternBuffer* outputs) override;
  size_t scratch_bytes() const override { return steps_.scratch_bytes(); }
  void bind_scratch(void* scratch) override { steps_.bind_scratch(scratch); }
  std::string implementation() const override { return impl_; }
  std::vector<size_t> constants_copied() const override { return steps_.constants_copied(); }
  std::vector<PackedConstant> packed_inputs() const override { return steps_.packed_inputs(); }
  size_t packed_inputs_adopted() const override { return steps_.packed_adopted(); }
  size_t one_thread_steps() const override { return steps_.one_thread_steps(); }

  DnnlSteps& steps() { return steps_; }
  void set_implementation(std::string impl) { impl_ = std::move(impl); }

 protected:
  virtual void check(const ExternBuffer* inputs, const ExternBuffer* outputs) const = 0;
  const ExternCall& call_;

 private:
  DnnlSteps steps_;
  std::string impl_;
};

}  // namespace onednn
}  // namespace ferrite
