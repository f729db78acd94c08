#include "bindings/engine/string_ops.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>
#include <utility>

#include "bindings/engine/engine_op.h"
#include "compiler/plan/error.h"
#include "compiler/plan/resource_limits.h"
#include "compiler/plan/scalar_ops.h"

namespace ferrite {
namespace {

constexpr int32_t kOnnxString = 8;  // TensorProto.STRING

struct StrCtx : EngineOp {
  const std::vector<std::string>& strings(size_t i) const {
    const Tensor& t = tensor(i);
    if (t.dtype() != DType::String)
      error("input ", i, " must be strings, got ", tensor_type_text(t));
    return t.strings();
  }
  // Fails unless `bytes` more bytes of output fit the memory limit.
  void fits(int64_t bytes) const { check_memory_limit(bytes, memory_limit, what + ": its output"); }
};

int64_t product(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

int64_t text_bytes(const std::vector<std::string>& s) {
  int64_t n = 0;
  for (const std::string& x : s) n += static_cast<int64_t>(x.size() + sizeof(std::string));
  return n;
}

// The element count of `shape`, failing unless that many elements of `bytes` each fit the
// memory limit (checked before anything of that size is allocated).
int64_t checked_count(const StrCtx& c, const std::vector<int64_t>& shape, int64_t bytes) {
  int64_t n = 1, total = 0;
  for (int64_t d : shape)
    if (__builtin_mul_overflow(n, d, &n)) c.error("its output has too many elements");
  if (__builtin_mul_overflow(n, bytes, &total)) c.error("its output has too many elements");
  c.fits(total);
  return n;
}

EngineValue strings_value(std::vector<int64_t> shape, std::vector<std::string> s) {
  return EngineValue::of(Tensor(std::move(shape), std::move(s)));
}

// StringConcat: x + y, elementwise with broadcasting.
std::vector<EngineValue> string_concat(const StrCtx& c) {
  const Tensor &x = c.tensor(0), &y = c.tensor(1);
  c.strings(0), c.strings(1);
  const std::vector<int64_t> shape = broadcast_shapes(c.what, x.shape(), y.shape());
  checked_count(c, shape, static_cast<int64_t>(sizeof(std::string) + 2 * sizeof(int64_t)));
  const std::vector<int64_t> ix = broadcast_index(x.shape(), shape),
                             iy = broadcast_index(y.shape(), shape);
  int64_t bytes = 0;
  for (size_t k = 0; k < ix.size(); ++k)
    bytes += static_cast<int64_t>(x.strings()[ix[k]].size() + y.strings()[iy[k]].size() +
                                  sizeof(std::string));
  c.fits(bytes);
  std::vector<std::string> out(ix.size());
  for (size_t k = 0; k < ix.size(); ++k) out[k] = x.strings()[ix[k]] + y.strings()[iy[k]];
  return {strings_value(shape, std::move(out))};
}

bool is_space(char ch) {
  return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r' || ch == '\v' || ch == '\f';
}

// Python's str.split(sep, maxsplit): by `sep` when it is not empty (empty pieces kept), else
// by runs of whitespace (none at either end); at most `maxsplit` splits when >= 0.
std::vector<std::string> split_one(const std::string& s, const std::string& sep, int64_t maxsplit) {
  std::vector<std::string> parts;
  if (!sep.empty()) {
    size_t start = 0;
    for (;;) {
      const size_t at = maxsplit >= 0 && static_cast<int64_t>(parts.size()) >= maxsplit
                            ? std::string::npos
                            : s.find(sep, start);
      if (at == std::string::npos) break;
      parts.push_back(s.substr(start, at - start));
      start = at + sep.size();
    }
    parts.push_back(s.substr(start));
    return parts;
  }
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && is_space(s[i])) ++i;
    if (i == s.size()) break;
    if (maxsplit >= 0 && static_cast<int64_t>(parts.size()) >= maxsplit) {
      size_t end = s.size();
      while (end > i && is_space(s[end - 1])) --end;
      parts.push_back(s.substr(i, end - i));
      break;
    }
    size_t j = i;
    while (j < s.size() && !is_space(s[j])) ++j;
    parts.push_back(s.substr(i, j - i));
    i = j;
  }
  return parts;
}

// StringSplit: each string's pieces along a new last axis (padded with empty strings to the
// most pieces of any), and the number of pieces of each.
std::vector<EngineValue> string_split(const StrCtx& c, size_t num_outputs) {
  const Tensor& x = c.tensor(0);
  c.strings(0);
  const std::string sep = c.node.attr_string("delimiter", "");
  const int64_t maxsplit = c.node.has_attr("maxsplit") ? c.node.attr_int("maxsplit", -1) : -1;
  if (c.node.has_attr("maxsplit") && maxsplit < 0)
    c.error("maxsplit must not be negative, got ", maxsplit);
  std::vector<std::vector<std::string>> pieces;
  size_t widest = 0;
  int64_t bytes = 0;
  for (const std::string& s : x.strings()) {
    pieces.push_back(split_one(s, sep, maxsplit));
    widest = std::max(widest, pieces.back().size());
    bytes += text_bytes(pieces.back());
  }
  c.fits(bytes + static_cast<int64_t>(pieces.size() * widest * sizeof(std::string)));
  std::vector<std::string> out;
  out.reserve(pieces.size() * widest);
  Tensor counts(DType::I64, x.shape());
  for (size_t k = 0; k < pieces.size(); ++k) {
    counts.as<int64_t>()[k] = static_cast<int64_t>(pieces[k].size());
    for (size_t p = 0; p < widest; ++p)
      out.push_back(p < pieces[k].size() ? std::move(pieces[k][p]) : std::string());
  }
  std::vector<int64_t> shape = x.shape();
  shape.push_back(static_cast<int64_t>(widest));
  std::vector<EngineValue> result{strings_value(shape, std::move(out))};
  if (num_outputs > 1) result.push_back(EngineValue::of(std::move(counts)));
  return result;
}

// ASCII letters only: the case of other characters (UTF-8 sequences) is kept.
std::string changed_case(std::string s, const std::string& action) {
  for (char& ch : s) {
    if (action == "LOWER" && ch >= 'A' && ch <= 'Z') ch = static_cast<char>(ch - 'A' + 'a');
    if (action == "UPPER" && ch >= 'a' && ch <= 'z') ch = static_cast<char>(ch - 'a' + 'A');
  }
  return s;
}

// StringNormalizer (onnxruntime's semantics): drops the elements equal to a stop word
// (ASCII case folded unless is_case_sensitive), then changes the case of the rest; an input
// [C] or [1, C] gives [C'] or [1, C'], and one empty string where nothing is left.
std::vector<EngineValue> string_normalizer(const StrCtx& c) {
  const Tensor& x = c.tensor(0);
  c.strings(0);
  const std::vector<int64_t>& dims = x.shape();
  if (!(dims.size() == 1 || (dims.size() == 2 && dims[0] == 1)))
    c.error("X must be [C] or [1, C], got ", tensor_type_text(x));
  const std::string action = c.node.attr_string("case_change_action", "NONE");
  if (action != "NONE" && action != "LOWER" && action != "UPPER")
    c.error("case_change_action '", action, "' (NONE, LOWER, UPPER)");
  const bool sensitive = c.node.attr_int("is_case_sensitive", 0) != 0;
  std::set<std::string> stops;
  auto sw = c.node.attrs.find("stopwords");
  if (sw != c.node.attrs.end())
    for (const std::string& w : sw->second.strings)
      stops.insert(sensitive ? w : changed_case(w, "LOWER"));
  std::vector<std::string> out;
  for (const std::string& s : x.strings()) {
    if (stops.count(sensitive ? s : changed_case(s, "LOWER"))) continue;
    out.push_back(changed_case(s, action));
  }
  if (out.empty()) out.emplace_back();
  std::vector<int64_t> shape = dims;
  shape.back() = static_cast<int64_t>(out.size());
  return {strings_value(shape, std::move(out))};
}

// Equal on two string tensors, with broadcasting.
std::vector<EngineValue> string_equal(const StrCtx& c) {
  const Tensor &x = c.tensor(0), &y = c.tensor(1);
  if (x.dtype() != DType::String || y.dtype() != DType::String)
    c.error("compares strings with strings, got ", tensor_type_text(x), " and ",
            tensor_type_text(y));
  const std::vector<int64_t> shape = broadcast_shapes(c.what, x.shape(), y.shape());
  checked_count(c, shape, static_cast<int64_t>(1 + 2 * sizeof(int64_t)));
  const std::vector<int64_t> ix = broadcast_index(x.shape(), shape),
                             iy = broadcast_index(y.shape(), shape);
  Tensor out(DType::Bool, shape);
  for (size_t k = 0; k < ix.size(); ++k)
    out.as<uint8_t>()[k] = x.strings()[ix[k]] == y.strings()[iy[k]];
  return {EngineValue::of(std::move(out))};
}

// The shortest decimal text that reads back as `v` (numpy's str of a float32 or float64).
std::string shortest_text(double v, bool single) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v < 0 ? "-INF" : "INF";
  char buf[64];
  for (int digits = 1; digits <= 17; ++digits) {
    std::snprintf(buf, sizeof buf, "%.*g", digits, v);
    const double back = std::strtod(buf, nullptr);
    if (single ? static_cast<float>(back) == static_cast<float>(v) : back == v) break;
  }
  return buf;
}

