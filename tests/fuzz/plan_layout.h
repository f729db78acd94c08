// Where each field of a serialized plan sits (compiler/plan/plan_io.cc's format, version
// kPlanFormatVersion), for the plan mutator: a walk over the bytes that records every
// scalar with what it means (a buffer id, a dim, an SSA operand, an enum and its range, ...),
// every list with its count and item spans, and every index tree. The walk checks only what
// it needs to find the next field (counts against the bytes left, enum ranges, index tree
// size), as plan_io's reader does, not what validate_plan checks: so the mutator can make
// plans that get past the reader and fail, or pass, validation.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace ferrite::fuzz {

enum class Slot : uint8_t {
  BufferId,    // i32: a plan buffer (step buffers, guards, refs, inputs, outputs)
  StepIndex,   // i32: a kernel or extern index
  ConstantId,  // i32: a buffer's constant index
  Operand,     // i32: an instruction's a, b, c or mask (an earlier instruction)
  InstrArg,    // i32: a kernel arg, message id or loop variable
  Int32,       // i32: num_reduce, post_begin, loop ends, packed/post-op indices
  Dim,         // i64: shapes, ranges, arg elements
  Stride,      // i64: tensor ref strides
  Offset,      // i64: buffer and ref offsets, pool bytes
  IndexConst,  // i64: an index node's constant
  IndexId,     // i32: an index node's variable or value id
  Imm,         // i64: an instruction's iimm, an extern's int attribute
  Float,       // f64
  Enum,        // u8 in [0, max]
  DType,       // u8: an ONNX element type number
  Bool,        // u8: 0 or 1
};

struct PlanField {
  size_t offset;
  uint8_t size;  // 1, 4 or 8 bytes
  Slot slot;
  uint8_t max;  // Enum: the largest valid value
};

// What a list holds, so that a cross-over moves items only between lists of one kind.
enum class ListKind : uint8_t {
  Buffers,
  BufferShape,
  Constants,
  Packed,
  Kernels,
  Ranges,
  Args,
  Code,
  LoopEnds,
  Messages,
  Externs,
  ExternInts,
  ExternFloats,
  ExternInputs,
  ExternOutputs,
  RefShape,
  RefStrides,
  EpilogueSteps,
  Steps,
  StepBuffers,
  Guards,
  Inputs,
  Outputs
};

struct PlanList {
  ListKind kind;
  size_t count_offset;                           // its u32 count
  std::vector<std::pair<size_t, size_t>> items;  // [begin, end) of each item
};

struct PlanLayout {
  std::vector<PlanField> fields;
  std::vector<PlanList> lists;
  std::vector<std::pair<size_t, size_t>> index_trees;  // [begin, end), presence byte first
  int32_t buffers = 0, kernels = 0, externs = 0, constants = 0;  // counts, for ids
};

// False when the bytes are not a plan of this format (bad magic or version, truncated, a
// count or enum out of range).
bool walk_plan(const uint8_t* data, size_t size, PlanLayout* out);

}  // namespace ferrite::fuzz
