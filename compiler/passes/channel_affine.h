// The per-channel affine maps that the folding passes (fold_conv_affine,
// fold_matmul_affine) absorb into the constant weights before them: y -> scale[c] * y +
// shift[c] over the C channels along one axis of an output, as BatchNormalization at
// inference and Mul / Div / Add / Sub by a float32 constant that is one value per channel
// (or a scalar) apply it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "compiler/graph/graph.h"

namespace ferrite {

struct ChannelAffine {
  std::vector<double> scale, shift;

  // The identity over `channels`.
  explicit ChannelAffine(int64_t channels = 0);
  // This map followed by `next`.
  void then(const ChannelAffine& next);
  bool scales() const;  // any scale other than 1
  bool shifts() const;  // any shift other than 0
};

bool f32_constant(const Value* v);

// The map node `u` applies to `v` when it is one: v has rank `rank` and `channels` channels
// along `axis`. BatchNormalization (its channels are dim 1) only when axis is 1.
bool channel_affine_of(const Node& u, const Value* v, size_t rank, size_t axis, int64_t channels,
                       ChannelAffine* a);

// The nodes after `v` that apply per-channel affine maps, in order, each the only reader of
// the value before it (which is neither one of the graph's `outputs` nor in `captured`),
// with the maps composed into *total (`channels` along `axis` of a rank-`rank` output);
// empty when none.
std::vector<Node*> affine_chain(const std::set<const Value*>& outputs,
                                const std::set<std::string>& captured, Value* v, size_t rank,
                                size_t axis, int64_t channels, ChannelAffine* total);

// A new float32 tensor.
std::shared_ptr<TensorData> f32_tensor(const std::vector<int64_t>& shape,
                                       const std::vector<float>& values);

}  // namespace ferrite
