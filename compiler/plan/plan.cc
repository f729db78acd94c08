// The Plan's checker and printer. validate_plan is what lets the runtime trust a plan it
// loaded from disk: after it, every id is in range and every access an extern or a kernel
// arg can make (by their declared sizes) lies inside the buffer bound to it.
#include "compiler/plan/plan.h"

#include <algorithm>
#include <cstdio>
#include <iterator>
#include <sstream>

#include "compiler/plan/aliasing.h"
#include "compiler/plan/error.h"
#include "compiler/plan/externs/extern_op.h"

namespace ferrite {
namespace {

constexpr int64_t kOffsetAlignment = 64;

const char* kind_name(BufferKind k) {
  static constexpr const char* kNames[] = {"input", "output", "constant", "temp"};
  const size_t i = static_cast<size_t>(k);  // enumerator order
  return i < std::size(kNames) ? kNames[i] : "?";
}

std::string buffer_label(const Plan& p, int32_t id) {
  return str_cat("buffer ", id, " ('", p.buffers[id].name, "')");
}

bool valid_buffer(const Plan& p, int32_t id) {
  return id >= 0 && id < static_cast<int32_t>(p.buffers.size());
}

void check_buffer(const Plan& p, const std::vector<bool>& packed_only, int32_t id) {
  const PlanBuffer& b = p.buffers[id];
  if (static_cast<int>(b.kind) > static_cast<int>(BufferKind::Temp))
    fail("plan: ", buffer_label(p, id), " has invalid kind ", static_cast<int>(b.kind));
  if (dtype_size(b.dtype) == 0)
    fail("plan: ", buffer_label(p, id), " has dtype ", dtype_name(b.dtype), " of no fixed size");
  const int64_t n = b.nbytes();  // throws on negative dims or overflow
  if (b.kind == BufferKind::Temp) {
    if (b.offset < 0 || b.offset % kOffsetAlignment != 0)
      fail("plan: ", buffer_label(p, id), " has pool offset ", b.offset,
           " (must be >= 0 and a multiple of ", kOffsetAlignment, ")");
    if (b.offset > p.pool_bytes - n)
      fail("plan: ", buffer_label(p, id), " at offset ", b.offset, " with ", n,
           " bytes ends past the pool (", p.pool_bytes, " bytes)");
  }
  if (b.kind == BufferKind::Constant) {
    if (b.constant < 0 || b.constant >= static_cast<int32_t>(p.constants.size()))
      fail("plan: ", buffer_label(p, id), " refers to constant ", b.constant, " of ",
           p.constants.size());
    if (static_cast<uint64_t>(p.constants[b.constant].size()) != static_cast<uint64_t>(n) &&
        !packed_only[static_cast<size_t>(b.constant)])
      fail("plan: ", buffer_label(p, id), " needs ", n, " bytes but constant ", b.constant, " has ",
           p.constants[b.constant].size());
  }
}

// Each buffer of kind `kind` must appear in `ids` exactly once, and nothing else may.
void check_bindings(const Plan& p, const std::vector<int32_t>& ids, BufferKind kind,
                    const char* list) {
  std::vector<int> seen(p.buffers.size(), 0);
  for (int32_t id : ids) {
    if (!valid_buffer(p, id)) fail("plan: ", list, " lists buffer ", id, " of ", p.buffers.size());
    if (p.buffers[id].kind != kind)
      fail("plan: ", list, " lists ", buffer_label(p, id), " of kind ",
           kind_name(p.buffers[id].kind));
    if (++seen[id] > 1) fail("plan: ", list, " lists ", buffer_label(p, id), " twice");
  }
  for (size_t i = 0; i < p.buffers.size(); ++i)
    if (p.buffers[i].kind == kind && seen[i] == 0)
      fail("plan: ", kind_name(kind), " ", buffer_label(p, static_cast<int32_t>(i)),
           " is not listed in ", list);
}

bool writable(const PlanBuffer& b) {
  return b.kind != BufferKind::Input && b.kind != BufferKind::Constant;
}

void check_kernel_step(const Plan& p, size_t s, const Step& st) {
  if (st.index < 0 || st.index >= static_cast<int32_t>(p.kernels.size()))
    fail("plan: step ", s, " calls kernel ", st.index, " of ", p.kernels.size());
  const Kernel& k = p.kernels[st.index];
  if (st.buffers.size() != k.args.size())
    fail("plan: step ", s, " binds ", st.buffers.size(), " buffers to kernel '", k.name, "' with ",
         k.args.size(), " args");
  for (size_t i = 0; i < st.buffers.size(); ++i) {
    int32_t id = st.buffers[i];
    if (!valid_buffer(p, id))
      fail("plan: step ", s, " (kernel '", k.name, "') arg ", i, " is buffer ", id, " of ",
           p.buffers.size());
    const PlanBuffer& b = p.buffers[id];
    const KernelArg& a = k.args[i];
    if (a.dtype != b.dtype)
      fail("plan: step ", s, " (kernel '", k.name, "') arg ", i, " is ", dtype_name(a.dtype),
           " but ", buffer_label(p, id), " is ", dtype_name(b.dtype));
    if (a.elements != b.elements())
      fail("plan: step ", s, " (kernel '", k.name, "') arg ", i, " has ", a.elements,
           " elements but ", buffer_label(p, id), " has ", b.elements());
    if (a.output && !writable(b))
      fail("plan: step ", s, " (kernel '", k.name, "') writes ", kind_name(b.kind), " ",
           buffer_label(p, id));
  }
}

// Whether a view's positions reach distinct elements: with the dims of more than one
// position sorted by |stride|, each stride exceeds the offset the smaller ones reach together
// (a mixed-radix numbering, as every layout the compiler makes). Offsets are bounded by
// check_ref first, so the sums cannot overflow.
bool strides_one_to_one(const TensorRef& r) {
  std::vector<std::pair<int64_t, int64_t>> dims;  // (|stride|, extent)
  for (size_t d = 0; d < r.shape.size(); ++d) {
    if (r.shape[d] > 1)
      dims.emplace_back(r.strides[d] < 0 ? -r.strides[d] : r.strides[d], r.shape[d]);
  }
  std::sort(dims.begin(), dims.end());
  int64_t reach = 0;
  for (const auto& d : dims) {
    if (d.first <= reach) return false;
    reach += d.first * (d.second - 1);
  }
  return true;
}

void check_ref(const Plan& p, const std::string& where, const TensorRef& r, bool output) {
  if (!valid_buffer(p, r.buffer))
    fail("plan: ", where, " refers to buffer ", r.buffer, " of ", p.buffers.size());
  const PlanBuffer& b = p.buffers[r.buffer];
  if (output && !writable(b)) fail("plan: ", where, " writes ", kind_name(b.kind), " buffer");
  if (r.shape.size() != r.strides.size())
    fail("plan: ", where, " has shape rank ", r.shape.size(), " but strides rank ",
         r.strides.size());
  int64_t lo = r.offset, hi = r.offset;
  bool empty = false;
  for (size_t d = 0; d < r.shape.size(); ++d) {
    if (r.shape[d] < 0) fail("plan: ", where, " has negative dimension ", r.shape[d]);
    if (r.shape[d] == 0) empty = true;
  }
  if (empty) return;  // reaches no element
  for (size_t d = 0; d < r.shape.size(); ++d) {
    int64_t span = 0;
    bool ovf = __builtin_mul_overflow(r.shape[d] - 1, r.strides[d], &span);
    ovf = ovf || (span > 0 ? __builtin_add_overflow(hi, span, &hi)
                           : __builtin_add_overflow(lo, span, &lo));
    if (ovf) fail("plan: ", where, " has element offsets overflowing int64");
  }
  const int64_t n = b.elements();
  if (lo < 0 || hi >= n)
    fail("plan: ", where, " reaches elements [", lo, ", ", hi, "] outside ",
         buffer_label(p, r.buffer), " of ", n, " elements");
  if (output && !strides_one_to_one(r)) {
    fail("plan: ", where, " writes one element from several positions (its strides overlap;",
         " the result would depend on the order an extern writes them)");
  }
}

}  // namespace

void set_epilogue(ExternCall* x, EpilogueBody e) {
  x->epilogue = std::move(e);
  x->post_ops = match_post_ops(x->epilogue).value_or(std::vector<PostOp>{});
}

void set_post_ops(ExternCall* x, const std::vector<PostOp>& ops) {
  set_epilogue(x, epilogue_of(ops));
}

void append_post_op(ExternCall* x, const PostOp& p) {
  EpilogueBody e = x->epilogue;
  append_post_op(&e, p);
  set_epilogue(x, std::move(e));
}

size_t op_input_count(const ExternCall& x) {
  size_t n = x.inputs.size();  // walks the steps: every extern run asks (no allocation)
  for (const EpilogueStep& s : x.epilogue.steps)
    if (s.op == Op::Load && s.input >= 0) n = std::min(n, static_cast<size_t>(s.input));
  return n;
}

namespace {

void check_extern(const Plan& p, size_t e) {
  const ExternCall& x = p.externs[e];
  if (static_cast<size_t>(x.op) >= kExternOpCount)
    fail("plan: extern ", e, " has unknown op ", static_cast<int>(x.op));
  const std::string where = str_cat("extern ", e, " (", extern_op_name(x.op), ")");
  for (size_t i = 0; i < x.inputs.size(); ++i)
    check_ref(p, str_cat(where, " input ", i), x.inputs[i], false);
  for (size_t i = 0; i < x.outputs.size(); ++i)
    check_ref(p, str_cat(where, " output ", i), x.outputs[i], true);
  if (x.epilogue.empty() && x.post_ops.empty()) return;
  if (!extern_op_info(x.op).takes_post_ops) fail("plan: ", where, " takes no epilogue");
  if (x.outputs.empty()) fail("plan: ", where, " has an epilogue but no output");
  validate_epilogue(x.epilogue, x.inputs.size(), str_cat("plan: ", where));
  if (x.post_ops != match_post_ops(x.epilogue).value_or(std::vector<PostOp>{}))
    fail("plan: ", where, "'s post-ops are not its epilogue's chain");
  for (int32_t i : epilogue_inputs(x.epilogue)) {
    const TensorRef& in = x.inputs[static_cast<size_t>(i)];
    if (in.shape != x.outputs[0].shape)
      fail("plan: ", where, " epilogue reads input ", i,
           ", whose view does not have the output's shape");
    // check_ref above: the buffer exists.
    const DType dt = p.buffers[static_cast<size_t>(in.buffer)].dtype;
    if (dt != DType::F32)
      fail("plan: ", where, " epilogue reads input ", i, " of ", dtype_name(dt),
           " (an epilogue reads float32)");
  }
}

void check_guards(const Plan& p, size_t s, const Step& st) {
  for (const Guard& g : st.guards) {
    if (!valid_buffer(p, g.buffer))
      fail("plan: step ", s, " is guarded by buffer ", g.buffer, " of ", p.buffers.size());
    const PlanBuffer& b = p.buffers[g.buffer];
    if (b.dtype != DType::Bool || b.elements() != 1)
      fail("plan: step ", s, " is guarded by buffer ", g.buffer, ", which is not a bool scalar");
  }
}

void check_step(const Plan& p, size_t s) {
  const Step& st = p.steps[s];
  check_guards(p, s, st);
  if (st.kind == StepKind::Kernel) return check_kernel_step(p, s, st);
  if (st.kind != StepKind::Extern)
    fail("plan: step ", s, " has invalid kind ", static_cast<int>(st.kind));
  if (st.index < 0 || st.index >= static_cast<int32_t>(p.externs.size()))
    fail("plan: step ", s, " calls extern ", st.index, " of ", p.externs.size());
  for (int32_t id : st.buffers)
    if (!valid_buffer(p, id))
      fail("plan: step ", s, " lists buffer ", id, " of ", p.buffers.size());
}

// ---- printing -------------------------------------------------------------------------

std::string spaced_dims(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += str_cat(i ? ", " : "", v[i]);
  return s + "]";
}

std::string ref_text(const TensorRef& r) {
  return str_cat("b", r.buffer, spaced_dims(r.shape), " strides ", spaced_dims(r.strides), " +",
                 r.offset);
}

void print_extern(const ExternCall& x, std::ostringstream& os) {
  os << "extern " << extern_op_name(x.op);
  for (const auto& kv : x.ints) os << " " << kv.first << "=" << kv.second;
  for (const auto& kv : x.floats) {
    char buf[32];
    std::snprintf(buf, sizeof(buf), "%.17g", kv.second);
    os << " " << kv.first << "=" << buf;
  }
  for (const TensorRef& r : x.inputs) os << " in " << ref_text(r);
  for (const TensorRef& r : x.outputs) os << " out " << ref_text(r);
  if (!x.epilogue.empty()) os << " then " << epilogue_text(x.epilogue);
}

void print_step(const Plan& p, size_t s, std::ostringstream& os) {
  const Step& st = p.steps[s];
  os << "  " << s << ": ";
  if (st.kind == StepKind::Extern && st.index >= 0 &&
      st.index < static_cast<int32_t>(p.externs.size())) {
    print_extern(p.externs[st.index], os);
  } else {
    bool known = st.index >= 0 && st.index < static_cast<int32_t>(p.kernels.size());
    os << (st.kind == StepKind::Kernel ? "kernel " : "? ") << st.index << " ("
       << (known ? p.kernels[st.index].name : "?") << ")";
  }
  os << " (";
  for (size_t i = 0; i < st.buffers.size(); ++i) os << (i ? ", b" : "b") << st.buffers[i];
  os << ")";
  for (const Guard& g : st.guards) os << " if " << (g.value ? "b" : "!b") << g.buffer;
  os << "\n";
}

std::string id_list(const std::vector<int32_t>& ids) {
  std::string s;
  for (size_t i = 0; i < ids.size(); ++i) s += str_cat(i ? ", b" : "b", ids[i]);
  return s;
}

}  // namespace

int64_t PlanBuffer::elements() const {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0)
      fail("buffer '", name, "': negative dimension ", d, " in shape ", spaced_dims(shape));
    if (__builtin_mul_overflow(n, d, &n))
      fail("buffer '", name, "': element count of shape ", spaced_dims(shape), " overflows int64");
  }
  return n;
}

