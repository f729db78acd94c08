// The graph pass pipeline, top to bottom. Add a pass here, in its own file.
#include "compiler/passes/passes.h"

#include <functional>
#include <utility>

#include "compiler/dump.h"
#include "compiler/passes/eliminate_dead_nodes.h"
#include "compiler/passes/remove_identities.h"
#include "compiler/plan/error.h"

namespace ferrite {

void run_graph_passes(Graph& g, const std::string& dump_dir) {
  const std::pair<const char*, std::function<void(Graph&)>> passes[] = {
      {"eliminate_dead_nodes", eliminate_dead_nodes},
      {"remove_identities", remove_identities},
  };
  dump_text(dump_dir, "00_imported.txt", graph_to_string(g));
  int step = 1;
  for (const auto& [name, pass] : passes) {
    pass(g);
    g.validate();
    dump_text(dump_dir, str_cat(step < 10 ? "0" : "", step, "_", name, ".txt"), graph_to_string(g));
    ++step;
  }
}

}  // namespace ferrite
