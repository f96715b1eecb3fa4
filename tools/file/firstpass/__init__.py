"""The native first pass of ``search`` and ``ws_grep``: per-file matching-line counts, and the
verdicts and listing that spare the caller its own walk and sniffs.

A folder or glob search starts a native engine over the folder it is about to walk (kli-scan,
built with this package from ``native/``; else the ``ripgrep`` wheel's rg), walks meanwhile,
then reads only the files the engine's counts say can matter. ``details.engine_pass`` names the
engine that answered and ``details.engine_note`` why none did (or why kli-scan did not).

Modules, in the order a search meets them:

- ``driver``: ``FirstPass``, the one driver both tools use (start at the walk, collect, stop;
  the notes); ``Answer`` and its verdict for a file the engine did not read whole.
- ``rust_regex``: the pattern in the syntax both engines read, exact or a known superset.
- ``binaries``: which engine, where its binary is, and whether it may be trusted (the switches
  ``KLI_SEARCH_NO_RG`` and ``KLI_SEARCH_ENGINE=rg``; nothing under the workspace root).
- ``run``: one run of the engine (``start``, ``Running``, ``Counts``, ``listing_for``).
- ``kli_scan`` and ``rg``: each engine's command line and the parsers of what it writes.
- ``sniff``: the cheap look at a file the engine did not settle.
"""

from kli.tools.file.firstpass.driver import Answer, FirstPass

__all__ = ["Answer", "FirstPass"]
