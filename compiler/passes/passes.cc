// The graph pass pipeline, top to bottom. Add a pass here, in its own file.
#include "compiler/passes/passes.h"

#include <functional>
#include <utility>

#include "compiler/dump.h"
#include "compiler/passes/choose_conv_layout.h"
#include "compiler/passes/eliminate_dead_nodes.h"
#include "compiler/passes/fold_conv_affine.h"
#include "compiler/passes/fold_matmul_affine.h"
#include "compiler/passes/fold_qdq_pairs.h"
#include "compiler/passes/fuse_attention.h"
#include "compiler/passes/fuse_block_weights.h"
#include "compiler/passes/fuse_extern_epilogues.h"
#include "compiler/passes/fuse_message_passing.h"
#include "compiler/passes/fuse_qdq.h"
#include "compiler/passes/remove_identities.h"
#include "compiler/plan/error.h"
#include "compiler/plan/stage_times.h"

namespace ferrite {

void run_graph_passes(Graph& g, const std::string& dump_dir, bool fuse, bool channels_last) {
  struct Pass {
    const char* name;
    std::function<void(Graph&)> run;
    bool fusing;
  };
  const Pass passes[] = {
      {"eliminate_dead_nodes", eliminate_dead_nodes, false},
      {"remove_identities", remove_identities, false},
      {"fuse_qdq", fuse_qdq, true},
      {"fold_qdq_pairs", fold_qdq_pairs, true},
      {"fuse_block_weights", fuse_block_weights, true},
      {"fold_conv_affine", fold_conv_affine, true},
      {"fold_matmul_affine", fold_matmul_affine, true},
      {"fuse_attention", fuse_attention, true},
      {"fuse_message_passing", fuse_message_passing, true},
      {"fuse_extern_epilogues", fuse_extern_epilogues, true},
      {"choose_conv_layout", [channels_last](Graph& h) { choose_conv_layout(h, channels_last); },
       false},
  };
  StageTimer timer("passes");
  // The listings only when they are written: printing a graph costs as much as a pass.
  const bool dump = !dump_dir.empty();
  if (dump) dump_text(dump_dir, "00_imported.txt", graph_to_string(g));
  int step = 1;
  for (const auto& [name, pass, fusing] : passes) {
    if (fusing && !fuse) continue;
    const std::string stage = str_cat("pass/", name);
    {
      StageTimer timer(stage.c_str());
      pass(g);
    }
    {
      StageTimer timer("pass/validate");
      g.validate();
    }
    if (dump) {
      dump_text(dump_dir, str_cat(step < 10 ? "0" : "", step, "_", name, ".txt"),
                graph_to_string(g));
    }
    ++step;
  }
}

}  // namespace ferrite
