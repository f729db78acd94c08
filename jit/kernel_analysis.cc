#include "jit/kernel_analysis.h"

#include <algorithm>
#include <climits>
#include <limits>

#include "compiler/plan/dependence_classes.h"
#include "compiler/plan/dtype.h"
#include "compiler/plan/lane_choice.h"
#include "compiler/plan/loop_dims.h"
#include "jit/analysis_rules.h"
#include "jit/mask_bounds.h"

namespace ferrite {
namespace jit {
namespace {

// uint8, int8 and float16 elements are gathered through the aligned dwords that hold them
// (KernelEmitter::gather32), so strided, masked and indexed loads take them as 32-bit ones.
bool gathers_bytes(DType t) {
  return t == DType::U8 || t == DType::I8 || t == DType::F16;
}

using namespace ranges;  // NOLINT: the interval arithmetic reads best unqualified

// Bound on a masked Load's index where its mask may be false: element offsets of 8-byte
// elements stay below 2^61 bytes, so an address computed from one never wraps around.
constexpr int64_t kMaxMaskedIndex = int64_t{1} << 58;

class Analyzer {
 public:
  Analyzer(const Kernel& validated, Isa isa, Mode mode, Layout* out) : L_(*out) {
    L_ = Layout();
    L_.k = merge_loop_dims(validated);
    L_.isa = isa;
    L_.lanes = isa_lanes(isa);
    L_.mode = mode;
  }

  std::string run() {
    const Kernel& k = L_.k;
    const int dims = static_cast<int>(k.ranges.size()), outer = k.num_outer();
    for (int64_t r : k.ranges)
      if (r == 0) return "an empty dimension";
    if (k.num_reduce > 0 && k.reduce_points() > kI32Max) return "a reduction longer than 2^31";
    switch (L_.mode) {
      case Mode::Pointwise:
        L_.vec_var = dims - 1;
        for (int v = 0; v + 1 < dims; ++v) L_.outer_scalar.push_back(v);
        break;
      case Mode::LanesInner:
        L_.vec_var = dims - 1;
        for (int v = 0; v < outer; ++v) L_.outer_scalar.push_back(v);
        for (int v = outer; v + 1 < dims; ++v) L_.reduce_scalar.push_back(v);
        break;
      case Mode::LanesOuter:
        if (outer == 0) return "no outer dimension to put lanes on";
        L_.vec_var = outer - 1;
        for (int v = 0; v + 1 < outer; ++v) L_.outer_scalar.push_back(v);
        for (int v = outer; v < dims; ++v) L_.reduce_scalar.push_back(v);
        break;
    }
    if (L_.vec_var >= 0 && k.ranges[L_.vec_var] > kI32Max) return "a vector dimension over 2^31";
    if (L_.outer_scalar.size() > kMaxRowVars) return "more than 16 row loop dimensions";
    const size_t n = k.code.size();
    L_.where.assign(n, Where::Entry);
    L_.uniform.assign(n, true);
    L_.loop.assign(n, 0);
    L_.range.assign(n, Range());
    fbound_.assign(n, ranges::FBound());
    L_.access.assign(n, -1);
    L_.wide.assign(n, Wide::None);
    users_.assign(n, {});
    stored_.assign(k.args.size(), false);
    for (size_t i = 0; i < n; ++i) {
      const Instr& in = k.code[i];
      if (in.op == Op::Store) stored_[static_cast<size_t>(in.arg)] = true;
      for_each_value_operand(in, [&](int id) { users_[id].push_back(static_cast<int>(i)); });
      if (in.index) {
        std::vector<int> ids;
        index_values(*in.index, &ids);
        for (int id : ids) users_[id].push_back(static_cast<int>(i));
      }
    }
    compute_dependences();
    for (size_t i = 0; i < n; ++i) {
      std::string why = place(static_cast<int>(i));
      if (why.empty()) why = check(static_cast<int>(i));
      if (!why.empty()) return "%" + std::to_string(i) + " " + op_name(k.code[i].op) + ": " + why;
    }
    return check_read_write();
  }

