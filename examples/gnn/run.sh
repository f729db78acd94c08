#!/usr/bin/env bash
# The GNN example (examples/gnn/README.md): installs what is missing (scripts/setup.sh
# brings PyTorch), builds the CLI, and runs a GCN and a GraphSAGE on Ferrite and PyTorch.
set -euo pipefail
cd "$(dirname "$0")/../.."

bash scripts/setup.sh
bash scripts/build.sh native ferrite
exec /usr/bin/python3 examples/gnn/gnn.py "$@"
