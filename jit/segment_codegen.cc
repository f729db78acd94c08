#include "jit/segment_codegen.h"

#include <algorithm>
#include <cstddef>

#include <xbyak/xbyak.h>

#include "compiler/plan/error.h"

namespace ferrite {
namespace jit {
namespace {

using namespace Xbyak;
using portable::SegmentRows;

constexpr int kLanes = 16;
constexpr int kMaxAcc = 24;  // zmm0..23 accumulate; zmm30 = the message, zmm31 = the weight

// void f(const SegmentRows* j, int64_t r0, int64_t r1)
class SegmentEmitter : public CodeGenerator {
 public:
  explicit SegmentEmitter(const SegmentShape& s)
      : CodeGenerator(size_t(1) << 16, DontSetProtectRWE), s_(s) {}

  void generate() {
    for (const Reg64& r : {rbx, rbp, r12, r13, r14, r15}) push(r);
    sub(rsp, 8);
    mov(ptr[rsp], rdx);  // r1
    load_fields();
    const Reg64 &x = x_, &x_rs = x_rs_, &out = out_, &out_rs = out_rs_, &data = data_,
                &data_rs = data_rs_, &weight = weight_, &w_stride = w_stride_, &row_ptr = row_ptr_,
                &src = src_, &edges = edges_, &row = row_;
    const Reg64 p = rcx, end = rax, t = rdx;
    const int64_t tail = s_.features % kLanes;
    if (tail) {
      mov(eax, (1u << tail) - 1);
      kmovw(k1, eax);
    }
    const int64_t vectors = (s_.features + kLanes - 1) / kLanes;

    Label row_loop, done;
    L(row_loop);
    cmp(row, ptr[rsp]);
    jge(done, T_NEAR);
    for (int64_t v0 = 0; v0 < vectors; v0 += kMaxAcc) {
      const int n = static_cast<int>(std::min<int64_t>(kMaxAcc, vectors - v0));
      const bool last_pass = v0 + n == vectors;
      auto masked = [&](int v) { return tail && last_pass && v == n - 1; };
      auto at = [&](const Reg64& base, int v) { return ptr[base + (v0 + v) * kLanes * 4]; };
      // The accumulators start from data's row, or zeros.
      if (s_.with_data) {
        mov(t, row);
        imul(t, data_rs);
        add(t, data);
      }
      for (int v = 0; v < n; ++v) {
        if (!s_.with_data) {
          vxorps(Zmm(v), Zmm(v), Zmm(v));
        } else if (masked(v)) {
          vmovups(Zmm(v) | k1 | T_z, at(t, v));
        } else {
          vmovups(Zmm(v), at(t, v));
        }
      }
      mov(p, ptr[row_ptr + row * 8]);
      mov(end, ptr[row_ptr + row * 8 + 8]);
      Label edge_loop, edge_done;
      L(edge_loop);
      cmp(p, end);
      jge(edge_done, T_NEAR);
      if (s_.weighted) {
        mov(t, ptr[edges + p * 8]);
        imul(t, w_stride);
        vbroadcastss(zmm31, ptr[weight + t]);
      }
      mov(t, ptr[src + p * 8]);
      imul(t, x_rs);
      add(t, x);
      for (int v = 0; v < n; ++v) {
        const Zmm acc(v);
        if (masked(v)) {
          vmovups(zmm30 | k1 | T_z, at(t, v));
        } else {
          vmovups(zmm30, at(t, v));
        }
        if (s_.weighted) vmulps(zmm30, zmm30, zmm31);
        accumulate(acc);
      }
      inc(p);
      jmp(edge_loop);
      L(edge_done);
      mov(t, row);
      imul(t, out_rs);
      add(t, out);
      for (int v = 0; v < n; ++v) {
        if (masked(v)) {
          vmovups(at(t, v) | k1, Zmm(v));
        } else {
          vmovups(at(t, v), Zmm(v));
        }
      }
    }
    inc(row);
    jmp(row_loop, T_NEAR);
    L(done);
    add(rsp, 8);
    for (const Reg64& r : {r15, r14, r13, r12, rbp, rbx}) pop(r);
    vzeroupper();
    ret();
  }

 private:
  // The SegmentRows fields the loops read, in registers (elements strides as bytes); j
  // (rdi) is read here, then rdi holds `edge`.
  void load_fields() {
    const Reg64 j = rdi;
    auto field = [&](const Reg64& r, size_t offset) { mov(r, ptr[j + offset]); };
    field(x_, offsetof(SegmentRows, x));
    field(x_rs_, offsetof(SegmentRows, x_rs));
    field(out_, offsetof(SegmentRows, out));
    field(out_rs_, offsetof(SegmentRows, out_rs));
    field(data_, offsetof(SegmentRows, data));
    field(data_rs_, offsetof(SegmentRows, data_rs));
    field(weight_, offsetof(SegmentRows, weight));
    field(w_stride_, offsetof(SegmentRows, weight_stride));
    field(row_ptr_, offsetof(SegmentRows, row_ptr));
    field(src_, offsetof(SegmentRows, src));
    field(edges_, offsetof(SegmentRows, edge));
    for (const Reg64& r : {x_rs_, out_rs_, data_rs_, w_stride_}) shl(r, 2);
  }

  // acc (+)= the message in zmm30.
  void accumulate(const Zmm& acc) {
    if (s_.kind == ReduceKind::Sum) {
      vaddps(acc, acc, zmm30);
      return;
    }
    // scalar_ops' max / min: keep the accumulator where it is NaN or strictly better, else
    // (ties, a NaN message) take the message.
    vcmpps(k2, acc, zmm30, s_.kind == ReduceKind::Max ? 0x1E : 0x11);  // GT_OQ / LT_OQ
    vcmpps(k3, acc, acc, 0x03);                                        // UNORD_Q
    korw(k2, k2, k3);
    vblendmps(acc | k2, zmm30, acc);
  }

  SegmentShape s_;
  const Reg64 row_ = rsi, edges_ = rdi, x_ = r8, x_rs_ = r9, out_ = r10, out_rs_ = r11, data_ = r12,
              data_rs_ = r13, weight_ = r14, w_stride_ = r15, row_ptr_ = rbx, src_ = rbp;
};

using RowsFn = void (*)(const SegmentRows*, int64_t, int64_t);

class Sealed : public SegmentCode {
 public:
  explicit Sealed(std::unique_ptr<SegmentEmitter> g) : g_(std::move(g)) {}
  void run(const SegmentRows& j, int64_t r0, int64_t r1) const override {
    reinterpret_cast<RowsFn>(const_cast<uint8_t*>(g_->getCode()))(&j, r0, r1);
  }
  size_t size() const override { return g_->getSize(); }

 private:
  std::unique_ptr<SegmentEmitter> g_;
};

}  // namespace

std::unique_ptr<SegmentCode> generate_segment_rows(const SegmentShape& shape) {
  if (shape.features < 0 || (shape.kind != ReduceKind::Sum && shape.kind != ReduceKind::Max &&
                             shape.kind != ReduceKind::Min))
    fail("jit: SegmentReduce: unsupported shape");
  auto gen = std::make_unique<SegmentEmitter>(shape);
  try {
    gen->generate();
  } catch (const Xbyak::Error& e) {
    fail("jit: SegmentReduce: code generation failed: ", e.what());
  }
  gen->setProtectModeRE();  // W^X: writable while generating, now read+execute only
  return std::make_unique<Sealed>(std::move(gen));
}

}  // namespace jit
}  // namespace ferrite
