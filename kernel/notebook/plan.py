"""What applying a notebook's change to a document changes, cell by cell: a ``Plan`` (cells
updated, removed, (re)inserted; ``Stale`` when a cell the change touches is no longer what it was
read as). One planner for both live stores: the server's Y document (``live``) and a browser
tab's model (``openmodel``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kli.tools.core.atomic import Stale
from kli.tools.notebook.model import Notebook, parse, source_text, stand_in_ids


@dataclass
class Plan:
    new: dict[str, Any]
    new_ids: list[str]
    order: list[str]  # the live document's cell ids now
    update: list[tuple[str, dict[str, Any], dict[str, Any]]]  # (id, loaded cell, new cell)
    remove: list[str]
    place: list[str]  # ids (re)inserted, in the new order
    meta_changed: bool
    expect: dict[str, dict[str, Any]]  # id -> the loaded cell, for cells that must be unchanged


def _kept_in_order(ids: list[str], rank: dict[str, int]) -> set[str]:
    """The largest set of ``ids`` whose ``rank`` order is unchanged (the rest moved)."""
    tails: list[int] = []
    back: list[int] = []
    tail_at: list[int] = []
    for i, cid in enumerate(ids):
        r = rank[cid]
        lo, hi = 0, len(tails)
        while lo < hi:
            mid = (lo + hi) // 2
            if tails[mid] < r:
                lo = mid + 1
            else:
                hi = mid
        back.append(tail_at[lo - 1] if lo else -1)
        if lo == len(tails):
            tails.append(r)
            tail_at.append(i)
        else:
            tails[lo] = r
            tail_at[lo] = i
    kept: set[str] = set()
    i = tail_at[-1] if tail_at else -1
    while i >= 0:
        kept.add(ids[i])
        i = back[i]
    return kept


def plan_against(real: str, cur: list[dict[str, Any]], nb: Notebook) -> Plan:
    """What applying ``nb`` to a document whose cells are now ``cur`` changes (the live
    document's store plans against its cells now; the open model's store against the cells it
    loaded, and the tab checks ``expect``)."""
    old = parse(nb.raw).data
    new = nb.data
    o_cells, n_cells = old["cells"], new["cells"]
    o_ids, n_ids = stand_in_ids(o_cells), stand_in_ids(n_cells)
    o_at = {cid: i for i, cid in enumerate(o_ids)}
    n_at = {cid: i for i, cid in enumerate(n_ids)}
    cur_ids = stand_in_ids(cur)
    cur_at = {cid: i for i, cid in enumerate(cur_ids)}
    removed = [cid for cid in o_ids if cid not in n_at]
    inserted = [cid for cid in n_ids if cid not in o_at]
    common = [cid for cid in n_ids if cid in o_at]
    kept = _kept_in_order(common, o_at)
    moved = [cid for cid in common if cid not in kept]
    update = [(cid, o_cells[o_at[cid]], n_cells[n_at[cid]]) for cid in common
              if cid not in moved and o_cells[o_at[cid]] != n_cells[n_at[cid]]]
    touched = {cid: o_cells[o_at[cid]] for cid in removed + moved}
    for cid, o, n in update:
        if source_text(o.get("source")) != source_text(n.get("source")) or \
                o.get("cell_type") != n.get("cell_type"):
            touched[cid] = o
        elif cid not in cur_at:
            touched[cid] = o
    for cid, o in touched.items():
        if cid not in cur_at:
            raise Stale(real, f"cell {cid} was deleted in the live document since it was read")
        c = cur[cur_at[cid]]
        if source_text(c.get("source")) != source_text(o.get("source")) or \
                c.get("cell_type") != o.get("cell_type"):
            raise Stale(real, f"cell {cid} was changed in the live document since it was read "
                              "(the person's text is kept)")
    meta_changed = any(old.get(k) != new.get(k) for k in ("metadata", "nbformat_minor"))
    return Plan(new, n_ids, list(cur_ids), update, removed + moved,
                [cid for cid in n_ids if cid in inserted or cid in moved], meta_changed, touched)
