// The tests' two ways to run one extern call: on its reference implementation (the op's
// definition, runtime/kernels/reference/) and on a backend as a Session runs it (prepared
// once, then run); and the post-ops the tests fuse into them.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "compiler/plan/externs/extern_op.h"
#include "compiler/plan/post_ops.h"
#include "runtime/backend.h"
#include "runtime/kernels/reference/reference_backend.h"

namespace ferrite {

inline void run_reference_extern(const ExternCall& call, const ExternBuffer* inputs,
                                 const ExternBuffer* outputs) {
  reference_extern(call.op)(call, inputs, outputs);
}

inline void run_backend_extern(const std::string& backend, const ExternCall& call,
                               const ExternBuffer* inputs, const ExternBuffer* outputs) {
  make_backend(backend)->prepare_extern(call)->run(inputs, outputs);
}

// The strides of a view of `shape` stored in `order` (outermost dim first; every dim once),
// 0 along the dims where `broadcast` (if given) is true; *span gets the elements it covers.
inline std::vector<int64_t> view_strides(const std::vector<int64_t>& shape,
                                         const std::vector<int>& order,
                                         const std::vector<bool>& broadcast, int64_t* span) {
  std::vector<int64_t> strides(shape.size(), 0);
  int64_t stride = 1;
  for (size_t i = order.size(); i-- > 0;) {
    const size_t d = static_cast<size_t>(order[i]);
    if (!broadcast.empty() && broadcast[d]) continue;
    strides[d] = stride;
    stride *= shape[d];
  }
  *span = stride;
  return strides;
}

// The unary post-ops, each kind once, with parameters where it takes them.
inline std::vector<PostOp> unary_post_ops() {
  std::vector<PostOp> ops = {{PostOpKind::Relu},
                             {PostOpKind::Clip, -0.5f, 0.75f},
                             {PostOpKind::LeakyRelu, 0.1f},
                             {PostOpKind::Elu, 0.7f},
                             {PostOpKind::HardSigmoid, 0.2f, 0.5f},
                             {PostOpKind::HardSwish},
                             {PostOpKind::Sigmoid},
                             {PostOpKind::Tanh},
                             {PostOpKind::Silu},
                             {PostOpKind::GeluErf},
                             {PostOpKind::GeluTanh},
                             {PostOpKind::Linear, -1.5f, 0.25f}};
  // A unary kind added to post_ops.h later, with generic parameters: every test drawing from
  // this list covers it without an edit here.
  for (int k = 0; k < kPostOpKinds; ++k) {
    const PostOpKind kind = static_cast<PostOpKind>(k);
    if (post_op_is_binary(kind) ||
        std::any_of(ops.begin(), ops.end(), [&](const PostOp& p) { return p.kind == kind; }))
      continue;
    ops.push_back(PostOp{kind, -0.5f, 0.75f});
  }
  return ops;
}

}  // namespace ferrite
