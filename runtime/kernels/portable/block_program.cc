#include "runtime/kernels/portable/block_program.h"

#include <algorithm>

#include "compiler/plan/dependence_classes.h"
#include "compiler/plan/lane_choice.h"
#include "compiler/plan/loop_dims.h"
#include "compiler/plan/outer_order.h"

namespace ferrite {
namespace portable {
namespace {

// A pointwise kernel whose innermost dim is shorter than this runs with its longest outer
// dim innermost, when its points commute: each row costs its row-level work and a pass over
// every lane instruction, which a short row does not pay back, while the permuted kernel
// fills its blocks but walks the old innermost dim's accesses strided. Measured on one core:
// a [16777219, 3] Resize (a fuzz unit) 3.7 -> 0.83 s, a [9, 1000003, 3] AveragePool 8.2 ->
// 1.2 s, [3, 1000028, 30] 6.6 -> 5.2 s, gcn's [10000, 16] Mul 0.57 -> 0.38 ms; its
// [10000, 128] one 0.8 -> 5.9 ms (a cache line per point) is why rows of 64 and more stay.
// The compiler keeps the store-contiguous dim innermost, for the JIT, whose rows cost
// nothing.
constexpr int64_t kNarrowRow = 64;

Kernel widen_rows(const Kernel& merged) {
  const int outer = merged.num_outer();
  if (merged.num_reduce != 0 || outer < 2 || merged.ranges[outer - 1] >= kNarrowRow) return merged;
  int longest = 0;
  for (int d = 1; d < outer - 1; ++d)
    if (merged.ranges[d] > merged.ranges[longest]) longest = d;
  if (merged.ranges[longest] < 4 * kNarrowRow || !outer_points_commute(merged)) return merged;
  std::vector<int> order;
  for (int d = 0; d < outer; ++d)
    if (d != longest) order.push_back(d);
  order.push_back(longest);
  return permute_outer_dims(merged, order);
}

class Builder {
 public:
  explicit Builder(const Kernel& k) {
    // Long rows: a [1, 64, 56, 56] pointwise kernel runs as one row of 200704 points. A
    // no-op for kernels the compiler normalised; plans from elsewhere get it here.
    p_.k = widen_rows(merge_loop_dims(k));
    p_.info.resize(p_.k.code.size());
  }

  BlockProgram build() {
    choose_lanes();
    compute_levels();
    classify();
    mark_broadcasts();
    assign_slots();
    compile_indices();
    return std::move(p_);
  }

 private:
  const Kernel& k() const { return p_.k; }
  Level level(int id) const { return p_.info[id].level; }

  void choose_lanes() {
    const int dims = static_cast<int>(k().ranges.size()), outer = k().num_outer();
    p_.lane_var = dims - 1;
    bool lanes_outer = prefer_lanes_outer(k());
    hazard_ = hazard_loads(k(), lanes_outer);
    if (lanes_outer && any(hazard_)) {
      // Lanes on the reduction may keep whole blocks where outer lanes cannot.
      std::vector<bool> inner = hazard_loads(k(), false);
      if (!any(inner)) {
        lanes_outer = false;
        hazard_ = std::move(inner);
      }
    }
    if (lanes_outer) {
      p_.lane_var = outer - 1;
      p_.lanes_outer = true;
    }
  }

  static bool any(const std::vector<bool>& v) {
    return std::find(v.begin(), v.end(), true) != v.end();
  }

  // Levels from the shared analysis (dependence_classes.h): a value that depends on the
  // lane variable (or on a load that must see the kernel's stores in order) is Lane; one
  // that depends on another loop variable, a reduction, memory or a check that may fail is
  // Row; the rest is Const, computed at prepare.
  static constexpr ClassMask kRow = 1, kLane = 2;

  Level level_of(ClassMask m) const {
    return (m & kLane) ? Level::Lane : m ? Level::Row : Level::Const;
  }

  void compute_levels() {
    if (any(hazard_)) p_.block = 1;
    classes_.var.assign(k().ranges.size(), kRow);
    if (p_.lane_var >= 0) classes_.var[static_cast<size_t>(p_.lane_var)] = kLane;
    classes_.reduce_result = kRow;
    classes_.load = kRow;
    classes_.check = kRow;
    classes_.seed.assign(k().code.size(), 0);
    for (size_t i = 0; i < k().code.size(); ++i)
      if (hazard_[i]) classes_.seed[i] = kLane;
    masks_ = dependence_classes(k(), classes_);
    for (size_t i = 0; i < k().code.size(); ++i) {
      p_.info[i].level = k().code[i].op == Op::Store ? Level::Lane : level_of(masks_[i]);
    }
  }

  void classify() {
    const int n = static_cast<int>(k().code.size());
    const bool scalar_post = k().num_reduce > 0 && !p_.lanes_outer;
    p_.loops.resize(k().num_loops());
    for (int i = 0; i < n; ++i) {
      const Instr& in = k().code[i];
      const bool post = i >= k().post_begin;
      LoopLists* loop = post ? nullptr : &p_.loops[k().loop_of(i)];
      if (in.op == Op::Reduce) {
        loop->reduces.push_back(i);
        loop->lane.push_back(i);
      } else if (level(i) == Level::Const && in.op != Op::Store) {
        p_.consts.push_back(i);
      } else if (post && scalar_post) {
        p_.post_row.push_back(i);
      } else if (level(i) == Level::Lane) {
        (post ? p_.post_lane : loop->lane).push_back(i);
      } else {
        (post ? p_.post_row : loop->row).push_back(i);
      }
    }
  }

