"""Models for the agent loop (``kli.tools.agent``) through litellm, the multi-provider client
Jupyter AI uses: OpenAI, Anthropic, Gemini, and OpenAI-compatible local servers (Ollama, vLLM,
llama.cpp).

    from kli.tools.agentmodels import litellm_model
    model = litellm_model()                  # KLI_AGENT_MODEL, e.g. openai/gpt-4.1-mini
    run = await run_agent_async(task, model, host)

The model id is a litellm id (``openai/gpt-4.1-mini``, ``anthropic/claude-sonnet-4-5``,
``ollama/qwen2.5-coder``, ``openai/<name>`` for any OpenAI-compatible server); the keys and
endpoints are each provider's own variables (``OPENAI_API_KEY``, ``OPENAI_BASE_URL``,
``ANTHROPIC_API_KEY``, ``OLLAMA_API_BASE``…), read by litellm. litellm is the ``ai`` extra
(``pip install "kli-kernel[ai]"``); it is imported on the first call, never when ``kli.tools``
is, and with ``LITELLM_LOCAL_MODEL_COST_MAP=True`` so it never fetches its price list.

The keyless demo model, ``kli/demo`` (``kli.tools.demomodel``), is a script that carries the
tour's chat task (a bug in a notebook cell) with no key and no network. A recorded model answers
with no key and no network too: ``replay:PATH`` (``ReplayModel``) plays
the replies a ``RecordingModel`` saved from a real run of the loop, in order, and refuses when
the run departs from the recording. ``agent_model(id)`` picks the one an id names.
"""

from __future__ import annotations

import inspect
import json
import os
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kli.tools.demomodel import DEMO_ID, DemoModel

MODEL_VAR = "KLI_AGENT_MODEL"
# "1" or "0": the model takes images, or not, whatever litellm's model list says (a local
# vision model behind an OpenAI-compatible server is unknown to it).
VISION_VAR = "KLI_AGENT_VISION"
MODELS_VAR = "KLI_AGENT_MODELS"  # more litellm ids offered (the chat's model picker), comma-separated
# A provider's key set in the environment sets up its model: (key variable, litellm id).
KEYED_MODELS = (
    ("OPENAI_API_KEY", "openai/gpt-4.1-mini"),
    ("ANTHROPIC_API_KEY", "anthropic/claude-sonnet-4-5"),
    ("GEMINI_API_KEY", "gemini/gemini-2.5-flash"),
)
NO_MODEL = (
    "no model is set up: set a provider's key (OPENAI_API_KEY, ANTHROPIC_API_KEY or "
    "GEMINI_API_KEY) or KLI_AGENT_MODEL (a litellm model id: openai/gpt-4.1-mini, "
    "ollama/qwen2.5-coder, openai/<name> with OPENAI_BASE_URL for an OpenAI-compatible server) "
    "in the environment the kernel or server starts from, or pass one (%kli agent --model ID); "
    "--model kli/demo runs the keyless demo model (a script: no key, no network)"
)
NO_LITELLM = (
    "the agent's model client is litellm, which is not installed: pip install "
    '"kli-kernel[ai]" (or pip install litellm) in the environment that runs the kernel or the '
    "server, then restart it; bash scripts/run installs it when started with a model set up "
    "(docs/agent.md)"
)