int64_t PlanBuffer::nbytes() const {
  int64_t n = 0;
  if (__builtin_mul_overflow(elements(), static_cast<int64_t>(dtype_size(dtype)), &n))
    fail("buffer '", name, "': byte size of shape ", spaced_dims(shape), " overflows int64");
  return n;
}

namespace {

bool has_packed(const Plan& p, size_t e, size_t input) {
  for (const PackedConstant& c : p.packed)
    if (c.extern_index == static_cast<int32_t>(e) && c.input == static_cast<int32_t>(input))
      return true;
  return false;
}

void check_packed(const Plan& p, const std::vector<bool>& packed_only) {
  for (size_t i = 0; i < p.packed.size(); ++i) {
    const PackedConstant& c = p.packed[i];
    if (c.extern_index < 0 || c.extern_index >= static_cast<int32_t>(p.externs.size()))
      fail("plan: packed constant ", i, " belongs to extern ", c.extern_index, " of ",
           p.externs.size());
    const ExternCall& x = p.externs[static_cast<size_t>(c.extern_index)];
    if (c.input < 0 || c.input >= static_cast<int32_t>(x.inputs.size()))
      fail("plan: packed constant ", i, " is input ", c.input, " of extern ", c.extern_index, " (",
           extern_op_name(x.op), ") with ", x.inputs.size(), " inputs");
    const int32_t id = x.inputs[static_cast<size_t>(c.input)].buffer;
    if (p.buffers[static_cast<size_t>(id)].kind != BufferKind::Constant)
      fail("plan: packed constant ", i, " is ", buffer_label(p, id), ", not a constant");
  }
  // A constant held only packed is read by nothing but the extern inputs packed from it.
  auto packed_away = [&](int32_t id) {
    const PlanBuffer& b = p.buffers[static_cast<size_t>(id)];
    return b.kind == BufferKind::Constant && packed_only[static_cast<size_t>(b.constant)];
  };
  auto refuse = [&](int32_t id, const std::string& by) {
    fail("plan: ", by, " reads ", buffer_label(p, id), ", which the plan holds only packed");
  };
  for (size_t s = 0; s < p.steps.size(); ++s) {
    const Step& st = p.steps[s];
    for (const Guard& g : st.guards)
      if (packed_away(g.buffer)) refuse(g.buffer, str_cat("step ", s, "'s guard"));
    if (st.kind == StepKind::Kernel) {
      for (int32_t id : st.buffers)
        if (packed_away(id)) refuse(id, str_cat("step ", s));
      continue;
    }
    const ExternCall& x = p.externs[static_cast<size_t>(st.index)];
    for (size_t i = 0; i < x.inputs.size(); ++i)
      if (packed_away(x.inputs[i].buffer) && !has_packed(p, static_cast<size_t>(st.index), i))
        refuse(x.inputs[i].buffer,
               str_cat("step ", s, " (extern ", extern_op_name(x.op), ") input ", i));
  }
}

}  // namespace

