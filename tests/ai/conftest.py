"""Fixtures of tests/ai; the harness, and what is real and what is scripted, in harness.py.

The model is SCRIPTED (tests/endpoint.py, an OpenAI-compatible server answering with the tool
calls a test sets): it is the one thing that cannot exist here. The server, Jupyter AI 3.2, the
kli kernels and litellm are real.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator

import pytest

if os.environ.get("CI"):  # in CI these tests run, never skip: a missing Jupyter AI is a failure
    import jupyter_ai_persona_manager  # noqa: F401
else:
    pytest.importorskip("jupyter_ai_persona_manager", reason="Jupyter AI is not installed "
                        "(scripts/test runs tests/ai in .venv-test-ai)")

from tests.ai.harness import AiServer, Chat, start_server


@pytest.fixture(scope="session")
def ai_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AiServer]:
    with start_server(tmp_path_factory.mktemp("ai")) as server:
        yield server


@pytest.fixture
def server(ai_server: AiServer) -> Iterator[AiServer]:
    """The session's server with no notebook open and a fresh script."""
    ai_server.close_sessions()
    ai_server.script.set([])
    yield ai_server
    ai_server.close_sessions()


@pytest.fixture
def chat(server: AiServer) -> Iterator[Chat]:
    name = f"c{uuid.uuid4().hex[:6]}.chat"
    (server.root / name).write_text("")
    with Chat(server, name) as c:
        yield c
