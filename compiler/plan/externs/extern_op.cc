#include "compiler/plan/externs/extern_op.h"

#include "compiler/plan/error.h"
#include "compiler/plan/plan.h"

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
    {ExternOp::ConvInteger, "ConvInteger", false},
    {ExternOp::Attention, "Attention", false},
    {ExternOp::MatMulNBits, "MatMulNBits", false},
    {ExternOp::BitCast, "BitCast", false},
};

std::optional<ExternOp> find_extern_op(const std::string& name) {
  for (const ExternOpInfo& info : kExternOps)
    if (name == info.name) return info.op;
  return std::nullopt;
}

bool decode_flag(const ExternCall& call, const char* op, const char* key) {
  auto it = call.ints.find(key);
  if (it == call.ints.end()) return false;
  if (it->second != 0 && it->second != 1) fail(op, ": ", key, " must be 0 or 1, got ", it->second);
  return it->second == 1;
}

int64_t decode_int(const ExternCall& call, const char* key, int64_t dflt) {
  auto it = call.ints.find(key);
  return it == call.ints.end() ? dflt : it->second;
}

double decode_float(const ExternCall& call, const char* key, double dflt) {
  auto it = call.floats.find(key);
  return it == call.floats.end() ? dflt : it->second;
}

std::string dims_text(const std::vector<int64_t>& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) s += str_cat(i ? "," : "", dims[i]);
  return s + "]";
}

}  // namespace ferrite
