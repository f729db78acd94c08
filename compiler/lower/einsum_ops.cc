// Einsum as one reduction: every letter is a loop; output letters are the outer loops,
// the others are reduced; the body is the product of the operands (a repeated letter in
// one operand reads its diagonal). Ellipsis dims become extra letters, broadcast.
#include <algorithm>
#include <map>

#include "compiler/lower/lowering.h"

namespace ferrite {
namespace {

// Letters are a-z and A-Z (digits name ellipsis dims below), each term has at most one
// "...", and no output letter repeats.
void check_letters(const LowerCtx& c, const std::vector<std::string>& terms, const std::string& out,
                   bool explicit_out) {
  auto check = [&](const std::string& t) {
    size_t dots = t.find("...");
    if (dots != std::string::npos && t.find("...", dots + 3) != std::string::npos)
      c.error("'", t, "' has more than one ellipsis");
    for (size_t i = 0; i < t.size(); ++i) {
      if (dots != std::string::npos && i >= dots && i < dots + 3) continue;
      const char ch = t[i];
      if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z')))
        c.error("'", t, "' holds '", ch, "', not a letter");
    }
  };
  for (const auto& t : terms) check(t);
  if (!explicit_out) return;
  check(out);
  for (size_t i = 0; i < out.size(); ++i)
    if (out[i] != '.' && out.find(out[i], i + 1) != std::string::npos)
      c.error("output letter '", out[i], "' repeats");
}

// Splits "ab,bc->ac" into operand letter strings and the output (implicit when no "->").
struct Equation {
  std::vector<std::string> terms;
  std::string out;
};

Equation parse_equation(const LowerCtx& c, std::string eq, const std::vector<TensorBoxPtr>& ins) {
  eq.erase(std::remove(eq.begin(), eq.end(), ' '), eq.end());
  Equation e;
  std::string lhs = eq;
  bool explicit_out = false;
  size_t arrow = eq.find("->");
  if (arrow != std::string::npos) {
    lhs = eq.substr(0, arrow);
    e.out = eq.substr(arrow + 2);
    explicit_out = true;
  }
  size_t start = 0;
  while (true) {
    size_t comma = lhs.find(',', start);
    e.terms.push_back(
        lhs.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (e.terms.size() != ins.size())
    c.error("equation has ", e.terms.size(), " operands, node has ", ins.size());
  check_letters(c, e.terms, e.out, explicit_out);
  // Ellipsis: the broadcast of the leading dims it covers, named by digits '0'..'9'.
  size_t ell_rank = 0;
  for (size_t i = 0; i < ins.size(); ++i) {
    size_t dots = e.terms[i].find("...");
    size_t letters = e.terms[i].size() - (dots == std::string::npos ? 0 : 3);
    if (letters > ins[i]->size.size())
      c.error("operand ", i, " has rank ", ins[i]->size.size(), ", fewer than the letters of '",
              e.terms[i], "'");
    if (dots == std::string::npos) continue;
    ell_rank = std::max(ell_rank, ins[i]->size.size() - letters);
  }
  if (ell_rank > 10) c.error("ellipsis covers too many dims");
  auto expand = [&](std::string& t, size_t rank) {
    size_t dots = t.find("...");
    if (dots == std::string::npos) return;
    std::string letters;
    for (size_t k = ell_rank - rank; k < ell_rank; ++k)
      letters.push_back(static_cast<char>('0' + k));
    t.replace(dots, 3, letters);
  };
  for (size_t i = 0; i < ins.size(); ++i) {
    size_t dots = e.terms[i].find("...");
    size_t covered = dots == std::string::npos ? 0 : ins[i]->size.size() - (e.terms[i].size() - 3);
    expand(e.terms[i], covered);
    if (e.terms[i].size() != ins[i]->size.size())
      c.error("operand ", i, " rank does not match '", e.terms[i], "'");
  }
  if (explicit_out) {
    expand(e.out, ell_rank);
  } else {
    std::map<char, int> count;
    for (const auto& t : e.terms) {
      for (char ch : t) ++count[ch];
    }
    for (size_t k = 0; k < ell_rank; ++k) e.out.push_back(static_cast<char>('0' + k));
    for (const auto& [ch, n] : count) {
      if (n == 1 && !(ch >= '0' && ch <= '9')) e.out.push_back(ch);
    }
  }
  return e;
}

std::vector<TensorBoxPtr> lower_einsum(LowerCtx& c) {
  std::vector<TensorBoxPtr> ins;
  for (size_t i = 0; i < c.in.size(); ++i) ins.push_back(c.input(i));
  if (ins.empty()) c.error("needs at least one input");
  for (const auto& t : ins)
    if (t->dtype != ins[0]->dtype) c.error("operands differ in type");
  Equation e = parse_equation(c, c.node.attr_string("equation", ""), ins);
  std::map<char, int64_t> dim;
  for (size_t i = 0; i < ins.size(); ++i) {
    for (size_t d = 0; d < e.terms[i].size(); ++d) {
      int64_t n = ins[i]->size[d];
      auto [it, fresh] = dim.try_emplace(e.terms[i][d], n);
      if (!fresh && it->second != n) {
        if (it->second == 1)
          it->second = n;
        else if (n != 1)
          c.error("letter '", e.terms[i][d], "' has sizes ", it->second, " and ", n);
      }
    }
  }
  std::string red;
  for (const auto& [ch, n] : dim) {
    if (e.out.find(ch) == std::string::npos) red.push_back(ch);
  }
  std::vector<int64_t> out_size, red_size;
  for (char ch : e.out) {
    if (!dim.count(ch)) c.error("output letter '", ch, "' is not in any operand");
    out_size.push_back(dim[ch]);
  }
  for (char ch : red) red_size.push_back(dim[ch]);
  DType dt = ins[0]->dtype;
  auto body = [ins, e, red](KernelBuilder& b, const std::vector<Index>& o,
                            const std::vector<Index>& r) {
    auto index_of = [&](char ch) {
      size_t p = e.out.find(ch);
      return p != std::string::npos ? o[p] : r[red.find(ch)];
    };
    V prod;
    for (size_t i = 0; i < ins.size(); ++i) {
      std::vector<Index> idx;
      for (size_t d = 0; d < e.terms[i].size(); ++d) {
        idx.push_back(ins[i]->size[d] == 1 ? ix_const(0) : index_of(e.terms[i][d]));
      }
      V v = ins[i]->load(b, idx);
      prod = prod.id < 0 ? v : b.binary(Op::Mul, prod, v);
    }
    return prod;
  };
  if (red.empty()) {
    return {make_pointwise_box(
        dt, out_size,
        [body](KernelBuilder& b, const std::vector<Index>& o) { return body(b, o, {}); },
        c.origin())};
  }
  auto def = std::make_shared<ComputedDef>();
  def->is_reduction = true;
  def->reduce = ReduceKind::Sum;
  def->origin = c.origin();
  def->ranges = out_size;
  def->reduction_ranges = red_size;
  def->rfn = body;
  TensorBoxPtr t = make_reduction_box(dt, def);
  c.gl.realize(t);
  return {t};
}

}  // namespace

void register_einsum_ops(LoweringTable& t) {
  t.add("Einsum", lower_einsum);
}

}  // namespace ferrite
