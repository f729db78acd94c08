// The Kernel contract's checker and printer. validate_kernel is the gate every backend
// relies on: once it passed, a backend may index code[], args[] and messages[] by the ids
// it finds without checking them again.
#include "compiler/plan/kernel.h"
#include "compiler/plan/kernel_symbols.h"

#include <cstdio>
#include <sstream>

#include "compiler/plan/error.h"
#include "compiler/plan/scalar_ops.h"

namespace ferrite {
namespace {

// Deeper trees come only from corrupt input; the limit keeps recursion bounded.
constexpr int kMaxIndexDepth = 256;

int64_t range_product(const std::vector<int64_t>& ranges, size_t begin, size_t end,
                      const std::string& name) {
  int64_t n = 1;
  for (size_t i = begin; i < end; ++i) {
    if (ranges[i] < 0) fail("kernel '", name, "': range ", i, " is negative (", ranges[i], ")");
    if (__builtin_mul_overflow(n, ranges[i], &n))
      fail("kernel '", name, "': iteration space overflows int64");
  }
  return n;
}

bool scalar_type_valid(ScalarType t) {
  return static_cast<int>(t) <= 3;
}

void check_header(const Kernel& k) {
  const std::string& nm = k.name;
  range_product(k.ranges, 0, k.ranges.size(), nm);
  if (k.num_reduce < 0 || k.num_reduce > static_cast<int>(k.ranges.size()))
    fail("kernel '", nm, "': num_reduce ", k.num_reduce, " not in [0, ", k.ranges.size(), "]");
  if (k.post_begin < 0 || k.post_begin > static_cast<int>(k.code.size()))
    fail("kernel '", nm, "': post_begin ", k.post_begin, " not in [0, ", k.code.size(), "]");
  if (k.num_reduce == 0 && k.post_begin != static_cast<int>(k.code.size()))
    fail("kernel '", nm, "': post_begin ", k.post_begin, " must equal code size ", k.code.size(),
         " in a kernel without reduction dims");
  int prev = 0;
  for (size_t L = 0; L < k.loop_ends.size(); ++L) {
    if (k.loop_ends[L] <= prev || k.loop_ends[L] > k.post_begin)
      fail("kernel '", nm, "': loop_ends[", L, "] = ", k.loop_ends[L], " not in (", prev, ", ",
           k.post_begin, "]");
    prev = k.loop_ends[L];
  }
  if (!k.loop_ends.empty() && prev != k.post_begin)
    fail("kernel '", nm, "': the last loop ends at ", prev, ", not at post_begin ", k.post_begin);
  if (k.loop_ends.size() > 1 && k.num_reduce == 0)
    fail("kernel '", nm, "': ", k.loop_ends.size(), " inner loops without reduction dims");
  for (size_t i = 0; i < k.args.size(); ++i) {
    if (k.args[i].elements < 0)
      fail("kernel '", nm, "': arg ", i, " has negative elements (", k.args[i].elements, ")");
    if (dtype_size(k.args[i].dtype) == 0)
      fail("kernel '", nm, "': arg ", i, " has dtype ", dtype_name(k.args[i].dtype),
           " of no fixed size");
  }
}

// Checks one instruction; `at` is its SSA id. Errors name the kernel and the instruction.
class InstrChecker {
 public:
  InstrChecker(const Kernel& k, int at, bool allow_syms)
      : k_(k),
        at_(at),
        in_(k.code[at]),
        loop_(at < k.post_begin ? k.loop_of(at) : -1),
        allow_syms_(allow_syms) {}

  void run() {
    if (static_cast<int>(in_.op) >= static_cast<int>(Op::kCount))
      bad("invalid op number ", static_cast<int>(in_.op));
    if (!scalar_type_valid(in_.type)) bad("invalid type number ", static_cast<int>(in_.type));
    check_operands();
    check_phase();
    check_types();
  }

 private:
  template <class... Args>
  [[noreturn]] void bad(Args&&... args) const {
    fail("kernel '", k_.name, "': instr %", at_, " (", op_name(in_.op),
         "): ", std::forward<Args>(args)...);
  }

  bool in_post() const { return at_ >= k_.post_begin; }
  ScalarType type_of(int id) const { return k_.code[id].type; }

