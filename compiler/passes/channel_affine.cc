#include "compiler/passes/channel_affine.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <utility>

namespace ferrite {
namespace {

// The values of a constant that broadcasts against an output of rank `rank` as one value
// per channel along `axis` (dims 1 everywhere else, or a scalar).
bool per_channel(const Value* c, size_t rank, size_t axis, int64_t channels,
                 std::vector<double>* out) {
  if (!f32_constant(c)) return false;
  const std::vector<int64_t>& s = c->data->shape;
  if (s.size() > rank) return false;
  const size_t lead = rank - s.size();
  int64_t n = 1;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == 1) continue;
    if (lead + i != axis || s[i] != channels) return false;
    n = channels;
  }
  out->resize(static_cast<size_t>(channels));
  for (int64_t i = 0; i < channels; ++i) (*out)[i] = c->data->float_at(n == 1 ? 0 : i);
  return true;
}

bool batch_norm(const Node& u, const Value* v, int64_t m, ChannelAffine* a) {
  if (u.input(0) != v || u.attr_int("training_mode", 0) != 0) return false;
  for (size_t k = 1; k < u.outputs.size(); ++k)
    if (u.outputs[k] && !u.outputs[k]->users.empty()) return false;
  std::vector<double> gamma, beta, mean, var;
  for (auto [i, dst] :
       {std::pair<size_t, std::vector<double>*>{1, &gamma}, {2, &beta}, {3, &mean}, {4, &var}}) {
    const Value* c = u.input(i);
    if (!f32_constant(c) || c->data->shape != std::vector<int64_t>{m}) return false;
    dst->resize(static_cast<size_t>(m));
    for (int64_t j = 0; j < m; ++j) (*dst)[j] = c->data->float_at(j);
  }
  const double eps = u.attr_float("epsilon", 1e-5);
  for (int64_t j = 0; j < m; ++j) {
    // In float, as the unfolded BatchNormalization computes its scale.
    const float s = static_cast<float>(gamma[j]) /
                    std::sqrt(static_cast<float>(var[j]) + static_cast<float>(eps));
    a->scale[j] = s;
    a->shift[j] = beta[j] - mean[j] * s;
  }
  return true;
}

}  // namespace

ChannelAffine::ChannelAffine(int64_t channels)
    : scale(static_cast<size_t>(channels), 1.0), shift(static_cast<size_t>(channels), 0.0) {}

void ChannelAffine::then(const ChannelAffine& next) {
  for (size_t c = 0; c < scale.size(); ++c) {
    scale[c] *= next.scale[c];
    shift[c] = shift[c] * next.scale[c] + next.shift[c];
  }
}

bool ChannelAffine::scales() const {
  for (double s : scale)
    if (s != 1.0) return true;
  return false;
}

bool ChannelAffine::shifts() const {
  for (double t : shift)
    if (t != 0.0) return true;
  return false;
}

bool f32_constant(const Value* v) {
  return v && v->is_constant() && v->data->dtype == DType::F32;
}

bool channel_affine_of(const Node& u, const Value* v, size_t rank, size_t axis, int64_t channels,
                       ChannelAffine* a) {
  *a = ChannelAffine(channels);
  if (u.op_type == "BatchNormalization") return axis == 1 && batch_norm(u, v, channels, a);
  const bool mul = u.op_type == "Mul", div = u.op_type == "Div";
  const bool add = u.op_type == "Add", sub = u.op_type == "Sub";
  if ((!mul && !div && !add && !sub) || u.inputs.size() != 2) return false;
  const int vi = u.input(0) == v ? 0 : (u.input(1) == v ? 1 : -1);
  if (vi < 0 || u.input(0) == u.input(1)) return false;
  if ((sub || div) && vi != 0) return false;  // c - y, c / y: not affine in y (or negated)
  std::vector<double> c;
  if (!per_channel(u.input(1 - vi), rank, axis, channels, &c)) return false;
  for (int64_t j = 0; j < channels; ++j) {
    if (div && !(c[j] != 0.0 && std::isfinite(1.0 / c[j]))) return false;
    if (mul) a->scale[j] = c[j];
    if (div) a->scale[j] = 1.0 / c[j];
    if (add) a->shift[j] = c[j];
    if (sub) a->shift[j] = -c[j];
  }
  return true;
}

std::vector<Node*> affine_chain(const std::set<const Value*>& outputs,
                                const std::set<std::string>& captured, Value* v, size_t rank,
                                size_t axis, int64_t channels, ChannelAffine* total) {
  *total = ChannelAffine(channels);
  std::vector<Node*> chain;
  for (;;) {
    if (v->users.size() != 1 || captured.count(v->name)) break;
    if (outputs.count(v)) break;
    Node* u = v->users[0];
    ChannelAffine a;
    if (!channel_affine_of(*u, v, rank, axis, channels, &a)) break;
    total->then(a);
    chain.push_back(u);
    v = u->outputs[0];
  }
  return chain;
}

std::shared_ptr<TensorData> f32_tensor(const std::vector<int64_t>& shape,
                                       const std::vector<float>& values) {
  auto t = std::make_shared<TensorData>();
  t->dtype = DType::F32;
  t->shape = shape;
  const uint8_t* p = reinterpret_cast<const uint8_t*>(values.data());
  t->bytes.assign(p, p + values.size() * sizeof(float));
  return t;
}

}  // namespace ferrite
