// Checked int64 arithmetic for the sizes, strides, offsets and output dims that lowering
// computes from a model's attributes, dims and constant inputs — untrusted numbers. An
// overflow is a ferrite::Error saying what was being computed (lower_node prefixes the
// node), never undefined behaviour or a wrapped value that a later `%` or `new` trips on.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace ferrite {

int64_t checked_add(int64_t a, int64_t b, std::string_view what);
int64_t checked_sub(int64_t a, int64_t b, std::string_view what);
int64_t checked_mul(int64_t a, int64_t b, std::string_view what);
// The product of dims that must each be >= 0.
int64_t checked_product(const std::vector<int64_t>& dims, std::string_view what);
// A finite double that must fit in int64 (after the caller's floor/ceil), as int64.
int64_t checked_int(double v, std::string_view what);

// The most elements a shape may describe: its byte size (up to 16 bytes an element), the
// sums of such sizes a memory plan makes and every index into it stay far from int64
// overflow. (A limit on what may actually be allocated is a resource limit, set elsewhere.)
constexpr int64_t kMaxShapeElements = int64_t{1} << 58;
// The most dims a tensor may have (numpy 2's limit); a loop nest (a reduction's outer and
// reduced loops) has at most twice as many. A model that makes more (a Reshape to a shape
// of a million ones) is refused before index expressions that deep are built.
constexpr size_t kMaxRank = 64;

// A tensor shape the loop IR can index: every dim >= 0, and the product of the nonzero
// dims (so every contiguous stride, even beside a zero dim) at most kMaxShapeElements, and
// at most max_rank dims.
// Throws naming `what` and the shape.
void check_shape(const std::vector<int64_t>& size, std::string_view what,
                 size_t max_rank = kMaxRank);

}  // namespace ferrite