 private:
  Where var_where(int v) const {
    if (v == L_.vec_var) return L_.mode == Mode::LanesOuter ? Where::Chunk : Where::Vec;
    if (v < L_.k.num_outer()) return Where::Row;
    return Where::Step;
  }

  // The shared analysis (dependence_classes.h) with one class per loop position from Row to
  // Vec: a value is placed at the innermost position of all it depends on. A Reduce result
  // of an earlier loop is ready when the next loops start (Hoist), and so is an arg the
  // kernel also writes: it is read in its own loop, after the earlier loops stored it
  // (check_read_write), never hoisted above them. Loads and checks add nothing: a load of
  // a fixed element happens once, at entry.
  static ClassMask class_of(Where w) {
    return static_cast<ClassMask>(1u << (static_cast<int>(w) - 1));
  }
  static Where where_of(ClassMask m) {
    int w = 0;
    while (m >> w) ++w;
    return static_cast<Where>(w);
  }

  void compute_dependences() {
    const Kernel& k = L_.k;
    DependenceClasses c;
    for (int v = 0; v < static_cast<int>(k.ranges.size()); ++v)
      c.var.push_back(class_of(var_where(v)));
    c.reduce_result = class_of(Where::Hoist);
    c.seed.assign(k.code.size(), 0);
    for (size_t i = 0; i < k.code.size(); ++i) {
      const Instr& in = k.code[i];
      if (in.op == Op::Load && stored_[static_cast<size_t>(in.arg)])
        c.seed[i] = class_of(Where::Hoist);
    }
    depends_ = dependence_classes(k, c);
  }

  std::string place(int i) {
    const Kernel& k = L_.k;
    const Instr& in = k.code[i];
    const bool post = i >= k.post_begin;
    L_.loop[i] = post ? k.num_loops() : k.loop_of(i);
    Where w = where_of(depends_[static_cast<size_t>(i)]);
    if (post) {
      if (in.op != Op::Const) w = Where::Post;  // constants are materialized at entry
    } else {
      if (in.op == Op::Reduce) w = L_.mode == Mode::LanesOuter ? Where::Step : Where::Vec;
      // Pointwise kernels have no Hoist/Step: those ranks collapse into Row.
      if (L_.mode == Mode::Pointwise && (w == Where::Hoist || w == Where::Step)) w = Where::Row;
      // LanesOuter has no Vec: the reduce odometer is the innermost loop.
      if (L_.mode == Mode::LanesOuter && w == Where::Vec) w = Where::Step;
    }
    L_.where[i] = w;
    // A LanesInner Reduce accumulates lanes, but its result (what others read) is one value.
    L_.uniform[i] = in.op == Op::Reduce ? L_.mode == Mode::LanesInner : !L_.varying(w);
    return "";
  }

  Range range_of(int id) const { return L_.range[id]; }

  // A Cast: to I64 from Bool (0 or 1), or lane-varying from F32: of proven int32 bounds (a
  // clamp: quantization) int32 lanes, else only as int64 storage, converted by its stores.
  std::string check_cast(int i, Range* r) {
    const Instr& in = L_.k.code[i];
    if (in.type != ScalarType::I64) return "";
    const ScalarType from = L_.k.code[in.a].type;
    if (from == ScalarType::Bool) *r = known(0, 1);
    if (from != ScalarType::F32 || L_.uniform[i]) return "";
    *r = ranges::truncated(fbound_[static_cast<size_t>(in.a)]);
    if (r->known) return "";
    if (!only_stored_as_i64(i)) return "a vector cast F32 -> I64 not only stored";
    L_.wide[i] = Wide::Convert;
    return "";
  }

