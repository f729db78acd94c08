// The Kernel contract between the scheduler and the code generators.
//
// A kernel is a loop nest over `ranges`: the first ranges.size()-num_reduce dimensions are
// the pointwise ("outer") space, the trailing num_reduce dimensions are reduced. The
// innermost dimension is the one backends vectorize. Loop variable v is dimension v.
//
// The body is SSA: `code[k]` defines value k. Instructions [0, post_begin) run once per
// point of the whole iteration space; Reduce instructions there accumulate over the
// reduction dimensions. Instructions [post_begin, code.size()) run once per outer point
// after its reduction finished; they may read Reduce results and values they define
// themselves, and index only with outer loop variables. A kernel without reduction dims
// has post_begin == code.size().
//
// Inner loops (a fused reduction group, as Inductor's C++ kernels for softmax or layer
// norm): the body [0, post_begin) is split at `loop_ends` into consecutive inner loops
// (empty: one loop [0, post_begin)). For each outer point the loops run in order, each
// over every point of the reduction dims ("inner" dims), then the post instructions once.
// An instruction in loop L may use values of loop L, body Consts, and the Reduce results
// of loops before L (complete for this outer point); a Reduce accumulates over the points
// of its own loop. Stores may appear in any loop (indexed with any variable) and in post;
// a later loop may load what an earlier loop of the same outer point stored.
//
// Kernel args are buffers (inputs and outputs); the Plan step binds each arg to a plan
// buffer. `args[i].elements` bounds every access: a backend that cannot prove an access
// in range must check it (indirect indices are checked by CheckIndex).
//
// Aliasing: args are distinct memory, except that the memory planner may bind an input
// arg and an output arg to the same bytes (in-place reuse, compiler/memory/in_place.h),
// and only in a kernel without reduction dims whose every Load of that input uses the same
// affine, one-to-one index as every Store of that output, with all those Loads before all
// those Stores in code order. So each point reads exactly the elements it overwrites, and
// no other point touches them. A backend must therefore not store a point's output before
// it has loaded that point's inputs: evaluating the instructions in code order, one point
// at a time or over a block of points, is fine; moving a Load below a Store is not.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "compiler/plan/dtype.h"
#include "compiler/plan/index_expr.h"
#include "compiler/plan/ops.h"

namespace ferrite {

struct Instr {
  Op op = Op::Const;
  ScalarType type = ScalarType::F32;  // type of the result (Store: of the stored value)
  int32_t a = -1, b = -1, c = -1;     // SSA operands
  int32_t arg = -1;  // Load/Store: kernel arg; CheckIndex: message id; LoopVar: variable
  ReduceKind reduce = ReduceKind::Sum;  // Reduce
  int32_t mask = -1;  // Load/CheckIndex: optional Bool SSA value; lanes where it is false
                      // do not access memory (Load yields 0) and are not checked
  Index index;        // Load/Store: element index into the arg (in elements)
  double fimm = 0;    // Const (float types)
  int64_t iimm = 0;   // Const (I64/Bool); CheckIndex: the dimension size n
};
// CheckIndex(a): a is an i64 index into a dimension of size n = iimm. Yields a + n when
// -n <= a < 0, a when 0 <= a < n, and otherwise fails the kernel with messages[arg].
// Reduce(a): accumulates a with `reduce` over the reduction dimensions; ArgMax/ArgMin
// yield the i64 linear index (row-major over the reduction dims) of the first extremum.
// Cast(a): converts to `type`. LoopVar: the i64 value of loop variable `arg`.

// Calls f(id) on each value operand of `in`: a, b, c (as many as its arity), then the mask.
// Index Value leaves are not included (index_values collects those).
template <class F>
void for_each_value_operand(const Instr& in, F&& f) {
  const int arity = op_arity(in.op);
  if (arity >= 1) f(in.a);
  if (arity >= 2) f(in.b);
  if (arity >= 3) f(in.c);
  if (in.mask >= 0) f(in.mask);
}

struct KernelArg {
  DType dtype = DType::F32;
  int64_t elements = 0;  // size of the buffer in elements
  bool output = false;
};

struct Kernel {
  std::string name;
  std::vector<int64_t> ranges;
  int num_reduce = 0;
  std::vector<KernelArg> args;
  std::vector<Instr> code;
  int post_begin = 0;
  std::vector<int32_t> loop_ends;  // see "Inner loops" above
  std::vector<std::string> messages;

  int num_outer() const { return static_cast<int>(ranges.size()) - num_reduce; }
  // Inner loops of a validated kernel: loop L holds instructions [loop_begin(L), loop_end(L)).
  int num_loops() const { return loop_ends.empty() ? 1 : static_cast<int>(loop_ends.size()); }
  int loop_begin(int L) const { return L == 0 ? 0 : loop_ends[L - 1]; }
  int loop_end(int L) const { return loop_ends.empty() ? post_begin : loop_ends[L]; }
  // The inner loop holding body instruction i (i < post_begin).
  int loop_of(int i) const;
  int64_t outer_points() const;
  int64_t reduce_points() const;
};

// Checks the structural rules above. Throws ferrite::Error starting with
// "kernel '<name>': " (and "instr %k (<Op>): " for a rule about one instruction).
//  - Shape: ranges >= 0 and their product fits in int64; 0 <= num_reduce <= ranges.size();
//    0 <= post_begin <= code.size(); post_begin == code.size() when num_reduce == 0; every
//    arg has elements >= 0 and a dtype of nonzero size. loop_ends, if not empty, is strictly
//    increasing, starts above 0 and ends at post_begin; more than one loop needs reduction
//    dims.
//  - SSA: operands a, b, c (as many as op_arity), mask and the Value leaves of an index
//    refer to earlier instructions. mask is only for Load and CheckIndex. Fields an op does
//    not use are unset: operands past its arity, mask, and arg (used by Load, Store,
//    CheckIndex, LoopVar) are -1, index is null but for Load and Store.
//  - Types: Add..FMod: a, b and result of one non-Bool type. Eq..Ge: equal operand types,
//    Bool result. And/Or/Xor/Not: Bool operands and result. IsNaN/IsInf: float operand,
//    Bool result. Other unary math: operand type == result type and op_accepts(op, type).
//    Where: a Bool, b, c and result of one type. Cast: any to any. Const: any type.
//    LoopVar: arg in [0, ranges.size()), result I64. CheckIndex: a and result I64, arg
//    indexes messages, iimm >= 0, optional Bool mask. Reduce: operand type == result type,
//    except ArgMax/ArgMin whose result is I64; only in kernels with reduction dims.
//    Load: arg in range, result type == compute_type(arg dtype), index set, optional Bool
//    mask. Store: arg in range and an output, compute_type(arg dtype) == type == type of a,
//    index set.
//  - Phases: a body instruction in inner loop L uses only values of loop L, body Consts and
//    Reduce results of earlier loops (as operand or in an index). Post instructions
//    [post_begin, end) use only post instructions, Reduce results and body Consts; their
//    LoopVars and index Vars are outer variables. Reduce only in the body.
//  - Index trees: well formed (binary nodes have both children, depth <= 256), Var leaves
//    < ranges.size(), Value leaves are I64 values.
void validate_kernel(const Kernel& k);

// A readable listing of the kernel (used by dumps and test failure messages).
std::string kernel_to_string(const Kernel& k);

}  // namespace ferrite
