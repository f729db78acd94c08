// The walk mirrors plan_io.cc's reader field by field; fuzz_mutator_check (tests/fuzz/ci.sh)
// walks every seed plan, so a format change that this file misses fails CI.
#include "tests/fuzz/plan_layout.h"

#include <cstring>

#include "compiler/plan/dtype.h"
#include "compiler/plan/index_expr.h"
#include "compiler/plan/ops.h"
#include "compiler/plan/plan_io.h"

namespace ferrite::fuzz {
namespace {

struct Stop {};  // thrown when the bytes are no plan of this format

constexpr int kMaxIndexDepth = 256;  // as plan_io.cc
constexpr int kMaxIndexNodes = 1 << 16;

class Walker {
 public:
  Walker(const uint8_t* data, size_t size, PlanLayout* out) : p_(data), size_(size), out_(out) {}

  size_t pos() const { return pos_; }

  uint64_t scalar(uint8_t n, Slot slot, uint8_t max = 0) {
    if (n > size_ - pos_) throw Stop{};
    uint64_t v = 0;
    for (int i = 0; i < n; ++i) v |= static_cast<uint64_t>(p_[pos_ + i]) << (8 * i);
    out_->fields.push_back({pos_, n, slot, max});
    pos_ += n;
    if ((slot == Slot::Enum || slot == Slot::Bool) && v > (slot == Slot::Bool ? 1 : max)) {
      throw Stop{};
    }
    return v;
  }
  void i32(Slot s) { scalar(4, s); }
  void i64(Slot s) { scalar(8, s); }
  void f64() { scalar(8, Slot::Float); }
  void enum8(int max) { scalar(1, Slot::Enum, static_cast<uint8_t>(max)); }
  void dtype() {
    const uint64_t v = scalar(1, Slot::DType);
    DType t;
    if (v != 0 && !dtype_from_onnx(static_cast<int64_t>(v), &t)) throw Stop{};
  }
  void skip(uint64_t n) {
    if (n > size_ - pos_) throw Stop{};
    pos_ += n;
  }
  // A list: its count (each item at least min_size bytes, as the reader checks), then
  // item(i) per item, with the spans recorded.
  template <class F>
  uint32_t list(ListKind kind, size_t min_size, F&& item) {
    if (4 > size_ - pos_) throw Stop{};
    PlanList l{kind, pos_, {}};
    const auto n = static_cast<uint32_t>(raw(4));
    if (uint64_t{n} * min_size > size_ - pos_) throw Stop{};
    for (uint32_t i = 0; i < n; ++i) {
      const size_t begin = pos_;
      item();
      l.items.emplace_back(begin, pos_);
    }
    out_->lists.push_back(std::move(l));
    return n;
  }
  void str() { skip(raw(4)); }
  void blob() { skip(raw(8)); }
  void i64s(ListKind kind, Slot s) {
    list(kind, 8, [&] { i64(s); });
  }
  void i32s(ListKind kind, Slot s) {
    list(kind, 4, [&] { i32(s); });
  }
  void index(int depth, int* nodes) {
    const size_t begin = pos_;
    if (!scalar(1, Slot::Bool)) return;
    if (depth > kMaxIndexDepth || ++*nodes > kMaxIndexNodes) throw Stop{};
    enum8(static_cast<int>(IndexKind::Mod));
    i64(Slot::IndexConst);
    i32(Slot::IndexId);
    index(depth + 1, nodes);
    index(depth + 1, nodes);
    out_->index_trees.emplace_back(begin, pos_);
  }

 private:
  uint64_t raw(uint8_t n) {
    if (n > size_ - pos_) throw Stop{};
    uint64_t v = 0;
    for (int i = 0; i < n; ++i) v |= static_cast<uint64_t>(p_[pos_ + i]) << (8 * i);
    pos_ += n;
    return v;
  }

