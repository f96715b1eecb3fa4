"""kli.kernel.protocol, the one definition of the wire protocol: its schema is valid, builders
refuse fields the definition does not have, and what the kernel builds validates."""

from __future__ import annotations

import jsonschema
import pytest

from kli.kernel import protocol as P
from kli.kernel.display import edit_payload
from kli.tools.core import request
from kli.tools.core.result import ToolResult


def test_the_schema_of_the_whole_protocol_is_valid_json_schema() -> None:
    jsonschema.Draft202012Validator.check_schema(P.json_schema())


def test_a_builder_refuses_a_misspelt_or_missing_field() -> None:
    with pytest.raises(ValueError, match="unknown fields \\['candidat'\\]"):
        P.message(P.RESOLVED, candidat="c1", status="written", text="", by="ui", reason="x")
    with pytest.raises(ValueError, match="missing \\['by'\\]"):
        P.message(P.RESOLVED, candidate="c1", status="written", text="", reason="x")


def test_a_message_starts_with_version_and_op() -> None:
    msg = P.message(P.PONG, id=3)
    assert list(msg)[:2] == ["v", "op"] and msg == {"v": 1, "op": "pong", "id": 3}


def test_requests_are_the_envelope_parsers_ops() -> None:
    agent = [s.op for s in P.MESSAGES if s.sender == "client" and s.target == P.AGENT_TARGET]
    ui = [s.op for s in P.MESSAGES if s.sender == "client" and s.target == P.UI_TARGET]
    # The open model's messages are the kernel's store's, not requests of the envelope parser.
    assert tuple(agent) == request.AGENT_OPS and tuple(ui) == request.UI_OPS + P.MODEL_OPS
    assert set(P.REQUEST_ERRORS) >= {request.BAD_JSON, request.BAD_REQUEST, request.UNKNOWN_OP}


def test_the_edit_mime_bundle_validates_as_an_edit_bundle() -> None:
    files = [{"path": "a.py", "status": "written", "added": 1, "removed": 0, "marks": []}]
    payload = edit_payload("edit", ToolResult.success("Edited a.py", files=files), "s1")
    validator = jsonschema.Draft202012Validator(P.schema_of(P.EDIT_BUNDLE))
    assert [e.message for e in validator.iter_errors(payload)] == []
    assert [e.message for e in validator.iter_errors({**payload, "ok": "yes"})] != []
