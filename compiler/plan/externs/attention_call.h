// The attributes of the Attention extern (what it means: runtime/kernels/reference/attention.h).
#pragma once

#include <cstdint>
#include <vector>

#include "compiler/plan/externs/extern_op.h"

namespace ferrite {

struct AttentionCall {
  double scale = 0;    // the factor of Q·K; 0 in a plan means 1 / sqrt(head size)
  double softcap = 0;  // > 0: scores become softcap * tanh(scores / softcap); 0: none
  // Query i of batch b sits at key position i + offset_b, offset_b = causal_offset (plus
  // KeyLengths[b] - Sq with offset_from_lengths); causal hides the keys after it, the
  // windows (-1: none) those more than left_window before or right_window after it.
  bool causal = false;
  int64_t causal_offset = 0;
  bool offset_from_lengths = false;
  int64_t left_window = -1, right_window = -1;
  // A row that sees no key (every score -inf) gives NaN, as Softmax over it does, instead
  // of zeros (ONNX Attention's rule); what the plain-op pattern fuse_attention takes means.
  bool empty_rows_nan = false;
  // Which optional inputs follow Q, K and V, in this order.
  bool mask = false, key_lengths = false, sinks = false;

  ExternOp op() const { return ExternOp::Attention; }
  size_t inputs() const { return 3 + mask + key_lengths + sinks; }
};

// floats "scale" and "softcap"; ints "causal", "causal_offset", "offset_from_lengths",
// "left_window", "right_window", "empty_rows_nan", "mask", "key_lengths", "sinks".
ExternAttrs encode(const AttentionCall& c);

// The call's attributes for a head size `head_size` (scale 0 or absent becomes
// 1 / sqrt(head_size)), scale and softcap rounded to float32. Throws ferrite::Error
// "Attention: ..." for a scale or softcap that is not finite in float32, a negative softcap, a
// window below -1, a flag that is not 0 or 1, or offset_from_lengths without key lengths. The op
// must be Attention.
AttentionCall decode_attention_call(const ExternCall& call, int64_t head_size);

}  // namespace ferrite