  std::string check(int i) {
    const Kernel& k = L_.k;
    const Instr& in = k.code[i];
    const bool uni = L_.uniform[i];
    const ScalarType t = in.type;
    auto operand_type = [&](int id) { return k.code[id].type; };
    bool f64 = t == ScalarType::F64;
    for_each_value_operand(in, [&](int id) { f64 = f64 || operand_type(id) == ScalarType::F64; });
    if (f64) return "F64 values";
    Range r;
    switch (in.op) {
      case Op::Const:
        if (t == ScalarType::I64) r = known(in.iimm, in.iimm);
        break;
      case Op::LoopVar:
        r = known(0, k.ranges[in.arg] - 1);
        break;
      case Op::Load: {
        const DType dt = k.args[in.arg].dtype;
        if (uni) {
          if (dt != DType::F32 && dt != DType::F16 && dt != DType::Bool && !uniform_int_storage(dt))
            return std::string("a uniform load of ") + dtype_name(dt);
        } else if (dt == DType::I64) {
          L_.wide[i] = wide_load(i);
          if (L_.wide[i] == Wide::None) return "a vector load of int64 used other than by checks";
          r = known(kI32Min, kI32Max);  // Narrow; Copy values are never computed with
          break;
        } else if (!varying_storage(dt, true)) {
          return std::string("a vector load of ") + dtype_name(dt);
        }
        r = storage_range(dt);
        if (dt == DType::Bool) r = known(0, 1);
        break;
      }
      case Op::Store: {
        const DType dt = k.args[in.arg].dtype;
        if (uni) {
          if (dt != DType::F32 && dt != DType::F16 && dt != DType::Bool && !uniform_int_storage(dt))
            return std::string("a uniform store of ") + dtype_name(dt);
        } else if (!varying_storage(dt, false)) {
          return std::string("a vector store of ") + dtype_name(dt);
        }
        break;
      }
      case Op::CheckIndex:
        if (!uni && in.iimm > kI32Max) return "a vector index check against a bound over 2^31";
        r = known(0, std::max<int64_t>(in.iimm - 1, 0));  // unchecked (masked) points give 0
        break;
      case Op::Reduce:
        if (operand_type(in.a) != ScalarType::F32) return "a reduction of a non-F32 value";
        if (in.reduce == ReduceKind::ArgMax || in.reduce == ReduceKind::ArgMin)
          r = known(0, k.reduce_points() - 1);
        break;
      case Op::Cast: {
        const std::string why = check_cast(i, &r);
        if (!why.empty()) return why;
        break;
      }
      case Op::Where:
        if (t == ScalarType::I64) r = hull(range_of(in.b), range_of(in.c));
        break;
      default: {
        const ScalarType ot = operand_type(in.a);
        if (ot == ScalarType::F32) {
          if (!f32_op(in.op)) return std::string("op ") + op_name(in.op) + " on F32";
        } else if (ot == ScalarType::Bool) {
          if (!bool_op(in.op)) return std::string("op on Bool");
        } else if (ot == ScalarType::I64) {
          if (uni ? !i64_scalar_op(in.op) : !i64_vector_op(in.op)) return "op on I64";
          r = int_range(in);
        }
        break;
      }
    }
    if (t == ScalarType::I64) L_.range[i] = r;
    if (t == ScalarType::F32)
      fbound_[static_cast<size_t>(i)] =
          ranges::float_bound(in, fbound_, in.op == Op::Cast ? range_of(in.a) : Range());
    if (!uni && in.op != Op::Store) {
      // Vector I64 values are int32 lanes: the value and its I64 operands must fit.
      if (t == ScalarType::I64 && !fits_i32(r) && L_.wide[i] != Wide::Convert)
        return "a vector I64 value without a proven int32 range";
      bool wide = false;
      for_each_value_operand(in, [&](int id) {
        wide = wide || (operand_type(id) == ScalarType::I64 && !fits_i32(range_of(id)));
      });
      if (wide) return "a vector I64 operand without a proven int32 range";
    }
    if (in.op == Op::Load || in.op == Op::Store) return check_access(i);
    return "";
  }

