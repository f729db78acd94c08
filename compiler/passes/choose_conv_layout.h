// Chooses where convolutions keep their activations channels-last ([N, spatial..., C]),
// the layout oneDNN's fastest convolutions (brgconv) read and write natively.
//
// A layout only pays where it is shared: the convolutions connected through the ops that
// follow their input's layout (elementwise ops, BatchNormalization, pools) form a region,
// and a region with two or more convolutions, or with a pool, is marked channels-last.
// Quantized models take part: QLinearConv and ConvInteger are convolutions, QuantizeLinear
// and DequantizeLinear follow their input's layout. The
// reorders then sit only at the region's boundaries, where the lowering reads the
// channels-last buffer through an NCHW view (a reshape, a matmul, a graph output). A lone
// convolution keeps NCHW, so that it pays no reorder on either side.
//
// The choice is the Conv/ConvTranspose node's ferrite_layout attribute (graph/layout_attr.h),
// which the lowering obeys; the other nodes of the region get ferrite_store, so that an
// output the lowering realizes (a quantized activation between two int8 convolutions, a
// value read twice) is stored channels-last too, and a pool runs channels-last (as it does
// over any input stored so) even over a value computed from the convolution's output (a
// dequantization). With `prefer_channels_last` false (backends whose float convolutions
// want NCHW, the portable one) the pass marks only the regions whose convolutions are all
// integer ones (QLinearConv, ConvInteger): every backend's integer convolution works on
// channels-last data (the portable one widens its input channels-last), so NCHW there
// only adds a transposition on each side of every convolution.
#pragma once

#include "compiler/graph/graph.h"
#include "compiler/graph/layout_attr.h"

namespace ferrite {

void choose_conv_layout(Graph& g, bool prefer_channels_last);

}  // namespace ferrite
