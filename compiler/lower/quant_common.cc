// The quantized ops' shared pieces (quant_common.h).
#include "compiler/lower/quant_common.h"

#include <optional>
#include <string>

#include "compiler/graph/layout_attr.h"
#include "compiler/loopir/checked_int.h"
#include "compiler/lower/pool_geometry.h"
#include "compiler/plan/externs/conv_call.h"
#include "compiler/plan/externs/matmul_integer_call.h"

namespace ferrite {
namespace {

// The operand's value minus its zero point, int64, at `index` of its own shape.
V operand_value(KernelBuilder& b, const IntOperand& o, const std::vector<Index>& index) {
  V v = b.cast(o.x->load(b, index), ScalarType::I64);
  if (!o.zero_point) return v;
  return b.binary(Op::Sub, v,
                  b.cast(load_broadcast(b, o.zero_point, index, o.x->size), ScalarType::I64));
}

// A realized int32 reduction of `ranges` outer points over `reduce` with `rfn` per point.
TensorBoxPtr int32_reduction(const LowerCtx& c, std::vector<int64_t> ranges,
                             std::vector<int64_t> reduce, ReduceLoader rfn) {
  auto def = std::make_shared<ComputedDef>();
  def->is_reduction = true;
  def->reduce = ReduceKind::Sum;
  def->origin = c.origin();
  def->ranges = std::move(ranges);
  def->reduction_ranges = std::move(reduce);
  def->rfn = std::move(rfn);
  def->post = [](KernelBuilder& b, V v) { return b.cast(v, ScalarType::I64); };
  TensorBoxPtr t = make_reduction_box(DType::I32, def);
  c.gl.realize(t);
  return t;
}

}  // namespace

std::string shape_text(const std::vector<int64_t>& s) {
  std::string t = "[";
  for (size_t i = 0; i < s.size(); ++i) t += str_cat(i ? "," : "", s[i]);
  return t + "]";
}

// Input `i`, a parameter (zero point or scale) of operand `x` quantized per tensor or per
// "line" along dim `line_dim` of x's last two (a's rows: K-dim 1; b's columns: K-dim 1):
// a scalar or one element, a 1-D tensor of that dim's size, or an N-D tensor broadcasting
// to x with size 1 along the other of the two. Returned broadcastable to x and to the
// product's output alike; null when the input is omitted.
TensorBoxPtr line_param(const LowerCtx& c, size_t i, const TensorBoxPtr& x, bool rows) {
  if (!c.has(i)) return nullptr;
  const TensorBoxPtr& p = c.input(i);
  const std::string name = c.node.inputs[i] ? c.node.inputs[i]->name : "";
  if (p->elements() == 1 && p->size.size() <= 1) return reshape_view(p, {});
  const size_t r = x->size.size();
  if (r < 2) c.error("input '", name, "' ", shape_text(p->size), ": a 1-D operand takes a scalar");
  const int64_t line = x->size[rows ? r - 2 : r - 1];
  if (p->size.size() == 1 && p->size[0] == line) return rows ? reshape_view(p, {line, 1}) : p;
  const size_t other = rows ? r - 1 : r - 2;
  bool ok = p->size.size() == r && p->size[other] == 1;
  for (size_t d = 0; ok && d < r; ++d)
    ok = d == other || p->size[d] == x->size[d] || p->size[d] == 1;
  if (!ok) {
    c.error("input '", name, "' ", shape_text(p->size), " is not per tensor or per ",
            rows ? "row" : "column", " of ", shape_text(x->size));
  }
  return p;
}

// A per-tensor parameter (a scalar or one element), as a rank-0 view.
TensorBoxPtr scalar_param(const LowerCtx& c, size_t i) {
  const TensorBoxPtr& p = c.input(i);
  if (p->elements() != 1 || p->size.size() > 1) {
    c.error("input '", c.node.inputs[i] ? c.node.inputs[i]->name : "", "' ", shape_text(p->size),
            " must be a scalar (per tensor)");
  }
  return reshape_view(p, {});
}

// A convolution's weight parameter: per tensor, or 1-D per output channel, as a view of
// rank `rank` that broadcasts against W ([M, C / group, k...], rank `rank`), or of rank
// `rank` - 1 that broadcasts against the output ([N, M, spatial...]).
TensorBoxPtr channel_param(const LowerCtx& c, size_t i, size_t rank, int64_t channels) {
  if (!c.has(i)) return nullptr;
  const TensorBoxPtr& p = c.input(i);
  if (p->elements() == 1 && p->size.size() <= 1) return reshape_view(p, {});
  if (p->size.size() != 1 || p->size[0] != channels) {
    c.error("input '", c.node.inputs[i] ? c.node.inputs[i]->name : "", "' ", shape_text(p->size),
            " must be a scalar or one per output channel (", channels, ")");
  }
  std::vector<int64_t> shape(rank - 1, 1);
  shape[0] = channels;
  return reshape_view(p, shape);
}

QRange quant_range(const LowerCtx& c, DType t, const char* what, bool wide) {
  switch (t) {
    case DType::U8:
      return {0, 255};
    case DType::I8:
      return {-128, 127};
    case DType::U16:
      return {0, 65535};
    case DType::I16:
      return {-32768, 32767};
    case DType::U4:
      return {0, 15};
    case DType::I4:
      return {-8, 7};
    case DType::U2:
      return {0, 3};
    case DType::I2:
      return {-2, 1};
    case DType::I32:
      if (wide) return {-2147483648.0, 2147483647.0};
      break;
    default:
      break;
  }
  c.unsupported(what, " of type ", dtype_name(t), " (uint8, int8, uint16, int16, (u)int4, (u)int2",
                wide ? ", int32" : "", " are supported)");
}

TensorBoxPtr quant_param_view(const LowerCtx& c, size_t i, const std::vector<int64_t>& x_size,
                              int axis, int64_t block) {
  const TensorBoxPtr& p = c.input(i);
  const std::string name = c.node.inputs[i] ? c.node.inputs[i]->name : "";
  const size_t rank = x_size.size();
  if (block < 0) c.error("block_size must not be negative, got ", block);
  if (block == 0 && p->elements() == 1 && p->size.size() <= 1) {
    return expand_view(reshape_view(p, std::vector<int64_t>(rank, 1)), x_size);
  }
  auto bad = [&](const char* form) {
    c.error("input '", name, "' ", shape_text(p->size), " is not a ", form, " for x ",
            shape_text(x_size), " (axis ", axis, block ? str_cat(", block_size ", block) : "", ")");
  };
  if (axis < 0 || static_cast<size_t>(axis) >= rank) bad("per-tensor scalar");
  if (block == 0) {
    if (p->size.size() != 1 || p->size[0] != x_size[axis]) bad("per-axis 1-D tensor");
    std::vector<int64_t> shape(rank, 1);
    shape[axis] = x_size[axis];
    return expand_view(reshape_view(p, shape), x_size);
  }
  if (p->size.size() != rank) bad("blocked tensor");
  for (size_t d = 0; d < rank; ++d) {
    const bool ok = static_cast<int>(d) == axis
                        ? p->size[d] == (x_size[d] == 0 ? 0 : (x_size[d] - 1) / block + 1)
                        : p->size[d] == x_size[d];
    if (!ok) bad("blocked tensor");
  }
  return make_view(p, x_size, [axis, block](const std::vector<Index>& idx) {
    std::vector<Index> r = idx;
    r[axis] = ix_floordiv(idx[axis], block);
    return r;
  });
}

V quantize_value(KernelBuilder& b, V x, V scale, V zero_point, QRange r, const QRange* then) {
  // In float32 to the end, the cast to int64 last: a vector backend converts only what it
  // stores (the JIT's rule), and the clamped value is exact there.
  const V z = b.cast(zero_point, ScalarType::F32);
  V q = b.unary(Op::Round,
                b.binary(Op::Div, b.cast(x, ScalarType::F32), b.cast(scale, ScalarType::F32)));
  q = b.binary(Op::Add, q, z);
  q = b.binary(Op::Min, b.binary(Op::Max, q, b.constant(ScalarType::F32, r.lo)),
               b.constant(ScalarType::F32, r.hi));
  q = b.where(b.unary(Op::IsNaN, q), z, q);
  if (then)
    q = b.binary(Op::Min, b.binary(Op::Max, q, b.constant(ScalarType::F32, then->lo)),
                 b.constant(ScalarType::F32, then->hi));
  return b.cast(q, ScalarType::I64);
}

V dequantize_value(KernelBuilder& b, V q, V zero_point, V scale) {
  const V d = b.binary(Op::Sub, b.cast(q, ScalarType::I64), b.cast(zero_point, ScalarType::I64));
  return b.binary(Op::Mul, b.cast(d, ScalarType::F32), b.cast(scale, ScalarType::F32));
}

TensorBoxPtr requant_multiplier(const LowerCtx& c, const TensorBoxPtr& s1, const TensorBoxPtr& s2,
                                const TensorBoxPtr& ys, double alpha) {
  for (const TensorBoxPtr& s : {s1, s2, ys}) {
    if (!dtype_is_float(s->dtype) || s->dtype == DType::F64)
      c.unsupported("scales of type ", dtype_name(s->dtype));
  }
  TensorBoxPtr m = make_pointwise(
      c, {s1, s2, ys}, DType::F32, [alpha](KernelBuilder& b, const std::vector<V>& v) {
        auto f32 = [&](size_t i) { return b.cast(v[i], ScalarType::F32); };
        V f = f32(0);
        if (alpha != 1) f = b.binary(Op::Mul, b.constant(f, alpha), f);
        return b.binary(Op::Div, b.binary(Op::Mul, f, f32(1)), f32(2));
      });
  if (std::shared_ptr<const TensorData> folded = c.gl.constant_data(m))
    m = constant_box(c.gl, folded, c.node.name + "_multiplier");
  return m;
}

TensorBoxPtr requantize(const LowerCtx& c, const TensorBoxPtr& acc, const TensorBoxPtr& s1,
                        const TensorBoxPtr& s2, const TensorBoxPtr& ys, const TensorBoxPtr& yz,
                        double alpha, const QRange* then) {
  const QRange r = quant_range(c, yz->dtype, "y_zero_point");
  const TensorBoxPtr m = requant_multiplier(c, s1, s2, ys, alpha);
  const std::optional<QRange> clamp = then ? std::optional<QRange>(*then) : std::nullopt;
  return make_pointwise(
      c, {acc, m, yz}, yz->dtype, [r, clamp](KernelBuilder& b, const std::vector<V>& v) {
        const V real = b.binary(Op::Mul, b.cast(v[0], ScalarType::F32), v[1]);
        return quantize_value(b, real, b.constant(ScalarType::F32, 1),
                              b.cast(v[2], ScalarType::I64), r, clamp ? &*clamp : nullptr);
      });
}

DynamicQ dynamic_quantize_u8(const LowerCtx& c, const TensorBoxPtr& x) {
  // x is read three times (its minimum, its maximum, its quantization): a computed x (a
  // MatMul's bias and Gelu before a quantized MatMul: erf three times per element) is
  // computed once.
  if (!x->storage->realized() && x->is_identity_view()) c.gl.realize(x);
  std::vector<int> all;
  for (size_t d = 0; d < x->size.size(); ++d) all.push_back(static_cast<int>(d));
  const TensorBoxPtr lo = make_reduction(c, x, all, false, ReduceKind::Min, DType::F32);
  const TensorBoxPtr hi = make_reduction(c, x, all, false, ReduceKind::Max, DType::F32);
  auto range_of = [](KernelBuilder& b, const std::vector<V>& v) {
    const V zero = b.constant(ScalarType::F32, 0);
    return std::pair<V, V>{b.binary(Op::Min, v[0], zero), b.binary(Op::Max, v[1], zero)};
  };
  const TensorBoxPtr scale = make_pointwise(
      c, {lo, hi}, DType::F32, [range_of](KernelBuilder& b, const std::vector<V>& v) {
        const auto [mn, mx] = range_of(b, v);
        const V width = b.binary(Op::Sub, mx, mn);
        return b.where(b.binary(Op::Eq, mx, mn), b.constant(ScalarType::F32, 1),
                       b.binary(Op::Div, width, b.constant(ScalarType::F32, 255)));
      });
  c.gl.realize(scale);
  // The zero point in float32 (a whole number), which y reads; its uint8 copy is stored only.
  const TensorBoxPtr zpf = make_pointwise(
      c, {lo, hi, scale}, DType::F32, [range_of](KernelBuilder& b, const std::vector<V>& v) {
        const V mn = range_of(b, v).first;
        V z = b.binary(Op::Sub, b.constant(ScalarType::F32, 0), b.binary(Op::Div, mn, v[2]));
        z = b.binary(Op::Min, b.binary(Op::Max, z, b.constant(ScalarType::F32, 0)),
                     b.constant(ScalarType::F32, 255));
        return b.unary(Op::Round, z);
      });
  c.gl.realize(zpf);
  const TensorBoxPtr zp = make_pointwise(
      c, {zpf}, DType::U8,
      [](KernelBuilder& b, const std::vector<V>& v) { return b.cast(v[0], ScalarType::I64); });
  c.gl.realize(zp);
  const TensorBoxPtr y =
      make_pointwise(c, {x, scale, zpf}, DType::U8, [](KernelBuilder& b, const std::vector<V>& v) {
        return quantize_value(b, v[0], v[1], v[2], QRange{0, 255});
      });
  return {y, scale, zp};
}

namespace {

// A one-element constant 0 of type t, [1].
TensorBoxPtr zero_of(const LowerCtx& c, DType t) {
  auto d = std::make_shared<TensorData>();
  d->dtype = t;
  d->shape = {1};
  d->bytes.assign(dtype_size(t), 0);
  return constant_box(c.gl, d, c.origin() + " zero point");
}

// The MatMulInteger extern (runtime/kernels/reference/matmul_integer.h) for 8-bit operands
// of rank >= 2 whose zero points are per tensor (A) and per tensor or column (B, 1-D); null
// for any other (the loop-IR sum takes those).
TensorBoxPtr matmul_integer_extern(const LowerCtx& c, const IntOperand& a, const IntOperand& b,
                                   const std::vector<int64_t>& batch) {
  auto eight_bit = [](DType t) { return t == DType::U8 || t == DType::I8; };
  if (!eight_bit(a.x->dtype) || !eight_bit(b.x->dtype)) return nullptr;
  if (a.x->size.size() < 2 || b.x->size.size() < 2) return nullptr;
  const int64_t m = a.x->size[a.x->size.size() - 2], k = a.x->size.back(), n = b.x->size.back();
  if (a.zero_point && (!a.zero_point->size.empty() || a.zero_point->dtype != a.x->dtype))
    return nullptr;
  if (b.zero_point && (b.zero_point->size.size() > 1 || b.zero_point->dtype != b.x->dtype))
    return nullptr;
  TensorBoxPtr az = a.zero_point ? reshape_view(a.zero_point, {1}) : zero_of(c, a.x->dtype);
  TensorBoxPtr bz = b.zero_point ? b.zero_point : zero_of(c, b.x->dtype);
  if (bz->size.size() != 1 || bz->size[0] != n) bz = expand_view(reshape_view(bz, {1}), {n});
  auto with = [&](std::vector<int64_t> tail) {
    std::vector<int64_t> s = batch;
    s.insert(s.end(), tail.begin(), tail.end());
    return s;
  };
  ExternNode e;
  encode_extern(MatMulIntegerCall{a.x->dtype == DType::I8, b.x->dtype == DType::I8}, &e);
  e.origin = c.origin();
  e.inputs.push_back(c.gl.extern_operand(expand_view(a.x, with({m, k}))));
  e.inputs.push_back(c.gl.extern_operand(expand_view(b.x, with({k, n}))));
  e.inputs.push_back(c.gl.extern_operand(az));
  e.inputs.push_back(c.gl.extern_operand(bz));
  Buffer* out = c.gl.new_buffer("", DType::I32, with({m, n}), BufferOrigin::Extern);
  e.outputs.push_back(out);
  c.gl.add_extern(std::move(e));
  return make_buffer_box(out);
}

}  // namespace

TensorBoxPtr integer_matmul(const LowerCtx& c, const IntOperand& a, const IntOperand& b) {
  std::vector<int64_t> as = a.x->size, bs = b.x->size;
  if (as.empty() || bs.empty()) c.error("MatMul operands must have rank >= 1");
  const bool a1 = as.size() == 1, b1 = bs.size() == 1;
  if (a1) as.insert(as.begin(), 1);
  if (b1) bs.push_back(1);
  const int64_t m = as[as.size() - 2], k = as.back(), n = bs.back();
  if (bs[bs.size() - 2] != k) {
    c.error("inner dimensions differ: ", shape_text(a.x->size), " x ", shape_text(b.x->size));
  }
  const std::vector<int64_t> ab(as.begin(), as.end() - 2), bb(bs.begin(), bs.end() - 2);
  const std::vector<int64_t> batch = broadcast_shapes(c, {ab, bb});
  std::vector<int64_t> ranges = batch;
  ranges.push_back(m);
  ranges.push_back(n);
  const IntOperand ao{a1 ? reshape_view(a.x, as) : a.x, a.zero_point};
  const IntOperand bo{b1 ? reshape_view(b.x, bs) : b.x, b.zero_point};
  std::vector<int64_t> shape = batch;
  if (!a1) shape.push_back(m);
  if (!b1) shape.push_back(n);
  if (TensorBoxPtr y = matmul_integer_extern(c, ao, bo, batch)) return reshape_view(y, shape);
  const size_t nb = batch.size();
  auto rfn = [ao, bo, nb](KernelBuilder& kb, const std::vector<Index>& out,
                          const std::vector<Index>& red) {
    auto index_of = [&](const std::vector<int64_t>& size, const Index& row, const Index& col) {
      std::vector<Index> idx;
      const size_t lead = nb - (size.size() - 2);
      for (size_t d = 0; d + 2 < size.size(); ++d)
        idx.push_back(size[d] == 1 ? ix_const(0) : out[lead + d]);
      idx.push_back(row);
      idx.push_back(col);
      return idx;
    };
    const V av = operand_value(kb, ao, index_of(ao.x->size, out[nb], red[0]));
    const V bv = operand_value(kb, bo, index_of(bo.x->size, red[0], out[nb + 1]));
    return kb.binary(Op::Mul, av, bv);
  };
  return reshape_view(int32_reduction(c, ranges, {k}, rfn), shape);
}

namespace {

// A zero point for the ConvInteger extern: one value as [1] (null: a 0 of type t), or, when
// `channels` > 0, one per output channel as [channels] (one value expanded); null when it
// has another shape or type.
TensorBoxPtr extern_zero_point(const LowerCtx& c, const TensorBoxPtr& z, DType t,
                               int64_t channels) {
  const TensorBoxPtr one = z ? z : zero_of(c, t);
  if (one->dtype != t) return nullptr;
  const int64_t n = one->elements();
  if (n == 1) {
    const TensorBoxPtr v = reshape_view(one, {1});
    return channels > 0 ? expand_view(v, {channels}) : v;
  }
  if (channels > 0 && n == channels && !one->size.empty() && one->size[0] == channels)
    return reshape_view(one, {channels});
  return nullptr;
}

// An int32 [m] of zeros: the bias of a requantizing ConvInteger extern without one.
TensorBoxPtr zero_bias(const LowerCtx& c, int64_t m) {
  auto data = std::make_shared<TensorData>();
  data->dtype = DType::I32;
  data->shape = {m};
  data->bytes.assign(static_cast<size_t>(m) * sizeof(int32_t), 0);
  return constant_box(c.gl, data, c.node.name + "_zero_bias");
}

// The ConvInteger extern (runtime/kernels/reference/conv_integer.h) for 8-bit operands of 1
// to 3 spatial dims whose zero points are per tensor (X) and per tensor or output channel
// (W), within the extern's bounds; null for any other (the loop-IR sum takes those).
TensorBoxPtr conv_integer_extern(const LowerCtx& c, const IntOperand& x, const IntOperand& w,
                                 TensorBoxPtr bias, const PoolGeometry& g, int64_t group,
                                 const ConvRequant* rq) {
  auto eight_bit = [](DType t) { return t == DType::U8 || t == DType::I8; };
  const std::vector<int64_t>&xs = x.x->size, &ws = w.x->size;
  if (!eight_bit(x.x->dtype) || !eight_bit(w.x->dtype) || xs.size() > 5) return nullptr;
  ConvIntegerCall call{{}, x.x->dtype == DType::I8, w.x->dtype == DType::I8};
  TensorBoxPtr multiplier, yz;
  if (rq) {
    if (!eight_bit(rq->yz->dtype)) return nullptr;
    const int64_t n = rq->multiplier->elements();
    if (n != 1 && n != ws[0]) return nullptr;
    multiplier = expand_view(reshape_view(rq->multiplier, {n}), {ws[0]});
    yz = reshape_view(rq->yz, {1});
    if (!bias) bias = zero_bias(c, ws[0]);
    call.requantize = true;
    call.y_signed = rq->yz->dtype == DType::I8;
    call.y_lo = static_cast<int64_t>(rq->range.lo);
    call.y_hi = static_cast<int64_t>(rq->range.hi);
  }
  const DType y_type = rq ? rq->yz->dtype : DType::I32;
  call.conv.group = group;
  call.conv.stride = g.strides;
  call.conv.dilation = g.dilations;
  call.conv.pad_begin = g.pad_begin;
  call.conv.pad_end = g.pad_end;
  std::vector<int64_t> ys = {xs[0], ws[0]};
  ys.insert(ys.end(), g.out.begin(), g.out.end());
  const std::vector<int64_t>* bounded[] = {&xs,          &ws,          &ys,        &g.strides,
                                           &g.dilations, &g.pad_begin, &g.pad_end, &g.kernel};
  for (const std::vector<int64_t>* v : bounded) {
    for (int64_t d : *v)
      if (d >= kMaxConvExtent) return nullptr;
  }
  for (size_t d = 0; d < g.rank(); ++d) {  // the extern's output size (pad_end, no ceil_mode)
    const int64_t room = g.spatial[d] + g.pad_begin[d] + g.pad_end[d] - g.span(d);
    if ((room >= 0 ? room / g.strides[d] + 1 : 0) != g.out[d]) return nullptr;
  }
  const TensorBoxPtr xz = extern_zero_point(c, x.zero_point, x.x->dtype, 0);
  const TensorBoxPtr wz = extern_zero_point(c, w.zero_point, w.x->dtype, ws[0]);
  if (!xz || !wz) return nullptr;
  ExternNode e;
  encode_extern(call, &e);
  e.origin = c.origin();
  for (const TensorBoxPtr& t : {x.x, w.x, xz, wz}) e.inputs.push_back(c.gl.extern_operand(t));
  if (bias) e.inputs.push_back(c.gl.extern_operand(bias));
  if (rq) {
    e.inputs.push_back(c.gl.extern_operand(multiplier));
    e.inputs.push_back(c.gl.extern_operand(yz));
  }
  if (c.node.attr_string(kLayoutAttr, "") != kChannelsLastLayout) {
    Buffer* out = c.gl.new_buffer("", y_type, ys, BufferOrigin::Extern);
    e.outputs.push_back(out);
    c.gl.add_extern(std::move(e));
    return make_buffer_box(out);
  }
  // Channels-last storage [N, spatial..., M] (choose_conv_layout); every reader sees
  // [N, M, spatial...].
  const int k = static_cast<int>(g.rank());
  std::vector<int64_t> stored{ys[0]};
  stored.insert(stored.end(), ys.begin() + 2, ys.end());
  stored.push_back(ys[1]);
  std::vector<int> perm{0, k + 1};
  for (int d = 1; d <= k; ++d) perm.push_back(d);
  Buffer* out = c.gl.new_buffer("", y_type, stored, BufferOrigin::Extern);
  e.outputs.push_back(out);
  e.output_perms.push_back(perm);
  c.gl.add_extern(std::move(e));
  return permute_view(make_buffer_box(out), perm);
}

// The convolution's group and geometry, checked against X and W.
PoolGeometry conv_geometry(const LowerCtx& c, const IntOperand& x, const IntOperand& w,
                           int64_t* group) {
  const std::vector<int64_t>&xs = x.x->size, &ws = w.x->size;
  if (xs.size() < 3 || ws.size() != xs.size()) {
    c.error("X ", shape_text(xs), " and W ", shape_text(ws),
            " must be [N, C, D...] and [M, C / group, k...]");
  }
  *group = c.node.attr_int("group", 1);
  const int64_t ch = xs[1], oc = ws[0];
  if (*group < 1 || ch % *group != 0 || ws[1] * *group != ch || oc % *group != 0) {
    c.error("W ", shape_text(ws), " does not fit X ", shape_text(xs), " in ", *group, " groups");
  }
  const std::vector<int64_t> spatial(xs.begin() + 2, xs.end()), kernel(ws.begin() + 2, ws.end());
  return pool_geometry(c, spatial, &kernel);
}

}  // namespace

TensorBoxPtr requantized_conv(const LowerCtx& c, const IntOperand& x, const IntOperand& w,
                              const TensorBoxPtr& bias, const ConvRequant& rq) {
  int64_t group = 1;
  const PoolGeometry g = conv_geometry(c, x, w, &group);
  return conv_integer_extern(c, x, w, bias, g, group, &rq);
}

TensorBoxPtr integer_conv(const LowerCtx& c, const IntOperand& x, const IntOperand& w,
                          const TensorBoxPtr& bias) {
  const std::vector<int64_t>&xs = x.x->size, &ws = w.x->size;
  int64_t group = 1;
  const PoolGeometry g = conv_geometry(c, x, w, &group);
  const std::vector<int64_t> kernel(ws.begin() + 2, ws.end());
  const int64_t oc = ws[0];
  if (TensorBoxPtr y = conv_integer_extern(c, x, w, bias, g, group, nullptr)) return y;
  std::vector<int64_t> ranges = {xs[0], oc};
  ranges.insert(ranges.end(), g.out.begin(), g.out.end());
  std::vector<int64_t> reduce = {ws[1]};
  reduce.insert(reduce.end(), kernel.begin(), kernel.end());
  const int64_t per_group = oc / group, cg = ws[1];
  auto rfn = [x, w, g, per_group, cg](KernelBuilder& b, const std::vector<Index>& out,
                                      const std::vector<Index>& red) {
    const Index ci = ix_add(ix_mul(ix_floordiv(out[1], per_group), cg), red[0]);
    std::vector<Index> xi = {out[0], ci}, wi = {out[1], red[0]};
    V inside = b.constant(ScalarType::Bool, 1);
    for (size_t d = 0; d < g.rank(); ++d) {
      const Index pos = ix_add(g.start(d, out[2 + d]), ix_mul(red[1 + d], g.dilations[d]));
      xi.push_back(pos);
      wi.push_back(red[1 + d]);
      if (!g.leaves_input(d)) continue;
      const V at = b.index_value(pos);
      inside = b.binary(Op::And, inside,
                        b.binary(Op::And, b.binary(Op::Ge, at, b.constant_i64(0)),
                                 b.binary(Op::Lt, at, b.constant_i64(g.spatial[d]))));
    }
    V xv;
    {
      MaskScope scope(b, inside);
      xv = operand_value(b, x, xi);
    }
    xv = b.where(inside, xv, b.constant_i64(0));
    return b.binary(Op::Mul, xv, operand_value(b, w, wi));
  };
  const TensorBoxPtr acc = int32_reduction(c, ranges, reduce, rfn);
  if (!bias) return acc;
  std::vector<int64_t> shape(xs.size() - 1, 1);
  shape[0] = oc;
  return make_pointwise(c, {acc, reshape_view(bias, shape)}, DType::I32,
                        [](KernelBuilder& b, const std::vector<V>& v) {
                          return b.binary(Op::Add, v[0], b.cast(v[1], ScalarType::I64));
                        });
}

}  // namespace ferrite
