"""Rich outputs read as a person sees them in a read of one cell (kli.tools.notebook.outputs):
a DataFrame's HTML table as a compact text table with its shape, Markdown and LaTeX as text, a
widget by its model's state (saved in the notebook, or live in this process) — while the
notebook read's one-line summary stays as small as it was."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kli.tools import Workspace
from kli.tools.notebook.outputs import render, summary, table_lines, widget_lookup

pd = pytest.importorskip("pandas")

WIDGET = "application/vnd.jupyter.widget-view+json"


def frame_output(df: Any, max_rows: int = 10) -> dict[str, Any]:
    with pd.option_context("display.max_rows", max_rows):
        data = {"text/html": df._repr_html_(), "text/plain": repr(df)}
    return {"output_type": "execute_result", "execution_count": 1, "metadata": {}, "data": data}


def test_a_long_dataframe_reads_as_its_shape_and_first_and_last_rows() -> None:
    df = pd.DataFrame({"a": range(1000), "b": [i * i for i in range(1000)]})
    rows = render([frame_output(df)])
    assert rows[0] == ("[1] Out[1] table, 1000 rows × 2 columns (first 5 and last 3 rows "
                       "shown):")
    body = [r.split() for r in rows[1:]]
    assert body[0] == ["a", "b"] and body[1] == ["0", "0", "0"]
    assert ["…"] in body and body[-1] == ["999", "999", "998001"]
    assert len(rows) == 1 + 1 + 5 + 1 + 3
    assert summary([frame_output(df)]) == "[text/html table 11×2]"  # the header line: as before


def test_a_small_table_is_whole_and_wide_cells_and_columns_are_cut() -> None:
    df = pd.DataFrame({f"c{i}": ["x" * 40] for i in range(15)})
    lines = table_lines(df._repr_html_())
    assert lines is not None and lines[0] == "table, 1 rows × 15 columns:"
    header = lines[1].split()
    assert header[-1] == "…" and len(header) == 9 + 1 - 1  # index blank: 9 names then …
    assert "x" * 23 + "…" in lines[2] and "x" * 25 not in lines[2]
    assert table_lines("<p>no table</p>") is None


def test_markdown_and_latex_read_as_text() -> None:
    outs = [{"output_type": "display_data", "metadata": {},
             "data": {"text/markdown": "# Result\nThe mean is **4.2**", "text/plain": "<md>"}},
            {"output_type": "display_data", "metadata": {},
             "data": {"text/latex": "$\\\\bar{x} = 4.2$", "text/plain": "<latex>"}}]
    rows = render(outs)
    assert rows == ["[1] display text/markdown (2 lines):", "  # Result",
                    "  The mean is **4.2**", "[2] display text/latex (1 line):",
                    "  $\\\\bar{x} = 4.2$"]


def test_a_widget_reads_by_its_saved_state_in_a_cell_read(tmp_path: Path) -> None:
    state = {"model_name": "IntSliderModel", "model_module": "@jupyter-widgets/controls",
             "state": {"value": 7, "min": 0, "max": 20, "step": 1, "description": "bins",
                       "layout": "IPY_MODEL_x"}}
    nb = {"cells": [{"cell_type": "code", "id": "w", "execution_count": 1, "metadata": {},
                     "source": "IntSlider(7)", "outputs": [
                         {"output_type": "display_data", "metadata": {},
                          "data": {WIDGET: {"model_id": "m1", "version_major": 2},
                                   "text/plain": "IntSlider(value=7)"}}]}],
          "metadata": {"widgets": {"application/vnd.jupyter.widget-state+json": {
              "state": {"m1": state}, "version_major": 2, "version_minor": 0}}},
          "nbformat": 4, "nbformat_minor": 5}
    (tmp_path / "w.ipynb").write_text(json.dumps(nb))
    r = Workspace(str(tmp_path)).call("read", {"path": "w.ipynb#w"})
    assert r.ok, r.text
    assert ("[1] display widget IntSlider: description 'bins', value 7, min 0, max 20, step 1"
            in r.text)
    unknown = render([{"output_type": "display_data",
                       "data": {WIDGET: {"model_id": "zz"}, "text/plain": "x"}}])
    assert unknown == ["[1] display widget zz (its state is not known here: not saved in the "
                       "notebook)"]


def test_a_live_widget_reads_by_its_current_value() -> None:
    widgets = pytest.importorskip("ipywidgets")
    slider = widgets.IntSlider(value=3, min=1, max=9, description="k")
    slider.value = 5
    out = {"output_type": "display_data",
           "data": {WIDGET: {"model_id": slider.model_id}, "text/plain": "IntSlider"}}
    [row] = render([out], widget_lookup({}))
    assert row == "[1] display widget IntSlider: description 'k', value 5, min 1, max 9, step 1"
    slider.close()
