// What the ai.onnx.ml lowerings share (ml_ops.cc: trees; ml_linear_ops.cc: scalers and linear
// models): constant tables, float attributes, the samples input, post_transform.
#pragma once

#include <string>
#include <vector>

#include "compiler/lower/lowering.h"

namespace ferrite {
namespace ml {

// A constant 1-D table of int64 (or, `f64`, float64) values named `n`.
TensorBoxPtr table(GraphLowering& gl, const std::vector<double>& v, bool f64, const std::string& n);
std::vector<double> doubles(const std::vector<int64_t>& v);
// A float attribute given as floats or as a tensor; empty when absent.
std::vector<double> float_values(const LowerCtx& c, const std::string& key);
// post_transform ("NONE", "LOGISTIC", "SOFTMAX") over the last axis of z (float64, 2-D);
// another is UnsupportedError.
TensorBoxPtr post_transformed(const LowerCtx& c, TensorBoxPtr z, const std::string& post);
TensorBoxPtr cast_to(const LowerCtx& c, const TensorBoxPtr& z, DType out);
// labels[the first class with the largest score] per sample: score [N, classes], labels an
// int64 table of the classes; int64 [N].
TensorBoxPtr first_best_label(LowerCtx& c, const TensorBoxPtr& score, const TensorBoxPtr& labels);
// Input 0 as [samples, features] of float, double, int64 or int32; UnsupportedError else.
const TensorBoxPtr& samples(const LowerCtx& c);

}  // namespace ml

// Scaler, Normalizer, Imputer, LinearRegressor, LinearClassifier (ml_linear_ops.cc);
// register_ml_ops calls it.
void register_ml_linear_ops(LoweringTable& t);
// SVMRegressor, SVMClassifier (ml_svm_ops.cc); register_ml_ops calls it.
void register_ml_svm_ops(LoweringTable& t);

}  // namespace ferrite
