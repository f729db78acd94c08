#include "compiler/passes/fuse_block_weights.h"

#include <string>
#include <vector>

#include "compiler/passes/captured_names.h"

namespace ferrite {
namespace {

// The bits of a code type MatMulNBits takes, and whether it is signed (0: not such a type).
int code_bits(DType t, bool* is_signed) {
  *is_signed = t == DType::I2 || t == DType::I4 || t == DType::I8;
  if (t == DType::U2 || t == DType::I2) return 2;
  if (t == DType::U4 || t == DType::I4) return 4;
  if (t == DType::U8 || t == DType::I8) return 8;
  return 0;
}

struct Blocked {
  const TensorData *codes = nullptr, *scales = nullptr, *zero_points = nullptr;
  int64_t k = 0, n = 0, block = 0, blocks = 0;
  int bits = 0;
  bool is_signed = false;
};

// Element i of small-type codes (one byte each in memory; signed types sign-extended) as
// MatMulNBits' unsigned code.
unsigned code_at(const Blocked& b, const TensorData& t, int64_t i) {
  const uint8_t byte = t.as<uint8_t>()[i];
  if (!b.is_signed) return byte;
  return static_cast<unsigned>(static_cast<int8_t>(byte) + (1 << (b.bits - 1)));
}

// Whether every element of `t` is a code of b.bits bits (the importer's unpacking makes
// them so; a constant from elsewhere is left to DequantizeLinear's own checks).
bool all_codes(const Blocked& b, const TensorData* t) {
  if (!t) return true;
  for (int64_t i = 0; i < t->elements(); ++i)
    if (code_at(b, *t, i) >= (1u << b.bits)) return false;
  return true;
}

// The DequantizeLinear producing `v` as blocked weights MatMulNBits can take, or false.
bool blocked_weights(const Value* v, Blocked* b) {
  const Node* d = v ? v->producer : nullptr;
  if (!d || d->op_type != "DequantizeLinear" || !(d->domain.empty() || d->domain == "ai.onnx"))
    return false;
  const Value *x = d->input(0), *s = d->input(1), *z = d->input(2);
  if (!x || !s || !x->is_constant() || !s->is_constant() || (z && !z->is_constant())) return false;
  if (d->has_attr("output_dtype") && d->attr_int("output_dtype", 1) != 1) return false;
  b->codes = x->data.get();
  b->scales = s->data.get();
  b->zero_points = z ? z->data.get() : nullptr;
  b->bits = code_bits(b->codes->dtype, &b->is_signed);
  b->block = d->attr_int("block_size", 0);
  if (b->bits == 0 || b->codes->shape.size() != 2 || d->attr_int("axis", 1) != 0 || b->block < 16 ||
      b->block > (int64_t{1} << 16) || (b->block & (b->block - 1)) != 0)
    return false;
  b->k = b->codes->shape[0];
  b->n = b->codes->shape[1];
  if (b->k < 1 || b->n < 1) return false;
  b->blocks = (b->k - 1) / b->block + 1;
  const std::vector<int64_t> table = {b->blocks, b->n};
  return b->scales->dtype == DType::F32 && b->scales->shape == table &&
         (!b->zero_points ||
          (b->zero_points->dtype == b->codes->dtype && b->zero_points->shape == table)) &&
         all_codes(*b, b->codes) && all_codes(*b, b->zero_points);
}

std::shared_ptr<TensorData> bytes_of(std::vector<int64_t> shape, int64_t count) {
  auto d = std::make_shared<TensorData>();
  d->dtype = DType::U8;
  d->shape = std::move(shape);
  d->bytes.assign(static_cast<size_t>(count), 0);
  return d;
}

// MatMulNBits' B: [N, blocks, blob], column n's codes along K, low bits first (zero past K).
std::shared_ptr<TensorData> repack_codes(const Blocked& b) {
  const int64_t per_byte = 8 / b.bits, blob = b.block / per_byte;
  auto d = bytes_of({b.n, b.blocks, blob}, b.n * b.blocks * blob);
  uint8_t* out = d->bytes.mutable_data();
  for (int64_t k = 0; k < b.k; ++k)
    for (int64_t n = 0; n < b.n; ++n)
      out[n * b.blocks * blob + k / per_byte] |=
          static_cast<uint8_t>(code_at(b, *b.codes, k * b.n + n) << ((k % per_byte) * b.bits));
  return d;
}

// Its zero points: [N, ceil(blocks * bits / 8)] packed the same way.
std::shared_ptr<TensorData> repack_zero_points(const Blocked& b) {
  const int64_t per_byte = 8 / b.bits, row = (b.blocks + per_byte - 1) / per_byte;
  auto d = bytes_of({b.n * row}, b.n * row);
  uint8_t* out = d->bytes.mutable_data();
  for (int64_t blk = 0; blk < b.blocks; ++blk)
    for (int64_t n = 0; n < b.n; ++n) {
      const unsigned z = b.zero_points ? code_at(b, *b.zero_points, blk * b.n + n)
                                       : (b.is_signed ? 1u << (b.bits - 1) : 0u);
      out[n * row + blk / per_byte] |= static_cast<uint8_t>(z << ((blk % per_byte) * b.bits));
    }
  return d;
}

// The scales as [N * blocks], column by column.
std::shared_ptr<TensorData> transpose_scales(const Blocked& b) {
  auto d = std::make_shared<TensorData>();
  d->dtype = DType::F32;
  d->shape = {b.n * b.blocks};
  d->bytes.assign(static_cast<size_t>(b.n * b.blocks) * sizeof(float), 0);
  float* out = reinterpret_cast<float*>(d->bytes.mutable_data());
  const float* in = b.scales->as<float>();
  for (int64_t blk = 0; blk < b.blocks; ++blk)
    for (int64_t n = 0; n < b.n; ++n) out[n * b.blocks + blk] = in[blk * b.n + n];
  return d;
}

}  // namespace

void fuse_block_weights(Graph& g) {
  bool changed = false;
  g.rebuild_uses();
  for (const auto& owner : g.nodes) {
    Node* op = owner.get();
    if (op->op_type != "MatMul" || !(op->domain.empty() || op->domain == "ai.onnx") ||
        op->inputs.size() != 2 || op->outputs.size() != 1 || !op->input(0))
      continue;
    Blocked b;
    if (!blocked_weights(op->input(1), &b)) continue;
    const std::string base = op->name.empty() ? op->outputs[0]->name : op->name;
    forget_reader(op);
    op->inputs = {op->inputs[0], g.add_constant(base + "_nbits_codes", repack_codes(b)),
                  g.add_constant(base + "_nbits_scales", transpose_scales(b)),
                  g.add_constant(base + "_nbits_zero_points", repack_zero_points(b))};
    for (Value* v : op->inputs) add_reader(v, op);
    op->op_type = "MatMulNBits";
    op->domain = "com.microsoft";
    op->attrs["K"] = attr_i(b.k);
    op->attrs["N"] = attr_i(b.n);
    op->attrs["bits"] = attr_i(b.bits);
    op->attrs["block_size"] = attr_i(b.block);
    changed = true;
  }
  if (!changed) return;
  g.rebuild_uses();
  g.remove_dead();
}

}  // namespace ferrite
