"""The Jupyter AI persona **kli**: ``@kli <task>`` in a Jupyter AI chat runs kli's agent loop
(``kli.tools.agent.run_agent_async``) on the kli kernel of a notebook — a thin host adapter, as
``%kli agent`` is for a cell (docs/agent.md, "In a Jupyter AI chat").

Jupyter AI loads it through the entry point group ``jupyter_ai.personas``; this module imports
Jupyter AI's persona manager and is imported by nothing else in kli.

Where things run: the persona runs inside the Jupyter server, on its event loop. The kernel is
the notebook's own, already running: the persona attaches to it by its connection file (a
``kli.client`` connection, opened in a worker thread — a blocking call on the loop would stall
the server, and the hello is one), never starting or restarting one. Every tool call is an
``acall`` on that connection, so the chat's Stop (``cancel_response``) cancels the run's task,
and the cancelled ``acall`` cancels the call in the kernel (a running command killed, an eval
stopped). One chat turn is one connection, so one kli session, labelled ``chat NAME turn N``:
the activity panel and the Timeline show it under that label, and ``@kli undo`` takes it back
through the kernel's ``undo session=… since=…``.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
import threading
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from jupyter_ai_persona_manager import (
    BasePersona,
    ModelConfiguration,
    ModelOption,
    PersonaDefaults,
    SettingConfiguration,
    SettingOption,
    Usage,
)

from kli.kernel.ai import chats, reach
from kli.kernel.ai.chatlines import (
    bounded_block,
    ending,
    is_undo,
    status_of,
    step_line,
    strip_mention,
)
from kli.kernel.ai.notebooks import Choice, choose
from kli.kernel.ai.settings import Settings
from kli.kernel.ai.undoreply import undo_label, undo_reply
from kli.kernel.client import connect_in_server
from kli.tools.agent import Event, Finished, bounded, run_agent_async, system_prompt
from kli.tools.agentmodels import LitellmModel, models_set_up
from kli.tools.demomodel import DEMO_ID, DEMO_NAME

AVATAR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "kli.svg")
DESCRIPTION = ("kli's coding agent, working on the live notebook through its kli kernel: "
               "anchored cell edits, review and undo.")
HELP = (
    "Give me a task: `@kli fix the plot in analysis.ipynb`. I work on the notebook you attach, "
    "or the one you name, or the one this chat worked on last, or the only notebook with a kli "
    "kernel running. `@kli undo` takes back what my last turn changed.\n")
SETTING_NAMES = {
    "profile": ("Tools", "kli's tools, slmcode's, or both"),
    "steps": ("Steps", "turns with a tool call before the answer is asked for"),
    "review_wait": ("Review wait (s)", "how long a call held for review waits for you"),
    "on_review_timeout": ("After the wait", "go on, or stop the run, when you have not decided"),
}
# What the chat's menu offers (every setting is also a variable and a message's metadata): Jupyter
# AI shows a persona's controls in a "…" menu of at most 60vh in a sidebar chat, opened scrolled
# to its last control; with every choice of every setting it was taller than that at the
# sidebar's default size, its first headings scrolled out of sight. "After the wait" stays a
# variable (KLI_AGENT_ON_REVIEW_TIMEOUT); steps 5 and a review wait of 0 come from variables.
MENU_CHOICES = {"profile": Settings.CHOICES["profile"], "steps": ("10", "20", "40"),
                "review_wait": ("60", "300", "600")}


@dataclass
class Turn:
    """One chat turn's agent session: what ``@kli undo`` takes back."""

    number: int
    label: str
    session: str
    since: float
    notebook: str
    kernel_id: str


