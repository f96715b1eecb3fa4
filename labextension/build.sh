#!/usr/bin/env bash
# Build and check the JupyterLab extension from the npm registry only (no GitHub, no Python):
# install the locked dependencies, lint, unit-test, and build the prebuilt extension into
# kli_kernel_labextension/ (which setup.py ships in the wheel as
# share/jupyter/labextensions/kli-kernel).
#   labextension/build.sh          everything
#   labextension/build.sh --fast   build only (no lint, no tests)
set -euo pipefail
cd "$(dirname "$0")"
npm ci --no-audit --no-fund --loglevel=error
if [ "${1:-}" != "--fast" ]; then
  npm run --silent lint:check
  npm test --silent
fi
npm run --silent build
