"""The one request-envelope parser (``kli.tools.core.request``), as a table of inputs and the
answer each gets."""

from __future__ import annotations

from typing import Any

import pytest

from kli.tools.core.request import UI_OPS, BadRequest, Request, decode_line, parse_request
from kli.tools.registry import PROFILE_CHOICES

CASES: list[tuple[Any, str, Any, str]] = [
    # data, error code ("" for a valid request), the reply's id, a phrase of the text or the op
    ("text", "bad_json", None, "JSON object"),
    ([1], "bad_json", None, "JSON object"),
    ({}, "bad_request", None, "'id'"),
    ({"id": False}, "bad_request", None, "'id'"),
    ({"id": 1.5}, "bad_request", None, "'id'"),
    ({"id": 1, "op": "dance"}, "unknown_op", 1, "'dance'"),
    ({"id": 1}, "bad_request", 1, "'tool'"),
    ({"id": 1, "tool": ""}, "bad_request", 1, "'tool'"),
    ({"id": 1, "tool": "read", "args": []}, "bad_request", 1, "'args'"),
    ({"id": "x", "op": "list", "profile": "nope"}, "bad_request", "x", "profile"),
    ({"id": 1, "tool": "read"}, "", 1, "call"),
    ({"id": 1, "tool": "read", "args": None}, "", 1, "call"),
    ({"id": 2, "op": "list"}, "", 2, "list"),
    ({"id": 3, "op": "ping"}, "", 3, "ping"),
    ({"id": 4, "op": "cancel"}, "bad_request", 4, "'request'"),
    ({"id": 4, "op": "cancel", "request": True}, "bad_request", 4, "'request'"),
    ({"id": 4, "op": "cancel", "request": 3}, "", 4, "cancel"),
]


@pytest.mark.parametrize(("data", "code", "rid", "named"), CASES)
def test_agent_requests(data: Any, code: str, rid: Any, named: str) -> None:
    got = parse_request(data, PROFILE_CHOICES)
    if code:
        assert isinstance(got, BadRequest) and got.error == code and got.id == rid
        assert named in got.text
    else:
        assert isinstance(got, Request) and got.op == named and got.id == rid


def test_a_valid_call_carries_tool_and_args_and_list_defaults_to_kli() -> None:
    call = parse_request({"id": 1, "tool": "read", "args": {"path": "a"}}, PROFILE_CHOICES)
    assert isinstance(call, Request) and (call.tool, call.args) == ("read", {"path": "a"})
    listing = parse_request({"id": 2, "op": "list"}, PROFILE_CHOICES)
    assert isinstance(listing, Request) and listing.profile == "kli"


def test_ui_requests_name_their_op_and_accept_needs_a_candidate() -> None:
    assert isinstance(parse_request({"id": 1}, PROFILE_CHOICES, UI_OPS), BadRequest)
    no_cand = parse_request({"id": 1, "op": "accept"}, PROFILE_CHOICES, UI_OPS)
    assert isinstance(no_cand, BadRequest) and no_cand.error == "bad_request"
    ok = parse_request({"id": 1, "op": "reject", "candidate": "c1"}, PROFILE_CHOICES, UI_OPS)
    assert isinstance(ok, Request) and ok.data["candidate"] == "c1"
    call = parse_request({"id": 1, "op": "call", "tool": "bash"}, PROFILE_CHOICES, UI_OPS)
    assert isinstance(call, BadRequest) and call.error == "unknown_op"


@pytest.mark.parametrize("extra", [{"session": 3}, {"limit": 0}, {"limit": True}, {"limit": "5"}])
def test_a_changes_request_with_a_mistyped_session_or_limit_is_a_bad_request(extra: dict[str, Any]) -> None:
    bad = parse_request({"id": 1, "op": "changes", **extra}, PROFILE_CHOICES, UI_OPS)
    assert isinstance(bad, BadRequest) and bad.error == "bad_request" and "changes" in bad.text
    ok = parse_request({"id": 1, "op": "changes", "session": "s", "limit": 5}, PROFILE_CHOICES, UI_OPS)
    assert isinstance(ok, Request) and ok.op == "changes"


@pytest.mark.parametrize(("extra", "valid"), [
    ({"mode": "review"}, True), ({"mode": "review", "keep": True}, True),
    ({"keep": False}, True),  # only where the modes are kept changes
    ({}, False), ({"mode": "later"}, False), ({"mode": "auto", "keep": "yes"}, False),
    ({"keep": None}, False), ({"mode": "auto", "kind": "disk"}, False),
])
def test_an_approval_request_needs_a_mode_or_a_keep(extra: dict[str, Any], valid: bool) -> None:
    got = parse_request({"id": 1, "op": "approval", **extra}, PROFILE_CHOICES, UI_OPS)
    if valid:
        assert isinstance(got, Request) and got.op == "approval"
    else:
        assert isinstance(got, BadRequest) and "'keep'" in got.text


def test_a_line_that_is_not_json_is_bad_json_naming_where() -> None:
    got = decode_line('{"id": 1,')
    assert isinstance(got, BadRequest) and got.error == "bad_json" and "column" in got.text
    assert decode_line('{"id": 1}') == {"id": 1}