  // Every Lane instruction in program order: the loops run one after the other and values
  // other than Reduces and Consts (which keep their slots) never cross a loop.
  std::vector<int> lane_sequence() const {
    std::vector<int> seq;
    for (const LoopLists& loop : p_.loops)
      seq.insert(seq.end(), loop.lane.begin(), loop.lane.end());
    seq.insert(seq.end(), p_.post_lane.begin(), p_.post_lane.end());
    return seq;
  }

  void mark_broadcasts() {
    for (int i : lane_sequence()) {
      for_each_value_operand(k().code[i], [&](int id) {
        if (level(id) != Level::Lane) p_.info[id].broadcast = true;
      });
    }
  }

  bool dedicated(int id) const { return p_.info[id].broadcast || k().code[id].op == Op::Reduce; }

  // Lane values read by instruction i: operands and Value leaves of its index.
  std::vector<int> lane_reads(int i) const {
    const Instr& in = k().code[i];
    std::vector<int> ids;
    for_each_value_operand(in, [&](int id) { ids.push_back(id); });
    if (in.index) index_values(*in.index, &ids);
    return ids;
  }

  void assign_slots() {
    int next = 0;
    for (size_t i = 0; i < k().code.size(); ++i) {
      InstrInfo& info = p_.info[i];
      if (info.broadcast) info.slot = next++;
      if (k().code[i].op == Op::Reduce && p_.lanes_outer) {
        info.slot = next++;
        const ReduceKind r = k().code[i].reduce;
        if (r == ReduceKind::ArgMax || r == ReduceKind::ArgMin) info.acc_slot = next++;
      }
    }
    // Linear scan over the lane sequence: a slot is free again after its last reader.
    const std::vector<int> seq = lane_sequence();
    std::vector<int> last_use(k().code.size(), -1);
    for (size_t pos = 0; pos < seq.size(); ++pos)
      for (int id : lane_reads(seq[pos])) last_use[id] = static_cast<int>(pos);
    std::vector<int> free_slots;
    for (size_t pos = 0; pos < seq.size(); ++pos) {
      const int i = seq[pos];
      const Op op = k().code[i].op;
      const bool defines = op != Op::Store && op != Op::Reduce;
      if (defines) {
        if (free_slots.empty()) {
          p_.info[i].slot = next++;
        } else {
          p_.info[i].slot = free_slots.back();
          free_slots.pop_back();
        }
      }
      for (int id : lane_reads(i))
        if (last_use[id] == static_cast<int>(pos) && !dedicated(id) && p_.info[id].slot >= 0) {
          free_slots.push_back(p_.info[id].slot);
          last_use[id] = -2;  // freed once even if read twice by i
        }
      if (defines && last_use[i] == -1) free_slots.push_back(p_.info[i].slot);  // unused
    }
    p_.num_slots = next;
  }

  bool lane_free(const IndexNode& e) const {
    return (index_classes(e, classes_, masks_) & kLane) == 0;
  }

  // Postfix code for e; returns the stack depth it needs.
  int compile(const IndexNode& e, LaneIndex* out) const {
    IndexStep s;
    if (lane_free(e)) {
      s.kind = e.kind == IndexKind::Const ? IndexStep::Const : IndexStep::Uniform;
      s.c = e.c;
      s.node = &e;
      out->steps.push_back(s);
      return 1;
    }
    switch (e.kind) {
      case IndexKind::Var:
        s.kind = IndexStep::LaneVar;
        break;
      case IndexKind::Value:
        s.kind = IndexStep::Value;
        s.id = e.id;
        break;
      default: {
        const int da = compile(*e.a, out), db = compile(*e.b, out);
        s.kind = e.kind == IndexKind::Add   ? IndexStep::Add
                 : e.kind == IndexKind::Mul ? IndexStep::Mul
                 : e.kind == IndexKind::Mod ? IndexStep::Mod
                                            : IndexStep::FloorDiv;
        out->steps.push_back(s);
        return std::max(da, db + 1);
      }
    }
    out->steps.push_back(s);
    return 1;
  }

  void compile_indices() {
    const int dims = static_cast<int>(k().ranges.size());
    for (int i : lane_sequence()) {
      const Instr& in = k().code[i];
      if (in.op != Op::Load && in.op != Op::Store) continue;
      LaneIndex li;
      li.affine = as_affine(*in.index, dims, &li.form);
      if (!li.affine) li.depth = compile(*in.index, &li);
      p_.index_depth = std::max(p_.index_depth, li.depth);
      p_.info[i].index = static_cast<int>(p_.indices.size());
      p_.indices.push_back(std::move(li));
    }
  }

  BlockProgram p_;
  std::vector<bool> hazard_;  // per instruction: hazard_loads for the chosen lanes
  DependenceClasses classes_;
  std::vector<ClassMask> masks_;
};

}  // namespace

BlockProgram build_program(const Kernel& validated) {
  return Builder(validated).build();
}

}  // namespace portable
}  // namespace ferrite