  // An SSA use: defined earlier, and visible from this instruction's phase.
  void use(int id, const char* what) const {
    if (id < 0 || id >= at_) bad(what, " is %", id, ", not defined before %", at_);
    const Instr& def = k_.code[id];
    if (def.op == Op::Store) bad(what, " is %", id, ", a Store, which has no value");
    if (!in_post()) {
      if (def.op == Op::Const || id >= k_.loop_begin(loop_)) {
        if (def.op == Op::Reduce) bad(what, " uses Reduce result %", id, " of its own loop");
        return;
      }
      if (def.op != Op::Reduce)
        bad(what, " uses %", id, " (", op_name(def.op), ") of inner loop ", k_.loop_of(id),
            " in loop ", loop_, "; only Reduce results and Consts cross loops");
      return;
    }
    if (id < k_.post_begin && def.op != Op::Reduce && def.op != Op::Const)
      bad(what, " uses body value %", id, " (", op_name(def.op),
          ") in the post phase; only Reduce results and Consts cross");
  }

  void check_operands() const {
    check_unused_fields();
    int arity = op_arity(in_.op);
    if (arity >= 1) use(in_.a, "operand a");
    if (arity >= 2) use(in_.b, "operand b");
    if (arity >= 3) use(in_.c, "operand c");
    if (in_.mask != -1) {
      if (in_.op != Op::Load && in_.op != Op::CheckIndex)
        bad("only Load and CheckIndex take a mask");
      use(in_.mask, "mask");
      if (type_of(in_.mask) != ScalarType::Bool) bad("mask %", in_.mask, " is not bool");
    }
    if (in_.op == Op::Load || in_.op == Op::Store) {
      if (!in_.index) bad("missing index");
      check_index(*in_.index, 0);
    }
  }

  // Fields an op does not use must be unset: a backend may walk every field of every
  // instruction (a dependence graph, a printer), so none may hold an unchecked id.
  void check_unused_fields() const {
    const int arity = op_arity(in_.op);
    const int32_t ids[3] = {in_.a, in_.b, in_.c};
    const char* names[3] = {"a", "b", "c"};
    for (int i = arity; i < 3; ++i)
      if (ids[i] != -1) bad("operand ", names[i], " is %", ids[i], ", but the op takes ", arity);
    const bool memory = in_.op == Op::Load || in_.op == Op::Store;
    if (!memory && in_.index) bad("only Load and Store take an index");
    if (!memory && in_.op != Op::CheckIndex && in_.op != Op::LoopVar && in_.arg != -1)
      bad("arg is ", in_.arg, ", but the op takes none");
  }

  void check_index(const IndexNode& e, int depth) const {
    if (depth > kMaxIndexDepth) bad("index deeper than ", kMaxIndexDepth);
    // A leaf has no operands: walks of the tree (index_values, index_uses_var) descend
    // into any child they find, and only the operator nodes' children are checked below.
    const bool leaf = e.kind == IndexKind::Const || e.kind == IndexKind::Var ||
                      e.kind == IndexKind::Value || e.kind == IndexKind::Sym;
    if (leaf && (e.a || e.b)) bad("index leaf (", index_to_string(e), ") with operands");
    switch (e.kind) {
      case IndexKind::Const:
        return;
      case IndexKind::Var:
        return check_var(e.id, "index variable");
      case IndexKind::Value:
        use(e.id, "index value");
        if (type_of(e.id) != ScalarType::I64) bad("index value %", e.id, " is not i64");
        return;
      case IndexKind::Sym:
        if (allow_syms_) return;
        bad("index symbol s", e.id, ": a kernel holds no symbols (bind_syms)");
      case IndexKind::Add:
      case IndexKind::Mul:
      case IndexKind::FloorDiv:
      case IndexKind::Mod:
        if (!e.a || !e.b) bad("index operator node without both operands");
        check_index(*e.a, depth + 1);
        check_index(*e.b, depth + 1);
        return;
    }
    bad("invalid index node kind ", static_cast<int>(e.kind));
  }

  void check_var(int v, const char* what) const {
    if (v < 0 || v >= static_cast<int>(k_.ranges.size()))
      bad(what, " i", v, " not in [0, ", k_.ranges.size(), ")");
    if (in_post() && v >= k_.num_outer())
      bad(what, " i", v, " is a reduction variable, not allowed after post_begin");
  }

  void check_phase() const {
    if (in_.op == Op::Reduce) {
      if (k_.num_reduce == 0) bad("Reduce in a kernel without reduction dims");
      if (in_post()) bad("Reduce after post_begin");
    }
  }

  void check_types() const;
  void check_memory() const;
  void check_unary() const;
  void expect(bool ok, const char* rule) const {
    if (ok) return;
    std::string ops;
    int arity = op_arity(in_.op);
    const int ids[3] = {in_.a, in_.b, in_.c};
    for (int i = 0; i < arity; ++i)
      ops += str_cat(i ? ", " : "", "%", ids[i], ":", scalar_type_name(type_of(ids[i])));
    bad(rule, " (result ", scalar_type_name(in_.type), ", operands ", ops, ")");
  }

