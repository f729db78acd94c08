// Elementwise ops: unary math, binary arithmetic with numpy broadcasting, comparisons and
// logic, Where, Clip, Cast and the small activation functions built from them.
#include <cmath>
#include <limits>

#include "compiler/lower/lowering.h"
#include "compiler/plan/activations.h"
#include "compiler/plan/externs/bitcast_call.h"
#include "compiler/plan/minifloat.h"
#include "compiler/plan/scalar_ops.h"

namespace ferrite {
namespace {

// log(1 + exp(x)) computed as max(x, 0) + log(1 + exp(-|x|)): no overflow.
V softplus(KernelBuilder& b, V x) {
  V e = b.unary(Op::Exp, b.unary(Op::Neg, b.unary(Op::Abs, x)));
  V l = b.unary(Op::Log, b.binary(Op::Add, e, b.constant(x.type, 1)));
  return b.binary(Op::Add, b.binary(Op::Max, x, b.constant(x.type, 0)), l);
}

using Fn1 = std::function<V(KernelBuilder&, V)>;

LowerFn unary_fn(Fn1 fn, bool float_only) {
  return [fn, float_only](LowerCtx& c) -> std::vector<TensorBoxPtr> {
    const TensorBoxPtr& x = c.input(0);
    if (float_only && !dtype_is_float(x->dtype)) {
      c.unsupported("input type ", dtype_name(x->dtype), " (float types only)");
    }
    return {make_pointwise(
        c, {x}, x->dtype, [fn](KernelBuilder& b, const std::vector<V>& v) { return fn(b, v[0]); })};
  };
}

LowerFn unary_op(Op op) {
  return [op](LowerCtx& c) -> std::vector<TensorBoxPtr> {
    const TensorBoxPtr& x = c.input(0);
    ScalarType t = compute_type(x->dtype);
    if (!op_accepts(op, t)) c.unsupported("input type ", dtype_name(x->dtype));
    DType out = op_result_type(op, t) == ScalarType::Bool ? DType::Bool : x->dtype;
    return {make_pointwise(c, {x}, out, [op](KernelBuilder& b, const std::vector<V>& v) {
      return b.unary(op, v[0]);
    })};
  };
}

void check_same_types(const LowerCtx& c, const std::vector<TensorBoxPtr>& ins) {
  for (const auto& t : ins) {
    if (t->dtype != ins[0]->dtype) {
      c.error("operand types differ: ", dtype_name(ins[0]->dtype), " and ", dtype_name(t->dtype));
    }
  }
}

LowerFn binary_op(Op op) {
  return [op](LowerCtx& c) -> std::vector<TensorBoxPtr> {
    std::vector<TensorBoxPtr> ins{c.input(0), c.input(1)};
    check_same_types(c, ins);
    ScalarType t = compute_type(ins[0]->dtype);
    if (!op_accepts(op, t)) c.unsupported("input type ", dtype_name(ins[0]->dtype));
    DType out = op_result_type(op, t) == ScalarType::Bool ? DType::Bool : ins[0]->dtype;
    return {make_pointwise(c, ins, out, [op](KernelBuilder& b, const std::vector<V>& v) {
      return b.binary(op, v[0], v[1]);
    })};
  };
}

// Max, Min, Sum, Mean over any number of broadcast inputs.
LowerFn variadic_op(Op op, bool mean) {
  return [op, mean](LowerCtx& c) -> std::vector<TensorBoxPtr> {
    std::vector<TensorBoxPtr> ins;
    for (size_t i = 0; i < c.in.size(); ++i) ins.push_back(c.input(i));
    if (ins.empty()) c.error("needs at least one input");
    check_same_types(c, ins);
    return {make_pointwise(
        c, ins, ins[0]->dtype, [op, mean](KernelBuilder& b, const std::vector<V>& v) {
          V acc = v[0];
          for (size_t i = 1; i < v.size(); ++i) acc = b.binary(op, acc, v[i]);
          if (mean)
            acc = b.binary(Op::Div, acc, b.constant(acc.type, static_cast<double>(v.size())));
          return acc;
        })};
  };
}

std::vector<TensorBoxPtr> lower_pow(LowerCtx& c) {
  const TensorBoxPtr &x = c.input(0), &y = c.input(1);
  bool int_base = !dtype_is_float(x->dtype);
  return {
      make_pointwise(c, {x, y}, x->dtype, [int_base](KernelBuilder& b, const std::vector<V>& v) {
        if (int_base && v[1].type != ScalarType::I64) {
          V r = b.binary(Op::Pow, b.cast(v[0], ScalarType::F64), b.cast(v[1], ScalarType::F64));
          return b.cast(r, ScalarType::I64);
        }
        return b.binary(Op::Pow, v[0], b.cast(v[1], v[0].type));
      })};
}

std::vector<TensorBoxPtr> lower_mod(LowerCtx& c) {
  bool fmod = c.node.attr_int("fmod", 0) != 0;
  if (!fmod && dtype_is_float(c.input(0)->dtype)) c.error("fmod must be 1 for float inputs");
  return binary_op(fmod ? Op::FMod : Op::Mod)(c);
}

std::vector<TensorBoxPtr> lower_where(LowerCtx& c) {
  std::vector<TensorBoxPtr> ins{c.input(0), c.input(1), c.input(2)};
  if (ins[0]->dtype != DType::Bool) c.error("condition must be bool");
  check_same_types(c, {ins[1], ins[2]});
  return {make_pointwise(c, ins, ins[1]->dtype, [](KernelBuilder& b, const std::vector<V>& v) {
    return b.where(v[0], v[1], v[2]);
  })};
}

// A bound of Clip (an input from opset 11 on): one value of x's type, whatever its rank,
// so that it cannot broadcast x to a larger shape.
TensorBoxPtr clip_bound(const LowerCtx& c, size_t i) {
  if (c.opset < 11 || !c.has(i)) return nullptr;
  const TensorBoxPtr& t = c.input(i);
  if (t->elements() != 1 || t->dtype != c.input(0)->dtype)
    c.error(i == 1 ? "min" : "max", " must be one value of the input's type, got ",
            TensorType{t->dtype, t->size, {}, true}.to_string());
  return t;
}

std::vector<TensorBoxPtr> lower_clip(LowerCtx& c) {
  const TensorBoxPtr& x = c.input(0);
  const bool attrs = c.opset < 11;
  const double lo = c.node.attr_float("min", -3.4028234663852886e38);
  const double hi = c.node.attr_float("max", 3.4028234663852886e38);
  const TensorBoxPtr lo_t = clip_bound(c, 1), hi_t = clip_bound(c, 2);
  auto bound = [](KernelBuilder& b, const TensorBoxPtr& t) {
    return t->load(b, std::vector<Index>(t->size.size(), ix_const(0)));
  };
  // A float Clip with one bound is min(max(x, lo), hi) all the same, the other bound infinite
  // (the same values): the formula of the Clip post-op, which an extern's epilogue matches.
  const bool one_bound = !attrs && dtype_is_float(x->dtype) && (!lo_t != !hi_t);
  constexpr double inf = std::numeric_limits<double>::infinity();
  return {make_pointwise(c, {x}, x->dtype, [=](KernelBuilder& b, const std::vector<V>& v) {
    V r = v[0];
    if (one_bound)
      return act::clip(b, r, lo_t ? bound(b, lo_t) : b.constant(r.type, -inf),
                       hi_t ? bound(b, hi_t) : b.constant(r.type, inf));
    if (attrs || lo_t) r = b.binary(Op::Max, r, attrs ? b.constant(r.type, lo) : bound(b, lo_t));
    if (attrs || hi_t) r = b.binary(Op::Min, r, attrs ? b.constant(r.type, hi) : bound(b, hi_t));
    return r;
  })};
}

std::vector<TensorBoxPtr> lower_cast(LowerCtx& c) {
  DType to;
  if (c.node.op_type == "CastLike") {
    to = c.input(1)->dtype;
  } else if (!dtype_from_onnx(c.node.attr_int("to", 0), &to)) {
    c.unsupported("cast to type ", c.node.attr_int("to", 0));
  }
  if (to == DType::String || c.input(0)->dtype == DType::String) c.unsupported("string tensors");
  // Into float8 and e8m0, `saturate` (the default) clamps to the largest finite value before
  // the store's conversion, which overflows to infinity or NaN (minifloat.h); float4 always
  // saturates. e8m0 rounds up (round_mode's default) and only so.
  const bool saturate =
      to != DType::F4E2M1 && dtype_is_minifloat(to) && c.node.attr_int("saturate", 1) != 0;
  if (to == DType::F8E8M0 && c.node.attr_string("round_mode", "up") != "up")
    c.unsupported("round_mode '", c.node.attr_string("round_mode", "up"), "' (only 'up')");
  const double max = saturate ? minifloat_max(to) : 0;
  return {make_pointwise(c, {c.input(0)}, to, [=](KernelBuilder& b, const std::vector<V>& v) {
    V r = b.cast(v[0], compute_type(to));
    if (saturate) {  // NaN stays NaN: Max and Min propagate it
      r = b.binary(Op::Max, r, b.constant(r.type, -max));
      r = b.binary(Op::Min, r, b.constant(r.type, max));
    }
    return r;
  })};
}

// BitCast (26): between integer and bool types of one width the bits stay, so a load (the
// value, sign- or zero-extended) stored into the other type (its low bits) is the
// reinterpretation. A float type's bit pattern has no op in the Kernel contract: those go
// to the BitCast extern (runtime/kernels/reference/bitcast.h), a copy of each element's
// bytes.
std::vector<TensorBoxPtr> lower_bitcast(LowerCtx& c) {
  const TensorBoxPtr& x = c.input(0);
  DType to;
  if (!dtype_from_onnx(c.node.attr_int("to", 0), &to)) c.error("to: unknown type");
  if (dtype_bits(to) != dtype_bits(x->dtype))
    c.error("from ", dtype_name(x->dtype), " to ", dtype_name(to), ": the widths differ");
  if (x->dtype == DType::String || to == DType::String) c.unsupported("string tensors");
  if (to == DType::Bool) c.unsupported("to bool (a byte other than 0 or 1 is no bool)");
  auto integral = [](DType t) { return compute_type(t) == ScalarType::I64 || t == DType::Bool; };
  if (integral(x->dtype) && integral(to)) {
    return {make_pointwise(c, {x}, to, [](KernelBuilder& b, const std::vector<V>& v) {
      return b.cast(v[0], ScalarType::I64);
    })};
  }
  // Below a byte the in-memory forms differ (int4 is sign-extended, float4's code is not).
  if (dtype_bits(to) < 8)
    c.unsupported("from ", dtype_name(x->dtype), " to ", dtype_name(to), " (under 8 bits)");
  ExternNode e;
  encode_extern(BitCastCall{}, &e);
  e.origin = c.origin();
  e.inputs.push_back(c.gl.extern_operand(x));
  Buffer* out = c.gl.new_buffer("", to, x->size, BufferOrigin::Extern);
  e.outputs.push_back(out);
  c.gl.add_extern(std::move(e));
  return {make_buffer_box(out)};
}

std::vector<TensorBoxPtr> lower_isinf(LowerCtx& c) {
  bool neg = c.node.attr_int("detect_negative", 1) != 0;
  bool pos = c.node.attr_int("detect_positive", 1) != 0;
  return {
      make_pointwise(c, {c.input(0)}, DType::Bool, [=](KernelBuilder& b, const std::vector<V>& v) {
        V inf = b.unary(Op::IsInf, v[0]);
        V zero = b.constant(v[0].type, 0);
        V sign_ok = b.constant(ScalarType::Bool, 0);
        if (pos) sign_ok = b.binary(Op::Or, sign_ok, b.binary(Op::Gt, v[0], zero));
        if (neg) sign_ok = b.binary(Op::Or, sign_ok, b.binary(Op::Lt, v[0], zero));
        return b.binary(Op::And, inf, sign_ok);
      })};
}

void register_activations(LoweringTable& t) {
  t.add("LeakyRelu", [](LowerCtx& c) {
    double a = c.node.attr_float("alpha", 0.01);
    return unary_fn([a](KernelBuilder& b, V x) { return act::leaky_relu(b, x, a); }, true)(c);
  });
  t.add("Elu", [](LowerCtx& c) {
    double a = c.node.attr_float("alpha", 1.0);
    return unary_fn([a](KernelBuilder& b, V x) { return act::elu(b, x, a); }, true)(c);
  });
  t.add("Selu", [](LowerCtx& c) {
    double a = c.node.attr_float("alpha", 1.67326319217681884765625);
    double g = c.node.attr_float("gamma", 1.05070102214813232421875);
    return unary_fn(
        [a, g](KernelBuilder& b, V x) {
          V e = b.binary(Op::Sub, b.unary(Op::Exp, x), b.constant(x.type, 1));
          V neg = b.binary(Op::Mul, e, b.constant(x.type, a));
          V r = b.where(b.binary(Op::Gt, x, b.constant(x.type, 0)), x, neg);
          return b.binary(Op::Mul, r, b.constant(x.type, g));
        },
        true)(c);
  });
  t.add("Celu", [](LowerCtx& c) {
    double a = c.node.attr_float("alpha", 1.0);
    return unary_fn(
        [a](KernelBuilder& b, V x) {
          V z = b.constant(x.type, 0);
          V e = b.binary(Op::Sub, b.unary(Op::Exp, b.binary(Op::Div, x, b.constant(x.type, a))),
                         b.constant(x.type, 1));
          V neg = b.binary(Op::Min, z, b.binary(Op::Mul, e, b.constant(x.type, a)));
          return b.binary(Op::Add, b.binary(Op::Max, z, x), neg);
        },
        true)(c);
  });
  t.add("HardSigmoid", [](LowerCtx& c) {
    double a = c.node.attr_float("alpha", 0.2), be = c.node.attr_float("beta", 0.5);
    return unary_fn([a, be](KernelBuilder& b, V x) { return act::hard_sigmoid(b, x, a, be); },
                    true)(c);
  });
  t.add("Swish", [](LowerCtx& c) {  // 24: x * sigmoid(alpha * x)
    double a = c.node.attr_float("alpha", 1.0);
    return unary_fn(
        [a](KernelBuilder& b, V x) {
          return b.binary(Op::Mul, x,
                          b.unary(Op::Sigmoid, b.binary(Op::Mul, x, b.constant(x.type, a))));
        },
        true)(c);
  });
  t.add("SwiGLU", [](LowerCtx& c) {  // 28: Swish_alpha(A) * B, A and B of one shape
    const double a = c.node.attr_float("alpha", 1.0);
    const TensorBoxPtr &gate = c.input(0), &value = c.input(1);
    if (!dtype_is_float(gate->dtype)) c.unsupported("input type ", dtype_name(gate->dtype));
    check_same_types(c, {gate, value});
    if (gate->size != value->size) c.error("A and B must have the same shape (no broadcasting)");
    return std::vector<TensorBoxPtr>{make_pointwise(
        c, {gate, value}, gate->dtype, [a](KernelBuilder& b, const std::vector<V>& v) {
          const V x = v[0];
          const V swish = b.binary(
              Op::Mul, x, b.unary(Op::Sigmoid, b.binary(Op::Mul, x, b.constant(x.type, a))));
          return b.binary(Op::Mul, swish, v[1]);
        })};
  });
  t.add("HardSwish", unary_fn([](KernelBuilder& b, V x) { return act::hard_swish(b, x); }, true));
  t.add("Softsign", unary_fn(
                        [](KernelBuilder& b, V x) {
                          V d = b.binary(Op::Add, b.unary(Op::Abs, x), b.constant(x.type, 1));
                          return b.binary(Op::Div, x, d);
                        },
                        true));
  t.add("Softplus", unary_fn(softplus, true));
  t.add("Mish",
        unary_fn([](KernelBuilder& b,
                    V x) { return b.binary(Op::Mul, x, b.unary(Op::Tanh, softplus(b, x))); },
                 true));
  t.add("Gelu", [](LowerCtx& c) {
    std::string approx = c.node.attr_string("approximate", "none");
    if (approx != "none" && approx != "tanh") c.error("unknown approximate '", approx, "'");
    return unary_fn(
        [approx](KernelBuilder& b, V x) {
          return approx == "none" ? act::gelu_erf(b, x) : act::gelu_tanh(b, x);
        },
        true)(c);
  });
}

// The piecewise-linear ones with a threshold or a slope input.
void register_thresholds(LoweringTable& t) {
  t.add("ThresholdedRelu", [](LowerCtx& c) {
    double a = c.node.attr_float("alpha", 1.0);
    return unary_fn(
        [a](KernelBuilder& b, V x) {
          return b.where(b.binary(Op::Gt, x, b.constant(x.type, a)), x, b.constant(x.type, 0));
        },
        true)(c);
  });
  // Shrink: x + bias below -lambd, x - bias above lambd, else 0. Integer inputs compare
  // and compute in float64 and truncate back, as ONNX's reference does.
  t.add("Shrink", [](LowerCtx& c) -> std::vector<TensorBoxPtr> {
    const TensorBoxPtr& x = c.input(0);
    if (x->dtype == DType::Bool) c.unsupported("bool input");
    double lambd = c.node.attr_float("lambd", 0.5), bias = c.node.attr_float("bias", 0.0);
    return {
        make_pointwise(c, {x}, x->dtype, [lambd, bias](KernelBuilder& b, const std::vector<V>& v) {
          V e = v[0].type == ScalarType::I64 ? b.cast(v[0], ScalarType::F64) : v[0];
          ScalarType t = e.type;
          V above = b.where(b.binary(Op::Gt, e, b.constant(t, lambd)),
                            b.binary(Op::Sub, e, b.constant(t, bias)), b.constant(t, 0));
          return b.where(b.binary(Op::Lt, e, b.constant(t, -lambd)),
                         b.binary(Op::Add, e, b.constant(t, bias)), above);
        })};
  });
  t.add("PRelu", [](LowerCtx& c) -> std::vector<TensorBoxPtr> {
    TensorBoxPtr x = c.input(0), slope = c.input(1);
    // Before opset 7 there was no numpy broadcasting: a 1-D slope of C values is per
    // channel (dim 1), which is how old PyTorch exports use it.
    if (c.opset < 7 && slope->size.size() == 1 && x->size.size() > 2 &&
        slope->size[0] == x->size[1] && slope->size[0] != 1) {
      std::vector<int64_t> s(x->size.size() - 1, 1);
      s[0] = slope->size[0];
      slope = reshape_view(slope, s);
    }
    if (broadcast_shapes(c, {x->size, slope->size}) != x->size)
      c.error("slope must broadcast to X's shape (unidirectionally)");
    return {make_pointwise(c, {x, slope}, x->dtype, [](KernelBuilder& b, const std::vector<V>& v) {
      return act::select_negative(b, v[0], b.binary(Op::Mul, v[0], v[1]));
    })};
  });
}

}  // namespace

void register_pointwise_ops(LoweringTable& t) {
  const std::pair<const char*, Op> unary[] = {
      {"Neg", Op::Neg},          {"Abs", Op::Abs},         {"Exp", Op::Exp},
      {"Log", Op::Log},          {"Sqrt", Op::Sqrt},       {"Reciprocal", Op::Reciprocal},
      {"Relu", Op::Relu},        {"Sigmoid", Op::Sigmoid}, {"Tanh", Op::Tanh},
      {"Erf", Op::Erf},          {"Floor", Op::Floor},     {"Ceil", Op::Ceil},
      {"Round", Op::Round},      {"Sign", Op::Sign},       {"Sin", Op::Sin},
      {"Cos", Op::Cos},          {"Tan", Op::Tan},         {"Asin", Op::Asin},
      {"Acos", Op::Acos},        {"Atan", Op::Atan},       {"Sinh", Op::Sinh},
      {"Cosh", Op::Cosh},        {"Asinh", Op::Asinh},     {"Acosh", Op::Acosh},
      {"Atanh", Op::Atanh},      {"Not", Op::Not},         {"IsNaN", Op::IsNaN},
      {"BitwiseNot", Op::BitNot}};
  for (const auto& [name, op] : unary) t.add(name, unary_op(op));
  const std::pair<const char*, Op> binary[] = {
      {"Add", Op::Add},           {"Sub", Op::Sub},         {"Mul", Op::Mul},
      {"Div", Op::Div},           {"Equal", Op::Eq},        {"Less", Op::Lt},
      {"LessOrEqual", Op::Le},    {"Greater", Op::Gt},      {"GreaterOrEqual", Op::Ge},
      {"And", Op::And},           {"Or", Op::Or},           {"Xor", Op::Xor},
      {"BitwiseAnd", Op::BitAnd}, {"BitwiseOr", Op::BitOr}, {"BitwiseXor", Op::BitXor}};
  for (const auto& [name, op] : binary) t.add(name, binary_op(op));
  t.add("BitShift", [](LowerCtx& c) {  // unsigned operands: Shr's zero fill is right for all
    const std::string dir = c.node.attr_string("direction", "");
    if (dir != "LEFT" && dir != "RIGHT")
      c.error("direction must be LEFT or RIGHT, got '", dir, "'");
    return binary_op(dir == "LEFT" ? Op::Shl : Op::Shr)(c);
  });
  t.add("Max", variadic_op(Op::Max, false));
  t.add("Min", variadic_op(Op::Min, false));
  t.add("Sum", variadic_op(Op::Add, false));
  t.add("Mean", variadic_op(Op::Add, true));
  t.add("Pow", lower_pow);
  t.add("Mod", lower_mod);
  t.add("Where", lower_where);
  t.add("Clip", lower_clip);
  t.add("Cast", lower_cast);
  t.add("CastLike", lower_cast);
  t.add("BitCast", lower_bitcast);
  t.add("IsInf", lower_isinf);
  register_activations(t);
  register_thresholds(t);
}

}  // namespace ferrite