  // How lane-varying int64 storage loaded by `i` can be kept (Wide), from its uses.
  Wide wide_load(int i) const {
    const Kernel& k = L_.k;
    if (users_[i].empty()) return Wide::Narrow;
    bool checks = true, floats = true;
    for (int u : users_[i]) {
      const Instr& use = k.code[u];
      const bool as_a = use.a == i && use.b != i && use.c != i && use.mask != i;
      std::vector<int> leaves;
      if (use.index) index_values(*use.index, &leaves);
      const bool in_index = std::find(leaves.begin(), leaves.end(), i) != leaves.end();
      checks = checks && use.op == Op::CheckIndex && as_a && !in_index;
      floats = floats && use.op == Op::Cast && use.type == ScalarType::F32 && !in_index;
    }
    if (checks) return Wide::Narrow;
    if (floats) return Wide::Float;
    return k.code[i].mask < 0 && only_stored_as_i64(i) ? Wide::Copy : Wide::None;
  }

  // Whether every use of `i` stores it (as the value) into int64 storage.
  bool only_stored_as_i64(int i) const {
    const Kernel& k = L_.k;
    for (int u : users_[i]) {
      const Instr& use = k.code[u];
      std::vector<int> leaves;
      if (use.index) index_values(*use.index, &leaves);
      if (use.op != Op::Store || use.a != i || k.args[use.arg].dtype != DType::I64 ||
          std::find(leaves.begin(), leaves.end(), i) != leaves.end())
        return false;
    }
    return true;
  }

  Range int_range(const Instr& in) const {
    const Range a = range_of(in.a);
    switch (in.op) {
      case Op::Add:
        return add(a, range_of(in.b));
      case Op::Sub:
        return add(a, scale(range_of(in.b), -1));
      case Op::Mul:
        return mul(a, range_of(in.b));
      case Op::Max:
        return max_of(a, range_of(in.b));
      case Op::Min:
        return min_of(a, range_of(in.b));
      case Op::Neg:
        return scale(a, -1);
      case Op::Abs:
        if (!a.known || a.lo == std::numeric_limits<int64_t>::min()) return Range();
        return known(a.lo >= 0 ? a.lo : (a.hi <= 0 ? -a.hi : 0), std::max(-a.lo, a.hi));
      case Op::Relu:
        if (!a.known) return Range();
        return known(std::max<int64_t>(a.lo, 0), std::max<int64_t>(a.hi, 0));
      case Op::Sign:
        return known(-1, 1);
      default:
        return Range();  // Div, Mod: scalar only, no range needed
    }
  }

  Range form_range(const LinearForm& f) const { return all_points().form(f); }
  Range term_range(const LinearTerm& t) const { return all_points().term(t); }
  FormBounds all_points() const {
    return FormBounds(loop_ranges(L_.k), [this](int id) { return range_of(id); });
  }

  // A term computed per lane (a lane-varying Value, or a product / quotient / remainder of
  // forms varying along the lanes: lane_varying), for a gather (emitter_lane_index.cc):
  // int32 lanes, so the term and every form and term inside it must have a proven int32
  // range (then the int32 adds and multiplies, exact modulo 2^32, give exact values, and
  // each division sees its true numerator); each divisor must be a proven positive int32
  // constant, which replaces its form here (the emitter divides by constants only); and the
  // evaluation must fit kLaneIndexRegs vector registers: `regs` gets how many it needs.
  std::string lane_term(LinearTerm* t, int* regs) const {
    const bool division = t->kind == IndexKind::FloorDiv || t->kind == IndexKind::Mod;
    const Range d = division ? form_range(t->operands[1]) : Range();
    if (division && (!d.known || d.lo != d.hi || d.lo <= 0 || d.lo > kI32Max))
      return "a per-lane division by a divisor not proven a positive int32 constant";
    if (!fits_i32(term_range(*t))) return "a per-lane index term without a proven int32 range";
    *regs = 1;
    if (t->kind == IndexKind::Value) return "";
    int a = 0, b = 0;
    std::string why = lane_form(&t->operands[0], &a);
    if (!why.empty()) return why;
    if (t->kind == IndexKind::Mul) {
      why = lane_form(&t->operands[1], &b);
      *regs = std::max(a, 1 + b);  // the second operand above the first
      return why;
    }
    LinearForm divisor;
    divisor.offset = d.lo;
    divisor.coeff.assign(t->operands[1].coeff.size(), 0);
    t->operands[1] = std::move(divisor);
    *regs = std::max(a, 3);  // the numerator and two halves of it as doubles
    return "";
  }

