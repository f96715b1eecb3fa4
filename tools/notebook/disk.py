"""The on-disk notebook store: a notebook nobody has open is read and written as its file.

``commit`` is whole-or-nothing with the files of the same change: every notebook's new text and
every file go through one ``atomic.write_many``, each notebook expected to be still the text it
was loaded from (``Notebook.raw``), each file the bytes the caller verified; otherwise
``atomic.Stale`` and nothing is written. The caller holds ``Workspace.writing`` over the
notebooks' paths from load to commit.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from kli.tools.core.atomic import write_many
from kli.tools.core.jail import Jail
from kli.tools.core.textfile import encode, read_text
from kli.tools.notebook.model import Notebook, NotebookError, parse

MAX_NOTEBOOK_BYTES = 64 * 1024 * 1024  # a notebook is read whole; its outputs are never shown


class DiskNotebooks:
    """``NotebookStore`` over the files of a jail (the notebook nobody has open)."""

    live = False  # the person sees the change when the file is reloaded

    def __init__(self, jail: Jail | None = None) -> None:
        self.jail = jail

    def load(self, real: str) -> Notebook:
        """The notebook at ``real``; the loader's verdicts (``TooLarge`` …), ``OSError``, or
        ``NotebookError`` for a file that is not a notebook."""
        return parse(read_text(real, self.jail, limit=MAX_NOTEBOOK_BYTES).text)

    def commit(
        self,
        notebooks: Sequence[tuple[str, Notebook]],
        files: Sequence[tuple[str, bytes]] = (),
        expected: Mapping[str, bytes | None] | None = None,
    ) -> None:
        changes: list[tuple[str, bytes]] = list(files)
        want: dict[str, bytes | None] = dict(expected or {})
        for real, nb in notebooks:
            changes.append((real, encode(nb.serialize())))
            want[real] = encode(nb.raw)
        write_many(changes, want)


__all__ = ["DiskNotebooks", "NotebookError"]
