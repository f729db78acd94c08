// Signal-processing generators: the window functions HannWindow, HammingWindow and
// BlackmanWindow (17), each a sum of cosines of 2*pi*n/N over n in [0, size), N = size
// (periodic, the default) or size - 1 (symmetric). Computed in float64, stored in
// output_datatype.
#include <cmath>

#include "compiler/lower/lowering.h"

namespace ferrite {
namespace {

// w[n] = a0 - a1 cos(2 pi n / N) + a2 cos(4 pi n / N)
std::vector<TensorBoxPtr> lower_window(LowerCtx& c, double a0, double a1, double a2) {
  const std::vector<int64_t> size = c.const_ints(0);
  if (size.size() != 1 || c.input(0)->size.size() != 0) c.error("size must be a scalar");
  const int64_t n = size[0];
  if (n < 0 || n > (int64_t{1} << 40)) c.error("size ", n, " is out of range");
  DType out = DType::F32;
  const int64_t code = c.node.attr_int("output_datatype", 1);
  if (!dtype_from_onnx(code, &out)) c.unsupported("output_datatype ", code);
  const bool periodic = c.node.attr_int("periodic", 1) != 0;
  const double period = static_cast<double>(periodic ? n : n - 1);
  const double step = period > 0 ? 2 * M_PI / period : 0;
  Loader fn = [=](KernelBuilder& b, const std::vector<Index>& idx) {
    const ScalarType t = ScalarType::F64;
    const V x = b.binary(Op::Mul, b.cast(b.index_value(idx[0]), t), b.constant(t, step));
    V w = b.binary(Op::Sub, b.constant(t, a0),
                   b.binary(Op::Mul, b.constant(t, a1), b.unary(Op::Cos, x)));
    if (a2 != 0) {
      const V x2 = b.binary(Op::Mul, x, b.constant(t, 2));
      w = b.binary(Op::Add, w, b.binary(Op::Mul, b.constant(t, a2), b.unary(Op::Cos, x2)));
    }
    return b.cast(w, compute_type(out));
  };
  return {make_pointwise_box(out, {n}, fn, c.origin())};
}

}  // namespace

void register_signal_ops(LoweringTable& t) {
  t.add("HannWindow", [](LowerCtx& c) { return lower_window(c, 0.5, 0.5, 0); });
  t.add("HammingWindow", [](LowerCtx& c) { return lower_window(c, 25.0 / 46, 21.0 / 46, 0); });
  t.add("BlackmanWindow", [](LowerCtx& c) { return lower_window(c, 0.42, 0.5, 0.08); });
}

}  // namespace ferrite
