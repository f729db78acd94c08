// Col2Im (18): the inverse of im2col. Input [N, C * prod(block), L] holds, for each of the
// L block positions (a grid over the padded image, by strides), a column of the block's
// values; the output [N, C, image...] sums every column entry that lands on a pixel.
// Computed as a gather: output pixel p sums, over the block offsets k, the entry of the
// block at (p + pad_begin - k * dilation) / stride where that divides exactly and lies on
// the grid.
#include "compiler/loopir/checked_int.h"
#include "compiler/lower/lowering.h"

namespace ferrite {
namespace {

std::vector<TensorBoxPtr> lower_col2im(LowerCtx& c) {
  const TensorBoxPtr& x = c.input(0);
  if (x->size.size() != 3) c.error("input must be 3-D [N, C * prod(block_shape), L]");
  const std::vector<int64_t> image = const_ints_1d(c, 1), block = const_ints_1d(c, 2);
  const size_t k = image.size();
  if (k == 0 || block.size() != k) c.error("image_shape and block_shape differ in length");
  auto per_dim = [&](const char* name, int64_t dflt) {
    std::vector<int64_t> v = c.node.attr_ints(name, std::vector<int64_t>(k, dflt));
    if (v.size() != k) c.error(name, " must have ", k, " entries");
    return v;
  };
  const std::vector<int64_t> dil = per_dim("dilations", 1), strides = per_dim("strides", 1);
  std::vector<int64_t> pads = c.node.attr_ints("pads", std::vector<int64_t>(2 * k, 0));
  if (pads.size() != 2 * k) c.error("pads must have ", 2 * k, " entries");
  int64_t block_size = 1, positions = 1;
  std::vector<int64_t> grid(k);
  for (size_t d = 0; d < k; ++d) {
    if (image[d] < 1 || block[d] < 1 || dil[d] < 1 || strides[d] < 1 || pads[d] < 0 ||
        pads[d + k] < 0 || image[d] > kMaxShapeElements || block[d] > kMaxShapeElements ||
        dil[d] > kMaxShapeElements || strides[d] > kMaxShapeElements ||
        pads[d] > kMaxShapeElements || pads[d + k] > kMaxShapeElements) {
      c.error("dim ", d, ": image, block, dilation and stride must be positive, pads >= 0");
    }
    const int64_t span =
        checked_add(checked_mul(dil[d], block[d] - 1, "a block span"), 1, "a block span");
    const int64_t padded = image[d] + pads[d] + pads[d + k];
    if (padded < span) c.error("dim ", d, ": the block is larger than the padded image");
    grid[d] = (padded - span) / strides[d] + 1;
    block_size = checked_mul(block_size, block[d], "the block size");
    positions = checked_mul(positions, grid[d], "the block positions");
  }
  if (x->size[1] % block_size != 0) {
    c.error("input dim 1 (", x->size[1], ") is not a multiple of the block size ", block_size);
  }
  if (x->size[2] != positions) {
    c.error("input dim 2 is ", x->size[2], ", the block positions ", positions);
  }
  const int64_t channels = x->size[1] / block_size;
  auto def = std::make_shared<ComputedDef>();
  def->is_reduction = true;
  def->reduce = ReduceKind::Sum;
  def->origin = c.origin();
  def->ranges = {x->size[0], channels};
  def->ranges.insert(def->ranges.end(), image.begin(), image.end());
  def->reduction_ranges = block;
  def->rfn = [=](KernelBuilder& b, const std::vector<Index>& o, const std::vector<Index>& w) {
    V ok = b.constant(ScalarType::Bool, 1);
    Index col = o[1], pos = ix_const(0);
    for (size_t d = 0; d < k; ++d) {
      col = ix_add(ix_mul(col, block[d]), w[d]);
      // where = p + pad_begin - k * dilation must be a multiple of the stride, on the grid
      const Index where = ix_add(ix_add(o[2 + d], ix_const(pads[d])), ix_mul(w[d], -dil[d]));
      const V at = b.index_value(where);
      ok = b.binary(Op::And, ok, b.binary(Op::Ge, at, b.constant_i64(0)));
      ok = b.binary(Op::And, ok, b.binary(Op::Lt, at, b.constant_i64(grid[d] * strides[d])));
      if (strides[d] > 1) {
        const V rem = b.index_value(ix_mod(where, strides[d]));
        ok = b.binary(Op::And, ok, b.binary(Op::Eq, rem, b.constant_i64(0)));
      }
      pos = ix_add(ix_mul(pos, grid[d]), ix_floordiv(where, strides[d]));
    }
    V v;
    {
      MaskScope scope(b, ok);
      v = x->load(b, {o[0], col, pos});
    }
    return b.where(ok, v, b.constant(v.type, 0));
  };
  TensorBoxPtr t = make_reduction_box(x->dtype, def);
  c.gl.realize(t);
  return {t};
}

}  // namespace

void register_col2im_ops(LoweringTable& t) {
  t.add("Col2Im", lower_col2im);
}

}  // namespace ferrite
