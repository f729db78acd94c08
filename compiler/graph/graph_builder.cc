// GraphBuilder and the attr_* helpers: the short way tests and passes build graphs.
#include <cstring>

#include "compiler/graph/graph.h"
#include "compiler/plan/error.h"

namespace ferrite {

namespace {

// Built graphs target the newest opset of the conformance data (1.12 ships opset 17), so
// lowerings pick current semantics unless a test sets g->opsets itself.
constexpr int64_t kDefaultOpset = 17;

int64_t shape_elements(const std::vector<int64_t>& shape, const std::string& what) {
  TensorData probe;
  probe.shape = shape;
  try {
    return probe.elements();
  } catch (const Error& e) {
    fail("GraphBuilder: ", what, ": ", e.what());
  }
}

}  // namespace

GraphBuilder::GraphBuilder() : g_(std::make_unique<Graph>()) {
  g_->name = "main";
  g_->opsets[""] = kDefaultOpset;
}

Value* GraphBuilder::input(const std::string& name, DType dtype, std::vector<int64_t> shape) {
  if (!g_) fail("GraphBuilder: used after finish()");
  TensorType type;
  type.dtype = dtype;
  type.shape = std::move(shape);
  return g_->add_input(name, std::move(type));
}

Value* GraphBuilder::constant(const std::string& name, DType dtype, std::vector<int64_t> shape,
                              const void* data) {
  if (!g_) fail("GraphBuilder: used after finish()");
  int64_t n = shape_elements(shape, "constant '" + name + "'");
  size_t size = dtype_size(dtype);
  if (size == 0) {
    fail("GraphBuilder: constant '", name, "' has non-numeric dtype ", dtype_name(dtype));
  }
  auto t = std::make_shared<TensorData>();
  t->dtype = dtype;
  t->shape = std::move(shape);
  const size_t nbytes = static_cast<size_t>(n) * size;
  if (nbytes != 0) {
    if (!data) fail("GraphBuilder: constant '", name, "' has no data");
    const uint8_t* p = static_cast<const uint8_t*>(data);
    t->bytes.assign(p, p + nbytes);
  }
  return g_->add_constant(name, std::move(t));
}

Value* GraphBuilder::constant_f32(std::vector<int64_t> shape, std::vector<float> values) {
  int64_t n = shape_elements(shape, "constant_f32");
  if (static_cast<uint64_t>(n) != values.size()) {
    fail("GraphBuilder: constant_f32 has ", values.size(), " values for ", n, " elements");
  }
  return constant("", DType::F32, std::move(shape), values.data());
}

Value* GraphBuilder::constant_i64(std::vector<int64_t> shape, std::vector<int64_t> values) {
  int64_t n = shape_elements(shape, "constant_i64");
  if (static_cast<uint64_t>(n) != values.size()) {
    fail("GraphBuilder: constant_i64 has ", values.size(), " values for ", n, " elements");
  }
  return constant("", DType::I64, std::move(shape), values.data());
}

Value* GraphBuilder::op(const std::string& op_type, std::vector<Value*> ins,
                        std::map<std::string, Attribute> attrs, int num_outputs) {
  if (!g_) fail("GraphBuilder: used after finish()");
  if (num_outputs < 1) fail("GraphBuilder: ", op_type, " needs at least one output");
  std::vector<Value*> outs;
  for (int k = 0; k < num_outputs; ++k) {
    TensorType unknown;
    unknown.rank_known = false;  // shape inference fills these in later
    outs.push_back(g_->add_value("", std::move(unknown)));
  }
  last_ = g_->add_node(op_type, std::move(ins), std::move(outs));
  last_->attrs = std::move(attrs);
  return last_->outputs[0];
}

std::unique_ptr<Graph> GraphBuilder::finish() {
  if (!g_) fail("GraphBuilder: finish() called twice");
  g_->rebuild_uses();
  g_->validate();
  last_ = nullptr;
  return std::move(g_);
}

Attribute attr_i(int64_t v) {
  Attribute a;
  a.kind = AttrKind::Int;
  a.i = v;
  return a;
}

Attribute attr_f(double v) {
  Attribute a;
  a.kind = AttrKind::Float;
  a.f = v;
  return a;
}

Attribute attr_s(std::string v) {
  Attribute a;
  a.kind = AttrKind::String;
  a.s = std::move(v);
  return a;
}

Attribute attr_is(std::vector<int64_t> v) {
  Attribute a;
  a.kind = AttrKind::Ints;
  a.ints = std::move(v);
  return a;
}

Attribute attr_fs(std::vector<double> v) {
  Attribute a;
  a.kind = AttrKind::Floats;
  a.floats = std::move(v);
  return a;
}

}  // namespace ferrite
