// LinearAttention: attention through a recurrent state S [B, kv_heads, d_k, d_v] instead
// of a softmax over every key. Per token t, as the operator's reference:
//   gated rules:  S *= exp(decay_t)                 (per head, or per head and key dim)
//   delta rules:  v_t = beta_t * (v_t - S^T k_t)    (what S already holds of k_t removed)
//   S += k_t (outer) v_t
//   out_t = scale * q_t S                           (query head h reads kv head h / group)
// The recurrence is unrolled over the tokens (charged to the unrolling budget): each step a
// pointwise update of S, realized, and a reduction for the outputs.
#include <cmath>

#include "compiler/lower/lowering.h"
#include "compiler/lower/unroll_budget.h"

namespace ferrite {
namespace {

struct LinearAttention {
  TensorBoxPtr q, k, v, decay, beta;
  int64_t batch = 0, tokens = 0, q_heads = 0, kv_heads = 0, dk = 0, dv = 0;
  bool decay_per_dim = false;
  double scale = 1;

  // x[b, t, head * width + e] of a [B, T, heads * width] input.
  static V at(KernelBuilder& b, const TensorBoxPtr& x, const Index& bi, int64_t t,
              const Index& head, int64_t width, const Index& e) {
    return x->load(b, {bi, ix_const(t), ix_add(ix_mul(head, width), e)});
  }

  // S after token t's decay and write.
  TensorBoxPtr step_state(const LowerCtx& c, const TensorBoxPtr& s, int64_t t) const {
    const LinearAttention self = *this;
    TensorBoxPtr decayed = s;
    if (decay) {
      decayed = make_pointwise_box(
          DType::F32, s->size,
          [self, s, t](KernelBuilder& b, const std::vector<Index>& i) {
            const V g = self.decay_per_dim ? at(b, self.decay, i[0], t, i[1], self.dk, i[2])
                                           : at(b, self.decay, i[0], t, i[1], 1, ix_const(0));
            return b.binary(Op::Mul, s->load(b, i), b.unary(Op::Exp, g));
          },
          c.origin());
      c.gl.realize(decayed);
    }
    TensorBoxPtr retrieved;  // (S^T k_t)[b, h, m]
    if (beta) {
      auto def = std::make_shared<ComputedDef>();
      def->is_reduction = true;
      def->reduce = ReduceKind::Sum;
      def->origin = c.origin();
      def->ranges = {batch, kv_heads, dv};
      def->reduction_ranges = {dk};
      def->rfn = [self, decayed, t](KernelBuilder& b, const std::vector<Index>& o,
                                    const std::vector<Index>& r) {
        const V kd = at(b, self.k, o[0], t, o[1], self.dk, r[0]);
        return b.binary(Op::Mul, decayed->load(b, {o[0], o[1], r[0], o[2]}), kd);
      };
      retrieved = make_reduction_box(DType::F32, def);
      c.gl.realize(retrieved);
    }
    TensorBoxPtr next = make_pointwise_box(
        DType::F32, s->size,
        [self, decayed, retrieved, t](KernelBuilder& b, const std::vector<Index>& i) {
          V vt = at(b, self.v, i[0], t, i[1], self.dv, i[3]);
          if (retrieved) {
            const int64_t beta_heads = self.beta->size[2];
            const V bt =
                at(b, self.beta, i[0], t, beta_heads == 1 ? ix_const(0) : i[1], 1, ix_const(0));
            vt = b.binary(Op::Mul, bt,
                          b.binary(Op::Sub, vt, retrieved->load(b, {i[0], i[1], i[3]})));
          }
          const V kt = at(b, self.k, i[0], t, i[1], self.dk, i[2]);
          return b.binary(Op::Add, decayed->load(b, i), b.binary(Op::Mul, kt, vt));
        },
        c.origin());
    c.gl.realize(next);
    return next;
  }

