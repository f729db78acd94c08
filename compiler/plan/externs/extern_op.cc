#include "compiler/plan/externs/extern_op.h"

#include "compiler/plan/error.h"

namespace ferrite {

const ExternOpInfo kExternOps[kExternOpCount] = {
    {ExternOp::MatMul, "MatMul", true},
    {ExternOp::Conv, "Conv", true},
    {ExternOp::ConvTranspose, "ConvTranspose", true},
    {ExternOp::ScatterElements, "ScatterElements", false},
    {ExternOp::ScatterND, "ScatterND", false},
    {ExternOp::SegmentReduce, "SegmentReduce", true},
    {ExternOp::TopK, "TopK", false},
    {ExternOp::MatMulInteger, "MatMulInteger", false},
};

std::optional<ExternOp> find_extern_op(const std::string& name) {
  for (const ExternOpInfo& info : kExternOps)
    if (name == info.name) return info.op;
  return std::nullopt;
}

std::string dims_text(const std::vector<int64_t>& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) s += str_cat(i ? "," : "", dims[i]);
  return s + "]";
}

}  // namespace ferrite
