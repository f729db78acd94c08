// The machinery the recurrent ops (LSTM, GRU, RNN; rnn_ops.cc) share. Shapes are concrete
// at compile time, so a recurrence is unrolled over the sequence: per direction, one MatMul
// extern projects every timestep's input at once (X·Wᵀ, all directions side by side), then
// each step is one small MatMul H_{t-1}·Rᵀ and pointwise gate kernels. With 8-bit weights
// (DynamicQuantizeLSTM) each product is onnxruntime's dynamic one: its float operand (all
// of X at once; each step's H) quantized to uint8 over its range, an exact integer product,
// then times the operand's scale times the weight row's. Each step's hidden
// state is realized as its own buffer — when Y is read, as a part of Y's storage (an
// Assembled buffer), so Y is built without a copy and no expression grows with the
// sequence. sequence_lens is a run-time mask: at t >= len[b] the state is carried and Y is 0.
#pragma once

#include <string>
#include <vector>

#include "compiler/lower/lowering.h"

namespace ferrite {

// An activation of the RNN family: Relu, Tanh, Sigmoid, Affine, LeakyRelu, ThresholdedRelu,
// ScaledTanh, HardSigmoid, Elu, Softsign, Softplus, with its alpha and beta.
struct RnnActivation {
  std::string name;  // lower case
  double alpha = 0;
  double beta = 0;
};

// The inputs and attributes every recurrent op has, read and checked once.
struct RnnSpec {
  int64_t seq = 0, batch = 0, input = 0, hidden = 0;
  int dirs = 1;
  int gates = 1;             // row blocks of W and R: 4 LSTM, 3 GRU, 1 RNN
  bool reverse = false;      // direction == "reverse" (bidirectional: direction 1 runs backwards)
  bool batch_first = false;  // layout == 1
  double clip = 0;           // > 0: pre-activations are clamped to [-clip, clip]
  // Per direction, `per_dir` activations: acts[d * per_dir + k].
  std::vector<RnnActivation> acts;
  int per_dir = 1;
  TensorBoxPtr w, r;  // [dirs, gates*hidden, input], [dirs, gates*hidden, hidden]
  TensorBoxPtr b;     // [dirs, 2*gates*hidden] (Wb then Rb), or null: zeros
  TensorBoxPtr lens;  // [batch] integers, or null when every sequence has full length
  TensorBoxPtr h0;    // [dirs, batch, hidden], or null: zeros
  // com.microsoft.DynamicQuantizeLSTM: w and r are uint8 or int8 (views in the layout above
  // of its transposed W [dirs, input, gates*hidden] and R), with a scale and a zero point
  // per row of W/R ([dirs, gates*hidden] views: one scale per direction or per row; the
  // direction's first zero point, as onnxruntime reads them). Null for the float ops.
  TensorBoxPtr w_scale, w_zero, r_scale, r_zero;

  bool backwards(int d) const { return d == 1 || reverse; }
  bool quantized() const { return w_scale != nullptr; }
  const RnnActivation& act(int d, int k) const { return acts[d * per_dir + k]; }
};

// Reads X, W, R, B, sequence_lens, initial_h (inputs 0-5) and the shared attributes; throws
// naming the node on bad shapes, types or attribute values. `default_acts` per direction.
// A DynamicQuantizeLSTM's 8-bit W and R, and their scales and zero points (inputs 8-11).
RnnSpec read_rnn_spec(const LowerCtx& c, int gates, const std::vector<std::string>& default_acts);
// A [dirs, batch, hidden] state input (initial_h, initial_c) in either layout, checked.
TensorBoxPtr read_rnn_state(const LowerCtx& c, const RnnSpec& s, size_t index, const char* what);

// clip, then the activation.
V apply_rnn_activation(KernelBuilder& b, const RnnActivation& a, double clip, V x);

// A [batch, hidden] view of direction d of a [dirs, batch, hidden] state.
TensorBoxPtr rnn_direction(const TensorBoxPtr& state, int d);

// What the gate math of a step reads: the spec and the input projection. Step loaders hold
// it by shared pointer (they may be traced after the lowering call returns).
struct RnnTerms {
  RnnSpec s;
  TensorBoxPtr xw;  // [seq, batch, dirs, gates*hidden]: X·Wᵀ for every timestep

  // Pre-activation of gate g of direction d at time t and point i = (batch, unit), without
  // the recurrent term: X_t·W_gᵀ + Wb_g, plus Rb_g when `with_rb`.
  V input_term(KernelBuilder& b, int d, int64_t t, int g, const std::vector<Index>& i,
               bool with_rb) const;
  // Rb_g at unit i[1] (0 when B is absent).
  V recurrent_bias(KernelBuilder& b, int d, int g, const std::vector<Index>& i) const;
  // `fresh` where time t is inside batch i[0]'s sequence, `carried` (0 when null) elsewhere.
  V keep_in_sequence(KernelBuilder& b, int64_t t, const std::vector<Index>& i, V fresh,
                     const TensorBoxPtr& carried) const;
  // Activation k of direction d (after clip).
  V act(KernelBuilder& b, int d, int k, V x) const {
    return apply_rnn_activation(b, s.act(d, k), s.clip, x);
  }
  // Element (i[0], g*hidden + i[1]) of a RnnUnroll::recurrent result; 0 for a null one.
  V load_gate(KernelBuilder& b, const TensorBoxPtr& hr, int g, const std::vector<Index>& i) const;
  // Element i of a [batch, hidden] state; 0 for a null (zero) one.
  static V load_state(KernelBuilder& b, const TensorBoxPtr& state, const std::vector<Index>& i);
};
using RnnTermsPtr = std::shared_ptr<const RnnTerms>;

// One unrolled recurrence: the projection, the per-step matmuls, the realized states and
// the outputs. The op's cell (rnn_ops.cc) supplies the gate math.
class RnnUnroll {
 public:
  RnnUnroll(const LowerCtx& c, RnnSpec s, bool want_y);

  const RnnTermsPtr& terms() const { return terms_; }
  // h·R_dᵀ over R_d's rows [g0*hidden, (g0+n)*hidden): [batch, n*hidden]; null for a null h.
  TensorBoxPtr recurrent(int d, const TensorBoxPtr& h, int g0, int n) const;
  // The box of a point-wise [batch, hidden] step value.
  TensorBoxPtr step_box(Loader fn) const;
  // Realizes step t's hidden state of direction d: into Y's storage when Y is read.
  TensorBoxPtr realize_hidden(int d, int64_t t, const TensorBoxPtr& h);
  // Y: [seq, dirs, batch, hidden] ([batch, seq, dirs, hidden] batch first).
  TensorBoxPtr y() const;
  // Y_h / Y_c from each direction's last state: [dirs, batch, hidden] (or batch first).
  TensorBoxPtr final_state(const std::vector<TensorBoxPtr>& last) const;

 private:
  const LowerCtx& c_;
  RnnTermsPtr terms_;
  Buffer* y_ = nullptr;  // Assembled [seq, dirs, batch, hidden] when Y is read
};

}  // namespace ferrite
