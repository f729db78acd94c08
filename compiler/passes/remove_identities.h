// Forwards the input of Identity nodes (and Dropout in inference, whose output 0 is its
// input) to their users, so later stages never see them. Graph outputs keep their names.
#pragma once

#include "compiler/graph/graph.h"

namespace ferrite {

void remove_identities(Graph& g);

}  // namespace ferrite
