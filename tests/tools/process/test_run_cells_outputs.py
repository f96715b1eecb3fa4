"""run_cells.Outputs: what a running cell's outputs keep, live and at the end, is bounded."""

from __future__ import annotations

from kli.tools.process.run_cells import MAX_OUTPUTS, STREAM_HEAD_CHARS, STREAM_TAIL_CHARS, Outputs


def test_writes_of_one_stream_are_merged_and_streams_keep_their_order() -> None:
    out = Outputs()
    out.stream("stdout", "a\n")
    out.stream("stdout", "b\n")
    out.stream("stderr", "warn\n")
    out.stream("stdout", "c\n")
    _v, got = out.render()
    assert got == [{"output_type": "stream", "name": "stdout", "text": "a\nb\n"},
                   {"output_type": "stream", "name": "stderr", "text": "warn\n"},
                   {"output_type": "stream", "name": "stdout", "text": "c\n"}]


def test_a_flood_of_lines_keeps_the_head_and_the_tail_and_says_what_was_left_out() -> None:
    out = Outputs()
    for i in range(100_000):
        out.stream("stdout", f"line {i}\n")
    _v, got = out.render()
    assert len(got) == 1
    text = got[0]["text"]
    assert len(text) < STREAM_HEAD_CHARS + STREAM_TAIL_CHARS + 300
    assert text.startswith("line 0\nline 1\n")
    assert text.endswith("line 99999\n")
    assert "run_cells left out" in text
    kept = text.split("\n")
    marker = next(line for line in kept if line.startswith("[… run_cells left out"))
    # every line is either kept or counted as left out
    left_out = int(marker.split("left out ")[1].split(" line")[0])
    head_lines = kept.index(marker)
    tail_lines = len(kept) - head_lines - 2  # the marker, and the empty string after the last \n
    partial = 0 if kept[head_lines - 1].endswith(str(head_lines - 1)) else 1
    assert head_lines + tail_lines + left_out - partial == 100_000


def test_the_tail_starts_at_a_line_and_the_text_is_the_same_when_rendered_twice() -> None:
    out = Outputs()
    out.stream("stdout", "x" * (STREAM_HEAD_CHARS + 3 * STREAM_TAIL_CHARS))
    out.stream("stdout", "\nlast line\n")
    first = out.render()[1]
    assert first == out.render()[1]
    assert first[0]["text"].endswith("…]\nlast line\n")


def test_outputs_past_the_cap_are_counted_but_the_result_and_the_error_are_kept() -> None:
    out = Outputs()
    for i in range(MAX_OUTPUTS + 50):
        out.add({"output_type": "display_data", "data": {"text/plain": str(i)}, "metadata": {}})
    out.stream("stdout", "printed\n")
    out.add({"output_type": "error", "ename": "ValueError", "evalue": "x", "traceback": []},
            always=True)
    _v, got = out.render()
    assert len(got) == MAX_OUTPUTS + 2  # the error, and the note
    assert got[-2]["ename"] == "ValueError"
    assert got[-1]["name"] == "stderr" and "left out 51 more output(s)" in got[-1]["text"]


def test_clear_output_wait_clears_when_the_next_output_comes() -> None:
    out = Outputs()
    out.stream("stdout", "old\n")
    out.clear(wait=True)
    assert out.render()[1][0]["text"] == "old\n"
    out.stream("stdout", "new\n")
    assert out.render()[1] == [{"output_type": "stream", "name": "stdout", "text": "new\n"}]
    out.clear()
    assert out.render()[1] == []


def test_every_change_raises_the_version() -> None:
    out = Outputs()
    seen = [out.render()[0]]
    out.stream("stdout", "a")
    seen.append(out.render()[0])
    out.add({"output_type": "display_data", "data": {}, "metadata": {}})
    seen.append(out.render()[0])
    out.clear()
    seen.append(out.render()[0])
    assert seen == sorted(set(seen))


def test_update_display_changes_the_outputs_of_its_display_id_in_place() -> None:
    out = Outputs()
    out.display({"text/plain": "0%"}, None, display_id="bar")
    out.stream("stdout", "working\n")
    out.display({"text/plain": "other"})
    for i in range(1, 1001):
        out.display({"text/plain": f"{i // 10}%"}, None, display_id="bar", update=True)
    got = out.render()[1]
    assert [o["output_type"] for o in got] == ["display_data", "stream", "display_data"]
    assert got[0]["data"] == {"text/plain": "100%"} and got[2]["data"] == {"text/plain": "other"}
    out.display({"text/plain": "x"}, None, display_id="gone", update=True)  # shown elsewhere
    assert len(out.render()[1]) == 3
