// The op → loop IR lowerings. Each op family registers its lowerings in one table
// (register_*_ops below, called from registry.cc): name → function from the node's input
// TensorBoxes to its output TensorBoxes. An op is lowered once here; backends never see
// ops, only Kernels and Externs.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "compiler/lower/graph_lowering.h"
#include "compiler/plan/error.h"

namespace ferrite {

struct LowerCtx {
  GraphLowering& gl;
  const Node& node;
  std::vector<TensorBoxPtr> in;  // null for omitted optional inputs
  int64_t opset;

  bool has(size_t i) const { return i < in.size() && in[i] != nullptr; }
  const TensorBoxPtr& input(size_t i) const;
  // A constant input read as integers (shapes, axes, pads); throws naming the input.
  std::vector<int64_t> const_ints(size_t i) const;
  std::shared_ptr<const TensorData> const_data(size_t i) const;
  std::string origin() const { return node.describe(); }
  // Normalizes an axis in [-rank, rank) to [0, rank); throws naming the node.
  int axis(int64_t a, size_t rank) const;
  template <class... Args>
  [[noreturn]] void unsupported(Args&&... args) const {
    throw UnsupportedError(str_cat(node.describe(), ": ", std::forward<Args>(args)...));
  }
  template <class... Args>
  [[noreturn]] void error(Args&&... args) const {
    fail(node.describe(), ": ", std::forward<Args>(args)...);
  }
};

// The outputs in order; an entry may be null for an output no one reads (gl.uses is 0).
using LowerFn = std::function<std::vector<TensorBoxPtr>(LowerCtx&)>;

// onnxruntime's contrib ops' domain; their lowerings are registered as "com.microsoft.<op>".
inline constexpr const char* kMicrosoftDomain = "com.microsoft";

struct LoweringTable {
  std::map<std::string, LowerFn> fns;
  void add(const std::string& op, LowerFn fn) { fns[op] = std::move(fn); }
};

const LoweringTable& lowering_table();
// The lowering of a node's op; UnsupportedError naming the node if there is none.
const LowerFn& lowering_for(const Node& n);
// Every node of `g` and of its subgraphs has a lowering; else UnsupportedError naming the
// first that has none. What a model load reports before any input shape is known.
void check_ops_supported(const Graph& g);

void register_pointwise_ops(LoweringTable& t);
void register_reduce_ops(LoweringTable& t);
void register_view_ops(LoweringTable& t);
void register_index_ops(LoweringTable& t);
void register_softmax_ops(LoweringTable& t);
void register_matmul_ops(LoweringTable& t);
void register_conv_ops(LoweringTable& t);
void register_segment_ops(LoweringTable& t);
void register_shape_value_ops(LoweringTable& t);
void register_norm_ops(LoweringTable& t);
void register_pool_ops(LoweringTable& t);
void register_position_ops(LoweringTable& t);
void register_loss_ops(LoweringTable& t);
void register_einsum_ops(LoweringTable& t);
void register_resize_ops(LoweringTable& t);
void register_control_flow_ops(LoweringTable& t);
void register_rnn_ops(LoweringTable& t);
void register_scatter_ops(LoweringTable& t);
void register_topk_ops(LoweringTable& t);
void register_sequence_ops(LoweringTable& t);
void register_attention_ops(LoweringTable& t);
void register_grid_ops(LoweringTable& t);
void register_signal_ops(LoweringTable& t);
void register_col2im_ops(LoweringTable& t);
void register_deform_conv_ops(LoweringTable& t);
void register_linear_attention_ops(LoweringTable& t);
void register_contrib_ops(LoweringTable& t);
void register_quant_ops(LoweringTable& t);
void register_qlinear_ops(LoweringTable& t);
void register_contrib_quant_ops(LoweringTable& t);
void register_matmul_nbits_ops(LoweringTable& t);
// Wraps the lowerings of the float32-only ops so that float16/bfloat16 inputs are widened
// and their outputs narrowed back (half_inputs.cc).
void compute_halves_in_float32(LoweringTable& t);

// Shared helpers -----------------------------------------------------------------------

// numpy broadcasting of shapes; throws naming the node on a mismatch.
std::vector<int64_t> broadcast_shapes(const LowerCtx& c,
                                      const std::vector<std::vector<int64_t>>& s);
// Loads `t` at an output index of `out_size` under numpy broadcasting.
V load_broadcast(KernelBuilder& b, const TensorBoxPtr& t, const std::vector<Index>& index,
                 const std::vector<int64_t>& out_size);
// A pointwise op over broadcast inputs; `fn` gets the loaded operands.
TensorBoxPtr make_pointwise(const LowerCtx& c, const std::vector<TensorBoxPtr>& ins, DType out,
                            std::function<V(KernelBuilder&, const std::vector<V>&)> fn);
// Reduction of `x` over `axes` (sorted, unique); keepdims keeps size-1 dims. The result is
// realized (reductions always are). `post` maps the reduced value (e.g. mean's 1/n).
// Compiling symbolically, the reduced dims may be symbolic only with `count_free`: the
// caller promises that nothing it computes holds the count of reduced elements (a max, a
// sum, Softmax's; not a mean, whose count would be a hint).
TensorBoxPtr make_reduction(const LowerCtx& c, const TensorBoxPtr& x, std::vector<int> axes,
                            bool keepdims, ReduceKind kind, DType out,
                            std::function<V(KernelBuilder&, V)> prologue = nullptr,
                            std::function<V(KernelBuilder&, V)> post = nullptr,
                            bool count_free = false);
// Values computed from sizes (sym_values.cc). sym_value_box: a small integer value of
// static `shape` whose elements are formulas over the symbols (a constant box when they
// are all constants). sym_elements: input i's elements as formulas (its sym_value, or its
// constant's values), or none when it is computed at run time. is_size_arithmetic: whether
// lower_size_arithmetic does node n when an input is such a value (the engine's
// GraphLowering calls it then instead of the op's lowering).
TensorBoxPtr sym_value_box(GraphLowering& gl, DType dtype, const std::vector<int64_t>& shape,
                           std::vector<Index> elements, const std::string& origin);
std::optional<std::vector<Index>> sym_elements(const LowerCtx& c, size_t i);
bool is_size_arithmetic(const Node& n);
// The int64 value of a size formula in a kernel: its symbols loaded from `symbols` (the
// GraphLowering's symbol_values buffer; null when the formula holds none).
V sym_formula_value(KernelBuilder& b, Buffer* symbols, const Index& formula);
std::vector<TensorBoxPtr> lower_size_arithmetic(LowerCtx& c);
// A view that reshapes `t` (element order preserved).
TensorBoxPtr reshape_view(const TensorBoxPtr& t, const std::vector<int64_t>& new_size);
// The same, keeping `t`'s sym sizes (loopir/shape_env.h) as `new_sym`: sizes over the same
// symbols that the lowering computed, whose product is t's (sym_reshape.cc). Without sym
// sizes on either side, or dims that do not line up as products, reshape_view's result (no
// sym sizes: the compile stops being symbolic at the node).
TensorBoxPtr reshape_view_sym(const TensorBoxPtr& t, const std::vector<int64_t>& new_size,
                              const std::optional<std::vector<Index>>& new_sym);
// Concatenation along `axis` of values of one dtype whose other dims agree (checked by
// the caller): each element is a load from the input whose range holds its index.
TensorBoxPtr concat_boxes(const std::vector<TensorBoxPtr>& ins, int axis,
                          const std::string& origin);
// The same for any number of inputs, in time and code linear in their number: past 16
// inputs (where every element would evaluate a masked load per input) they are concatenated
// in realized groups of 16, and the groups again, as a tree.
TensorBoxPtr concat_values(GraphLowering& gl, std::vector<TensorBoxPtr> ins, int axis,
                           const std::string& origin);
TensorBoxPtr permute_view(const TensorBoxPtr& t, const std::vector<int>& perm);
TensorBoxPtr expand_view(const TensorBoxPtr& t, const std::vector<int64_t>& new_size);
// The same, with sizes over the symbols `new_sym` (t's dims that are 1 broadcast; the
// caller computed new_sym by broadcast_sym or so): none when t has no sym sizes.
TensorBoxPtr expand_view_sym(const TensorBoxPtr& t, const std::vector<int64_t>& new_size,
                             const std::optional<std::vector<Index>>& new_sym);
// Sizes over the symbols broadcast together (a Const 1 broadcasts; other dims must be the
// same formula), or none where they may not broadcast at some sizes.
std::optional<std::vector<Index>> broadcast_sym(const std::vector<std::vector<Index>>& shapes);
// What follows an extern: a function of its result.
using EpiloguePost = std::function<TensorBoxPtr(const TensorBoxPtr&)>;
// The node's ferrite_epilogue subgraph (graph/ferrite_ops.h), as a function lowering it on
// the extern's result; null without one. Call it before the extern is added: it realizes
// the operands (the node's last inputs) now, as extern operands are, so that the epilogue
// reads them as loads of buffers.
EpiloguePost epilogue_nodes(const LowerCtx& c);
// Adds the extern call `e`, whose result is read through `y` (a view of outputs[0] of the
// shape the call gives it), then computes `post(y)` (the epilogue nodes, say) and, when that
// traces to an epilogue (lower/extern_epilogue.cc), attaches it to the call and returns `y`,
// which then holds it; otherwise returns post's value, computed pointwise after the call.
TensorBoxPtr add_extern_with_epilogue(const LowerCtx& c, ExternNode e, const TensorBoxPtr& y,
                                      const EpiloguePost& post);
// alpha * a @ b as a "MatMul" extern call (numpy matmul semantics: 1-D operands, batch
// broadcasting; transposes and broadcasts stay strides), then `post` on the result, as its
// epilogue where it traces to one (add_extern_with_epilogue; not with 1-D operands).
// float32 (float64: a loop-IR sum, no extern); throws naming the node.
TensorBoxPtr matmul_extern(const LowerCtx& c, TensorBoxPtr a, TensorBoxPtr b, double alpha,
                           const EpiloguePost& post = nullptr);
// Softmax (or LogSoftmax) of `x` over one axis, max-subtracted.
TensorBoxPtr softmax_over(const LowerCtx& c, const TensorBoxPtr& x, int axis, bool log);
// Rotary position embedding (RotaryEmbedding, and com.microsoft's): x is [B, H, S, D], or
// [B, S, H * D] with num_heads; the first `rot` (0: all) entries of each head rotate in
// pairs (halves, or neighbours when interleaved) by the caches' angle for the token's
// position: positions [B, S] int64 index caches [max_position, rot / 2]; without
// positions, the caches are [B, S, rot / 2].
struct RotarySpec {
  TensorBoxPtr x, cos, sin, positions;
  int64_t num_heads = 0, rot = 0;
  bool interleaved = false;
};
TensorBoxPtr rotary_embedding(const LowerCtx& c, const RotarySpec& spec);
TensorBoxPtr constant_box(GraphLowering& gl, std::shared_ptr<const TensorData> data,
                          const std::string& name);
// A constant 1-D integer input (a shape, repeats, pads, starts, sizes, ...): throws naming
// the node and the input when it has another rank, which const_ints would flatten.
std::vector<int64_t> const_ints_1d(const LowerCtx& c, size_t i);

}  // namespace ferrite
