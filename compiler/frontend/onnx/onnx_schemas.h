// ONNX's operator schemas as a table: for each (domain, op, since_version) the counts and
// options of the inputs and outputs, the attributes with their types, and the type
// constraints. The data (onnx_schemas_data.cc) is generated from ONNX's operator changelog
// by scripts/gen_onnx_schemas.py; onnx_check.cc applies it to every node at import, as
// onnx.checker does. Domains the table lacks (custom ones, com.microsoft for now) are not
// checked. The table is keyed by domain, so another domain's schemas (com.microsoft, from
// onnxruntime's docs/ContribOperators.md) go into the same generator as a further source.
#pragma once

#include <climits>
#include <cstddef>
#include <cstdint>
#include <string>

namespace ferrite::onnx {

enum class ParamOption : uint8_t { Single = 0, Optional = 1, Variadic = 2 };

// The table's rows are compact (offsets into one string pool, narrow counts): it is linked
// into every build that imports ONNX, the wasm module included. Read them through the
// accessors.

// Bit n (n < 32) allows a tensor of TensorProto.DataType n; the bits above allow the
// non-tensor kinds (whose element types the importer does not track).
struct SchemaConstraint {
  uint64_t mask;
  uint16_t name_at;  // a type variable ("T") or a literal type ("tensor(int64)")
  const char* name() const;
};
constexpr uint64_t kSeqBit = 1ull << 32, kOptionalBit = 1ull << 33, kMapBit = 1ull << 34,
                   kSparseBit = 1ull << 35;
constexpr uint64_t kTensorBits = 0xffffffffull;

// A formal input or output.
struct SchemaParam {
  uint16_t name_at;
  uint8_t option;       // ParamOption
  uint8_t homogeneous;  // a variadic one's actuals all take one type
  uint16_t constraint;  // index into the constraints; actuals of one index share a type
  const char* name() const;
  ParamOption opt() const { return static_cast<ParamOption>(option); }
  const SchemaConstraint& types() const;
};

struct SchemaAttr {
  uint16_t name_at;
  uint8_t type;  // AttributeProto.AttributeType
  uint8_t required;
  const char* name() const;
};

struct OpSchema {
  uint16_t name_at;
  uint8_t domain_index, since, flags, n_inputs, n_outputs, n_attrs;
  uint16_t min_in, max_in, min_out, max_out;  // max: kUnbounded for no limit
  uint16_t first_input, first_output, first_attr;
  uint16_t output_counts;  // bit n: n outputs allowed; 0: any count in [min, max]

  static constexpr uint16_t kUnbounded = 0xffff;
  static constexpr uint8_t kDeprecated = 1, kUncheckedAttrs = 2;
  const char* name() const;
  const char* domain() const;  // "" for ai.onnx
  int64_t min_inputs() const { return min_in; }
  int64_t max_inputs() const { return max_in == kUnbounded ? INT64_MAX : max_in; }
  int64_t min_outputs() const { return min_out; }
  int64_t max_outputs() const { return max_out == kUnbounded ? INT64_MAX : max_out; }
  const SchemaParam& input(size_t i) const;
  const SchemaParam& output(size_t i) const;
  const SchemaAttr& attr(size_t i) const;
  // Any use of a deprecated schema is invalid.
  bool deprecated() const { return flags & kDeprecated; }
  // Attributes the schema does not declare are allowed (ONNX's AllowUncheckedAttributes).
  bool allows_unchecked_attrs() const { return flags & kUncheckedAttrs; }
  // The attribute named `name`; nullptr if the op has none of that name.
  const SchemaAttr* find_attr(const std::string& name) const;
  // "Add-14" (with the domain for others: "ai.onnx.ml.Scaler-1").
  std::string describe() const;
};

struct SchemaDomain {
  uint16_t name_at;
  uint16_t newest;  // the newest opset version the table holds
};

// The generated table (onnx_schemas_data.cc); use the lookups below.
namespace schema_data {
extern const char kStrings[];
extern const SchemaDomain kDomains[];
extern const size_t kDomainCount;
extern const SchemaConstraint kConstraints[];
extern const SchemaParam kParams[];
extern const SchemaAttr kAttrs[];
extern const OpSchema kSchemas[];
extern const size_t kSchemaCount;
}  // namespace schema_data

// The schema of `op` in force at opset `version` of `domain` ("" or "ai.onnx": the default):
// the one with the greatest since_version <= version; nullptr if there is none.
const OpSchema* find_schema(const std::string& domain, const std::string& op, int64_t version);
// The first version of `op` in `domain`, if any (an op used before it existed).
const OpSchema* first_schema(const std::string& domain, const std::string& op);
// The table's newest opset of `domain`; 0 if the table does not know the domain.
int64_t newest_opset(const std::string& domain);

}  // namespace ferrite::onnx
