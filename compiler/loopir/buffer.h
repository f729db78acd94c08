// Buffers of the loop IR (Inductor's Buffer/ComputedBuffer/InputBuffer/ConstantBuffer):
// named, typed, dense row-major storage. A Computed buffer carries its definition — a
// pointwise or reduction inner function — from which the scheduler builds its Kernel.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "compiler/graph/graph.h"
#include "compiler/loopir/kernel_builder.h"
#include "compiler/loopir/simplify.h"

namespace ferrite {

// An inner function: given index expressions for each dimension, emit the value there.
using Loader = std::function<V(KernelBuilder&, const std::vector<Index>&)>;
// A reduction's inner function: outer index and reduction index.
using ReduceLoader =
    std::function<V(KernelBuilder&, const std::vector<Index>&, const std::vector<Index>&)>;

// Inductor's Pointwise / Reduction "Loops": the definition of a not-yet-stored value.
struct ComputedDef {
  bool is_reduction = false;
  std::vector<int64_t> ranges;            // output (outer) sizes
  std::vector<int64_t> reduction_ranges;  // reduction only
  // A reduction of a symbolic compile: its reduction ranges over the symbols (its outer
  // ranges are its buffer's sym sizes).
  std::optional<std::vector<Index>> sym_reduction_ranges;
  ReduceKind reduce = ReduceKind::Sum;
  Loader fn;                                 // pointwise
  ReduceLoader rfn;                          // reduction
  std::function<V(KernelBuilder&, V)> post;  // reduction only: applied to the result (mean)
  std::string origin;                        // the node it came from, for kernel names and errors
};

// Assembled: storage with no definition of its own, written piecewise by the Computed
// buffers aliased into it (see Buffer::alias_of).
enum class BufferOrigin : uint8_t { Input, Constant, Computed, Extern, Assembled };

struct Buffer {
  int id = 0;
  std::string name;
  DType dtype = DType::F32;
  std::vector<int64_t> size;
  std::optional<std::vector<Index>> sym;  // symbolic sizes (loopir/shape_env.h), or none
  BufferOrigin origin = BufferOrigin::Computed;
  std::shared_ptr<const TensorData> data;  // Constant
  std::shared_ptr<ComputedDef> def;        // Computed
  int input_index = -1;
  int output_index = -1;
  // Storage owned by another buffer (Inductor's NonOwningLayout, as ConcatKernel uses it):
  // this buffer's elements are elements [alias_offset, alias_offset + elements()) of
  // `alias_of`, so the kernel computing it writes straight into that part of the owner.
  Buffer* alias_of = nullptr;
  int64_t alias_offset = 0;

  int64_t elements() const;
  // The buffer that owns this one's storage, and where this one starts in it.
  Buffer* storage_owner(int64_t* offset) const;
};

std::vector<int64_t> contiguous_strides(const std::vector<int64_t>& size);
// sum(index[d] * stride[d]) + offset, built with the light smart constructors. An index
// whose rank is not the strides' is an Error, never a read past `strides`.
Index linear_index(const std::vector<Index>& index, const std::vector<int64_t>& strides,
                   int64_t offset = 0);
// The same over symbolic strides and offset (loopir/shape_env.h).
Index sym_linear_index(const std::vector<Index>& index, const std::vector<Index>& strides,
                       const Index& offset);
// Builds the Kernel that computes `out` from its definition (one kernel per buffer). A
// buffer with sym sizes gets a kernel over the symbols (loopir/shape_env.h): its loop
// ranges over them in *sym_ranges (required then), its indices with Sym leaves.
Kernel build_kernel(Buffer* out, const std::string& name, std::vector<Buffer*>* arg_buffers,
                    std::optional<std::vector<Index>>* sym_ranges = nullptr);

}  // namespace ferrite
