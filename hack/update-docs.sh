#!/usr/bin/env bash
# Rewrites the book's generated references (docs/src/reference/): the marker reference from
# codegen-core's marker tables, the CLI reference from every command's --help, the fake's
# fidelity table from the contract suite's cases. hack/verify-codegen.sh checks them.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

UPDATE_GOLDEN=1 cargo test --quiet -p kube-codegen --test reference
