// The geometry of a pooling window (MaxPool, AveragePool): per spatial dim the kernel,
// strides, dilations, the pads (from `pads` or `auto_pad`) and the output size, exactly as
// ONNX defines them (ceil_mode, SAME_UPPER / SAME_LOWER / VALID), with every product and sum
// checked against int64 overflow, and the quantities the lowering derives from them: which
// dims reduce over the input's positions instead of the window's offsets (a window with more
// offsets than the input has positions: a kernel of 2^62 costs what one of the input's size
// does), and how many points a window counts for AveragePool.
#pragma once

#include <cstdint>
#include <vector>

#include "compiler/lower/lowering.h"

namespace ferrite {

struct PoolGeometry {
  std::vector<int64_t> kernel, strides, dilations, pad_begin, pad_end, out;
  std::vector<int64_t> spatial;  // the input's spatial sizes
  // Per dim: reduce over the input's positions q in [0, spatial) (masked to the window)
  // rather than over the window's offsets j in [0, kernel).
  std::vector<bool> over_input;

  size_t rank() const { return spatial.size(); }
  // (kernel - 1) * dilation + 1.
  int64_t span(size_t d) const { return (kernel[d] - 1) * dilations[d] + 1; }
  // The reduction's extent along dim d.
  int64_t reduce_range(size_t d) const;
  // Where output o's window starts along dim d, in input coordinates: o * stride - pad.
  Index start(size_t d, const Index& o) const;
  // Whether some window reaches outside [0, spatial) along dim d.
  bool leaves_input(size_t d) const;
  // The padding every window needs past the end of dim d (at least pad_end; more with
  // ceil_mode, whose last window may hang further out).
  int64_t end_padding(size_t d) const;
};

// Reads the node's attributes for an input of spatial sizes `spatial`; throws naming the
// node on invalid or overflowing values. `kernel`: a convolution's (its weights' spatial
// sizes), which kernel_shape, if given, must equal; else kernel_shape is required.
PoolGeometry pool_geometry(const LowerCtx& c, const std::vector<int64_t>& spatial,
                           const std::vector<int64_t>* kernel = nullptr);

// For a dim reduced over input positions: whether position `q` lies in the window of the
// output at `o` (start <= q, q - start a multiple of the dilation, at most span - 1).
V in_window(KernelBuilder& b, const PoolGeometry& g, size_t d, const Index& o, const Index& q);

// How many points of the window at output position `out` (per spatial dim) AveragePool
// divides by: those inside the input, or with `include_pad` inside the input and its pads
// (windows of ceil_mode may hang out past both). At least 1, of type `type` (a product of
// counts past 2^53 is formed in floating point).
V window_count(KernelBuilder& b, const PoolGeometry& g, bool include_pad,
               const std::vector<Index>& out, ScalarType type);

}  // namespace ferrite
