"""kli.tools.notebook.outputs: outputs bounded, never base64."""

from __future__ import annotations

import base64

import pytest

from kli.tools.notebook.outputs import image_size, render, summary


def _png(w: int, h: int) -> str:
    import struct
    import zlib

    def chunk(t: bytes, d: bytes) -> bytes:
        return struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d))

    raw = b"".join(b"\x00" + b"\x00" * w * 3 for _ in range(h))
    data = (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))
    return base64.encodebytes(data).decode()  # with newlines, as some writers store it


def test_png_size_comes_from_its_header_even_split_over_lines() -> None:
    assert image_size("image/png", _png(640, 480)) == (640, 480)


def test_jpeg_and_gif_sizes() -> None:
    gif = base64.b64encode(b"GIF89a" + (300).to_bytes(2, "little") + (200).to_bytes(2, "little")
                           + b"\x00" * 20).decode()
    assert image_size("image/gif", gif) == (300, 200)
    # A minimal JPEG header: SOI, APP0, SOF0 with height 120, width 160.
    jpeg = (b"\xff\xd8" + b"\xff\xe0\x00\x10JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00"
            + b"\xff\xc0\x00\x11\x08\x00\x78\x00\xa0\x03\x01\x22\x00\x02\x11\x01\x03\x11\x01")
    assert image_size("image/jpeg", base64.b64encode(jpeg).decode()) == (160, 120)
    assert image_size("image/png", "bm90IGFuIGltYWdl") is None


def test_a_rich_output_is_one_line_and_never_base64() -> None:
    png = _png(64, 32)
    outs = [{"output_type": "display_data", "data": {"image/png": png, "text/plain": "<Fig>"}}]
    rows = render(outs)
    assert rows == [f"[1] display [image/png 64×32, {len(''.join(png.split())) * 3 // 4} B]"]
    assert png.split()[0] not in summary(outs)


def test_long_streams_show_head_and_tail() -> None:
    text = "".join(f"line {i}\n" for i in range(100))
    rows = render([{"output_type": "stream", "name": "stdout", "text": text}])
    assert rows[0] == "[1] stdout (100 lines):"
    assert "  line 0" in rows and "  line 99" in rows and "  line 50" not in rows
    assert any("85 lines not shown" in r for r in rows)


def test_an_error_shows_its_name_value_and_last_frames_without_colour() -> None:
    tb = [f"\x1b[0;31mframe {i}\x1b[0m" for i in range(10)]
    outs = [{"output_type": "error", "ename": "KeyError", "evalue": "'k'", "traceback": tb}]
    rows = render(outs)
    assert rows[0] == "[1] error KeyError: 'k'"
    assert rows[-1] == "  frame 9" and "  frame 6" not in rows
    assert summary(outs) == "error KeyError: 'k'"


def test_an_html_table_is_counted_from_a_real_pandas_frame() -> None:
    pd = pytest.importorskip("pandas")
    html = pd.DataFrame({c: range(20) for c in "abcde"}).to_html()
    outs = [{"output_type": "execute_result", "execution_count": 1,
             "data": {"text/html": html, "text/plain": "..."}, "metadata": {}}]
    assert summary(outs) == "[text/html table 20×5]"
