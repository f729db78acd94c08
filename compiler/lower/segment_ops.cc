// ferrite.SegmentReduce (graph/ferrite_ops.h, made by passes/fuse_message_passing.cc)
// becomes the "SegmentReduce" extern (runtime/kernels/reference/segment_reduce.h) when its
// operands have the shapes that extern takes; otherwise its ferrite_unfused subgraph (the
// Gather / Mul / Unsqueeze / Expand / ScatterElements it replaced) is lowered instead. A
// fused epilogue (post-ops after input 6) goes into the extern on float32, else pointwise.
#include <optional>

#include "compiler/graph/ferrite_ops.h"
#include "compiler/lower/lowering.h"
#include "compiler/plan/externs/segment_reduce_call.h"

namespace ferrite {
namespace {

bool is_index(const TensorBoxPtr& t) {
  return t && (t->dtype == DType::I32 || t->dtype == DType::I64) && t->size.size() == 1;
}

bool all_zero(const TensorData& d) {
  for (uint8_t b : d.bytes)
    if (b != 0) return false;
  return true;
}

// The extern's reduction for the node's, if it takes it.
std::optional<ReduceKind> reduction_of(const LowerCtx& c) {
  const std::string r = c.node.attr_string("reduction", "");
  if (r == "add") return ReduceKind::Sum;
  if (r == "max") return ReduceKind::Max;
  if (r == "min") return ReduceKind::Min;
  return std::nullopt;
}

// Whether Expand([E, 1], shape) is [E, F] (the index the scatter reads is then dst[e] for
// every (e, f)).
bool expands_to(const std::vector<int64_t>& shape, int64_t e, int64_t f) {
  std::vector<int64_t> out{e, 1};
  if (shape.size() > 2) return false;
  const std::vector<int64_t> s(shape.begin(), shape.end());
  for (size_t i = 0; i < s.size(); ++i) {
    int64_t& d = out[out.size() - s.size() + i];
    if (s[i] != d && s[i] != 1 && d != 1) return false;
    if (d == 1) d = s[i];
  }
  return out == std::vector<int64_t>{e, f};
}

bool extern_takes(LowerCtx& c) {
  const TensorBoxPtr &x = c.input(0), &src = c.input(1), &dst = c.input(2), &data = c.input(4);
  const std::optional<ReduceKind> kind = reduction_of(c);
  if (!kind || x->size.size() != 2 || !is_index(src) || !is_index(dst)) return false;
  // uint64 max / min order differently from the scalar arithmetic the extern shares.
  if (x->dtype == DType::U64 && *kind != ReduceKind::Sum) return false;
  const int64_t e = src->size[0], f = x->size[1];
  if (dst->size[0] != e || data->dtype != x->dtype || data->size.size() != 2 ||
      data->size[1] != f || dtype_size(x->dtype) == 0)
    return false;
  if (c.has(3)) {
    const TensorBoxPtr& w = c.input(3);
    if (w->dtype != x->dtype || w->size != std::vector<int64_t>{e, 1}) return false;
  }
  // An expanded index (inputs 5 and 6, when given) must be [E, F] with its shape known.
  for (size_t i : {5, 6}) {
    if (!c.has(i)) continue;
    std::shared_ptr<const TensorData> shape = c.gl.constant_data(c.input(i));
    if (!shape || !expands_to(shape->to_ints(), e, f)) return false;
  }
  return true;
}

std::vector<TensorBoxPtr> lower_unfused(LowerCtx& c) {
  auto it = c.node.attrs.find(kUnfusedAttr);
  if (it == c.node.attrs.end() || it->second.kind != AttrKind::Graph || !it->second.g)
    c.error("operands the SegmentReduce extern does not take, and no ", kUnfusedAttr,
            " subgraph to compute them with");
  std::vector<TensorBoxPtr> args;
  for (size_t i = 0; i < 7; ++i)
    if (c.has(i)) args.push_back(c.input(i));
  std::vector<TensorBoxPtr> out = c.gl.lower_subgraph(*it->second.g, args, c.node);
  if (out.size() != 1) c.error(kUnfusedAttr, " must have one output");
  const EpiloguePost post = epilogue_nodes(c);
  return {post ? post(out[0]) : out[0]};
}

std::vector<TensorBoxPtr> lower_segment_reduce(LowerCtx& c) {
  if (c.in.size() < 7 || !c.has(0) || !c.has(1) || !c.has(2) || !c.has(4))
    c.error("expects inputs x, src, dst, weight, data, scatter_shape and gather_shape (weight ",
            "and the shapes may be omitted)");
  if (!extern_takes(c)) return lower_unfused(c);
  const TensorBoxPtr &x = c.input(0), &data = c.input(4);
  ExternNode e;
  encode_extern(SegmentReduceCall{*reduction_of(c), data->size[0], c.has(3)}, &e);
  e.origin = c.origin();
  for (size_t i = 0; i < 3; ++i) e.inputs.push_back(c.gl.extern_operand(c.input(i)));
  if (c.has(3)) {
    ExternOperand w = c.gl.extern_operand(c.input(3));  // [E, 1] read as [E]
    w.shape.pop_back();
    w.strides.pop_back();
    e.inputs.push_back(w);
  }
  // Scattering into zeros (the usual case) needs no data operand.
  std::shared_ptr<const TensorData> d = c.gl.constant_data(data);
  if (!d || !all_zero(*d)) e.inputs.push_back(c.gl.extern_operand(data));
  // The epilogue (fuse_extern_epilogues) on float32 rows, after each row's reduction.
  Buffer* out = c.gl.new_buffer("", x->dtype, data->size, BufferOrigin::Extern);
  e.outputs.push_back(out);
  return {add_extern_with_epilogue(c, std::move(e), make_buffer_box(out), epilogue_nodes(c))};
}

}  // namespace

void register_segment_ops(LoweringTable& t) {
  t.add("ferrite.SegmentReduce", lower_segment_reduce);
}

}  // namespace ferrite