class ChatHost:
    """A ``kli.client`` connection to kernel ``kernel_id`` as the loop's host: ``acall`` for
    every call (cancellable in the kernel; the loop never calls ``call`` on a kernel client),
    each sent with the review other notebooks under review ask of it (``reach.review_for``),
    its tool specs fetched once beforehand, off the event loop."""

    def __init__(self, client: Any, specs: list[dict[str, Any]], kernel_id: str) -> None:
        self.client, self._specs, self.kernel_id = client, specs, kernel_id

    def call(self, tool: str, args: dict[str, Any] | None = None, /, **kwargs: Any) -> Any:
        raise RuntimeError("a chat's calls go through acall, which sends the review other "
                           "notebooks ask of them")

    async def acall(self, tool: str, args: dict[str, Any] | None = None, **kwargs: Any) -> Any:
        review = await reach.review_for(self.kernel_id, await chats.server_state())
        return await self.client.acall(tool, args, review=review, **kwargs)

    def specs(self, profile: str = "kli", /) -> list[dict[str, Any]]:
        return self._specs


_litellm: concurrent.futures.Future[Any] | None = None
_litellm_lock = threading.Lock()


def _import_litellm() -> concurrent.futures.Future[Any]:
    """litellm imported once, in a thread of its own, begun when a chat first gets the persona:
    the import takes seconds (tens on a busy machine) and must never hold the server's loop."""
    global _litellm
    with _litellm_lock:
        if _litellm is None:
            from kli.tools.agentmodels import load_litellm

            future: concurrent.futures.Future[Any] = concurrent.futures.Future()

            def work() -> None:
                try:
                    future.set_result(load_litellm())
                except BaseException as exc:
                    future.set_exception(exc)

            threading.Thread(target=work, name="kli-import-litellm", daemon=True).start()
            _litellm = future
        return _litellm


