# Shared set-up for scripts/run and scripts/test. Sourced, not executed.
# Installs what the project needs from the package registries only: Debian packages (when root),
# Python packages into a virtual environment, node packages for the JupyterLab extension.
set -euo pipefail

KLI_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PYTHON="${PYTHON:-python3}"

# say PHASE: a phase begins. Prints the time since the start and what the previous phase took,
# so a long silence is never a mystery.
_kli_started=$SECONDS
_kli_phase=""
_kli_phase_started=$SECONDS
say() {
  local now=$SECONDS
  if [ -n "$_kli_phase" ] && [ $((now - _kli_phase_started)) -gt 0 ]; then
    printf '    (%ds)\n' $((now - _kli_phase_started))
  fi
  _kli_phase="$*"
  _kli_phase_started=$now
  printf '\033[1m==> [%4ds] %s\033[0m\n' $((now - _kli_started)) "$*"
}

# apt packages, installed only when missing and only when we may (root).
ensure_debian_packages() {
  local missing=()
  for spec in "$@"; do
    local bin="${spec%%:*}" pkg="${spec##*:}"
    command -v "$bin" >/dev/null 2>&1 || missing+=("$pkg")
  done
  [ ${#missing[@]} -eq 0 ] && return 0  # present already: no apt at all
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    say "installing Debian packages: ${missing[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  else
    echo "missing: ${missing[*]} — install them with your package manager (e.g. sudo apt-get install ${missing[*]})" >&2
    return 1
  fi
}

# A virtual environment at $1 with pip and build up to date, and uv (an environment made before
# uv gets it too).
ensure_venv() {
  local venv="$1"
  if [ ! -x "$venv/bin/python" ]; then
    say "creating virtual environment $venv"
    "$PYTHON" -m venv "$venv"
    pip_install "$venv" --upgrade pip setuptools wheel build
  fi
  # uv is optional: where pip cannot get it (an index without it), py_install uses pip.
  if [ ! -x "$venv/bin/uv" ] && [ "${KLI_INSTALLER:-uv}" != pip ]; then
    pip_install "$venv" uv || echo "uv could not be installed into $venv: pip installs instead" >&2
  fi
}

# pip install into $1; pip's exit status counts, its noise about absent local indexes does not.
pip_install() {
  local venv="$1"; shift
  "$venv/bin/python" -m pip install -q "$@" 2> >(grep -v '^WARNING: Location' >&2)
}

# py_install VENV ARGS...: install Python packages into VENV (pip's arguments). With uv, the
# installer from PyPI that ensure_venv puts in each environment: it resolves like pip, and
# downloads, unpacks and compiles the bytecode in parallel (compiled as pip does: where
# PYTHONDONTWRITEBYTECODE is set, every process would compile every module it imports again),
# so the test environment's dependencies take about 20 s instead of a minute (docs/testing.md).
# uv reads PyPI and UV_* settings, not pip's configuration: where uv fails (an index only
# pip.conf names, say), pip installs, and this says so. KLI_INSTALLER=pip uses pip alone.
py_install() {
  local venv="$1"; shift
  if [ "${KLI_INSTALLER:-uv}" != pip ] && [ -x "$venv/bin/uv" ]; then
    local args=() arg
    for arg in "$@"; do
      case "$arg" in --force-reinstall) args+=(--reinstall) ;; *) args+=("$arg") ;; esac
    done
    # uv's summary (resolved, installed, compiled: counts and times) without its line a package
    if "$venv/bin/uv" pip install --compile-bytecode --python "$venv/bin/python" "${args[@]}" \
        2> >(grep -v -E '^ [-+~] ' >&2); then
      return 0
    fi
    echo "uv could not install that: pip tries (KLI_INSTALLER=pip goes to pip at once)" >&2
  fi
  pip_install "$venv" "$@"
}

