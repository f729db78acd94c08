#include "compiler/passes/fuse_qdq.h"

#include <cmath>
#include <set>
#include <string>
#include <vector>

#include "compiler/passes/captured_names.h"
#include "compiler/passes/qdq_match.h"

namespace ferrite {
namespace {

// A weights DequantizeLinear: a constant 8-bit tensor, per tensor or per `channel_axis`
// (its scale 1-D of that dim's size).
bool weights_dequantize(const Node* d, size_t rank, int channel_axis) {
  if (!d || !d->input(0)->is_constant() || !d->input(1)->is_constant()) return false;
  if (per_tensor(d)) return true;
  const Value* s = d->input(1);
  const std::vector<int64_t>& ws = d->input(0)->type.shape;
  int64_t axis = d->attr_int("axis", 1);
  if (axis < 0) axis += static_cast<int64_t>(rank);
  return ws.size() == rank && axis == channel_axis && s->type.shape.size() == 1 &&
         s->type.shape[0] == ws[static_cast<size_t>(axis)];
}

// The QuantizeLinear that alone reads `v` (not a graph output), per tensor, into 8 bits.
Node* sole_quantize(const Value* v, const std::set<const Value*>& outputs,
                    const std::set<std::string>& captured) {
  if (outputs.count(v) || captured.count(v->name) || v->users.size() != 1) return nullptr;
  Node* q = v->users[0];
  if (!is_onnx_op(q, "QuantizeLinear") || q->input(0) != v || !per_tensor(q) ||
      q->outputs.empty() || quantized_type(q, nullptr) == DType::Undefined)
    return nullptr;
  return q;
}

// The bias of a QDQ convolution: DequantizeLinear of a constant int32 [M] with zero point 0
// and scale x_scale * w_scale (as quantizers write it), checked on the constants; its int32
// values then go to QLinearConv as they are.
const Value* int32_bias(const Value* b, const Node* dx, const Node* dw) {
  const Node* d = b ? b->producer : nullptr;
  if (!is_onnx_op(d, "DequantizeLinear") || !d->input(0)->is_constant() ||
      d->input(0)->type.dtype != DType::I32 || !d->input(1)->is_constant() ||
      !dx->input(1)->is_constant())
    return nullptr;
  const TensorData &bs = *d->input(1)->data, &xs = *dx->input(1)->data, &ws = *dw->input(1)->data;
  if (bs.elements() != ws.elements() && bs.elements() != 1) return nullptr;
  if (const Value* z = d->input(2);
      z &&
      (!z->is_constant() ||
       z->data->to_ints() != std::vector<int64_t>(static_cast<size_t>(z->data->elements()), 0)))
    return nullptr;
  for (int64_t i = 0; i < ws.elements(); ++i) {
    const double want =
        static_cast<float>(static_cast<float>(xs.float_at(0)) * static_cast<float>(ws.float_at(i)));
    const double got = bs.float_at(bs.elements() == 1 ? 0 : i);
    if (std::fabs(got - want) > 1e-6 * std::fabs(want)) return nullptr;
  }
  return d->input(0);
}

// The QLinear node replacing `op` (Conv or MatMul) between its DequantizeLinears `dx`, `dw`
// and the QuantizeLinear `q`: it reads the 8-bit tensors and their parameters, writes q's
// output, and keeps op's attributes.
void rewrite(Graph& g, Node* op, const Node* dx, const Node* dw, Node* q, const Value* bias) {
  auto zero_or = [&](const Node* d, const Value* like) -> Value* {
    if (d->input(2)) return d->input(2);
    const DType t = quantized_type(d, like);
    auto data = std::make_shared<TensorData>();
    data->dtype = t;
    data->bytes.assign(1, 0);
    return g.add_constant(op->name + "_zero_point", data);
  };
  std::vector<Value*> ins = {dx->input(0),
                             dx->input(1),
                             zero_or(dx, dx->input(0)),
                             dw->input(0),
                             dw->input(1),
                             zero_or(dw, dw->input(0)),
                             q->input(1),
                             zero_or(q, q->outputs[0])};
  if (bias) ins.push_back(const_cast<Value*>(bias));
  const bool conv = op->op_type == "Conv";
  forget_reader(op);
  forget_reader(q);
  op->op_type = conv ? "QLinearConv" : "QLinearMatMul";
  op->domain.clear();
  op->inputs = ins;
  for (Value* v : ins) add_reader(v, op);
  Value* out = q->outputs[0];
  op->outputs[0]->producer = nullptr;
  op->outputs = {out};
  out->producer = op;
  out->output_index = 0;
  q->inputs.clear();
  q->outputs.clear();
}

}  // namespace

void fuse_qdq(Graph& g) {
  const std::set<std::string> captured = captured_names(g);
  const std::set<const Value*> outputs(g.outputs.begin(), g.outputs.end());
  std::set<Node*> absorbed;
  g.rebuild_uses();
  for (const auto& owner : g.nodes) {
    Node* op = owner.get();
    const bool conv = is_onnx_op(op, "Conv"), matmul = is_onnx_op(op, "MatMul");
    if ((!conv && !matmul) || op->outputs.size() != 1 || !op->outputs[0]) continue;
    const Node *dx = dequantize_of(op->input(0)), *dw = dequantize_of(op->input(1));
    if (!dx || !dw || !per_tensor(dx)) continue;
    const size_t rank = dw->input(0)->type.shape.size();
    if (!weights_dequantize(dw, rank, conv ? 0 : static_cast<int>(rank) - 1)) continue;
    if (matmul && rank != 2) continue;
    Node* q = sole_quantize(op->outputs[0], outputs, captured);
    if (!q) continue;
    const Value* bias = nullptr;
    if (conv && op->input(2)) {
      bias = int32_bias(op->input(2), dx, dw);
      if (!bias) continue;
    }
    rewrite(g, op, dx, dw, q, bias);
    absorbed.insert(q);
  }
  if (absorbed.empty()) return;
  erase_absorbed_nodes(g, absorbed);
  g.remove_dead();
}

}  // namespace ferrite
