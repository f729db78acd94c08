// The manifest of extern ops: the steps of a Plan that call code outside the Kernel
// contract (oneDNN, the portable GEMM, hand-written loops). Each op has an entry here, a
// typed call in this folder (its attributes, with the one encode and the one decode of
// them), its definition as a reference implementation (runtime/kernels/reference/), and a
// case in each backend's registration switch (`prepare_extern`). Plan files, dumps and
// errors spell an op by its name; code holds and compares ExternOps (ExternCall::op).
//
// Adding an extern: an enumerator and a kExternOps row here, its typed call beside this
// file, the lowering that emits it, its reference implementation, and a case in each
// backend's switch (the compiler's -Wswitch names every switch that misses it), plus its
// generator in tests/unit/runtime/random_extern_test.cc.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace ferrite {

struct ExternCall;  // plan.h

enum class ExternOp : uint8_t {
  MatMul,           // matmul_call.h
  Conv,             // conv_call.h
  ConvTranspose,    // conv_call.h
  ScatterElements,  // scatter_call.h
  ScatterND,        // scatter_call.h
  SegmentReduce,    // segment_reduce_call.h
  TopK,             // topk_call.h
  MatMulInteger,    // matmul_integer_call.h
  ConvInteger,      // conv_call.h
  Attention,        // attention_call.h
  MatMulNBits,      // matmul_nbits_call.h
  BitCast,          // bitcast_call.h
};
constexpr size_t kExternOpCount = static_cast<size_t>(ExternOp::BitCast) + 1;

struct ExternOpInfo {
  ExternOp op;
  const char* name;     // as plans, dumps and errors spell it
  bool takes_post_ops;  // a fused epilogue (post_ops.h) may follow it, on outputs[0]
};

// Every extern op, in enumerator order.
extern const ExternOpInfo kExternOps[kExternOpCount];

inline const ExternOpInfo& extern_op_info(ExternOp op) {
  return kExternOps[static_cast<size_t>(op)];
}
// Its name; "(invalid extern op)" for a value past the table (a plan built in memory, before
// validate_plan refuses it).
inline const char* extern_op_name(ExternOp op) {
  return static_cast<size_t>(op) < kExternOpCount ? extern_op_info(op).name : "(invalid extern op)";
}
// The op a plan file names (nullopt when none is).
std::optional<ExternOp> find_extern_op(const std::string& name);

// The 0/1 attribute `key` of a call (absent: false); another value is an Error "<op>: <key>
// must be 0 or 1, got <v>".
bool decode_flag(const ExternCall& call, const char* op, const char* key);
// The integer (float) attribute `key` of a call, or `dflt` when it has none.
int64_t decode_int(const ExternCall& call, const char* key, int64_t dflt);
double decode_float(const ExternCall& call, const char* key, double dflt);

// "[2,3]": a shape as extern errors print it.
std::string dims_text(const std::vector<int64_t>& dims);

// A call's attributes as a plan carries them (ExternCall::ints and floats). Each typed call
// encodes itself into these and decodes from them, and nothing else reads them.
struct ExternAttrs {
  std::map<std::string, int64_t> ints;
  std::map<std::string, double> floats;
};

// Sets the op and the attributes of `call` (an ExternCall, or the lowering's ExternNode)
// from a typed call: anything with `ExternOp op() const` and an `encode(typed)` overload.
template <class Call, class Typed>
void encode_extern(const Typed& typed, Call* call) {
  ExternAttrs a = encode(typed);
  call->op = typed.op();
  call->ints = std::move(a.ints);
  call->floats = std::move(a.floats);
}

}  // namespace ferrite