  // An operand form of a per-lane term, in one register: its first lane-varying term is
  // computed there, each further one in the registers above it, then the part shared by the
  // lanes is broadcast into the register above and added.
  std::string lane_form(LinearForm* f, int* regs) const {
    if (!fits_i32(form_range(*f))) return "a per-lane index operand without a proven int32 range";
    *regs = 1;
    bool first = true;
    for (LinearTerm& t : f->terms) {
      if (!lane_varying(L_, t)) continue;
      int tr = 0;
      const std::string why = lane_term(&t, &tr);
      if (!why.empty()) return why;
      *regs = std::max(*regs, first ? std::max(tr, 2) : 1 + tr);
      first = false;
    }
    return "";
  }

  std::string check_access(int i) {
    const Kernel& k = L_.k;
    const Instr& in = k.code[i];
    Access a;
    a.instr = i;
    a.arg = in.arg;
    a.esize = static_cast<int>(dtype_size(k.args[in.arg].dtype));
    a.form = linearize(*in.index, static_cast<int>(k.ranges.size()));
    // A dim of one point is always 0: its coefficient, which a corrupt plan may make huge,
    // would only be scaled into pointer steps (and could overflow there).
    for (size_t v = 0; v < a.form.coeff.size(); ++v)
      if (k.ranges[v] <= 1) a.form.coeff[v] = 0;
    for (LinearTerm& t : a.form.terms) {
      if (!lane_varying(L_, t)) continue;
      // A gather: the access must be a 32-bit load (a scatter's lanes could collide).
      const bool value = t.kind == IndexKind::Value;
      if (in.op != Op::Load) {
        return value ? "a store through a vector value (scatter)"
                     : "a store through a per-lane product, quotient or remainder (scatter)";
      }
      if (a.esize != 4 && !gathers_bytes(k.args[in.arg].dtype)) {
        return value ? "a gather of a non-32-bit type"
                     : "a per-lane product, quotient or remainder indexing a non-32-bit type";
      }
      int regs = 0;
      const std::string why = lane_term(&t, &regs);
      if (!why.empty()) return why;
      if (regs > kLaneIndexRegs) return "a per-lane index term nested too deep";
      a.vector_terms = true;
    }
    const std::string why = check_bounds(i, &a);
    if (!why.empty()) return why;
    if (a.vector_terms) {
      // Lane byte offsets (vector terms and the vector variable) are int32.
      Range lanes = known(0, 0);
      for (const LinearTerm& t : a.form.terms)
        if (lane_varying(L_, t)) lanes = add(lanes, scale(term_range(t), t.factor));
      if (L_.vec_var >= 0)
        lanes = add(lanes, scale(known(0, k.ranges[L_.vec_var] - 1), a.form.coeff[L_.vec_var]));
      if (!fits_i32(scale(lanes, a.esize))) return "a gather whose lane offsets exceed int32";
    }
    if (L_.vec_var >= 0) a.vec_coeff = a.form.coeff[L_.vec_var];
    for (int v : L_.reduce_scalar)
      if (a.form.coeff[v] != 0) a.uses_reduce_scalar = true;
    if (in.op == Op::Store && L_.wide[in.a] == Wide::Copy &&
        (L_.where[i] != L_.where[in.a] || L_.loop[i] != L_.loop[in.a]))
      return "an int64 copy stored in another loop than its load";
    if (L_.wide[i] == Wide::Copy || (in.op == Op::Store && L_.wide[in.a] == Wide::Copy)) {
      if (a.vec_coeff != 1 && (in.op == Op::Store || a.vec_coeff != 0))
        return "an int64 copy that is not contiguous";
      if (a.vector_terms) return "an int64 copy through a gather";
    } else if (in.op == Op::Store && L_.wide[in.a] == Wide::Convert && a.vec_coeff != 1) {
      return "a converted int64 store that is not contiguous";
    } else if (in.op == Op::Store && !L_.uniform[i] && a.esize == 1 && a.vec_coeff != 1) {
      return "a byte store that is not contiguous";
    } else if (L_.wide[i] != Wide::None && a.vec_coeff != 0 && a.vec_coeff != 1) {
      return "a strided vector load of int64";
    } else if (L_.wide[i] != Wide::None && a.vector_terms) {
      return "a gather of int64";
    }
    if (in.op == Op::Store && !L_.uniform[i] && a.vec_coeff == 0)
      return "a store of lane-varying values to one element";
    if (!L_.uniform[i] && !a.vector_terms && a.vec_coeff != 1) {
      if (a.vec_coeff != 0 && a.esize != 4 &&
          !(in.op == Op::Load && gathers_bytes(k.args[in.arg].dtype)))
        return "a strided vector access of a non-32-bit type";
      // Bounded before it is scaled: a corrupt plan's coefficient may overflow int64 there.
      const int64_t limit = kI32Max / 64 / 4;
      if (a.vec_coeff > limit || a.vec_coeff < -limit) return "a vector stride too large";
    }
    L_.access[i] = static_cast<int>(L_.accesses.size());
    L_.accesses.push_back(std::move(a));
    return "";
  }

