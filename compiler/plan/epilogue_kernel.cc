#include "compiler/plan/epilogue_kernel.h"

#include <algorithm>

#include "compiler/plan/error.h"
#include "compiler/plan/scalar_ops.h"

namespace ferrite {
namespace {

// offset + sum over dims of var_d * stride_d (dims of one position and stride-0 dims add no
// term).
Index view_index(const TensorRef& r) {
  Index e = ix_const(r.offset);
  for (size_t d = 0; d < r.shape.size(); ++d) {
    if (r.shape[d] == 1 || r.strides[d] == 0) continue;
    Index term = ix_var(static_cast<int>(d));
    if (r.strides[d] != 1) term = ix_binary(IndexKind::Mul, term, ix_const(r.strides[d]));
    e = r.offset == 0 && e->kind == IndexKind::Const ? term : ix_binary(IndexKind::Add, e, term);
  }
  return e;
}

KernelArg view_arg(const TensorRef& r, bool output) {
  KernelArg a;
  a.dtype = DType::F32;
  a.elements = view_extent(r);
  a.output = output;
  return a;
}

}  // namespace

int64_t view_extent(const TensorRef& r) {
  int64_t hi = r.offset;
  for (size_t d = 0; d < r.shape.size(); ++d) {
    if (r.shape[d] == 0) return 0;
    if (r.strides[d] > 0) hi += (r.shape[d] - 1) * r.strides[d];
  }
  return hi + 1;
}

EpilogueKernel epilogue_kernel(const ExternCall& call) {
  if (call.outputs.empty() || call.epilogue.empty())
    fail("internal: epilogue_kernel of a call without an epilogue");
  const TensorRef& y = call.outputs[0];
  EpilogueKernel out;
  out.inputs = epilogue_inputs(call.epilogue);
  Kernel& k = out.kernel;
  k.name = str_cat("epilogue_", extern_op_name(call.op));
  k.ranges = y.shape;
  k.args.push_back(view_arg(y, false));
  std::vector<int32_t> arg_of(call.inputs.size(), -1);
  for (int32_t i : out.inputs) {
    arg_of[static_cast<size_t>(i)] = static_cast<int32_t>(k.args.size());
    k.args.push_back(view_arg(call.inputs[static_cast<size_t>(i)], false));
  }
  const int32_t result = static_cast<int32_t>(k.args.size());
  k.args.push_back(view_arg(y, true));

  const Index y_index = view_index(y);
  std::vector<ScalarType> types;
  for (const EpilogueStep& s : call.epilogue.steps) {
    Instr in;
    in.op = s.op;
    if (s.op == Op::Load) {
      in.type = ScalarType::F32;
      in.arg = s.input < 0 ? 0 : arg_of[static_cast<size_t>(s.input)];
      in.index = s.input < 0 ? y_index : view_index(call.inputs[static_cast<size_t>(s.input)]);
    } else if (s.op == Op::Const) {
      in.type = ScalarType::F32;
      in.fimm = s.value;
    } else {
      in.a = s.a;
      in.b = s.b;
      in.c = s.c;
      const ScalarType t = types[static_cast<size_t>(s.op == Op::Where ? s.b : s.a)];
      in.type = s.op == Op::Where ? t : op_result_type(s.op, t);
    }
    types.push_back(in.type);
    k.code.push_back(std::move(in));
  }
  Instr store;
  store.op = Op::Store;
  store.type = ScalarType::F32;
  store.a = static_cast<int32_t>(k.code.size() - 1);
  store.arg = result;
  store.index = y_index;
  k.code.push_back(std::move(store));
  k.post_begin = static_cast<int>(k.code.size());
  return out;
}

}  // namespace ferrite