  const Kernel& k_;
  int at_;
  const Instr& in_;
  int loop_;  // inner loop of a body instruction, -1 in post
  bool allow_syms_;
};

void InstrChecker::check_memory() const {
  if (in_.arg < 0 || in_.arg >= static_cast<int>(k_.args.size()))
    bad("arg ", in_.arg, " not in [0, ", k_.args.size(), ")");
  const KernelArg& arg = k_.args[in_.arg];
  ScalarType ct = compute_type(arg.dtype);
  if (in_.op == Op::Load) {
    if (in_.type != ct)
      bad("type ", scalar_type_name(in_.type), " is not the compute type ", scalar_type_name(ct),
          " of arg ", in_.arg, " (", dtype_name(arg.dtype), ")");
    return;
  }
  if (!arg.output) bad("arg ", in_.arg, " is not an output");
  if (in_.type != ct || type_of(in_.a) != ct)
    bad("stored type ", scalar_type_name(in_.type), " / value type ",
        scalar_type_name(type_of(in_.a)), " must both be ", scalar_type_name(ct), " for arg ",
        in_.arg, " (", dtype_name(arg.dtype), ")");
}

void InstrChecker::check_unary() const {
  ScalarType t = type_of(in_.a);
  switch (in_.op) {
    case Op::Not:
      return expect(t == ScalarType::Bool && in_.type == ScalarType::Bool, "needs bool -> bool");
    case Op::IsNaN:
    case Op::IsInf:
      return expect((t == ScalarType::F32 || t == ScalarType::F64) && in_.type == ScalarType::Bool,
                    "needs float -> bool");
    default:
      expect(t == in_.type, "needs operand type == result type");
      if (!op_accepts(in_.op, t)) bad("not defined on ", scalar_type_name(t));
  }
}

void InstrChecker::check_types() const {
  const ScalarType t = in_.type;
  const ScalarType kB = ScalarType::Bool, kI = ScalarType::I64;
  switch (in_.op) {
    case Op::Load:
    case Op::Store:
      return check_memory();
    case Op::Const:
    case Op::Cast:
      return;
    case Op::LoopVar:
      check_var(in_.arg, "loop variable");
      return expect(t == kI, "result must be i64");
    case Op::CheckIndex:
      if (in_.arg < 0 || in_.arg >= static_cast<int>(k_.messages.size()))
        bad("message ", in_.arg, " not in [0, ", k_.messages.size(), ")");
      if (in_.iimm < 0) bad("dimension size ", in_.iimm, " is negative");
      return expect(type_of(in_.a) == kI && t == kI, "needs i64 -> i64");
    case Op::Reduce:
      if (static_cast<int>(in_.reduce) >= static_cast<int>(ReduceKind::kCount))
        bad("invalid reduce kind ", static_cast<int>(in_.reduce));
      if (in_.reduce == ReduceKind::ArgMax || in_.reduce == ReduceKind::ArgMin)
        return expect(t == kI, "arg reductions yield i64");
      return expect(type_of(in_.a) == t, "needs operand type == result type");
    case Op::Where:
      return expect(type_of(in_.a) == kB && type_of(in_.b) == t && type_of(in_.c) == t,
                    "needs a bool, b and c of the result type");
    default:
      break;
  }
  if (op_is_unary_math(in_.op)) return check_unary();
  if (op_is_binary_arith(in_.op))
    return expect(t != kB && type_of(in_.a) == t && type_of(in_.b) == t,
                  "needs a, b and result of one non-bool type");
  if (op_is_compare(in_.op))
    return expect(type_of(in_.a) == type_of(in_.b) && t == kB,
                  "needs equal operand types and a bool result");
  if (op_is_logic(in_.op))
    return expect(type_of(in_.a) == kB && type_of(in_.b) == kB && t == kB,
                  "needs bool operands and a bool result");
  if (in_.op == Op::BitNot) return expect(type_of(in_.a) == kI && t == kI, "needs i64 -> i64");
  if (op_is_bitwise(in_.op))
    return expect(type_of(in_.a) == kI && type_of(in_.b) == kI && t == kI,
                  "needs i64 operands and an i64 result");
  bad("unknown op");
}

// ---- printing -------------------------------------------------------------------------

// kernel_to_string also prints kernels that failed validation, so it must not trust them.
bool index_printable(const IndexNode& e, int depth) {
  if (depth > kMaxIndexDepth) return false;
  switch (e.kind) {
    case IndexKind::Const:
    case IndexKind::Var:
    case IndexKind::Value:
    case IndexKind::Sym:
      return true;
    case IndexKind::Add:
    case IndexKind::Mul:
    case IndexKind::FloorDiv:
    case IndexKind::Mod:
      return e.a && e.b && index_printable(*e.a, depth + 1) && index_printable(*e.b, depth + 1);
  }
  return false;
}

std::string index_text(const Index& e) {
  if (!e) return "<no index>";
  if (!index_printable(*e, 0)) return "<malformed index>";
  return index_to_string(*e);
}

std::string double_text(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.17g", v);
  return buf;
}

void print_instr(const Instr& in, std::ostringstream& os) {
  const char* ty = scalar_type_name(in.type);
  const char* name = op_name(in.op);
  std::string mask = in.mask >= 0 ? str_cat(" mask %", in.mask) : "";
  switch (in.op) {
    case Op::Load:
      os << name << "." << ty << " arg" << in.arg << "[" << index_text(in.index) << "]" << mask;
      return;
    case Op::Store:
      os << name << " arg" << in.arg << "[" << index_text(in.index) << "] %" << in.a;
      return;
    case Op::Const:
      os << name << "." << ty << " "
         << (in.type == ScalarType::F32 || in.type == ScalarType::F64 ? double_text(in.fimm)
                                                                      : str_cat(in.iimm));
      return;
    case Op::LoopVar:
      os << name << "." << ty << " i" << in.arg;
      return;
    case Op::CheckIndex:
      os << name << " %" << in.a << " in [-" << in.iimm << ", " << in.iimm << ") msg" << in.arg
         << mask;
      return;
    case Op::Reduce:
      os << name << "." << reduce_name(in.reduce) << " %" << in.a;
      return;
    default:
      break;
  }
  os << name << "." << ty;
  const int ids[3] = {in.a, in.b, in.c};
  for (int i = 0; i < op_arity(in.op); ++i) os << (i ? ", %" : " %") << ids[i];
}

}  // namespace

int64_t Kernel::outer_points() const {
  size_t outer = num_reduce >= 0 && num_reduce <= static_cast<int>(ranges.size())
                     ? ranges.size() - static_cast<size_t>(num_reduce)
                     : ranges.size();
  return range_product(ranges, 0, outer, name);
}

int64_t Kernel::reduce_points() const {
  if (num_reduce <= 0 || num_reduce > static_cast<int>(ranges.size())) return 1;
  return range_product(ranges, ranges.size() - static_cast<size_t>(num_reduce), ranges.size(),
                       name);
}

int Kernel::loop_of(int i) const {
  int L = 0;
  while (L + 1 < static_cast<int>(loop_ends.size()) && i >= loop_ends[L]) ++L;
  return L;
}

void validate_kernel(const Kernel& k) {
  check_header(k);
  for (int i = 0; i < static_cast<int>(k.code.size()); ++i) InstrChecker(k, i, false).run();
}

void validate_kernel_over_symbols(const Kernel& k) {
  check_header(k);
  for (int i = 0; i < static_cast<int>(k.code.size()); ++i) InstrChecker(k, i, true).run();
}

std::string kernel_to_string(const Kernel& k) {
  std::ostringstream os;
  os << "kernel " << k.name << " ranges [";
  int outer = k.num_outer();
  for (size_t i = 0; i < k.ranges.size(); ++i)
    os << (static_cast<int>(i) == outer ? (i == 0 ? "| " : " | ")
           : i == 0                     ? ""
                                        : ", ")
       << k.ranges[i];
  os << "] args (";
  for (size_t i = 0; i < k.args.size(); ++i)
    os << (i ? ", " : "") << dtype_short_name(k.args[i].dtype)
       << (k.args[i].output ? " out " : " in ") << k.args[i].elements;
  os << ")\n";
  for (size_t i = 0; i < k.code.size(); ++i) {
    for (size_t L = 0; L + 1 < k.loop_ends.size(); ++L)
      if (static_cast<int>(i) == k.loop_ends[L]) os << " loop " << L + 1 << ":\n";
    if (static_cast<int>(i) == k.post_begin && k.num_reduce > 0) os << " post:\n";
    const Instr& in = k.code[i];
    os << "  ";
    if (in.op != Op::Store) os << "%" << i << " = ";
    print_instr(in, os);
    os << "\n";
  }
  if (k.num_reduce > 0 && k.post_begin == static_cast<int>(k.code.size())) os << " post:\n";
  for (size_t i = 0; i < k.messages.size(); ++i)
    os << "  msg" << i << ": \"" << k.messages[i] << "\"\n";
  return os.str();
}

}  // namespace ferrite