std::vector<bool> packed_only_constants(const Plan& plan) {
  std::vector<bool> out(plan.constants.size(), false);
  for (const PlanBuffer& b : plan.buffers) {
    if (b.kind != BufferKind::Constant || b.constant < 0 ||
        b.constant >= static_cast<int32_t>(out.size()) ||
        !plan.constants[static_cast<size_t>(b.constant)].empty() || dtype_size(b.dtype) == 0)
      continue;
    // nbytes() > 0, without its checks (check_buffer reports a bad shape)
    bool bytes = true;
    for (int64_t d : b.shape) bytes = bytes && d > 0;
    if (bytes) out[static_cast<size_t>(b.constant)] = true;
  }
  return out;
}

size_t strip_packed_constants(Plan* plan) {
  const Plan& p = *plan;
  // Per constant: 0 unread, 1 read only through packed extern inputs, 2 read otherwise.
  std::vector<int> use(p.constants.size(), 0);
  auto mark = [&](int32_t id, int how) {
    const PlanBuffer& b = p.buffers[static_cast<size_t>(id)];
    if (b.kind == BufferKind::Constant) {
      int& u = use[static_cast<size_t>(b.constant)];
      u = std::max(u, how);
    }
  };
  for (const Step& st : p.steps) {
    for (const Guard& g : st.guards) mark(g.buffer, 2);
    if (st.kind == StepKind::Kernel) {
      for (int32_t id : st.buffers) mark(id, 2);
      continue;
    }
    const ExternCall& x = p.externs[static_cast<size_t>(st.index)];
    for (size_t i = 0; i < x.inputs.size(); ++i)
      mark(x.inputs[i].buffer, has_packed(p, static_cast<size_t>(st.index), i) ? 1 : 2);
  }
  size_t dropped = 0;
  for (size_t c = 0; c < use.size(); ++c) {
    if (use[c] != 1) continue;
    dropped += plan->constants[c].size();
    ConstantBytes().swap(plan->constants[c]);
  }
  return dropped;
}

