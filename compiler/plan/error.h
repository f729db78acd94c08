// Errors are values at every boundary (Session, CLI, C API): inside the library a
// problem is raised as ferrite::Error with a message that names the node, op or input,
// and the boundary catches it. Nothing in the library aborts the host process. Messages
// are escaped as they are made (printable), so no door echoes a model's control bytes.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

namespace ferrite {

// `text` safe to print on a terminal or a log line: control characters (C0, DEL, C1, the
// Unicode line separators and bidirectional overrides) become escapes (\n, \r, \t, \x1b,
// \u009b, \u202e) and so does each byte that is not part of valid UTF-8 (\xff); the rest,
// other scripts included, is kept. Idempotent (a backslash stays as it is), so a message
// quoting another message is escaped once.
std::string printable(std::string_view text);

// Every message is printable(): it quotes names from models and plans (nodes, inputs,
// files), which are untrusted bytes, and every door shows it as one line.
class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(printable(message)) {}
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

// A node whose work no plan for these input shapes can hold, but which can run on its own
// at run time: an If whose branches cannot both be compiled for the shapes, a Loop whose
// trip count is computed at run time or past the unrolling budget, an op that needs at
// compile time a value computed at run time. The engine cuts the model at the top-level
// node holding it (bindings/engine/engine_parts.cc), which GraphLowering names by its
// first output (`node_output`, empty until it does).
class NeedsCutError : public UnsupportedError {
 public:
  explicit NeedsCutError(const std::string& message) : UnsupportedError(message) {}
  std::string node_output;
};

namespace detail {
// The pieces of str_cat, out of line (error.cc), so that each of its many instantiations
// is a few calls and no iostreams are linked in (they cost a wasm build ~200 KB).
void append_signed(std::string* s, long long v);
void append_unsigned(std::string* s, unsigned long long v);
void append_double(std::string* s, double v);  // as an ostream prints it: "%g"

template <class T>
void append(std::string* s, const T& v) {
  using U = std::decay_t<T>;
  if constexpr (std::is_same_v<U, char>) {
    s->push_back(v);
  } else if constexpr (std::is_same_v<U, bool>) {
    s->push_back(v ? '1' : '0');
  } else if constexpr (std::is_enum_v<U>) {
    // An enum prints as its name (op_name, extern_op_name, ...) or a cast number; a uint8_t
    // one would otherwise come out as a character.
    static_assert(!std::is_enum_v<U>, "str_cat: pass an enum's name, or cast it to int");
  } else if constexpr (std::is_same_v<U, signed char> || std::is_same_v<U, unsigned char>) {
    s->push_back(static_cast<char>(v));  // what an ostream does with them
  } else if constexpr (std::is_integral_v<U> && std::is_signed_v<U>) {
    append_signed(s, v);
  } else if constexpr (std::is_integral_v<U>) {
    append_unsigned(s, v);
  } else if constexpr (std::is_floating_point_v<U>) {
    append_double(s, static_cast<double>(v));
  } else {
    static_assert(std::is_convertible_v<const T&, std::string_view>,
                  "str_cat takes strings, characters and numbers");
    s->append(std::string_view(v));
  }
}
}  // namespace detail

// Concatenates strings, characters and numbers (printed as an ostream prints them).
template <class... Args>
std::string str_cat(const Args&... args) {
  std::string s;
  (detail::append(&s, args), ...);
  return s;
}

template <class... Args>
[[noreturn]] void fail(const Args&... args) {
  throw Error(str_cat(args...));
}

}  // namespace ferrite
