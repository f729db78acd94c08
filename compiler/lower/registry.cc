// The one place that lists the op families; each family's file registers its ops.
#include "compiler/lower/fused_attention.h"
#include "compiler/lower/lowering.h"

namespace ferrite {

// The ai.onnx.ml family (lower/ml_ops.cc), TfIdfVectorizer (lower/text_ops.cc) and the
// ai.onnx.preview.training optimizers (lower/training_ops.cc).
void register_ml_ops(LoweringTable& t);
void register_text_ops(LoweringTable& t);
void register_training_ops(LoweringTable& t);

const LoweringTable& lowering_table() {
  static const LoweringTable table = [] {
    LoweringTable t;
    register_pointwise_ops(t);
    register_reduce_ops(t);
    register_view_ops(t);
    register_index_ops(t);
    register_softmax_ops(t);
    register_matmul_ops(t);
    register_conv_ops(t);
    register_shape_value_ops(t);
    register_norm_ops(t);
    register_pool_ops(t);
    register_position_ops(t);
    register_loss_ops(t);
    register_einsum_ops(t);
    register_resize_ops(t);
    register_control_flow_ops(t);
    register_rnn_ops(t);
    register_scatter_ops(t);
    register_segment_ops(t);
    register_topk_ops(t);
    register_sequence_ops(t);
    register_attention_ops(t);
    register_fused_attention_ops(t);
    register_grid_ops(t);
    register_signal_ops(t);
    register_col2im_ops(t);
    register_deform_conv_ops(t);
    register_linear_attention_ops(t);
    register_contrib_ops(t);
    register_quant_ops(t);
    register_qlinear_ops(t);
    register_contrib_quant_ops(t);
    register_matmul_nbits_ops(t);
    register_ml_ops(t);
    register_text_ops(t);
    register_training_ops(t);
    compute_halves_in_float32(t);  // last: it wraps lowerings registered above
    return t;
  }();
  return table;
}

}  // namespace ferrite