// A Store runs at every outer point (stores have no mask): a direct one writes a distinct
// element from each (check_store_collisions), and a scatter walks an input of at least that
// many elements, so a kernel of more outer points than its largest arg has elements is no
// lowering's. The product of all ranges, which validate_kernel bounds, does not bound the
// work: an empty reduction dim makes it 0 while every outer point still runs.
static void check_outer_points(const Kernel& k) {
  int64_t outer = 1, largest = 1;
  for (int d = 0; d < k.num_outer(); ++d)
    outer *= k.ranges[d];  // validate_kernel checked every prefix
  for (const KernelArg& a : k.args) largest = std::max(largest, a.elements);
  if (outer > largest)
    fail("kernel '", k.name, "': ", outer, " outer points, more than its largest arg's ", largest,
         " elements");
}

void validate_plan(const Plan& plan) {
  if (plan.pool_bytes < 0) fail("plan: negative pool size ", plan.pool_bytes);
  const std::vector<bool> packed_only = packed_only_constants(plan);
  for (size_t i = 0; i < plan.buffers.size(); ++i)
    check_buffer(plan, packed_only, static_cast<int32_t>(i));
  check_bindings(plan, plan.inputs, BufferKind::Input, "inputs");
  check_bindings(plan, plan.outputs, BufferKind::Output, "outputs");
  for (const Kernel& k : plan.kernels) {
    validate_kernel(k);
    check_outer_points(k);
    check_store_collisions(k);
  }
  for (size_t e = 0; e < plan.externs.size(); ++e) check_extern(plan, e);
  for (size_t s = 0; s < plan.steps.size(); ++s) {
    check_step(plan, s);
    check_step_overlaps(plan, s);
  }
  check_packed(plan, packed_only);
}

