"""The tools around a person's review and the record of changes: wait for a decision on a
held call (``await_decision``), list the recorded changes (``changes``), take one back
(``undo``) and put it back (``redo``). The mechanisms they use — proposals and decisions, the
checkpoint store and the timeline — are core's (``kli.tools.core.approval``,
``kli.tools.core.undo``)."""
