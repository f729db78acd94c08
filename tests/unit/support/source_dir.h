// Where the unit tests find the repository's files (fixtures, example models). One
// translation unit holds the path, so that the others compile the same in any clone and
// ccache reuses them.
#pragma once

#include <string>

namespace ferrite::test {

// The source directory, with no trailing slash.
const std::string& source_dir();

}  // namespace ferrite::test
