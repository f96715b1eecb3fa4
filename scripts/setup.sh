# Shared set-up for scripts/run and scripts/test. Sourced, not executed.
# Installs what the project needs from the package registries only: Debian packages (when root),
# Python packages into a virtual environment, node packages for the JupyterLab extension.
set -euo pipefail

KLI_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PYTHON="${PYTHON:-python3}"

say() { printf '\033[1m==> %s\033[0m\n' "$*"; }

# apt packages, installed only when missing and only when we may (root).
ensure_debian_packages() {
  local missing=()
  for spec in "$@"; do
    local bin="${spec%%:*}" pkg="${spec##*:}"
    command -v "$bin" >/dev/null 2>&1 || missing+=("$pkg")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    say "installing Debian packages: ${missing[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  else
    echo "missing: ${missing[*]} — install them with your package manager (e.g. sudo apt-get install ${missing[*]})" >&2
    return 1
  fi
}

# A virtual environment at $1 with pip up to date.
ensure_venv() {
  local venv="$1"
  if [ ! -x "$venv/bin/python" ]; then
    say "creating virtual environment $venv"
    "$PYTHON" -m venv "$venv"
  fi
  pip_install "$venv" --upgrade pip setuptools wheel build
}

# pip install into $1; pip's exit status counts, its noise about absent local indexes does not.
pip_install() {
  local venv="$1"; shift
  "$venv/bin/python" -m pip install -q "$@" 2> >(grep -v '^WARNING: Location' >&2)
}

# Build the prebuilt JupyterLab extension into labextension/kli_kernel_labextension/ with
# labextension/build.sh (the one place that knows the npm steps). $1 = "check" also runs the
# extension's linters and unit tests.
build_labextension() {
  local mode="${1:-}"
  [ -f "$KLI_ROOT/labextension/package.json" ] || { say "no labextension/package.json: skipping the extension"; return 0; }
  ensure_debian_packages node:nodejs npm:npm
  say "building the JupyterLab extension"
  if [ "$mode" = check ]; then bash "$KLI_ROOT/labextension/build.sh"; else bash "$KLI_ROOT/labextension/build.sh" --fast; fi
}