class KliPersona(BasePersona):
    """``@kli``: kli's agent loop on a notebook's kli kernel, its steps streamed into the chat."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._job: asyncio.Task[Any] | None = None
        self._turns: list[Turn] = []
        self._last_kernel: str | None = None
        self._count = 0
        self._bad_setting: str | None = None
        self._starting: asyncio.Task[Any] | None = None  # a turn not yet running its loop
        self._stopped_early = False
        # The first model set up (KLI_AGENT_MODEL, or a provider's key), else the keyless demo.
        self._model: str | None = next((m for m, _ in models_set_up()), DEMO_ID)
        try:
            self._settings = Settings.from_env()
            self._settings_problem: str | None = None
        except ValueError as exc:
            self._settings, self._settings_problem = Settings(), str(exc)
        self._first = self._settings.current()  # the server's values, always offered again
        self._report_configuration()
        if self._model != DEMO_ID:
            _import_litellm()

    @property
    def defaults(self) -> PersonaDefaults:
        return PersonaDefaults(name="kli", description=DESCRIPTION, avatar_path=AVATAR,
                               system_prompt=system_prompt("kli"))

    # -- model and settings, as Jupyter AI offers them ------------------------------------------
    def _report_configuration(self) -> None:
        # The models set up in the server's environment, then the keyless demo, always there.
        # One line each, what set a model up in its name (a description's extra lines would
        # push the menu past its height: MENU_CHOICES).
        options = [ModelOption(id=m, name=f"{m} · {why.removesuffix(' is set')}")
                   for m, why in models_set_up()]
        options.append(ModelOption(id=DEMO_ID, name=DEMO_NAME))
        if self._model and self._model not in {o.id for o in options}:
            options.insert(0, ModelOption(id=self._model))
        self.report_model_configuration(ModelConfiguration(current=self._model,
                                                           options=options))
        # Each setting's options leave out its current value: Jupyter AI's menu shows that as
        # its own "Default (…)" row (see MENU_CHOICES for why the menu is kept short).
        current = self._settings.current()
        self.report_settings_configuration([
            SettingConfiguration(
                id=key, current=current[key], name=SETTING_NAMES[key][0],
                description=SETTING_NAMES[key][1],
                options=[SettingOption(id=o) for o in
                         dict.fromkeys([self._first[key], *MENU_CHOICES[key]])
                         if o != current[key]])
            for key in MENU_CHOICES])

    async def update_model(self, model_id: str) -> None:
        self._model = (model_id or "").strip() or next((m for m, _ in models_set_up()), DEMO_ID)

    async def update_settings(self, settings: dict[str, str | None]) -> None:
        """A setting chosen in the chat (or sent in a message's metadata); one that does not
        parse is answered by ``process_message``, nothing run, the others kept."""
        try:
            self._settings.update(settings)
        except ValueError as exc:
            self._bad_setting = str(exc)
        self._report_configuration()  # the new current values; the old ones offered again

    # -- a message ------------------------------------------------------------------------------
    async def process_message(self, message: Any) -> None:
        task = strip_mention(message.body or "")
        if not task:
            self.send_message(HELP)
            return
        if is_undo(task):
            await self._undo()
            return
        bad, self._bad_setting = self._bad_setting, None
        if bad:
            self.send_message(f"Nothing was run: {bad}.\n")
            return
        if self._settings_problem:
            self.send_message(f"My settings are wrong: {self._settings_problem}. Fix the "
                              "variable and restart the server.\n")
            return
        # Which notebook: the one rule the MCP route follows too (kli.kernel.ai.notebooks).
        known = chats.chat_of(self.chat, self._last_kernel,
                              chats.message_attached(self.chat, message))
        choice = choose(known, {"task": task}, await chats.server_state(), reader="person")
        if choice.refusal is not None or choice.path is None or choice.kernel_id is None:
            self.send_message((choice.refusal or HELP) + "\n")
            return
        from kli.tools.agentmodels import agent_model

        try:
            model = agent_model(self._model)  # replay:PATH is a recording, named as one
        except ValueError as exc:
            self.send_message(f"The model `{self._model}` cannot be used: {exc}. Choose "
                              "another in the chat's model menu (beside kli under the input, "
                              f"or in its … menu) — `{DEMO_ID}` is the keyless demo — or see "
                              "docs/agent.md for the variables that set one up (then restart "
                              "the server).\n")
            return
        self._count += 1
        chat = os.path.basename(str(self.get_chat_path(relative=True))) or "chat"
        label = bounded(f"chat {chat} turn {self._count}", 80)
        self._starting, self._stopped_early = asyncio.current_task(), False
        try:
            await self._turn(task, model, choice, label)
        except asyncio.CancelledError:
            if not self._stopped_early:
                raise
            self.clear_status()  # Stop before the run began (loading litellm, attaching)
            self.send_message("Stopped before the agent began: nothing ran.\n")
        finally:
            self._starting = None

    async def _connect(self, kernel_id: str, label: str) -> Any:
        """A ``kli.client`` connection to a kernel of this server, opened off the loop."""
        return await asyncio.to_thread(connect_in_server, kernel_id, label=label)

    async def _turn(self, task: str, model: Any, choice: Choice, label: str) -> None:
        settings = self._settings
        notebook, kernel_id = str(choice.path), str(choice.kernel_id)
        since = time.time()
        if isinstance(model, LitellmModel):  # a recording or the demo needs no model client
            self.set_status("is loading its model client…")
            try:
                await asyncio.wrap_future(_import_litellm())
            except ImportError as exc:
                self.clear_status()
                self.send_message(f"I have no model client: {exc}\n")
                return
        self.set_status("is attaching to the kernel…")
        try:
            client = await self._connect(kernel_id, label)
            self.log.info("kli: %s attached to kernel %s in %.1f s", label, kernel_id,
                          time.time() - since)
        except Exception as exc:
            self.clear_status()
            self.send_message(f"I could not attach to the kli kernel of `{notebook}`: {exc}\n")
            return
        queue: asyncio.Queue[str | None] = asyncio.Queue()
        try:
            path = str(choice.local)  # the kernel works in its notebook's folder
            specs = await asyncio.to_thread(client.specs, settings.profile)
            context = await self._context(client, path)
            self._turns.append(Turn(self._count, label, str(client.session), since, notebook,
                                    kernel_id))
            self._last_kernel = kernel_id  # the chat's next turn stays here unless told otherwise

            def on_event(event: Event) -> None:
                self.log.info("kli: %s %.1f s: %s", label, time.time() - since, event.line())
                status = status_of(event)
                if status:
                    self.set_status(status)
                if isinstance(event, Finished):
                    queue.put_nowait(ending(event, label))
                    self.report_usage(Usage(
                        input_tokens=event.usage.get("prompt"),
                        output_tokens=event.usage.get("completion"),
                        total_tokens=event.usage.get("total")), append=True)
                    return
                line = step_line(event)
                if line:
                    queue.put_nowait(line)

            queue.put_nowait(f"Working on `{path}` (kernel {kernel_id[:8]}, session "
                             f"{label}, model {getattr(model, 'label', None) or model.model})\n\n")
            self._job = asyncio.ensure_future(run_agent_async(
                f"{task}\n\n{context}", model, ChatHost(client, specs, kernel_id),
                profile=settings.profile, max_turns=settings.steps,
                review_wait=settings.review_wait,
                on_review_timeout="stop" if settings.on_review_timeout == "stop" else "continue",
                on_event=on_event))
            self._job.add_done_callback(lambda job: self._ended(job, queue))
            self._starting = None  # from here Stop cancels the run itself
            await self.stream_message(self._lines(queue))
        finally:
            self._job = None
            self.clear_status()
            await asyncio.to_thread(client.close)

    @staticmethod
    def _ended(job: asyncio.Task[Any], queue: asyncio.Queue[str | None]) -> None:
        if job.cancelled():
            queue.put_nowait("\nStopped: the run ended, and the call it was making was stopped "
                             "in the kernel. `@kli undo` takes back what this turn changed.\n")
        elif job.exception() is not None:
            exc = job.exception()
            queue.put_nowait(f"\nThe run failed: {type(exc).__name__}: {bounded(str(exc), 400)}\n")
        queue.put_nowait(None)

    @staticmethod
    async def _lines(queue: asyncio.Queue[str | None]) -> AsyncIterator[str]:
        while (line := await queue.get()) is not None:
            yield line

    async def _context(self, client: Any, path: str) -> str:
        """What the person has in front of them: the notebook's cells (ids, bounded outputs, as
        ``read`` shows them — which also lets the agent edit them at once) and the live image's
        names."""
        cells = await client.acall("read", {"path": path})
        image = await client.acall("image_summary", {})
        return (f"The person is looking at the notebook {path}; its kernel is your live image "
                "(eval runs there; its variables are the notebook's). Its cells, as read shows "
                f"them:\n{bounded_block(cells.text)}\n\nThe live image (image_summary):\n"
                f"{bounded_block(image.text)}")

    async def cancel_response(self) -> None:
        """The chat's Stop: the run's task is cancelled; its call in flight is cancelled in the
        kernel by the connection (``AgentClient.arequest``)."""
        job = self._job
        if job is not None and not job.done():
            job.cancel()
            return
        starting = self._starting
        if starting is not None and not starting.done():
            self._stopped_early = True
            starting.cancel()

    # -- undo this turn ---------------------------------------------------------------------------
    async def _undo(self) -> None:
        if not self._turns:
            self.send_message("There is no turn of mine in this chat to undo (since the server "
                              "started). The kli panel's Timeline lists every change.\n")
            return
        turn = self._turns[-1]
        try:
            client = await self._connect(turn.kernel_id,
                                         undo_label(self.defaults.name, turn.label, turn.number))
        except Exception as exc:
            self.send_message(f"I could not attach to the kli kernel of `{turn.notebook}` to undo "
                              f"turn {turn.number}: {exc}\n")
            return
        try:
            result = await client.acall("undo", {"session": turn.session,
                                                 "since": f"{turn.since:.3f}"})
        finally:
            await asyncio.to_thread(client.close)
        said, taken = undo_reply(turn.number, turn.label, result.ok, result.text, result.details)
        if taken:
            self._turns.pop()
        self.send_message(said)
