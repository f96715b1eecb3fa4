"""Y clients of notebook rooms, on one event-loop thread of their own.

``Rooms.join(server, rel)`` connects a ``jupyter_nbmodel_client.NbModelClient`` to the room of
notebook ``rel`` (``server.collaboration_session`` then the room's websocket) and waits until it
has synced the server's document. ``Rooms.run(fn)`` runs ``fn`` on the loop thread and returns
its value: every read and change of a document goes through it, so it never races the client's
own handling of the server's updates (which happen on that thread, under the client's lock) and
the changes are sent at once (the client queues them on that loop).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from kli.kernel.notebook import server as srv
from kli.tools.core import imports

T = TypeVar("T")
SYNC_TIMEOUT = 10.0  # seconds to join a room and receive the document
CALL_TIMEOUT = 10.0  # seconds one read or change of the document may take
USERNAME = "kli agent"


class RoomError(OSError):
    """A room could not be joined (no jupyter-collaboration, server gone, not synced)."""


@dataclass
class Room:
    rel: str
    client: Any  # NbModelClient

    @property
    def doc(self) -> Any:  # jupyter_ydoc.YNotebook
        return self.client._doc

    @property
    def lock(self) -> Any:
        return self.client._lock

    @property
    def origin(self) -> Any:
        return self.client._changes_origin

    @property
    def alive(self) -> bool:
        """Synced, and its connection still running (the client drops its task when the
        websocket closes: the server stopped or the room went away). A dead room is joined
        again on the next load, so a change never goes into a document nobody shares."""
        return bool(self.client.synced) and getattr(self.client, "_NbModelClient__run", None) \
            is not None


class Rooms:
    def __init__(self) -> None:
        self._loop: asyncio.AbstractEventLoop | None = None
        self._rooms: dict[str, Room] = {}
        self._guard = threading.Lock()

    def _ensure_loop(self) -> asyncio.AbstractEventLoop:
        with self._guard:
            if self._loop is None:
                loop = asyncio.new_event_loop()
                threading.Thread(target=loop.run_forever, name="kli-y-rooms", daemon=True).start()
                self._loop = loop
            return self._loop

    def run(self, fn: Callable[[], T], timeout: float = CALL_TIMEOUT) -> T:
        """``fn()`` on the loop thread. When the loop does not start it within ``timeout``,
        it is cancelled and never runs (``TimeoutError``): a change reported as not written is
        not written later; once started it is waited for (it only touches memory)."""
        loop = self._ensure_loop()
        fn = imports.carried(fn)  # a tool's work keeps the tool's import guard on that thread
        fut: concurrent.futures.Future[T] = concurrent.futures.Future()

        def call() -> None:
            if not fut.set_running_or_notify_cancel():
                return
            try:
                fut.set_result(fn())
            except BaseException as exc:
                fut.set_exception(exc)

        loop.call_soon_threadsafe(call)
        try:
            return fut.result(timeout)
        except concurrent.futures.TimeoutError:
            if fut.cancel():
                raise TimeoutError(f"the notebook rooms' thread did not answer in {timeout:g} s "
                                   "(nothing was changed)") from None
            return fut.result()

    def get(self, real: str) -> Room | None:
        room = self._rooms.get(real)
        return room if room is not None and room.alive else None

    def join(self, server: srv.Server, real: str, rel: str) -> Room:
        """The room of notebook ``rel`` (joined once per notebook), or ``RoomError``."""
        room = self.get(real)
        if room is not None:
            return room
        try:
            from jupyter_nbmodel_client import NbModelClient
        except ImportError as exc:
            raise RoomError(f"jupyter-nbmodel-client is not installed ({exc})") from None
        session = srv.collaboration_session(server, rel)
        if session is None:
            raise RoomError("the server has no collaboration session for it "
                            "(jupyter-collaboration is not installed or not enabled)")
        url = srv.room_url(server, session)
        loop = self._ensure_loop()

        async def start() -> Any:
            client = NbModelClient(url, path=rel, username=USERNAME)
            await client.start()
            return client

        try:
            client = asyncio.run_coroutine_threadsafe(start(), loop).result(SYNC_TIMEOUT + 5)
        except Exception as exc:
            raise RoomError(f"could not join its room ({type(exc).__name__}: {exc})") from None
        if not client.synced:
            asyncio.run_coroutine_threadsafe(client.stop(), loop)
            raise RoomError("its room did not send the document in time")
        room = self._rooms[real] = Room(rel, client)
        return room

    def close(self) -> None:
        loop = self._loop
        if loop is None:
            return
        for room in list(self._rooms.values()):
            try:
                asyncio.run_coroutine_threadsafe(room.client.stop(), loop).result(5)
            except Exception:
                pass
        self._rooms.clear()
        loop.call_soon_threadsafe(loop.stop)
