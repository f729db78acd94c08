// The fused epilogue of an extern (compiler/plan/epilogue.h), built when shapes are known by
// the lowering that builds pointwise kernels: the node's ferrite_epilogue subgraph
// (passes/fuse_extern_epilogues.cc) is lowered on the extern's result like any other nodes,
// and the value it computes is traced with a KernelBuilder, as a kernel would compute it,
// into the epilogue's steps. A load of the result at its own element is y; a load of another
// float32 buffer at an affine index is an operand (a view of the result's shape, broadcast
// dims stride 0); a constant read at one element is a Const. What does not trace so (masked
// or indirect loads, casts, integer math, a result of another shape) stays pointwise after
// the extern, correct as before.
#include <algorithm>
#include <utility>

#include "compiler/graph/ferrite_ops.h"
#include "compiler/lower/lowering.h"

namespace ferrite {
namespace {

bool same_operand(const ExternOperand& a, const ExternOperand& b) {
  return a.buffer == b.buffer && a.shape == b.shape && a.strides == b.strides &&
         a.offset == b.offset;
}

// The ids the value depends on (its operands and masks, transitively), ascending.
std::vector<int> reachable(const KernelBuilder& b, V root) {
  std::vector<int> stack{root.id}, out;
  std::vector<char> seen(static_cast<size_t>(root.id) + 1, 0);
  while (!stack.empty()) {
    const int id = stack.back();
    stack.pop_back();
    if (seen[static_cast<size_t>(id)]) continue;
    seen[static_cast<size_t>(id)] = 1;
    out.push_back(id);
    for_each_value_operand(b.instr(V{id}), [&](int32_t x) {
      if (x >= 0) stack.push_back(x);
    });
  }
  std::sort(out.begin(), out.end());
  return out;
}

class Tracer {
 public:
  // scalar_consts: a constant read at one element is a Const step (else an operand, as a
  // bias or a residual is: the form a binary post-op takes, y / 8 as Div by a tensor).
  Tracer(const TensorBoxPtr& y, ExternNode* e, bool scalar_consts)
      : y_(y), e_(e), scalar_consts_(scalar_consts) {}

  const EpilogueBody& body() const { return body_; }

  // The epilogue computing `r` from y, with its new operands; false when it is none.
  bool trace(const TensorBoxPtr& r) {
    if (r->dtype != DType::F32 || y_->dtype != DType::F32 || r->size != y_->size) return false;
    // Compiling symbolically, an epilogue of values that are not symbolic stays pointwise.
    if (e_->symbolic && (!r->sym || !y_->sym)) return false;
    const int rank = static_cast<int>(y_->size.size());
    KernelBuilder b("epilogue", y_->size, 0);
    std::vector<Index> at;
    for (int d = 0; d < rank; ++d) at.push_back(b.var(d));
    const V yv = y_->load(b, at);
    const V rv = r->load(b, at);
    if (b.instr(yv).op != Op::Load) return false;
    y_buffer_ = b.arg_buffers()[static_cast<size_t>(b.instr(yv).arg)];
    std::vector<int32_t> step_of(static_cast<size_t>(rv.id) + 1, -1);
    for (int id : reachable(b, rv)) {
      EpilogueStep s;
      if (!translate(b, b.instr(V{id}), id == yv.id, rank, step_of, &s)) return false;
      step_of[static_cast<size_t>(id)] = static_cast<int32_t>(body_.steps.size());
      body_.steps.push_back(s);
    }
    return true;
  }

  // Attaches the traced epilogue to the extern: no steps when it is y alone.
  void attach() {
    if (body_.steps.size() == 1 && body_.steps[0].op == Op::Load && body_.steps[0].input < 0)
      return;
    const size_t first = e_->inputs.size();
    for (ExternOperand& op : operands_) e_->inputs.push_back(std::move(op));
    for (EpilogueStep& s : body_.steps)
      if (s.op == Op::Load && s.input >= 0) s.input += static_cast<int32_t>(first);
    validate_epilogue(body_, e_->inputs.size(), e_->origin);
    e_->epilogue = std::move(body_);
  }

 private:
  bool translate(const KernelBuilder& b, const Instr& in, bool is_y, int rank,
                 const std::vector<int32_t>& step_of, EpilogueStep* s) {
    if (in.op == Op::Load) return load(b, in, is_y, rank, s);
    if (in.op == Op::Const) {
      if (in.type != ScalarType::F32) return false;
      s->op = Op::Const;
      s->value = static_cast<float>(in.fimm);
      return true;
    }
    const int arity = op_arity(in.op);
    const bool value_op = op_is_unary_math(in.op) || op_is_binary_arith(in.op) ||
                          op_is_compare(in.op) || op_is_logic(in.op) || in.op == Op::Where;
    if (!value_op || arity < 1 || arity > 3 || in.mask >= 0) return false;
    if (in.type != ScalarType::F32 && in.type != ScalarType::Bool) return false;
    s->op = in.op;
    const int32_t ops[3] = {in.a, in.b, in.c};
    int32_t* out[3] = {&s->a, &s->b, &s->c};
    for (int k = 0; k < arity; ++k) {
      const int32_t step = step_of[static_cast<size_t>(ops[k])];
      const ScalarType t = b.instr(V{ops[k]}).type;
      if (step < 0 || (t != ScalarType::F32 && t != ScalarType::Bool)) return false;
      *out[k] = step;
    }
    return true;
  }

