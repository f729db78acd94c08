#include "compiler/lower/graph_lowering.h"

#include "compiler/graph/ferrite_ops.h"

#include <algorithm>
#include <cctype>
#include <unordered_map>

#include "compiler/graph/layout_attr.h"
#include "compiler/lower/lowering.h"
#include "compiler/plan/error.h"
#include "compiler/plan/interpret.h"
#include "compiler/plan/stage_times.h"

namespace ferrite {
namespace {

// Inductor's thresholds: realize a value read by several users when it is not trivial to
// recompute, and any value whose inlined definition has accumulated many reads.
constexpr int kRealizeReadsThreshold = 8;
constexpr int kReuseComputeThreshold = 3;
// Constants larger than this stay views instead of being folded into new tensors.
constexpr int64_t kFoldElementLimit = int64_t{1} << 22;
// Folding runs the scalar interpreter, about 5 ns a step natively (interpret_work; 20
// times that under the fuzz build's sanitizers): the folds of one compile together take at
// most kFoldWorkLimit steps, and what is past it is left to run time, where
// a backend runs it vectorized. A Resize of a constant to 3.1M elements folded in 3.5 s (84 s
// in the fuzz harness); an empty input's reductions folded to 3.4M-element constants one
// after another (or one in each of 255 Scan iterations) in 4.6 s; a 1M-element
// ConstantOfShape (3M) still folds. Small folds (shapes, indices, scalars: at most
// kFoldSmallWork) never count, so a model whose large constants spent the budget still folds
// the shape arithmetic it needs at compile time. The bundled models fold nothing large.
constexpr double kFoldWorkLimit = double{1 << 24};
constexpr double kFoldSmallWork = double{1 << 16};
constexpr size_t kMaxSubgraphDepth = 32;
// Loaders call their producers' loaders, so inlining is recursion: a value whose inlined
// definition nests deeper than this is realized, which bounds the stack every walk and
// kernel build needs (a chain of 10,000 Relus overflowed it, natively and in wasm), and
// fusion joins the pieces into one kernel again. Real models nest a few levels (the ONNX
// node tests at most 6).
constexpr int kMaxInlineDepth = 128;
// Likewise a view (a graph value that remaps another's index) is copied into a buffer of
// its own when it composes more than kMaxInlineDepth views, or when its index, as a tree,
// has more nodes than this: a chain of reshapes and transposes that strides cannot express
// grows it exponentially (each level reads the one below twice, as a quotient and a
// remainder), and every load prints and simplifies it. The node tests reach 474 nodes
// (DepthToSpace's 6-D reshape, transpose, reshape), the test models 38.
constexpr int64_t kMaxViewIndexNodes = 1024;

// Nodes of `e` as a tree (shared subexpressions counted at each use, as printing and
// simplifying an index visit them), saturating at `cap`; memo: per shared node.
int64_t tree_size(const Index& e, int64_t cap,
                  std::unordered_map<const IndexNode*, int64_t>* memo) {
  if (!e) return 0;
  auto it = memo->find(e.get());
  if (it != memo->end()) return it->second;
  const int64_t n = std::min(cap, 1 + tree_size(e->a, cap, memo) + tree_size(e->b, cap, memo));
  (*memo)[e.get()] = n;
  return n;
}

bool is_narrow(DType t) {
  return t != DType::F32 && t != DType::F64 && t != DType::I64 && t != DType::Bool;
}

}  // namespace

// What the realize policy and constant folding need to know of a value's inlined
// definition: its loads and compute instructions as inlining counts them, and whether every
// buffer it loads is a compile-time constant. The walks go through one memoizing builder
// (KernelBuilder::walk_once), so a definition already traced is not walked again: a chain
// of N inlined values costs O(N) to trace, where a fresh builder per value cost O(N^2).
GraphLowering::TraceStats GraphLowering::trace(const TensorBoxPtr& t) {
  StageTimer timer("lower/trace");
  KernelBuilder& b = *tracer_;
  const int loads = b.num_loads(), compute = b.num_compute(), variable = b.num_variable_loads();
  std::vector<Index> idx;
  for (size_t d = 0; d < t->size.size(); ++d) idx.push_back(ix_var(static_cast<int>(d)));
  b.reset_walk_height();
  t->load(b, idx);
  TraceStats s;
  s.height = b.walk_height();
  s.reads = b.num_loads() - loads;
  s.compute = b.num_compute() - compute;
  s.all_constant = b.num_variable_loads() == variable;
  return s;
}

GraphLowering::GraphLowering(const Graph& g, const std::vector<TensorType>& input_types,
                             const std::vector<std::shared_ptr<const TensorData>>& input_values)
    : g_(g),
      input_types_(input_types),
      input_values_(input_values),
      values_asked_(!input_values.empty()),
      tracer_(std::make_unique<KernelBuilder>("trace", std::vector<int64_t>{}, 0)) {
  tracer_->set_memoize(true);
  input_values_.resize(input_types_.size());
  if (input_types_.size() != g_.inputs.size()) {
    fail("compile: ", g_.inputs.size(), " inputs declared, ", input_types_.size(), " given");
  }
}

Buffer* GraphLowering::new_buffer(const std::string& name, DType dtype, std::vector<int64_t> size,
                                  BufferOrigin origin) {
  auto b = std::make_unique<Buffer>();
  b->id = next_buffer_++;
  b->name = name.empty() ? str_cat("buf", b->id) : name;
  b->dtype = dtype;
  b->size = std::move(size);
  b->origin = origin;
  prog_.buffers.push_back(std::move(b));
  return prog_.buffers.back().get();
}

int64_t GraphLowering::hint(const Index& formula) const {
  if (!shapes_) fail("internal: a symbol's hint outside a symbolic compile");
  return eval_size_formula(*formula, shapes_->hints());
}

Buffer* GraphLowering::symbol_values() {
  if (!shapes_) fail("internal: symbol values outside a symbolic compile");
  if (!prog_.symbol_values) {
    const int64_t n = static_cast<int64_t>(shapes_->symbols.size());
    prog_.symbol_values = new_buffer("symbols", DType::I64, {n}, BufferOrigin::Input);
    prog_.symbol_values->sym = std::vector<Index>{ix_const(n)};
  }
  return prog_.symbol_values;
}

void GraphLowering::assume(const Index& formula, int64_t lo, int64_t hi, const std::string& why) {
  const int64_t at_hints = hint(formula);
  if (at_hints < lo || at_hints > hi)
    not_symbolic(why, ": needs ", index_to_string(*formula), " in [", lo, ", ", hi,
                 "], which the first sizes break");
  const std::optional<IndexRange> r = sym_range(formula);
  if (r && r->lo >= lo && r->hi <= hi) return;  // the symbols' ranges prove it
  prog_.guards.push_back(SymGuard{formula, lo, hi, why});
}

void GraphLowering::realize(const TensorBoxPtr& t) {
  realize_into(t, nullptr, 0);
}

void GraphLowering::realize_into(const TensorBoxPtr& t, Buffer* owner, int64_t offset) {
  StorageBox& s = *t->storage;
  if (s.realized()) {
    if (owner) fail("internal: realize_into on a realized value");
    return;
  }
  Buffer* buf = new_buffer("", s.dtype, s.size, BufferOrigin::Computed);
  buf->sym = s.sym;
  if (owner) {
    if (owner->origin != BufferOrigin::Assembled || owner->dtype != s.dtype || offset < 0 ||
        offset + buf->elements() > owner->elements()) {
      fail("internal: ", buf->name, " does not fit in ", owner->name, " at offset ", offset);
    }
    buf->alias_of = owner;
    buf->alias_offset = offset;
  }
  buf->def = s.def;
  s.buffer = buf;
  s.def.reset();
  LoweredItem item;
  item.computed = buf;
  std::string origin = buf->def->origin;
  for (char& ch : origin) {
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  }
  // Compiling symbolically, a kernel is over the symbols: its buffer's sym sizes are its
  // ranges, and its indices hold Sym leaves (build_kernel).
  if (symbolic() && !buf->sym) not_symbolic(buf->def->origin, ": a kernel of no symbolic shape");
  StageTimer timer("lower/build_kernel");
  item.kernel =
      build_kernel(buf, str_cat("k", next_kernel_++, "_", origin), &item.args, &item.sym_ranges);
  note_args(buf, item.args);
  item.guards = guards_;
  prog_.order.push_back(std::move(item));
}

TensorBoxPtr GraphLowering::realize_strided(const TensorBoxPtr& t) {
  TensorBoxPtr v = t;
  // A view of sym sizes needs its strides over the symbols too (extern_operand).
  if (!v->strided || (v->sym && !v->strided->sym_offset)) v = copy_box(t, "copy");
  realize(v);
  return v;
}

ExternOperand GraphLowering::extern_operand(const TensorBoxPtr& t) {
  const TensorBoxPtr v = realize_strided(t);
  ExternOperand op;
  int64_t base;
  op.buffer = v->storage->buffer->storage_owner(&base);
  op.shape = v->size;
  op.strides = v->strided->strides;
  op.offset = base + v->strided->offset;
  if (v->sym && v->strided->sym_offset && !v->storage->buffer->alias_of) {
    op.sym_shape = *v->sym;
    op.sym_strides = v->strided->sym_strides;
    op.sym_offset = v->strided->sym_offset;
  }
  return op;
}

int GraphLowering::uses(const Value* v) const {
  auto it = uses_.find(v);
  return it == uses_.end() ? 0 : it->second;
}

size_t GraphLowering::add_extern(ExternNode node) {
  if (symbolic()) {
    if (!node.symbolic) not_symbolic(node.origin, ": its call is compiled per shape");
    for (const ExternOperand& op : node.inputs)
      if (!op.sym_offset) not_symbolic(node.origin, ": an operand of no symbolic shape");
    for (const Buffer* b : node.outputs)
      if (!b->sym) not_symbolic(node.origin, ": a result of no symbolic shape");
  }
  prog_.externs.push_back(std::move(node));
  LoweredItem item;
  item.extern_index = static_cast<int>(prog_.externs.size()) - 1;
  item.guards = guards_;
  prog_.order.push_back(std::move(item));
  return prog_.externs.size() - 1;
}

TensorBoxPtr GraphLowering::box_for(const Value* v) {
  auto it = env_.find(v);
  if (it != env_.end()) return it->second;
  if (v->is_constant()) {
    TensorBoxPtr t = constant_box(*this, v->data, v->name);
    if (symbolic()) {  // the model's own constants: the same for every shape
      t->storage->buffer->sym = sym_consts(v->data->shape);
      t = make_buffer_box(t->storage->buffer);
    }
    env_[v] = t;
    return t;
  }
  fail("compile: value '", v->name, "' is used before it is defined");
}

const Value* GraphLowering::resolve_capture(const Value* v) const {
  // scopes_.back() is the graph that captures; look in the graphs that enclose it.
  for (size_t s = scopes_.size(); s-- > 0;) {
    const Value* outer = scopes_[s]->find(v->name);
    if (outer && outer != v && (outer->is_constant() || env_.count(outer))) return outer;
  }
  fail("compile: subgraph value '", v->name, "' is not defined in any enclosing graph");
}

std::vector<TensorBoxPtr> GraphLowering::lower_subgraph(const Graph& body,
                                                        const std::vector<TensorBoxPtr>& args,
                                                        const Node& owner) {
  if (args.size() != body.inputs.size()) {
    fail(owner.describe(), ": subgraph '", body.name, "' has ", body.inputs.size(), " inputs, but ",
         args.size(), " values are bound to them");
  }
  if (scopes_.size() >= kMaxSubgraphDepth) {
    throw UnsupportedError(
        str_cat(owner.describe(), ": subgraphs nested deeper than ", kMaxSubgraphDepth, " levels"));
  }
  for (const Value* c : body.captures) {
    if (!c->is_constant()) env_[c] = box_for(resolve_capture(c));
  }
  for (size_t i = 0; i < args.size(); ++i) {
    const TensorType& want = body.inputs[i]->type;
    if (want.dtype != DType::Undefined && want.dtype != args[i]->dtype) {
      fail(owner.describe(), ": subgraph input '", body.inputs[i]->name, "' is declared ",
           dtype_name(want.dtype), " but bound to ", dtype_name(args[i]->dtype));
    }
    env_[body.inputs[i]] = args[i];
  }
  // Uses within this body only: the realize policy counts the readers of each value.
  for (const auto& n : body.nodes) {
    for (const Value* v : n->outputs) uses_[v] = 0;
  }
  for (const auto& n : body.nodes) {
    for (const Value* v : n->inputs) {
      if (v) ++uses_[v];
    }
  }
  for (const Value* v : body.outputs) ++uses_[v];
  scopes_.push_back(&body);
  owners_.push_back(&owner);
  for (const auto& n : body.nodes) lower_node(*n);
  owners_.pop_back();
  scopes_.pop_back();
  std::vector<TensorBoxPtr> outs;
  for (const Value* v : body.outputs) outs.push_back(box_for(v));
  return outs;
}

void GraphLowering::realize_captures(const Graph& body) {
  scopes_.push_back(&body);
  for (const Value* c : body.captures) {
    if (!c->is_constant()) realize(box_for(resolve_capture(c)));
  }
  scopes_.pop_back();
}

bool GraphLowering::values_asked() const {
  return values_asked_;
}

void GraphLowering::push_guard(const TensorBoxPtr& cond, bool value) {
  if (cond->dtype != DType::Bool || cond->elements() != 1)
    fail("compile: a guard must be a bool scalar");
  TensorBoxPtr c = cond;
  if (!c->is_identity_view()) c = copy_box(c, "condition");
  realize(c);
  guards_.push_back(LoweredGuard{c->storage->buffer, value});
}

void GraphLowering::pop_guard() {
  guards_.pop_back();
}

TensorBoxPtr constant_box(GraphLowering& gl, std::shared_ptr<const TensorData> data,
                          const std::string& name) {
  Buffer* buf = gl.new_buffer(name, data->dtype, data->shape, BufferOrigin::Constant);
  buf->data = std::move(data);
  return make_buffer_box(buf);
}

bool GraphLowering::never_constant(const Buffer* b) const {
  return b->origin == BufferOrigin::Input || b->origin == BufferOrigin::Extern ||
         b->origin == BufferOrigin::Assembled || unfoldable_.count(b) > 0;
}

void GraphLowering::note_args(Buffer* buf, const std::vector<Buffer*>& args) {
  for (const Buffer* a : args) {
    if (a != buf && never_constant(a)) {
      unfoldable_.insert(buf);
      return;
    }
  }
}

bool GraphLowering::fold_buffer(Buffer* buf) {
  if (buf->origin != BufferOrigin::Computed || buf->elements() > kFoldElementLimit ||
      unfoldable_.count(buf)) {
    return false;
  }
  // A value whose size is a symbol's is never a compile-time constant.
  if (buf->sym && !sym_all_const(*buf->sym)) {
    unfoldable_.insert(buf);
    return false;
  }
  StageTimer timer("lower/fold");
  std::vector<Buffer*> args;
  std::optional<std::vector<Index>> sym_ranges;
  Kernel k = build_kernel(buf, "fold", &args, &sym_ranges);
  // Of static size, but reading at places that depend on a symbol (a slice of a constant
  // table from a run-time offset): not a constant either.
  for (const Instr& in : k.code) {
    if (in.index && index_uses_sym(*in.index)) {
      unfoldable_.insert(buf);
      return false;
    }
  }
  const double work = interpret_work(k);
  const bool small = work <= kFoldSmallWork;
  if (!small && fold_work_ + work > kFoldWorkLimit) {
    unfoldable_.insert(buf);  // not a compile-time constant: no second try
    return false;
  }
  std::vector<void*> ptrs;
  auto out = std::make_shared<TensorData>();
  out->dtype = buf->dtype;
  out->shape = buf->size;
  out->bytes.assign(static_cast<size_t>(buf->elements()) * dtype_size(buf->dtype), 0);
  for (Buffer* a : args) {
    if (a == buf) {
      ptrs.push_back(out->bytes.mutable_data());
    } else if (a->origin == BufferOrigin::Constant) {
      ptrs.push_back(const_cast<uint8_t*>(a->data->bytes.data()));
    } else {
      note_args(buf, args);
      return false;
    }
  }
  interpret_kernel(k, ptrs.data());
  if (!small) fold_work_ += work;
  buf->origin = BufferOrigin::Constant;
  buf->data = std::move(out);
  buf->def.reset();
  return true;
}

TensorBoxPtr GraphLowering::try_fold(const TensorBoxPtr& t) {
  if (t->storage->realized()) {
    Buffer* buf = t->storage->buffer;
    // The memoized walks that loaded it counted it as a variable load.
    if (fold_buffer(buf) && tracer_->has_arg(buf)) tracer_->forget_walks();
    if (t->is_identity_view()) return t;
  }
  if (t->elements() > kFoldElementLimit) return t;
  if (t->storage->def && t->storage->def->is_reduction) return t;
  if (!trace(t).all_constant) return t;
  Buffer* buf = new_buffer("", t->dtype, t->size, BufferOrigin::Computed);
  buf->sym = t->sym;
  buf->def = std::make_shared<ComputedDef>();
  buf->def->ranges = t->size;
  buf->def->fn = t->loader();
  if (!fold_buffer(buf)) return t;
  return make_buffer_box(buf);
}

std::shared_ptr<const TensorData> GraphLowering::constant_data(const TensorBoxPtr& t) {
  TensorBoxPtr f = try_fold(t);
  if (f->is_identity_view() && f->storage->realized() &&
      f->storage->buffer->origin == BufferOrigin::Constant) {
    return f->storage->buffer->data;
  }
  return nullptr;
}

TensorBoxPtr GraphLowering::apply_realize_policy(const Node& n, const Value* v,
                                                 const TensorBoxPtr& t) {
  StorageBox& s = *t->storage;
  if (s.realized() || !t->is_identity_view()) return t;
  bool now = s.def->is_reduction || is_narrow(t->dtype);
  if (!now) {
    TraceStats st = trace(t);
    int users = uses_[v];
    now = st.reads > kRealizeReadsThreshold || st.height >= kMaxInlineDepth ||
          (users > 1 && (st.reads > 1 || st.compute > kReuseComputeThreshold));
  }
  if (!now) return t;
  // A convolution's own output is realized already, but for the requantized one of
  // QLinearConv, computed from its channels-last sums.
  const bool channels_last =
      n.attr_string(kStoreAttr, "") == kChannelsLastLayout ||
      n.attr_string(kLayoutAttr, "") == kChannelsLastLayout ||
      (!owners_.empty() && owners_.back()->attr_string(kLayoutAttr, "") == kChannelsLastLayout);
  if (channels_last && !s.def->is_reduction && t->size.size() >= 3 &&
      t->size[1] >= kMinChannelsLast)
    return realize_channels_last(t);
  realize(t);
  return t;
}

TensorBoxPtr GraphLowering::realize_channels_last(const TensorBoxPtr& t) {
  const size_t r = t->size.size();
  std::vector<int> var(r);  // stored dim var[d] holds logical dim d
  var[0] = 0;
  var[1] = static_cast<int>(r - 1);
  for (size_t d = 2; d < r; ++d) var[d] = static_cast<int>(d - 1);
  std::vector<int64_t> stored(r);
  for (size_t d = 0; d < r; ++d) stored[static_cast<size_t>(var[d])] = t->size[d];
  const Loader fn = t->loader();
  Loader stored_fn = [fn, var](KernelBuilder& b, const std::vector<Index>& s) {
    std::vector<Index> i;
    for (int v : var) i.push_back(s[static_cast<size_t>(v)]);
    return fn(b, i);
  };
  TensorBoxPtr p = make_pointwise_box(t->dtype, stored, stored_fn, t->storage->def->origin);
  realize(p);
  return permute_view(p, var);
}

const LowerFn& lowering_for(const Node& n) {
  const auto& table = lowering_table().fns;
  const bool own = n.domain == kFerriteDomain;        // graph/ferrite_ops.h
  const bool contrib = n.domain == kMicrosoftDomain;  // lower/contrib_ops.cc
  const bool ml = n.domain == "ai.onnx.ml";           // lower/ml_ops.cc
  // ONNX's experimental ops: FlexAttention (attention_ops.cc), the optimizers
  // (training_ops.cc).
  const bool preview = n.domain == "ai.onnx.preview" || n.domain == "ai.onnx.preview.training";
  if (!n.domain.empty() && n.domain != "ai.onnx" && !own && !contrib && !ml && !preview) {
    throw UnsupportedError(
        str_cat(n.describe(), ": operator domain '", n.domain, "' is not supported"));
  }
  auto it = table.find(own                        ? str_cat("ferrite.", n.op_type)
                       : contrib || ml || preview ? str_cat(n.domain, ".", n.op_type)
                                                  : n.op_type);
  if (it == table.end()) throw UnsupportedError(str_cat(n.describe(), ": unsupported operator"));
  return it->second;
}

void check_ops_supported(const Graph& g) {
  for (const auto& n : g.nodes) {
    lowering_for(*n);
    for (const auto& attr : n->attrs) {
      if (attr.second.g) check_ops_supported(*attr.second.g);
      for (const auto& sub : attr.second.graphs) check_ops_supported(*sub);
    }
  }
}

void GraphLowering::lower_node(const Node& n) {
  const LowerFn& lower = lowering_for(n);
  for (const std::vector<Value*>* values : {&n.inputs, &n.outputs}) {
    for (const Value* v : *values) {
      if (v && v->type.container != Container::Tensor)
        throw NeedsCutError(str_cat(n.describe(), ": its value '", v->name, "' is a ",
                                    v->type.to_string(), ", which the engine holds"));
    }
  }
  LowerCtx c{*this, n, {}, g_.opset("")};
  bool sizes_in = false;  // an input is a value computed from sizes (sym_values.cc)
  for (const Value* v : n.inputs) {
    c.in.push_back(v ? box_for(v) : nullptr);
    sizes_in = sizes_in || (c.in.back() && c.in.back()->sym_value);
  }
  std::vector<TensorBoxPtr> outs;
  try {
    outs = sizes_in && is_size_arithmetic(n) ? lower_size_arithmetic(c) : lower(c);
  } catch (const UnsupportedError&) {
    throw;
  } catch (const Error& e) {
    std::string msg = e.what();
    if (msg.rfind(n.describe(), 0) == 0) throw;
    fail(n.describe(), ": ", msg);
  }
  if (outs.size() < n.outputs.size()) {
    for (size_t i = outs.size(); i < n.outputs.size(); ++i) {
      if (n.outputs[i] && uses_[n.outputs[i]] > 0) {
        throw UnsupportedError(str_cat(n.describe(), ": output ", i, " is not supported"));
      }
    }
  }
  for (size_t i = 0; i < n.outputs.size() && i < outs.size(); ++i) {
    const Value* v = n.outputs[i];
    if (!v) continue;
    if (!outs[i]) {  // a lowering may skip an output nobody reads
      if (uses_[v] > 0) fail(n.describe(), ": internal: output ", i, " was not lowered");
      continue;
    }
    // Every lowering that makes a value of no sym sizes from values with them is one not
    // ported yet, and nothing ported makes sym sizes of it again: stop here, not after
    // lowering the rest of the model.
    if (symbolic() && !outs[i]->sym) not_symbolic(n.describe(), ": not symbolic yet");
    if (outs[i]->sym_value) {  // formulas, not data: nothing to fold or realize
      env_[v] = outs[i];
      continue;
    }
    env_[v] = apply_realize_policy(n, v, try_fold(bound_view(outs[i])));
  }
}

TensorBoxPtr GraphLowering::bound_view(const TensorBoxPtr& t) {
  if (t->is_identity_view()) return t;
  std::vector<Index> vars;
  for (size_t d = 0; d < t->size.size(); ++d) vars.push_back(ix_var(static_cast<int>(d)));
  std::unordered_map<const IndexNode*, int64_t> memo;
  int64_t nodes = 0;
  for (const Index& e : (*t->reindex)(vars)) nodes += tree_size(e, kMaxViewIndexNodes + 1, &memo);
  if (t->view_depth <= kMaxInlineDepth && nodes <= kMaxViewIndexNodes) return t;
  TensorBoxPtr copy = copy_box(t, "view copy");
  realize(copy);
  return copy;
}

Buffer* GraphLowering::realize_output(const TensorBoxPtr& t, int index) {
  TensorBoxPtr v = t;
  auto own_storage = [](const Buffer* b) {
    return (b->origin == BufferOrigin::Computed || b->origin == BufferOrigin::Extern ||
            b->origin == BufferOrigin::Assembled) &&
           !b->alias_of && b->output_index < 0;
  };
  bool reuse =
      v->is_identity_view() && (!v->storage->realized() || own_storage(v->storage->buffer));
  if (!reuse) v = copy_box(t, "output copy");
  realize(v);
  Buffer* buf = v->storage->buffer;
  if (symbolic() && !buf->sym) not_symbolic("output ", index, ": no symbolic shape");
  buf->output_index = index;
  return buf;
}

std::string lowered_program_to_string(const LoweredProgram& prog) {
  auto shape = [](const Buffer* b) { return TensorType{b->dtype, b->size, {}, true}.to_string(); };
  std::string out;
  for (const Buffer* b : prog.inputs) out += str_cat("input  ", b->name, ": ", shape(b), "\n");
  for (const LoweredItem& it : prog.order) {
    if (it.computed) {
      const Buffer* b = it.computed;
      if (b->origin == BufferOrigin::Constant) {
        out += str_cat("folded ", b->name, ": ", shape(b), "\n");
        continue;
      }
      const ComputedDef& d = *b->def;
      out += str_cat(d.is_reduction ? "reduce " : "pointwise ", b->name, ": ", shape(b), " from ",
                     d.origin);
      if (d.is_reduction) {
        out += str_cat(" (", reduce_name(d.reduce), " over ",
                       TensorType{b->dtype, d.reduction_ranges, {}, true}.to_string(), ")");
      }
      if (b->alias_of) out += str_cat(" (in ", b->alias_of->name, " at ", b->alias_offset, ")");
      out += b->output_index >= 0 ? str_cat(" -> output ", b->output_index, "\n") : "\n";
    } else {
      const ExternNode& e = prog.externs[it.extern_index];
      out += str_cat("extern ", extern_op_name(e.op), " from ", e.origin, ":");
      for (const auto& op : e.inputs) out += " " + op.buffer->name;
      out += " ->";
      for (const Buffer* b : e.outputs) out += " " + b->name + " " + shape(b);
      out += "\n";
    }
  }
  return out;
}

LoweredProgram GraphLowering::run() {
  scopes_ = {&g_};
  if (symbolic()) {
    if (values_asked_) fail("internal: a symbolic compile given input values");
    if (shapes_->input_sizes.size() != g_.inputs.size())
      fail("internal: the shape env has ", shapes_->input_sizes.size(), " inputs");
    prog_.symbols = shapes_->symbols;
  }
  for (const auto& n : g_.nodes) {
    for (const Value* v : n->inputs) {
      if (v) ++uses_[v];
    }
  }
  for (const Value* v : g_.outputs) ++uses_[v];
  for (size_t i = 0; i < g_.inputs.size(); ++i) {
    const TensorType& t = input_types_[i];
    Buffer* b = new_buffer(g_.inputs[i]->name, t.dtype, t.shape, BufferOrigin::Input);
    b->input_index = static_cast<int>(i);
    if (symbolic()) b->sym = shapes_->input_sizes.at(i);
    prog_.inputs.push_back(b);
    const auto& value = input_values_[i];
    if (value && value->dtype == t.dtype && value->shape == t.shape) {
      // Specialized on this input's value: downstream uses fold at compile time.
      env_[g_.inputs[i]] = constant_box(*this, value, g_.inputs[i]->name);
    } else {
      env_[g_.inputs[i]] = make_buffer_box(b);
    }
  }
  for (const auto& n : g_.nodes) {
    try {
      lower_node(*n);
    } catch (NeedsCutError& e) {
      // Raised here or inside this node's subgraphs: the cut is at this top-level node.
      e.node_output = n->outputs.empty() ? "" : n->outputs[0]->name;
      throw;
    }
  }
  for (size_t i = 0; i < g_.outputs.size(); ++i) {
    Buffer* b = realize_output(box_for(g_.outputs[i]), static_cast<int>(i));
    b->name = g_.outputs[i]->name;
    prog_.outputs.push_back(b);
  }
  return std::move(prog_);
}

}  // namespace ferrite
