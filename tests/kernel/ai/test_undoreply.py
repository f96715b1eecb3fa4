"""The persona's words after ``@kli undo`` speak to the person: a held undo says it waits for
them (not "Took back"), a done one names what came back and where Redo is, a refusal says
where Undo anyway is — never the agent's ``force=true`` or ``redo change=…``."""

from __future__ import annotations

from kli.kernel.ai.undoreply import undo_label, undo_reply


def test_an_undo_held_for_review_says_it_waits_for_the_person() -> None:
    said, taken = undo_reply(2, "chat a.chat turn 2", True, "undo: held",
                             {"status": "pending", "proposal": "p7"})
    assert said.startswith("The undo of turn 2 (chat a.chat turn 2) waits for you: Accept it")
    assert "p7" in said and "Took back" not in said and not taken


def test_a_done_undo_names_files_and_image_names_and_what_was_not_taken_back() -> None:
    details = {"files": [{"path": "a.txt"}], "image": [{"rebound": ["df"], "created": ["x"]}],
               "not_restored": ["big was changed in place and is too large to restore: re-run cell c3"]}
    text = "undo: took back change ch-1; a.txt as before it. This is itself a change; redo it with redo change=ch-1."
    said, taken = undo_reply(1, "chat a.chat turn 1", True, text, details)
    assert said.startswith("Took back turn 1 (chat a.chat turn 1): a.txt, x, df as before the turn.")
    assert "Not taken back: big was changed in place" in said and taken
    assert "redo change=" not in said and "Redo on its entries in the kli panel's Timeline" in said


def test_a_refusal_speaks_to_the_person_not_the_agent() -> None:
    details = {"error": "changed", "panel_text": "undo refused: a.txt changed since change ch-1 "
               "(someone edited it after). Nothing was changed. Look at it first; to put the "
               "old bytes back anyway, press Undo anyway (what is there now is kept, so that "
               "can be undone too)."}
    said, taken = undo_reply(3, "chat a.chat turn 3", False, "… repeat with force=true …", details)
    assert "force=true" not in said and "Undo this turn, then Undo anyway" in said and not taken


def test_the_undo_session_is_labelled_as_the_chats_persona_undoing_a_turn() -> None:
    assert undo_label("kli", "chat a.chat turn 2", 2) == "kli in chat a.chat (undoing turn 2)"
    assert "(undo)" not in undo_label("kli", "chat turn 3.chat turn 12", 12)
    assert undo_label("kli", "chat turn 3.chat turn 12", 12) == "kli in chat turn 3.chat (undoing turn 12)"