  bool load(const KernelBuilder& b, const Instr& in, bool is_y, int rank, EpilogueStep* s) {
    if (in.mask >= 0 || in.type != ScalarType::F32) return false;
    Buffer* buf = b.arg_buffers()[static_cast<size_t>(in.arg)];
    if (is_y) {
      s->op = Op::Load;
      s->input = -1;
      return true;
    }
    AffineIndex a;
    if (buf == y_buffer_ || buf->dtype != DType::F32 || !as_affine(*in.index, rank, &a))
      return false;
    const bool one_element =
        std::all_of(a.coeff.begin(), a.coeff.end(), [](int64_t c) { return c == 0; });
    if (scalar_consts_ && buf->origin == BufferOrigin::Constant && one_element && buf->data &&
        a.offset >= 0 && a.offset < buf->data->elements()) {
      s->op = Op::Const;
      s->value = static_cast<float>(buf->data->float_at(a.offset));
      return true;
    }
    ExternOperand op{buf, y_->size, a.coeff, a.offset, {}, {}, nullptr};
    if (e_->symbolic) {
      // The index is exact for every size (r's sym) and holds no symbol (it is affine), so
      // its coefficients are too.
      op.sym_shape = *y_->sym;
      op.sym_strides = sym_consts(a.coeff);
      op.sym_offset = ix_const(a.offset);
    }
    size_t i = 0;
    while (i < operands_.size() && !same_operand(operands_[i], op)) ++i;
    if (i == operands_.size()) operands_.push_back(op);
    s->op = Op::Load;
    s->input = static_cast<int32_t>(i);
    return true;
  }

  TensorBoxPtr y_;
  ExternNode* e_;
  bool scalar_consts_;
  Buffer* y_buffer_ = nullptr;
  EpilogueBody body_;
  std::vector<ExternOperand> operands_;
};

}  // namespace

EpiloguePost epilogue_nodes(const LowerCtx& c) {
  auto it = c.node.attrs.find(kEpilogueAttr);
  if (it == c.node.attrs.end()) return nullptr;
  if (it->second.kind != AttrKind::Graph || !it->second.g)
    c.error(kEpilogueAttr, " is not a subgraph");
  std::shared_ptr<const Graph> body = it->second.g;
  const size_t operands = body->inputs.empty() ? 0 : body->inputs.size() - 1;
  if (body->inputs.empty() || body->outputs.size() != 1 || operands > c.in.size())
    c.error(kEpilogueAttr, " must take y and the node's last inputs, and give one output");
  std::vector<TensorBoxPtr> args{nullptr};
  for (size_t i = c.in.size() - operands; i < c.in.size(); ++i) {
    if (!c.in[i]) c.error(kEpilogueAttr, " operand ", i, " is omitted");
    args.push_back(c.gl.realize_strided(c.in[i]));
  }
  const Node* node = &c.node;
  GraphLowering* gl = &c.gl;
  return [body, args, node, gl](const TensorBoxPtr& y) mutable {
    args[0] = y;
    return gl->lower_subgraph(*body, args, *node)[0];
  };
}

TensorBoxPtr add_extern_with_epilogue(const LowerCtx& c, ExternNode e, const TensorBoxPtr& y,
                                      const EpiloguePost& post) {
  const size_t index = c.gl.add_extern(std::move(e));
  const size_t items = c.gl.program_size();
  const TensorBoxPtr r = post ? post(y) : y;
  // A value the epilogue's lowering realized may read y as it stands: then it stays pointwise.
  if (r == y || c.gl.program_size() != items) return r;
  // Constants as constants, unless the chain of post-ops the pattern table finds (so that
  // oneDNN and the portable tiles take it) has them as operands.
  ExternNode* call = &c.gl.extern_node(index);
  Tracer t(y, call, true);
  if (!t.trace(r)) return r;
  if (!match_post_ops(t.body())) {
    Tracer operands(y, call, false);
    if (operands.trace(r) && match_post_ops(operands.body())) {
      operands.attach();
      return y;
    }
  }
  t.attach();  // (no steps when r is y through views that change nothing)
  return y;
}

}  // namespace ferrite
