// KernelBuilder: emits the SSA body of one Kernel while lowering code traces inner
// functions (Inductor's ops handler). Loads of buffers become kernel args (an aliased
// buffer's loads and stores go to its storage owner, at its offset); identical
// instructions are shared (CSE) and constant operands are folded through scalar_ops, so
// inlining a producer twice costs nothing. A mask stack makes every load and index check
// traced inside `MaskScope` conditional (concat, pad: out-of-range lanes touch no memory).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "compiler/plan/kernel.h"

namespace ferrite {

struct Buffer;

struct V {
  int id = -1;
  ScalarType type = ScalarType::F32;
};

class KernelBuilder {
 public:
  KernelBuilder(std::string name, std::vector<int64_t> ranges, int num_reduce);

  const std::vector<int64_t>& ranges() const { return k_.ranges; }
  Index var(int d) const { return ix_var(d); }

  V load(Buffer* buf, Index index);
  void store(Buffer* buf, Index index, V value);
  V constant(ScalarType t, double value);
  // An i64 constant, exact (a double holds integers only up to 2^53).
  V constant_i64(int64_t value);
  V unary(Op op, V a);
  V binary(Op op, V a, V b);
  V where(V cond, V a, V b);
  V cast(V a, ScalarType to);
  // A checked, normalised index into a dimension of size n (negative counts from the end).
  V check_index(V index, int64_t n, const std::string& message);
  V reduce(ReduceKind kind, V a);
  V loop_var(int d);
  // The i64 value of an index expression (e.g. to compare a view's index with a bound).
  V index_value(const Index& e);
  // Switches from the per-point body to the post-reduction instructions.
  void begin_post();

  void push_mask(V mask);
  void pop_mask();

  int num_loads() const { return num_loads_; }
  int num_compute() const { return num_compute_; }
  const std::vector<Buffer*>& arg_buffers() const { return arg_buffers_; }
  // The instruction that defines v (for inspection, e.g. constant detection).
  const Instr& instr(V v) const { return k_.code[v.id]; }

  // Simplifies every index with the loop ranges and validates the kernel.
  Kernel finish();

 private:
  int arg_for(Buffer* buf, bool output);
  V emit(Instr in);
  bool try_fold(const Instr& in, V* out);

  Kernel k_;
  std::vector<Buffer*> arg_buffers_;
  std::map<std::string, int> cse_;
  std::vector<int> masks_;                        // SSA ids of the combined mask at each depth
  std::vector<std::pair<int, int64_t>> checked_;  // CheckIndex results and their sizes
  bool in_post_ = false;
  int num_loads_ = 0;
  int num_compute_ = 0;
};

class MaskScope {
 public:
  MaskScope(KernelBuilder& b, V mask) : b_(b) { b_.push_mask(mask); }
  ~MaskScope() { b_.pop_mask(); }
  MaskScope(const MaskScope&) = delete;
  MaskScope& operator=(const MaskScope&) = delete;

 private:
  KernelBuilder& b_;
};

}  // namespace ferrite
