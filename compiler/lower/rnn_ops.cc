// The recurrent ops LSTM, GRU and RNN, and com.microsoft's DynamicQuantizeLSTM (an LSTM of
// 8-bit weights: rnn_unroll.h) (float32; every attribute: direction, layout,
// activations with alpha/beta, clip, input_forget, linear_before_reset; optional B,
// sequence_lens, initial states and peepholes). Each is its cell — the gate math of one
// step — over the unrolling of rnn_unroll.h. Gate order in W, R and B is the spec's:
// LSTM i o f c (peepholes i o f), GRU z r h, RNN one gate.
#include "compiler/lower/rnn_unroll.h"

namespace ferrite {
namespace {

using Idx = std::vector<Index>;

V add(KernelBuilder& b, V x, V y) {
  return b.binary(Op::Add, x, y);
}
V mul(KernelBuilder& b, V x, V y) {
  return b.binary(Op::Mul, x, y);
}
V one_minus(KernelBuilder& b, V x) {
  return b.binary(Op::Sub, b.constant(x.type, 1), x);
}

// Whether output i exists and is read.
bool wanted(const LowerCtx& c, size_t i) {
  return i < c.node.outputs.size() && c.node.outputs[i] && c.gl.uses(c.node.outputs[i]) > 0;
}

TensorBoxPtr read_peepholes(const LowerCtx& c, const RnnSpec& s) {
  if (!c.has(7)) return nullptr;
  TensorBoxPtr p = c.input(7);
  if (p->dtype != DType::F32) c.unsupported("P of type ", dtype_name(p->dtype), " (float32 only)");
  if (p->size != std::vector<int64_t>{s.dirs, 3 * s.hidden}) {
    c.error("P has shape ", TensorType{p->dtype, p->size, {}, true}.to_string(), ", expected [",
            s.dirs, ", ", 3 * s.hidden, "]");
  }
  return p;
}

// For each direction d and its time steps t in the order it takes them, h = step(d, t, h)
// from the direction's initial state (null without one); the last h of each direction.
template <class Step>
std::vector<TensorBoxPtr> each_step(const RnnSpec& s, Step step) {
  std::vector<TensorBoxPtr> last_h;
  for (int d = 0; d < s.dirs; ++d) {
    TensorBoxPtr h = s.h0 ? rnn_direction(s.h0, d) : nullptr;
    for (int64_t k = 0; k < s.seq; ++k) h = step(d, s.backwards(d) ? s.seq - 1 - k : k, h);
    last_h.push_back(h);
  }
  return last_h;
}

// it = f(Xt·Wiᵀ + Ht-1·Riᵀ + Pi⊙Ct-1 + Wbi + Rbi)    ft = f(... Pf⊙Ct-1 ...), or 1 - it
// ct = g(Xt·Wcᵀ + Ht-1·Rcᵀ + Wbc + Rbc)              Ct = ft⊙Ct-1 + it⊙ct
// ot = f(Xt·Woᵀ + Ht-1·Roᵀ + Po⊙Ct + Wbo + Rbo)      Ht = ot⊙h(Ct)
std::vector<TensorBoxPtr> lower_lstm(LowerCtx& c) {
  RnnSpec spec = read_rnn_spec(c, 4, {"Sigmoid", "Tanh", "Tanh"});
  TensorBoxPtr c0 = read_rnn_state(c, spec, 6, "initial_c");
  TensorBoxPtr p = read_peepholes(c, spec);
  bool coupled = c.node.attr_int("input_forget", 0) != 0;
  RnnUnroll u(c, spec, wanted(c, 0));
  RnnTermsPtr T = u.terms();
  const RnnSpec& s = T->s;
  std::vector<TensorBoxPtr> last_h, last_c;
  for (int d = 0; d < s.dirs; ++d) {
    TensorBoxPtr h = s.h0 ? rnn_direction(s.h0, d) : nullptr;
    TensorBoxPtr cell = c0 ? rnn_direction(c0, d) : nullptr;
    for (int64_t k = 0; k < s.seq; ++k) {
      int64_t t = s.backwards(d) ? s.seq - 1 - k : k;
      TensorBoxPtr hr = u.recurrent(d, h, 0, 4);
      // Gate g's pre-activation, plus peephole `peep` times *state when there are both.
      auto pre = [T, p, d, t, hr](KernelBuilder& b, int g, const Idx& i, int peep, V* state) {
        V v = add(b, T->input_term(b, d, t, g, i, true), T->load_gate(b, hr, g, i));
        if (!p || !state) return v;
        V pk = p->load(b, {ix_const(d), ix_add(ix_const(peep * T->s.hidden), i[1])});
        return add(b, v, mul(b, pk, *state));
      };
      TensorBoxPtr prev_c = cell;
      TensorBoxPtr next_c = u.step_box([=](KernelBuilder& b, const Idx& i) {
        V cp = RnnTerms::load_state(b, prev_c, i);
        V* peep_on = prev_c ? &cp : nullptr;
        V ig = T->act(b, d, 0, pre(b, 0, i, 0, peep_on));
        V cg = T->act(b, d, 1, pre(b, 3, i, 0, nullptr));
        V next = mul(b, ig, cg);
        if (prev_c) {
          V fg = coupled ? one_minus(b, ig) : T->act(b, d, 0, pre(b, 2, i, 2, peep_on));
          next = add(b, mul(b, fg, cp), next);
        }
        return T->keep_in_sequence(b, t, i, next, prev_c);
      });
      c.gl.realize(next_c);
      TensorBoxPtr prev_h = h;
      TensorBoxPtr next_h = u.step_box([=](KernelBuilder& b, const Idx& i) {
        V cn = next_c->load(b, i);
        V og = T->act(b, d, 0, pre(b, 1, i, 1, &cn));
        return T->keep_in_sequence(b, t, i, mul(b, og, T->act(b, d, 2, cn)), prev_h);
      });
      h = u.realize_hidden(d, t, next_h);
      cell = next_c;
    }
    last_h.push_back(h);
    last_c.push_back(cell);
  }
  return {wanted(c, 0) ? u.y() : nullptr, wanted(c, 1) ? u.final_state(last_h) : nullptr,
          wanted(c, 2) ? u.final_state(last_c) : nullptr};
}

// zt = f(Xt·Wzᵀ + Ht-1·Rzᵀ + Wbz + Rbz)    rt = f(Xt·Wrᵀ + Ht-1·Rrᵀ + Wbr + Rbr)
// ht = g(Xt·Whᵀ + (rt⊙Ht-1)·Rhᵀ + Rbh + Wbh)        (linear_before_reset = 0)
// ht = g(Xt·Whᵀ + rt⊙(Ht-1·Rhᵀ + Rbh) + Wbh)        (linear_before_reset = 1)
// Ht = (1 - zt)⊙ht + zt⊙Ht-1
std::vector<TensorBoxPtr> lower_gru(LowerCtx& c) {
  RnnSpec spec = read_rnn_spec(c, 3, {"Sigmoid", "Tanh"});
  bool linear_before_reset = c.node.attr_int("linear_before_reset", 0) != 0;
  RnnUnroll u(c, spec, wanted(c, 0));
  RnnTermsPtr T = u.terms();
  auto step = [&](int d, int64_t t, TensorBoxPtr h) {
    // hzr: Ht-1·R[z r (h)]ᵀ; rh: (rt⊙Ht-1)·Rhᵀ when the reset comes first.
    TensorBoxPtr hzr = u.recurrent(d, h, 0, linear_before_reset ? 3 : 2), rh;
    auto gate = [T, d, t, hzr](KernelBuilder& b, int g, const Idx& i) {
      return T->act(b, d, 0,
                    add(b, T->input_term(b, d, t, g, i, true), T->load_gate(b, hzr, g, i)));
    };
    if (!linear_before_reset && h) {
      TensorBoxPtr prev = h;
      rh = u.recurrent(d, u.step_box([=](KernelBuilder& b, const Idx& i) {
        return mul(b, gate(b, 1, i), prev->load(b, i));
      }),
                       2, 1);
    }
    TensorBoxPtr prev_h = h;
    TensorBoxPtr next_h = u.step_box([=](KernelBuilder& b, const Idx& i) {
      V z = gate(b, 0, i);
      V cand;
      if (linear_before_reset) {
        V lin = add(b, T->load_gate(b, hzr, 2, i), T->recurrent_bias(b, d, 2, i));
        cand = add(b, T->input_term(b, d, t, 2, i, false), mul(b, gate(b, 1, i), lin));
      } else {
        cand = add(b, T->input_term(b, d, t, 2, i, true), T->load_gate(b, rh, 0, i));
      }
      V next = mul(b, one_minus(b, z), T->act(b, d, 1, cand));
      if (prev_h) next = add(b, next, mul(b, z, prev_h->load(b, i)));
      return T->keep_in_sequence(b, t, i, next, prev_h);
    });
    return u.realize_hidden(d, t, next_h);
  };
  const std::vector<TensorBoxPtr> last_h = each_step(T->s, step);
  return {wanted(c, 0) ? u.y() : nullptr, wanted(c, 1) ? u.final_state(last_h) : nullptr};
}

// Ht = f(Xt·Wiᵀ + Ht-1·Riᵀ + Wbi + Rbi)
std::vector<TensorBoxPtr> lower_rnn(LowerCtx& c) {
  RnnSpec spec = read_rnn_spec(c, 1, {"Tanh"});
  RnnUnroll u(c, spec, wanted(c, 0));
  RnnTermsPtr T = u.terms();
  const std::vector<TensorBoxPtr> last_h = each_step(T->s, [&](int d, int64_t t, TensorBoxPtr h) {
    TensorBoxPtr hr = u.recurrent(d, h, 0, 1), prev_h = h;
    TensorBoxPtr next_h = u.step_box([=](KernelBuilder& b, const Idx& i) {
      V v = add(b, T->input_term(b, d, t, 0, i, true), T->load_gate(b, hr, 0, i));
      return T->keep_in_sequence(b, t, i, T->act(b, d, 0, v), prev_h);
    });
    return u.realize_hidden(d, t, next_h);
  });
  return {wanted(c, 0) ? u.y() : nullptr, wanted(c, 1) ? u.final_state(last_h) : nullptr};
}

}  // namespace

void register_rnn_ops(LoweringTable& t) {
  t.add("LSTM", lower_lstm);
  t.add(std::string(kMicrosoftDomain) + ".DynamicQuantizeLSTM", lower_lstm);
  t.add("GRU", lower_gru);
  t.add("RNN", lower_rnn);
}

}  // namespace ferrite
