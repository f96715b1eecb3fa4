"""The activity panel shows what the agent looked at, in a real JupyterLab and Chromium: a
`look` call's row carries a thumbnail of the plot its model was handed, decoded by the browser,
its hover saying what and how large. Screenshot: tests/artifacts/looked-row.png."""

from __future__ import annotations

from typing import Any

import pytest

from tests.waiting import wait_until

pytestmark = pytest.mark.browser
pytest.importorskip("matplotlib")


def test_a_look_row_shows_a_thumbnail_of_the_plot(lab: Any) -> None:
    from kli import client

    lab.open("looked.ipynb", ["x = 1"])
    panel = lab.activity_panel(320)
    agent = client.connect(str(lab.connection_file()), label="looking agent", timeout=30)
    try:
        made = agent.call("eval", {"code": (
            "import matplotlib\nmatplotlib.use('Agg')\nimport matplotlib.pyplot as plt\n"
            "plt.figure()\nplt.hist([x * x for x in range(400)], bins=30)\n"
            "plt.title('Skewed')\nNone")})
        assert made.ok, made.text
        looked = agent.call("look", {})
        assert looked.ok and len(looked.images) == 1, looked.text
        row = panel.locator(".kli-Row[data-tool='look']").first
        row.wait_for()
        img = row.locator(".kli-Row-looked img")
        img.first.wait_for()
        assert img.count() == 1
        wait_until(lambda: img.evaluate("i => i.complete && i.naturalWidth > 0"),
                   "the thumbnail to be decoded")
        assert img.evaluate("i => i.naturalWidth") <= 160
        title = img.get_attribute("title") or ""
        assert title.startswith("The agent looked at ") and "sent to the model" in title
        assert f"{looked.images[0].width}×{looked.images[0].height}" in title
        box = img.bounding_box()
        assert box is not None and 20 <= box["height"] <= 60
        lab.screenshot("looked-row", panel)
        # a call that looked at nothing has no thumbnail
        assert agent.call("read", {"path": "looked.ipynb"}).ok
        read_row = panel.locator(".kli-Row[data-tool='read']").first
        read_row.wait_for()
        assert read_row.locator(".kli-Row-looked").count() == 0
    finally:
        agent.close()