  // Every index inside its arg, or a masked Load whose index may leave it only where the
  // mask is false: read under the mask (uniform loads branch on it; vector ones use masked
  // moves and gathers, which do not fault). Where the mask is true the index must be inside
  // too: proven from the mask (mask_bounds.h), else checked per point at run time.
  std::string check_bounds(int i, Access* a) const {
    const Kernel& k = L_.k;
    const Instr& in = k.code[i];
    const int64_t n = k.args[in.arg].elements;
    const Range r = form_range(a->form);
    if (r.known && r.lo >= 0 && r.hi < n) return "";
    const std::string outside = "an index not provably inside arg " + std::to_string(in.arg);
    if (in.op != Op::Load || in.mask < 0 || a->vector_terms ||
        (!L_.uniform[i] &&
         ((a->esize != 4 && !gathers_bytes(k.args[in.arg].dtype)) || L_.wide[i] != Wide::None)))
      return outside;
    // The address is formed at every point the mask holds (with division by positive
    // constants only), and a run-time check compares it with the arg's: it must not wrap.
    if (!r.known || r.lo < -kMaxMaskedIndex || r.hi > kMaxMaskedIndex) return outside;
    a->masked_reads = !L_.uniform[i];
    const Range m = masked_index_range(k, L_.range, in.mask, a->form);
    a->checked = !m.known || (m.lo <= m.hi && (m.lo < 0 || m.hi >= n));
    return "";
  }

  // An arg both read and written: every access uses one affine index that no two points
  // share, and every store is in an earlier phase (inner loop) than every load, so each
  // point reads only what it wrote itself, earlier, in any lane arrangement.
  std::string check_read_write() const {
    const Kernel& k = L_.k;
    // The accesses of each arg, bucketed once (a scan per arg was O(args x accesses)).
    std::vector<std::vector<const Access*>> loads_of(k.args.size()), stores_of(k.args.size());
    for (const Access& a : L_.accesses) {
      if (a.arg < 0 || static_cast<size_t>(a.arg) >= k.args.size()) continue;
      auto& bucket = k.code[a.instr].op == Op::Store ? stores_of : loads_of;
      bucket[static_cast<size_t>(a.arg)].push_back(&a);
    }
    for (size_t arg = 0; arg < k.args.size(); ++arg) {
      const std::vector<const Access*>& loads = loads_of[arg];
      const std::vector<const Access*>& stores = stores_of[arg];
      if (loads.empty() || stores.empty()) continue;
      const std::string why = "arg " + std::to_string(arg) + " is read and written";
      const Access* first = stores[0];
      if (!first->form.terms.empty() || !injective(first->form)) return why;
      for (const auto* list : {&loads, &stores}) {
        for (const Access* a : *list) {
          if (!a->form.terms.empty() || a->form.offset != first->form.offset ||
              a->form.coeff != first->form.coeff)
            return why;
        }
      }
      // Every store in a later loop than every load of the arg.
      int last_store = INT_MIN, first_load = INT_MAX;
      for (const Access* s : stores) last_store = std::max(last_store, L_.loop[s->instr]);
      for (const Access* l : loads) first_load = std::min(first_load, L_.loop[l->instr]);
      if (last_store >= first_load) return why;
    }
    return "";
  }

