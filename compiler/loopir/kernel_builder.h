// KernelBuilder: emits the SSA body of one Kernel while lowering code traces inner
// functions (Inductor's ops handler). Loads of buffers become kernel args (an aliased
// buffer's loads and stores go to its storage owner, at its offset); identical
// instructions are shared (CSE) and constant operands are folded through scalar_ops, so
// inlining a producer twice costs nothing. A mask stack makes every load and index check
// traced inside `MaskScope` conditional (concat, pad: out-of-range lanes touch no memory).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
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
  using V = ferrite::V;  // a builder of compiler/plan/activations.h's formulas

  KernelBuilder(std::string name, std::vector<int64_t> ranges, int num_reduce);

  const std::vector<int64_t>& ranges() const { return k_.ranges; }
  // The loop ranges over the symbols of a symbolic compile (loopir/shape_env.h; `ranges`
  // are their hints): indices then may hold Sym leaves, and are simplified by proofs that
  // hold for every value of the symbols.
  void set_sym_ranges(std::vector<Index> sym_ranges);
  const std::optional<std::vector<Index>>& sym_ranges() const { return sym_ranges_; }
  Index var(int d) const { return ix_var(d); }

  V load(Buffer* buf, Index index);
  void store(Buffer* buf, Index index, V value);
  V constant(ScalarType t, double value);
  V constant(V like, double value) { return constant(like.type, value); }
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
  // Loads of buffers that were not compile-time constants (BufferOrigin::Constant) then.
  int num_variable_loads() const { return num_variable_loads_; }
  const std::vector<Buffer*>& arg_buffers() const { return arg_buffers_; }
  // Whether this builder has loaded or stored `owner` (a storage owner).
  bool has_arg(const Buffer* owner) const { return arg_index_.count(owner) > 0; }

  // Memoized walks, for a builder that traces many values one after another (the realize
  // policy's counts, GraphLowering): with memoize on, walk_once(def, index, walk) runs
  // `walk` (the inlined definition `def` at `index`) once per unmasked index; later calls
  // return its value and add the counts it added (loads, compute, variable loads), as the
  // walk would, since CSE and constant folding make a walk's result and counts a function
  // of the definition and the index alone. Tracing a chain of N values one by one then
  // costs O(N), not O(N^2). forget_walks() drops them (after a loaded buffer became a
  // constant, which changes num_variable_loads).
  // walk_height() is the most walks nested one in another since reset_walk_height() (a
  // memoized walk counts as deep as it was): the depth of inlining, which the C++ stack
  // follows.
  void set_memoize(bool on) { memoize_ = on; }
  void reset_walk_height() { height_ = 0; }
  int walk_height() const { return height_; }
  V walk_once(std::shared_ptr<const void> def, const std::vector<Index>& index,
              const std::function<V()>& walk);
  void forget_walks() { walks_.clear(); }
  // The instruction that defines v (for inspection, e.g. constant detection).
  const Instr& instr(V v) const { return k_.code[v.id]; }

  // Simplifies every index with the loop ranges and validates the kernel.
  Kernel finish();

 private:
  int arg_for(Buffer* buf, bool output);
  V emit(Instr in);
  bool try_fold(const Instr& in, V* out);

  struct Walk {
    std::shared_ptr<const void> def;  // keeps the key's definition alive
    V value;
    int loads = 0, compute = 0, variable_loads = 0, height = 0;
  };

  Kernel k_;
  std::optional<std::vector<Index>> sym_ranges_;
  std::vector<Buffer*> arg_buffers_;
  std::unordered_map<const Buffer*, int> arg_index_;
  std::unordered_map<std::string, int> message_index_;
  std::map<std::string, int> cse_;
  bool memoize_ = false;
  int height_ = 0;
  std::unordered_map<std::string, Walk> walks_;
  std::vector<int> masks_;                        // SSA ids of the combined mask at each depth
  std::vector<std::pair<int, int64_t>> checked_;  // CheckIndex results and their sizes
  bool in_post_ = false;
  int num_loads_ = 0;
  int num_compute_ = 0;
  int num_variable_loads_ = 0;
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