  // out_t [B, 1, q_heads * d_v].
  TensorBoxPtr step_output(const LowerCtx& c, const TensorBoxPtr& s, int64_t t) const {
    const LinearAttention self = *this;
    const int64_t group = q_heads / kv_heads;
    auto def = std::make_shared<ComputedDef>();
    def->is_reduction = true;
    def->reduce = ReduceKind::Sum;
    def->origin = c.origin();
    def->ranges = {batch, q_heads, dv};
    def->reduction_ranges = {dk};
    def->rfn = [self, s, t, group](KernelBuilder& b, const std::vector<Index>& o,
                                   const std::vector<Index>& r) {
      const V qd = at(b, self.q, o[0], t, o[1], self.dk, r[0]);
      return b.binary(Op::Mul, qd, s->load(b, {o[0], ix_floordiv(o[1], group), r[0], o[2]}));
    };
    const double sc = scale;
    def->post = [sc](KernelBuilder& b, V x) {
      return b.binary(Op::Mul, x, b.constant(x.type, sc));
    };
    TensorBoxPtr out = make_reduction_box(DType::F32, def);
    c.gl.realize(out);
    return reshape_view(out, {batch, 1, q_heads * dv});
  }
};

std::vector<TensorBoxPtr> lower_linear_attention(LowerCtx& c) {
  LinearAttention la;
  la.q = c.input(0);
  la.k = c.input(1);
  la.v = c.input(2);
  for (const TensorBoxPtr* t : {&la.q, &la.k, &la.v}) {
    if ((*t)->dtype != DType::F32) c.unsupported("LinearAttention on ", dtype_name((*t)->dtype));
    if ((*t)->size.size() != 3) c.error("query, key and value must be [B, T, heads * size]");
  }
  const std::string rule = c.node.attr_string("update_rule", "gated_delta");
  if (rule != "linear" && rule != "gated" && rule != "delta" && rule != "gated_delta") {
    c.error("update_rule '", rule, "'");
  }
  const bool gated = rule == "gated" || rule == "gated_delta";
  const bool delta = rule == "delta" || rule == "gated_delta";
  la.q_heads = c.node.attr_int("q_num_heads", 0);
  la.kv_heads = c.node.attr_int("kv_num_heads", 0);
  if (la.q_heads <= 0 || la.kv_heads <= 0 || la.q_heads % la.kv_heads != 0) {
    c.error("q_num_heads (", la.q_heads, ") must be a positive multiple of kv_num_heads (",
            la.kv_heads, ")");
  }
  la.batch = la.q->size[0];
  la.tokens = la.q->size[1];
  if (la.q->size[2] % la.q_heads || la.v->size[2] % la.kv_heads) {
    c.error("hidden sizes must divide by the head counts");
  }
  la.dk = la.q->size[2] / la.q_heads;
  la.dv = la.v->size[2] / la.kv_heads;
  const std::vector<int64_t> kshape{la.batch, la.tokens, la.kv_heads * la.dk};
  if (la.k->size != kshape || la.v->size[0] != la.batch || la.v->size[1] != la.tokens) {
    c.error("key must be [", la.batch, ", ", la.tokens, ", ", la.kv_heads * la.dk, "] and value [",
            la.batch, ", ", la.tokens, ", kv_heads * d_v]");
  }
  if (gated != c.has(4))
    c.error("update_rule '", rule, "' ", gated ? "needs" : "forbids", " decay");
  if (delta != c.has(5)) c.error("update_rule '", rule, "' ", delta ? "needs" : "forbids", " beta");
  if (gated) {
    la.decay = c.input(4);
    const auto& d = la.decay->size;
    la.decay_per_dim = d.size() == 3 && d[2] == la.kv_heads * la.dk && la.dk != 1;
    if (la.decay->dtype != DType::F32 || d.size() != 3 || d[0] != la.batch || d[1] != la.tokens ||
        (d[2] != la.kv_heads && d[2] != la.kv_heads * la.dk)) {
      c.error("decay must be float32 [B, T, kv_heads] or [B, T, kv_heads * d_k]");
    }
  }
  if (delta) {
    la.beta = c.input(5);
    const auto& s = la.beta->size;
    if (la.beta->dtype != DType::F32 || s.size() != 3 || s[0] != la.batch || s[1] != la.tokens ||
        (s[2] != la.kv_heads && s[2] != 1)) {
      c.error("beta must be float32 [B, T, kv_heads or 1]");
    }
  }
  const std::vector<int64_t> state_shape{la.batch, la.kv_heads, la.dk, la.dv};
  TensorBoxPtr s;
  if (c.has(3)) {
    s = c.input(3);
    if (s->dtype != DType::F32 || s->size != state_shape) {
      c.error("past_state must be float32 [", la.batch, ", ", la.kv_heads, ", ", la.dk, ", ", la.dv,
              "]");
    }
  } else {
    s = make_pointwise_box(
        DType::F32, state_shape,
        [](KernelBuilder& b, const std::vector<Index>&) { return b.constant(ScalarType::F32, 0); },
        c.origin());
  }
  const double scale = c.node.attr_float("scale", 0.0);
  la.scale = scale == 0.0 ? 1.0 / std::sqrt(static_cast<double>(la.dk)) : scale;
  int64_t nodes;
  if (__builtin_mul_overflow(la.tokens, int64_t{4}, &nodes)) nodes = INT64_MAX;
  charge_unrolled(c, nodes, str_cat("a sequence of ", la.tokens, " tokens"));
  std::vector<TensorBoxPtr> outs;
  for (int64_t t = 0; t < la.tokens; ++t) {
    s = la.step_state(c, s, t);
    outs.push_back(la.step_output(c, s, t));
  }
  TensorBoxPtr y = outs.empty() ? make_pointwise_box(
                                      DType::F32, {la.batch, 0, la.q_heads * la.dv},
                                      [](KernelBuilder& b, const std::vector<Index>&) {
                                        return b.constant(ScalarType::F32, 0);
                                      },
                                      c.origin())
                                : concat_values(c.gl, outs, 1, c.origin());
  return {y, s};
}

}  // namespace

void register_linear_attention_ops(LoweringTable& t) {
  t.add("LinearAttention", lower_linear_attention);
}

}  // namespace ferrite
