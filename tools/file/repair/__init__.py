"""Delimiter repair for the ``edit`` tool: a balance scanner per language (``lisp``,
``python``), the in-memory repair they share (``common``), and the safe / unsafe decision as a
plain value with a named reason (``decide``)."""
