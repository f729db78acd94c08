#include "compiler/graph/post_op_attrs.h"

#include <string>

#include "compiler/plan/error.h"

namespace ferrite {

std::vector<PostOp> read_post_op_attrs(const Node& n) {
  std::vector<PostOp> post;
  auto it = n.attrs.find("ferrite_post_ops");
  if (it == n.attrs.end()) return post;
  const std::vector<std::string>& kinds = it->second.strings;
  const std::vector<double> alpha = n.attr_floats("ferrite_post_alpha");
  const std::vector<double> beta = n.attr_floats("ferrite_post_beta");
  const std::vector<int64_t> input = n.attr_ints("ferrite_post_input");
  if (alpha.size() != kinds.size() || beta.size() != kinds.size() || input.size() != kinds.size())
    fail(n.describe(), ": inconsistent ferrite_post_* attributes");
  for (size_t i = 0; i < kinds.size(); ++i) {
    PostOp p;
    int k = 0;
    while (k < kPostOpKinds && kinds[i] != post_op_name(static_cast<PostOpKind>(k))) ++k;
    if (k == kPostOpKinds) fail(n.describe(), ": unknown post-op '", kinds[i], "'");
    p.kind = static_cast<PostOpKind>(k);
    p.alpha = static_cast<float>(alpha[i]);
    p.beta = static_cast<float>(beta[i]);
    const bool binary = post_op_is_binary(p.kind);
    if (binary != (input[i] >= 0) || input[i] >= static_cast<int64_t>(n.inputs.size()) ||
        (binary && !n.inputs[static_cast<size_t>(input[i])]))
      fail(n.describe(), ": post-op ", i, " (", kinds[i], ") has input ", input[i]);
    p.input = static_cast<int32_t>(input[i]);
    post.push_back(p);
  }
  return post;
}

void write_post_op_attrs(Node* n, const std::vector<PostOp>& post) {
  Attribute kinds, alpha, beta, input;
  kinds.kind = AttrKind::Strings;
  alpha.kind = beta.kind = AttrKind::Floats;
  input.kind = AttrKind::Ints;
  for (const PostOp& p : post) {
    kinds.strings.push_back(post_op_name(p.kind));
    alpha.floats.push_back(p.alpha);
    beta.floats.push_back(p.beta);
    input.ints.push_back(p.input);
  }
  n->attrs["ferrite_post_ops"] = kinds;
  n->attrs["ferrite_post_alpha"] = alpha;
  n->attrs["ferrite_post_beta"] = beta;
  n->attrs["ferrite_post_input"] = input;
}

}  // namespace ferrite