# tree_hash PATH...: one SHA-256 over the names and bytes of the files under PATHs (caches,
# node_modules and build output excluded), to tell whether a build is still up to date.
tree_hash() {
  "$PYTHON" - "$@" <<'PY'
import hashlib, os, sys

SKIP_DIRS = {"__pycache__", "node_modules", ".mypy_cache", ".ruff_cache", "target"}
digest = hashlib.sha256()


def files(top):
    if os.path.isfile(top):
        yield top
        return
    for folder, dirs, names in os.walk(top):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS)
        for name in sorted(names):
            # .so: the C extension an editable install builds in place (not a source)
            if not name.endswith((".pyc", ".so", ".tsbuildinfo")):
                yield os.path.join(folder, name)


for top in sys.argv[1:]:
    for path in files(top):
        with open(path, "rb") as fh:
            digest.update(path.encode() + b"\0" + hashlib.sha256(fh.read()).digest())
print(digest.hexdigest())
PY
}

# The Debian packages kli-scan is built from: the crates of Debian's ripgrep (offline, from
# /usr/share/cargo/registry), and cargo itself when none is installed.
NATIVE_CRATES=(librust-grep-searcher-dev librust-grep-regex-dev librust-grep-matcher-dev
  librust-ignore-dev librust-globset-dev librust-memchr-dev librust-libc-dev)

