#include "bindings/engine/regex_full_match.h"

#include <re2/re2.h>

#include <utility>

#include "compiler/plan/error.h"
#include "compiler/plan/resource_limits.h"

namespace ferrite {

RegexFullMatch::RegexFullMatch(const Node& node, std::string what) : what_(std::move(what)) {
  if (!node.attrs.count("pattern")) fail(what_, ": the 'pattern' attribute is required");
  const std::string pattern = node.attr_string("pattern", "");
  RE2::Options options;  // UTF-8, RE2's own syntax
  options.set_log_errors(false);
  auto re = std::make_unique<const re2::RE2>(pattern, options);
  if (!re->ok()) fail(what_, ": invalid pattern '", pattern, "' (RE2 syntax): ", re->error());
  re_ = std::move(re);
}

RegexFullMatch::~RegexFullMatch() = default;

std::vector<EngineValue> RegexFullMatch::run(const std::vector<const EngineValue*>& inputs,
                                             int64_t memory_limit) const {
  if (inputs.empty() || !inputs[0]) fail(what_, ": missing required input 0");
  const Tensor& x = inputs[0]->tensor(str_cat(what_, ": input 0"));
  if (x.dtype() != DType::String) fail(what_, ": X must be strings, got ", tensor_type_text(x));
  check_memory_limit(x.elements(), memory_limit, what_ + ": its output");
  Tensor y(DType::Bool, x.shape());
  uint8_t* out = y.as<uint8_t>();
  const std::vector<std::string>& s = x.strings();
  for (size_t i = 0; i < s.size(); ++i) out[i] = RE2::FullMatch(s[i], *re_);
  return {EngineValue::of(std::move(y))};
}

}  // namespace ferrite
