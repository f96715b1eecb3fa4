"""The one driver of the first pass, for search and ws_grep: started when the caller's walk
begins, collected (or stopped) after it, with one set of words for why a search went without it.

Contract::

    first = FirstPass(jail, translation, max_bytes)   (translation None: the pattern is beyond it)
    first.start(top, name_glob) -> Running | None     (the walk's hook: walk.top's answer)
    first.listing(pattern, began) -> Listing | None   (kli-scan's, standing in for that walk)
    first.pending -> bool                             (started, not yet collected)
    first.finish(deadline, trust_log=..., sniff_meanwhile=rels) -> Answer | None
    first.walk_stopped() / first.close() / first.cancel()
    first.note -> str                                  (details.engine_note)

``Answer.verdict(rel)`` settles a file the engine did not read whole: its own verdict where it
is trusted (kli-scan's always; rg's log when the walk saw every name rg saw and none held a
newline), else what was sniffed while it ran, else a sniff now.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from kli.tools.core.jail import Jail
from kli.tools.file.firstpass import run, sniff
from kli.tools.file.firstpass.rust_regex import Translation
from kli.tools.file.walk import Listing

# details.engine_note: why a search went without its first pass (or stopped it).
NO_TRANSLATION = "the pattern uses a construct rg cannot read the same way"
ONE_FILE = "one file named: searched directly"
WALK_STOPPED = "the walk stopped at its bound: searched without rg"
ENDED_FIRST = "the search ended before rg's pass did"


@dataclass(frozen=True)
class Answer:
    """The engine's counts, whether they are the pattern's own (``Translation.exact``), and the
    verdicts on files it left out (trusted ones, or those sniffed while it ran)."""

    counts: run.Counts
    exact: bool
    verdicts: Mapping[str, str | None]
    root: str  # the workspace root, with a trailing "/"
    cap: int  # the caller's size cap (the engine's max_bytes)

    def verdict(self, rel: str) -> str | None:
        """"binary", "large" or None (read it) for a file the engine did not read whole."""
        if rel in self.verdicts:
            return self.verdicts[rel]
        return sniff.sniff(self.root + rel, self.cap)


class FirstPass:
    """One search's first pass (module docstring)."""

    def __init__(self, jail: Jail, translation: Translation | None, max_bytes: int) -> None:
        self.jail, self.translation, self.max_bytes = jail, translation, max_bytes
        self._running: run.Running | None = None
        self._note = ONE_FILE if translation is not None else NO_TRANSLATION

    @property
    def note(self) -> str:
        """Why the search went without the first pass, or what the engine said ("" if all
        served)."""
        return self._note

    @property
    def pending(self) -> bool:
        return self._running is not None

    def done(self) -> bool:
        """Whether a pending engine has exited (``finish`` would not wait)."""
        return self._running is not None and self._running.done()

    def start(self, top: str, name_glob: str | None) -> run.Running | None:
        """Start the engine over ``top`` (``walk.top``'s answer), just before the walk."""
        if self.translation is None:
            return None
        got = run.start(self.jail, self.translation, top, max_bytes=self.max_bytes,
                        name_glob=name_glob)
        if isinstance(got, str):
            self._note = got
            return None
        self._running, self._note = got, ""
        return got

    def listing(self, pattern: str, began: float) -> Listing | None:
        """``run.listing_for`` the walk of ``pattern`` begun at ``began``."""
        return run.listing_for(self._running, self.jail, pattern, began)

    def finish(self, deadline: float, *, trust_log: bool,
               sniff_meanwhile: list[str] | None = None) -> Answer | None:
        """The engine's answer, or None (``note`` says why). ``trust_log``: the walk saw every
        name rg saw, none with a newline (``WalkResult.newline_names``), so rg's log says which
        files it left out as binary or large; else, while rg runs, the files of
        ``sniff_meanwhile`` it will likely not list are sniffed (``sniff.sniff_meanwhile``)."""
        running, self._running = self._running, None
        if running is None or self.translation is None:
            return None
        root = self.jail.root.rstrip("/") + "/"
        sniffed: dict[str, str | None] = {}
        if not trust_log and not running.scan and sniff_meanwhile is not None:
            sniffed = sniff.sniff_meanwhile(running, root, sniff_meanwhile, self.max_bytes,
                                            deadline)
        got = running.finish(deadline)
        if isinstance(got, str):
            self._note = got
            return None
        self._note = got.note
        trusted: Mapping[str, str | None] = got.verdicts
        return Answer(got, self.translation.exact,
                      trusted if trust_log or got.exact_names else sniffed, root, self.max_bytes)

    def walk_stopped(self) -> None:
        """The walk hit its bound: the engine, reading the whole folder, would only cost time."""
        if self._running is not None:
            self.cancel()
            self._note = WALK_STOPPED

    def close(self) -> None:
        """The search is over: an engine still pending is stopped."""
        if self._running is not None:
            self.cancel()
            self._note = ENDED_FIRST

    def cancel(self) -> None:
        """Stop a pending engine (the walk failed, the search no longer needs it)."""
        running, self._running = self._running, None
        if running is not None:
            running.cancel()
