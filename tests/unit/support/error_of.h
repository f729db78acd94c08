// The message of the ferrite::Error a callable throws, for tests that assert on errors.
#pragma once

#include <functional>
#include <string>

#include "compiler/plan/error.h"

namespace ferrite::test {

// The message of the ferrite::Error `f` throws ("(no error)" if none).
inline std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace ferrite::test
