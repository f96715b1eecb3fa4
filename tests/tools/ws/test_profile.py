"""The slmcode profile's universal rules: the result cap and the loop guard."""

from __future__ import annotations

from pathlib import Path

from kli.tools import Workspace
from kli.tools.registry import REGISTRY
from kli.tools.ws.profile import (
    CUT_PREFIX,
    LOOP_CYCLE_LIMIT,
    LOOP_REPEAT_LIMIT,
    cap_text,
    loop_verdict,
)


def _lines(n: int, width: int = 60) -> str:
    return "".join(f"{i:05d} " + "x" * width + "\n" for i in range(n))


# -- result cap -----------------------------------------------------------------------------


def test_every_slmcode_tool_uses_the_slmcode_profile_rules() -> None:
    profile = REGISTRY.profiles["slmcode"]
    assert profile.before.__module__ == "kli.tools.ws.profile"
    assert profile.after.__module__ == "kli.tools.ws.profile"
    names = set(REGISTRY.names("slmcode"))
    assert {"ws_read", "ws_write", "ws_mv", "ws_delete", "ws_list", "ws_glob", "ws_grep",
            "ws_shell", "ws_todo", "ws_skill", "git_status", "git_diff"} <= names


def test_cap_keeps_head_and_tail_and_names_total_size() -> None:
    text = _lines(2000)
    out = cap_text(text, 8000, narrow="page with offset=")
    assert len(out) <= 8000
    assert out.startswith("00000 ")
    assert out.rstrip("\n").endswith(text.rstrip("\n")[-40:])
    assert CUT_PREFIX in out
    assert f"the full result is {len(text):,} characters" in out
    assert "page with offset=" in out


def test_cap_leaves_short_text_alone() -> None:
    assert cap_text("short", 8000, narrow="x") == "short"


def test_shell_result_is_capped_at_default_8000_with_steering(ws: Workspace) -> None:
    r = ws.call("ws_shell", {"command": "seq 1 50000"})
    assert r.ok
    assert len(r.text) <= 8000
    assert r.text.startswith("1\n2\n3\n")
    assert "50000" in r.text and "[exit code 0" in r.text  # the tail survives
    assert CUT_PREFIX in r.text
    total = r.details["truncated"]["total_chars"]
    assert f"the full result is {total:,} characters" in r.text
    # The full output was saved and the marker names the file.
    saved = r.details["full_output"]
    assert saved.startswith(".kli/scratch/shell/") and saved in r.text


def test_max_tool_chars_setting_changes_the_cap(root: Path) -> None:
    ws = Workspace(str(root), {"max_tool_chars": 2000})
    (root / "big.txt").write_text(_lines(300))
    r = ws.call("ws_grep", {"pattern": "x"})
    assert len(r.text) <= 2000
    assert "2,000-character cap (max_tool_chars)" in r.text


def test_error_results_are_capped_too(root: Path) -> None:
    ws = Workspace(str(root), {"max_tool_chars": 600})
    skills = root / ".kli" / "skills"
    skills.mkdir(parents=True)
    for i in range(40):
        (skills / f"skill{i:02d}.md").write_text(
            f"---\nname: skill{i:02d}\ndescription: {'a long description ' * 5}\n---\nbody\n"
        )
    r = ws.call("ws_skill", {"name": "nope"})
    assert not r.ok
    assert len(r.text) <= 600 and CUT_PREFIX in r.text


# -- loop guard -----------------------------------------------------------------------------


def test_third_identical_consecutive_call_is_nudged(ws: Workspace, root: Path) -> None:
    (root / "a.txt").write_text("hello\n")
    first = ws.call("ws_read", {"path": "a.txt"})
    second = ws.call("ws_read", {"path": "a.txt"})
    third = ws.call("ws_read", {"path": "a.txt"})
    assert first.ok and second.ok
    assert LOOP_REPEAT_LIMIT == 3
    assert not third.ok and third.details["error"] == "loop_guard"
    assert third.text.startswith("Loop guard: you have now made the identical call ws_read")
    assert "3 times in a row" in third.text and "This call was not run." in third.text
    # Insisting keeps being nudged; a different call breaks the run.
    assert ws.call("ws_read", {"path": "a.txt"}).details["error"] == "loop_guard"
    assert ws.call("ws_list", {}).ok
    assert ws.call("ws_read", {"path": "a.txt"}).ok


