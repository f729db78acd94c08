// Lookups in the generated schema table (sorted by domain, name, since_version).
#include "compiler/frontend/onnx/onnx_schemas.h"

#include <algorithm>
#include <cstring>
#include <utility>

namespace ferrite::onnx {

using namespace schema_data;

namespace {

std::string canonical_domain(const std::string& domain) {
  return domain == "ai.onnx" ? "" : domain;
}

// Orders schemas by (domain, name) only: equal_range gives the versions of one op.
struct ByOp {
  using Key = std::pair<const char*, const char*>;
  static int compare(const OpSchema& s, const Key& k) {
    int c = std::strcmp(s.domain(), k.first);
    return c ? c : std::strcmp(s.name(), k.second);
  }
  bool operator()(const OpSchema& s, const Key& k) const { return compare(s, k) < 0; }
  bool operator()(const Key& k, const OpSchema& s) const { return compare(s, k) > 0; }
};

std::pair<const OpSchema*, const OpSchema*> versions(const std::string& domain,
                                                     const std::string& op) {
  std::string d = canonical_domain(domain);
  return std::equal_range(kSchemas, kSchemas + kSchemaCount, ByOp::Key(d.c_str(), op.c_str()),
                          ByOp());
}

}  // namespace

const char* SchemaConstraint::name() const {
  return kStrings + name_at;
}
const char* SchemaParam::name() const {
  return kStrings + name_at;
}
const SchemaConstraint& SchemaParam::types() const {
  return kConstraints[constraint];
}
const char* SchemaAttr::name() const {
  return kStrings + name_at;
}
const char* OpSchema::name() const {
  return kStrings + name_at;
}
const char* OpSchema::domain() const {
  return kStrings + kDomains[domain_index].name_at;
}
const SchemaParam& OpSchema::input(size_t i) const {
  return kParams[first_input + i];
}
const SchemaParam& OpSchema::output(size_t i) const {
  return kParams[first_output + i];
}
const SchemaAttr& OpSchema::attr(size_t i) const {
  return kAttrs[first_attr + i];
}

const SchemaAttr* OpSchema::find_attr(const std::string& attr_name) const {
  for (size_t i = 0; i < n_attrs; ++i) {
    if (attr_name == attr(i).name()) return &attr(i);
  }
  return nullptr;
}

std::string OpSchema::describe() const {
  std::string d = *domain() ? std::string(domain()) + "." : std::string();
  return d + name() + "-" + std::to_string(since);
}

const OpSchema* find_schema(const std::string& domain, const std::string& op, int64_t version) {
  auto range = versions(domain, op);
  const OpSchema* found = nullptr;
  for (const OpSchema* s = range.first; s != range.second && s->since <= version; ++s) found = s;
  return found;
}

const OpSchema* first_schema(const std::string& domain, const std::string& op) {
  auto range = versions(domain, op);
  return range.first != range.second ? range.first : nullptr;
}

int64_t newest_opset(const std::string& domain) {
  std::string d = canonical_domain(domain);
  for (size_t i = 0; i < kDomainCount; ++i) {
    if (d == kStrings + kDomains[i].name_at) return kDomains[i].newest;
  }
  return 0;
}

}  // namespace ferrite::onnx
