"""Which notebook a Jupyter AI chat means (``kli.kernel.ai.notebooks.choose``), alone: one case
a file in ``choices/`` — the server's notebooks, what is known of the chat, the request's
arguments, its reader, and the expected kernel, paths, rewritten arguments or refusal words.
A new behaviour is a new file. The hosts that ask it run in tests/ai (a real server)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kli.kernel.ai.notebooks import Chat, Open, Server, choose, for_kernel, names

CASES = sorted((Path(__file__).parent / "choices").glob("*.json"))


def _server(data: dict[str, Any]) -> Server:
    return Server(tuple(Open(*row) for row in data.get("notebooks", [])),
                  tuple((str(k[0]), str(k[1])) for k in data.get("kli_kernels", [])))


def _chat(data: dict[str, Any]) -> Chat:
    return Chat(tuple(data.get("attached_now", ())), tuple(data.get("attached", ())),
                data.get("folder"), data.get("last"))


@pytest.mark.parametrize("case", CASES, ids=[c.stem for c in CASES])
def test_choice(case: Path) -> None:
    data = json.loads(case.read_text())
    got = choose(_chat(data["chat"]), data["args"], _server(data["server"]),
                 reader=data["reader"], tool=data.get("tool"))
    expect = data["expect"]
    if "refusal_has" in expect:
        assert got.refusal is not None and got.kernel_id is None, got
        for words in expect["refusal_has"]:
            assert words in got.refusal, got.refusal
        return
    assert got.refusal is None, got.refusal
    for key in ("kernel_id", "path", "local", "rung", "args"):
        if key in expect:
            assert getattr(got, key) == expect[key], (key, got)


def test_the_cases_cover_every_rung_and_both_readers() -> None:
    seen = {json.loads(c.read_text())["expect"].get("rung") for c in CASES}
    assert {"attached now", "named", "attached", "last", "folder", "only", "console"} <= seen
    assert {json.loads(c.read_text())["reader"] for c in CASES} == {"person", "model"}


def test_names_are_server_paths_once_each_where_the_call_acts_first() -> None:
    args = {"input": "@@ ./sub/b.ipynb#c1\n~x = 'd.ipynb'\n", "paths": ["/a.ipynb", "a.ipynb#c2"]}
    assert names(args) == ["a.ipynb", "sub/b.ipynb"]  # a path argument, a patch's @@ header
    assert names({"code": "open('../c.ipynb'); 'x.ipynb.bak'; load('d.ipynb')"}) == ["d.ipynb"]


def test_only_root_paths_under_the_kernels_folder_are_rewritten() -> None:
    server = Server((Open("sub/b.ipynb", "kb"), Open("sub/c.ipynb", "kc"), Open("a.ipynb", "ka"),
                     Open("x/sub/b.ipynb", "kx")))
    args = {"command": "diff sub/b.ipynb sub/c.ipynb a.ipynb x/sub/b.ipynb", "n": 3}
    assert for_kernel(args, "sub/b.ipynb", server) == {
        "command": "diff b.ipynb c.ipynb a.ipynb x/sub/b.ipynb", "n": 3}
    assert for_kernel(args, "a.ipynb", server) == args
