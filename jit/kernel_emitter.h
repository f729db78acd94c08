// The x86 emitter behind generate_kernel (kernel_codegen.h). Split by concern:
//   emitter_loops.cc   frame, odometers, vector loops, regions and register allocation
//   emitter_values.cc  value instructions on vectors (f32 / bool masks / int32 lanes)
//   emitter_memory.cc  addresses, loads and stores (contiguous, broadcast, strided, gathers,
//                      masked reads, tails)
//   emitter_lane_index.cc  a gather's per-lane offsets (lane-varying values, products,
//                      floor divisions and remainders of the vector variable)
//   emitter_int64.cc   int64 storage along the lanes (saturated, converted to f32, copied)
//   emitter_scalar.cc  uniform instructions: int64 in general registers, the rest in lane 0
//   emitter_reduce.cc  accumulators: init, accumulate, horizontal reduce
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include <xbyak/xbyak.h>

#include "jit/const_pool.h"
#include "jit/kernel_analysis.h"
#include "jit/vec_context.h"

namespace ferrite {
namespace jit {

class KernelEmitter : public Xbyak::CodeGenerator {
 public:
  KernelEmitter(const Layout& layout, size_t max_code);
  void generate();
  // Bytes of instructions; the constant pool follows them (the rest of getSize()).
  size_t instruction_bytes() const { return instruction_bytes_; }

 private:
  size_t instruction_bytes_ = 0;
  using Xmm = Xbyak::Xmm;
  using Reg64 = Xbyak::Reg64;

  // ---- frame (emitter_loops.cc)
  Xbyak::Address home(int id) { return ptr[rsp + home_off_ + id * vbytes_]; }
  Xbyak::Address home32(int id) { return dword[rsp + home_off_ + id * vbytes_]; }
  Xbyak::Address home64(int id) { return qword[rsp + home_off_ + id * vbytes_]; }
  Xbyak::Address row_ptr(int a) { return qword[rsp + ptr_off_ + a * 16]; }
  Xbyak::Address cur_ptr(int a) { return qword[rsp + ptr_off_ + a * 16 + 8]; }
  Xbyak::Address var_slot(int v) { return qword[rsp + var_off_ + v * 8]; }
  Xbyak::Address misc(int i) { return qword[rsp + misc_off_ + i * 8]; }
  Xbyak::Address buf(int byte) { return ptr[rsp + buf_off_ + byte]; }
  enum Misc {
    kSavedRsp = 0,
    kCall,
    kRowsLeft,
    kVecBegin,
    kVecEnd,
    kStepLin,
    kCopySrc,
    kCheck,
    kLeaves,      // pairwise sums: leaves pushed in this inner loop
    kRowsToLeaf,  // pairwise sums over short rows: rows until the next leaf
    kExpr,        // the last: eval_form's kExprSlots scratch slots start here
  };
  static constexpr int kExprSlots = 16;

  // ---- structure (emitter_loops.cc)
  void layout_frame();
  void prologue();
  void epilogue();
  void run_rows();
  void pointwise_row();
  void lanes_inner_row();
  void lanes_outer_row();
  void lanes_outer_chunk(bool tail);
  void step_odometer(int loop, bool lanes_outer, bool tail);
  void vector_loop(int loop);
  void vec_body(int loop, bool tail);
  void chunks(const std::function<void(bool tail)>& body);
  void set_tail_mask();  // n = r12 - rbx in (0, lanes)
  void advance(const std::vector<int>& vars, bool cur, const Xbyak::Label& again);
  std::vector<int> region(Where w, int loop) const;

  // ---- registers (emitter_loops.cc)
  void reset_regs();
  void emit_uniform_region(const std::vector<int>& ids);
  void emit_varying_region(const std::vector<int>& ids, bool tail);
  void pin(const std::vector<int>& ids, int budget);
  void unpin();
  int alloc(int id);  // spills the value read furthest ahead (next_use_) if none is free
  Xmm fetch(int id, int temp);
  // Where each value of a region is read next (next_use_), so that freeing a dead value and
  // choosing a spill cost O(1) each, not a scan of the rest of the region.
  void plan_uses(const std::vector<int>& ids);
  void consume_operands(const std::vector<int>& ids, size_t pos);
  void free_dead(const std::vector<int>& ids, size_t pos);
  void load_bases(const std::vector<int>& ids);
  void release_bases();
  bool uses_outside(int id) const { return outside_[id]; }