  const uint8_t* p_;
  size_t size_, pos_ = 0;
  PlanLayout* out_;
};

void instr(Walker& w) {
  w.enum8(static_cast<int>(Op::kCount) - 1);
  w.enum8(static_cast<int>(ScalarType::Bool));
  for (int i = 0; i < 3; ++i) w.i32(Slot::Operand);
  w.i32(Slot::InstrArg);
  w.enum8(static_cast<int>(ReduceKind::kCount) - 1);
  w.i32(Slot::Operand);
  int nodes = 0;
  w.index(0, &nodes);
  w.f64();
  w.i64(Slot::Imm);
}

void kernel(Walker& w) {
  w.str();
  w.i64s(ListKind::Ranges, Slot::Dim);
  w.i32(Slot::Int32);
  w.list(ListKind::Args, 10, [&] {
    w.dtype();
    w.i64(Slot::Dim);
    w.scalar(1, Slot::Bool);
  });
  w.list(ListKind::Code, 40, [&] { instr(w); });
  w.i32(Slot::Int32);
  w.i32s(ListKind::LoopEnds, Slot::Int32);
  w.list(ListKind::Messages, 4, [&] { w.str(); });
}

void ref(Walker& w) {
  w.i32(Slot::BufferId);
  w.i64s(ListKind::RefShape, Slot::Dim);
  w.i64s(ListKind::RefStrides, Slot::Stride);
  w.i64(Slot::Offset);
}

void extern_call(Walker& w) {
  w.str();
  w.str();
  w.list(ListKind::ExternInts, 12, [&] {
    w.str();
    w.i64(Slot::Imm);
  });
  w.list(ListKind::ExternFloats, 12, [&] {
    w.str();
    w.f64();
  });
  w.list(ListKind::ExternInputs, 20, [&] { ref(w); });
  w.list(ListKind::ExternOutputs, 20, [&] { ref(w); });
  w.list(ListKind::EpilogueSteps, 25, [&] {
    w.enum8(static_cast<int>(Op::kCount) - 1);
    w.i32(Slot::Int32);
    w.i32(Slot::Int32);
    w.i32(Slot::Int32);
    w.i32(Slot::Int32);
    w.f64();
  });
}

void plan(Walker& w, PlanLayout* out) {
  out->buffers = static_cast<int32_t>(w.list(ListKind::Buffers, 22, [&] {
    w.str();
    w.dtype();
    w.i64s(ListKind::BufferShape, Slot::Dim);
    w.enum8(3);  // BufferKind::Temp
    w.i64(Slot::Offset);
    w.i32(Slot::ConstantId);
  }));
  out->constants = static_cast<int32_t>(w.list(ListKind::Constants, 8, [&] { w.blob(); }));
  w.list(ListKind::Packed, 20, [&] {
    w.i32(Slot::StepIndex);
    w.i32(Slot::Int32);
    w.str();
    w.blob();
  });
  out->kernels = static_cast<int32_t>(w.list(ListKind::Kernels, 28, [&] { kernel(w); }));
  out->externs = static_cast<int32_t>(w.list(ListKind::Externs, 28, [&] { extern_call(w); }));
  w.list(ListKind::Steps, 13, [&] {
    w.enum8(1);  // StepKind::Extern
    w.i32(Slot::StepIndex);
    w.i32s(ListKind::StepBuffers, Slot::BufferId);
    w.list(ListKind::Guards, 5, [&] {
      w.i32(Slot::BufferId);
      w.enum8(1);
    });
  });
  w.i32s(ListKind::Inputs, Slot::BufferId);
  w.i32s(ListKind::Outputs, Slot::BufferId);
  w.i64(Slot::Offset);
}

}  // namespace

bool walk_plan(const uint8_t* data, size_t size, PlanLayout* out) {
  *out = PlanLayout{};
  static const char kMagic[8] = {'F', 'R', 'P', 'L', 'A', 'N', '\0', '\0'};
  if (size < 12 || std::memcmp(data, kMagic, 8) != 0) return false;
  uint32_t version = 0;
  for (int i = 0; i < 4; ++i) version |= static_cast<uint32_t>(data[8 + i]) << (8 * i);
  if (version != kPlanFormatVersion) return false;
  Walker w(data, size, out);
  try {
    w.skip(12);
    plan(w, out);
  } catch (const Stop&) {
    return false;
  }
  return w.pos() == size;
}

}  // namespace ferrite::fuzz
