#include "compiler/plan/externs/conv_call.h"

#include <string>

#include "compiler/plan/error.h"
#include "compiler/plan/plan.h"

namespace ferrite {
namespace {

int64_t int_attr(const ExternCall& call, const char* op, const std::string& key, int64_t dflt,
                 int64_t lo) {
  auto it = call.ints.find(key);
  const int64_t v = it == call.ints.end() ? dflt : it->second;
  if (v < lo || v >= kMaxConvExtent || v <= -kMaxConvExtent)
    fail(op, ": ", key, " = ", v, " is out of range [", lo, ", ", kMaxConvExtent, ")");
  return v;
}

}  // namespace

ExternAttrs encode(const ConvCall& c) {
  ExternAttrs a;
  a.ints["group"] = c.group;
  for (size_t d = 0; d < c.stride.size(); ++d) {
    const std::string s = std::to_string(d);
    a.ints["stride" + s] = c.stride[d];
    a.ints["dilation" + s] = c.dilation[d];
    a.ints["pad_begin" + s] = c.pad_begin[d];
    a.ints["pad_end" + s] = c.pad_end[d];
  }
  return a;
}

ConvCall decode_conv_call(const ExternCall& call, size_t spatial) {
  const ExternOp x = call.op;
  if (x != ExternOp::Conv && x != ExternOp::ConvTranspose && x != ExternOp::ConvInteger)
    fail("extern '", extern_op_name(call.op), "' is not a convolution");
  ConvCall c;
  c.transpose = x == ExternOp::ConvTranspose;
  const char* op = extern_op_name(x);
  c.group = int_attr(call, op, "group", 1, 1);
  const int64_t pad_lo = c.transpose ? -kMaxConvExtent + 1 : 0;
  for (size_t d = 0; d < spatial; ++d) {
    const std::string s = std::to_string(d);
    c.stride.push_back(int_attr(call, op, "stride" + s, 1, 1));
    c.dilation.push_back(int_attr(call, op, "dilation" + s, 1, 1));
    c.pad_begin.push_back(int_attr(call, op, "pad_begin" + s, 0, pad_lo));
    c.pad_end.push_back(int_attr(call, op, "pad_end" + s, 0, pad_lo));
  }
  return c;
}

ExternAttrs encode(const ConvIntegerCall& c) {
  ExternAttrs a = encode(c.conv);
  a.ints["x_signed"] = c.x_signed ? 1 : 0;
  a.ints["w_signed"] = c.w_signed ? 1 : 0;
  if (c.requantize) {
    a.ints["requantize"] = 1;
    a.ints["y_signed"] = c.y_signed ? 1 : 0;
    a.ints["y_lo"] = c.y_lo;
    a.ints["y_hi"] = c.y_hi;
  }
  return a;
}

ConvIntegerCall decode_conv_integer_call(const ExternCall& call, size_t spatial) {
  if (call.op != ExternOp::ConvInteger)
    fail("extern '", extern_op_name(call.op), "' is not a ConvInteger");
  ConvIntegerCall c;
  c.conv = decode_conv_call(call, spatial);
  c.x_signed = decode_flag(call, "ConvInteger", "x_signed");
  c.w_signed = decode_flag(call, "ConvInteger", "w_signed");
  c.requantize = decode_flag(call, "ConvInteger", "requantize");
  if (!c.requantize) return c;
  c.y_signed = decode_flag(call, "ConvInteger", "y_signed");
  const int64_t lo = c.y_signed ? -128 : 0, hi = c.y_signed ? 127 : 255;
  c.y_lo = decode_int(call, "y_lo", lo);
  c.y_hi = decode_int(call, "y_hi", hi);
  if (c.y_lo < lo || c.y_lo > hi || c.y_hi < lo || c.y_hi > hi)
    fail("ConvInteger: y_lo = ", c.y_lo, " and y_hi = ", c.y_hi, " must lie in [", lo, ", ", hi,
         "]");
  return c;
}

}  // namespace ferrite
