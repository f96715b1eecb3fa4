"""Path attacks on the file tools of both profiles: each is refused (or stays inside the root)
with nothing read from or written outside the root, and nothing written under ``.kli/``.

The tree: ``base/root`` is the workspace, ``base/outside`` holds a secret file and another
file whose name must never appear in a listing.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from kli.tools import Workspace

SECRET = "S3CR3T-CONTENT"
HIDDEN_NAME = "also_here_outside.txt"
PWNED = "PWNED-BY-ATTACK"


def snapshot(top: Path) -> dict[str, bytes | str]:
    """Every entry under ``top``: file bytes, symlink targets, directory marks."""
    out: dict[str, bytes | str] = {}
    for dirpath, dirnames, filenames in os.walk(top, followlinks=False):
        for name in dirnames + filenames:
            p = os.path.join(dirpath, name)
            rel = os.path.relpath(p, top)
            if os.path.islink(p):
                out[rel] = "link:" + os.readlink(p)
            elif os.path.isdir(p):
                out[rel] = "dir"
            else:
                with open(p, "rb") as fh:
                    out[rel] = fh.read()
    return out


@pytest.fixture
def tree(tmp_path: Path) -> dict[str, Path]:
    base = tmp_path
    root = base / "root"
    outside = base / "outside"
    root.mkdir()
    outside.mkdir()
    (outside / "outside_secret.txt").write_text(SECRET + "\n")
    (outside / HIDDEN_NAME).write_text("x\n")
    (root / "sub").mkdir()
    (root / "inside.txt").write_text("inside\n")
    (root / ".kli").mkdir()
    (root / ".kli" / "settings.json").write_text("{}\n")
    os.symlink(outside / "outside_secret.txt", root / "link_file")
    os.symlink(outside, root / "link_dir")
    os.symlink(root / "chain2", root / "chain1")
    os.symlink(outside / "outside_secret.txt", root / "chain2")
    os.symlink("../../outside/outside_secret.txt", root / "sub" / "rel_link")
    os.symlink("loop2", root / "loop1")
    os.symlink("loop1", root / "loop2")
    os.symlink(root / ".kli", root / "ctl_link")
    os.symlink(root / ".kli" / "settings.json", root / "settings_link")
    return {"base": base, "root": root, "outside": outside}


def escape_paths(tree: dict[str, Path]) -> list[str]:
    outside = tree["outside"]
    root = tree["root"]
    return [
        "../outside/outside_secret.txt",
        "sub/../../outside/outside_secret.txt",
        "./../outside/outside_secret.txt",
        "sub/./../../outside/outside_secret.txt",
        "sub/../sub/../../outside/outside_secret.txt",
        "..//outside//outside_secret.txt",
        "../outside/../outside/outside_secret.txt",
        f"{outside}/outside_secret.txt",
        f"{root}/../outside/outside_secret.txt",
        f"{root}/sub/../../outside/outside_secret.txt",
        "link_file",
        "link_dir/outside_secret.txt",
        "chain1",
        "sub/rel_link",
        "loop1",
        "..",
        "../",
        "../outside",
        "link_dir",
        "/",
        "/etc/passwd",
        "outside_secret.txt\x00../../outside/outside_secret.txt",
    ]


def control_paths() -> list[str]:
    return [
        ".kli/settings.json",
        "./.kli/settings.json",
        "x/../.kli/settings.json",
        "sub/../.kli/settings.json",
        ".kli/../.kli/settings.json",
        ".kli/scratch/../settings.json",
        ".kli//settings.json",
        "ctl_link/settings.json",
        "settings_link",
        ".kli/hooks.json",
        ".kli/pending/x.json",
    ]


def _read_calls(path: str) -> list[tuple[str, dict[str, Any]]]:
    return [
        ("read", {"path": path}),
        ("search", {"pattern": "S3CR3T", "path": path}),
        ("ws_read", {"path": path}),
        ("ws_grep", {"pattern": "S3CR3T", "path": path}),
        ("find", {"pattern": path}),
        ("ws_glob", {"pattern": "*", "path": path}),
        ("ws_list", {"path": path}),
        ("git_diff", {"path": path}),
    ]


def _write_calls(path: str) -> list[tuple[str, dict[str, Any]]]:
    return [
        ("write", {"path": path, "content": PWNED + "\n"}),
        ("edit", {"input": f"@@ {path}\n+\n~{PWNED}\n"}),
        ("edit", {"input": f"@@ {path}\n< 1:00\n~{PWNED}\n"}),
        ("ws_write", {"path": path, "content": PWNED + "\n", "allow_shrink": True}),
        ("ws_edit", {"path": path, "old_str": SECRET, "new_str": PWNED}),
        ("ws_patch", {"patch": f"--- a/{path}\n+++ b/{path}\n@@ -1 +1 @@\n-{SECRET}\n+{PWNED}\n"}),
        ("ws_patch", {"path": path, "patch": f"<<<<<<< SEARCH\n{SECRET}\n=======\n{PWNED}\n>>>>>>> REPLACE\n"}),
        ("ws_mv", {"src": path, "dst": "moved_in.txt"}),
        ("ws_mv", {"src": "inside.txt", "dst": path}),
        ("ws_delete", {"path": path}),
    ]


def _leaks(text: str) -> bool:
    return SECRET in text or HIDDEN_NAME in text


def test_every_escape_is_refused_for_every_reading_tool(tree: dict[str, Path]) -> None:
    ws = Workspace(str(tree["root"]))
    before = snapshot(tree["base"])
    failures = []
    for path in escape_paths(tree):
        for tool, args in _read_calls(path):
            r = ws.call(tool, args)
            if _leaks(r.text) or _leaks(repr(r.details)):
                failures.append((tool, path, r.text[:200]))
            if r.details.get("error") == "internal":
                failures.append((tool, path, "internal error: " + r.text[:200]))
    assert failures == []
    assert snapshot(tree["base"]) == before


def test_every_escape_is_refused_for_every_writing_tool(tree: dict[str, Path]) -> None:
    ws = Workspace(str(tree["root"]))
    outside_before = snapshot(tree["outside"])
    base_names = sorted(os.listdir(tree["base"]))
    failures = []
    for path in escape_paths(tree):
        # The session has "read" each path as far as the tools let it (read-before-edit).
        ws.call("read", {"path": path})
        ws.call("ws_read", {"path": path})
        for tool, args in _write_calls(path):
            r = ws.call(tool, args)
            # A symlink loop is an entry of the root: moving or deleting the link itself
            # touches nothing else (the outside check below still applies).
            if r.ok and not (path == "loop1" and tool in ("ws_mv", "ws_delete")):
                failures.append((tool, path, r.text[:200]))
            if r.details.get("error") == "internal":
                failures.append((tool, path, "internal error: " + r.text[:200]))
            if snapshot(tree["outside"]) != outside_before:
                failures.append((tool, path, "changed the outside folder"))
                outside_before = snapshot(tree["outside"])
    assert failures == []
    assert sorted(os.listdir(tree["base"])) == base_names
    assert (tree["outside"] / "outside_secret.txt").read_text() == SECRET + "\n"


def test_every_spelling_of_the_control_directory_is_refused_for_writing(
    tree: dict[str, Path],
) -> None:
    ws = Workspace(str(tree["root"]))
    kli_before = snapshot(tree["root"] / ".kli")
    failures = []
    for path in control_paths():
        ws.call("read", {"path": path})
        ws.call("ws_read", {"path": path})
        for tool, args in _write_calls(path):
            if tool == "ws_mv" and args["src"] == path:
                continue  # moving a control file out is covered below
            r = ws.call(tool, args)
            if r.ok:
                failures.append((tool, path, r.text[:200]))
    # Moving a control file out of .kli/ deletes it there: refused too.
    for path in control_paths():
        r = ws.call("ws_mv", {"src": path, "dst": "stolen.json"})
        if r.ok:
            failures.append(("ws_mv", path, r.text[:200]))
    assert failures == []
    assert snapshot(tree["root"] / ".kli") == kli_before


def test_scratch_is_writable_through_every_spelling(tree: dict[str, Path]) -> None:
    ws = Workspace(str(tree["root"]))
    for n, path in enumerate([".kli/scratch/a.txt", "./.kli/scratch/b.txt",
                              "x/../.kli/scratch/c.txt", "ctl_link/scratch/d.txt"]):
        r = ws.call("write", {"path": path, "content": f"{n}\n"})
        assert r.ok, (path, r.text)
    assert sorted(os.listdir(tree["root"] / ".kli" / "scratch")) == ["a.txt", "b.txt", "c.txt", "d.txt"]


@pytest.mark.parametrize("path", [".KLI/settings.json", ".Kli/settings.json",
                                  "sub/../.KLI/hooks.json", ".kLi/pending/x.json"])
def test_control_directory_in_other_case_is_refused(tree: dict[str, Path], path: str) -> None:
    """On a case-insensitive file system (macOS, Windows) ``.KLI`` *is* ``.kli``: the jail
    refuses every case of the name, on every system."""
    ws = Workspace(str(tree["root"]))
    for tool, args in _write_calls(path):
        if tool.startswith("ws_mv") and args["src"] == path:
            continue
        r = ws.call(tool, args)
        assert not r.ok, (tool, path, r.text)
    assert not any(p.name.lower() == ".kli" and p.name != ".kli" for p in tree["root"].iterdir())


@pytest.mark.parametrize("tool,key", [("write", "path"), ("ws_write", "path"), ("read", "path"),
                                      ("ws_read", "path"), ("ws_delete", "path")])
@pytest.mark.parametrize("path", ["x" * 300, "d/" * 2100 + "f", "y" * 256 + "/f", "é" * 128])
def test_very_long_names_get_a_clear_error(tree: dict[str, Path], tool: str, key: str,
                                           path: str) -> None:
    ws = Workspace(str(tree["root"]))
    args: dict[str, Any] = {key: path}
    if tool in ("write", "ws_write"):
        args["content"] = "x\n"
    r = ws.call(tool, args)
    assert not r.ok
    assert r.details.get("error") != "internal", r.text
    assert "too long" in r.text.lower(), r.text


def test_names_with_newlines_and_lookalikes_stay_inside_the_root(tree: dict[str, Path]) -> None:
    """Such names are legal file names: they are written inside the root, never elsewhere."""
    ws = Workspace(str(tree["root"]))
    outside_before = snapshot(tree["outside"])
    names = [
        "new\nline.txt",
        "\uff0e\uff0e/outside/x.txt",  # fullwidth dots: a folder named "．．"
        "\u2025/x.txt",  # two-dot leader
        "..\u2215outside\u2215x.txt",  # division slash is not a separator
        "\u2024\u2024/x.txt",  # one-dot leaders
        "~/x.txt",
        "$HOME/x.txt",
        "%2e%2e/x.txt",
        "..\\outside\\x.txt",
        " ../x.txt",
    ]
    for name in names:
        r = ws.call("write", {"path": name, "content": "ok\n"})
        assert r.ok, (name, r.text)
        assert (tree["root"] / name).read_text() == "ok\n"
        r = ws.call("ws_write", {"path": name + ".ws", "content": "ok\n"})
        assert r.ok, (name, r.text)
    assert snapshot(tree["outside"]) == outside_before


def test_hard_link_to_an_outside_file_is_never_written_through(tree: dict[str, Path]) -> None:
    """Policy (docs/reliability.md): a hard link inside the root is a file of the root — the
    jail cannot tell where its other names are, so reading it is allowed — but every write
    replaces the link by a new file (atomic rename), so the outside file keeps its bytes."""
    root, outside = tree["root"], tree["outside"]
    target = outside / "outside_secret.txt"
    os.link(target, root / "hard.txt")
    ws = Workspace(str(root))
    assert ws.call("read", {"path": "hard.txt"}).ok
    assert ws.call("ws_read", {"path": "hard.txt"}).ok
    calls = [
        ("write", {"path": "hard.txt", "content": PWNED + "\n"}),
        ("ws_write", {"path": "hard.txt", "content": PWNED + "\n", "allow_shrink": True}),
    ]
    for tool, args in calls:
        os.unlink(root / "hard.txt")
        os.link(target, root / "hard.txt")
        ws.call("read", {"path": "hard.txt"})
        ws.call("ws_read", {"path": "hard.txt"})
        r = ws.call(tool, args)
        assert r.ok, r.text
        assert (root / "hard.txt").read_text() == PWNED + "\n"
        assert target.read_text() == SECRET + "\n", tool
    for tool in ("edit", "ws_edit", "ws_patch"):
        os.unlink(root / "hard.txt")
        os.link(target, root / "hard.txt")
        ws.call("read", {"path": "hard.txt"})
        ws.call("ws_read", {"path": "hard.txt"})
        if tool == "edit":
            from kli.tools.file.anchors import line_hash

            r = ws.call("edit", {"input": f"@@ hard.txt\n= 1:{line_hash(SECRET)}\n~{PWNED}\n"})
        elif tool == "ws_edit":
            r = ws.call("ws_edit", {"path": "hard.txt", "old_str": SECRET, "new_str": PWNED})
        else:
            r = ws.call("ws_patch", {"path": "hard.txt", "patch":
                                     f"<<<<<<< SEARCH\n{SECRET}\n=======\n{PWNED}\n>>>>>>> REPLACE\n"})
        assert r.ok, (tool, r.text)
        assert (root / "hard.txt").read_text() == PWNED + "\n"
        assert target.read_text() == SECRET + "\n", tool
    os.unlink(root / "hard.txt")
    os.link(target, root / "hard.txt")
    assert ws.call("ws_delete", {"path": "hard.txt"}).ok
    assert target.read_text() == SECRET + "\n"


DEEP_CONTROL_PATHS = [
    "sub/.kli/settings.json",
    "sub/deeper/.kli/settings.json",
    "sub/.kli",
    ".kli/scratch/nb/.kli/settings.json",
    "sub/.KLI/settings.json",
    "sub/.kli./settings.json",
    "sub/.kli /settings.json",
    "sub/.k\u200cli/settings.json",
    "sub/KLI~1/settings.json",
    "sub/.kli::$INDEX_ALLOCATION/settings.json",
    "sub/.kli/scratch/x.txt",
]


@pytest.mark.parametrize("path", DEEP_CONTROL_PATHS)
def test_a_control_folder_is_refused_at_any_depth_and_in_every_spelling(
    tree: dict[str, Path], path: str
) -> None:
    """Jupyter roots a kernel at the notebook's folder, and settings are read from every
    ``.kli/settings.json`` at or above it: a ``.kli`` anywhere below the root is control state
    (and so are the names that are ``.kli`` on other file systems)."""
    ws = Workspace(str(tree["root"]))
    before = snapshot(tree["root"])
    for tool, args in _write_calls(path):
        r = ws.call(tool, args)
        assert not r.ok, (tool, path, r.text)
        assert r.details.get("error") == "control_dir", (tool, path, r.text)
    assert snapshot(tree["root"]) == before


def test_a_folder_holding_a_control_folder_cannot_be_moved(tree: dict[str, Path]) -> None:
    root = tree["root"]
    (root / "nb" / ".kli").mkdir(parents=True)
    (root / "nb" / ".kli" / "settings.json").write_text('{"capabilities": []}')
    (root / "conf").mkdir()
    (root / "conf" / "settings.json").write_text('{"capabilities": ["process/exec"]}')
    ws = Workspace(str(root))
    before = snapshot(root)
    moved = ws.call("ws_mv", {"src": "nb", "dst": "nb2"})  # would lift nb's narrowing
    assert not moved.ok and moved.details.get("error") == "control_dir", moved.text
    assert "nb/.kli" in moved.text
    planted = ws.call("ws_mv", {"src": "conf", "dst": "sub/.kli"})
    assert not planted.ok and planted.details.get("error") == "control_dir", planted.text
    assert snapshot(root) == before


def test_a_tool_denied_bash_cannot_grant_it_to_the_next_kernel_of_a_sub_folder(
    tree: dict[str, Path],
) -> None:
    """The issue's attack: capabilities ``file/read`` + ``file/write``; the agent writes
    ``sub/.kli/settings.json`` granting ``process/exec``, and a kernel started for a notebook
    in ``sub/`` (rooted there) would run bash. Both halves are closed: the write is refused, and
    a settings file below the root never widens what the root's settings grant."""
    root = tree["root"]
    (root / ".kli" / "settings.json").write_text('{"capabilities": ["file/read", "file/write"]}')
    ws = Workspace(str(root))
    grant = '{"capabilities": ["file/read", "file/write", "process/exec"]}\n'
    for tool, args in [("write", {"path": "sub/.kli/settings.json", "content": grant}),
                       ("ws_write", {"path": "sub/.kli/settings.json", "content": grant})]:
        r = ws.call(tool, args)
        assert not r.ok and r.details.get("error") == "control_dir", (tool, r.text)
    assert not (root / "sub" / ".kli").exists()
    # Written by hand (or by a bash the person granted): it still cannot widen.
    (root / "sub" / ".kli").mkdir()
    (root / "sub" / ".kli" / "settings.json").write_text(grant)
    in_sub = Workspace(str(root / "sub"))
    r = in_sub.call("bash", {"command": "echo ran"})
    assert not r.ok and r.details.get("error") == "denied", r.text
    assert in_sub.call("read", {"path": "inside.txt"}).details.get("error") != "denied"


