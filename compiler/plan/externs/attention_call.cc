#include "compiler/plan/externs/attention_call.h"

#include <algorithm>
#include <cmath>

#include "compiler/plan/error.h"
#include "compiler/plan/plan.h"

namespace ferrite {
ExternAttrs encode(const AttentionCall& c) {
  ExternAttrs a;
  a.floats["scale"] = c.scale;
  a.floats["softcap"] = c.softcap;
  a.ints["causal"] = c.causal;
  a.ints["causal_offset"] = c.causal_offset;
  a.ints["offset_from_lengths"] = c.offset_from_lengths;
  a.ints["left_window"] = c.left_window;
  a.ints["right_window"] = c.right_window;
  a.ints["empty_rows_nan"] = c.empty_rows_nan;
  a.ints["mask"] = c.mask;
  a.ints["key_lengths"] = c.key_lengths;
  a.ints["sinks"] = c.sinks;
  return a;
}

AttentionCall decode_attention_call(const ExternCall& call, int64_t head_size) {
  const char* op = "Attention";
  if (call.op != ExternOp::Attention)
    fail("extern '", extern_op_name(call.op), "' is not an Attention");
  AttentionCall c;
  c.scale = decode_float(call, "scale", 0);
  if (!std::isfinite(c.scale)) fail(op, ": scale must be finite, got ", c.scale);
  if (c.scale == 0) c.scale = 1 / std::sqrt(static_cast<double>(std::max<int64_t>(head_size, 1)));
  c.softcap = decode_float(call, "softcap", 0);
  if (!std::isfinite(c.softcap) || c.softcap < 0)
    fail(op, ": softcap must be finite and >= 0, got ", c.softcap);
  // Backends compute in float32: both factors become the float32 values every backend uses
  // (a softcap that rounds to 0 is none).
  const float scale32 = static_cast<float>(c.scale), softcap32 = static_cast<float>(c.softcap);
  if (!std::isfinite(scale32) || !std::isfinite(softcap32))
    fail(op, ": scale ", c.scale, " or softcap ", c.softcap, " is outside float32's range");
  c.scale = scale32;
  c.softcap = softcap32;
  c.causal = decode_flag(call, op, "causal");
  c.causal_offset = decode_int(call, "causal_offset", 0);
  c.offset_from_lengths = decode_flag(call, op, "offset_from_lengths");
  c.left_window = decode_int(call, "left_window", -1);
  c.right_window = decode_int(call, "right_window", -1);
  if (c.left_window < -1 || c.right_window < -1)
    fail(op, ": windows must be >= -1, got ", c.left_window, " and ", c.right_window);
  c.empty_rows_nan = decode_flag(call, op, "empty_rows_nan");
  c.mask = decode_flag(call, op, "mask");
  c.key_lengths = decode_flag(call, op, "key_lengths");
  c.sinks = decode_flag(call, op, "sinks");
  if (c.offset_from_lengths && !c.key_lengths) fail(op, ": offset_from_lengths needs key lengths");
  // |offsets| stay far from int64's ends, so i + offset +- window cannot overflow.
  const int64_t big = int64_t{1} << 60;
  if (c.causal_offset < -big || c.causal_offset > big || c.left_window > big ||
      c.right_window > big)
    fail(op, ": causal_offset or a window is out of range");
  return c;
}

}  // namespace ferrite
