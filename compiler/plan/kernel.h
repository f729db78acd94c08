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
// Kernel args are buffers (inputs and outputs); the Plan step binds each arg to a plan
// buffer. `args[i].elements` bounds every access: a backend that cannot prove an access
// in range must check it (indirect indices are checked by CheckIndex).
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
  int32_t arg = -1;    // Load/Store: kernel arg; CheckIndex: message id; LoopVar: variable
  ReduceKind reduce = ReduceKind::Sum;  // Reduce
  int32_t mask = -1;   // Load/CheckIndex: optional Bool SSA value; lanes where it is false
                       // do not access memory (Load yields 0) and are not checked
  Index index;         // Load/Store: element index into the arg (in elements)
  double fimm = 0;     // Const (float types)
  int64_t iimm = 0;    // Const (I64/Bool); CheckIndex: the dimension size n
};
// CheckIndex(a): a is an i64 index into a dimension of size n = iimm. Yields a + n when
// -n <= a < 0, a when 0 <= a < n, and otherwise fails the kernel with messages[arg].
// Reduce(a): accumulates a with `reduce` over the reduction dimensions; ArgMax/ArgMin
// yield the i64 linear index (row-major over the reduction dims) of the first extremum.
// Cast(a): converts to `type`. LoopVar: the i64 value of loop variable `arg`.

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
  std::vector<std::string> messages;

  int num_outer() const { return static_cast<int>(ranges.size()) - num_reduce; }
  int64_t outer_points() const;
  int64_t reduce_points() const;
};

// Checks the structural rules above (operand ids defined before use, types agree, post
// instructions index only outer variables, ...). Throws ferrite::Error naming the kernel.
void validate_kernel(const Kernel& k);

// A readable listing of the kernel (used by dumps and test failure messages).
std::string kernel_to_string(const Kernel& k);

}  // namespace ferrite