// One element of a numeric tensor as text.
std::string number_text(const Tensor& t, int64_t i) {
  const Scalar s = load_element(t.dtype(), t.data(), i);
  switch (compute_type(t.dtype())) {
    case ScalarType::F32:
      return shortest_text(s.f32, true);
    case ScalarType::F64:
      return shortest_text(s.f64, false);
    case ScalarType::Bool:
      return s.b ? "1" : "0";
    default:
      if (t.dtype() == DType::U64) return std::to_string(static_cast<uint64_t>(s.i64));
      return std::to_string(s.i64);
  }
}

// Text to a number of `to`: decimal or scientific; "NaN", "INF", "-INF" (any case) for
// floats; a whole string that does not parse is an error naming it.
void store_parsed(const StrCtx& c, const std::string& text, DType to, Tensor* out, int64_t i) {
  const char* begin = text.c_str();
  char* end = nullptr;
  if (dtype_is_float(to)) {
    const double v = std::strtod(begin, &end);
    if (text.empty() || *end != '\0') c.error("'", text, "' is not a number");
    store_element(to, out->data(), i, ScalarType::F64, scalar_f64(v));
  } else if (to == DType::Bool) {
    const double v = std::strtod(begin, &end);
    if (text.empty() || *end != '\0') c.error("'", text, "' is not a number");
    store_element(to, out->data(), i, ScalarType::Bool, scalar_bool(v != 0));
  } else {
    errno = 0;
    const long long v = std::strtoll(begin, &end, 10);
    if (text.empty() || *end != '\0' || errno == ERANGE)
      c.error("'", text, "' is not an integer of ", dtype_name(to));
    store_element(to, out->data(), i, ScalarType::I64, scalar_i64(v));
  }
}

