#include "compiler/loopir/simplify.h"

#include <gtest/gtest.h>

#include <random>

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

}  // namespace
}  // namespace ferrite
