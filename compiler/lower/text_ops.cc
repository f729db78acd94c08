// TfIdfVectorizer (9) on integer token ids: per row, the count of each pool n-gram among the
// row's n-grams (n from min_gram_length to max_gram_length, their tokens max_skip_count or
// fewer apart; a unigram counted once, not once per skip), then TF (the count), IDF (the
// n-gram's weight where the count is positive) or TFIDF (count times weight), written to
// the column ngram_indexes names. A reduction over (skip, start) per output column: each
// column loads its n-gram from a constant table and compares token by token. String
// tokens are not supported (Ferrite has no string tensors).
#include <algorithm>
#include <cstring>

#include "compiler/loopir/checked_int.h"
#include "compiler/lower/lowering.h"
#include "compiler/plan/resource_limits.h"

namespace ferrite {
namespace {

constexpr int64_t kMaxGram = 16;

TensorBoxPtr int64_table(GraphLowering& gl, const std::vector<int64_t>& v, const std::string& n) {
  auto d = std::make_shared<TensorData>();
  d->dtype = DType::I64;
  d->shape = {static_cast<int64_t>(v.size())};
  d->bytes.assign(v.size() * sizeof(int64_t), 0);
  if (!v.empty()) std::memcpy(d->bytes.mutable_data(), v.data(), v.size() * sizeof(int64_t));
  return constant_box(gl, d, n);
}

// Column j's n-gram (length 0: none counted there), its tokens padded to max_n, and the
// weight of the pool entry that writes it (1 without weights).
struct NgramTable {
  std::vector<int64_t> lens, tokens;
  std::vector<double> weights;
};

NgramTable ngram_table(const LowerCtx& c, int64_t min_n, int64_t max_n) {
  if (c.node.has_attr("pool_strings")) c.unsupported("pool_strings (no string tensors)");
  const std::vector<int64_t> pool = c.node.attr_ints("pool_int64s", {});
  const std::vector<int64_t> counts = c.node.attr_ints("ngram_counts", {});
  const std::vector<int64_t> indexes = c.node.attr_ints("ngram_indexes", {});
  const std::vector<double> weights = c.node.attr_floats("weights", {});
  int64_t columns = 0;
  for (int64_t i : indexes) {
    if (i < 0 || i > kMaxShapeElements) c.error("ngram_indexes holds ", i);
    columns = std::max(columns, i + 1);
  }
  if (!weights.empty() && weights.size() != indexes.size())
    c.error("weights has ", weights.size(), " entries, ngram_indexes ", indexes.size());
  // The tables (a length, max_n tokens and a weight per column) within the memory limit,
  // before they are allocated: a stray index of 2^40 asks for terabytes.
  check_memory_limit(
      checked_product({columns, max_n + 2, 8}, "TfIdfVectorizer tables"), c.gl.memory_limit,
      str_cat(c.origin(), ": the tables of ", columns, " output columns (ngram_indexes)"));
  NgramTable t;
  t.lens.assign(static_cast<size_t>(columns), 0);
  t.tokens.assign(static_cast<size_t>(columns * max_n), 0);
  t.weights.assign(static_cast<size_t>(columns), 1.0);
  std::vector<bool> named(static_cast<size_t>(columns), false);
  size_t k = 0;  // the n-gram's position in pool order (ngram_indexes' index)
  for (size_t g = 0; g < counts.size(); ++g) {
    const int64_t n = static_cast<int64_t>(g) + 1;
    const int64_t start = counts[g];
    const int64_t end = g + 1 < counts.size() ? counts[g + 1] : static_cast<int64_t>(pool.size());
    if (start < 0 || end < start || end > static_cast<int64_t>(pool.size()) || (end - start) % n)
      c.error("ngram_counts does not divide pool_int64s into ", n, "-grams");
    for (int64_t at = start; at < end; at += n, ++k) {
      if (k >= indexes.size()) c.error("ngram_indexes has fewer entries than the pool n-grams");
      const size_t j = static_cast<size_t>(indexes[k]);
      if (named[j]) c.error("ngram_indexes names column ", j, " twice");
      named[j] = true;
      if (!weights.empty()) t.weights[j] = weights[k];
      if (n < min_n || n > max_n) continue;  // never counted: the column stays 0
      t.lens[j] = n;
      for (int64_t i = 0; i < n; ++i) t.tokens[j * static_cast<size_t>(max_n) + i] = pool[at + i];
    }
  }
  if (k != indexes.size()) c.error("ngram_indexes has more entries than the pool n-grams");
  return t;
}

std::vector<TensorBoxPtr> lower_tfidf(LowerCtx& c) {
  const TensorBoxPtr& x = c.input(0);
  if (x->dtype != DType::I64 && x->dtype != DType::I32)
    c.unsupported("input of type ", dtype_name(x->dtype), " (int32 and int64 token ids only)");
  if (x->size.empty() || x->size.size() > 2) c.error("X must be 1-D or 2-D");
  const int64_t min_n = c.node.attr_int("min_gram_length", 0);
  const int64_t max_n = c.node.attr_int("max_gram_length", 0);
  const int64_t max_skip = c.node.attr_int("max_skip_count", 0);
  if (min_n < 1 || max_n < min_n || max_n > kMaxGram)
    c.error("gram lengths must satisfy 1 <= min_gram_length <= max_gram_length <= ", kMaxGram);
  if (max_skip < 0 || max_skip > 1024) c.error("max_skip_count must be in 0..1024");
  const std::string mode = c.node.attr_string("mode", "");
  if (mode != "TF" && mode != "IDF" && mode != "TFIDF")
    c.error("mode must be TF, IDF or TFIDF, got '", mode, "'");
  const NgramTable table = ngram_table(c, min_n, max_n);
  const auto columns = static_cast<int64_t>(table.lens.size());
  const std::vector<int64_t>& lens = table.lens;
  const std::vector<int64_t>& toks = table.tokens;
  const std::vector<double>& column_weight = table.weights;
  const TensorBoxPtr len_t = int64_table(c.gl, lens, "tfidf_lengths");
  const TensorBoxPtr tok_t = int64_table(c.gl, toks, "tfidf_tokens");
  const bool rows = x->size.size() == 2;
  const int64_t width = x->size.back();
  auto def = std::make_shared<ComputedDef>();
  def->is_reduction = true;
  def->reduce = ReduceKind::Sum;
  def->origin = c.origin();
  def->ranges = rows ? std::vector<int64_t>{x->size[0], columns} : std::vector<int64_t>{columns};
  def->reduction_ranges = {max_skip + 1, width};
  def->rfn = [=](KernelBuilder& b, const std::vector<Index>& o, const std::vector<Index>& r) {
    const Index& j = o.back();
    const V len = len_t->load(b, {j});
    const V step = b.binary(Op::Add, b.index_value(r[0]), b.constant_i64(1));  // skip + 1
    const V start = b.index_value(r[1]);
    const V one = b.constant_i64(1), w = b.constant_i64(width);
    // A unigram only at skip 0; every token of the n-gram within the row.
    V hit = b.binary(Op::Or, b.binary(Op::Gt, len, one),
                     b.binary(Op::Eq, b.index_value(r[0]), b.constant_i64(0)));
    hit = b.binary(Op::And, hit, b.binary(Op::Ge, len, one));
    const V last = b.binary(Op::Add, start, b.binary(Op::Mul, b.binary(Op::Sub, len, one), step));
    hit = b.binary(Op::And, hit, b.binary(Op::Lt, last, w));
    for (int64_t t = 0; t < max_n; ++t) {
      const V pos = b.binary(Op::Add, start, b.binary(Op::Mul, b.constant_i64(t), step));
      const V used = b.binary(Op::Lt, b.constant_i64(t), len);
      const V inside = b.binary(Op::And, used, b.binary(Op::Lt, pos, w));
      V token;
      {
        MaskScope scope(b, inside);
        std::vector<Index> at;
        if (rows) at.push_back(o[0]);
        at.push_back(ix_value(pos.id));
        token = b.cast(x->load(b, at), ScalarType::I64);
      }
      const V want = tok_t->load(b, {ix_add(ix_mul(j, max_n), ix_const(t))});
      const V same = b.binary(Op::Eq, token, want);
      hit = b.binary(Op::And, hit, b.binary(Op::Or, b.unary(Op::Not, used), same));
    }
    return b.cast(hit, ScalarType::F32);
  };
  const TensorBoxPtr count = make_reduction_box(DType::F32, def);
  if (mode == "TF") return {count};
  c.gl.realize(count);  // the counts, then their weighting
  auto wd = std::make_shared<TensorData>();
  wd->dtype = DType::F32;
  wd->shape = {columns};
  wd->bytes.assign(static_cast<size_t>(columns) * sizeof(float), 0);
  for (size_t i = 0; i < column_weight.size(); ++i) {
    const float f = static_cast<float>(column_weight[i]);
    std::memcpy(wd->bytes.mutable_data() + i * sizeof(float), &f, sizeof(float));
  }
  const TensorBoxPtr weight = constant_box(c.gl, wd, "tfidf_weights");
  const bool idf = mode == "IDF";
  Loader fn = [=](KernelBuilder& b, const std::vector<Index>& i) {
    const V n = count->load(b, i), wt = weight->load(b, {i.back()});
    if (idf)
      return b.where(b.binary(Op::Gt, n, b.constant(ScalarType::F32, 0)), wt,
                     b.constant(ScalarType::F32, 0));
    return b.binary(Op::Mul, n, wt);
  };
  return {make_pointwise_box(DType::F32, def->ranges, fn, c.origin())};
}

}  // namespace

void register_text_ops(LoweringTable& t) {
  t.add("TfIdfVectorizer", lower_tfidf);
}

}  // namespace ferrite
