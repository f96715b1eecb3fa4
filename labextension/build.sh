#!/usr/bin/env bash
# Build and check the JupyterLab extension from the npm registry only (no GitHub, no Python):
# install the locked dependencies, lint, unit-test, and build the prebuilt extension into
# kli_kernel_labextension/ (which setup.py ships in the wheel as
# share/jupyter/labextensions/kli-kernel).
#   labextension/build.sh            everything
#   labextension/build.sh --fast     build only (no lint, no tests)
#   labextension/build.sh --checks   lint and unit tests only (scripts/test runs them beside
#                                    pytest, once the build is done)
# `npm ci` runs only when node_modules was not installed from this very package-lock.json (and
# Node.js version): a re-run reuses it.
set -euo pipefail
cd "$(dirname "$0")"
stamp=node_modules/.kli-lock-hash
want="$(node -e 'const c = require("crypto"), fs = require("fs");
  process.stdout.write(c.createHash("sha256").update(fs.readFileSync("package-lock.json"))
    .update(process.version).digest("hex"))')"
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  npm ci --no-audit --no-fund --loglevel=error
  echo "$want" > "$stamp"
fi
if [ "${1:-}" != "--fast" ]; then
  npm run --silent lint:check
  npm test --silent
fi
[ "${1:-}" = "--checks" ] || npm run --silent build