std::string plan_to_string(const Plan& plan) {
  std::ostringstream os;
  os << "plan pool " << plan.pool_bytes << " bytes\nbuffers:\n";
  const std::vector<bool> packed_only = packed_only_constants(plan);
  for (size_t i = 0; i < plan.buffers.size(); ++i) {
    const PlanBuffer& b = plan.buffers[i];
    os << "  b" << i << " '" << b.name << "' " << kind_name(b.kind) << " " << dtype_name(b.dtype)
       << spaced_dims(b.shape);
    if (b.kind == BufferKind::Temp) os << " @" << b.offset;
    if (b.kind == BufferKind::Constant) os << " const" << b.constant;
    if (b.kind == BufferKind::Constant && b.constant >= 0 &&
        b.constant < static_cast<int32_t>(packed_only.size()) &&
        packed_only[static_cast<size_t>(b.constant)])
      os << " (packed only)";
    os << "\n";
  }
  for (const PackedConstant& c : plan.packed)
    os << "packed: extern " << c.extern_index << " input " << c.input << ", " << c.bytes.size()
       << " bytes as '" << c.layout << "'\n";
  os << "inputs: " << id_list(plan.inputs) << "\noutputs: " << id_list(plan.outputs)
     << "\nsteps:\n";
  for (size_t s = 0; s < plan.steps.size(); ++s) print_step(plan, s, os);
  for (const Kernel& k : plan.kernels) os << kernel_to_string(k);
  return os.str();
}

}  // namespace ferrite
