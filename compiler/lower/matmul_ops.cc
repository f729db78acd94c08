// MatMul and Gemm become "MatMul" extern calls (C[b,m,n] = alpha * sum_k A[b,m,k] B[b,k,n]
// over strided operands: transposes and batch broadcasts are strides, not copies). Gemm's
// beta*C is a pointwise epilogue.
#include "compiler/lower/lowering.h"
#include "compiler/lower/unroll_budget.h"
#include "compiler/plan/externs/matmul_call.h"

namespace ferrite {

namespace {

// alpha * a @ b in float64 (no extern has float64): a loop-IR sum over k per output point,
// a[..., m, k] * b[..., k, n] with numpy's batch broadcasting and 1-D operands.
TensorBoxPtr matmul_f64(const LowerCtx& c, TensorBoxPtr a, TensorBoxPtr b, double alpha) {
  if (a->size.empty() || b->size.empty()) c.error("operands must have rank >= 1");
  const bool squeeze_m = a->size.size() == 1, squeeze_n = b->size.size() == 1;
  if (squeeze_m) a = reshape_view(a, {1, a->size[0]});
  if (squeeze_n) b = reshape_view(b, {b->size[0], 1});
  const size_t ra = a->size.size(), rb = b->size.size();
  const int64_t m = a->size[ra - 2], k = a->size[ra - 1], n = b->size[rb - 1];
  if (b->size[rb - 2] != k) c.error("inner dimensions differ: ", k, " and ", b->size[rb - 2]);
  std::vector<int64_t> batch =
      broadcast_shapes(c, {std::vector<int64_t>(a->size.begin(), a->size.end() - 2),
                           std::vector<int64_t>(b->size.begin(), b->size.end() - 2)});
  const size_t nb = batch.size();
  std::vector<int64_t> out = batch;
  out.push_back(m);
  out.push_back(n);
  std::vector<int64_t> sa = batch, sb = batch;
  sa.insert(sa.end(), {m, k});
  sb.insert(sb.end(), {k, n});
  a = expand_view(a, sa);
  b = expand_view(b, sb);
  auto def = std::make_shared<ComputedDef>();
  def->is_reduction = true;
  def->reduce = ReduceKind::Sum;
  def->origin = c.origin();
  def->ranges = out;
  def->reduction_ranges = {k};
  def->rfn = [a, b, nb](KernelBuilder& kb, const std::vector<Index>& o,
                        const std::vector<Index>& r) {
    std::vector<Index> ia(o.begin(), o.begin() + static_cast<long>(nb)), ib = ia;
    ia.push_back(o[nb]);
    ia.push_back(r[0]);
    ib.push_back(r[0]);
    ib.push_back(o[nb + 1]);
    return kb.binary(Op::Mul, a->load(kb, ia), b->load(kb, ib));
  };
  if (alpha != 1.0) {
    def->post = [alpha](KernelBuilder& kb, V sum) {
      return kb.binary(Op::Mul, sum, kb.constant(sum.type, alpha));
    };
  }
  TensorBoxPtr y = make_reduction_box(DType::F64, def);
  c.gl.realize(y);  // read through views, as the extern's output is
  std::vector<int64_t> s = batch;
  if (!squeeze_m) s.push_back(m);
  if (!squeeze_n) s.push_back(n);
  return s == out ? y : reshape_view(y, s);
}

}  // namespace

TensorBoxPtr matmul_extern(const LowerCtx& c, TensorBoxPtr a, TensorBoxPtr b, double alpha,
                           const std::function<TensorBoxPtr(const TensorBoxPtr&)>& post) {
  if (a->dtype == DType::F64 && b->dtype == DType::F64) {
    const TensorBoxPtr y = matmul_f64(c, a, b, alpha);
    return post ? post(y) : y;
  }
  if (a->dtype != DType::F32 || b->dtype != DType::F32) {
    c.unsupported("MatMul on ", dtype_name(a->dtype), " x ", dtype_name(b->dtype),
                  " (float32 only)");
  }
  if (a->size.size() < 1 || b->size.size() < 1) c.error("operands must have rank >= 1");
  bool squeeze_m = a->size.size() == 1, squeeze_n = b->size.size() == 1;
  if (squeeze_m) a = reshape_view(a, {1, a->size[0]});
  if (squeeze_n) b = reshape_view(b, {b->size[0], 1});
  size_t ra = a->size.size(), rb = b->size.size();
  int64_t m = a->size[ra - 2], k = a->size[ra - 1], k2 = b->size[rb - 2], n = b->size[rb - 1];
  if (k != k2) {
    c.error("inner dimensions differ: ", TensorType{a->dtype, a->size, {}, true}.to_string(), " x ",
            TensorType{b->dtype, b->size, {}, true}.to_string());
  }
  std::vector<int64_t> ba(a->size.begin(), a->size.end() - 2),
      bb(b->size.begin(), b->size.end() - 2);
  std::vector<int64_t> batch = broadcast_shapes(c, {ba, bb});
  auto with = [&](std::vector<int64_t> tail) {
    std::vector<int64_t> s = batch;
    s.insert(s.end(), tail.begin(), tail.end());
    return s;
  };
  ExternNode e;
  encode_extern(MatMulCall{alpha}, &e);
  e.origin = c.origin();
  // Over the symbols: the batch dims broadcast as formulas, the inner dims the same one.
  std::optional<std::vector<Index>> sa, sb, so;
  if (c.gl.symbolic() && a->sym && b->sym && !squeeze_m && !squeeze_n) {
    const std::vector<Index>&as = *a->sym, &bs = *b->sym;
    if (!sym_equal(sym_simplify(as[ra - 1]), sym_simplify(bs[rb - 2])))
      not_symbolic(c.origin(), ": the inner dims may differ at other sizes");
    auto batch_sym = broadcast_sym({{as.begin(), as.end() - 2}, {bs.begin(), bs.end() - 2}});
    if (!batch_sym) not_symbolic(c.origin(), ": batch dims that may not broadcast");
    auto with_sym = [&](const Index& x, const Index& y) {
      std::vector<Index> s = *batch_sym;
      s.push_back(x);
      s.push_back(y);
      return s;
    };
    sa = with_sym(as[ra - 2], as[ra - 1]);
    sb = with_sym(bs[rb - 2], bs[rb - 1]);
    so = with_sym(as[ra - 2], bs[rb - 1]);
    e.symbolic = true;
  }
  e.inputs.push_back(c.gl.extern_operand(expand_view_sym(a, with({m, k}), sa)));
  e.inputs.push_back(c.gl.extern_operand(expand_view_sym(b, with({k, n}), sb)));
  Buffer* out = c.gl.new_buffer("", DType::F32, with({m, n}), BufferOrigin::Extern);
  out->sym = so;
  e.outputs.push_back(out);
  if (!squeeze_m && !squeeze_n)
    return add_extern_with_epilogue(c, std::move(e), make_buffer_box(out), post);
  // A squeezed result (1-D operands) is not the extern's shape: `post` stays pointwise.
  c.gl.add_extern(std::move(e));
  std::vector<int64_t> s = batch;
  if (!squeeze_m) s.push_back(m);
  if (!squeeze_n) s.push_back(n);
  const TensorBoxPtr r = reshape_view(make_buffer_box(out), s);
  return post ? post(r) : r;
}

namespace {

std::vector<TensorBoxPtr> lower_matmul(LowerCtx& c) {
  return {matmul_extern(c, c.input(0), c.input(1), 1.0, epilogue_nodes(c))};
}

std::vector<TensorBoxPtr> lower_gemm(LowerCtx& c) {
  TensorBoxPtr a = c.input(0), b = c.input(1);
  if (a->size.size() != 2 || b->size.size() != 2) c.error("A and B must be 2-D");
  if (c.node.attr_int("transA", 0)) a = permute_view(a, {1, 0});
  if (c.node.attr_int("transB", 0)) b = permute_view(b, {1, 0});
  if (c.has(2)) {
    // C broadcasts one way only, to the result [M, N]: it may not make the result larger.
    const std::vector<int64_t> out{a->size[0], b->size[1]}, &cs = c.input(2)->size;
    bool ok = cs.size() <= 2;
    for (size_t i = 0; ok && i < cs.size(); ++i) {
      const int64_t want = out[out.size() - cs.size() + i];
      ok = cs[i] == want || cs[i] == 1;
    }
    if (!ok)
      c.error("C ", TensorType{c.input(2)->dtype, cs, {}, true}.to_string(),
              " does not broadcast to the result [", out[0], ", ", out[1], "]");
    const TensorBoxPtr& ct = c.input(2);
    if (c.gl.symbolic() && ct->sym && a->sym && b->sym) {
      const std::vector<Index> want{(*a->sym)[0], (*b->sym)[1]};
      for (size_t i = 0; i < ct->sym->size(); ++i) {
        const Index& d = (*ct->sym)[i];
        if (!sym_is_const(d, 1) && !sym_equal(d, want[want.size() - ct->sym->size() + i]))
          not_symbolic(c.origin(), ": C may not broadcast at other sizes");
      }
    }
  }
  double alpha = c.node.attr_float("alpha", 1.0), beta = c.node.attr_float("beta", 1.0);
  // + beta * C, then the nodes the fusion pass recorded: the epilogue.
  TensorBoxPtr cterm;
  if (c.has(2) && beta != 0.0) {
    cterm = c.input(2);
    if (cterm->dtype != DType::F32) c.unsupported("Gemm on ", dtype_name(cterm->dtype));
    if (beta != 1.0) {
      cterm = make_pointwise(c, {cterm}, cterm->dtype,
                             [beta](KernelBuilder& bb, const std::vector<V>& v) {
                               return bb.binary(Op::Mul, v[0], bb.constant(v[0].type, beta));
                             });
    }
    cterm = c.gl.realize_strided(cterm);  // an operand of the epilogue, as a bias is
  }
  const EpiloguePost nodes = epilogue_nodes(c);
  return {matmul_extern(c, a, b, alpha, [&c, cterm, nodes](const TensorBoxPtr& y) {
    TensorBoxPtr r = y;
    if (cterm)
      r = make_pointwise(c, {y, cterm}, DType::F32, [](KernelBuilder& bb, const std::vector<V>& v) {
        return bb.binary(Op::Add, v[0], v[1]);
      });
    return nodes ? nodes(r) : r;
  })};
}

// Det: LU elimination with partial pivoting, unrolled over the n columns of [..., n, n]
// (charged to the unrolling budget). Step k picks the row p >= k with the largest |a[i, k]|
// (the first on ties), swaps it with row k while subtracting multiples of it from the rows
// below, and multiplies the running determinant by the pivot (negated when p != k). A zero
// pivot makes the determinant 0 and eliminates nothing.
std::vector<TensorBoxPtr> lower_det(LowerCtx& c) {
  TensorBoxPtr a = c.input(0);
  if (!dtype_is_float(a->dtype)) c.unsupported("Det on ", dtype_name(a->dtype));
  const size_t r = a->size.size();
  if (r < 2 || a->size[r - 1] != a->size[r - 2]) c.error("input must be [..., n, n]");
  const int64_t n = a->size[r - 1];
  int64_t nodes;
  if (__builtin_mul_overflow(n, int64_t{3}, &nodes)) nodes = INT64_MAX;
  charge_unrolled(c, nodes, str_cat("an elimination of ", n, " columns"));
  const std::vector<int64_t> batch(a->size.begin(), a->size.end() - 2);
  const std::string msg = c.origin() + ": internal: a pivot row out of range";
  TensorBoxPtr det = make_pointwise_box(
      a->dtype, batch,
      [](KernelBuilder& b, const std::vector<Index>&) { return b.constant(ScalarType::F32, 1); },
      c.origin());
  const size_t nb = batch.size();
  for (int64_t k = 0; k < n; ++k) {
    auto def = std::make_shared<ComputedDef>();  // the pivot's row, less k
    def->is_reduction = true;
    def->reduce = ReduceKind::ArgMax;
    def->origin = c.origin();
    def->ranges = batch;
    def->reduction_ranges = {n - k};
    def->rfn = [a, k](KernelBuilder& b, const std::vector<Index>& o, const std::vector<Index>& w) {
      std::vector<Index> at = o;
      at.push_back(ix_add(w[0], ix_const(k)));
      at.push_back(ix_const(k));
      return b.unary(Op::Abs, a->load(b, at));
    };
    TensorBoxPtr piv = make_reduction_box(DType::I64, def);
    c.gl.realize(piv);
    // Row p of a, and a's element (row, col), p read from piv.
    auto pivot_row = [piv, k, n, msg, nb](KernelBuilder& b, const std::vector<Index>& i) {
      const std::vector<Index> bi(i.begin(), i.begin() + static_cast<long>(nb));
      const V p = b.binary(Op::Add, piv->load(b, bi), b.constant_i64(k));
      return b.check_index(p, n, msg);
    };
    TensorBoxPtr next = make_pointwise_box(
        a->dtype, a->size,
        [a, k, nb, pivot_row](KernelBuilder& b, const std::vector<Index>& i) {
          const V p = pivot_row(b, i), row = b.index_value(i[nb]);
          const V kk = b.constant_i64(k);
          const V src =
              b.where(b.binary(Op::Eq, row, kk), p, b.where(b.binary(Op::Eq, row, p), kk, row));
          std::vector<Index> at(i.begin(), i.begin() + static_cast<long>(nb));
          auto elem = [&](V rr, const Index& col) {
            std::vector<Index> e = at;
            e.push_back(ix_value(rr.id));
            e.push_back(col);
            return a->load(b, e);
          };
          const V x = elem(src, i[nb + 1]);
          const V pivot = elem(p, ix_const(k)), zero = b.constant(x.type, 0);
          const V factor = b.where(b.binary(Op::Eq, pivot, zero), zero,
                                   b.binary(Op::Div, elem(src, ix_const(k)), pivot));
          const V eliminated = b.binary(Op::Sub, x, b.binary(Op::Mul, factor, elem(p, i[nb + 1])));
          return b.where(b.binary(Op::Gt, row, kk), eliminated, x);
        },
        c.origin());
    const TensorBoxPtr before = a;
    det = make_pointwise_box(
        a->dtype, batch,
        [before, det, k, pivot_row](KernelBuilder& b, const std::vector<Index>& i) {
          const V p = pivot_row(b, i);
          std::vector<Index> e = i;
          e.push_back(ix_value(p.id));
          e.push_back(ix_const(k));
          const V pivot = before->load(b, e);
          const V swapped = b.unary(Op::Not, b.binary(Op::Eq, p, b.constant_i64(k)));
          const V signed_pivot = b.where(swapped, b.unary(Op::Neg, pivot), pivot);
          return b.binary(Op::Mul, det->load(b, i), signed_pivot);
        },
        c.origin());
    c.gl.realize(next);
    c.gl.realize(det);
    a = next;
  }
  return {det};
}

}  // namespace

void register_matmul_ops(LoweringTable& t) {
  t.add("Det", lower_det);
  t.add("MatMul", lower_matmul);
  t.add("Gemm", lower_gemm);
}

}  // namespace ferrite
