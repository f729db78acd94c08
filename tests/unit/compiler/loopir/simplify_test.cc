#include "compiler/loopir/simplify.h"

#include <gtest/gtest.h>

#include <functional>
#include <random>
#include <vector>

#include "compiler/plan/error.h"

namespace ferrite {
namespace {

Index v(int i) {
  return ix_var(i);
}
Index c(int64_t x) {
  return ix_const(x);
}
Index add(Index a, Index b) {
  return ix_binary(IndexKind::Add, a, b);
}
Index mul(Index a, int64_t k) {
  return ix_binary(IndexKind::Mul, a, c(k));
}
Index div(Index a, int64_t k) {
  return ix_binary(IndexKind::FloorDiv, a, c(k));
}
Index mod(Index a, int64_t k) {
  return ix_binary(IndexKind::Mod, a, c(k));
}

Index mul2(Index a, Index b) {
  return ix_binary(IndexKind::Mul, a, b);
}
Index sym(int i) {
  return ix_sym(i);
}

std::string s(const IndexSimplifier& simp, const Index& e) {
  return index_to_string(*simp.simplify(e));
}

TEST(IndexSimplify, FoldsConstantsAndCombinesTerms) {
  IndexSimplifier simp({4, 8});
  EXPECT_EQ(s(simp, add(add(mul(v(0), 8), c(0)), add(v(1), mul(v(0), 2)))), "((i0*10) + i1)");
  EXPECT_EQ(s(simp, add(mul(c(3), 4), c(-12))), "0");
  EXPECT_EQ(s(simp, add(v(1), mul(v(1), -1))), "0");
}

TEST(IndexSimplify, DivModByRange) {
  IndexSimplifier simp({4, 8});
  // (8*i0 + i1) // 8 == i0 and % 8 == i1 because 0 <= i1 < 8.
  Index lin = add(mul(v(0), 8), v(1));
  EXPECT_EQ(s(simp, div(lin, 8)), "i0");
  EXPECT_EQ(s(simp, mod(lin, 8)), "i1");
  // i1 < 8 so i1 // 16 == 0 and i1 % 16 == i1.
  EXPECT_EQ(s(simp, div(v(1), 16)), "0");
  EXPECT_EQ(s(simp, mod(v(1), 16)), "i1");
  // Not provable: kept.
  EXPECT_EQ(s(simp, div(v(1), 3)), "(i1 // 3)");
}

TEST(IndexSimplify, NestedDivAndReshapeRoundTrip) {
  IndexSimplifier simp({24});
  EXPECT_EQ(s(simp, div(div(v(0), 4), 3)), "(i0 // 12)");
  // Split [24] into [2,3,4] then flatten back: 12*(i//12) + 4*((i//4)%3) + i%4 == i.
  Index back = add(add(mul(div(v(0), 12), 12), mul(mod(div(v(0), 4), 3), 4)), mod(v(0), 4));
  EXPECT_EQ(s(simp, back), "i0");
}

TEST(IndexSimplify, ValueRangeFromCheckedIndex) {
  IndexSimplifier simp({5});
  simp.set_value_range(7, 10);
  EXPECT_EQ(s(simp, div(add(mul(v(0), 10), ix_value(7)), 10)), "i0");
  EXPECT_EQ(s(simp, mod(ix_value(7), 10)), "%7");
  IndexSimplifier unknown({5});
  EXPECT_EQ(s(unknown, mod(ix_value(7), 10)), "(%7 % 10)");
}

TEST(IndexSimplify, RandomExpressionsKeepTheirValue) {
  // Oracle: direct evaluation of the raw tree at every point of the iteration space.
  std::mt19937 rng(1234);
  std::vector<int64_t> ext{3, 5, 7};
  IndexSimplifier simp(ext);
  for (int trial = 0; trial < 300; ++trial) {
    std::function<Index(int)> gen = [&](int depth) -> Index {
      int pick = depth > 3 ? static_cast<int>(rng() % 2) : static_cast<int>(rng() % 6);
      switch (pick) {
        case 0:
          return c(static_cast<int64_t>(rng() % 13) - 6);
        case 1:
          return v(static_cast<int>(rng() % 3));
        case 2:
          return add(gen(depth + 1), gen(depth + 1));
        case 3:
          return mul(gen(depth + 1), static_cast<int64_t>(rng() % 7) - 3);
        case 4:
          return div(gen(depth + 1), 1 + static_cast<int64_t>(rng() % 6));
        default:
          return mod(gen(depth + 1), 1 + static_cast<int64_t>(rng() % 6));
      }
    };
    Index e = gen(0);
    Index f = simp.simplify(e);
    for (int64_t a = 0; a < 3; ++a) {
      for (int64_t b = 0; b < 5; ++b) {
        for (int64_t d = 0; d < 7; ++d) {
          int64_t vars[3] = {a, b, d};
          ASSERT_EQ(eval_index(*e, vars, nullptr), eval_index(*f, vars, nullptr))
              << index_to_string(*e) << " vs " << index_to_string(*f);
        }
      }
    }
  }
}

TEST(IndexSimplify, AffineFormOfSimplifiedView) {
  // transpose of a [4,8] buffer read at [i0, i1] of the [8,4] view: i1*8 + i0.
  IndexSimplifier simp({8, 4});
  Index e = simp.simplify(add(mul(v(1), 8), v(0)));
  AffineIndex aff;
  ASSERT_TRUE(as_affine(*e, 2, &aff));
  EXPECT_EQ(aff.offset, 0);
  EXPECT_EQ(aff.coeff, (std::vector<int64_t>{1, 8}));
  EXPECT_FALSE(as_affine(*simp.simplify(div(v(0), 3)), 2, &aff));
}

// Sizes known only at run time (docs/shapes.md): Sym leaves are atoms, with the range
// declared for them; products of non-constant factors are distributed into a polynomial
// whose terms are products of atoms in one order.
TEST(IndexSimplify, SymbolsAreTermsWithRanges) {
  IndexSimplifier simp({4, 8});
  simp.set_symbol_range(0, 1, 100);
  // (4*s0 + 2) // 2 == 2*s0 + 1; and 8*s0*i0 + i1 reads i1 back with % 8.
  EXPECT_EQ(s(simp, div(add(mul(sym(0), 4), c(2)), 2)), "((s0*2) + 1)");
  EXPECT_EQ(s(simp, mod(add(mul(mul2(sym(0), v(0)), 8), v(1)), 8)), "i1");
  // (s0 + 1) * (i0 + s1) == i0*s0 + s0*s1 + i0 + s1 (terms in key order), each product
  // with its factors in one order.
  EXPECT_EQ(s(simp, mul2(add(sym(0), c(1)), add(v(0), sym(1)))),
            "((((i0*s0) + (s0*s1)) + i0) + s1)");
  EXPECT_EQ(s(simp, add(mul2(sym(1), sym(0)), mul(mul2(sym(0), sym(1)), -1))), "0");
  // Ranges: s0 in [1, 100] gives s0*3 - 1 in [2, 299] and s0*i0 in [0, 300].
  auto r = simp.range(add(mul(sym(0), 3), c(-1)));
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->lo, 2);
  EXPECT_EQ(r->hi, 299);
  r = simp.range(mul2(sym(0), v(0)));
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->lo, 0);
  EXPECT_EQ(r->hi, 300);
  // s0 // 200 == 0 with s0 <= 100; an undeclared symbol proves nothing.
  EXPECT_EQ(s(simp, div(sym(0), 200)), "0");
  EXPECT_FALSE(simp.range(sym(1)).has_value());
  EXPECT_EQ(s(simp, div(sym(1), 200)), "(s1 // 200)");
}