// Cast / CastLike to or from strings.
std::vector<EngineValue> string_cast(const StrCtx& c) {
  const Tensor& x = c.tensor(0);
  DType to = DType::Undefined;
  if (c.node.op_type == "CastLike") {
    to = c.tensor(1).dtype();
  } else {
    const int64_t onnx_to = c.node.attr_int("to", 0);
    if (onnx_to == kOnnxString) {
      to = DType::String;
    } else if (onnx_to > INT32_MAX || onnx_to < 0 ||
               !dtype_from_onnx(static_cast<int32_t>(onnx_to), &to) || dtype_size(to) == 0) {
      c.error("to ", onnx_to, " is not a type it casts strings to");
    }
  }
  if (to == DType::String && x.dtype() == DType::String) return {*c.in[0]};
  if (to == DType::String) {
    if (dtype_size(x.dtype()) == 0 || dtype_bits(x.dtype()) < 8)
      c.error("casts ", dtype_name(x.dtype()), " to strings");
    c.fits(x.elements() * static_cast<int64_t>(sizeof(std::string) + 24));
    std::vector<std::string> out;
    for (int64_t i = 0; i < x.elements(); ++i) out.push_back(number_text(x, i));
    return {strings_value(x.shape(), std::move(out))};
  }
  c.strings(0);
  if (dtype_size(to) == 0 || dtype_bits(to) < 8)
    c.error("casts strings to ", dtype_name(to), ", which it does not");
  Tensor out(to, x.shape());
  for (int64_t i = 0; i < x.elements(); ++i) store_parsed(c, x.strings()[i], to, &out, i);
  return {EngineValue::of(std::move(out))};
}

