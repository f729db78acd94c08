// com.microsoft MatMulNBits: Y = A @ dequantize(B)^T (+ bias), B's [N, K] weights in blocks
// of block_size along K, each block with a float scale and a zero point (2-, 4- or 8-bit
// codes packed low bits first, blob_size = block_size * bits / 8 bytes per block; zero
// points packed the same way per row of blocks, or float, default 2^(bits - 1)).
// B, scales and zero points are the model's weights, kept as they are: the MatMulNBits extern
// decodes the codes as it multiplies (a 4-bit model's weights stay an eighth of a float
// copy's size).
#include <cmath>
#include <string>

#include "compiler/loopir/checked_int.h"
#include "compiler/lower/quant_common.h"
#include "compiler/plan/externs/matmul_nbits_call.h"

namespace ferrite {
namespace {

struct NBits {
  int64_t k = 0, n = 0, bits = 4, block = 0, blocks = 0, blob = 0;
};

NBits nbits_attrs(const LowerCtx& c) {
  NBits a;
  a.k = c.node.attr_int("K", -1);
  a.n = c.node.attr_int("N", -1);
  a.bits = c.node.attr_int("bits", 4);
  a.block = c.node.attr_int("block_size", -1);
  if (a.bits != 2 && a.bits != 4 && a.bits != 8) c.unsupported("bits ", a.bits, " (2, 4, 8)");
  if (a.k < 1 || a.n < 1) c.error("K and N must be positive, got ", a.k, " and ", a.n);
  if (a.block < 16 || a.block > (int64_t{1} << 16) || (a.block & (a.block - 1)) != 0)
    c.error("block_size must be a power of 2 in [16, 65536], got ", a.block);
  a.blocks = (a.k - 1) / a.block + 1;
  a.blob = a.block * a.bits / 8;
  checked_product({a.n, a.blocks, a.blob}, "MatMulNBits weights");
  return a;
}

// The code at position `i` of packed bytes (low bits first).
int64_t code_at(const uint8_t* bytes, int64_t i, int64_t bits) {
  const int64_t per_byte = 8 / bits;
  const int shift = static_cast<int>((i % per_byte) * bits);
  return (bytes[i / per_byte] >> shift) & ((1 << bits) - 1);
}

std::shared_ptr<const TensorData> expect_const(const LowerCtx& c, size_t i, DType t,
                                               int64_t elements, const char* what) {
  std::shared_ptr<const TensorData> d = c.const_data(i);
  if (d->dtype != t || d->elements() != elements)
    c.error(what, " '", c.node.inputs[i]->name, "' must be ", dtype_name(t), " with ", elements,
            " elements, got ", dtype_name(d->dtype), shape_text(d->shape));
  return d;
}

// `d` (a constant's data) seen as `shape`: the same bytes, shared.
TensorBoxPtr reshaped_constant(const LowerCtx& c, const std::shared_ptr<const TensorData>& d,
                               std::vector<int64_t> shape, const char* what) {
  auto r = std::make_shared<TensorData>(*d);
  r->shape = std::move(shape);
  return constant_box(c.gl, r, c.origin() + " " + what);
}

// The MatMulNBits extern (runtime/kernels/reference/matmul_nbits.h) on A [..., M, K]: B's
// codes as [N, blocks * blob] and the scales as [N, blocks], both the model's bytes; the
// zero points as given when they are float, else unpacked to a byte each.
TensorBoxPtr nbits_extern(const LowerCtx& c, const NBits& a, const TensorBoxPtr& x) {
  const auto b = expect_const(c, 1, DType::U8, a.n * a.blocks * a.blob, "B");
  const auto scales = expect_const(c, 2, DType::F32, a.n * a.blocks, "scales");
  ExternNode e;
  encode_extern(MatMulNBitsCall{a.bits, a.block}, &e);
  e.origin = c.origin();
  e.inputs.push_back(c.gl.extern_operand(x));
  e.inputs.push_back(
      c.gl.extern_operand(reshaped_constant(c, b, {a.n, a.blocks * a.blob}, "codes")));
  e.inputs.push_back(c.gl.extern_operand(reshaped_constant(c, scales, {a.n, a.blocks}, "scales")));
  if (c.has(3)) {
    const std::shared_ptr<const TensorData> zp = c.const_data(3);
    const int64_t packed = a.n * ((a.blocks * a.bits + 7) / 8);
    const bool float_zp = zp->dtype == DType::F32;
    if (float_zp ? zp->elements() != a.n * a.blocks
                 : zp->dtype != DType::U8 || zp->elements() != packed)
      c.error("zero_points must be uint8 with ", packed, " elements (packed) or float32 with ",
              a.n * a.blocks, ", got ", dtype_name(zp->dtype), shape_text(zp->shape));
    if (float_zp) {
      e.inputs.push_back(
          c.gl.extern_operand(reshaped_constant(c, zp, {a.n, a.blocks}, "zero points")));
    } else {
      auto z = std::make_shared<TensorData>();
      z->dtype = DType::U8;
      z->shape = {a.n, a.blocks};
      z->bytes.assign(static_cast<size_t>(a.n * a.blocks), 0);
      uint8_t* out = z->bytes.mutable_data();
      const int64_t zp_row = (a.blocks * a.bits + 7) / 8;
      for (int64_t n = 0; n < a.n; ++n)
        for (int64_t blk = 0; blk < a.blocks; ++blk)
          out[n * a.blocks + blk] =
              static_cast<uint8_t>(code_at(zp->as<uint8_t>() + n * zp_row, blk, a.bits));
      e.inputs.push_back(c.gl.extern_operand(constant_box(c.gl, z, c.origin() + " zero points")));
    }
  }
  std::vector<int64_t> out_size = x->size;
  out_size.back() = a.n;
  Buffer* out = c.gl.new_buffer("", DType::F32, out_size, BufferOrigin::Extern);
  e.outputs.push_back(out);
  c.gl.add_extern(std::move(e));
  return make_buffer_box(out);
}

std::vector<TensorBoxPtr> lower_matmul_nbits(LowerCtx& c) {
  const TensorBoxPtr& x = c.input(0);
  if (x->dtype != DType::F32) c.unsupported("MatMulNBits on ", dtype_name(x->dtype));
  const NBits a = nbits_attrs(c);
  if (x->size.empty() || x->size.back() != a.k)
    c.error("A ", shape_text(x->size), " must end in K = ", a.k);
  if (c.has(4)) c.unsupported("g_idx (deprecated; act-order weights)");
  TensorBoxPtr bias;
  if (c.has(5)) {
    bias = c.input(5);
    if (bias->dtype != DType::F32 || bias->size != std::vector<int64_t>{a.n})
      c.error("bias must be float32 [", a.n, "], got ", dtype_name(bias->dtype),
              shape_text(bias->size));
  }
  const bool vector = x->size.size() == 1;
  TensorBoxPtr y = nbits_extern(c, a, vector ? reshape_view(x, {1, a.k}) : x);
  if (vector) y = reshape_view(y, {a.n});
  if (bias)
    y = make_pointwise(c, {y, bias}, DType::F32, [](KernelBuilder& b, const std::vector<V>& v) {
      return b.binary(Op::Add, v[0], v[1]);
    });
  return {y};
}

}  // namespace

void register_matmul_nbits_ops(LoweringTable& t) {
  t.add(std::string(kMicrosoftDomain) + ".MatMulNBits", lower_matmul_nbits);
}

}  // namespace ferrite
