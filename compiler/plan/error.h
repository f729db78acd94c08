// Errors are values at every boundary (Session, CLI, C API): inside the library a
// problem is raised as ferrite::Error with a message that names the node, op or input,
// and the boundary catches it. Nothing in the library aborts the host process.
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>

namespace ferrite {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

// An op, attribute value or dtype that Ferrite does not implement (yet). The conformance
// runner counts these cases as skipped rather than failed.
class UnsupportedError : public Error {
 public:
  explicit UnsupportedError(const std::string& message) : Error(message) {}
};

// A compile-time constant was needed (a shape, axes, pads, ...) but the value comes from a
// model input. Compiling again with that input's value (compile_graph's input_values)
// specializes the plan on it.
class NeedsInputValueError : public UnsupportedError {
 public:
  explicit NeedsInputValueError(const std::string& message) : UnsupportedError(message) {}
};

template <class... Args>
std::string str_cat(Args&&... args) {
  std::ostringstream os;
  (os << ... << std::forward<Args>(args));
  return os.str();
}

template <class... Args>
[[noreturn]] void fail(Args&&... args) {
  throw Error(str_cat(std::forward<Args>(args)...));
}

}  // namespace ferrite
