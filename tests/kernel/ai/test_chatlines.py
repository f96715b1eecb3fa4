"""What the kli persona does without Jupyter AI: a message's task and a step as a chat line
(kli.kernel.ai.chatlines), its settings (kli.kernel.ai.settings). Which notebook a message means
is tests/kernel/ai/test_notebooks.py; the persona itself, in a real server with Jupyter AI 3.2,
is tested in tests/ai (its own environment)."""

from __future__ import annotations

import pytest

from kli.kernel.ai.chatlines import is_undo, step_line, strip_mention
from kli.kernel.ai.settings import Settings
from kli.tools.agent import CallStarted, Held, Outcome, Reply


def test_a_leading_mention_is_stripped_and_undo_is_recognised() -> None:
    assert strip_mention("@kli fix the plot") == "fix the plot"
    assert strip_mention("@KLI: fix it") == "fix it"
    assert strip_mention("fix @kli") == "fix @kli"
    assert is_undo("undo") and is_undo("undo this turn") and is_undo("Undo the last turn.")
    assert not is_undo("undo the changes to utils.py and retry")


def test_settings_come_from_the_environment_and_a_bad_value_names_its_variable() -> None:
    s = Settings.from_env({"KLI_AGENT_PROFILE": "slmcode", "KLI_AGENT_STEPS": "7",
                           "KLI_AGENT_REVIEW_WAIT": "30", "KLI_AGENT_ON_REVIEW_TIMEOUT": "stop"})
    assert (s.profile, s.steps, s.review_wait, s.on_review_timeout) == ("slmcode", 7, 30.0, "stop")
    with pytest.raises(ValueError, match="KLI_AGENT_STEPS='0'"):
        Settings.from_env({"KLI_AGENT_STEPS": "0"})
    s.update({"review_wait": "600", "profile": None})
    assert s.current() == {"profile": "slmcode", "steps": "7", "review_wait": "600",
                           "on_review_timeout": "stop"}
    with pytest.raises(ValueError, match="profile='bash'"):
        s.update({"profile": "bash"})
    from kli.tools.registry import PROFILE_CHOICES

    assert Settings.CHOICES["profile"] == PROFILE_CHOICES  # the registry's names, no list here


def test_steps_are_lines_a_call_start_is_status_and_markup_in_targets_is_escaped() -> None:
    assert step_line(CallStarted(1, "bash", "sleep 60")) is None
    assert step_line(Reply(2, "done", [], {})) is None  # the answer ends the reply instead
    line = step_line(Outcome(1, "edit", "nb.ipynb#c2", "ok", added=1, removed=1))
    assert line == "- [1] edit nb.ipynb#c2: ok +1 -1\n"
    held = step_line(Held(3, "write", "<b>x</b>.py", "p7", 60.0)) or ""
    assert held.startswith("- ‖ [3] write \\<b\\>x\\</b\\>.py") and "p7" in held
