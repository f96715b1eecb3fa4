"""The picture budget (kli.tools.notebook.pictures) on real images: matplotlib figures drawn
with Agg, Pillow-made JPEG and animated GIF, an SVG; scaled to the shown size and the long-edge
cap, re-encoded under the byte cap, never upscaled."""

from __future__ import annotations

import base64
import io
import random
from typing import Any

import pytest

from kli.tools.notebook import pictures

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
Image = pytest.importorskip("PIL.Image")


def figure_png(width_in: float = 6.4, height_in: float = 4.8, dpi: int = 200) -> bytes:
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width_in, height_in), dpi=dpi)
    ax = fig.subplots()
    ax.hist([x * x / 50 for x in range(-200, 200)], bins=30)
    ax.set_title("Skewed")
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    return buf.getvalue()


def size_of(data: bytes) -> tuple[int, int]:
    with Image.open(io.BytesIO(data)) as img:
        return img.size


def test_a_retina_png_is_sent_at_the_size_the_notebook_shows_it_on_the_tile_grid() -> None:
    png = figure_png()
    assert size_of(png) == (1280, 960)
    output = {"output_type": "display_data",
              "data": {"image/png": base64.b64encode(png).decode(), "text/plain": "<Figure>"},
              "metadata": {"image/png": {"width": 640, "height": 480}}}
    [(mime, pic)] = pictures.fit_output(output, label="nb.ipynb#k1 output [1]")
    assert mime == "image/png" and pic.part is not None
    # shown at 640×480; 640 is within 20% over one 512-px tile: 512×384, one tile not two
    assert (pic.part.width, pic.part.height) == (512, 384)
    assert size_of(pic.part.data) == (512, 384)
    assert pic.source == (1280, 960) and "from 1280×960" in pic.line()
    assert len(pic.part.data) < len(png) and pic.part.label == "nb.ipynb#k1 output [1]"
    assert pic.part.thumbnail is not None
    assert max(size_of(pic.part.thumbnail)) == pictures.THUMB_EDGE


@pytest.mark.parametrize(("size", "shown", "sent"), [
    ((1280, 960), (640, 480), (512, 384)),  # retina: the shown size, then one tile
    ((1280, 960), None, (1024, 768)),  # the cap; 768 is not within 20% of 512
    ((534, 413), None, (512, 395)),  # just over a tile: onto it
    ((1000, 600), None, (853, 512)),  # the short edge onto the grid: 2 tiles, not 4
    ((700, 394), None, (700, 394)),  # one tile would take 27% off: kept
    ((300, 200), None, (300, 200)),  # small: never scaled up
])
def test_the_size_sent(size: tuple[int, int], shown: tuple[int, int] | None,
                       sent: tuple[int, int]) -> None:
    assert pictures.target_size(size, shown) == sent


def test_a_plot_goes_as_a_palette_png_far_smaller_than_the_original() -> None:
    png = figure_png()
    pic = pictures.fit(png, "image/png", shown=(640, 480))
    assert pic.part is not None and pic.part.mime == "image/png"
    with Image.open(io.BytesIO(pic.part.data)) as img:
        assert img.mode == "P"
    assert len(pic.part.data) * 3 < len(png)


def test_a_large_image_without_a_shown_size_is_capped_on_its_long_edge() -> None:
    pic = pictures.fit(figure_png(8, 4, 300), "image/png")  # 2400×1200
    assert pic.part is not None
    assert (pic.part.width, pic.part.height) == (pictures.MAX_EDGE, pictures.MAX_EDGE // 2)


def test_a_small_image_is_never_scaled_up_and_keeps_its_smaller_bytes() -> None:
    png = figure_png(2, 1.5, 100)
    pic = pictures.fit(png, "image/png")
    assert pic.part is not None and (pic.part.width, pic.part.height) == (200, 150)
    assert len(pic.part.data) <= len(png)


def test_the_byte_cap_scales_down_or_re_encodes_until_it_fits() -> None:
    rnd = random.Random(35).randbytes(900 * 700 * 3)  # noise: PNG cannot shrink it
    noise = Image.frombytes("RGB", (900, 700), rnd)
    buf = io.BytesIO()
    noise.save(buf, "PNG")
    pic = pictures.fit(buf.getvalue(), "image/png", max_bytes=60 * 1024)
    assert pic.part is not None and len(pic.part.data) <= 60 * 1024
    assert pic.part.mime == "image/jpeg" or pic.part.width < 900


def test_jpeg_and_the_first_frame_of_an_animated_gif() -> None:
    buf = io.BytesIO()
    Image.new("RGB", (300, 200), (200, 30, 30)).save(buf, "JPEG")
    jpeg = pictures.fit(buf.getvalue(), "image/jpeg")
    assert jpeg.part is not None and (jpeg.part.width, jpeg.part.height) == (300, 200)
    frames = [Image.new("RGB", (120, 80), c) for c in ((255, 0, 0), (0, 0, 255))]
    buf = io.BytesIO()
    frames[0].save(buf, "GIF", save_all=True, append_images=frames[1:], duration=100)
    gif = pictures.fit(buf.getvalue(), "image/gif")
    assert gif.part is not None and gif.part.mime in ("image/png", "image/jpeg")
    with Image.open(io.BytesIO(gif.part.data)) as first:
        r, _g, b = first.convert("RGB").getpixel((60, 40))
    assert r > 200 and b < 50  # the red first frame, not the blue second


def test_an_svg_output_is_rendered_at_its_size() -> None:
    try:
        import cairosvg  # noqa: F401
    except (ImportError, OSError):  # not installed, or no libcairo on this machine
        pytest.skip("cairosvg cannot render here")
    svg = ('<svg xmlns="http://www.w3.org/2000/svg" width="300" height="150">'
           '<rect width="300" height="150" fill="#3060c0"/></svg>')
    output: dict[str, Any] = {"output_type": "display_data", "metadata": {},
                              "data": {"image/svg+xml": svg.splitlines(True)}}
    [(mime, pic)] = pictures.fit_output(output)
    assert mime == "image/svg+xml" and pic.part is not None
    assert (pic.part.width, pic.part.height) == (300, 150)


def test_what_is_not_an_image_is_a_problem_named_not_an_exception() -> None:
    pic = pictures.fit(b"not an image at all", "image/png")
    assert pic.part is None and "not a readable image" in pic.problem
    assert pic.line().startswith("not shown: ")
    assert pictures.fit_output({"output_type": "stream", "text": "x"}) == []
    assert pictures.fit_output({"output_type": "display_data",
                                "data": {"text/plain": "1"}}) == []
