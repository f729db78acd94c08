// LowerCtx: what one node's lowering reads (inputs, constant values, axes) and how it fails.
#include <algorithm>
#include <numeric>

#include "compiler/loopir/checked_int.h"
#include "compiler/lower/lowering.h"

namespace ferrite {

const TensorBoxPtr& LowerCtx::input(size_t i) const {
  if (!has(i)) error("missing required input ", i);
  return in[i];
}

std::shared_ptr<const TensorData> LowerCtx::const_data(size_t i) const {
  if (input(i)->sym_value)
    not_symbolic(node.describe(), ": input ", i, " ('", node.inputs[i]->name,
                 "') is computed from sizes known only at run time");
  auto d = gl.constant_data(input(i));
  if (!d) {
    const std::string msg =
        str_cat(node.describe(), ": input ", i, " ('", node.inputs[i]->name,
                "') must be a compile-time constant (computed at run time here)");
    // First ask the engine for the inputs' values (a shape fed as a model input); if they
    // do not make it constant, the node runs on its own, on the value computed at run time.
    if (gl.values_asked()) throw NeedsCutError(msg);
    throw NeedsInputValueError(msg);
  }
  return d;
}

std::vector<int64_t> LowerCtx::const_ints(size_t i) const {
  auto d = const_data(i);
  if (dtype_is_float(d->dtype)) error("input ", i, " must be integers, got ", dtype_name(d->dtype));
  return d->to_ints();
}

std::vector<int64_t> const_ints_1d(const LowerCtx& c, size_t i) {
  const size_t rank = c.input(i)->size.size();
  if (rank != 1)
    c.error("input ", i, " ('", c.node.inputs[i]->name, "') must be 1-D, got rank ", rank);
  return c.const_ints(i);
}

int LowerCtx::axis(int64_t a, size_t rank) const {
  int64_t r = static_cast<int64_t>(rank);
  if (a < -r || a >= r) error("axis ", a, " out of range for rank ", r);
  return static_cast<int>(a < 0 ? a + r : a);
}

}  // namespace ferrite
