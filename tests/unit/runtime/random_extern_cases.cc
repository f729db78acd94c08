#include "tests/unit/runtime/random_extern_cases.h"

#include <optional>

#include "compiler/plan/externs/conv_call.h"
#include "compiler/plan/externs/matmul_integer_call.h"

namespace ferrite {
namespace random_externs {
namespace {

std::optional<ReduceKind> any_reduction(Draw& d, bool with_prod) {
  switch (d.pick(0, with_prod ? 4 : 3)) {
    case 0:
      return ReduceKind::Sum;
    case 1:
      return ReduceKind::Max;
    case 2:
      return ReduceKind::Min;
    case 3:
      return std::nullopt;
    default:
      return ReduceKind::Prod;
  }
}

Dims random_dims(Draw& d, size_t rank, int64_t hi) {
  Dims dims;
  for (size_t i = 0; i < rank; ++i) dims.push_back(d.pick(1, hi));
  return dims;
}

std::string dims_of(const Operand& o) {
  return dims_text(o.ref.shape);
}

}  // namespace

Case random_matmul(Draw& d) {
  Case c;
  const int64_t m = d.pick(1, 20), k = d.pick(1, 24), n = d.pick(1, 20);
  const Dims batch = random_dims(d, static_cast<size_t>(d.pick(0, 2)), 3);
  auto with = [&](int64_t rows, int64_t cols) {
    Dims s = batch;
    s.push_back(rows);
    s.push_back(cols);
    return s;
  };
  // A and B may broadcast batch dims (stride 0); C never does.
  auto matrix = [&](int64_t rows, int64_t cols) {
    const Dims shape = with(rows, cols);
    std::vector<bool> broadcast(shape.size(), false);
    for (size_t i = 0; i < batch.size(); ++i) broadcast[i] = d.chance(3);
    return make_operand(DType::F32, shape, d.order(shape.size()), broadcast, d.pick(0, 3),
                        [&](int64_t) { return d.real(-1, 1); });
  };
  c.ins.push_back(matrix(m, k));
  c.ins.push_back(matrix(k, n));
  c.outs.push_back(output_operand(d, DType::F32, with(m, n)));
  MatMulCall attrs;
  if (d.chance(4)) attrs.alpha = d.real(-2, 2);
  encode_extern(attrs, &c.call);
  set_operands(&c);
  add_post_ops(d, &c, with(m, n), batch.size() + 1);
  if (d.chance(2)) c.constants = {1};
  c.tol = 2 * sum_tol(k);
  c.text = str_cat("MatMul ", dims_of(c.ins[0]), " x ", dims_of(c.ins[1]), " alpha ", attrs.alpha);
  return c;
}

Case random_conv(Draw& d, bool transpose) {
  conv_geometry::Geometry g = conv_geometry::random_geometry(d.rng(), transpose);
  if (!transpose && d.chance(6)) {  // sizes for the GEMM and Winograd paths
    g = conv_geometry::conv2d(d.pick(1, 2), 8 * d.pick(1, 2), 8 * d.pick(1, 2), 1,
                              {d.pick(4, 10), d.pick(4, 10)}, 3, 1, 1, 1);
    g.bias = d.chance(2);
  }
  Case c;
  c.ins.push_back(random_operand(d, DType::F32, g.x_dims(), -1, 1));
  c.ins.push_back(random_operand(d, DType::F32, g.w_dims(), -1, 1));
  if (g.bias) c.ins.push_back(random_operand(d, DType::F32, {g.m}, -1, 1));
  c.outs.push_back(output_operand(d, DType::F32, g.y_dims()));
  encode_extern(g.attrs(), &c.call);
  set_operands(&c);
  add_post_ops(d, &c, g.y_dims(), 1);
  if (d.chance(2)) {
    c.constants = {1};
    if (g.bias) c.constants.push_back(2);
  }
  c.tol = 2 * g.tol();
  c.text = g.text();
  return c;
}

Case random_scatter_elements(Draw& d) {
  Case c;
  const DType t = any_dtype(d);
  const size_t rank = static_cast<size_t>(d.pick(1, 3));
  const Dims data = random_dims(d, rank, 6);
  const size_t axis = static_cast<size_t>(d.pick(0, static_cast<int64_t>(rank) - 1));
  Dims upd;
  for (size_t i = 0; i < rank; ++i) upd.push_back(i == axis ? d.pick(1, 6) : d.pick(1, data[i]));
  c.ins.push_back(random_operand(d, t, data, -4, 4));
  c.ins.push_back(index_operand(d, upd, data[axis], true));
  c.ins.push_back(random_operand(d, t, upd, -4, 4));
  c.outs.push_back(output_operand(d, t, data, d.chance(2)));
  const ScatterCall attrs{false, static_cast<int64_t>(axis), any_reduction(d, true)};
  encode_extern(attrs, &c.call);
  set_operands(&c);
  c.text = str_cat("ScatterElements ", dtype_name(t), " data ", dims_text(data), " updates ",
                   dims_text(upd), " axis ", axis);
  return c;
}

Case random_scatter_nd(Draw& d) {
  Case c;
  const DType t = any_dtype(d);
  const Dims data = random_dims(d, static_cast<size_t>(d.pick(1, 3)), 5);
  const size_t k = static_cast<size_t>(d.pick(1, static_cast<int64_t>(data.size())));
  Dims ind = random_dims(d, static_cast<size_t>(d.pick(0, 2)), 4), upd = ind;
  ind.push_back(static_cast<int64_t>(k));
  upd.insert(upd.end(), data.begin() + static_cast<int64_t>(k), data.end());
  c.ins.push_back(random_operand(d, t, data, -4, 4));
  std::vector<int> order(ind.size());
  std::iota(order.begin(), order.end(), 0);
  // Component j of each index tuple indexes data dim j; one in 40 tuples strays.
  c.ins.push_back(
      make_operand(d.chance(2) ? DType::I32 : DType::I64, ind, order, {}, 0, [&](int64_t i) {
        const int64_t n = data[static_cast<size_t>(i) % k];
        if (d.chance(40 * static_cast<int>(k))) return double(n);
        return static_cast<double>(d.pick(-n, n - 1));
      }));
  c.ins.push_back(random_operand(d, t, upd, -4, 4));
  c.outs.push_back(output_operand(d, t, data, d.chance(2)));
  encode_extern(ScatterCall{true, 0, any_reduction(d, true)}, &c.call);
  set_operands(&c);
  c.text =
      str_cat("ScatterND ", dtype_name(t), " data ", dims_text(data), " indices ", dims_text(ind));
  return c;
}

Case random_segment_reduce(Draw& d) {
  Case c;
  const DType t = d.chance(4) ? any_dtype(d) : DType::F32;
  const int64_t nodes = d.pick(1, 10), features = d.pick(1, 40), rows = d.pick(1, 10),
                edges = d.pick(0, 40);
  SegmentReduceCall attrs;
  attrs.rows = rows;
  attrs.weighted = d.chance(2);
  const std::optional<ReduceKind> kind = any_reduction(d, false);
  attrs.reduction = kind ? *kind : ReduceKind::Sum;
  c.ins.push_back(random_operand(d, t, {nodes, features}, -2, 2));
  c.ins.push_back(index_operand(d, {edges}, nodes, true));
  c.ins.push_back(index_operand(d, {edges}, rows, true));
  if (attrs.weighted) c.ins.push_back(random_operand(d, t, {edges}, -2, 2));
  if (d.chance(2)) c.ins.push_back(random_operand(d, t, {rows, features}, -2, 2));
  c.outs.push_back(output_operand(d, t, {rows, features}, d.chance(2)));
  encode_extern(attrs, &c.call);
  set_operands(&c);
  if (t == DType::F32) add_post_ops(d, &c, {rows, features}, 1);
  // The sums are exact by contract (edge order); post-ops may be approximated.
  c.tol = c.call.epilogue.empty() ? 0 : 3e-5;
  c.text =
      str_cat("SegmentReduce ", dtype_name(t), " x [", nodes, ",", features, "] edges ", edges,
              " rows ", rows, " ", reduce_name(attrs.reduction), attrs.weighted ? " weighted" : "");
  return c;
}

Case random_topk(Draw& d) {
  Case c;
  const DType t = any_dtype(d);
  const Dims x = random_dims(d, static_cast<size_t>(d.pick(1, 3)), 8);
  TopKCall attrs;
  attrs.axis = d.pick(0, static_cast<int64_t>(x.size()) - 1);
  attrs.k = d.pick(0, x[static_cast<size_t>(attrs.axis)]);
  attrs.largest = d.chance(2);
  Dims y = x;
  y[static_cast<size_t>(attrs.axis)] = attrs.k;
  c.ins.push_back(random_operand(d, t, x, -3, 3));
  c.outs.push_back(output_operand(d, t, y, d.chance(2)));
  c.outs.push_back(output_operand(d, DType::I64, y, d.chance(2)));
  encode_extern(attrs, &c.call);
  set_operands(&c);
  c.text = str_cat("TopK ", dtype_name(t), " ", dims_text(x), " axis ", attrs.axis, " k ", attrs.k,
                   attrs.largest ? " largest" : " smallest");
  return c;
}

namespace {

// A uint8 or int8 value: any, or (extreme) one end of the range.
double int8_value(Draw& d, DType t, bool extreme) {
  const int64_t lo = t == DType::U8 ? 0 : -128, hi = t == DType::U8 ? 255 : 127;
  return static_cast<double>(extreme ? (d.chance(2) ? lo : hi) : d.pick(lo, hi));
}

}  // namespace

Case random_matmul_integer(Draw& d) {
  Case c;
  // Past K = 33,000 the int32 sums may wrap (the reference's do too, modulo 2^32).
  const bool long_k = d.chance(20);
  const int64_t m = d.pick(1, long_k ? 3 : 20), k = long_k ? d.pick(33000, 40000) : d.pick(1, 70),
                n = d.pick(1, long_k ? 3 : 20);
  const Dims batch = random_dims(d, static_cast<size_t>(long_k ? 0 : d.pick(0, 2)), 3);
  auto with = [&](int64_t rows, int64_t cols) {
    Dims s = batch;
    s.push_back(rows);
    s.push_back(cols);
    return s;
  };
  const DType ta = d.chance(2) ? DType::U8 : DType::I8, tb = d.chance(2) ? DType::U8 : DType::I8;
  const bool extreme = d.chance(4);  // every value at the end of its range
  auto value = [&](DType t) { return int8_value(d, t, extreme); };
  auto matrix = [&](DType t, int64_t rows, int64_t cols) {
    const Dims shape = with(rows, cols);
    std::vector<bool> broadcast(shape.size(), false);
    for (size_t i = 0; i < batch.size(); ++i) broadcast[i] = d.chance(3);
    return make_operand(t, shape, d.order(shape.size()), broadcast, d.pick(0, 3),
                        [&](int64_t) { return value(t); });
  };
  c.ins.push_back(matrix(ta, m, k));
  c.ins.push_back(matrix(tb, k, n));
  c.ins.push_back(make_operand(ta, {1}, {0}, {}, d.pick(0, 2), [&](int64_t) { return value(ta); }));
  const bool shared = d.chance(2);     // one zero point for every column (stride 0)
  const bool symmetric = d.chance(3);  // B's zero points 0: what oneDNN takes (as constants)
  c.ins.push_back(make_operand(tb, {n}, {0}, {shared}, d.pick(0, 2),
                               [&](int64_t) { return symmetric ? 0.0 : value(tb); }));
  c.outs.push_back(output_operand(d, DType::I32, with(m, n)));
  encode_extern(MatMulIntegerCall{ta == DType::I8, tb == DType::I8}, &c.call);
  set_operands(&c);
  if (d.chance(2)) c.constants = {1, 3};
  c.text = str_cat("MatMulInteger ", dtype_name(ta), dims_of(c.ins[0]), " x ", dtype_name(tb),
                   dims_of(c.ins[1]), shared ? " shared" : " per-column", symmetric ? " zero" : "",
                   " zero points");
  return c;
}

Case random_matmul_nbits(Draw& d) {
  Case c;
  MatMulNBitsCall attrs;
  attrs.bits = int64_t{1} << d.pick(1, 3);
  attrs.block_size = int64_t{16} << d.pick(0, 2);
  // Up to kNBitsDirectRows (96) rows per batch item take the portable direct kernel, more
  // the GEMM's decoding packer.
  const int64_t m = d.chance(4) ? d.pick(97, 120) : d.pick(1, 12), k = d.pick(1, 200),
                n = d.pick(1, 40);
  const int64_t blocks = (k - 1) / attrs.block_size + 1, blob = attrs.blob_bytes();
  const Dims batch = random_dims(d, static_cast<size_t>(d.pick(0, 2)), 3);
  Dims a = batch, y = batch;
  a.insert(a.end(), {m, k});
  y.insert(y.end(), {m, n});
  const int64_t top = (int64_t{1} << attrs.bits) - 1;
  auto table = [&](DType t, int64_t cols, auto value) {
    return make_operand(t, {n, cols}, {0, 1}, {}, d.pick(0, 3), value);
  };
  c.ins.push_back(random_operand(d, DType::F32, a, -1, 1));
  if (d.chance(8)) {  // A's first element infinite or NaN: the exact path
    const float special[] = {INFINITY, -INFINITY, NAN};
    reinterpret_cast<float*>(c.ins[0].data())[c.ins[0].ref.offset] = special[d.pick(0, 2)];
  }
  c.ins.push_back(table(DType::U8, blocks * blob, [&](int64_t) { return d.pick(0, 255); }));
  const double s = 1.0 / static_cast<double>(top);
  c.ins.push_back(table(DType::F32, blocks, [&](int64_t) { return d.real(-s, s); }));
  const int zp = static_cast<int>(d.pick(0, 2));  // none, uint8 or float32
  if (zp == 1) c.ins.push_back(table(DType::U8, blocks, [&](int64_t) { return d.pick(0, top); }));
  if (zp == 2)
    c.ins.push_back(
        table(DType::F32, blocks, [&](int64_t) { return d.real(0, static_cast<double>(top)); }));
  c.outs.push_back(output_operand(d, DType::F32, y));
  encode_extern(attrs, &c.call);
  set_operands(&c);
  if (d.chance(2)) c.constants = zp ? std::vector<size_t>{1, 2, 3} : std::vector<size_t>{1, 2};
  c.tol = 2 * sum_tol(k);
  c.text = str_cat("MatMulNBits ", attrs.bits, " bits, blocks of ", attrs.block_size, ", A",
                   dims_text(a), " N ", n,
                   zp == 0   ? ""
                   : zp == 1 ? " uint8"
                             : " float",
                   zp ? " zero points" : "");
  return c;
}

Case random_bitcast(Draw& d) {
  Case c;
  // Pairs of one size, a float type on one side (the lowering's integer pairs are kernels).
  const DType pairs[][2] = {
      {DType::F32, DType::I32},  {DType::F32, DType::U32},     {DType::F64, DType::I64},
      {DType::F64, DType::U64},  {DType::F16, DType::I16},     {DType::BF16, DType::U16},
      {DType::F16, DType::BF16}, {DType::F8E4M3FN, DType::U8}, {DType::F8E5M2, DType::I8}};
  const auto& pair = pairs[d.pick(0, 8)];
  const bool flip = d.chance(2);
  const DType from = pair[flip ? 1 : 0], to = pair[flip ? 0 : 1];
  const Dims shape = random_dims(d, static_cast<size_t>(d.pick(0, 3)), 6);
  c.ins.push_back(random_operand(d, from, shape, -100, 100));
  c.outs.push_back(output_operand(d, to, shape));
  encode_extern(BitCastCall{}, &c.call);
  set_operands(&c);
  c.text = str_cat("BitCast ", dtype_name(from), dims_text(shape), " to ", dtype_name(to));
  return c;
}

Case random_conv_integer(Draw& d) {
  conv_geometry::Geometry g = conv_geometry::random_geometry(d.rng(), false);
  if (d.chance(3)) {  // sizes oneDNN's int8 kernels block for (channels of 16, 3x3, pads)
    const int64_t ch = 16 * d.pick(1, 2);
    const bool depthwise = d.chance(3);
    g = conv_geometry::conv2d(d.pick(1, 2), ch, depthwise ? ch : 16 * d.pick(1, 2),
                              depthwise ? ch : (d.chance(3) ? 2 : 1),
                              {d.pick(4, 12), d.pick(4, 12)}, 3, d.pick(1, 2), 1, d.pick(0, 1));
  } else if (d.chance(2)) {  // the portable direct paths: 1x1 (widened per chunk of points),
    // odd channel counts, depthwise windows past one group of taps in registers (5x5)
    const int64_t c = d.pick(4, 40);
    const bool depthwise = d.chance(3);
    const int64_t kernel = depthwise ? 5 : (d.chance(2) ? 1 : 3);
    g = conv_geometry::conv2d(d.pick(1, 2), c, depthwise ? c : d.pick(1, 40), depthwise ? c : 1,
                              {d.pick(3, 10), d.pick(3, 10)}, kernel, d.pick(1, 2), d.pick(1, 2),
                              d.pick(0, kernel / 2 + 1));
  }
  g.bias = false;
  Case c;
  const DType tx = d.chance(2) ? DType::U8 : DType::I8, tw = d.chance(2) ? DType::U8 : DType::I8;
  const bool extreme = d.chance(4);  // every value at the end of its range
  auto value = [&](DType t) { return int8_value(d, t, extreme); };
  auto operand = [&](DType t, const Dims& shape) {
    return make_operand(t, shape, d.order(shape.size()), {}, d.pick(0, 3),
                        [&](int64_t) { return value(t); });
  };
  c.ins.push_back(operand(tx, g.x_dims()));
  c.ins.push_back(operand(tw, g.w_dims()));
  c.ins.push_back(make_operand(tx, {1}, {0}, {}, d.pick(0, 2), [&](int64_t) { return value(tx); }));
  const bool shared = d.chance(2);     // one zero point for every channel (stride 0)
  const bool symmetric = d.chance(2);  // W's zero points 0: what oneDNN takes (as constants)
  c.ins.push_back(make_operand(tw, {g.m}, {0}, {shared}, d.pick(0, 2),
                               [&](int64_t) { return symmetric ? 0.0 : value(tw); }));
  // Requantized into 8 bits (QLinearConv): the bias then stays small (oneDNN adds it in
  // float32, exact below 2^24), multipliers of 1/2 or 1/4 at times (ties, which round before
  // the zero point is added), Y's range narrowed at times (an absorbed Clip).
  ConvIntegerCall attrs{g.attrs(), tx == DType::I8, tw == DType::I8};
  attrs.requantize = d.chance(2);
  const bool bias = attrs.requantize || d.chance(2);  // int32; near its ends at times: wraps
  if (bias) {
    c.ins.push_back(make_operand(DType::I32, {g.m}, {0}, {}, d.pick(0, 2), [&](int64_t) {
      const int64_t edge = !attrs.requantize && d.chance(3)
                               ? (int64_t{1} << 31) - 1 - d.pick(0, 1000)
                               : d.pick(0, 1000);
      return static_cast<double>(d.chance(2) ? edge : -edge);
    }));
  }
  DType ty = DType::I32;
  if (attrs.requantize) {
    ty = d.chance(2) ? DType::U8 : DType::I8;
    attrs.y_signed = ty == DType::I8;
    const double tie = d.chance(2) ? 0.5 : 0.25;
    const bool ties = d.chance(3), one = d.chance(3);  // one multiplier for every channel
    c.ins.push_back(make_operand(DType::F32, {g.m}, {0}, {one}, d.pick(0, 2),
                                 [&](int64_t) { return ties ? tie : d.real(1e-4, 2e-2); }));
    c.ins.push_back(make_operand(ty, {1}, {0}, {}, d.pick(0, 2), [&](int64_t) {
      return static_cast<double>(attrs.y_signed ? d.pick(-20, 20) : d.pick(0, 255));
    }));
    attrs.y_lo = attrs.y_signed ? -128 : 0;
    attrs.y_hi = attrs.y_signed ? 127 : 255;
    if (d.chance(3)) attrs.y_lo = d.pick(attrs.y_lo, attrs.y_lo + 100);
    if (d.chance(3)) attrs.y_hi = d.pick(attrs.y_hi - 100, attrs.y_hi);
  }
  c.outs.push_back(output_operand(d, ty, g.y_dims()));
  encode_extern(attrs, &c.call);
  set_operands(&c);
  if (d.chance(2)) {
    c.constants = bias ? std::vector<size_t>{1, 3, 4} : std::vector<size_t>{1, 3};
    if (attrs.requantize) c.constants.insert(c.constants.end(), {5, 6});
  }
  c.text = str_cat("ConvInteger ", dtype_name(tx), " x ", dtype_name(tw), " ", g.text(),
                   shared ? " shared" : " per-channel", symmetric ? " zero" : "", " zero points",
                   bias ? ", bias" : "",
                   attrs.requantize ? str_cat(", requantized into ", dtype_name(ty), " [",
                                              attrs.y_lo, ", ", attrs.y_hi, "]")
                                    : "");
  return c;
}

// Attention over views in any order (a mask broadcast over batch or heads half the time),
// grouped-query heads, every attribute and optional input; long sequences sometimes, so
// that key tiles and query blocks have several parts and the online softmax rescales.
Case random_attention(Draw& d) {
  Case c;
  const bool long_seq = d.chance(6);
  const int64_t b = d.pick(1, 2), kvh = d.pick(1, 2), hq = kvh * d.pick(1, 3);
  const int64_t sq = long_seq ? d.pick(60, 140) : d.pick(1, 9);
  const int64_t skv = long_seq ? d.pick(250, 600) : d.pick(0, 9);
  const int64_t dh = d.pick(1, 12), dv = d.pick(1, 12);
  AttentionCall attrs;
  attrs.scale = d.chance(3) ? 0 : d.real(0.05, 1.0);
  attrs.softcap = d.chance(3) ? d.real(0.5, 4.0) : 0;
  attrs.causal = d.chance(2);
  attrs.key_lengths = d.chance(3);
  attrs.offset_from_lengths = attrs.key_lengths && d.chance(2);
  attrs.causal_offset = d.pick(-2, 3) + (d.chance(2) && !attrs.offset_from_lengths ? skv - sq : 0);
  attrs.left_window = d.chance(4) ? d.pick(0, 5) : -1;
  attrs.right_window = d.chance(6) ? d.pick(0, 5) : -1;
  attrs.mask = d.chance(2);
  attrs.sinks = d.chance(4);
  attrs.empty_rows_nan = d.chance(3);
  c.ins.push_back(random_operand(d, DType::F32, {b, hq, sq, dh}, -1, 1));
  c.ins.push_back(random_operand(d, DType::F32, {b, kvh, skv, dh}, -1, 1));
  c.ins.push_back(random_operand(d, DType::F32, {b, kvh, skv, dv}, -1, 1));
  if (attrs.mask) {
    const Dims shape{b, hq, sq, skv};
    std::vector<bool> broadcast{d.chance(2), d.chance(2), d.chance(4), false};
    // Some positions fully masked (-inf), the rest small additive biases.
    c.ins.push_back(make_operand(DType::F32, shape, d.order(4), broadcast, d.pick(0, 2),
                                 [&](int64_t) { return d.chance(5) ? -INFINITY : d.real(-2, 1); }));
  }
  if (attrs.key_lengths) {  // one in 12 out of [0, skv] when `stray`
    const bool stray = d.chance(12);
    c.ins.push_back(make_operand(DType::I64, {b}, {0}, {}, d.pick(0, 1), [&](int64_t) {
      return static_cast<double>(stray ? skv + 1 : d.pick(0, skv));
    }));
  }
  if (attrs.sinks) c.ins.push_back(random_operand(d, DType::F32, {hq}, -2, 2));
  c.outs.push_back(output_operand(d, DType::F32, {b, hq, sq, dv}, d.chance(2)));
  encode_extern(attrs, &c.call);
  set_operands(&c);
  c.tol = sum_tol(skv * dh);
  c.text = str_cat("Attention Q ", dims_text({b, hq, sq, dh}), " K/V heads ", kvh, " keys ", skv,
                   " dv ", dv, attrs.mask ? " mask" : "", attrs.key_lengths ? " lengths" : "",
                   attrs.offset_from_lengths ? " (offset)" : "", attrs.sinks ? " sinks" : "",
                   attrs.causal ? " causal " : " offset ", attrs.causal_offset, " windows ",
                   attrs.left_window, "/", attrs.right_window, " softcap ", attrs.softcap);
  return c;
}

}  // namespace random_externs
}  // namespace ferrite