# Build kli-scan (native/build.sh) unless it is built from the same sources. It is optional:
# where it cannot be built, search and ws_grep use rg, and this says so; with
# KLI_REQUIRE_NATIVE set (CI) that is an error.
build_native() {
  local stamp="$KLI_ROOT/tools/file/native/.kli-scan-hash" want
  want="$(cd "$KLI_ROOT/native" && tree_hash build.sh kli-scan/Cargo.toml kli-scan/.cargo kli-scan/src)"
  if [ -x "$KLI_ROOT/tools/file/native/kli-scan" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$want" ]; then
    say "kli-scan is up to date (its sources have not changed)"
    return 0
  fi
  local missing=() pkg
  for pkg in "${NATIVE_CRATES[@]}"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "ok installed" || missing+=("$pkg")
  done
  command -v cargo >/dev/null 2>&1 || [ -x "$HOME/.cargo/bin/cargo" ] || missing+=(cargo)
  if [ ${#missing[@]} -gt 0 ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
      say "installing Debian packages for kli-scan: ${missing[*]}"
      apt-get update -qq
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null \
        || { _native_missing "apt-get could not install ${missing[*]}"; return $?; }
    else
      _native_missing "missing: ${missing[*]} (e.g. sudo apt-get install ${missing[*]})"
      return $?
    fi
  fi
  say "building kli-scan (native/build.sh)"
  if bash "$KLI_ROOT/native/build.sh"; then
    echo "$want" > "$stamp"
  else
    _native_missing "native/build.sh failed"
  fi
}

_native_missing() {
  echo "kli-scan not built ($1): search and ws_grep use rg instead" >&2
  [ -z "${KLI_REQUIRE_NATIVE:-}" ]
}

# Build the prebuilt JupyterLab extension into labextension/kli_kernel_labextension/ with
# labextension/build.sh (the one place that knows the npm steps), unless it is built from the
# same sources. Its linters and unit tests are `labextension/build.sh --checks`.
build_labextension() {
  [ -f "$KLI_ROOT/labextension/package.json" ] || { say "no labextension/package.json: skipping the extension"; return 0; }
  local ext="$KLI_ROOT/labextension" stamp="$KLI_ROOT/labextension/kli_kernel_labextension/.kli-src-hash"
  local want
  want="$(cd "$ext" && tree_hash src style package.json package-lock.json tsconfig.json install.json)"
  if [ "$(cat "$stamp" 2>/dev/null)" = "$want" ]; then
    say "the JupyterLab extension is up to date (its sources have not changed)"
    return 0
  fi
  ensure_debian_packages node:nodejs npm:npm
  say "building the JupyterLab extension"
  bash "$ext/build.sh" --fast
  echo "$want" > "$stamp"
}

# background NAME WHAT CMD...: run CMD in the background (its output to $LOGS/NAME.log, or a
# temporary file when LOGS is not set) while the script goes on; `await NAME` collects it.
declare -A _KLI_BG_PID _KLI_BG_START _KLI_BG_LOG _KLI_BG_WHAT
background() {
  local name="$1" what="$2"; shift 2
  local log="${LOGS:-$(mktemp -d)}/$name.log"
  say "$what (in the background; its output: ${log#"$KLI_ROOT"/})"
  ( "$@" ) >"$log" 2>&1 &
  _KLI_BG_PID[$name]=$!
  _KLI_BG_START[$name]=$SECONDS
  _KLI_BG_LOG[$name]="$log"
  _KLI_BG_WHAT[$name]="$what"
}

# A script that stops (done, failed, interrupted) takes its background phases with it.
_kli_kill_tree() {
  local child
  for child in $(ps -o pid= --ppid "$1" 2>/dev/null); do _kli_kill_tree "$child"; done
  kill "$1" 2>/dev/null || true
}
_kli_stop_background() {
  local pid
  for pid in "${_KLI_BG_PID[@]}"; do _kli_kill_tree "$pid"; done
}
trap _kli_stop_background EXIT

# await NAME: wait for a background phase; print its output when it failed, or always when it
# is a test stage (`await NAME show`); its exit status is await's.
await() {
  local name="$1" show="${2:-}" rc=0
  wait "${_KLI_BG_PID[$name]}" || rc=$?
  local took=$((SECONDS - _KLI_BG_START[$name]))
  if [ "$rc" -ne 0 ] || [ -n "$show" ]; then
    printf '\033[1m==> [%4ds] %s: its output\033[0m\n' $((SECONDS - _kli_started)) "${_KLI_BG_WHAT[$name]}"
    cat "${_KLI_BG_LOG[$name]}"
  fi
  printf '\033[1m==> [%4ds] %s: %s after %ds\033[0m\n' $((SECONDS - _kli_started)) \
    "${_KLI_BG_WHAT[$name]}" "$([ "$rc" -eq 0 ] && echo done || echo "FAILED (exit $rc)")" "$took"
  return "$rc"
}

# install_dependencies VENV EXTRAS [PIN...]: the project's dependencies with those extras (read
# from pyproject.toml, comma-separated extras) and the pins, not the project itself; skipped when
# neither pyproject.toml nor the pins changed since the last install into VENV.
install_dependencies() {
  local venv="$1" extras="$2"; shift 2
  local stamp="$venv/.kli-deps-hash" want
  want="$( { cat "$KLI_ROOT/pyproject.toml"; echo "$extras" "$@"; } | sha256sum | cut -d' ' -f1)"
  if [ "$(cat "$stamp" 2>/dev/null)" = "$want" ]; then
    echo "the dependencies in $venv are up to date"
    return 0
  fi
  local deps=()
  mapfile -t deps < <("$venv/bin/python" - "$KLI_ROOT/pyproject.toml" "$extras" <<'PY'
import sys, tomllib
project = tomllib.load(open(sys.argv[1], "rb"))["project"]
print("\n".join(project["dependencies"]))
for extra in filter(None, sys.argv[2].split(",")):
    print("\n".join(project["optional-dependencies"][extra]))
PY
  )
  echo "installing ${#deps[@]} requirements of [$extras] $*"
  py_install "$venv" "${deps[@]}" "$@"
  echo "$want" > "$stamp"
}

# junit_totals XML...: one closing line over every stage's JUnit report.
junit_totals() {
  "$PYTHON" - "$@" <<'PY'
import sys
import xml.etree.ElementTree as ET

passed = failed = skipped = 0  # by each test case's own record (a suite's counts add reports)
for path in sys.argv[1:]:
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError):
        continue
    for case in root.iter("testcase"):
        tags = {child.tag for child in case}
        if tags & {"failure", "error"}:
            failed += 1
        elif "skipped" in tags:
            skipped += 1
        else:
            passed += 1
if passed + failed + skipped:
    print(f"tests: {passed} passed, {failed} failed, {skipped} skipped")
PY
}
