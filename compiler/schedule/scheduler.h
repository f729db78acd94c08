// The scheduler (Inductor's Scheduler): one node per kernel or extern call of the lowered
// program, their dependencies, dead-node elimination, fusion, and the final order.
//
// Dependencies (Inductor's MemoryDep / StarDep / WeakDep):
//   Memory  a kernel's Load or Store of a buffer, with its index expression
//   Star    a whole-buffer access: extern operands and results, guard conditions
//   Weak    ordering only: a write must wait for earlier reads of the same storage (WAR)
// A node's predecessors are the earlier nodes it reads from (RAW), overwrites (WAW) or
// must not overtake (WAR).
//
// Fusion (Inductor's fuse_nodes): candidate pairs are kernel nodes that share a buffer
// (a producer and its consumer, or siblings reading the same input), scored by the bytes
// of the buffers they share (score_fusion_memory), tried best first; a pair fuses when
// its guards agree, it creates no cycle (no path from one to the other through a third
// node) and merge_kernels can lay both into one loop nest. Rounds repeat until nothing
// fuses. Afterwards a buffer that only its own fused node reads loses its store, and
// with it its memory.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "compiler/lower/graph_lowering.h"
#include "compiler/schedule/kernel_merge.h"

namespace ferrite {

enum class DepKind : uint8_t { Memory, Star, Weak };

struct Dep {
  DepKind kind = DepKind::Memory;
  Buffer* buffer = nullptr;  // a storage owner
  Index index;               // Memory deps: the element index (over the node's loop vars)
};

struct SchedulerNode {
  std::string name;
  int extern_index = -1;  // an extern call, or
  BoundKernel kernel;     // a kernel (of one or several fused nodes)
  std::vector<LoweredGuard> guards;
  std::vector<Dep> reads, writes;
  std::vector<Dep> weak;     // ordering only: buffers this node overwrites after others read
  std::vector<int> members;  // the original nodes it holds, by position in program order
  std::set<int> preds;       // nodes (ids into the scheduler's list) that must run first

  bool is_extern() const { return extern_index >= 0; }
};

// The reads and writes of one node (Memory for kernels, Star for externs and guards).
void compute_deps(SchedulerNode* node, const LoweredProgram& prog);

struct FusionDecision {
  int round = 0;
  std::string first, second;
  int64_t score = 0;  // bytes of shared buffers
  bool fused = false;
  std::string reason;  // why not
};

struct SchedulerOptions {
  bool fuse = true;
  int max_rounds = 10;
};

class Scheduler {
 public:
  // Builds the nodes of `prog` in program order, keeping only those a graph output needs.
  Scheduler(LoweredProgram& prog, SchedulerOptions options = {});

  // Fusion rounds; then drops the stores nobody outside a fused node reads.
  void fuse();
  // The live nodes in a topological order (program order where dependencies allow).
  std::vector<const SchedulerNode*> order() const;

  const std::vector<FusionDecision>& decisions() const { return decisions_; }
  // The decisions and the final groups, for FERRITE_DUMP.
  std::string report() const;

 private:
  void compute_preds();
  bool reaches(int from, int to, int skip_direct) const;
  void place_fused(int first);
  std::string try_fuse(int x, int y, int64_t score, int round);
  void drop_internal_stores();

  LoweredProgram& prog_;
  SchedulerOptions options_;
  std::vector<SchedulerNode> nodes_;
  std::vector<bool> alive_;
  std::vector<FusionDecision> decisions_;
  std::vector<std::set<int>> succs_;  // the nodes whose preds hold each node
  std::vector<double> topo_;          // a topological order: every pred's topo_ is smaller
  mutable std::vector<int> seen_;     // reaches' visited marks (== stamp_)
  mutable int stamp_ = 0;
  mutable bool search_cut_ = false;  // a reaches() since try_fuse reset it ran out of budget
  // Pairs refused for good: fusing elsewhere only adds paths between nodes (a cycle stays a
  // cycle) and leaves the kernels of the others as they were, so a pair whose two nodes are
  // the same as when it was refused is refused again, for the same reason — except when the
  // cycle search ran out of budget (the graph it searches shrinks as nodes fuse). Each node's
  // version counts the nodes it took in; refused_ holds the pair's versions at its refusal.
  std::vector<int> version_;
  std::map<std::pair<int, int>, std::pair<int, int>> refused_;
};

}  // namespace ferrite
