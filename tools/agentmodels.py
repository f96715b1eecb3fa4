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
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

MODEL_VAR = "KLI_AGENT_MODEL"
NO_MODEL = (
    "no model is set: set KLI_AGENT_MODEL to a litellm model id (openai/gpt-4.1-mini, "
    "anthropic/claude-sonnet-4-5, ollama/qwen2.5-coder, openai/<name> with OPENAI_BASE_URL for an "
    "OpenAI-compatible server), or pass one (%kli agent --model ID)"
)
NO_LITELLM = (
    "the agent's model client is litellm, which is not installed: pip install "
    '"kli-kernel[ai]" (or pip install litellm)'
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


def model_id(model: str | None = None) -> str:
    """``model``, else ``KLI_AGENT_MODEL``; ValueError saying how to set one."""
    chosen = model or os.environ.get(MODEL_VAR, "").strip()
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
    are (``api_base``, ``api_key``, ``temperature``, ``timeout``…)."""

    def __init__(self, model: str | None = None, *, stream: bool = True,
                 on_text: Callable[[str], None] | None = None, **options: Any) -> None:
        self.model = model_id(model)
        self.stream = stream
        self.on_text = on_text
        self.options = options

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


if TYPE_CHECKING:  # a LitellmModel is an AsyncModel (kli.tools.roles): mypy checks it conforms
    from kli.tools.roles import AsyncModel

    def _is_model(model: LitellmModel) -> AsyncModel:
        return model
