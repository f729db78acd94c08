// The Plan: the contract between compiler and runtime. An ordered list of steps (kernel
// calls and extern calls), the buffers with their pool offsets, the constants and the
// input/output bindings. Backend-agnostic and serializable (plan_io.h), so a runtime-only
// build can load and run a compiled model.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "compiler/plan/aligned_bytes.h"
#include "compiler/plan/dtype.h"
#include "compiler/plan/epilogue.h"
#include "compiler/plan/externs/extern_op.h"
#include "compiler/plan/kernel.h"
#include "compiler/plan/post_ops.h"

namespace ferrite {

enum class BufferKind : uint8_t { Input = 0, Output = 1, Constant = 2, Temp = 3 };

struct PlanBuffer {
  std::string name;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  BufferKind kind = BufferKind::Temp;
  int64_t offset = -1;    // Temp: byte offset in the pool
  int32_t constant = -1;  // Constant: index into Plan::constants

  int64_t elements() const;
  int64_t nbytes() const;
};

// A strided view of a buffer, as externs see their operands.
struct TensorRef {
  int32_t buffer = -1;
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;  // in elements
  int64_t offset = 0;            // in elements
};

// A library call (MatMul, later Conv, ...). The meaning of each `op` is defined once, by
// its reference implementation in runtime/kernels/reference.
struct ExternCall {
  ExternOp op = ExternOp::MatMul;
  std::string origin;  // the node it came from ("ScatterND 'y'"), prefixed to its run errors
  std::map<std::string, int64_t> ints;
  std::map<std::string, double> floats;
  std::vector<TensorRef> inputs;
  std::vector<TensorRef> outputs;
  // MatMul, Conv, ConvTranspose, SegmentReduce: the fused epilogue applied to each element
  // of outputs[0] (epilogue.h): the contract, and what a plan file holds.
  EpilogueBody epilogue;
  // The epilogue as a chain of post-ops (post_ops.h) by the pattern table (match_post_ops),
  // the form oneDNN and the portable tiles take; empty when it is none (then a backend
  // applies the epilogue after the op). set_epilogue keeps the two together, and
  // validate_plan holds them equal.
  std::vector<PostOp> post_ops;
};

// Sets x->epilogue and x->post_ops (its chain of post-ops, when it is one).
void set_epilogue(ExternCall* x, EpilogueBody e);
// set_epilogue with the body of a chain of post-ops; appending one post-op.
void set_post_ops(ExternCall* x, const std::vector<PostOp>& ops);
void append_post_op(ExternCall* x, const PostOp& p);

// The inputs of the op proper: those before the first one the epilogue reads (its operands
// come last).
size_t op_input_count(const ExternCall& x);

enum class StepKind : uint8_t { Kernel = 0, Extern = 1 };

// A run-time condition on a step (an If branch): the step runs only when the bool scalar
// in `buffer` equals `value`. A skipped step leaves its outputs unwritten; the compiler
// only lets a later step read them under the same guards, or through a select on the
// condition.
struct Guard {
  int32_t buffer = -1;
  bool value = true;
};

struct Step {
  StepKind kind = StepKind::Kernel;
  int32_t index = 0;             // into Plan::kernels or Plan::externs
  std::vector<int32_t> buffers;  // Kernel: plan buffer id of each kernel arg
  std::vector<Guard> guards;     // all must hold for the step to run
};

// A constant input of an extern in the form a backend packed it when it prepared the call
// (oneDNN's blocked or Winograd weights, the portable GEMM's panels), carried by a plan
// compiled for a target so that loading it skips the packing. `layout` names the packed form
// exactly (library, ISA or SIMD target, blocking, dims): a backend that would pack the input
// differently on this machine ignores the entry and packs the raw constant.
struct PackedConstant {
  int32_t extern_index = -1;  // into Plan::externs
  int32_t input = -1;         // into that call's inputs, a Constant buffer
  std::string layout;
  std::vector<uint8_t> bytes;
};

struct Plan {
  std::vector<PlanBuffer> buffers;
  // One per constant, 64-byte aligned (a Session runs from these bytes, moved, not copied).
  // Empty (with a buffer that needs bytes) when the plan carries the constant only packed:
  // every step reading it is an extern input with a `packed` entry.
  std::vector<ConstantBytes> constants;
  std::vector<PackedConstant> packed;
  std::vector<Kernel> kernels;
  std::vector<ExternCall> externs;
  std::vector<Step> steps;
  std::vector<int32_t> inputs;   // buffer ids, in the model's input order
  std::vector<int32_t> outputs;  // buffer ids, in the model's output order
  int64_t pool_bytes = 0;
};

// For each of Plan::constants, whether it is held only in packed form (emptied, while a
// buffer with bytes refers to it); one pass over the buffers.
std::vector<bool> packed_only_constants(const Plan& plan);
// Empties every constant that only extern inputs with a packed entry read (a plan for one
// target: smaller, and loaded without the raw weights); returns the bytes dropped.
size_t strip_packed_constants(Plan* plan);

// Checks internal consistency (ids in range, sizes, kernels valid, pool offsets inside the
// pool, constants the right size or packed only, packed entries on constant extern inputs). Throws
// ferrite::Error. A loaded plan is validated before the runtime touches it.
void validate_plan(const Plan& plan);

std::string plan_to_string(const Plan& plan);

}  // namespace ferrite
