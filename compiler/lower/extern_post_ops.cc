// The fused epilogue of an extern (compiler/plan/post_ops.h): read from the node's
// ferrite_post_* attributes (set by passes/fuse_extern_epilogues.cc) and attached to the
// ExternNode with its operands as broadcast views of the output's shape.
#include "compiler/graph/post_op_attrs.h"
#include "compiler/lower/lowering.h"
#include "compiler/plan/activations.h"

namespace ferrite {

std::vector<LoweredPostOp> node_post_ops(const LowerCtx& c) {
  std::vector<LoweredPostOp> out;
  for (const PostOp& p : read_post_op_attrs(c.node)) {
    LoweredPostOp l{p, nullptr};
    if (post_op_is_binary(p.kind)) l.operand = c.input(static_cast<size_t>(p.input));
    out.push_back(std::move(l));
  }
  return out;
}

namespace {

// Whether `t` broadcasts to `out` (numpy rules, the result no larger than `out`).
bool broadcasts_to(const std::vector<int64_t>& t, const std::vector<int64_t>& out) {
  if (t.size() > out.size()) return false;
  for (size_t i = 0; i < t.size(); ++i)
    if (t[i] != 1 && t[i] != out[out.size() - t.size() + i]) return false;
  return true;
}

}  // namespace

std::vector<LoweredPostOp> add_post_ops(const LowerCtx& c, const std::vector<LoweredPostOp>& post,
                                        const std::vector<int64_t>& out_size, ExternNode* e) {
  for (size_t i = 0; i < post.size(); ++i) {
    PostOp p = post[i].op;
    if (post_op_is_binary(p.kind)) {
      const TensorBoxPtr& t = post[i].operand;
      if (!t || t->dtype != DType::F32 || !broadcasts_to(t->size, out_size))
        return std::vector<LoweredPostOp>(post.begin() + static_cast<std::ptrdiff_t>(i),
                                          post.end());
      p.input = static_cast<int32_t>(e->inputs.size());
      e->inputs.push_back(c.gl.extern_operand(expand_view(t, out_size)));
    }
    e->post_ops.push_back(p);
  }
  return {};
}

TensorBoxPtr apply_post_ops_pointwise(const LowerCtx& c, TensorBoxPtr y,
                                      const std::vector<LoweredPostOp>& post) {
  for (const LoweredPostOp& l : post) {
    const PostOp p = l.op;
    if (!post_op_is_binary(p.kind)) {
      y = make_pointwise(c, {y}, DType::F32, [p](KernelBuilder& b, const std::vector<V>& v) {
        return act::post_op(b, p, v[0], v[0]);
      });
    } else {
      if (!l.operand || l.operand->dtype != DType::F32)
        c.error("post-op ", post_op_name(p.kind), " needs a float32 operand");
      y = make_pointwise(c, {y, l.operand}, DType::F32,
                         [p](KernelBuilder& b, const std::vector<V>& v) {
                           return act::post_op(b, p, v[0], v[1]);
                         });
    }
  }
  return y;
}

}  // namespace ferrite
