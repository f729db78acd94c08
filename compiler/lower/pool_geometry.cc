// Pool geometry (pool_geometry.h): ONNX's output-size and padding rules, checked arithmetic.
#include "compiler/lower/pool_geometry.h"

#include <algorithm>
#include <string>

namespace ferrite {
namespace {

// A fuzzed model's kernel_shape, pads, strides or dilations of 2^62 overflow int64 in the
// sums and products below long before memory runs out: a clear error instead.
int64_t add(const LowerCtx& c, int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r))
    c.error("kernel_shape, pads, strides or dilations too large (", a, " + ", b, " overflows)");
  return r;
}

int64_t mul(const LowerCtx& c, int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r))
    c.error("kernel_shape, pads, strides or dilations too large (", a, " * ", b, " overflows)");
  return r;
}

// Output size and pads of dim d under `auto_pad`.
void dim_geometry(const LowerCtx& c, PoolGeometry& g, size_t d, const std::string& auto_pad,
                  bool ceil_mode, int64_t pb, int64_t pe) {
  const int64_t in = g.spatial[d], s = g.strides[d], span = g.span(d);
  int64_t o;
  if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    o = in == 0 ? 0 : (in - 1) / s + 1;
    // (o - 1) * s + span - in, in an order that cannot overflow: in - (o - 1) * s is in (0, s].
    const int64_t total = std::max<int64_t>(0, span - (in - (o - 1) * s));
    pb = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
    pe = total - pb;
  } else if (auto_pad == "VALID") {
    pb = pe = 0;
    o = in >= span ? (in - span) / s + 1 : 0;
  } else {
    if (auto_pad != "NOTSET") c.error("unknown auto_pad '", auto_pad, "'");
    if (pb < 0 || pe < 0) c.error("pads must not be negative");
    const int64_t len = add(c, add(c, in, pb), pe) - span;
    if (len < 0) c.error("window larger than the padded input");
    o = len / s + (ceil_mode && len % s != 0 ? 1 : 0) + 1;
    // With ceil_mode the last window must start inside the input or its begin padding.
    int64_t last_start;
    if (ceil_mode && (__builtin_mul_overflow(o - 1, s, &last_start) || last_start >= in + pb)) --o;
  }
  g.pad_begin.push_back(pb);
  g.pad_end.push_back(pe);
  g.out.push_back(o);
  // What the lowering forms from these: the padded extent, the last position a window
  // reads, and window_count's bounds (plus the dilation, rounding up a division by it).
  const int64_t padded = add(c, add(c, in, pb), pe);
  if (o > 0) add(c, add(c, mul(c, o - 1, s), -pb), span);
  add(c, padded, g.dilations[d]);
}

}  // namespace

int64_t PoolGeometry::reduce_range(size_t d) const {
  return over_input[d] ? std::max<int64_t>(spatial[d], 1) : kernel[d];
}

Index PoolGeometry::start(size_t d, const Index& o) const {
  return ix_add(ix_mul(o, strides[d]), ix_const(-pad_begin[d]));
}

int64_t PoolGeometry::end_padding(size_t d) const {
  if (out[d] == 0) return pad_end[d];
  const int64_t last = (out[d] - 1) * strides[d] - pad_begin[d] + span(d);  // checked
  return std::max(pad_end[d], last - spatial[d]);
}

bool PoolGeometry::leaves_input(size_t d) const {
  return !over_input[d] && (pad_begin[d] > 0 || end_padding(d) > 0);
}