  // ---- values (emitter_values.cc)
  void vector_instr(int id, const Xmm& d, const Xmm* ops, bool tail);
  void vec_unary(const Instr& in, const Xmm& d, const Xmm& a);
  void vec_unary_i64(const Instr& in, const Xmm& d, const Xmm& a);
  void vec_binary(const Instr& in, const Xmm& d, const Xmm& a, const Xmm& b);
  void vec_compare(Op op, ScalarType t, const Xmm& d, const Xmm& a, const Xmm& b);
  void vec_cast(ScalarType from, ScalarType to, const Xmm& d, const Xmm& a);
  void vec_where(const Xmm& d, const Xmm& c, const Xmm& b, const Xmm& e);
  void vec_check_index(int id, const Xmm& d, const Xmm& a, const Xmm* mask, bool tail);
  void mask_to_k(const Xbyak::Opmask& k, const Xmm& m);
  void k_to_mask(const Xmm& d, const Xbyak::Opmask& k);
  void vec_pow_const(const Xmm& d, const Xmm& a, double e);
  VecContext math_ctx();

  // ---- memory (emitter_memory.cc)
  void base_of(int access, const Reg64& r);  // r = row/cur pointer + terms
  void eval_form(const LinearForm& f, const Reg64& r);
  Reg64 base_reg(int access);  // cached in the innermost loop, else computed into rax
  void vector_load(int id, const Xmm& d, const Xmm* mask, bool tail);
  void broadcast_load(DType dt, const Reg64& b, const Xmm& d);
  void contiguous_load(DType dt, const Xbyak::RegExp& at, const Xmm& d, bool tail);
  void vector_store(int id, const Xmm& v, const Xmm* mask, bool tail);
  void strided_store(DType dt, const Reg64& b, int64_t stride, const Xmm& v, bool tail);
  void i64_store(int value, const Xbyak::RegExp& at, const Xmm& v, bool tail);
  void byte_store(const Xbyak::RegExp& at, const Xmm& v, bool tail);
  void vector_gather(int access, const Xmm& d, bool tail);

  // ---- per-lane index terms (emitter_lane_index.cc)
  // off = the byte offsets, per lane, of the lane-varying part of the access's index (its
  // lane-varying terms, and lane * vec_coeff); clobbers rax, rcx, rdx, math_[1], math_[3],
  // temps_[1], temps_[2] and `spare`.
  void lane_offsets(int access, const Xmm& off, const Xmm& spare);
  // regs[depth] = the int32 lanes of f (of t); the registers above it are clobbered.
  void lane_form(const LinearForm& f, const std::vector<Xmm>& regs, size_t depth);
  void lane_term(const LinearTerm& t, const std::vector<Xmm>& regs, size_t depth);
  // a = floor(a / c), or the remainder a - floor(a / c) * c, per int32 lane (c > 0).
  void lane_floor_div(bool mod, int64_t c, const Xmm& a, const Xmm& x, const Xmm& y);
  // The lanes a vector access touches: those before the tail, in k2 (AVX-512) or, as a lane
  // mask, in avx2_mask (AVX2).
  void active_lanes(bool tail, const Xmm& avx2_mask);
  // d = the 32-bit elements at rdx + offsets (bytes) in the lanes of k2 / avx2_mask, else 0.
  // A gather of 32-bit elements, or of bytes (uint8, int8: widened to 32 bits, through the
  // aligned dwords holding them; `spare` is clobbered then).
  void gather32(DType dt, const Xmm& d, const Xmm& offsets, const Xmm& avx2_mask, const Xmm& spare);
  void narrow_i64_load(int access, const Reg64& base, const Xmm& d, bool tail);
  void copy_i64_store(int id, bool tail);
  void convert_i64_store(const Xbyak::RegExp& at, const Xmm& v, bool tail);
  void float_i64_load(int access, const Reg64& base, const Xmm& d, bool tail);
  void masked_read(int access, const Reg64& base, const Xmm& d, const Xmm& mask, bool tail);
  void scalar_load(int id);

  // ---- run-time bounds checks of unproven masked loads (emitter_bounds.cc)
  // Fails the kernel with Load `id` unless the address in rax lies in access a's arg.
  void check_scalar_read(int id, int access);
  // The same for each lane a vector read reads (those in k2, or in avx2_lanes): lane l
  // reads at b + (rbx + l) * stride. Clobbers rcx and rdx.
  void check_lane_reads(int id, int access, const Reg64& b, const Xbyak::Ymm& avx2_lanes);
  void check_address(int access, const Reg64& addr, const Xbyak::Label& outside);
  void scalar_store(int id);
  Xbyak::RegExp lane0(int access, const Reg64& base);
  void stage_in(const Reg64& from, int bytes_per_lane);
  void stage_out(const Reg64& to, int bytes_per_lane);

