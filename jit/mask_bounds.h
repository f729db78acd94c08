// Bounds of an access's index, over the whole iteration space or only where a Load's mask
// holds. The JIT proves every access inside its arg before it emits code without checks
// (kernel_analysis.cc). A masked Load may reach outside its arg where its mask is false
// (padding, concat, ...); where the mask is true it must not, and that needs a proof from
// the mask itself. The compiler's masks are conjunctions of comparisons of index
// expressions with constants ("0 <= h*2 + kh - 1 < 28"), so on the points where a mask holds
// they bound the loop variables and those expressions, and the index is a combination of
// them. What cannot be proven this way is checked at run time (emitter_bounds.cc).
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "compiler/plan/kernel.h"
#include "compiler/plan/linear_index.h"
#include "jit/kernel_analysis.h"

namespace ferrite {
namespace jit {

// Interval bounds of linear forms from bounds of the loop variables and of I64 values.
class FormBounds {
 public:
  FormBounds(std::vector<Range> vars, std::function<Range(int)> value)
      : vars_(std::move(vars)), value_(std::move(value)) {}
  Range form(const LinearForm& f) const;
  // A term's value, before its factor. Unknown for a division or remainder whose divisor is
  // not a positive constant.
  Range term(const LinearTerm& t) const;

 private:
  std::vector<Range> vars_;
  std::function<Range(int)> value_;
};

// The loop variables' full ranges [0, range - 1] (an empty dim gives an unknown range).
std::vector<Range> loop_ranges(const Kernel& k);

// A bound of `index` (a linear form over k's variables) at the points where Bool value
// `mask` of `validated` is true; `values` holds a proven range of each I64 value over every
// point (unknown where there is none). Returns a range with lo > hi when no point has the
// mask true.
Range masked_index_range(const Kernel& validated, const std::vector<Range>& values, int mask,
                         const LinearForm& index);

}  // namespace jit
}  // namespace ferrite
