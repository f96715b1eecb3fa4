"""kli.kernel.ai — kli's agent as a Jupyter AI persona (``@kli`` in a Jupyter AI chat).

``kli.kernel.ai.persona`` is the ``BasePersona`` subclass Jupyter AI loads through the entry
point group ``jupyter_ai.personas`` (the ``ai`` extra: ``pip install "kli-kernel[ai]"``); it
imports Jupyter AI's persona manager and is imported only by Jupyter AI. ``kli.kernel.ai.turns``
holds what needs no Jupyter AI: which notebook a message means, the settings, a step as a chat
line. Importing this package imports neither.
"""
