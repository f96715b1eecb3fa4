"""look on a Workspace whose image is this process: live matplotlib figures (Agg) found in
pyplot and in names, a cell's stored image outputs, an image file, and the refusals that say
what to call instead."""

from __future__ import annotations

import base64
import io
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from kli.tools import Workspace
from kli.tools.notebook import pictures

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
Image = pytest.importorskip("PIL.Image")


@pytest.fixture
def ws(root: Path) -> Iterator[Workspace]:
    import matplotlib.pyplot as plt

    plt.close("all")
    yield Workspace(str(root))
    plt.close("all")


def size_of(data: bytes) -> tuple[int, int]:
    with Image.open(io.BytesIO(data)) as img:
        return img.size


def test_a_live_pyplot_figure_is_drawn_now_with_its_axes_described(ws: Workspace) -> None:
    r = ws.call("eval", {"code": (
        "import matplotlib.pyplot as plt\n"
        "plt.figure(figsize=(6.4, 4.8), dpi=200)\n"
        "plt.hist([x * x for x in range(100)], bins=20, label='squares')\n"
        "plt.title('Skewed'); plt.xlabel('value'); plt.ylabel('count'); plt.legend()\n"
        "None")})
    assert r.ok, r.text
    look = ws.call("look", {})
    assert look.ok, look.text
    [part] = look.images
    assert part.mime == "image/png" and part.data.startswith(b"\x89PNG")
    assert max(part.width, part.height) <= pictures.MAX_EDGE
    assert size_of(part.data) == (part.width, part.height)
    assert "figure (plt figure 1)" in look.text
    assert "title 'Skewed'" in look.text and "x 'value'" in look.text
    assert "20 patches" in look.text and "legend 'squares'" in look.text
    assert "iVBOR" not in look.text  # never base64 in the text
    assert look.details["images"][0]["width"] == part.width


def test_a_figure_kept_in_a_name_is_found_after_pyplot_closed_it(ws: Workspace) -> None:
    r = ws.call("eval", {"code": (
        "import matplotlib.pyplot as plt\nfig, ax = plt.subplots()\nax.plot([1, 3, 2])\n"
        "plt.close('all')\nNone")})
    assert r.ok, r.text
    look = ws.call("look", {})
    assert look.ok and "figure (fig)" in look.text and len(look.images) == 1
    by_axes = ws.call("look", {"name": "ax"})
    assert by_axes.ok and "1 line" in by_axes.text and len(by_axes.images) == 1


def test_no_live_figure_says_how_to_look_at_a_stored_plot(ws: Workspace) -> None:
    r = ws.call("look", {})
    assert not r.ok and r.details["error"] == "no_figure"
    assert "path='nb.ipynb#CELL_ID'" in r.text and not r.images


def test_a_cells_stored_image_outputs_and_output_n(ws: Workspace, root: Path) -> None:
    from matplotlib.figure import Figure

    fig = Figure(figsize=(6.4, 4.8), dpi=200)
    fig.subplots().plot([0, 1, 4, 9])
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    png = base64.b64encode(buf.getvalue()).decode()
    nb = {"cells": [{"cell_type": "code", "id": "plot", "execution_count": 1, "metadata": {},
                     "source": "plt.plot([0, 1, 4, 9])", "outputs": [
                         {"output_type": "execute_result", "execution_count": 1, "metadata": {},
                          "data": {"text/plain": "[<Line2D>]"}},
                         {"output_type": "display_data", "data": {"image/png": png,
                                                                  "text/plain": "<Figure>"},
                          "metadata": {"image/png": {"width": 640, "height": 480}}}]},
                    {"cell_type": "code", "id": "text", "execution_count": 2, "metadata": {},
                     "source": "1", "outputs": []}],
          "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    (root / "nb.ipynb").write_text(json.dumps(nb))
    r = ws.call("look", {"path": "nb.ipynb#plot"})
    assert r.ok, r.text
    [part] = r.images
    assert (part.width, part.height) == (512, 384) and part.label == "nb.ipynb#plot output [2]"
    assert "[2]: image/png 512×384 (from 1280×960)" in r.text
    one = ws.call("look", {"path": "nb.ipynb#plot", "output": 2})
    assert one.ok and len(one.images) == 1
    none = ws.call("look", {"path": "nb.ipynb#plot", "output": 1})
    assert not none.ok and none.details["error"] == "no_image" and "look with no" in none.text
    bad = ws.call("look", {"path": "nb.ipynb#plot", "output": 3})
    assert not bad.ok and bad.details["error"] == "bad_output"
    whole = ws.call("look", {"path": "nb.ipynb"})
    assert not whole.ok and "nb.ipynb#CELL_ID" in whole.text
    # the plain read stays text: one line for the image, as before
    read = ws.call("read", {"path": "nb.ipynb#plot"})
    assert "[image/png 1280×960" in read.text and not read.images


def test_an_image_file_and_a_file_that_is_not_one(ws: Workspace, root: Path) -> None:
    Image.new("RGB", (2000, 1000), (10, 120, 10)).save(root / "big.png")
    r = ws.call("look", {"path": "big.png"})
    assert r.ok and (r.images[0].width, r.images[0].height) == (1024, 512)
    (root / "notes.txt").write_text("hi")
    bad = ws.call("look", {"path": "notes.txt"})
    assert not bad.ok and bad.details["error"] == "not_image"


def test_a_path_needs_file_read_as_well(root: Path) -> None:
    Image.new("RGB", (10, 10)).save(root / "a.png")
    ws = Workspace(str(root), settings={"capabilities": ["image/inspect"]})
    r = ws.call("look", {"path": "a.png"})
    assert not r.ok and r.details["error"] == "denied" and "file/read" in r.text


def test_the_result_survives_json_as_a_kernel_reply_carries_it(ws: Workspace) -> None:
    from kli.tools.core.result import ToolResult

    ws.call("eval", {"code": "import matplotlib.pyplot as plt\nplt.plot([1, 2])\nNone"})
    look = ws.call("look", {})
    back = ToolResult.from_json(json.loads(json.dumps(look.to_json())))
    assert back.images == look.images
    assert "images" not in ws.call("eval", {"code": "1"}).to_json()