PoolGeometry pool_geometry(const LowerCtx& c, const std::vector<int64_t>& spatial,
                           const std::vector<int64_t>* kernel) {
  const size_t k = spatial.size();
  PoolGeometry g;
  g.spatial = spatial;
  g.kernel = kernel ? c.node.attr_ints("kernel_shape", *kernel) : c.node.attr_ints("kernel_shape");
  if (g.kernel.size() != k) c.error("kernel_shape needs ", k, " entries");
  if (kernel && g.kernel != *kernel) c.error("kernel_shape differs from the weights' sizes");
  g.strides = c.node.attr_ints("strides", std::vector<int64_t>(k, 1));
  g.dilations = c.node.attr_ints("dilations", std::vector<int64_t>(k, 1));
  std::vector<int64_t> pads = c.node.attr_ints("pads", std::vector<int64_t>(2 * k, 0));
  if (g.strides.size() != k || g.dilations.size() != k || pads.size() != 2 * k)
    c.error("strides, dilations or pads have the wrong length");
  const std::string auto_pad = c.node.attr_string("auto_pad", "NOTSET");
  const bool ceil_mode = c.node.attr_int("ceil_mode", 0) != 0;
  for (size_t d = 0; d < k; ++d) {
    if (g.strides[d] <= 0 || g.dilations[d] <= 0 || g.kernel[d] <= 0)
      c.error("kernel, strides and dilations must be positive");
    add(c, mul(c, g.kernel[d] - 1, g.dilations[d]), 1);  // the span
    dim_geometry(c, g, d, auto_pad, ceil_mode, pads[d], pads[d + k]);
    // More offsets than positions: reduce over the positions (each in at most one offset).
    g.over_input.push_back(g.kernel[d] > spatial[d]);
  }
  return g;
}

V in_window(KernelBuilder& b, const PoolGeometry& g, size_t d, const Index& o, const Index& q) {
  if (g.spatial[d] == 0) return b.constant(ScalarType::Bool, 0);  // q = 0 is no position
  auto i64 = [&](int64_t v) { return b.index_value(ix_const(v)); };
  const V at = b.index_value(ix_add(q, ix_mul(g.start(d, o), -1)));  // q - start
  V inside = b.binary(Op::And, b.binary(Op::Ge, at, i64(0)), b.binary(Op::Lt, at, i64(g.span(d))));
  if (g.dilations[d] > 1)
    inside = b.binary(Op::And, inside,
                      b.binary(Op::Eq, b.binary(Op::Mod, at, i64(g.dilations[d])), i64(0)));
  return inside;
}

V window_count(KernelBuilder& b, const PoolGeometry& g, bool include_pad,
               const std::vector<Index>& out, ScalarType type) {
  auto i64 = [&](int64_t v) { return b.index_value(ix_const(v)); };
  // The largest count: past 2^53 the product is formed in `type` (rounded, never wrapped).
  double most = 1;
  for (size_t d = 0; d < g.rank(); ++d) {
    const int64_t inside =
        include_pad ? g.spatial[d] + g.pad_begin[d] + g.pad_end[d] : g.spatial[d];
    most *= static_cast<double>(std::min(g.kernel[d], inside));
  }
  const bool exact = most <= 9007199254740992.0;
  V count = exact ? i64(1) : b.constant(type, 1);
  for (size_t d = 0; d < g.rank(); ++d) {
    const int64_t lo = include_pad ? -g.pad_begin[d] : 0;
    const int64_t hi = include_pad ? g.spatial[d] + g.pad_end[d] : g.spatial[d];
    const int64_t dil = g.dilations[d];
    const Index minus_start = ix_mul(g.start(d, out[d]), -1);
    // Window offsets j with lo <= start + j*dil < hi: j in [ceil((lo-start)/dil),
    // ceil((hi-start)/dil)), then clipped to [0, kernel).
    auto first_at = [&](int64_t bound) {
      if (dil == 1) return b.index_value(ix_add(ix_const(bound), minus_start));
      return b.index_value(ix_floordiv(ix_add(ix_const(bound + dil - 1), minus_start), dil));
    };
    const V jmin = b.binary(Op::Max, first_at(lo), i64(0));
    const V jmax = b.binary(Op::Min, first_at(hi), i64(g.kernel[d]));
    V n = b.binary(Op::Max, b.binary(Op::Sub, jmax, jmin), i64(0));
    count = exact ? b.binary(Op::Mul, count, n) : b.binary(Op::Mul, count, b.cast(n, type));
  }
  if (!exact) return b.binary(Op::Max, count, b.constant(type, 1));
  return b.cast(b.binary(Op::Max, count, i64(1)), type);
}

}  // namespace ferrite