  // ---- uniform instructions (emitter_scalar.cc)
  void uniform_instr(int id);
  void uniform_i64(int id);
  void uniform_i64_cast(int id);
  void uniform_i64_divide(const Instr& in);
  void bool_from_flags(int id, void (Xbyak::CodeGenerator::*setcc)(const Xbyak::Operand&));
  void check_index(int id);
  void fail_exit(int id, const Reg64& value);

  // ---- reductions (emitter_reduce.cc)
  void init_accumulators(int loop);
  void accumulate(int id, const Xmm& x, bool tail);
  void finish_accumulators(int loop);
  void horizontal(ReduceKind kind, int acc, int idx);
  int acc_reg(int id) const { return acc_[id]; }
  int acc_idx_reg(int id) const { return acc_idx_[id]; }

  // ---- pairwise sums (emitter_reduce.cc; pairwise_sum.h's scheme): an f32 Sum with more
  // steps per lane than a leaf pushes its accumulator as a leaf into levels in the frame,
  // added back before the result is read. LanesOuter: every kPairwiseLeaf odometer steps,
  // the reference's leaves. LanesInner: every kInnerLeaf vectors (a row's blocks, or groups
  // of short rows); 4 times longer leaves, as each costs a loop exit and a push (about 50
  // cycles: 10% of 128 vector adds, under 3% of 512).
  static constexpr int64_t kInnerLeaf = 512;
  void plan_pairwise();
  bool pairwise_loop(int loop) const;
  bool blocked_rows(int loop) const {  // LanesInner: leaves are blocks of a row
    return L_.mode == Mode::LanesInner && leaf_rows_ == 0 && pairwise_loop(loop);
  }
  void push_leaves(int loop);
  void finish_leaves(int loop);
  void after_pairwise_step(int loop);  // LanesOuter: after each odometer step
  void after_pairwise_row(int loop);   // LanesInner, short rows: after each row
  Xbyak::Address level(int id, int j) {
    return ptr[rsp + level_off_ + (level_slot_[id] * leaf_levels_ + j) * vbytes_];
  }

  // The int32 vector {0, step, 2*step, ...} (lane offsets, iota) from the constant pool.
  Xbyak::Address lane_ints(int64_t step);

  Xmm vec(int i) const {
    if (isa_ == Isa::Avx512) return Xbyak::Zmm(i);
    return Xbyak::Ymm(i);
  }
  bool avx512() const { return isa_ == Isa::Avx512; }

  const Layout& L_;
  const Kernel& k_;
  Isa isa_;
  int lanes_, vbytes_;
  ConstPool consts_;
  std::vector<int> pool_, temps_, math_;
  int tail_vreg_ = -1;  // AVX2: the tail lane mask while a tail body runs
  std::vector<Reg64> ptr_regs_;

  int home_off_ = 0, ptr_off_ = 0, var_off_ = 0, misc_off_ = 0, buf_off_ = 0, frame_ = 0;
  int level_off_ = 0, leaf_levels_ = 0;  // pairwise sums: levels per Sum (0: none)
  int64_t leaf_rows_ = 0;                // LanesInner: rows per leaf (0: blocks of a row)
  std::vector<int> level_slot_;          // Reduce id -> its levels in the frame, or -1

  std::vector<bool> outside_;       // value used by another region (or by general-register code)
  std::vector<int> reg_of_;         // value -> vector register, or -1
  std::vector<int> owner_;          // register -> value, or -1
  std::vector<bool> fixed_;         // register pinned or an accumulator (not for allocation)
  std::vector<int> pinned_;         // values pinned for the current innermost loop
  std::vector<int> base_reg_;       // access -> index into ptr_regs_, or -1
  std::vector<int> acc_, acc_idx_;  // Reduce value -> accumulator registers
  std::vector<int> cur_uses_;       // values the current instruction reads (never spilled)
  // The region being emitted: per value, the position of its next read after the last one
  // emitted (kNever: none); per operand of the region (operand_begin_[pos] onwards), the next
  // read of it after that position; per position, the first read of its value.
  static constexpr int kNever = 0x7fffffff;
  std::vector<int> next_use_, operand_begin_, operand_next_, def_next_;
  Xbyak::Label exit_;
  bool in_tail_ = false;
};

}  // namespace jit
}  // namespace ferrite