  // Whether distinct points of the iteration space get distinct indices.
  bool injective(const LinearForm& f) const {
    std::vector<std::pair<int64_t, int64_t>> dims;  // |coeff|, range
    for (size_t v = 0; v < f.coeff.size(); ++v) {
      if (L_.k.ranges[v] <= 1) continue;
      if (f.coeff[v] == 0) return false;
      dims.emplace_back(std::abs(f.coeff[v]), L_.k.ranges[v]);
    }
    std::sort(dims.begin(), dims.end());
    __int128 span = 1;  // every smaller dim's reach, plus one
    for (const auto& [c, r] : dims) {
      if (c < span) return false;
      span = static_cast<__int128>(c) * (r - 1) + span;
    }
    return true;
  }

  Layout& L_;
  std::vector<std::vector<int>> users_;  // per instruction: the instructions reading it
  std::vector<ranges::FBound> fbound_;   // per F32 instruction: its bounds, NaN aside
  std::vector<bool> stored_;             // per arg: some Store writes it
  std::vector<ClassMask> depends_;       // per value: compute_dependences
};

}  // namespace

bool small_integer_exponent(const Instr& e) {
  return e.op == Op::Const && e.type == ScalarType::F32 &&
         (e.fimm == 1 || e.fimm == 2 || e.fimm == 3 || e.fimm == -1);
}

const char* where_name(Where w) {
  static const char* names[] = {"entry", "row", "chunk", "hoist", "step", "vec", "post"};
  return names[static_cast<int>(w)];
}

bool lane_varying(const Layout& L, const LinearForm& f) {
  if (L.vec_var >= 0 && static_cast<size_t>(L.vec_var) < f.coeff.size() && f.coeff[L.vec_var] != 0)
    return true;
  for (const LinearTerm& t : f.terms)
    if (lane_varying(L, t)) return true;
  return false;
}

bool lane_varying(const Layout& L, const LinearTerm& t) {
  if (t.kind == IndexKind::Value) return !L.uniform[t.id];
  for (const LinearForm& o : t.operands)
    if (lane_varying(L, o)) return true;
  return false;
}

bool Layout::varying(Where w) const {
  switch (w) {
    case Where::Entry:
    case Where::Row:
      return false;
    case Where::Chunk:
    case Where::Vec:
      return true;
    case Where::Hoist:
    case Where::Step:
    case Where::Post:
      return mode == Mode::LanesOuter;
  }
  return true;
}

std::string analyze_kernel(const Kernel& validated, Isa isa, Layout* out) {
  if (isa == Isa::None) return "no AVX2 on this CPU";
  if (validated.num_reduce == 0) return Analyzer(validated, isa, Mode::Pointwise, out).run();
  // Lanes on the reduction for long contiguous rows, else on the innermost outer dim; the
  // other arrangement when the first one is not supported.
  const Kernel merged = merge_loop_dims(validated);
  const int outer = merged.num_outer();
  const bool lanes_outer = prefer_lanes_outer(merged);
  const Mode first = lanes_outer ? Mode::LanesOuter : Mode::LanesInner;
  const Mode second = lanes_outer ? Mode::LanesInner : Mode::LanesOuter;
  std::string why = Analyzer(validated, isa, first, out).run();
  if (why.empty()) return why;
  if (second == Mode::LanesOuter && outer == 0) return why;
  Layout alt;
  if (Analyzer(validated, isa, second, &alt).run().empty()) {
    *out = std::move(alt);
    return "";
  }
  return why;
}

}  // namespace jit
}  // namespace ferrite
