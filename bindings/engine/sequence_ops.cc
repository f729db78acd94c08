#include "bindings/engine/sequence_ops.h"

#include <cstring>
#include <utility>

#include "bindings/engine/engine_op.h"
#include "compiler/frontend/onnx/onnx_tensor.h"
#include "compiler/plan/error.h"
#include "compiler/plan/resource_limits.h"
#include "compiler/plan/scalar_ops.h"

namespace ferrite {
namespace {

using ItemRef = EngineValue::TensorRef;

struct SeqCtx : EngineOp {
  const std::vector<ItemRef>& items(size_t i) const {
    return input(i).items(str_cat(what, ": input ", i));
  }
  // A scalar integer input (a position, a split size).
  int64_t scalar(size_t i, const char* name) const {
    const Tensor& t = tensor(i);
    if (t.elements() != 1 || dtype_is_float(t.dtype()) || t.dtype() == DType::Bool)
      error(name, " must be one integer, got ", tensor_type_text(t));
    return load_element(t.dtype(), t.data(), 0).i64;
  }
  int64_t attr(const char* key, int64_t dflt) const { return node.attr_int(key, dflt); }
};

// The sequence's element type with `t` added: tensors of one sequence share theirs.
DType joined_dtype(const SeqCtx& c, DType elem, const Tensor& t) {
  if (elem != DType::Undefined && elem != t.dtype())
    c.error("a ", dtype_name(t.dtype()), " tensor in a sequence of ", dtype_name(elem));
  return t.dtype();
}

// A position in [-n, n - 1] (or [-n, n] where `end_ok`), made non-negative.
size_t position(const SeqCtx& c, int64_t p, size_t n, bool end_ok) {
  const int64_t len = static_cast<int64_t>(n);
  if (p < -len || p > (end_ok ? len : len - 1))
    c.error("position ", p, " out of range for a sequence of ", n);
  return static_cast<size_t>(p < 0 ? p + len : p);
}

int64_t product(const std::vector<int64_t>& dims, size_t from, size_t to) {
  int64_t n = 1;
  for (size_t d = from; d < to; ++d) n *= dims[d];
  return n;
}

// The tensors of `items` joined along `axis` (new_axis: stacked along a new axis there).
Tensor concat(const SeqCtx& c, const std::vector<ItemRef>& items, int64_t axis_attr,
              bool new_axis) {
  if (items.empty()) c.error("an empty sequence has nothing to concatenate");
  const std::vector<int64_t>& first = items[0]->shape();
  const int64_t rank = static_cast<int64_t>(first.size()) + (new_axis ? 1 : 0);
  if (axis_attr < -rank || axis_attr >= rank || rank == 0)
    c.error("axis ", axis_attr, " out of range for rank ", rank);
  const size_t axis = static_cast<size_t>(axis_attr < 0 ? axis_attr + rank : axis_attr);
  std::vector<int64_t> shape = first;
  if (new_axis) shape.insert(shape.begin() + static_cast<std::ptrdiff_t>(axis), 1);
  int64_t total = 0;
  for (const ItemRef& t : items) {
    std::vector<int64_t> s = t->shape();
    bool fits = t->dtype() == items[0]->dtype() && s.size() == first.size();
    if (fits && new_axis) s.insert(s.begin() + static_cast<std::ptrdiff_t>(axis), 1);
    for (size_t d = 0; fits && d < s.size(); ++d) fits = d == axis || s[d] == shape[d];
    if (!fits)
      c.error("cannot join ", tensor_type_text(*t), " to ", tensor_type_text(*items[0]),
              " along axis ", axis);
    total += s[axis];
  }
  shape[axis] = total;
  int64_t bytes = static_cast<int64_t>(dtype_size(items[0]->dtype()));
  for (int64_t d : shape)
    if (__builtin_mul_overflow(bytes, d, &bytes)) bytes = INT64_MAX;
  check_memory_limit(bytes, c.memory_limit, str_cat(c.what, ": its output"));
  Tensor out(items[0]->dtype(), shape);
  const size_t elem = dtype_size(out.dtype());
  const int64_t outer = product(shape, 0, axis), inner = product(shape, axis + 1, shape.size());
  const size_t out_row = static_cast<size_t>(total * inner) * elem;
  size_t at = 0;
  for (const ItemRef& t : items) {
    const int64_t len = new_axis ? 1 : t->shape()[axis];
    const size_t row = static_cast<size_t>(len * inner) * elem;
    for (int64_t o = 0; o < outer && row; ++o)
      std::memcpy(out.data() + static_cast<size_t>(o) * out_row + at,
                  t->data() + static_cast<size_t>(o) * row, row);
    at += row;
  }
  return out;
}

// `x` cut along `axis` into pieces of `sizes` (keepdims false: size-1 pieces without it).
std::vector<ItemRef> split(const SeqCtx& c, const Tensor& x, size_t axis,
                           const std::vector<int64_t>& sizes, bool keepdims) {
  const std::vector<int64_t>& shape = x.shape();
  const size_t elem = dtype_size(x.dtype());
  const int64_t outer = product(shape, 0, axis), inner = product(shape, axis + 1, shape.size());
  const size_t in_row = static_cast<size_t>(shape[axis] * inner) * elem;
  std::vector<ItemRef> out;
  int64_t start = 0;
  for (int64_t len : sizes) {
    std::vector<int64_t> s = shape;
    s[axis] = len;
    if (!keepdims) s.erase(s.begin() + static_cast<std::ptrdiff_t>(axis));
    auto piece = std::make_shared<Tensor>(x.dtype(), s);
    const size_t row = static_cast<size_t>(len * inner) * elem;
    for (int64_t o = 0; o < outer && row; ++o)
      std::memcpy(
          piece->data() + static_cast<size_t>(o) * row,
          x.data() + static_cast<size_t>(o) * in_row + static_cast<size_t>(start * inner) * elem,
          row);
    start += len;
    out.push_back(std::move(piece));
  }
  (void)c;
  return out;
}

EngineValue split_to_sequence(const SeqCtx& c) {
  const Tensor& x = c.tensor(0);
  const int64_t rank = static_cast<int64_t>(x.shape().size());
  const int64_t a = c.attr("axis", 0);
  if (a < -rank || a >= rank) c.error("axis ", a, " out of range for rank ", rank);
  const size_t axis = static_cast<size_t>(a < 0 ? a + rank : a);
  const int64_t dim = x.shape()[axis];
  std::vector<int64_t> sizes;
  bool keepdims = true;
  if (const EngineValue* s = c.optional(1)) {
    const Tensor& st = s->tensor(c.what + ": split");
    if (dtype_is_float(st.dtype()) || st.dtype() == DType::Bool || st.shape().size() > 1)
      c.error("split must be an integer scalar or list, got ", tensor_type_text(st));
    if (st.shape().empty()) {
      const int64_t chunk = load_element(st.dtype(), st.data(), 0).i64;
      if (chunk <= 0) c.error("split ", chunk, " must be positive");
      for (int64_t at = 0; at < dim; at += chunk) sizes.push_back(std::min(chunk, dim - at));
    } else {
      int64_t sum = 0;
      for (int64_t i = 0; i < st.elements(); ++i) {
        const int64_t len = load_element(st.dtype(), st.data(), static_cast<size_t>(i)).i64;
        if (len < 0) c.error("split size ", len, " is negative");
        if (len > dim - sum) c.error("split sizes sum past the ", dim, " the axis has");
        sizes.push_back(len);
        sum += len;
      }
      if (sum != dim) c.error("split sizes sum to ", sum, ", the axis has ", dim);
    }
  } else {
    sizes.assign(static_cast<size_t>(dim), 1);
    keepdims = c.attr("keepdims", 1) != 0;
  }
  return EngineValue::sequence(x.dtype(), split(c, x, axis, sizes, keepdims));
}

DType sequence_empty_dtype(const SeqCtx& c) {
  return onnx::value_dtype(static_cast<int32_t>(c.attr("dtype", 1)), c.what + ": dtype");
}

}  // namespace

std::vector<EngineValue> run_sequence_op(const Node& node, const std::string& what,
                                         size_t num_outputs,
                                         const std::vector<const EngineValue*>& inputs,
                                         int64_t memory_limit) {
  const SeqCtx c{{node, what, inputs, memory_limit}};
  const std::string& op = node.op_type;
  EngineValue out;
  if (op == "Identity" || op == "Optional") {
    // An optional holding a value is that value; without an input, no value.
    if (const EngineValue* v = c.optional(0)) out = *v;
  } else if (op == "OptionalHasElement") {
    const EngineValue* v = c.optional(0);
    const uint8_t has = v && !v->is_none();
    out = EngineValue::of(Tensor(DType::Bool, {}, &has));
  } else if (op == "OptionalGetElement") {
    if (c.input(0).is_none()) c.error("the optional input holds no value");
    out = c.input(0);
  } else if (op == "SequenceEmpty") {
    out = EngineValue::sequence(sequence_empty_dtype(c), {});
  } else if (op == "SequenceConstruct") {
    DType elem = DType::Undefined;
    std::vector<ItemRef> items;
    for (size_t i = 0; i < inputs.size(); ++i) {
      items.push_back(c.input(i).tensor_ref(str_cat(what, ": input ", i)));
      elem = joined_dtype(c, elem, *items.back());
    }
    out = EngineValue::sequence(elem, std::move(items));
  } else if (op == "SequenceInsert") {
    std::vector<ItemRef> items = c.items(0);
    const ItemRef& t = c.input(1).tensor_ref(what + ": input 1");
    const DType elem = joined_dtype(c, c.input(0).elem_dtype(), *t);
    const size_t at =
        c.optional(2) ? position(c, c.scalar(2, "position"), items.size(), true) : items.size();
    items.insert(items.begin() + static_cast<std::ptrdiff_t>(at), t);
    out = EngineValue::sequence(elem, std::move(items));
  } else if (op == "SequenceAt") {
    const std::vector<ItemRef>& items = c.items(0);
    out = EngineValue::of(items[position(c, c.scalar(1, "position"), items.size(), false)]);
  } else if (op == "SequenceErase") {
    std::vector<ItemRef> items = c.items(0);
    if (items.empty()) c.error("nothing to erase from an empty sequence");
    const size_t at = c.optional(1) ? position(c, c.scalar(1, "position"), items.size(), false)
                                    : items.size() - 1;
    items.erase(items.begin() + static_cast<std::ptrdiff_t>(at));
    out = EngineValue::sequence(c.input(0).elem_dtype(), std::move(items));
  } else if (op == "SequenceLength") {
    const int64_t n = static_cast<int64_t>(c.items(0).size());
    out = EngineValue::of(Tensor(DType::I64, {}, &n));
  } else if (op == "ConcatFromSequence") {
    if (!node.attrs.count("axis")) c.error("attribute 'axis' is required");
    out = EngineValue::of(concat(c, c.items(0), c.attr("axis", 0), c.attr("new_axis", 0) != 0));
  } else if (op == "SplitToSequence") {
    out = split_to_sequence(c);
  } else {
    c.error("not a sequence or optional op");
  }
  std::vector<EngineValue> outs;
  outs.push_back(std::move(out));
  outs.resize(std::min<size_t>(num_outputs, 1));
  return outs;
}

}  // namespace ferrite
