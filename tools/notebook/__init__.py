"""The notebook as a surface of the tools: a ``.ipynb`` parsed into cells, its outputs
summarised, and the store that loads notebooks and writes change sets (on disk here; a host may
put a live-document store in its place: ``kli.tools.roles.NotebookStore``).

Nothing here renders anchors or knows about sessions: ``kli.tools.file.cellview`` shows cells as
``LINE:HH|`` rows, and the tools (read, search, edit, cells, ws_*) use it.
"""
