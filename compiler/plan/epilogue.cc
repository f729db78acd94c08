#include "compiler/plan/epilogue.h"

#include <algorithm>
#include <cstring>

#include "compiler/plan/activations.h"
#include "compiler/plan/error.h"
#include "compiler/plan/scalar_ops.h"

namespace ferrite {
namespace {

// activations.h's builder interface over an epilogue's steps.
struct EpilogueBuilder {
  using V = int32_t;
  EpilogueBody* e;

  V push(const EpilogueStep& s) {
    e->steps.push_back(s);
    return static_cast<V>(e->steps.size() - 1);
  }
  V load(int32_t input) {
    EpilogueStep s;
    s.op = Op::Load;
    s.input = input;
    return push(s);
  }
  V unary(Op op, V x) { return push(EpilogueStep{op, x}); }
  V binary(Op op, V a, V b) { return push(EpilogueStep{op, a, b}); }
  V where(V cond, V a, V b) { return push(EpilogueStep{Op::Where, cond, a, b}); }
  V constant(V, double v) {
    EpilogueStep s;
    s.op = Op::Const;
    s.value = static_cast<float>(v);
    return push(s);
  }
};

bool same_bits(float a, float b) {
  return std::memcmp(&a, &b, sizeof a) == 0;
}

// The pattern of one post-op kind: its formula over X (Load y), T (Load of input 0, binary
// kinds) and, for its parameters, constants holding the markers below.
constexpr float kAlphaMark = 1.2345678e37f, kBetaMark = -2.3456789e37f;

struct Pattern {
  PostOpKind kind;
  EpilogueBody body;
};

// Every kind's pattern, the larger first: a chain is read from its end, and a pattern that
// contains another (HardSwish contains HardSigmoid, which is Linear then Clip) must be tried
// before it, so that a body gives back the chain it was built from.
const std::vector<Pattern>& patterns() {
  static const std::vector<Pattern> table = [] {
    std::vector<Pattern> t;
    for (int k = 0; k < kPostOpKinds; ++k) {
      Pattern p{static_cast<PostOpKind>(k), {}};
      EpilogueBuilder b{&p.body};
      const int32_t x = b.load(-1);
      const bool binary = post_op_is_binary(p.kind);
      const int32_t y = binary ? b.load(0) : x;
      act::post_op(b, PostOp{p.kind, kAlphaMark, kBetaMark, binary ? 0 : -1}, x, y);
      t.push_back(std::move(p));
    }
    std::stable_sort(t.begin(), t.end(), [](const Pattern& a, const Pattern& b) {
      return a.body.steps.size() > b.body.steps.size();
    });
    return t;
  }();
  return table;
}

// What a pattern's leaves stand for in the body.
struct Binding {
  int32_t x = -1;      // the step the post-op applies to
  int32_t input = -1;  // a binary post-op's operand
  bool has_alpha = false, has_beta = false;
  float alpha = 0, beta = 0;
};

bool bind_param(bool* has, float* param, float value) {
  if (*has) return same_bits(*param, value);
  *has = true;
  *param = value;
  return true;
}

bool commutative(Op op) {
  return op == Op::Add || op == Op::Mul || op == Op::Max || op == Op::Min;
}

bool match(const EpilogueBody& body, int32_t bi, const EpilogueBody& pat, int32_t pi,
           Binding* bind) {
  const EpilogueStep& ps = pat.steps[static_cast<size_t>(pi)];
  const EpilogueStep& bs = body.steps[static_cast<size_t>(bi)];
  if (ps.op == Op::Load) {
    if (ps.input < 0) {
      if (bind->x < 0) bind->x = bi;
      return bind->x == bi;
    }
    if (bs.op != Op::Load || bs.input < 0) return false;
    if (bind->input < 0) bind->input = bs.input;
    return bind->input == bs.input;
  }
  if (ps.op != bs.op) return false;
  if (ps.op == Op::Const) {
    if (same_bits(ps.value, kAlphaMark))
      return bind_param(&bind->has_alpha, &bind->alpha, bs.value);
    if (same_bits(ps.value, kBetaMark)) return bind_param(&bind->has_beta, &bind->beta, bs.value);
    return same_bits(ps.value, bs.value);
  }
  const int32_t po[3] = {ps.a, ps.b, ps.c}, bo[3] = {bs.a, bs.b, bs.c};
  auto operands_match = [&](const int32_t* b_ops, Binding* bd) {
    for (int k = 0; k < 3; ++k) {
      if ((po[k] < 0) != (b_ops[k] < 0)) return false;
      if (po[k] >= 0 && !match(body, b_ops[k], pat, po[k], bd)) return false;
    }
    return true;
  };
  Binding tried = *bind;
  if (operands_match(bo, &tried)) {
    *bind = tried;
    return true;
  }
  // y + t is t + y: a lowering writes a commutative op's operands in the model's order.
  if (!commutative(bs.op)) return false;
  const int32_t swapped[3] = {bs.b, bs.a, bs.c};
  return operands_match(swapped, bind);
}

bool is_y(const EpilogueStep& s) {
  return s.op == Op::Load && s.input < 0;
}

ScalarType step_type(const EpilogueBody& e, const std::vector<ScalarType>& types, size_t i,
                     const std::string& where) {
  const EpilogueStep& s = e.steps[i];
  auto at = [&](auto... parts) { return str_cat(where, " epilogue step ", i, ": ", parts...); };
  auto operand = [&](int32_t id, const char* name) {
    if (id < 0 || static_cast<size_t>(id) >= i)
      fail(at("operand ", name, " is ", id, ", not an earlier step"));
    return types[static_cast<size_t>(id)];
  };
  auto unused = [&](int from) {
    const int32_t ops[3] = {s.a, s.b, s.c};
    for (int k = from; k < 3; ++k)
      if (ops[k] != -1) fail(at(op_name(s.op), " takes ", from, " operands"));
  };
  if (s.op != Op::Load && s.input != -1) fail(at(op_name(s.op), " names input ", s.input));
  switch (s.op) {
    case Op::Load:
      unused(0);
      if (s.input < -1) fail(at("loads input ", s.input));
      return ScalarType::F32;
    case Op::Const:
      unused(0);
      return ScalarType::F32;
    case Op::Where:
      if (operand(s.a, "a") != ScalarType::Bool) fail(at("Where's condition is not Bool"));
      if (operand(s.b, "b") != ScalarType::F32 || operand(s.c, "c") != ScalarType::F32)
        fail(at("Where's values are not float32"));
      return ScalarType::F32;
    case Op::Store:
    case Op::LoopVar:
    case Op::Cast:
    case Op::CheckIndex:
    case Op::Reduce:
      fail(at(op_name(s.op), " has no place in an epilogue"));
    default:
      break;
  }
  const int arity = op_arity(s.op);
  if (arity != 1 && arity != 2) fail(at("invalid op ", static_cast<int>(s.op)));
  const ScalarType t = operand(s.a, "a");
  if (arity == 2 && operand(s.b, "b") != t) fail(at(op_name(s.op), "'s operands differ in type"));
  unused(arity);
  if (!op_accepts(s.op, t)) fail(at(op_name(s.op), " does not take ", scalar_type_name(t)));
  return op_result_type(s.op, t);
}

}  // namespace

void append_post_op(EpilogueBody* e, const PostOp& p) {
  EpilogueBuilder b{e};
  const int32_t x = e->empty() ? b.load(-1) : static_cast<int32_t>(e->steps.size() - 1);
  const int32_t t = post_op_is_binary(p.kind) ? b.load(p.input) : x;
  act::post_op(b, p, x, t);
}

EpilogueBody epilogue_of(const std::vector<PostOp>& ops) {
  EpilogueBody e;
  for (const PostOp& p : ops) append_post_op(&e, p);
  return e;
}

std::optional<std::vector<PostOp>> match_post_ops(const EpilogueBody& e) {
  std::vector<PostOp> chain;
  if (e.empty()) return chain;
  int32_t root = static_cast<int32_t>(e.steps.size() - 1);
  while (!is_y(e.steps[static_cast<size_t>(root)])) {
    bool found = false;
    for (const Pattern& p : patterns()) {
      Binding bind;
      const int32_t proot = static_cast<int32_t>(p.body.steps.size() - 1);
      if (!match(e, root, p.body, proot, &bind) || bind.x < 0 || bind.x >= root) continue;
      PostOp op{p.kind, bind.alpha, bind.beta, -1};
      if (post_op_is_binary(p.kind)) op.input = bind.input;
      chain.push_back(op);
      root = bind.x;
      found = true;
      break;
    }
    if (!found) return std::nullopt;
  }
  std::reverse(chain.begin(), chain.end());
  return chain;
}

std::vector<int32_t> epilogue_inputs(const EpilogueBody& e) {
  std::vector<int32_t> in;
  for (const EpilogueStep& s : e.steps)
    if (s.op == Op::Load && s.input >= 0) in.push_back(s.input);
  std::sort(in.begin(), in.end());
  in.erase(std::unique(in.begin(), in.end()), in.end());
  return in;
}

void validate_epilogue(const EpilogueBody& e, size_t num_inputs, const std::string& where) {
  if (e.steps.size() > kMaxEpilogueSteps)
    fail(where, " epilogue has ", e.steps.size(), " steps (at most ", kMaxEpilogueSteps, ")");
  std::vector<ScalarType> types(e.steps.size());
  for (size_t i = 0; i < e.steps.size(); ++i) {
    types[i] = step_type(e, types, i, where);
    const EpilogueStep& s = e.steps[i];
    if (s.op == Op::Load && s.input >= static_cast<int32_t>(num_inputs))
      fail(where, " epilogue step ", i, ": loads input ", s.input, " of ", num_inputs);
  }
  if (!e.empty() && types.back() != ScalarType::F32)
    fail(where, " epilogue's result is ", scalar_type_name(types.back()), ", not float32");
}

float eval_epilogue_step(const EpilogueStep& s, float a, float b, float c) {
  switch (s.op) {
    case Op::Const:
      return s.value;
    case Op::Where:
      return a != 0 ? b : c;
    case Op::Not:
      return a == 0 ? 1.0f : 0.0f;
    case Op::And:
      return (a != 0) && (b != 0) ? 1.0f : 0.0f;
    case Op::Or:
      return (a != 0) || (b != 0) ? 1.0f : 0.0f;
    case Op::Xor:
      return (a != 0) != (b != 0) ? 1.0f : 0.0f;
    default:
      break;
  }
  const Scalar r = op_arity(s.op) == 1
                       ? eval_unary(s.op, ScalarType::F32, scalar_f32(a))
                       : eval_binary(s.op, ScalarType::F32, scalar_f32(a), scalar_f32(b));
  if (op_result_type(s.op, ScalarType::F32) == ScalarType::Bool) return r.b ? 1.0f : 0.0f;
  return r.f32;
}

std::string epilogue_text(const EpilogueBody& e) {
  std::string s;
  if (const std::optional<std::vector<PostOp>> chain = match_post_ops(e)) {
    for (const PostOp& p : *chain) s += str_cat(s.empty() ? "" : " then ", post_op_text(p));
    return s;
  }
  for (size_t i = 0; i < e.steps.size(); ++i) {
    const EpilogueStep& st = e.steps[i];
    s += str_cat(i ? "; " : "", "%", i, " = ");
    if (st.op == Op::Load) {
      s += st.input < 0 ? std::string("load y") : str_cat("load in ", st.input);
    } else if (st.op == Op::Const) {
      s += str_cat("const ", st.value);
    } else {
      s += op_name(st.op);
      for (int32_t o : {st.a, st.b, st.c})
        if (o >= 0) s += str_cat(" %", o);
    }
  }
  return s;
}

}  // namespace ferrite