// A LabelEncoder attribute trio as text keys (strings, or numbers by number_text of their
// type): `*dtype` says which type it holds (Undefined when none is given).
std::vector<std::string> encoder_entries(const StrCtx& c, const std::string& stem, DType* dtype) {
  std::vector<std::string> out;
  const auto& attrs = c.node.attrs;
  if (auto s = attrs.find(stem + "_strings"); s != attrs.end()) {
    *dtype = DType::String;
    return s->second.strings;
  }
  if (auto v = attrs.find(stem + "_int64s"); v != attrs.end()) {
    *dtype = DType::I64;
    for (int64_t x : v->second.ints) out.push_back(std::to_string(x));
    return out;
  }
  if (auto v = attrs.find(stem + "_floats"); v != attrs.end()) {
    *dtype = DType::F32;
    Tensor t(DType::F32, {static_cast<int64_t>(v->second.floats.size())});
    for (size_t i = 0; i < v->second.floats.size(); ++i)
      t.as<float>()[i] = static_cast<float>(v->second.floats[i]);
    for (int64_t i = 0; i < t.elements(); ++i) out.push_back(number_text(t, i));
    return out;
  }
  if (auto v = attrs.find(stem + "_tensor"); v != attrs.end() && v->second.t) {
    const TensorData& d = *v->second.t;
    *dtype = d.dtype;
    if (d.dtype == DType::String) return d.strings ? *d.strings : out;
    if (dtype_size(d.dtype) == 0 || dtype_bits(d.dtype) < 8 ||
        d.bytes.size() != static_cast<size_t>(d.elements()) * dtype_size(d.dtype))
      c.error(stem, "_tensor of ", dtype_name(d.dtype), " is not a table it reads");
    const Tensor t(d.dtype, d.shape, d.bytes.data());
    for (int64_t i = 0; i < t.elements(); ++i) out.push_back(number_text(t, i));
    return out;
  }
  *dtype = DType::Undefined;
  return out;
}

// LabelEncoder with string keys or values: each x mapped to the value of its key, else to
// the default (default_tensor, or default_string "_Unused", default_int64 -1, default_float
// -0.0). Numeric keys match a number of x's type by its text (number_text).
std::vector<EngineValue> label_encoder(const StrCtx& c) {
  const Tensor& x = c.tensor(0);
  DType key_type, value_type;
  const std::vector<std::string> keys = encoder_entries(c, "keys", &key_type),
                                 values = encoder_entries(c, "values", &value_type);
  if (keys.empty() || keys.size() != values.size())
    c.error("keys and values must be given, of one length (", keys.size(), " and ", values.size(),
            ")");
  if ((key_type == DType::String) != (x.dtype() == DType::String))
    c.error("X of ", dtype_name(x.dtype()), " for ", dtype_name(key_type), " keys");
  std::map<std::string, size_t> index;
  for (size_t i = 0; i < keys.size(); ++i)
    if (!index.emplace(keys[i], i).second) c.error("key '", keys[i], "' is given twice");
  std::string dflt;
  if (auto d = c.node.attrs.find("default_tensor"); d != c.node.attrs.end() && d->second.t) {
    const TensorData& t = *d->second.t;
    if (t.elements() != 1) c.error("default_tensor must hold one value");
    const DType dt = t.dtype;
    if (dt == DType::String) {
      dflt = t.strings && !t.strings->empty() ? (*t.strings)[0] : std::string();
    } else if (dtype_size(dt) != 0 && t.bytes.size() == dtype_size(dt)) {
      dflt = number_text(Tensor(dt, {1}, t.bytes.data()), 0);
    } else {
      c.error("default_tensor of ", dtype_name(dt), " is not a value it reads");
    }
  } else if (value_type == DType::String) {
    dflt = c.node.attr_string("default_string", "_Unused");
  } else if (dtype_is_float(value_type)) {
    dflt = shortest_text(c.node.attr_float("default_float", -0.0), true);
  } else {
    dflt = std::to_string(c.node.attr_int("default_int64", -1));
  }
  const int64_t n = x.elements();
  std::vector<std::string> mapped(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    const std::string k = x.dtype() == DType::String ? x.strings()[i] : number_text(x, i);
    auto it = index.find(k);
    mapped[i] = it == index.end() ? dflt : values[it->second];
  }
  if (value_type == DType::String) {
    c.fits(text_bytes(mapped));
    return {strings_value(x.shape(), std::move(mapped))};
  }
  if (dtype_size(value_type) == 0) c.error("values of ", dtype_name(value_type));
  Tensor out(value_type, x.shape());
  for (int64_t i = 0; i < n; ++i) store_parsed(c, mapped[i], value_type, &out, i);
  return {EngineValue::of(std::move(out))};
}

}  // namespace

