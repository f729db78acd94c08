// The activation formulas of activations.h, without a namespace or an include guard: that
// header includes this file into ferrite::act, and the portable epilogue (epilogue-inl.h)
// once more into each Highway target's namespace, so that its vector instantiations are
// compiled for that target (the Highway convention for -inl.h files). Needs <type_traits>,
// compiler/plan/ops.h and compiler/plan/post_ops.h included first.

// Inlined where they are used: a vector backend instantiates the formulas inside its
// per-target (Highway) code, and a call there would cross into code compiled for no target.
// constexpr: a backend may also evaluate a formula at compile time with a builder of facts
// (the portable epilogue asks which post-ops reach a Max or a Min).
#ifndef FERRITE_ACT_INLINE
#if defined(__GNUC__)
#define FERRITE_ACT_INLINE constexpr __attribute__((always_inline))
#else
#define FERRITE_ACT_INLINE constexpr
#endif
#endif  // FERRITE_ACT_INLINE

template <class B, class V = typename B::V>
FERRITE_ACT_INLINE V relu(B& b, V x) {
  return b.unary(Op::Relu, x);
}

// where(x < 0, neg, x): the negative branch of the ReLU family.
template <class B, class V = typename B::V>
FERRITE_ACT_INLINE V select_negative(B& b, V x, V neg) {
  return b.where(b.binary(Op::Lt, x, b.constant(x, 0)), neg, x);
}

template <class B, class V = typename B::V>
FERRITE_ACT_INLINE V leaky_relu(B& b, V x, double alpha) {
  return select_negative(b, x, b.binary(Op::Mul, x, b.constant(x, alpha)));
}

template <class B, class V = typename B::V>
FERRITE_ACT_INLINE V elu(B& b, V x, double alpha) {
  V e = b.binary(Op::Sub, b.unary(Op::Exp, x), b.constant(x, 1));
  return select_negative(b, x, b.binary(Op::Mul, e, b.constant(x, alpha)));
}

// min(max(x, lo), hi), with Max and Min as scalar_ops defines them (NaN propagates).
template <class B, class V = typename B::V>
FERRITE_ACT_INLINE V clip(B& b, V x, V lo, V hi) {
  return b.binary(Op::Min, b.binary(Op::Max, x, lo), hi);
}

template <class B, class V = typename B::V>
FERRITE_ACT_INLINE V hard_sigmoid(B& b, V x, double alpha, double beta) {
  V y = b.binary(Op::Add, b.binary(Op::Mul, x, b.constant(x, alpha)), b.constant(x, beta));
  return clip(b, y, b.constant(x, 0), b.constant(x, 1));
}

template <class B, class V = typename B::V>
FERRITE_ACT_INLINE V hard_swish(B& b, V x) {
  return b.binary(Op::Mul, x, hard_sigmoid(b, x, 1.0 / 6, 0.5));
}

template <class B, class V = typename B::V>
FERRITE_ACT_INLINE V silu(B& b, V x) {
  return b.binary(Op::Mul, x, b.unary(Op::Sigmoid, x));
}

// x/2 (1 + erf(x / sqrt 2))
template <class B, class V = typename B::V>
FERRITE_ACT_INLINE V gelu_erf(B& b, V x) {
  V inner = b.unary(Op::Erf, b.binary(Op::Mul, x, b.constant(x, 0.70710678118654752440)));
  V half_x = b.binary(Op::Mul, x, b.constant(x, 0.5));
  return b.binary(Op::Mul, half_x, b.binary(Op::Add, inner, b.constant(x, 1)));
}

// x/2 (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
template <class B, class V = typename B::V>
FERRITE_ACT_INLINE V gelu_tanh(B& b, V x) {
  V x3 = b.binary(Op::Mul, b.binary(Op::Mul, x, x), x);
  V u = b.binary(Op::Add, x, b.binary(Op::Mul, x3, b.constant(x, 0.044715)));
  V inner = b.unary(Op::Tanh, b.binary(Op::Mul, u, b.constant(x, 0.79788456080286535588)));
  V half_x = b.binary(Op::Mul, x, b.constant(x, 0.5));
  return b.binary(Op::Mul, half_x, b.binary(Op::Add, inner, b.constant(x, 1)));
}

