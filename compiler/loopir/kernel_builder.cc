#include "compiler/loopir/kernel_builder.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "compiler/loopir/buffer.h"
#include "compiler/loopir/checked_int.h"
#include "compiler/loopir/shape_env.h"
#include "compiler/loopir/simplify.h"
#include "compiler/plan/error.h"
#include "compiler/plan/kernel_symbols.h"
#include "compiler/plan/scalar_ops.h"

namespace ferrite {
namespace {

std::string cse_key(const Instr& in) {
  int64_t fbits;
  std::memcpy(&fbits, &in.fimm, sizeof(fbits));
  return str_cat(static_cast<int>(in.op), ':', static_cast<int>(in.type), ':', in.a, ':', in.b, ':',
                 in.c, ':', in.arg, ':', static_cast<int>(in.reduce), ':', in.mask, ':', fbits, ':',
                 in.iimm, ':', in.index ? index_to_string(*in.index) : std::string());
}

Scalar const_value(const Instr& in) {
  return make_const(in.type, in.fimm, in.iimm);
}

void set_const(Instr* in, ScalarType t, Scalar v) {
  in->op = Op::Const;
  in->type = t;
  in->a = in->b = in->c = -1;
  switch (t) {
    case ScalarType::F32:
      in->fimm = v.f32;
      break;
    case ScalarType::F64:
      in->fimm = v.f64;
      break;
    case ScalarType::I64:
      in->iimm = v.i64;
      break;
    case ScalarType::Bool:
      in->iimm = v.b ? 1 : 0;
      break;
  }
}

}  // namespace

KernelBuilder::KernelBuilder(std::string name, std::vector<int64_t> ranges, int num_reduce) {
  k_.name = std::move(name);
  k_.ranges = std::move(ranges);
  k_.num_reduce = num_reduce;
}

void KernelBuilder::set_sym_ranges(std::vector<Index> sym_ranges) {
  if (sym_ranges.size() != k_.ranges.size())
    fail("internal: ", sym_ranges.size(), " symbolic ranges for ", k_.ranges.size(), " loops");
  sym_ranges_ = std::move(sym_ranges);
}

int KernelBuilder::arg_for(Buffer* buf, bool output) {
  auto it = arg_index_.find(buf);
  if (it != arg_index_.end()) {
    if (output) k_.args[static_cast<size_t>(it->second)].output = true;
    return it->second;
  }
  arg_index_.emplace(buf, static_cast<int>(arg_buffers_.size()));
  arg_buffers_.push_back(buf);
  KernelArg a;
  a.dtype = buf->dtype;
  a.elements = buf->elements();
  a.output = output;
  k_.args.push_back(a);
  return static_cast<int>(k_.args.size()) - 1;
}

bool KernelBuilder::try_fold(const Instr& in, V* out) {
  auto is_const = [&](int id) { return id >= 0 && k_.code[id].op == Op::Const; };
  Instr c;
  if (in.op == Op::Cast && is_const(in.a)) {
    const Instr& x = k_.code[in.a];
    set_const(&c, in.type, eval_cast(x.type, in.type, const_value(x)));
  } else if (in.op == Op::Where && is_const(in.a)) {
    *out = V{const_value(k_.code[in.a]).b ? in.b : in.c, in.type};
    return true;
  } else if ((op_is_unary_math(in.op)) && is_const(in.a)) {
    const Instr& x = k_.code[in.a];
    set_const(&c, in.type, eval_unary(in.op, x.type, const_value(x)));
  } else if ((op_is_binary_arith(in.op) || op_is_compare(in.op) || op_is_logic(in.op)) &&
             is_const(in.a) && is_const(in.b)) {
    const Instr& x = k_.code[in.a];
    set_const(&c, in.type, eval_binary(in.op, x.type, const_value(x), const_value(k_.code[in.b])));
  } else {
    return false;
  }
  *out = emit(c);
  return true;
}

V KernelBuilder::emit(Instr in) {
  if (in.op != Op::Const && in.op != Op::Load && in.op != Op::Store && in.op != Op::LoopVar) {
    V folded;
    if (try_fold(in, &folded)) return folded;
    ++num_compute_;
  }
  std::string key;
  if (in.op != Op::Store) {
    key = cse_key(in);
    auto it = cse_.find(key);
    if (it != cse_.end()) return V{it->second, k_.code[it->second].type};
  }
  k_.code.push_back(std::move(in));
  int id = static_cast<int>(k_.code.size()) - 1;
  if (!key.empty()) cse_[key] = id;
  return V{id, k_.code[id].type};
}

V KernelBuilder::load(Buffer* buf, Index index) {
  int64_t offset;
  Buffer* owner = buf->storage_owner(&offset);
  Instr in;
  in.op = Op::Load;
  in.type = compute_type(buf->dtype);
  in.arg = arg_for(owner, false);
  in.index = ix_add(std::move(index), ix_const(offset));
  in.mask = masks_.empty() ? -1 : masks_.back();
  ++num_loads_;
  if (owner->origin != BufferOrigin::Constant) ++num_variable_loads_;
  return emit(std::move(in));
}

void KernelBuilder::store(Buffer* buf, Index index, V value) {
  ScalarType want = compute_type(buf->dtype);
  if (value.type != want) value = cast(value, want);
  int64_t offset;
  Buffer* owner = buf->storage_owner(&offset);
  Instr in;
  in.op = Op::Store;
  in.type = want;
  in.a = value.id;
  in.arg = arg_for(owner, true);
  in.index = ix_add(std::move(index), ix_const(offset));
  emit(std::move(in));
}

V KernelBuilder::constant(ScalarType t, double value) {
  if (t == ScalarType::I64) return constant_i64(checked_int(value, "internal: an i64 constant"));
  Instr in;
  set_const(&in, t, make_const(t, value, value != 0));
  return emit(in);
}

V KernelBuilder::constant_i64(int64_t value) {
  Instr in;
  set_const(&in, ScalarType::I64, make_const(ScalarType::I64, 0, value));
  return emit(in);
}

// An instruction of `op` on `a` (whose type it must accept) and operands of its type.
static Instr typed_instr(Op op, V a) {
  if (!op_accepts(op, a.type)) {
    fail("internal: ", op_name(op), " is not defined on ", scalar_type_name(a.type));
  }
  Instr in;
  in.op = op;
  in.type = op_result_type(op, a.type);
  in.a = a.id;
  return in;
}

V KernelBuilder::unary(Op op, V a) {
  return emit(typed_instr(op, a));
}

V KernelBuilder::binary(Op op, V a, V b) {
  if (a.type != b.type) {
    fail("internal: ", op_name(op), " operands differ: ", scalar_type_name(a.type), " vs ",
         scalar_type_name(b.type));
  }
  // x / 1 and x * 1 are x for every float (NaN and infinities included): a quantization
  // whose scale was folded into the product before it divides by 1.
  const Instr& rhs = k_.code[static_cast<size_t>(b.id)];
  if ((op == Op::Div || op == Op::Mul) && rhs.op == Op::Const && rhs.fimm == 1.0 &&
      (a.type == ScalarType::F32 || a.type == ScalarType::F64))
    return a;
  Instr in = typed_instr(op, a);
  in.b = b.id;
  return emit(in);
}

V KernelBuilder::where(V cond, V a, V b) {
  if (cond.type != ScalarType::Bool || a.type != b.type) fail("internal: Where operand types");
  Instr in;
  in.op = Op::Where;
  in.type = a.type;
  in.a = cond.id;
  in.b = a.id;
  in.c = b.id;
  return emit(in);
}

V KernelBuilder::cast(V a, ScalarType to) {
  if (a.type == to) return a;
  Instr in;
  in.op = Op::Cast;
  in.type = to;
  in.a = a.id;
  return emit(in);
}

V KernelBuilder::check_index(V index, int64_t n, const std::string& message) {
  index = cast(index, ScalarType::I64);
  const Instr& def = k_.code[index.id];
  if (def.op == Op::Const && masks_.empty()) {
    int64_t v = def.iimm;
    if (v < -n || v >= n) fail(message, ": index ", v, " out of range [", -n, ", ", n, ")");
    return constant_i64(v < 0 ? v + n : v);
  }
  auto found = message_index_.emplace(message, static_cast<int>(k_.messages.size()));
  if (found.second) k_.messages.push_back(message);
  const int msg = found.first->second;
  Instr in;
  in.op = Op::CheckIndex;
  in.type = ScalarType::I64;
  in.a = index.id;
  in.arg = msg;
  in.iimm = n;
  in.mask = masks_.empty() ? -1 : masks_.back();
  V out = emit(in);
  checked_.push_back({out.id, n});
  return out;
}

V KernelBuilder::reduce(ReduceKind kind, V a) {
  Instr in;
  in.op = Op::Reduce;
  in.reduce = kind;
  in.type = (kind == ReduceKind::ArgMax || kind == ReduceKind::ArgMin) ? ScalarType::I64 : a.type;
  in.a = a.id;
  return emit(in);
}

V KernelBuilder::loop_var(int d) {
  Instr in;
  in.op = Op::LoopVar;
  in.type = ScalarType::I64;
  in.arg = d;
  return emit(in);
}

V KernelBuilder::index_value(const Index& e) {
  switch (e->kind) {
    case IndexKind::Const:
      return constant_i64(e->c);
    case IndexKind::Var:
      return loop_var(e->id);
    case IndexKind::Value:
      return V{e->id, ScalarType::I64};
    case IndexKind::Add:
      return binary(Op::Add, index_value(e->a), index_value(e->b));
    case IndexKind::Mul:
      return binary(Op::Mul, index_value(e->a), index_value(e->b));
    case IndexKind::Mod:
      return binary(Op::Mod, index_value(e->a), index_value(e->b));
    case IndexKind::FloorDiv: {
      // floor(a / b) == (a - a mod b) / b exactly, with Python's mod; Div truncates.
      V a = index_value(e->a), b = index_value(e->b);
      return binary(Op::Div, binary(Op::Sub, a, binary(Op::Mod, a, b)), b);
    }
    case IndexKind::Sym:  // sizes are bound before a kernel is built (docs/shapes.md)
      fail("internal: symbol s", e->id, " in a kernel's index");
  }
  return constant_i64(0);
}

V KernelBuilder::walk_once(std::shared_ptr<const void> def, const std::vector<Index>& index,
                           const std::function<V()>& walk) {
  const bool memo = memoize_ && masks_.empty() && !in_post_;
  std::string key;
  if (memo) {
    key = str_cat(reinterpret_cast<uintptr_t>(def.get()));
    for (const Index& i : index) key += str_cat('|', index_to_string(*i));
    auto it = walks_.find(key);
    if (it != walks_.end()) {
      num_loads_ += it->second.loads;
      num_compute_ += it->second.compute;
      num_variable_loads_ += it->second.variable_loads;
      height_ = std::max(height_, it->second.height);
      return it->second.value;
    }
  }
  const int loads = num_loads_, compute = num_compute_, variable = num_variable_loads_;
  const int outer_height = height_;
  height_ = 0;
  const V v = walk();
  const int height = height_ + 1;
  height_ = std::max(outer_height, height);
  if (memo) {
    walks_[key] = Walk{std::move(def),
                       v,
                       num_loads_ - loads,
                       num_compute_ - compute,
                       num_variable_loads_ - variable,
                       height};
  }
  return v;
}

void KernelBuilder::begin_post() {
  k_.post_begin = static_cast<int>(k_.code.size());
  in_post_ = true;
  // Only constants may cross into the post phase (see validate_kernel).
  for (auto it = cse_.begin(); it != cse_.end();) {
    it = k_.code[it->second].op == Op::Const ? std::next(it) : cse_.erase(it);
  }
}

void KernelBuilder::push_mask(V mask) {
  if (mask.type != ScalarType::Bool) fail("internal: mask must be bool");
  if (!masks_.empty()) mask = binary(Op::And, V{masks_.back(), ScalarType::Bool}, mask);
  masks_.push_back(mask.id);
}

void KernelBuilder::pop_mask() {
  masks_.pop_back();
}

Kernel KernelBuilder::finish() {
  if (!in_post_) k_.post_begin = static_cast<int>(k_.code.size());
  IndexSimplifier simp =
      sym_ranges_ ? symbolic_simplifier(*sym_ranges_) : IndexSimplifier(k_.ranges);
  for (const auto& [id, n] : checked_) simp.set_value_range(id, n);
  for (auto& in : k_.code) {
    if (in.index) in.index = simp.simplify(in.index);
  }
  if (sym_ranges_) {
    validate_kernel_over_symbols(k_);
  } else {
    validate_kernel(k_);
  }
  return k_;
}

}  // namespace ferrite
