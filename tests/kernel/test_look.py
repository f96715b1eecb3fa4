"""look in a real kernel through jupyter_client: a figure drawn by a cell with the inline
backend (retina) seen from the stored output at the size the notebook shows it and, live,
from the name that keeps it; a pyplot figure under Agg; the activity panel's event carrying a
thumbnail, never the image."""

from __future__ import annotations

import base64
import io
import json
from pathlib import Path
from typing import Any

import pytest

from kli.tools.notebook.pictures import target_size

pytestmark = pytest.mark.kernel
pytest.importorskip("matplotlib")
Image = pytest.importorskip("PIL.Image")


def png_size(b64: str) -> tuple[int, int]:
    with Image.open(io.BytesIO(base64.b64decode(b64))) as img:
        return img.size


def test_an_inline_retina_plot_is_seen_stored_and_live(kernel: Any, kroot: Path) -> None:
    agent, _ = kernel.open_comm("kli.agent", {"label": "looker"})
    ui, _ = kernel.open_comm("kli.ui", {"replay": 0})
    kernel.execute("%matplotlib inline\n%config InlineBackend.figure_formats = ['retina']")
    reply, outputs = kernel.execute(
        "import matplotlib.pyplot as plt\n"
        "fig, ax = plt.subplots()\n"
        "ax.hist([x * x for x in range(300)], bins=30)\n"
        "ax.set_title('Skewed')\n"
        "None")
    assert reply["status"] == "ok"
    shown = [o["content"] for o in outputs if o["msg_type"] == "display_data"
             and "image/png" in o["content"]["data"]]
    assert shown, outputs
    display = shown[0]
    w, h = png_size(display["data"]["image/png"])
    meta = display["metadata"]["image/png"]
    assert (meta["width"], w) == (w // 2, w)  # drawn at twice the size it is shown
    nb = {"cells": [{"cell_type": "code", "id": "plot", "execution_count": 1, "metadata": {},
                     "source": "fig, ax = plt.subplots()",
                     "outputs": [{"output_type": "display_data", **display}]}],
          "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    (kroot / "plots.ipynb").write_text(json.dumps(nb))

    start = len(kernel.seen)
    stored = kernel.call(agent, "look", {"path": "plots.ipynb#plot"})
    assert stored["ok"], stored["text"]
    [image] = stored["images"]
    sent = target_size((w, h), (meta["width"], meta["height"]))
    assert max(sent) <= w // 2  # the shown size (or onto the tile grid below it)
    assert (image["width"], image["height"]) == sent
    assert png_size(image["data"]) == sent or image["mime"] == "image/jpeg"
    assert f"from {w}×{h}" in stored["text"] and image["data"][:20] not in stored["text"]

    # the panel's event: the image's size and a thumbnail, not the image
    event = kernel.wait_for(lambda m: m["msg_type"] == "comm_msg"
                            and m["content"].get("comm_id") == ui
                            and (m["content"]["data"].get("event") or {}).get("tool") == "look",
                            since=start)["content"]["data"]["event"]
    [seen] = event["images"]
    assert seen["thumbnail"].startswith("data:image/png;base64,")
    assert max(png_size(seen["thumbnail"].split(",", 1)[1])) <= 160
    assert "data" not in seen and seen["width"] == sent[0]

    # the inline backend closed pyplot's figure; the name keeps it live
    live = kernel.call(agent, "look", {})
    assert live["ok"], live["text"]
    assert "figure (fig)" in live["text"] and "title 'Skewed'" in live["text"]
    assert len(live["images"]) == 1
    kernel.close_comm(ui)


def test_a_pyplot_figure_under_agg_is_drawn_from_the_image(kernel: Any) -> None:
    agent, _ = kernel.open_comm("kli.agent", {"label": "agg looker"})
    reply, _ = kernel.execute(
        "import matplotlib\nmatplotlib.use('Agg')\nimport matplotlib.pyplot as plt\n"
        "plt.close('all')\n"
        "plt.figure(figsize=(12.8, 9.6), dpi=100)\nplt.plot([3, 1, 2], label='line')\n"
        "plt.legend()\nNone")
    assert reply["status"] == "ok"
    r = kernel.call(agent, "look", {})
    assert r["ok"], r["text"]
    assert "plt figure" in r["text"] and "legend 'line'" in r["text"]
    # the person's magic: the same text, and the images shown in the cell
    reply, outputs = kernel.execute("%kli look")
    assert reply["status"] == "ok"
    kinds = [o["msg_type"] for o in outputs]
    assert "stream" in kinds and "legend 'line'" in "".join(
        o["content"].get("text", "") for o in outputs)
    shown = [o["content"] for o in outputs if o["msg_type"] == "display_data"]
    assert shown and "image/png" in shown[0]["data"]
    assert png_size(shown[0]["data"]["image/png"]) == (r["images"][0]["width"],
                                                       r["images"][0]["height"])
    images = r["images"]
    assert len(images) >= 1
    assert max(images[0]["width"], images[0]["height"]) <= 1024