// alpha * x + beta
template <class B, class V = typename B::V>
FERRITE_ACT_INLINE V linear(B& b, V x, double alpha, double beta) {
  return b.binary(Op::Add, b.binary(Op::Mul, x, b.constant(x, alpha)), b.constant(x, beta));
}

// The op of a binary post-op (y op t).
constexpr Op binary_post_op(PostOpKind kind) {
  switch (kind) {
    case PostOpKind::Sub:
      return Op::Sub;
    case PostOpKind::Mul:
      return Op::Mul;
    case PostOpKind::Div:
      return Op::Div;
    case PostOpKind::Max:
      return Op::Max;
    case PostOpKind::Min:
      return Op::Min;
    default:
      return Op::Add;
  }
}

template <PostOpKind K>
using PostOpKindC = std::integral_constant<PostOpKind, K>;

// The post-op K (post_ops.h) applied to y, with p's parameters; t is a binary post-op's
// operand (ignored otherwise). K is a constant, so a vector backend gets one formula.
template <PostOpKind K, class B, class V = typename B::V>
FERRITE_ACT_INLINE V post_op_k(B& b, const PostOp& p, V y, V t) {
  if constexpr (K == PostOpKind::Relu) return relu(b, y);
  if constexpr (K == PostOpKind::Clip)
    return clip(b, y, b.constant(y, p.alpha), b.constant(y, p.beta));
  if constexpr (K == PostOpKind::LeakyRelu) return leaky_relu(b, y, p.alpha);
  if constexpr (K == PostOpKind::Elu) return elu(b, y, p.alpha);
  if constexpr (K == PostOpKind::HardSigmoid) return hard_sigmoid(b, y, p.alpha, p.beta);
  if constexpr (K == PostOpKind::HardSwish) return hard_swish(b, y);
  if constexpr (K == PostOpKind::Sigmoid) return b.unary(Op::Sigmoid, y);
  if constexpr (K == PostOpKind::Tanh) return b.unary(Op::Tanh, y);
  if constexpr (K == PostOpKind::Silu) return silu(b, y);
  if constexpr (K == PostOpKind::GeluErf) return gelu_erf(b, y);
  if constexpr (K == PostOpKind::GeluTanh) return gelu_tanh(b, y);
  if constexpr (K == PostOpKind::Linear) return linear(b, y, p.alpha, p.beta);
  if constexpr (K >= PostOpKind::Add) return b.binary(binary_post_op(K), y, t);
}

// f(PostOpKindC<K>{}) for K = kind: the one switch from a post-op's kind to its formula.
template <class F>
decltype(auto) with_post_op_kind(PostOpKind kind, F&& f) {
  switch (kind) {
#define FERRITE_POST_OP_CASE(K) \
  case PostOpKind::K:           \
    return f(PostOpKindC<PostOpKind::K>{});
    FERRITE_POST_OP_CASE(Relu)
    FERRITE_POST_OP_CASE(Clip)
    FERRITE_POST_OP_CASE(LeakyRelu)
    FERRITE_POST_OP_CASE(Elu)
    FERRITE_POST_OP_CASE(HardSigmoid)
    FERRITE_POST_OP_CASE(HardSwish)
    FERRITE_POST_OP_CASE(Sigmoid)
    FERRITE_POST_OP_CASE(Tanh)
    FERRITE_POST_OP_CASE(Silu)
    FERRITE_POST_OP_CASE(GeluErf)
    FERRITE_POST_OP_CASE(GeluTanh)
    FERRITE_POST_OP_CASE(Linear)
    FERRITE_POST_OP_CASE(Add)
    FERRITE_POST_OP_CASE(Sub)
    FERRITE_POST_OP_CASE(Mul)
    FERRITE_POST_OP_CASE(Div)
    FERRITE_POST_OP_CASE(Max)
    FERRITE_POST_OP_CASE(Min)
#undef FERRITE_POST_OP_CASE
  }
  return f(PostOpKindC<PostOpKind::Relu>{});  // not reached: the switch names every kind
}

// One post-op applied to y (t: a binary post-op's operand).
template <class B, class V = typename B::V>
V post_op(B& b, const PostOp& p, V y, V t) {
  return with_post_op_kind(p.kind,
                           [&](auto k) { return post_op_k<decltype(k)::value>(b, p, y, t); });
}
