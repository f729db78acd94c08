// The generated schema table (compiler/frontend/onnx/onnx_schemas_data.cc, from ONNX's
// operator changelog by scripts/gen_onnx_schemas.py): every version of every op up to
// opset 28, looked up as ONNX's registry does (the newest since_version <= the opset), with
// the facts the changelog omits taken from ONNX's definitions.
#include <gtest/gtest.h>

#include "compiler/frontend/onnx/onnx_schemas.h"

namespace ferrite::onnx {
namespace {

TEST(OnnxSchemas, EveryVersionUpToOpset28) {
  EXPECT_EQ(newest_opset(""), 28);
  EXPECT_EQ(newest_opset("ai.onnx"), 28);
  EXPECT_EQ(newest_opset("ai.onnx.ml"), 5);
  EXPECT_EQ(newest_opset("com.microsoft"), 0);  // not in the table (yet)
  EXPECT_EQ(find_schema("", "Clip", 5)->since, 1);
  EXPECT_EQ(find_schema("", "Clip", 10)->since, 6);
  EXPECT_EQ(find_schema("", "Clip", 12)->since, 12);
  EXPECT_EQ(find_schema("", "Reshape", 28)->describe(), "Reshape-25");
  EXPECT_EQ(find_schema("", "Gelu", 19), nullptr);
  EXPECT_EQ(first_schema("", "Gelu")->since, 20);
  EXPECT_EQ(find_schema("", "NoSuchOp", 13), nullptr);
  EXPECT_EQ(find_schema("ai.onnx.ml", "Scaler", 3)->describe(), "ai.onnx.ml.Scaler-1");
}

TEST(OnnxSchemas, ParametersAttributesAndConstraints) {
  const OpSchema& clip = *find_schema("ai.onnx", "Clip", 13);
  EXPECT_EQ(clip.min_inputs(), 1);
  EXPECT_EQ(clip.max_inputs(), 3);
  ASSERT_EQ(clip.n_inputs, 3);
  EXPECT_STREQ(clip.input(1).name(), "min");
  EXPECT_EQ(clip.input(1).opt(), ParamOption::Optional);
  EXPECT_EQ(clip.input(0).constraint, clip.input(2).constraint);  // all of type T
  EXPECT_STREQ(clip.input(0).types().name(), "T");
  EXPECT_TRUE(clip.input(0).types().mask >> 7 & 1);   // int64
  EXPECT_FALSE(clip.input(0).types().mask >> 9 & 1);  // bool
  const OpSchema& concat = *find_schema("", "Concat", 13);
  EXPECT_EQ(concat.max_inputs(), INT64_MAX);
  EXPECT_EQ(concat.input(0).opt(), ParamOption::Variadic);
  ASSERT_NE(concat.find_attr("axis"), nullptr);
  EXPECT_EQ(concat.find_attr("axis")->type, 2);  // INT
  EXPECT_TRUE(concat.find_attr("axis")->required);
  EXPECT_EQ(concat.find_attr("perm"), nullptr);
  const OpSchema& loop = *find_schema("", "Loop", 21);
  EXPECT_FALSE(loop.input(2).homogeneous);  // v_initial: variadic, heterogeneous
  EXPECT_STREQ(find_schema("", "Reshape", 13)->input(1).types().name(), "tensor(int64)");
  EXPECT_EQ(find_schema("", "Reshape", 13)->input(1).types().mask, 1u << 7);
  EXPECT_TRUE(find_schema("", "SequenceAt", 11)->input(0).types().mask & kSeqBit);
}

TEST(OnnxSchemas, FactsFromTheDefinitions) {
  EXPECT_TRUE(find_schema("", "Upsample", 10)->deprecated());
  EXPECT_FALSE(find_schema("", "Upsample", 9)->deprecated());
  EXPECT_TRUE(find_schema("", "LayerNormalization", 17)->allows_unchecked_attrs());
  EXPECT_FALSE(find_schema("", "Relu", 14)->allows_unchecked_attrs());
  EXPECT_EQ(find_schema("", "BatchNormalization", 15)->output_counts, (1u << 1) | (1u << 3));
  EXPECT_EQ(find_schema("", "Relu", 14)->output_counts, 0u);
}

}  // namespace
}  // namespace ferrite::onnx
