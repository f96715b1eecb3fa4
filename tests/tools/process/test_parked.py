"""eval with on_error "interactive": parked evaluations, their frames, and eval_frame /
eval_continue / eval_abort — each action doing exactly what the docs say."""

from __future__ import annotations

from kli.tools import Workspace
from kli.tools.process import parked

MEAN = "def mean(v):\n    total = sum(v)\n    return total / len(v)\n"
RUN = "xs = []\nprint('before')\nm = mean(xs)\nafter = m + 1\nafter"


def _park(ws: Workspace) -> str:
    assert ws.call("eval", {"code": MEAN}).ok
    r = ws.call("eval", {"code": RUN, "on_error": "interactive"})
    assert not r.ok and r.details["parked"] is True
    return str(r.details["park"])


def test_the_parked_result_lists_frames_with_bounded_locals(ws: Workspace) -> None:
    ws.call("eval", {"code": MEAN})
    r = ws.call("eval", {"code": RUN, "on_error": "interactive"})
    assert "ZeroDivisionError: division by zero" in r.text
    assert "[0] <module>" in r.text and "m = mean(xs)" in r.text
    assert "[1] mean" in r.text and "<- raised here" in r.text
    assert "locals: v = []; total = 0" in r.text
    assert "before" in r.text  # output of the statements that ran
    assert [f["function"] for f in r.details["frames"]] == ["<module>", "mean"]


def test_unwind_is_the_default_and_parks_nothing(ws: Workspace) -> None:
    ws.call("eval", {"code": MEAN})
    r = ws.call("eval", {"code": RUN})
    assert "park" not in r.details and "Traceback" in r.text


def test_eval_frame_sees_each_frames_own_names(ws: Workspace) -> None:
    pid = _park(ws)
    inner = ws.call("eval_frame", {"park": pid, "code": "len(v), total"})
    assert inner.ok and "(0, 0)" in inner.text
    outer = ws.call("eval_frame", {"park": pid, "frame": 0, "code": "xs, 'v' in dir()"})
    assert "([], False)" in outer.text
    kept = ws.call("eval_frame", {"park": pid, "code": "total = 99"})
    assert kept.ok
    assert "99" in ws.call("eval_frame", {"park": pid, "code": "total"}).text
    bad = ws.call("eval_frame", {"park": pid, "frame": 7, "code": "1"})
    assert not bad.ok and "give 0 to 1" in bad.text


def test_retry_reruns_from_the_failed_statement_in_the_same_namespace(ws: Workspace) -> None:
    pid = _park(ws)
    ws.call("eval", {"code": "xs.append(4)"})  # the fix
    r = ws.call("eval_continue", {"park": pid, "action": "retry"})
    assert r.ok and "[line 5] 5.0" in r.text and "no longer parked" in r.text
    assert "before" not in r.text  # line 2 did not run again
    assert not ws.call("eval_abort", {"park": pid}).ok


def test_value_binds_the_failing_assignment_and_runs_the_rest(ws: Workspace) -> None:
    pid = _park(ws)
    r = ws.call("eval_continue", {"park": pid, "action": "value", "value": "41"})
    assert r.ok and "bound m = 41" in r.text and "[line 5] 42" in r.text


def test_value_is_refused_for_a_statement_it_cannot_stand_in_for(ws: Workspace) -> None:
    r = ws.call("eval", {"code": "for i in range(2):\n    1 / 0", "on_error": "interactive"})
    c = ws.call("eval_continue", {"park": r.details["park"], "action": "value", "value": "1"})
    assert not c.ok and c.details["error"] == "no_value_place" and "retry" in c.text


def test_a_retry_that_fails_again_parks_again_under_the_same_id(ws: Workspace) -> None:
    pid = _park(ws)
    r = ws.call("eval_continue", {"park": pid, "action": "retry"})
    assert not r.ok and r.details["park"] == pid and "parked as " + pid in r.text


def test_abort_frees_it_and_the_limit_holds(ws: Workspace) -> None:
    ids = [ws.call("eval", {"code": "1/0", "on_error": "interactive"}).details["park"]
           for _ in range(parked.MAX_PARKED)]
    over = ws.call("eval", {"code": "1/0", "on_error": "interactive"})
    assert "park" not in over.details and "not parked" in over.text
    assert ws.call("eval_abort", {"park": ids[0]}).ok
    assert "park" in ws.call("eval", {"code": "1/0", "on_error": "interactive"}).details


def test_an_expired_park_is_gone_with_a_message_that_says_why(ws: Workspace) -> None:
    pid = _park(ws)
    parked.session_parked(ws.default_session)[pid].created -= parked.PARK_SECONDS + 1
    r = ws.call("eval_frame", {"park": pid, "code": "1"})
    assert not r.ok and "expired" in r.text
