// Binary Plan format (version: kPlanFormatVersion). Layout: "FRPLAN\0\0", u32 version, then the
// Plan's fields in declaration order. Integers are little-endian and written byte by byte (the same
// bytes on x86, ARM and wasm); doubles as their IEEE bits; strings and lists as a u32 count then
// the items; constant blobs (raw, then the packed ones after their extern, input and
// layout) with a u64 length; an Index as a presence byte then
// kind, c, id and both children (every field, so a round trip is exact).
// The reader trusts nothing: every count is checked against the bytes that remain before
// anything is allocated, enums are range-checked, index trees are bounded, and the result
// goes through validate_plan.
#include "compiler/plan/plan_io.h"

#include <cstring>

#include "compiler/plan/error.h"

namespace ferrite {
namespace {

constexpr char kMagic[8] = {'F', 'R', 'P', 'L', 'A', 'N', '\0', '\0'};
constexpr int kMaxIndexDepth = 256;      // as validate_kernel
constexpr int kMaxIndexNodes = 1 << 16;  // per tree; real ones have tens of nodes

// Lower bounds of the encoded size of one item, to bound counts before allocating.
constexpr size_t kMinString = 4, kMinBuffer = 22, kMinBlob = 8, kMinKernel = 28, kMinArg = 10,
                 kMinInstr = 40, kMinExtern = 28, kMinMapEntry = 12, kMinRef = 20, kMinStep = 13,
                 kMinGuard = 5, kMinPostOp = 21, kMinEpilogueStep = 25, kMinPacked = 20;

// Plans of version 5 carry a chain of post-ops where version 6 carries the epilogue's body;
// this build reads both.
constexpr uint32_t kPostOpListVersion = 5;

class Writer {
 public:
  std::vector<uint8_t> out;