def load_litellm() -> Any:
    """Import litellm, after setting ``LITELLM_LOCAL_MODEL_COST_MAP`` so the import does not
    fetch a price list from the network. ImportError naming the extra when it is missing."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    try:
        import litellm
    except ImportError as exc:
        raise ImportError(NO_LITELLM) from exc
    # Its "Provider List: …" banner (printed when it cannot price a model id) would land in a
    # person's cell: the loop reports what matters itself.
    litellm.suppress_debug_info = True
    return litellm


def models_set_up(environ: Mapping[str, str] | None = None) -> list[tuple[str, str]]:
    """The models set up in ``environ`` (default ``os.environ``), in order, each with what set
    it up: ``KLI_AGENT_MODEL``, then ``KLI_AGENT_MODELS``, then one model per provider key that
    is set (``KEYED_MODELS``). The keyless demo (``kli/demo``) is not among them."""
    env = os.environ if environ is None else environ
    found: dict[str, str] = {}
    first = env.get(MODEL_VAR, "").strip()
    if first:
        found[first] = MODEL_VAR
    for extra in env.get(MODELS_VAR, "").split(","):
        if extra.strip():
            found.setdefault(extra.strip(), MODELS_VAR)
    for key, model in KEYED_MODELS:
        if env.get(key, "").strip():
            found.setdefault(model, f"{key} is set")
    return list(found.items())


def model_id(model: str | None = None) -> str:
    """``model``, else the first model set up (``models_set_up``: ``KLI_AGENT_MODEL``, or a
    provider's key); ValueError saying how to set one up, and naming the keyless demo."""
    chosen = model or next((m for m, _ in models_set_up()), "")
    if not chosen:
        raise ValueError(NO_MODEL)
    return chosen


class LitellmModel:
    """An ``AsyncModel``: one ``litellm.acompletion`` per turn, its response as a
    chat-completions dict with ``usage`` when the provider reports it.

    ``stream`` (default) streams the reply, asking for usage in the last chunk
    (``stream_options.include_usage``; asked again without it when the provider refuses the
    option), and rebuilds the message and its tool calls with ``litellm.stream_chunk_builder``;
    ``on_text`` receives each piece of text as it arrives. ``options`` go to litellm as they
    are (``api_base``, ``api_key``, ``temperature``, ``timeout``…).

    ``vision`` says whether the model takes images (a tool result's, ``look``); None asks
    ``KLI_AGENT_VISION``, then litellm (``supports_vision``)."""

    def __init__(self, model: str | None = None, *, stream: bool = True,
                 on_text: Callable[[str], None] | None = None, vision: bool | None = None,
                 **options: Any) -> None:
        self.model = model_id(model)
        self.stream = stream
        self.on_text = on_text
        self.vision = vision
        self.options = options

    def takes_images(self) -> tuple[bool, str]:
        """(True, "") when the model is sent images; else (False, why), the note the model
        reads in their place."""
        if self.vision is not None:
            return self.vision, "" if self.vision else f"{self.model} is set not to take images"
        flag = os.environ.get(VISION_VAR, "").strip()
        if flag in ("0", "1"):
            return flag == "1", "" if flag == "1" else f"{VISION_VAR}=0 says {self.model} " \
                "does not take images"
        litellm = load_litellm()
        try:
            sees = bool(litellm.supports_vision(model=self.model))
        except Exception:
            sees = False
        return sees, "" if sees else (
            f"{self.model} does not take images (litellm's model list does not say it does; "
            f"{VISION_VAR}=1 marks it as taking them)")

    async def __call__(self, messages: list[dict[str, Any]],
                       tools: list[dict[str, Any]] | None) -> dict[str, Any]:
        litellm = load_litellm()
        kwargs: dict[str, Any] = {"model": self.model, "messages": messages, **self.options}
        if tools:
            kwargs["tools"] = tools
        if not self.stream:
            return _plain(await litellm.acompletion(**kwargs))
        try:
            chunks = await self._chunks(litellm, {**kwargs, "stream": True,
                                                  "stream_options": {"include_usage": True}})
        except litellm.UnsupportedParamsError:
            chunks = await self._chunks(litellm, {**kwargs, "stream": True})
        built = litellm.stream_chunk_builder(chunks, messages=messages)
        if built is None:
            raise ValueError(f"{self.model} streamed no reply")
        return _plain(built)

    async def _chunks(self, litellm: Any, kwargs: dict[str, Any]) -> list[Any]:
        chunks = []
        async for chunk in await litellm.acompletion(**kwargs):
            chunks.append(chunk)
            if self.on_text is not None:
                for choice in getattr(chunk, "choices", None) or []:
                    text = getattr(getattr(choice, "delta", None), "content", None)
                    if text:
                        self.on_text(text)
        return chunks


def _plain(response: Any) -> dict[str, Any]:
    """A litellm ``ModelResponse`` as the plain dict the loop reads."""
    dump = getattr(response, "model_dump", None)
    data: dict[str, Any] = dump() if callable(dump) else dict(response)
    return data


def litellm_model(model: str | None = None, **options: Any) -> LitellmModel:
    """The model ``model`` (default ``KLI_AGENT_MODEL``) through litellm; see ``LitellmModel``."""
    return LitellmModel(model, **options)


def agent_model(model: str | None = None, **options: Any
                ) -> LitellmModel | ReplayModel | DemoModel:
    """The model an id names (default: the first set up, ``model_id``): ``replay:PATH`` is the
    recording at PATH (``ReplayModel``, relative to the working directory; ``options`` are not
    used), ``kli/demo`` the keyless demo model (``kli.tools.demomodel``), any other id a litellm
    model. ValueError when no id is set or the recording is unusable;
    ImportError naming the extra when litellm is needed and missing (on the first call)."""
    chosen = model_id(model)
    if chosen.startswith(REPLAY_PREFIX):
        return ReplayModel(chosen[len(REPLAY_PREFIX):])
    if chosen == DEMO_ID:
        return DemoModel()
    return LitellmModel(chosen, **options)


# -- a recorded model -------------------------------------------------------------------------
REPLAY_PREFIX = "replay:"
REPLAY_FORMAT = "kli agent replay 1"
PROPOSAL_ID = re.compile(r"\bp\d+\b")  # a held call's proposal id: p1 when recorded, pN here
SHOWN_DIFF = 200  # characters either side of the first difference a refusal shows


class ReplayDeparted(ValueError):
    """The run is not the recorded one, so the recording has no reply for it. The text is
    for the person running the replay (it ends the run; the cell or the chat shows it)."""


def _request_of(messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None
                ) -> dict[str, Any]:
    """What a replay checks of one turn's request: the conversation's length, whether tools
    were offered, and its last message (a tool result, the task, the loop's final request)."""
    last = messages[-1] if messages else {}
    content = last.get("content")
    return {"messages": len(messages), "tools": tools is not None,
            "last": {"role": last.get("role"),
                     "content": content if isinstance(content, str) else ""}}


def _reply_of(response: dict[str, Any]) -> dict[str, Any]:
    """The assistant message of a chat-completions response, as a recording keeps it: its
    text and its tool calls (id, name, arguments as sent), nothing provider-specific."""
    message = (response.get("choices") or [{}])[0].get("message") or {}
    reply: dict[str, Any] = {"role": "assistant", "content": message.get("content")}
    calls = []
    for call in message.get("tool_calls") or []:
        function = call.get("function") or {}
        calls.append({"id": call.get("id"), "type": "function",
                      "function": {"name": function.get("name"),
                                   "arguments": function.get("arguments")}})
    if calls:
        reply["tool_calls"] = calls
    return reply


class RecordingModel:
    """A model that records: each call goes to ``inner`` (a ``Model`` or an ``AsyncModel``)
    and its request and reply are kept; ``recording()`` is them as a replay file's content and
    ``save(path)`` writes it (atomically). ``about`` says how the recording was made; the
    file names itself a recording. A run of the loop with this model is the run a
    ``ReplayModel`` of the file plays back."""

    def __init__(self, inner: Any, *, about: str = "", recorded_from: str | None = None) -> None:
        self.inner = inner
        self.about = about
        self.model = getattr(inner, "model", "model")
        self.recorded_from = recorded_from or str(self.model)
        self.turns: list[dict[str, Any]] = []
        self.task: str | None = None

    def __call__(self, messages: list[dict[str, Any]],
                 tools: list[dict[str, Any]] | None) -> Any:
        request = _request_of(messages, tools)
        if self.task is None:
            self.task = next((m.get("content") for m in messages if m.get("role") == "user"),
                             None)
        response = self.inner(messages, tools)
        if inspect.isawaitable(response):
            return self._kept_later(request, response)
        self.turns.append({"request": request, "reply": _reply_of(response)})
        return response

    async def _kept_later(self, request: dict[str, Any], pending: Any) -> dict[str, Any]:
        response: dict[str, Any] = await pending
        self.turns.append({"request": request, "reply": _reply_of(response)})
        return response

    def recording(self) -> dict[str, Any]:
        return {"format": REPLAY_FORMAT,
                "label": "a recorded model (replay): no model runs when this is played",
                "about": self.about, "recorded_from": self.recorded_from, "task": self.task,
                "turns": self.turns}

    def text(self) -> str:
        """The replay file's text (JSON, one key a line at the top)."""
        return json.dumps(self.recording(), indent=1, ensure_ascii=False) + "\n"

    def save(self, path: str | Path) -> None:
        from kli.tools.core.atomic import write_atomic

        write_atomic(str(Path(path).resolve()), self.text().encode())


def _first_difference(want: str, got: str) -> str:
    at = next((i for i, (a, b) in enumerate(zip(want, got, strict=False)) if a != b),
              min(len(want), len(got)))
    start = max(0, at - SHOWN_DIFF // 4)
    return (f"the recording has «…{want[start:at + SHOWN_DIFF]}…»\n"
            f"this run has       «…{got[start:at + SHOWN_DIFF]}…»")


class ReplayModel:
    """A recorded model: answers turn N of a run with the recording's reply N, no network and
    no key. ``model`` is ``replay:PATH``; ``label`` names it as a recording wherever it shows.

    It answers only the conversation it was recorded in. Before each reply it checks the run
    so far against the recording, and raises ``ReplayDeparted`` (saying where, for a person)
    at the first departure:

    - the task (the first user message) is the recorded one;
    - the conversation has the recorded length and the reply asked for is one the recording
      has (the run's turn is the count of replies already in the conversation);
    - tools are offered, or not (the loop's final request), as they were;
    - the last message is the recorded one: its role, and its text exactly — each tool result
      as the tool returned it when recorded — except a held call's proposal id (``p1`` when
      recorded may be ``p4`` in a kernel that held calls before).

    The system prompt and the tools' schemas are not compared: they do not change what the
    tools returned. It keeps no state between calls, so one model can play several runs.
    Reports no token usage (nothing was spent)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.model = f"{REPLAY_PREFIX}{path}"
        self.label = f"{self.model} — a recorded model (replay), not a live one"
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except OSError as exc:
            raise ValueError(f"the replay {path} cannot be read: {exc.strerror or exc}; "
                             "a replay's path is relative to the kernel's working "
                             "directory (the notebook's folder)") from None
        except json.JSONDecodeError as exc:
            raise ValueError(f"the replay {path} is not JSON ({exc})") from None
        if not (isinstance(data, dict) and data.get("format") == REPLAY_FORMAT
                and isinstance(data.get("turns"), list) and isinstance(data.get("task"), str)):
            raise ValueError(f"{path} is not a replay file (format {REPLAY_FORMAT!r}, a task "
                             "and its turns; RecordingModel.save writes one)")
        self.task: str = data["task"]
        self.turns: list[dict[str, Any]] = data["turns"]
        self.about: str = str(data.get("about") or "")

    def __call__(self, messages: list[dict[str, Any]],
                 tools: list[dict[str, Any]] | None) -> dict[str, Any]:
        turn = sum(1 for m in messages if m.get("role") == "assistant")
        self._check(turn, messages, tools)
        reply = self.turns[turn]["reply"]
        return {"id": f"replay-{turn + 1}", "object": "chat.completion", "model": self.model,
                "choices": [{"index": 0, "message": reply,
                             "finish_reason": "tool_calls" if reply.get("tool_calls")
                             else "stop"}]}

    def _departed(self, turn: int, why: str) -> ReplayDeparted:
        return ReplayDeparted(
            f"The replay {self.path.name} stops at reply {turn + 1}: {why}\nA recorded model "
            "answers only the run it was recorded in, so it cannot go on. Run the demo's cells "
            "from the top as written (a fresh kernel, review on, the held edit accepted), or "
            "use a live model (--model ID).")

    def _check(self, turn: int, messages: list[dict[str, Any]],
               tools: list[dict[str, Any]] | None) -> None:
        task = next((m.get("content") for m in messages if m.get("role") == "user"), None)
        if task != self.task:
            raise self._departed(turn, f"this recording answers the task «{self.task}», and "
                                       f"this run's task is «{task}».")
        if turn >= len(self.turns):
            raise self._departed(turn, f"the recording has {len(self.turns)} replies, and the "
                                       "run asks for one more.")
        want = self.turns[turn]["request"]
        got = _request_of(messages, tools)
        if got["messages"] != want["messages"]:
            raise self._departed(turn, f"the conversation has {got['messages']} messages where "
                                       f"the recording had {want['messages']}.")
        if got["tools"] != want["tools"]:
            offered = "offered tools" if want["tools"] else "asked for the final answer"
            raise self._departed(turn, f"the recorded run {offered} at this turn.")
        if got["last"]["role"] != want["last"]["role"]:
            raise self._departed(turn, f"the last message is from {got['last']['role']} where "
                                       f"the recording's was from {want['last']['role']}.")
        recorded = PROPOSAL_ID.sub("p#", want["last"]["content"])
        now = PROPOSAL_ID.sub("p#", got["last"]["content"])
        if recorded != now:
            what = ("the tool's result is not the one recorded"
                    if want["last"]["role"] == "tool" else "the last message is not the recorded one")
            raise self._departed(turn, f"{what}:\n{_first_difference(recorded, now)}")


if TYPE_CHECKING:  # mypy checks each conforms to its role (kli.tools.roles)
    from kli.tools.roles import AsyncModel, Model

    def _is_model(model: LitellmModel) -> AsyncModel:
        return model

    def _is_replay(model: ReplayModel) -> Model:
        return model
