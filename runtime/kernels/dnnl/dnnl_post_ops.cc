#include "runtime/kernels/dnnl/dnnl_post_ops.h"

#include <cstdint>

#include "compiler/plan/error.h"
#include "runtime/kernels/reference/operand_checks.h"

namespace ferrite {
namespace onednn {
namespace {

using dnnl::algorithm;

// oneDNN 2.6's fused post-op code keeps one eltwise evaluator per algorithm, built with the
// parameters of the algorithm's first post-op: a later post-op of the same algorithm with
// other parameters silently computes with the first one's (measured: relu then leaky relu
// gives relu twice; clip to [0, 1] then to [0.1, 0.6] gives [0, 1]). So each algorithm
// must appear with one set of parameters only.
class Eltwises {
 public:
  explicit Eltwises(dnnl::post_ops* ops) : ops_(ops) {}
  bool append(algorithm a, float alpha, float beta) {
    for (const auto& u : used_)
      if (u.a == a && (u.alpha != alpha || u.beta != beta)) return false;
    used_.push_back(Used{a, alpha, beta});
    ops_->append_eltwise(1.0f, a, alpha, beta);
    return true;
  }

 private:
  struct Used {
    algorithm a;
    float alpha, beta;
  };
  dnnl::post_ops* ops_;
  std::vector<Used> used_;
};

// Appends the eltwise post-op(s) computing unary `p` (post_ops.h gives the formulas; oneDNN
// names them in its eltwise documentation). False when there is no exact equivalent.
bool append_unary(const PostOp& p, Eltwises* e) {
  switch (p.kind) {
    case PostOpKind::Relu:
      return e->append(algorithm::eltwise_relu, 0, 0);
    case PostOpKind::LeakyRelu:  // oneDNN's relu is y > 0 ? y : alpha * y
      return e->append(algorithm::eltwise_relu, p.alpha, 0);
    case PostOpKind::Clip:
      // oneDNN clamps to alpha before beta only when alpha <= beta; ours gives beta otherwise.
      if (!(p.alpha <= p.beta)) return false;
      return e->append(algorithm::eltwise_clip_v2, p.alpha, p.beta);
    case PostOpKind::Elu:
      return e->append(algorithm::eltwise_elu, p.alpha, 0);
    case PostOpKind::HardSigmoid:
      // oneDNN 2.6 has no hardsigmoid: linear, then clip to [0, 1] — with eltwise_clip, whose
      // forward is clip_v2's, so that a Clip in the same chain gets an evaluator of its own.
      return e->append(algorithm::eltwise_linear, p.alpha, p.beta) &&
             e->append(algorithm::eltwise_clip, 0, 1);
    case PostOpKind::HardSwish:  // 2.6: y * relu6(y + 3) / 6, no parameters
      return e->append(algorithm::eltwise_hardswish, 0, 0);
    case PostOpKind::Sigmoid:
      return e->append(algorithm::eltwise_logistic, 0, 0);
    case PostOpKind::Tanh:
      return e->append(algorithm::eltwise_tanh, 0, 0);
    case PostOpKind::Silu:  // swish: y * sigmoid(alpha * y)
      return e->append(algorithm::eltwise_swish, 1, 0);
    case PostOpKind::GeluErf:
      return e->append(algorithm::eltwise_gelu_erf, 0, 0);
    case PostOpKind::GeluTanh:
      return e->append(algorithm::eltwise_gelu_tanh, 0, 0);
    case PostOpKind::Linear:
      return e->append(algorithm::eltwise_linear, p.alpha, p.beta);
    default:
      return false;
  }
}

bool binary_algorithm(PostOpKind kind, algorithm* a) {
  switch (kind) {
    case PostOpKind::Add:
      *a = algorithm::binary_add;
      return true;
    case PostOpKind::Sub:
      *a = algorithm::binary_sub;
      return true;
    case PostOpKind::Mul:
      *a = algorithm::binary_mul;
      return true;
    case PostOpKind::Div:
      *a = algorithm::binary_div;
      return true;
    case PostOpKind::Max:
      *a = algorithm::binary_max;
      return true;
    case PostOpKind::Min:
      *a = algorithm::binary_min;
      return true;
    default:
      return false;
  }
}

// The dense layout, in `order`, of an operand's reduced dims.
dnnl::memory::desc operand_desc(const View& v, const std::vector<int>& order) {
  return f32_desc(v.dims, dense_strides(v.dims, order));
}

}  // namespace

bool append_post_ops(const ExternCall& call, const std::vector<int>& order, dnnl::post_ops* ops,
                     std::vector<BinaryOperand>* binaries, BinaryOperand* sum) {
  if (!call.epilogue.empty() && call.post_ops.empty()) return false;  // no chain: no oneDNN form
  const TensorRef& y = call.outputs[0];
  Eltwises eltwises(ops);
  if (sum) sum->input = SIZE_MAX;
  for (const PostOp& p : call.post_ops) {
    if (!post_op_is_binary(p.kind)) {
      if (!append_unary(p, &eltwises)) return false;
      continue;
    }
    algorithm a;
    if (!binary_algorithm(p.kind, &a) || p.input < 0 ||
        static_cast<size_t>(p.input) >= call.inputs.size())
      return false;
    const TensorRef& t = call.inputs[static_cast<size_t>(p.input)];
    if (t.shape != y.shape || t.strides.size() != y.shape.size()) return false;
    BinaryOperand b;
    b.position = ops->len();
    b.input = static_cast<size_t>(p.input);
    b.view.offset = t.offset;
    for (size_t d = 0; d < t.shape.size(); ++d) {
      if (t.strides[d] < 0) return false;
      const bool broadcast = t.strides[d] == 0;
      b.view.dims.push_back(broadcast ? 1 : t.shape[d]);
      b.view.strides.push_back(t.strides[d]);
    }
    if (sum && sum->input == SIZE_MAX && p.kind == PostOpKind::Add && b.view.dims == y.shape) {
      b.position = -1;
      *sum = std::move(b);
      ops->append_sum(1.0f);
      continue;
    }
    ops->append_binary(a, operand_desc(b.view, order));
    binaries->push_back(std::move(b));
  }
  return true;
}

bool bind_binary_operands(const std::vector<BinaryOperand>& binaries, const std::vector<int>& order,
                          const std::vector<ExternBuffer>& constants, DnnlSteps* steps,
                          Args* args) {
  for (const BinaryOperand& b : binaries) {
    const ExternBuffer* constant = nullptr;
    if (is_constant_input(constants, b.input)) {
      constant = &constants[b.input];
      try {
        check_f32_view("post-op", "operand",
                       TensorRef{-1, b.view.dims, b.view.strides, b.view.offset}, *constant,
                       b.view.dims.size());
      } catch (const Error&) {
        return false;
      }
    }
    const dnnl::memory m = steps->input(b.view, operand_desc(b.view, order), b.input, constant);
    (*args)[DNNL_ARG_ATTR_MULTIPLE_POST_OP(b.position) | DNNL_ARG_SRC_1] = m;
  }
  return true;
}

}  // namespace onednn
}  // namespace ferrite