std::vector<int64_t> broadcast_shapes(const std::string& what, const std::vector<int64_t>& a,
                                      const std::vector<int64_t>& b) {
  const size_t rank = std::max(a.size(), b.size());
  std::vector<int64_t> out(rank);
  for (size_t k = 0; k < rank; ++k) {
    const int64_t da = k < rank - a.size() ? 1 : a[k - (rank - a.size())];
    const int64_t db = k < rank - b.size() ? 1 : b[k - (rank - b.size())];
    if (da != db && da != 1 && db != 1)
      fail(what, ": shapes do not broadcast (dim ", k, ": ", da, " and ", db, ")");
    out[k] = da == 1 ? db : da;
  }
  return out;
}

std::vector<int64_t> broadcast_index(const std::vector<int64_t>& in,
                                     const std::vector<int64_t>& out) {
  const size_t rank = out.size(), lead = rank - in.size();
  std::vector<int64_t> stride(rank, 0);
  int64_t s = 1;
  for (size_t k = rank; k-- > lead;) {
    const int64_t d = in[k - lead];
    stride[k] = d == 1 ? 0 : s;
    s *= d;
  }
  const int64_t n = product(out);
  std::vector<int64_t> index(static_cast<size_t>(n), 0);
  std::vector<int64_t> at(rank, 0);
  int64_t offset = 0;
  for (int64_t i = 0; i < n; ++i) {
    index[i] = offset;
    for (size_t k = rank; k-- > 0;) {  // the next position, row-major
      offset += stride[k];
      if (++at[k] < out[k]) break;
      offset -= stride[k] * at[k];
      at[k] = 0;
    }
  }
  return index;
}

std::vector<EngineValue> run_string_op(const Node& node, const std::string& what,
                                       size_t num_outputs,
                                       const std::vector<const EngineValue*>& inputs,
                                       int64_t memory_limit) {
  const StrCtx c{{node, what, inputs, memory_limit}};
  const std::string& op = node.op_type;
  const bool plain = node.domain.empty() || node.domain == "ai.onnx";
  if (plain && op == "StringConcat") return string_concat(c);
  if (plain && op == "StringSplit") return string_split(c, num_outputs);
  if (plain && op == "StringNormalizer") return string_normalizer(c);
  if (plain && op == "Equal") return string_equal(c);
  if (plain && (op == "Cast" || op == "CastLike")) return string_cast(c);
  if (node.domain == "ai.onnx.ml" && op == "LabelEncoder") return label_encoder(c);
  if (plain && (op == "Shape" || op == "Size")) {
    const Tensor& x = c.tensor(0);
    if (op == "Size") {
      Tensor out(DType::I64, {});
      out.as<int64_t>()[0] = x.elements();
      return {EngineValue::of(std::move(out))};
    }
    const int64_t rank = static_cast<int64_t>(x.shape().size());
    int64_t start = node.attr_int("start", 0), end = node.attr_int("end", rank);
    start = std::clamp(start < 0 ? start + rank : start, int64_t{0}, rank);
    end = std::clamp(end < 0 ? end + rank : end, int64_t{0}, rank);
    const int64_t n = std::max(int64_t{0}, end - start);
    Tensor out(DType::I64, {n});
    for (int64_t k = 0; k < n; ++k) out.as<int64_t>()[k] = x.shape()[start + k];
    return {EngineValue::of(std::move(out))};
  }
  throw UnsupportedError(str_cat(what, ": not supported on string tensors"));
}

}  // namespace ferrite