def test_the_user_settings_folder_inside_the_root_is_control_state(
    tree: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A kernel rooted at the home folder holds ``~/.config/kli/settings.json``, which every
    kernel reads: no tool writes, moves or deletes it (or a folder holding it)."""
    root = tree["root"]
    monkeypatch.setenv("XDG_CONFIG_HOME", str(root / "cfg"))
    (root / "cfg" / "kli").mkdir(parents=True)
    (root / "cfg" / "kli" / "settings.json").write_text('{"capabilities": ["file/read", "file/write"]}')
    (root / "plain").mkdir()
    (root / "plain" / "kli").mkdir()
    ws = Workspace(str(root))
    before = snapshot(root)
    for tool, args in [
        ("write", {"path": "cfg/kli/settings.json", "content": "{}\n"}),
        ("write", {"path": "cfg/kli/skills/x.md", "content": "x\n"}),
        ("ws_delete", {"path": "cfg/kli/settings.json"}),
        ("ws_mv", {"src": "cfg", "dst": "cfg2"}),
        ("ws_mv", {"src": "cfg/kli", "dst": "elsewhere"}),
    ]:
        ws.call("read", {"path": args.get("path", "x")})
        r = ws.call(tool, args)
        assert not r.ok and r.details.get("error") == "control_dir", (tool, args, r.text)
    assert snapshot(root) == before
    assert ws.call("write", {"path": "plain/kli/settings.json", "content": "{}\n"}).ok


def test_ipython_and_jupyter_startup_folders_inside_the_root_are_control_state(
    tree: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A kernel rooted at the home folder holds ``~/.ipython`` (startup scripts run at every
    kernel start), ``~/.jupyter`` (configuration files are Python) and
    ``~/.local/share/jupyter`` (a kernelspec's argv is the program a kernel start runs): no
    tool writes, moves or deletes them, so an agent cannot plant code for the next start."""
    root = tree["root"]
    monkeypatch.setenv("HOME", str(root))
    for var in ("IPYTHONDIR", "JUPYTER_CONFIG_DIR", "JUPYTER_DATA_DIR", "XDG_DATA_HOME"):
        monkeypatch.delenv(var, raising=False)
    (root / ".ipython" / "profile_default" / "startup").mkdir(parents=True)
    (root / ".jupyter").mkdir()
    (root / ".local" / "share" / "jupyter" / "kernels" / "python3").mkdir(parents=True)
    (root / ".local" / "share" / "jupyter" / "kernels" / "python3" / "kernel.json").write_text("{}")
    ws = Workspace(str(root))
    before = snapshot(root)
    for tool, args in [
        ("write", {"path": ".ipython/profile_default/startup/00-x.py", "content": "import os\n"}),
        ("ws_write", {"path": ".jupyter/jupyter_server_config.py", "content": "c = 1\n"}),
        ("write", {"path": ".local/share/jupyter/kernels/python3/kernel.json", "content": "{}\n"}),
        ("ws_delete", {"path": ".local/share/jupyter/kernels/python3/kernel.json"}),
        ("ws_mv", {"src": ".local/share", "dst": "moved"}),
        ("ws_mv", {"src": ".ipython", "dst": "moved"}),
    ]:
        ws.call("read", {"path": args.get("path", "x")})
        r = ws.call(tool, args)
        assert not r.ok and r.details.get("error") == "control_dir", (tool, args, r.text)
    assert "every kernel or server start" in r.text
    assert snapshot(root) == before
    assert ws.call("write", {"path": "notes/.ipython.md", "content": "x\n"}).ok


def _plain_value(prop: dict[str, Any]) -> Any:
    """A value the schema ``prop`` accepts (a required argument beside the one tested)."""
    if "enum" in prop:
        return prop["enum"][0]
    return {"integer": 1, "number": 1, "boolean": False, "array": [], "object": {}}.get(
        prop.get("type", "string"), "inside.txt")


def test_a_lone_surrogate_in_any_string_argument_is_a_named_error(tree: dict[str, Path]) -> None:
    """JSON carries ``"\\ud800"``; no file name, UTF-8 text or command line can hold it. Every
    tool names the argument (before, 13 tools answered with an internal error)."""
    from kli.tools.registry import REGISTRY

    ws = Workspace(str(tree["root"]))
    ws.call("read", {"path": "inside.txt"})
    failures = []
    for name, tool in REGISTRY.tools.items():
        props = tool.parameters.get("properties", {})
        for key, prop in props.items():
            if prop.get("type") != "string":
                continue
            args: dict[str, Any] = {k: _plain_value(props[k])
                                    for k in tool.parameters.get("required", []) if k in props}
            args[key] = "inside\ud800.txt"
            r = ws.call(name, args)
            if r.ok or r.details.get("error") != "bad_arguments" or "lone surrogate" not in r.text:
                failures.append((name, key, ascii(r.text[:120])))
    assert failures == []
