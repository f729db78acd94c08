#include "compiler/lower/fused_attention.h"

#include "compiler/graph/ferrite_ops.h"
#include "compiler/plan/externs/attention_call.h"

namespace ferrite {
namespace {

bool f32_of_rank(const TensorBoxPtr& t, size_t rank) {
  return t && t->dtype == DType::F32 && t->size.size() == rank;
}

// q [B, H, S, D], kt [B, H, D, T], v [B, H, T, Dv], nothing empty, and the mask (if any)
// float32 broadcasting to [B, H, S, T] (each dim 1 or that size).
bool extern_takes(const LowerCtx& c) {
  const TensorBoxPtr &q = c.input(0), &kt = c.input(1), &v = c.input(2);
  if (!f32_of_rank(q, 4) || !f32_of_rank(kt, 4) || !f32_of_rank(v, 4)) return false;
  const std::vector<int64_t>&qs = q->size, &ks = kt->size, &vs = v->size;
  if (ks[0] != qs[0] || vs[0] != qs[0] || ks[1] != qs[1] || vs[1] != qs[1] || ks[2] != qs[3] ||
      vs[2] != ks[3])
    return false;
  for (int64_t d : {qs[0], qs[1], qs[2], qs[3], ks[3], vs[3]})
    if (d <= 0) return false;
  if (!c.has(3)) return true;
  const TensorBoxPtr& m = c.input(3);
  if (m->dtype != DType::F32 || m->size.empty() || m->size.size() > 4) return false;
  const std::vector<int64_t> full{qs[0], qs[1], qs[2], ks[3]};
  const size_t lead = 4 - m->size.size();
  for (size_t d = 0; d < m->size.size(); ++d)
    if (m->size[d] != 1 && m->size[d] != full[lead + d]) return false;
  return true;
}

std::vector<TensorBoxPtr> lower_ferrite_attention(LowerCtx& c) {
  if (c.in.size() < 3 || !c.has(0) || !c.has(1) || !c.has(2))
    c.error("expects inputs q, kt, v and an optional mask");
  if (!extern_takes(c)) {
    auto it = c.node.attrs.find(kUnfusedAttr);
    if (it == c.node.attrs.end() || it->second.kind != AttrKind::Graph || !it->second.g)
      c.error("operands the Attention extern does not take, and no ", kUnfusedAttr,
              " subgraph to compute them with");
    std::vector<TensorBoxPtr> args;
    for (size_t i = 0; i < c.in.size(); ++i)
      if (c.has(i)) args.push_back(c.input(i));
    std::vector<TensorBoxPtr> out = c.gl.lower_subgraph(*it->second.g, args, c.node);
    if (out.size() != 1) c.error(kUnfusedAttr, " must have one output");
    return out;
  }
  FusedAttention f;
  f.q = c.input(0);
  f.k = permute_view(c.input(1), {0, 1, 3, 2});
  f.v = c.input(2);
  f.scale = c.node.attr_float("scale", 1.0);
  f.empty_rows_nan = true;
  if (c.has(3)) {
    std::vector<int64_t> size = c.input(3)->size;
    size.insert(size.begin(), 4 - size.size(), 1);
    std::optional<std::vector<Index>> sym = c.input(3)->sym;
    if (sym) sym->insert(sym->begin(), 4 - sym->size(), ix_const(1));
    f.bias = reshape_view_sym(c.input(3), size, sym);
  }
  return {fused_attention(c, f, false)};
}

}  // namespace

namespace {

// The scores' sizes [B, H, S, T] over the symbols, when the call holds for every value of
// them: q [B, H, S, D], k [B, H, T, D], v [B, H, T, Dv] of those same formulas, no
// attribute holding a size (a causal offset, key lengths), sinks none.
std::optional<std::vector<Index>> scores_sym(const LowerCtx& c, const FusedAttention& f) {
  if (!c.gl.symbolic() || !f.q->sym || !f.k->sym || !f.v->sym) return std::nullopt;
  if (f.causal_offset != 0 || f.offset_from_lengths || f.key_lengths || f.sinks)
    not_symbolic(c.origin(), ": attention with a causal offset, key lengths or sinks");
  const std::vector<Index>&q = *f.q->sym, &k = *f.k->sym, &v = *f.v->sym;
  auto same = [](const Index& a, const Index& b) {
    return sym_equal(sym_simplify(a), sym_simplify(b));
  };
  if (!same(k[0], q[0]) || !same(v[0], q[0]) || !same(k[1], q[1]) || !same(v[1], q[1]) ||
      !same(k[3], q[3]) || !same(v[2], k[2]))
    not_symbolic(c.origin(), ": attention operands whose dims may differ at other sizes");
  return std::vector<Index>{q[0], q[1], q[2], k[2]};
}

}  // namespace

TensorBoxPtr fused_attention(const LowerCtx& c, const FusedAttention& f, bool heads_last) {
  const int64_t batch = f.q->size[0], heads = f.q->size[1], s_len = f.q->size[2];
  const int64_t t_len = f.k->size[2], dv = f.v->size[3];
  const std::optional<std::vector<Index>> full_sym = scores_sym(c, f);
  ExternNode e;
  e.symbolic = full_sym.has_value();
  AttentionCall call;
  call.scale = f.scale;
  call.softcap = f.softcap;
  call.causal = f.causal;
  call.causal_offset = f.causal_offset;
  call.offset_from_lengths = f.offset_from_lengths;
  call.left_window = f.left_window;
  call.right_window = f.right_window;
  call.empty_rows_nan = f.empty_rows_nan;
  call.mask = f.bias != nullptr;
  call.key_lengths = f.key_lengths != nullptr;
  call.sinks = f.sinks != nullptr;
  encode_extern(call, &e);
  e.origin = c.origin();
  for (const TensorBoxPtr& t : {f.q, f.k, f.v}) e.inputs.push_back(c.gl.extern_operand(t));
  if (f.bias) {
    const std::vector<int64_t> full{batch, heads, s_len, t_len};
    if (f.bias->size.size() != 4) c.error("attention bias must have rank 4");
    for (size_t d = 0; d < 4; ++d)
      if (f.bias->size[d] != 1 && f.bias->size[d] != full[d])
        c.error("attention bias dim ", d, " is ", f.bias->size[d], " where the scores have ",
                full[d]);
    // Realized as it is, then read through zero strides along its broadcast dims.
    const TensorBoxPtr realized = c.gl.realize_strided(f.bias);
    std::optional<std::vector<Index>> bias_sym;
    if (full_sym && realized->sym) {
      bias_sym = broadcast_sym({*realized->sym, *full_sym});
      if (!bias_sym || !sym_equal((*bias_sym)[0], (*full_sym)[0]) ||
          !sym_equal((*bias_sym)[1], (*full_sym)[1]) ||
          !sym_equal((*bias_sym)[2], sym_simplify((*full_sym)[2])) ||
          !sym_equal((*bias_sym)[3], sym_simplify((*full_sym)[3])))
        not_symbolic(c.origin(), ": an attention mask that may not broadcast at other sizes");
      bias_sym = full_sym;
    }
    e.inputs.push_back(c.gl.extern_operand(expand_view_sym(realized, full, bias_sym)));
  }
  if (f.key_lengths) {
    if (f.key_lengths->dtype != DType::I64 || f.key_lengths->size != std::vector<int64_t>{batch})
      c.error("attention key lengths must be int64 [", batch, "]");
    e.inputs.push_back(c.gl.extern_operand(f.key_lengths));
  }
  if (f.sinks) {
    if (f.sinks->dtype != DType::F32 || f.sinks->size != std::vector<int64_t>{heads})
      c.error("attention sinks must be float32 [", heads, "]");
    e.inputs.push_back(c.gl.extern_operand(f.sinks));
  }
  const Index dv_sym = full_sym ? (*f.v->sym)[3] : nullptr;
  if (!heads_last) {
    Buffer* out = c.gl.new_buffer("", DType::F32, {batch, heads, s_len, dv}, BufferOrigin::Extern);
    if (full_sym)
      out->sym = std::vector<Index>{(*full_sym)[0], (*full_sym)[1], (*full_sym)[2], dv_sym};
    e.outputs.push_back(out);
    c.gl.add_extern(std::move(e));
    return make_buffer_box(out);
  }
  Buffer* out = c.gl.new_buffer("", DType::F32, {batch, s_len, heads, dv}, BufferOrigin::Extern);
  std::optional<std::vector<Index>> merged;
  if (full_sym) {
    out->sym = std::vector<Index>{(*full_sym)[0], (*full_sym)[2], (*full_sym)[1], dv_sym};
    merged = std::vector<Index>{(*full_sym)[0], (*full_sym)[2], sym_mul((*full_sym)[1], dv_sym)};
  }
  e.outputs.push_back(out);
  e.output_perms.push_back({0, 2, 1, 3});
  c.gl.add_extern(std::move(e));
  return reshape_view_sym(make_buffer_box(out), {batch, s_len, heads * dv}, merged);
}

void register_fused_attention_ops(LoweringTable& t) {
  t.add("ferrite.Attention", lower_ferrite_attention);
}

}  // namespace ferrite