def test_mutating_calls_count_and_nudge_is_not_run(ws: Workspace, root: Path) -> None:
    (root / "f.txt").write_text("one\n")
    args = {"command": "echo hi"}
    assert ws.call("ws_shell", args).ok
    assert ws.call("ws_shell", args).ok
    nudged = ws.call("ws_shell", args)
    assert nudged.details["error"] == "loop_guard"
    assert "exit_code" not in nudged.details  # nothing ran
    # A mutating tool repeated: the third identical ws_delete is nudged, not run.
    assert ws.call("ws_delete", {"path": "f.txt"}).ok
    assert not ws.call("ws_delete", {"path": "f.txt"}).ok  # already gone
    third = ws.call("ws_delete", {"path": "f.txt"})
    assert third.details["error"] == "loop_guard"
    assert "The earlier identical call already ran" in third.text


def test_alternating_cycle_without_changes_is_nudged(ws: Workspace, root: Path) -> None:
    (root / "a.txt").write_text("a\n")
    (root / "b.txt").write_text("b\n")
    results = []
    for _ in range(LOOP_CYCLE_LIMIT):
        results.append(ws.call("ws_read", {"path": "a.txt"}))
        results.append(ws.call("ws_read", {"path": "b.txt"}))
    assert all(r.ok for r in results[: 2 * LOOP_CYCLE_LIMIT - 2])
    assert results[-2].details.get("error") == "loop_guard"
    assert "without changing anything in between" in results[-2].text


def test_a_change_in_between_resets_the_cycle_rule() -> None:
    a, b, w = "Rread-a", "Rread-b", "Wwrite"
    assert loop_verdict([a, b, a, b, a, b], a) == "cycle"
    assert loop_verdict([a, b, a, w, b, a, b], a) is None
    assert loop_verdict([a, a], a) == "repeat"
    assert loop_verdict([a, b], a) is None


def test_sessions_are_tracked_apart(ws: Workspace, root: Path) -> None:
    (root / "a.txt").write_text("a\n")
    other = ws.open_session("agent 2")
    assert ws.call("ws_read", {"path": "a.txt"}).ok
    assert ws.call("ws_read", {"path": "a.txt"}).ok
    # The other session's history is its own: its first identical call runs.
    assert ws.call("ws_read", {"path": "a.txt"}, session=other).ok
    assert ws.call("ws_read", {"path": "a.txt"}, session=other).ok
    assert ws.call("ws_read", {"path": "a.txt"}).details["error"] == "loop_guard"
    assert ws.call("ws_read", {"path": "a.txt"}, session=other).details["error"] == "loop_guard"


def test_a_person_at_a_notebook_is_not_loop_guarded(ws: Workspace, root: Path) -> None:
    (root / "a.txt").write_text("a\n")
    results = [ws.call("ws_read", {"path": "a.txt"}, source="magic") for _ in range(4)]
    assert all(r.ok for r in results)


def test_kli_profile_calls_are_not_loop_guarded(ws: Workspace, root: Path) -> None:
    (root / "a.txt").write_text("a\n")
    results = [ws.call("read", {"path": "a.txt"}) for _ in range(4)]
    assert all(r.ok for r in results)


# -- properties -----------------------------------------------------------------------------

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


@settings(max_examples=200, deadline=None)
@given(text=st.text(alphabet=st.characters(codec="utf-8"), max_size=5000), limit=st.integers(300, 4000))
def test_cap_never_exceeds_the_limit_and_keeps_real_head_and_tail(text: str, limit: int) -> None:
    out = cap_text(text, limit, narrow="narrow it")
    assert len(out) <= limit
    if len(text) <= limit:
        assert out == text
        return
    head, _, rest = out.partition("\n" + CUT_PREFIX)
    tail = rest.split("]\n", 1)[1] if "]\n" in rest else ""
    assert text.startswith(head)
    assert text.endswith(tail)
    assert f"the full result is {len(text):,} characters" in out
