"""A real JupyterLab with the kli kernel and the kli-kernel extension, driven by real Chromium.

What the tests expect:
- ``/usr/bin/chromium`` (Debian's ``chromium``; override with ``KLI_CHROMIUM``) and the Python
  ``playwright`` package (no browser download: Playwright drives the system Chromium).
- The extension built: either installed (``share/jupyter/labextensions/kli-kernel`` in this
  Python's prefix, as the wheel installs it; scripts/test sets ``KLI_TEST_INSTALLED_WHEEL=1``)
  or built in the checkout (``cd labextension && npm ci && npm run build``), which the fixture
  then links into a temporary ``JUPYTER_PATH`` with a ``kli`` kernelspec that runs this Python.
When one is missing the tests skip, or fail when ``KLI_REQUIRE_BROWSER=1`` (CI).

The server runs with its own temporary config, data, runtime, settings and workspace folders,
bound to 127.0.0.1 on a free port without a token; screenshots go to tests/artifacts/.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn

import pytest

from tests.jupyter_server import JupyterServer, folders, jupyter_dirs, launch, serve
from tests.kernelspec import write_kli_kernelspec
from tests.ports import free_port

REPO = Path(__file__).resolve().parents[2]
ARTIFACTS = REPO / "tests" / "artifacts"
BUILD_OUTPUT = REPO / "labextension" / "kli_kernel_labextension"
EXTENSION_NAME = "kli-kernel"
CHROMIUM = os.environ.get("KLI_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
SERVER_START_TIMEOUT = 90.0
KERNEL_START_TIMEOUT = 120.0
# Milliseconds Playwright waits for an element (a kernel start plus a first render).
UI_TIMEOUT_MS = 30_000


def _unavailable(reason: str) -> None:
    if os.environ.get("KLI_REQUIRE_BROWSER"):
        pytest.fail(f"browser tests required but {reason}")
    pytest.skip(reason)


def _installed_extension() -> Path | None:
    path = Path(sys.prefix) / "share" / "jupyter" / "labextensions" / EXTENSION_NAME
    return path if (path / "package.json").is_file() else None


@dataclass
class LabServer(JupyterServer):
    """JupyterLab (its notebooks, sessions and connection files: tests/jupyter_server.py)."""

    api_timeout = 10.0


def _settings(settings_dir: Path) -> None:
    """No news or update checks (no network, no toasts in screenshots)."""
    target = settings_dir / "@jupyterlab" / "apputils-extension"
    target.mkdir(parents=True, exist_ok=True)
    (target / "notification.jupyterlab-settings").write_text(
        json.dumps({"fetchNews": "false", "checkForUpdates": False})
    )


class LabUnavailable(Exception):
    """Something the server needs is missing (not an error of the code under test)."""


class LabFailed(Exception):
    """JupyterLab did not start."""


def _lab_failed(exit_code: int | None, log_tail: str) -> NoReturn:
    if exit_code is not None:
        raise LabFailed(f"JupyterLab exited ({exit_code}):\n{log_tail}")
    raise LabFailed(f"JupyterLab did not start:\n{log_tail}")


@contextlib.contextmanager
def start_lab_server(base: Path) -> Iterator[LabServer]:
    """A JupyterLab with the kli kernel and the extension, in folders under ``base``.

    Uses the installed extension when KLI_TEST_INSTALLED_WHEEL is set and one is installed,
    else the checkout's build with a kernelspec running this Python. Stops the server (and its
    kernels) on exit.
    """
    try:
        import jupyterlab  # noqa: F401
    except ImportError as err:
        raise LabUnavailable("jupyterlab is not installed") from err
    root, runtime, share = folders(base)
    env = dict(os.environ)
    env.update(
        jupyter_dirs(base, runtime),
        JUPYTERLAB_SETTINGS_DIR=str(base / "settings"),
        JUPYTERLAB_WORKSPACES_DIR=str(base / "workspaces"),
    )
    _settings(base / "settings")
    if not (os.environ.get("KLI_TEST_INSTALLED_WHEEL") and _installed_extension()):
        # The checkout's build and a kernelspec running this very Python, ahead of anything
        # installed (JUPYTER_PATH comes first in Jupyter's search path).
        if not (BUILD_OUTPUT / "package.json").is_file():
            raise LabUnavailable(f"the extension is not built ({BUILD_OUTPUT}); run npm run build")
        (share / "labextensions").mkdir()
        (share / "labextensions" / EXTENSION_NAME).symlink_to(BUILD_OUTPUT)
        write_kli_kernelspec(share)
        env["JUPYTER_PATH"] = str(share)
    port = free_port()
    log = base / "server.log"
    proc = launch(
        "jupyterlab", port, root,
        "--LabApp.expose_app_in_browser=True", "--JupyterNotebookApp.expose_app_in_browser=True",
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
        env=env, log=log,
    )
    server = LabServer(f"http://127.0.0.1:{port}", root, proc, log)
    with serve(server, SERVER_START_TIMEOUT, fail=_lab_failed):
        specs = server.api("GET", "/api/kernelspecs")["kernelspecs"]
        if "kli" not in specs:
            raise LabUnavailable("the kli kernelspec is not installed")
        yield server


@pytest.fixture(scope="session")
def lab_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LabServer]:
    try:
        with start_lab_server(tmp_path_factory.mktemp("lab")) as server:
            yield server
    except LabUnavailable as why:
        _unavailable(str(why))
    except LabFailed as why:
        pytest.fail(str(why))


# Module scope, not session: Playwright's sync API keeps an asyncio loop marked as running in
# the main thread while it is started, so a session-long browser breaks every later test that
# calls asyncio.run (the MCP SDK's client in tests/mcp and tests/gateway).
@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _unavailable("the playwright Python package is not installed")
    if not os.path.isfile(CHROMIUM):
        _unavailable(f"{CHROMIUM} is missing (apt-get install chromium)")
    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        try:
            yield b
        finally:
            b.close()


@dataclass
class Console:
    """Errors the page logged (console.error and uncaught exceptions)."""

    errors: list[str] = field(default_factory=list)

    def ours(self) -> list[str]:
        """Errors other than the browser's network noise (favicon, blocked fetches) and
        JupyterLab's own debugger complaint when a kernel restarts under it."""
        noise = ("favicon", "net::ERR_", "Could not restore the debugger state",
                 "Canceled future for debug_request")
        return [e for e in self.errors if not any(n in e for n in noise)]