  void u8(uint8_t v) { out.push_back(v); }
  void u32(uint32_t v) {
    for (int i = 0; i < 4; ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
  }
  void u64(uint64_t v) {
    for (int i = 0; i < 8; ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
  }
  void i32(int32_t v) { u32(static_cast<uint32_t>(v)); }
  void i64(int64_t v) { u64(static_cast<uint64_t>(v)); }
  void f64(double v) {
    uint64_t bits;
    std::memcpy(&bits, &v, sizeof bits);
    u64(bits);
  }
  void count(size_t n) {
    if (n > UINT32_MAX) fail("plan: a list of ", n, " items is too long to serialize");
    u32(static_cast<uint32_t>(n));
  }
  void str(const std::string& s) {
    count(s.size());
    out.insert(out.end(), s.begin(), s.end());
  }
  template <class Bytes>
  void blob(const Bytes& b) {
    u64(b.size());
    out.insert(out.end(), b.begin(), b.end());
  }
  void i64s(const std::vector<int64_t>& v) {
    count(v.size());
    for (int64_t x : v) i64(x);
  }
  void i32s(const std::vector<int32_t>& v) {
    count(v.size());
    for (int32_t x : v) i32(x);
  }
};

class Reader {
 public:
  Reader(const uint8_t* data, size_t size) : p_(data), left_(size), size_(size) {}

  uint32_t version = kPlanFormatVersion;  // the file's, once read_header read it

  size_t left() const { return left_; }

  const uint8_t* take(size_t n, const char* what) {
    if (n > left_)
      fail("plan: truncated: ", what, " at byte ", size_ - left_, " needs ", n, " bytes, ", left_,
           " left");
    const uint8_t* at = p_;
    p_ += n;
    left_ -= n;
    return at;
  }
  uint8_t u8(const char* what) { return *take(1, what); }
  uint32_t u32(const char* what) {
    const uint8_t* b = take(4, what);
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i) v |= static_cast<uint32_t>(b[i]) << (8 * i);
    return v;
  }
  uint64_t u64(const char* what) {
    const uint8_t* b = take(8, what);
    uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v |= static_cast<uint64_t>(b[i]) << (8 * i);
    return v;
  }
  int32_t i32(const char* what) { return static_cast<int32_t>(u32(what)); }
  int64_t i64(const char* what) { return static_cast<int64_t>(u64(what)); }
  double f64(const char* what) {
    uint64_t bits = u64(what);
    double v;
    std::memcpy(&v, &bits, sizeof v);
    return v;
  }
  bool boolean(const char* what) {
    uint8_t v = u8(what);
    if (v > 1) fail("plan: ", what, " has invalid bool byte ", static_cast<int>(v));
    return v == 1;
  }
  // A count of items that each take at least `min_size` bytes.
  size_t count(size_t min_size, const char* what) {
    uint64_t n = u32(what);
    if (n * min_size > left_)
      fail("plan: corrupt: ", what, " claims ", n, " items but only ", left_, " bytes remain");
    return static_cast<size_t>(n);
  }
  std::string str(const char* what) {
    size_t n = count(1, what);
    const uint8_t* b = take(n, what);
    return std::string(reinterpret_cast<const char*>(b), n);
  }
  std::vector<int64_t> i64s(const char* what) {
    std::vector<int64_t> v(count(8, what));
    for (int64_t& x : v) x = i64(what);
    return v;
  }
  std::vector<int32_t> i32s(const char* what) {
    std::vector<int32_t> v(count(4, what));
    for (int32_t& x : v) x = i32(what);
    return v;
  }
  // An enum stored as a byte, valid when <= max.
  template <class E>
  E enum8(int max, const char* what) {
    uint8_t v = u8(what);
    if (v > max) fail("plan: ", what, " has invalid value ", static_cast<int>(v));
    return static_cast<E>(v);
  }

 private:
  const uint8_t* p_;
  size_t left_;
  size_t size_;
};

// ---- writing ----------------------------------------------------------------------------

void write_index(Writer& w, const Index& e, int depth, int* nodes) {
  if (!e) return w.u8(0);
  if (depth > kMaxIndexDepth || ++*nodes > kMaxIndexNodes)
    fail("plan: an index tree is too large to serialize (depth ", kMaxIndexDepth, ", ",
         kMaxIndexNodes, " nodes at most)");
  w.u8(1);
  w.u8(static_cast<uint8_t>(e->kind));
  w.i64(e->c);
  w.i32(e->id);
  write_index(w, e->a, depth + 1, nodes);
  write_index(w, e->b, depth + 1, nodes);
}

void write_instr(Writer& w, const Instr& in) {
  w.u8(static_cast<uint8_t>(in.op));
  w.u8(static_cast<uint8_t>(in.type));
  w.i32(in.a);
  w.i32(in.b);
  w.i32(in.c);
  w.i32(in.arg);
  w.u8(static_cast<uint8_t>(in.reduce));
  w.i32(in.mask);
  int nodes = 0;
  write_index(w, in.index, 0, &nodes);
  w.f64(in.fimm);
  w.i64(in.iimm);
}

void write_kernel(Writer& w, const Kernel& k) {
  w.str(k.name);
  w.i64s(k.ranges);
  w.i32(k.num_reduce);
  w.count(k.args.size());
  for (const KernelArg& a : k.args) {
    w.u8(static_cast<uint8_t>(a.dtype));
    w.i64(a.elements);
    w.u8(a.output ? 1 : 0);
  }
  w.count(k.code.size());
  for (const Instr& in : k.code) write_instr(w, in);
  w.i32(k.post_begin);
  w.i32s(k.loop_ends);
  w.count(k.messages.size());
  for (const std::string& m : k.messages) w.str(m);
}

void write_ref(Writer& w, const TensorRef& r) {
  w.i32(r.buffer);
  w.i64s(r.shape);
  w.i64s(r.strides);
  w.i64(r.offset);
}

void write_extern(Writer& w, const ExternCall& x) {
  w.str(extern_op_name(x.op));
  w.str(x.origin);
  w.count(x.ints.size());
  for (const auto& kv : x.ints) {
    w.str(kv.first);
    w.i64(kv.second);
  }
  w.count(x.floats.size());
  for (const auto& kv : x.floats) {
    w.str(kv.first);
    w.f64(kv.second);
  }
  w.count(x.inputs.size());
  for (const TensorRef& r : x.inputs) write_ref(w, r);
  w.count(x.outputs.size());
  for (const TensorRef& r : x.outputs) write_ref(w, r);
  w.count(x.epilogue.steps.size());
  for (const EpilogueStep& st : x.epilogue.steps) {
    w.u8(static_cast<uint8_t>(st.op));
    w.i32(st.a);
    w.i32(st.b);
    w.i32(st.c);
    w.i32(st.input);
    w.f64(st.value);
  }
}

void write_buffer(Writer& w, const PlanBuffer& b) {
  w.str(b.name);
  w.u8(static_cast<uint8_t>(b.dtype));
  w.i64s(b.shape);
  w.u8(static_cast<uint8_t>(b.kind));
  w.i64(b.offset);
  w.i32(b.constant);
}

// ---- reading ----------------------------------------------------------------------------

DType read_dtype(Reader& r, const char* what) {
  uint8_t v = r.u8(what);
  DType t = DType::Undefined;
  if (v != 0 && !dtype_from_onnx(v, &t))
    fail("plan: ", what, " has invalid dtype number ", static_cast<int>(v));
  return t;
}

Index read_index(Reader& r, int depth, int* nodes) {
  if (!r.boolean("index presence")) return nullptr;
  if (depth > kMaxIndexDepth) fail("plan: corrupt: index tree deeper than ", kMaxIndexDepth);
  if (++*nodes > kMaxIndexNodes)
    fail("plan: corrupt: index tree with more than ", kMaxIndexNodes, " nodes");
  auto n = std::make_shared<IndexNode>();
  n->kind = r.enum8<IndexKind>(static_cast<int>(IndexKind::Mod), "index kind");
  n->c = r.i64("index constant");
  n->id = r.i32("index id");
  n->a = read_index(r, depth + 1, nodes);
  n->b = read_index(r, depth + 1, nodes);
  return n;
}

Instr read_instr(Reader& r) {
  Instr in;
  in.op = r.enum8<Op>(static_cast<int>(Op::kCount) - 1, "instr op");
  in.type = r.enum8<ScalarType>(static_cast<int>(ScalarType::Bool), "instr type");
  in.a = r.i32("instr a");
  in.b = r.i32("instr b");
  in.c = r.i32("instr c");
  in.arg = r.i32("instr arg");
  in.reduce = r.enum8<ReduceKind>(static_cast<int>(ReduceKind::kCount) - 1, "instr reduce");
  in.mask = r.i32("instr mask");
  int nodes = 0;
  in.index = read_index(r, 0, &nodes);
  in.fimm = r.f64("instr fimm");
  in.iimm = r.i64("instr iimm");
  return in;
}

Kernel read_kernel(Reader& r) {
  Kernel k;
  k.name = r.str("kernel name");
  k.ranges = r.i64s("kernel ranges");
  k.num_reduce = r.i32("kernel num_reduce");
  k.args.resize(r.count(kMinArg, "kernel args"));
  for (KernelArg& a : k.args) {
    a.dtype = read_dtype(r, "kernel arg dtype");
    a.elements = r.i64("kernel arg elements");
    a.output = r.boolean("kernel arg output");
  }
  k.code.resize(r.count(kMinInstr, "kernel code"));
  for (Instr& in : k.code) in = read_instr(r);
  k.post_begin = r.i32("kernel post_begin");
  k.loop_ends = r.i32s("kernel loop ends");
  k.messages.resize(r.count(kMinString, "kernel messages"));
  for (std::string& m : k.messages) m = r.str("kernel message");
  return k;
}

TensorRef read_ref(Reader& r) {
  TensorRef t;
  t.buffer = r.i32("tensor ref buffer");
  t.shape = r.i64s("tensor ref shape");
  t.strides = r.i64s("tensor ref strides");
  t.offset = r.i64("tensor ref offset");
  return t;
}

template <class V, class ReadValue>
void read_map(Reader& r, std::map<std::string, V>* m, const char* what, ReadValue value) {
  size_t n = r.count(kMinMapEntry, what);
  for (size_t i = 0; i < n; ++i) {
    std::string key = r.str(what);
    V v = value();
    if (!m->emplace(key, v).second) fail("plan: corrupt: ", what, " repeats key '", key, "'");
  }
}

ExternCall read_extern(Reader& r, size_t e) {
  ExternCall x;
  const std::string op = r.str("extern op");
  const std::optional<ExternOp> known = find_extern_op(op);
  if (!known) fail("plan: extern ", e, " has unknown op '", op, "'");
  x.op = *known;
  x.origin = r.str("extern origin");
  read_map(r, &x.ints, "extern ints", [&] { return r.i64("extern int"); });
  read_map(r, &x.floats, "extern floats", [&] { return r.f64("extern float"); });
  x.inputs.resize(r.count(kMinRef, "extern inputs"));
  for (TensorRef& t : x.inputs) t = read_ref(r);
  x.outputs.resize(r.count(kMinRef, "extern outputs"));
  for (TensorRef& t : x.outputs) t = read_ref(r);
  if (r.version == kPostOpListVersion) {
    std::vector<PostOp> ops(r.count(kMinPostOp, "extern post-ops"));
    for (PostOp& p : ops) {
      p.kind = r.enum8<PostOpKind>(kPostOpKinds - 1, "post-op kind");
      p.alpha = static_cast<float>(r.f64("post-op alpha"));
      p.beta = static_cast<float>(r.f64("post-op beta"));
      p.input = r.i32("post-op input");
      if (p.input < -1 || (post_op_is_binary(p.kind) && p.input < 0))
        fail("plan: extern ", e, " post-op reads input ", p.input);
    }
    set_post_ops(&x, ops);
    return x;
  }
  EpilogueBody epi;
  epi.steps.resize(r.count(kMinEpilogueStep, "extern epilogue steps"));
  for (EpilogueStep& st : epi.steps) {
    st.op = r.enum8<Op>(static_cast<int>(Op::kCount) - 1, "epilogue op");
    st.a = r.i32("epilogue operand");
    st.b = r.i32("epilogue operand");
    st.c = r.i32("epilogue operand");
    st.input = r.i32("epilogue input");
    st.value = static_cast<float>(r.f64("epilogue constant"));
  }
  // Validated before its chain is matched (the matcher follows operands).
  validate_epilogue(epi, x.inputs.size(), str_cat("plan: extern ", e));
  set_epilogue(&x, std::move(epi));
  return x;
}

template <class Bytes>
void read_blob(Reader& r, Bytes* out, const char* what) {
  uint64_t n = r.u64(what);
  if (n > r.left()) fail("plan: truncated: ", what, " of ", n, " bytes, ", r.left(), " left");
  const uint8_t* b = r.take(static_cast<size_t>(n), what);
  out->assign(b, b + static_cast<size_t>(n));
}

PlanBuffer read_buffer(Reader& r) {
  PlanBuffer b;
  b.name = r.str("buffer name");
  b.dtype = read_dtype(r, "buffer dtype");
  b.shape = r.i64s("buffer shape");
  b.kind = r.enum8<BufferKind>(static_cast<int>(BufferKind::Temp), "buffer kind");
  b.offset = r.i64("buffer offset");
  b.constant = r.i32("buffer constant");
  return b;
}

void read_header(Reader& r) {
  if (r.left() < sizeof kMagic || std::memcmp(r.take(sizeof kMagic, "magic"), kMagic, 8) != 0)
    fail("plan: not a Ferrite plan (bad magic)");
  uint32_t version = r.u32("format version");
  r.version = version;
  if (version != kPlanFormatVersion && version != kPostOpListVersion)
    fail("plan: unsupported format version ", version, " (this build reads ", kPostOpListVersion,
         " and ", kPlanFormatVersion, ")");
}

Plan read_plan(Reader& r) {
  Plan p;
  p.buffers.resize(r.count(kMinBuffer, "buffers"));
  for (PlanBuffer& b : p.buffers) b = read_buffer(r);
  p.constants.resize(r.count(kMinBlob, "constants"));
  for (ConstantBytes& c : p.constants) read_blob(r, &c, "constant");
  p.packed.resize(r.count(kMinPacked, "packed constants"));
  for (PackedConstant& c : p.packed) {
    c.extern_index = r.i32("packed constant extern");
    c.input = r.i32("packed constant input");
    c.layout = r.str("packed constant layout");
    read_blob(r, &c.bytes, "packed constant");
  }
  p.kernels.resize(r.count(kMinKernel, "kernels"));
  for (Kernel& k : p.kernels) k = read_kernel(r);
  p.externs.resize(r.count(kMinExtern, "externs"));
  for (size_t e = 0; e < p.externs.size(); ++e) p.externs[e] = read_extern(r, e);
  p.steps.resize(r.count(kMinStep, "steps"));
  for (Step& s : p.steps) {
    s.kind = r.enum8<StepKind>(static_cast<int>(StepKind::Extern), "step kind");
    s.index = r.i32("step index");
    s.buffers = r.i32s("step buffers");
    s.guards.resize(r.count(kMinGuard, "step guards"));
    for (Guard& g : s.guards) {
      g.buffer = r.i32("guard buffer");
      g.value = r.enum8<uint8_t>(1, "guard value") != 0;
    }
  }
  p.inputs = r.i32s("inputs");
  p.outputs = r.i32s("outputs");
  p.pool_bytes = r.i64("pool bytes");
  return p;
}

}  // namespace

std::vector<uint8_t> serialize_plan(const Plan& plan) {
  Writer w;
  for (char c : kMagic) w.u8(static_cast<uint8_t>(c));
  w.u32(kPlanFormatVersion);
  w.count(plan.buffers.size());
  for (const PlanBuffer& b : plan.buffers) write_buffer(w, b);
  w.count(plan.constants.size());
  for (const ConstantBytes& c : plan.constants) w.blob(c);
  w.count(plan.packed.size());
  for (const PackedConstant& c : plan.packed) {
    w.i32(c.extern_index);
    w.i32(c.input);
    w.str(c.layout);
    w.blob(c.bytes);
  }
  w.count(plan.kernels.size());
  for (const Kernel& k : plan.kernels) write_kernel(w, k);
  w.count(plan.externs.size());
  for (const ExternCall& x : plan.externs) write_extern(w, x);
  w.count(plan.steps.size());
  for (const Step& s : plan.steps) {
    w.u8(static_cast<uint8_t>(s.kind));
    w.i32(s.index);
    w.i32s(s.buffers);
    w.count(s.guards.size());
    for (const Guard& g : s.guards) {
      w.i32(g.buffer);
      w.u8(g.value ? 1 : 0);
    }
  }
  w.i32s(plan.inputs);
  w.i32s(plan.outputs);
  w.i64(plan.pool_bytes);
  return std::move(w.out);
}

Plan deserialize_plan(const uint8_t* data, size_t size) {
  if (data == nullptr && size != 0) fail("plan: null data");
  Reader r(data, size);
  read_header(r);
  Plan plan = read_plan(r);
  if (r.left() != 0) fail("plan: corrupt: ", r.left(), " trailing bytes after the plan");
  validate_plan(plan);
  return plan;
}

}  // namespace ferrite
