#include "compiler/plan/lane_choice.h"

#include "compiler/plan/linear_index.h"

namespace ferrite {

bool prefer_lanes_outer(const Kernel& merged) {
  const int dims = static_cast<int>(merged.ranges.size()), outer = merged.num_outer();
  if (merged.num_reduce == 0 || outer == 0) return false;
  int contiguous_reduce = 0, contiguous_outer = 0;
  for (const Instr& in : merged.code) {
    if (in.op != Op::Load) continue;
    const LinearForm f = linearize(*in.index, dims);
    contiguous_reduce += f.coeff[dims - 1] == 1;
    contiguous_outer += f.coeff[outer - 1] == 1;
  }
  return lanes_outer_pays(merged.ranges[dims - 1], merged.ranges[outer - 1], contiguous_reduce,
                          contiguous_outer);
}

}  // namespace ferrite