@pytest.fixture
def page(browser: Any, lab_server: LabServer, request: pytest.FixtureRequest) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1500, "height": 950})
    context.set_default_timeout(UI_TIMEOUT_MS)
    pg = context.new_page()
    console = Console()
    pg.on("console", lambda m: console.errors.append(m.text) if m.type == "error" else None)
    pg.on("pageerror", lambda e: console.errors.append(f"pageerror: {e} {e.stack or ''}"))
    pg.kli_console = console
    try:
        yield pg
    finally:
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        rep = getattr(request.node, "rep_call", None)
        if rep is not None and rep.failed:
            pg.screenshot(path=str(ARTIFACTS / f"{request.node.name}-failed.png"))
        context.close()
        lab_server.close_sessions()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    rep = yield
    if rep.when == "call":
        item.rep_call = rep  # type: ignore[attr-defined]
    return rep


# JavaScript run in the page. window.jupyterapp exists because of expose_app_in_browser.
_RUN_CELL_JS = """
async (source) => {
  const app = window.jupyterapp;
  const nb = app.shell.currentWidget.content;
  let index = nb.widgets.findIndex(c => c.model.sharedModel.getSource() === '');
  if (index < 0) {
    nb.activeCellIndex = nb.widgets.length - 1;
    await app.commands.execute('notebook:insert-cell-below');
    index = nb.activeCellIndex;
  }
  nb.activeCellIndex = index;
  nb.activeCell.model.sharedModel.setSource(source);
  await app.commands.execute('notebook:run-cell');
  return [app.shell.currentWidget.id, index];
}
"""

_KERNEL_IDLE_JS = """
() => {
  const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;
  const k = w && w.sessionContext && w.sessionContext.session && w.sessionContext.session.kernel;
  return !!k && k.status === 'idle' && k.connectionStatus === 'connected';
}
"""


class Lab:
    """Drives one notebook in the page: open it, run cells, find outputs, take screenshots."""

    def __init__(self, page: Any, server: LabServer) -> None:
        self.page = page
        self.server = server
        self.notebook = ""

    def open(self, name: str, cells: list[str] | None = None, *, ui: str = "lab") -> None:
        """Open a new notebook ``name`` in JupyterLab (``ui="lab"``) or Notebook 7 (``"notebook"``)."""
        self.notebook = self.server.new_notebook(name, cells)
        # ?reset: a fresh workspace, not the previous test's open notebooks.
        url = f"/lab/tree/{name}?reset" if ui == "lab" else f"/notebooks/{name}"
        self.page.goto(self.server.url + url)
        self.page.wait_for_selector(".jp-Notebook .jp-Cell", state="visible")
        self.wait_idle()

    def wait_idle(self) -> None:
        """Wait until the current notebook's kernel is connected and idle."""
        deadline = time.monotonic() + KERNEL_START_TIMEOUT
        while not self.page.evaluate(_KERNEL_IDLE_JS):
            if time.monotonic() > deadline:
                raise AssertionError(f"the kernel of {self.notebook} did not become idle")
            self.page.wait_for_timeout(100)

    def connection_file(self) -> Path:
        """The connection file of the open notebook's kernel."""
        return self.server.connection_file(self.server.kernel_id(self.notebook))

    def run(self, source: str) -> Any:
        """Run ``source`` in the notebook's first empty cell (or a new one); its locator."""
        panel_id, index = self.page.evaluate(_RUN_CELL_JS, source)
        return self.page.locator(f"[id='{panel_id}'] .jp-Notebook .jp-Cell").nth(index)

    def command(self, command: str, args: dict[str, Any] | None = None) -> Any:
        return self.page.evaluate(
            "([c, a]) => window.jupyterapp.commands.execute(c, a)", [command, args or {}]
        )

    def activity_panel(self, width: int | None = None) -> Any:
        """Show the kli activity panel (its command), the right sidebar widened to ``width``
        pixels when given; the panel's locator."""
        self.command("kli-kernel:show-activity")
        if width is not None:
            self.widen_right_sidebar(width)
        return self.page.locator("#kli-activity")

    def widen_right_sidebar(self, pixels: int) -> None:
        """Drag the handle between the main area and the right sidebar to the left."""
        handles = self.page.locator("#jp-main-split-panel > .lm-SplitPanel-handle:visible")
        box = handles.last.bounding_box()
        if box is None:
            return
        x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
        self.page.mouse.move(x, y)
        self.page.mouse.down()
        self.page.mouse.move(x - pixels, y, steps=5)
        self.page.mouse.up()

    def screenshot(self, name: str, locator: Any = None) -> Path:
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        path = ARTIFACTS / f"{name}.png"
        (locator or self.page).screenshot(path=str(path))
        return path

    def console_errors(self) -> list[str]:
        return self.page.kli_console.ours()


@pytest.fixture
def lab(page: Any, lab_server: LabServer) -> Lab:
    return Lab(page, lab_server)
