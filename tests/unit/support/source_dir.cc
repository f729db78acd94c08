#include "tests/unit/support/source_dir.h"

namespace ferrite::test {

const std::string& source_dir() {
  static const std::string dir = FERRITE_SOURCE_DIR;
  return dir;
}

}  // namespace ferrite::test
