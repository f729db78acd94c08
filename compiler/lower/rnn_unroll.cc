#include "compiler/lower/rnn_unroll.h"

#include <algorithm>
#include <cctype>
#include <cstdint>

#include "compiler/lower/quant_common.h"
#include "compiler/lower/unroll_budget.h"

namespace ferrite {
namespace {

std::string shape_of(const TensorBoxPtr& t) {
  return TensorType{t->dtype, t->size, {}, true}.to_string();
}

// Which activations take alpha / beta, and their defaults: those of the ONNX operator of
// the same name (Affine and ScaledTanh, long gone from the opset, as they were defined).
struct ActivationInfo {
  const char* name;
  bool takes_alpha, takes_beta;
  double alpha, beta;
};
constexpr ActivationInfo kActivations[] = {
    {"relu", false, false, 0, 0},         {"tanh", false, false, 0, 0},
    {"sigmoid", false, false, 0, 0},      {"affine", true, true, 1.0, 0.0},
    {"leakyrelu", true, false, 0.01, 0},  {"thresholdedrelu", true, false, 1.0, 0},
    {"scaledtanh", true, true, 1.0, 1.0}, {"hardsigmoid", true, true, 0.2, 0.5},
    {"elu", true, false, 1.0, 0},         {"softsign", false, false, 0, 0},
    {"softplus", false, false, 0, 0}};

std::vector<std::string> strings_attr(const LowerCtx& c, const std::string& key) {
  auto it = c.node.attrs.find(key);
  if (it == c.node.attrs.end()) return {};
  if (it->second.kind != AttrKind::Strings) c.error("attribute '", key, "' must be strings");
  return it->second.strings;
}

// activation_alpha / activation_beta are consumed in order by the activations that take
// them (as onnxruntime reads them); the others use their defaults.
std::vector<RnnActivation> read_activations(const LowerCtx& c, int dirs,
                                            const std::vector<std::string>& defaults) {
  std::vector<std::string> names = strings_attr(c, "activations");
  size_t per_dir = defaults.size();
  if (names.empty()) {
    for (int d = 0; d < dirs; ++d) names.insert(names.end(), defaults.begin(), defaults.end());
  }
  if (names.size() != per_dir && names.size() != per_dir * dirs) {
    c.error("activations lists ", names.size(), " functions, expected ", per_dir * dirs);
  }
  std::vector<double> alphas = c.node.attr_floats("activation_alpha");
  std::vector<double> betas = c.node.attr_floats("activation_beta");
  size_t next_alpha = 0, next_beta = 0;
  std::vector<RnnActivation> acts;
  for (const std::string& given : names) {
    RnnActivation a;
    a.name = given;
    std::transform(a.name.begin(), a.name.end(), a.name.begin(),
                   [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
    const ActivationInfo* info = nullptr;
    for (const auto& k : kActivations) {
      if (a.name == k.name) info = &k;
    }
    if (!info) c.unsupported("activation '", given, "'");
    a.alpha = info->takes_alpha && next_alpha < alphas.size() ? alphas[next_alpha++] : info->alpha;
    a.beta = info->takes_beta && next_beta < betas.size() ? betas[next_beta++] : info->beta;
    acts.push_back(a);
  }
  // One direction's list serves both directions of a bidirectional op.
  if (acts.size() == per_dir && dirs == 2) {
    std::vector<RnnActivation> one = acts;
    acts.insert(acts.end(), one.begin(), one.end());
  }
  return acts;
}

void expect_float(const LowerCtx& c, const TensorBoxPtr& t, const char* what) {
  if (t->dtype != DType::F32)
    c.unsupported(what, " of type ", dtype_name(t->dtype), " (float32 only)");
}

void expect_shape(const LowerCtx& c, const TensorBoxPtr& t, const char* what,
                  const std::vector<int64_t>& want) {
  if (t->size != want) {
    c.error(what, " has shape ", shape_of(t), ", expected ",
            TensorType{t->dtype, want, {}, true}.to_string());
  }
}

// sequence_lens, or null when every sequence has full length (known at compile time).
TensorBoxPtr read_lens(const LowerCtx& c, const RnnSpec& s) {
  if (!c.has(4)) return nullptr;
  TensorBoxPtr lens = c.input(4);
  if (lens->dtype != DType::I32 && lens->dtype != DType::I64) {
    c.error("sequence_lens must be int32, got ", dtype_name(lens->dtype));
  }
  expect_shape(c, lens, "sequence_lens", {s.batch});
  auto data = c.gl.constant_data(lens);
  if (!data) return lens;  // known at run time only: masked there
  bool full = true;
  for (int64_t i = 0; i < s.batch; ++i) {
    int64_t n = data->int_at(i);
    if (n < 0 || n > s.seq) c.error("sequence_lens[", i, "] = ", n, " is outside [0, ", s.seq, "]");
    full = full && n == s.seq;
  }
  return full ? nullptr : constant_box(c.gl, data, "sequence_lens");
}

// A DynamicQuantizeLSTM weight's scale (input `si`, float32 [dirs] or [dirs, rows]) and zero
// point (input `zi`, of the weight's type, the same shapes; its direction's first value is
// the one used) as [dirs, rows] views.
void read_scale_and_zero(const LowerCtx& c, const RnnSpec& s, DType type, size_t si, size_t zi,
                         const char* what, TensorBoxPtr* scale, TensorBoxPtr* zero) {
  const int64_t rows = s.gates * s.hidden;
  for (size_t i : {si, zi}) {
    const bool is_scale = i == si;
    if (!c.has(i)) c.error(what, is_scale ? " scale" : " zero point", " is required");
    const TensorBoxPtr& t = c.input(i);
    if (t->dtype != (is_scale ? DType::F32 : type))
      c.error(what, is_scale ? " scale must be float32" : " zero point must have its weight's type",
              ", got ", dtype_name(t->dtype));
    const bool per_row = t->size == std::vector<int64_t>{s.dirs, rows};
    if (t->size != std::vector<int64_t>{s.dirs} && !per_row)
      c.error(what, is_scale ? " scale" : " zero point", " has shape ", shape_of(t), ", expected [",
              s.dirs, "] or [", s.dirs, ", ", rows, "]");
    *(is_scale ? scale : zero) =
        make_view(t, {s.dirs, rows}, [per_row, is_scale](const std::vector<Index>& idx) {
          if (!per_row) return std::vector<Index>{idx[0]};
          return std::vector<Index>{idx[0], is_scale ? idx[1] : ix_const(0)};
        });
  }
}

void read_weight_quantization(const LowerCtx& c, RnnSpec* s) {
  read_scale_and_zero(c, *s, s->w->dtype, 8, 9, "W", &s->w_scale, &s->w_zero);
  read_scale_and_zero(c, *s, s->r->dtype, 10, 11, "R", &s->r_scale, &s->r_zero);
}

}  // namespace

RnnSpec read_rnn_spec(const LowerCtx& c, int gates, const std::vector<std::string>& default_acts) {
  RnnSpec s;
  s.gates = gates;
  const bool quantized = c.node.op_type == "DynamicQuantizeLSTM";
  const TensorBoxPtr& x = c.input(0);
  TensorBoxPtr w = c.input(1), r = c.input(2);
  expect_float(c, x, "X");
  if (quantized) {
    // [dirs, input, gates*hidden] and [dirs, hidden, gates*hidden]: the float ops' layout
    // transposed.
    for (TensorBoxPtr* t : {&w, &r}) {
      if ((*t)->dtype != DType::U8 && (*t)->dtype != DType::I8)
        c.error(t == &w ? "W" : "R", " must be uint8 or int8, got ", dtype_name((*t)->dtype));
      if ((*t)->size.size() != 3) c.error(t == &w ? "W" : "R", " must be 3-D, got ", shape_of(*t));
      *t = permute_view(*t, {0, 2, 1});
    }
  } else {
    expect_float(c, w, "W");
    expect_float(c, r, "R");
  }
  std::string direction = c.node.attr_string("direction", "forward");
  if (direction == "bidirectional") {
    s.dirs = 2;
  } else if (direction == "reverse") {
    s.reverse = true;
  } else if (direction != "forward") {
    c.error("direction '", direction, "' (forward, reverse or bidirectional)");
  }
  int64_t layout = c.node.attr_int("layout", 0);
  if (layout != 0 && layout != 1) c.error("layout ", layout, " (0 or 1)");
  s.batch_first = layout == 1;
  if (x->size.size() != 3) c.error("X must be 3-D, got ", shape_of(x));
  s.seq = x->size[s.batch_first ? 1 : 0];
  s.batch = x->size[s.batch_first ? 0 : 1];
  s.input = x->size[2];
  if (r->size.size() != 3 || r->size[1] != gates * r->size[2]) {
    c.error("R has shape ", shape_of(r), ", expected [num_directions, ", gates,
            "*hidden_size, hidden_size]");
  }
  s.hidden = r->size[2];
  int64_t attr_hidden = c.node.attr_int("hidden_size", s.hidden);
  if (attr_hidden != s.hidden) c.error("hidden_size is ", attr_hidden, " but R has ", s.hidden);
  expect_shape(c, r, "R", {s.dirs, gates * s.hidden, s.hidden});
  expect_shape(c, w, "W", {s.dirs, gates * s.hidden, s.input});
  if (s.seq == 0 || s.batch == 0 || s.hidden == 0 || s.input == 0) {
    c.unsupported("empty sequence, batch, input or hidden state");
  }
  s.w = w;
  s.r = r;
  if (c.has(3)) {
    s.b = c.input(3);
    expect_float(c, s.b, "B");
    expect_shape(c, s.b, "B", {s.dirs, 2 * gates * s.hidden});
  }
  s.lens = read_lens(c, s);
  s.h0 = read_rnn_state(c, s, 5, "initial_h");
  if (c.node.has_attr("clip")) {
    s.clip = c.node.attr_float("clip", 0);
    if (!(s.clip > 0)) c.error("clip must be positive, got ", s.clip);
  }
  s.per_dir = static_cast<int>(default_acts.size());
  s.acts = read_activations(c, s.dirs, default_acts);
  if (quantized) read_weight_quantization(c, &s);
  return s;
}

TensorBoxPtr read_rnn_state(const LowerCtx& c, const RnnSpec& s, size_t index, const char* what) {
  if (!c.has(index)) return nullptr;
  TensorBoxPtr t = c.input(index);
  expect_float(c, t, what);
  if (s.batch_first) {
    expect_shape(c, t, what, {s.batch, s.dirs, s.hidden});
    return permute_view(t, {1, 0, 2});
  }
  expect_shape(c, t, what, {s.dirs, s.batch, s.hidden});
  return t;
}

V apply_rnn_activation(KernelBuilder& b, const RnnActivation& a, double clip, V x) {
  auto k = [&](double v) { return b.constant(x.type, v); };
  auto mul = [&](V p, V q) { return b.binary(Op::Mul, p, q); };
  auto add = [&](V p, V q) { return b.binary(Op::Add, p, q); };
  if (clip > 0) x = b.binary(Op::Min, b.binary(Op::Max, x, k(-clip)), k(clip));
  const std::string& n = a.name;
  if (n == "relu") return b.unary(Op::Relu, x);
  if (n == "tanh") return b.unary(Op::Tanh, x);
  if (n == "sigmoid") return b.unary(Op::Sigmoid, x);
  if (n == "affine") return add(mul(x, k(a.alpha)), k(a.beta));
  if (n == "leakyrelu") return b.where(b.binary(Op::Lt, x, k(0)), mul(x, k(a.alpha)), x);
  if (n == "thresholdedrelu") return b.where(b.binary(Op::Gt, x, k(a.alpha)), x, k(0));
  if (n == "scaledtanh") return mul(b.unary(Op::Tanh, mul(x, k(a.beta))), k(a.alpha));
  if (n == "hardsigmoid") {
    V y = add(mul(x, k(a.alpha)), k(a.beta));
    return b.binary(Op::Min, b.binary(Op::Max, y, k(0)), k(1));
  }
  if (n == "elu") {
    V e = b.binary(Op::Sub, b.unary(Op::Exp, x), k(1));
    return b.where(b.binary(Op::Lt, x, k(0)), mul(e, k(a.alpha)), x);
  }
  if (n == "softsign") return b.binary(Op::Div, x, add(b.unary(Op::Abs, x), k(1)));
  if (n == "softplus") {
    // max(x, 0) + log(1 + exp(-|x|)): log(1 + exp(x)) without overflow.
    V e = b.unary(Op::Exp, b.unary(Op::Neg, b.unary(Op::Abs, x)));
    return add(b.binary(Op::Max, x, k(0)), b.unary(Op::Log, add(e, k(1))));
  }
  fail("internal: RNN activation '", n, "'");
}

TensorBoxPtr rnn_direction(const TensorBoxPtr& state, int d) {
  return make_view(state, {state->size[1], state->size[2]}, [d](const std::vector<Index>& i) {
    return std::vector<Index>{ix_const(d), i[0], i[1]};
  });
}

// RnnTerms ---------------------------------------------------------------------------------

V RnnTerms::input_term(KernelBuilder& b, int d, int64_t t, int g, const std::vector<Index>& i,
                       bool with_rb) const {
  Index unit = ix_add(ix_const(g * s.hidden), i[1]);
  V v = xw->load(b, {ix_const(t), i[0], ix_const(d), unit});
  if (s.b) v = b.binary(Op::Add, v, s.b->load(b, {ix_const(d), unit}));
  if (with_rb && s.b) v = b.binary(Op::Add, v, recurrent_bias(b, d, g, i));
  return v;
}

V RnnTerms::recurrent_bias(KernelBuilder& b, int d, int g, const std::vector<Index>& i) const {
  if (!s.b) return b.constant(ScalarType::F32, 0);
  return s.b->load(b, {ix_const(d), ix_add(ix_const((s.gates + g) * s.hidden), i[1])});
}

V RnnTerms::keep_in_sequence(KernelBuilder& b, int64_t t, const std::vector<Index>& i, V fresh,
                             const TensorBoxPtr& carried) const {
  if (!s.lens) return fresh;
  V len = b.cast(s.lens->load(b, {i[0]}), ScalarType::I64);
  V inside = b.binary(Op::Lt, b.constant(ScalarType::I64, static_cast<double>(t)), len);
  return b.where(inside, fresh, load_state(b, carried, i));
}

V RnnTerms::load_gate(KernelBuilder& b, const TensorBoxPtr& hr, int g,
                      const std::vector<Index>& i) const {
  if (!hr) return b.constant(ScalarType::F32, 0);
  return hr->load(b, {i[0], ix_add(ix_const(g * s.hidden), i[1])});
}

V RnnTerms::load_state(KernelBuilder& b, const TensorBoxPtr& state, const std::vector<Index>& i) {
  return state ? state->load(b, i) : b.constant(ScalarType::F32, 0);
}

// RnnUnroll --------------------------------------------------------------------------------

namespace {

// a·b as onnxruntime's DynamicQuantizeLSTM computes it: a (float32 [m, k]) quantized to
// uint8 over its range (DynamicQuantizeLinear), an exact integer product with the 8-bit b
// ([k, n], column zero points `zero` [n]), then float(sum) * (a_scale * scale[column]).
TensorBoxPtr dynamic_product(const LowerCtx& c, const TensorBoxPtr& a, const TensorBoxPtr& b,
                             const TensorBoxPtr& scale, const TensorBoxPtr& zero) {
  const DynamicQ q = dynamic_quantize_u8(c, a);
  const TensorBoxPtr acc = integer_matmul(c, {q.y, q.zero_point}, {b, zero});
  return make_pointwise(c, {acc, q.scale, scale}, DType::F32,
                        [](KernelBuilder& kb, const std::vector<V>& v) {
                          const V multiplier = kb.binary(Op::Mul, v[1], v[2]);
                          return kb.binary(Op::Mul, kb.cast(v[0], ScalarType::F32), multiplier);
                        });
}

}  // namespace

RnnUnroll::RnnUnroll(const LowerCtx& c, RnnSpec s, bool want_y) : c_(c) {
  // A step is a MatMul, up to three gate kernels and a state: kStepNodes against the
  // unrolling budget, charged for the whole sequence before any step is lowered.
  // (A quantized step also quantizes H: two reductions and a pointwise kernel more.)
  const int64_t kStepNodes = s.quantized() ? 7 : 4;
  int64_t steps;
  if (__builtin_mul_overflow(s.seq, int64_t{s.dirs} * kStepNodes, &steps)) steps = INT64_MAX;
  charge_unrolled(c, steps, str_cat("a sequence of ", s.seq, " steps"));
  auto terms = std::make_shared<RnnTerms>();
  // X·Wᵀ for every timestep and direction in one MatMul, over X in its own layout.
  const TensorBoxPtr& x = c.input(0);
  int64_t rows = s.gates * s.hidden;
  // [d0, d1, input] → [d0*d1, input] as x[i / d1, i % d1]: plain strides over a contiguous X
  // (reshape_view's round trip through the flat index is not recognised as strides).
  int64_t d1 = x->size[1];
  TensorBoxPtr x2 = make_view(x, {x->size[0] * d1, s.input}, [d1](const std::vector<Index>& i) {
    return std::vector<Index>{ix_floordiv(i[0], d1), ix_mod(i[0], d1), i[1]};
  });
  TensorBoxPtr wt = permute_view(reshape_view(s.w, {s.dirs * rows, s.input}), {1, 0});
  TensorBoxPtr xw = reshape_view(
      s.quantized() ? dynamic_product(c, x2, wt, reshape_view(s.w_scale, {s.dirs * rows}),
                                      reshape_view(s.w_zero, {s.dirs * rows}))
                    : matmul_extern(c, x2, wt, 1.0),
      {x->size[0], x->size[1], s.dirs, rows});
  terms->xw = s.batch_first ? permute_view(xw, {1, 0, 2, 3}) : xw;
  if (want_y) {
    y_ = c.gl.new_buffer("", DType::F32, {s.seq, s.dirs, s.batch, s.hidden},
                         BufferOrigin::Assembled);
  }
  terms->s = std::move(s);
  terms_ = std::move(terms);
}

TensorBoxPtr RnnUnroll::recurrent(int d, const TensorBoxPtr& h, int g0, int n) const {
  if (!h) return nullptr;
  const RnnSpec& s = terms_->s;
  int64_t first = g0 * s.hidden;
  TensorBoxPtr rd =
      make_view(s.r, {n * s.hidden, s.hidden}, [d, first](const std::vector<Index>& i) {
        return std::vector<Index>{ix_const(d), ix_add(ix_const(first), i[0]), i[1]};
      });
  if (!s.quantized()) return matmul_extern(c_, h, permute_view(rd, {1, 0}), 1.0);
  auto row_of = [d, first](const TensorBoxPtr& t, int64_t n) {
    return make_view(t, {n}, [d, first](const std::vector<Index>& i) {
      return std::vector<Index>{ix_const(d), ix_add(ix_const(first), i[0])};
    });
  };
  return dynamic_product(c_, h, permute_view(rd, {1, 0}), row_of(s.r_scale, n * s.hidden),
                         row_of(s.r_zero, n * s.hidden));
}

TensorBoxPtr RnnUnroll::step_box(Loader fn) const {
  const RnnSpec& s = terms_->s;
  return make_pointwise_box(DType::F32, {s.batch, s.hidden}, std::move(fn), c_.origin());
}

TensorBoxPtr RnnUnroll::realize_hidden(int d, int64_t t, const TensorBoxPtr& h) {
  const RnnSpec& s = terms_->s;
  if (y_) {
    c_.gl.realize_into(h, y_, (t * s.dirs + d) * s.batch * s.hidden);
  } else {
    c_.gl.realize(h);
  }
  return h;
}

TensorBoxPtr RnnUnroll::y() const {
  const RnnSpec& s = terms_->s;
  if (!y_) fail("internal: Y was not kept");
  TensorBoxPtr y = make_buffer_box(y_);
  if (s.lens) {  // zero past each sequence's end
    TensorBoxPtr lens = s.lens;
    y = make_pointwise_box(
        DType::F32, y->size,
        [y, lens](KernelBuilder& b, const std::vector<Index>& i) {
          V len = b.cast(lens->load(b, {i[2]}), ScalarType::I64);
          V inside = b.binary(Op::Lt, b.index_value(i[0]), len);
          return b.where(inside, y->load(b, i), b.constant(ScalarType::F32, 0));
        },
        c_.origin());
  }
  return s.batch_first ? permute_view(y, {2, 0, 1, 3}) : y;
}

TensorBoxPtr RnnUnroll::final_state(const std::vector<TensorBoxPtr>& last) const {
  const RnnSpec& s = terms_->s;
  TensorBoxPtr lens = s.lens;
  Loader fn = [last, lens](KernelBuilder& b, const std::vector<Index>& i) {
    std::vector<Index> bi{i[1], i[2]};
    V v;
    if (last.size() == 1) {
      v = RnnTerms::load_state(b, last[0], bi);
    } else {
      V dir = b.index_value(i[0]);
      for (size_t d = 0; d < last.size(); ++d) {
        V here = b.binary(Op::Eq, dir, b.constant(ScalarType::I64, static_cast<double>(d)));
        V vd;
        {
          MaskScope scope(b, here);
          vd = RnnTerms::load_state(b, last[d], bi);
        }
        v = d == 0 ? vd : b.where(here, vd, v);
      }
    }
    if (!lens) return v;
    // An empty sequence ends in a zero state (as onnxruntime has it), not the initial one.
    V len = b.cast(lens->load(b, {i[1]}), ScalarType::I64);
    V empty = b.binary(Op::Le, len, b.constant(ScalarType::I64, 0));
    return b.where(empty, b.constant(ScalarType::F32, 0), v);
  };
  TensorBoxPtr out = make_pointwise_box(DType::F32, {s.dirs, s.batch, s.hidden}, fn, c_.origin());
  return s.batch_first ? permute_view(out, {1, 0, 2}) : out;
}

}  // namespace ferrite
