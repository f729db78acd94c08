// The graph passes, in order (passes.cc is the list). Each pass is one function in its own
// file; after each, the graph is validated and, with FERRITE_DUMP, written out.
#pragma once

#include <string>

#include "compiler/graph/graph.h"

namespace ferrite {

// `fuse` false skips the fusing passes (conv affine folding, extern epilogues).
// `channels_last`: the backend's convolutions prefer channels-last activations
// (choose_conv_layout.h).
void run_graph_passes(Graph& g, const std::string& dump_dir, bool fuse = true,
                      bool channels_last = false);

}  // namespace ferrite
