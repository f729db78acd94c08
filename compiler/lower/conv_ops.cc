// Conv and ConvTranspose become "Conv" / "ConvTranspose" extern calls (semantics in
// runtime/kernels/reference/conv.h). All ONNX attribute logic lives here: auto_pad,
// kernel_shape, ConvTranspose's output_padding and output_shape are resolved into explicit
// per-dim strides, dilations and begin/end pads, and the output shape is computed and checked,
// so a backend only convolves.
#include "compiler/graph/layout_attr.h"
#include "compiler/loopir/checked_int.h"
#include "compiler/lower/lowering.h"
#include "compiler/plan/externs/conv_call.h"

namespace ferrite {
namespace {

// The resolved attributes of one node: the extern's, and per spatial dim the kernel and
// output sizes.
struct ConvAttrs {
  ConvCall call;
  std::vector<int64_t> kernel, out;
};

// a // b rounded toward negative infinity (ONNX's formulas are Python's).
int64_t floor_div(int64_t a, int64_t b) {
  return a / b - ((a % b != 0) && ((a < 0) != (b < 0)));
}

// (kernel - 1) * dilation + 1: the extent a dilated kernel covers. W's dims may be large
// (up to kMaxShapeElements), so this is checked even with dilation < 2^30.
int64_t kernel_span(int64_t kernel, int64_t dilation) {
  const char* what = "the dilated kernel's extent";
  return checked_add(checked_mul(kernel - 1, dilation, what), 1, what);
}

// Attribute values past this are nonsense, and rejecting them keeps the shape arithmetic
// below far from overflow.
constexpr int64_t kMaxAttr = int64_t{1} << 30;

std::vector<int64_t> per_dim(const LowerCtx& c, const char* name, size_t n, int64_t dflt,
                             int64_t min) {
  std::vector<int64_t> v = c.node.attr_ints(name, std::vector<int64_t>(n, dflt));
  if (v.size() != n) c.error(name, " has ", v.size(), " entries, expected ", n);
  for (int64_t x : v)
    if (x < min || x >= kMaxAttr) c.error(name, " must be in [", min, ", 2^30), got ", x);
  return v;
}

// Checks X, W and B and reads the attributes both ops share. W's channel dims are checked
// by the caller (they differ between the two ops).
ConvAttrs common_attrs(const LowerCtx& c, bool transpose) {
  const std::string& op = c.node.op_type;
  const TensorBoxPtr &x = c.input(0), &w = c.input(1);
  for (size_t i = 0; i < c.in.size(); ++i)
    if (c.has(i) && c.in[i]->dtype != DType::F32)
      c.unsupported(op, " on ", dtype_name(c.in[i]->dtype), " (float32 only)");
  const size_t rank = x->size.size();
  if (rank < 3) c.error("X must have rank >= 3 ([N, C, spatial...]), got rank ", rank);
  if (rank > 5) c.unsupported(op, " with ", rank - 2, " spatial dims (at most 3)");
  if (w->size.size() != rank) c.error("W has rank ", w->size.size(), ", X has rank ", rank);
  const size_t k = rank - 2;
  ConvAttrs a;
  a.call.transpose = transpose;
  a.call.group = c.node.attr_int("group", 1);
  if (a.call.group < 1 || a.call.group >= kMaxAttr)
    c.error("group must be in [1, 2^30), got ", a.call.group);
  a.kernel.assign(w->size.begin() + 2, w->size.end());
  for (int64_t d : a.kernel)
    if (d < 1) c.error("W has an empty kernel");
  if (c.node.has_attr("kernel_shape") && c.node.attr_ints("kernel_shape") != a.kernel)
    c.error("kernel_shape does not match W's spatial dims");
  a.call.stride = per_dim(c, "strides", k, 1, 1);
  a.call.dilation = per_dim(c, "dilations", k, 1, 1);
  return a;
}

void check_bias(const LowerCtx& c, int64_t channels) {
  if (!c.has(2)) return;
  const std::vector<int64_t>& b = c.input(2)->size;
  if (b.size() != 1 || b[0] != channels)
    c.error("B must have shape [", channels, "], got rank ", b.size(),
            b.size() == 1 ? str_cat(" size ", b[0]) : std::string());
}

std::vector<TensorBoxPtr> emit(LowerCtx& c, const ConvAttrs& a, int64_t out_channels) {
  const TensorBoxPtr& x = c.input(0);
  for (size_t d = 0; d < a.out.size(); ++d)
    if (a.out[d] <= 0) c.error("output spatial dim ", d, " has size ", a.out[d]);
  ExternNode e;
  encode_extern(a.call, &e);
  e.origin = c.origin();
  for (size_t i = 0; i < 3; ++i)
    if (c.has(i)) e.inputs.push_back(c.gl.extern_operand(c.input(i)));
  std::vector<int64_t> out_size{x->size[0], out_channels};
  out_size.insert(out_size.end(), a.out.begin(), a.out.end());
  const EpiloguePost post = epilogue_nodes(c);
  if (c.node.attr_string(kLayoutAttr, "") != kChannelsLastLayout) {
    Buffer* out = c.gl.new_buffer("", DType::F32, out_size, BufferOrigin::Extern);
    e.outputs.push_back(out);
    return {add_extern_with_epilogue(c, std::move(e), make_buffer_box(out), post)};
  }
  // Channels-last storage [N, spatial..., M]; the extern and every reader see [N, M, ...].
  const int k = static_cast<int>(a.out.size());
  std::vector<int64_t> stored{out_size[0]};
  stored.insert(stored.end(), out_size.begin() + 2, out_size.end());
  stored.push_back(out_channels);
  std::vector<int> perm{0, k + 1};
  for (int d = 1; d <= k; ++d) perm.push_back(d);
  Buffer* out = c.gl.new_buffer("", DType::F32, stored, BufferOrigin::Extern);
  e.outputs.push_back(out);
  e.output_perms.push_back(perm);
  return {
      add_extern_with_epilogue(c, std::move(e), permute_view(make_buffer_box(out), perm), post)};
}

std::vector<TensorBoxPtr> lower_conv(LowerCtx& c) {
  ConvAttrs a = common_attrs(c, false);
  const std::vector<int64_t>&x = c.input(0)->size, &w = c.input(1)->size;
  const size_t k = x.size() - 2;
  if (x[1] % a.call.group != 0 || w[0] % a.call.group != 0 || w[1] != x[1] / a.call.group)
    c.error("X has ", x[1], " channels and W is [", w[0], ", ", w[1],
            ", ...]: needs C = W.shape[1] * group and W.shape[0] divisible by group (group ",
            a.call.group, ")");
  check_bias(c, w[0]);
  std::vector<int64_t> pads = per_dim(c, "pads", 2 * k, 0, 0);
  const std::string auto_pad = c.node.attr_string("auto_pad", "NOTSET");
  for (size_t d = 0; d < k; ++d) {
    const int64_t in = x[2 + d], s = a.call.stride[d];
    const int64_t span = kernel_span(a.kernel[d], a.call.dilation[d]);
    int64_t pb = pads[d], pe = pads[k + d], out;
    if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      out = (in + s - 1) / s;
      const int64_t total =
          std::max<int64_t>(0, checked_add((out - 1) * s, span - in, "the padded extent"));
      pb = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;  // the odd one at the end
      pe = total - pb;
    } else if (auto_pad == "VALID") {
      pb = pe = 0;
      out = in >= span ? (in - span) / s + 1 : 0;
    } else {
      if (auto_pad != "NOTSET") c.error("unknown auto_pad '", auto_pad, "'");
      const int64_t room = in + pb + pe - span;
      out = room >= 0 ? room / s + 1 : 0;
    }
    a.call.pad_begin.push_back(pb);
    a.call.pad_end.push_back(pe);
    a.out.push_back(out);
  }
  return emit(c, a, w[0]);
}

// ConvTranspose's output_shape attribute: the spatial dims (some exporters give all dims).
std::vector<int64_t> output_shape_attr(const LowerCtx& c, const std::vector<int64_t>& x,
                                       int64_t out_channels) {
  std::vector<int64_t> s = c.node.attr_ints("output_shape");
  const size_t k = x.size() - 2;
  if (s.size() == k + 2) {
    if (s[0] != x[0] || s[1] != out_channels)
      c.error("output_shape's batch and channel dims do not match the output");
    s.erase(s.begin(), s.begin() + 2);
  }
  if (s.size() != k) c.error("output_shape has ", s.size(), " entries, expected ", k);
  return s;
}

std::vector<TensorBoxPtr> lower_conv_transpose(LowerCtx& c) {
  ConvAttrs a = common_attrs(c, true);
  const std::vector<int64_t>&x = c.input(0)->size, &w = c.input(1)->size;
  const size_t k = x.size() - 2;
  if (x[1] % a.call.group != 0 || w[0] != x[1])
    c.error("X has ", x[1], " channels and W is [", w[0], ", ", w[1],
            ", ...]: needs W.shape[0] = C, divisible by group (group ", a.call.group, ")");
  const int64_t out_channels = w[1] * a.call.group;
  check_bias(c, out_channels);
  const std::vector<int64_t> out_pad = per_dim(c, "output_padding", k, 0, 0);
  std::vector<int64_t> pads = per_dim(c, "pads", 2 * k, 0, 0);
  const std::string auto_pad = c.node.attr_string("auto_pad", "NOTSET");
  if (auto_pad != "NOTSET" && auto_pad != "SAME_UPPER" && auto_pad != "SAME_LOWER" &&
      auto_pad != "VALID")
    c.error("unknown auto_pad '", auto_pad, "'");
  const bool same = auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER";
  const bool has_shape = c.node.has_attr("output_shape");
  std::vector<int64_t> target;
  if (has_shape) target = output_shape_attr(c, x, out_channels);
  for (int64_t t : target)
    if (t < 1 || t >= kMaxAttr) c.error("output_shape entry ", t, " is out of range");
  for (size_t d = 0; d < k; ++d) {
    const int64_t in = x[2 + d], s = a.call.stride[d];
    // The full output: every position some input element reaches, plus output_padding.
    const char* what = "the full output extent";
    const int64_t full = checked_add(checked_add(checked_mul(s, in - 1, what), out_pad[d], what),
                                     kernel_span(a.kernel[d], a.call.dilation[d]), what);
    int64_t pb = pads[d], pe = pads[k + d];
    if (has_shape || same) {
      // The requested size (output_shape, or in * stride for SAME) fixes the pads, over any
      // explicit ones, by the spec's formulas with Python's division: a size past the full
      // output gives a negative pad, which extends the output.
      const int64_t want = has_shape ? target[d] : checked_mul(in, s, "input * stride");
      const int64_t total = full - want;
      pb = auto_pad == "SAME_UPPER" ? floor_div(total, 2) : total - floor_div(total, 2);
      pe = total - pb;
    } else if (auto_pad == "VALID") {
      pb = pe = 0;
    }
    a.call.pad_begin.push_back(pb);
    a.call.pad_end.push_back(pe - out_pad[d]);  // the extern's pads crop the output without it
    a.out.push_back(full - pb - pe);
  }
  return emit(c, a, out_channels);
}

// CausalConvWithState: a depthwise causal 1-D convolution over [B, C, L] carrying the last
// k - 1 input positions between calls: the input left-padded by past_state (or zeros), a
// valid convolution with weight [C, 1, k], the bias, an optional SiLU; present_state is the
// padded input's last k - 1 positions.
std::vector<TensorBoxPtr> lower_causal_conv_with_state(LowerCtx& c) {
  const TensorBoxPtr &x = c.input(0), &w = c.input(1);
  if (x->dtype != DType::F32) c.unsupported("CausalConvWithState on ", dtype_name(x->dtype));
  if (x->size.size() != 3) c.error("input must be [batch, channels, length]");
  const int64_t batch = x->size[0], ch = x->size[1], len = x->size[2];
  if (w->dtype != x->dtype || w->size.size() != 3 || w->size[0] != ch || w->size[1] != 1 ||
      w->size[2] < 1) {
    c.error("weight must be [", ch, ", 1, k] of the input's type");
  }
  const int64_t k = w->size[2];
  const std::string act = c.node.attr_string("activation", "none");
  if (act != "none" && act != "silu" && act != "swish") c.error("activation '", act, "'");
  TensorBoxPtr state;
  if (c.has(3)) {
    state = c.input(3);
    if (state->dtype != x->dtype || state->size != std::vector<int64_t>{batch, ch, k - 1}) {
      c.error("past_state must be [", batch, ", ", ch, ", ", k - 1, "]");
    }
  } else {
    state = make_pointwise_box(
        x->dtype, {batch, ch, k - 1},
        [](KernelBuilder& b, const std::vector<Index>&) { return b.constant(ScalarType::F32, 0); },
        c.origin());
  }
  const TensorBoxPtr bias = c.has(2) ? c.input(2) : nullptr;
  if (bias && bias->size != std::vector<int64_t>{ch}) c.error("bias must be [", ch, "]");
  TensorBoxPtr padded = k > 1 ? concat_boxes({state, x}, 2, c.origin()) : x;
  auto def = std::make_shared<ComputedDef>();
  def->is_reduction = true;
  def->reduce = ReduceKind::Sum;
  def->origin = c.origin();
  def->ranges = {batch, ch, len};
  def->reduction_ranges = {k};
  def->rfn = [padded, w](KernelBuilder& b, const std::vector<Index>& o,
                         const std::vector<Index>& r) {
    return b.binary(Op::Mul, w->load(b, {o[1], ix_const(0), r[0]}),
                    padded->load(b, {o[0], o[1], ix_add(o[2], r[0])}));
  };
  TensorBoxPtr y = make_reduction_box(x->dtype, def);
  c.gl.realize(y);
  if (bias || act != "none") {
    std::vector<TensorBoxPtr> ins{y};
    if (bias) ins.push_back(reshape_view(bias, {ch, 1}));
    const bool silu = act != "none";
    y = make_pointwise(c, ins, x->dtype, [silu](KernelBuilder& b, const std::vector<V>& v) {
      V z = v.size() > 1 ? b.binary(Op::Add, v[0], v[1]) : v[0];
      return silu ? b.binary(Op::Mul, z, b.unary(Op::Sigmoid, z)) : z;
    });
  }
  const int64_t total = padded->size[2];
  TensorBoxPtr present = make_view(padded, {batch, ch, k - 1},
                                   [total, k](const std::vector<Index>& i) -> std::vector<Index> {
                                     return {i[0], i[1], ix_add(i[2], ix_const(total - (k - 1)))};
                                   });
  return {y, present};
}

}  // namespace

void register_conv_ops(LoweringTable& t) {
  t.add("CausalConvWithState", lower_causal_conv_with_state);
  t.add("Conv", lower_conv);
  t.add("ConvTranspose", lower_conv_transpose);
}

}  // namespace ferrite