TEST(IndexSimplify, BoundSymbolsGiveTheValuesOfTheirTree) {
  // Oracle: the raw tree with its symbols bound, evaluated directly, against its simplified
  // form bound and simplified again, at every point and for several symbol values.
  std::mt19937 rng(99);
  const std::vector<int64_t> ext{3, 4};
  IndexSimplifier simp(ext);
  simp.set_symbol_range(0, 1, 6);
  simp.set_symbol_range(1, 2, 5);
  for (int trial = 0; trial < 300; ++trial) {
    std::function<Index(int)> gen = [&](int depth) -> Index {
      const int pick = depth > 3 ? static_cast<int>(rng() % 3) : static_cast<int>(rng() % 7);
      switch (pick) {
        case 0:
          return c(static_cast<int64_t>(rng() % 9) - 4);
        case 1:
          return v(static_cast<int>(rng() % 2));
        case 2:
          return sym(static_cast<int>(rng() % 2));
        case 3:
          return add(gen(depth + 1), gen(depth + 1));
        case 4:
          return mul2(gen(depth + 1), gen(depth + 1));
        case 5:
          return div(gen(depth + 1), 1 + static_cast<int64_t>(rng() % 5));
        default:
          return mod(gen(depth + 1), 1 + static_cast<int64_t>(rng() % 5));
      }
    };
    const Index e = gen(0);
    const Index f = simp.simplify(e);
    for (int64_t s0 = 1; s0 <= 6; s0 += 5) {
      for (int64_t s1 = 2; s1 <= 5; s1 += 3) {
        const std::vector<int64_t> syms{s0, s1};
        IndexSimplifier concrete(ext);
        const Index raw = bind_syms(e, syms), done = concrete.simplify(bind_syms(f, syms));
        EXPECT_FALSE(index_uses_sym(*raw) || index_uses_sym(*done));
        for (int64_t a = 0; a < 3; ++a) {
          for (int64_t b = 0; b < 4; ++b) {
            const int64_t vars[2] = {a, b};
            ASSERT_EQ(eval_index(*raw, vars, nullptr), eval_index(*done, vars, nullptr))
                << index_to_string(*e) << " vs " << index_to_string(*f) << " at s0=" << s0
                << " s1=" << s1;
          }
        }
      }
    }
  }
  EXPECT_THROW(bind_syms(sym(2), {1, 2}), Error);
}

TEST(IndexSimplify, SizeFormulasEvaluateOrFailCleanly) {
  // (s0 + 3) * s1 // 2 and s1 % 4, worked by hand.
  const Index f = div(mul2(add(sym(0), c(3)), sym(1)), 2);
  EXPECT_EQ(eval_size_formula(*f, {5, 7}), 28);
  EXPECT_EQ(eval_size_formula(*mod(sym(1), 4), {0, 7}), 3);
  // Plans are untrusted: each of these is an Error, not a crash or a wrapped value.
  EXPECT_THROW(eval_size_formula(*f, {5}), Error);
  EXPECT_THROW(eval_size_formula(*add(v(0), c(1)), {}), Error);
  EXPECT_THROW(eval_size_formula(*mul2(sym(0), sym(0)), {int64_t{1} << 33}), Error);
  EXPECT_THROW(eval_size_formula(*add(sym(0), c(1)), {INT64_MAX}), Error);
  EXPECT_THROW(eval_size_formula(*ix_binary(IndexKind::FloorDiv, c(4), sym(0)), {0}), Error);
}

}  // namespace
}  // namespace ferrite
