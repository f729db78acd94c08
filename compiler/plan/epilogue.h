// An extern's fused epilogue in the Kernel contract's own terms: a small SSA body of value
// ops (ops.h) over the extern's result y and broadcast operands, evaluated per output
// element with the one scalar semantics (scalar_ops.h). It is the plan's contract
// (ExternCall::epilogue, serialized as its steps): the reference evaluates any valid body;
// the backends with native epilogues (oneDNN's post-ops, the portable backend's in-register
// tiles) map the bodies they can take through one pattern table, match_post_ops, which
// recognizes the chains of post-ops (post_ops.h) that activations.h's formulas build, and
// apply any other body after the op.
//
// Steps, each reading only earlier ones:
//   Load   input -1: y, the extern's result at the element; input i >= 0: the element of
//          ExternCall::inputs[i] at the element's coordinates (a view of y's shape: stride 0
//          along broadcast dims). Float32.
//   Const  value (float32).
//   a unary or binary value op, Where (a Bool condition, two float32 values), a comparison
//   or logic op: typed as scalar_ops types them; float32 or Bool.
// The last step is the result (float32). An empty body is no epilogue.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "compiler/plan/ops.h"
#include "compiler/plan/post_ops.h"

namespace ferrite {

struct EpilogueStep {
  Op op = Op::Const;
  int32_t a = -1, b = -1, c = -1;  // operands: earlier steps
  int32_t input = -1;              // Load: -1 for y, else an index into the call's inputs
  float value = 0;                 // Const

  bool operator==(const EpilogueStep& o) const {
    return op == o.op && a == o.a && b == o.b && c == o.c && input == o.input &&
           (value == o.value || (value != value && o.value != o.value));
  }
};

struct EpilogueBody {
  std::vector<EpilogueStep> steps;

  bool empty() const { return steps.empty(); }
  bool operator==(const EpilogueBody& o) const { return steps == o.steps; }
  bool operator!=(const EpilogueBody& o) const { return !(*this == o); }
};

// Steps a plan may hold in one epilogue (real ones have a few dozen).
constexpr size_t kMaxEpilogueSteps = 4096;

// The body of a chain of post-ops, each built by its activations.h formula (so that
// match_post_ops gives the chain back); appending continues from the body's result.
EpilogueBody epilogue_of(const std::vector<PostOp>& ops);
void append_post_op(EpilogueBody* e, const PostOp& p);

// The pattern table: the chain of post-ops the body is, when it is one (each post-op's
// formula as activations.h builds it, constants equal, a binary post-op's operand a Load of
// an input); nullopt otherwise.
std::optional<std::vector<PostOp>> match_post_ops(const EpilogueBody& e);

// The inputs the body loads (ascending, each once).
std::vector<int32_t> epilogue_inputs(const EpilogueBody& e);

// Fails (ferrite::Error "<where> epilogue step <i>: ...") unless the body is well formed:
// operands earlier, arities as the manifest's, types as scalar_ops gives them, loads of
// inputs below num_inputs, a float32 result, at most kMaxEpilogueSteps.
void validate_epilogue(const EpilogueBody& e, size_t num_inputs, const std::string& where);

// Evaluates a validated body: y, and the value of each loaded input by `operand(i)`. The
// scratch vector is reused between calls.
template <class Operand>
float eval_epilogue(const EpilogueBody& e, float y, Operand&& operand, std::vector<float>* scratch);

// "relu then add(in 2)", or the steps ("%0 = load y; %1 = exp %0; ...") of another body.
std::string epilogue_text(const EpilogueBody& e);

// ---- implementation -------------------------------------------------------------------------

// One step on float32 values; Bool values are 1 and 0 (as the evaluator keeps them).
float eval_epilogue_step(const EpilogueStep& s, float a, float b, float c);

template <class Operand>
float eval_epilogue(const EpilogueBody& e, float y, Operand&& operand,
                    std::vector<float>* scratch) {
  std::vector<float>& v = *scratch;
  v.resize(e.steps.size());
  for (size_t i = 0; i < e.steps.size(); ++i) {
    const EpilogueStep& s = e.steps[i];
    if (s.op == Op::Load) {
      v[i] = s.input < 0 ? y : operand(s.input);
      continue;
    }
    v[i] =
        eval_epilogue_step(s, s.a >= 0 ? v[s.a] : 0, s.b >= 0 ? v[s.b] : 0, s.c >= 0 ? v[s.c] : 0);
  }
  return e.steps.empty() ? y : v.back();
}

}  // namespace ferrite
