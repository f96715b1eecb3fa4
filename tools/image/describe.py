"""Bounded facts about one live object: type, size, shape and dtype, length.

Shared by ``image_summary`` (one row per name) and ``inspect``. Arrays and data frames are
recognised by the module of their type (numpy, pandas, torch, …), so no attribute of an
arbitrary object is probed; ``len`` is asked of containers only.
"""

from __future__ import annotations

import sys
import types
from collections.abc import Mapping, Sequence, Set
from typing import Any

from kli.tools.process.saferepr import saferepr

ARRAY_MODULES = ("numpy", "pandas", "torch", "xarray", "polars", "jax", "cupy", "dask")
MAX_DTYPES = 6  # distinct column dtypes a data frame's summary names


def type_name(obj: Any) -> str:
    t = type(obj)
    return t.__qualname__ if t.__module__ == "builtins" else f"{t.__module__}.{t.__qualname__}"


def _array_like(obj: Any) -> bool:
    return type(obj).__module__.split(".")[0] in ARRAY_MODULES


def human_bytes(size: int) -> str:
    value = float(size)
    for unit in ("B", "KB", "MB", "GB"):
        if value < 1024 or unit == "GB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{size} B"


def facts(obj: Any) -> dict[str, Any]:
    """JSON-able facts: ``type``, ``size`` (bytes; ``size_kind`` says which), and where they
    apply ``shape``, ``dtype`` / ``dtypes``, ``len``."""
    out: dict[str, Any] = {"type": type_name(obj)}
    if _array_like(obj):
        shape = getattr(obj, "shape", None)
        if isinstance(shape, tuple) and all(isinstance(n, int) for n in shape):
            out["shape"] = list(shape)
        dtype = getattr(obj, "dtype", None)
        if dtype is not None and not callable(dtype):
            out["dtype"] = str(dtype)
        dtypes = getattr(obj, "dtypes", None)
        if "dtype" not in out and dtypes is not None:
            try:
                counts = dtypes.astype(str).value_counts()
                out["dtypes"] = {str(k): int(v) for k, v in list(counts.items())[:MAX_DTYPES]}
            except Exception:
                pass
        nbytes = getattr(obj, "nbytes", None)
        if isinstance(nbytes, int):
            out["size"], out["size_kind"] = nbytes, "data"
        else:
            usage = getattr(obj, "memory_usage", None)
            try:
                if callable(usage):
                    total: Any = usage(index=True, deep=False)
                    total = total.sum() if hasattr(total, "sum") else total
                    out["size"], out["size_kind"] = int(total), "data"
            except Exception:
                pass
    if "size" not in out:
        try:
            out["size"], out["size_kind"] = sys.getsizeof(obj), "shallow"
        except Exception:
            pass
    if "shape" not in out and isinstance(obj, (Sequence, Mapping, Set)) and not isinstance(
        obj, type
    ):
        try:
            out["len"] = len(obj)
        except Exception:
            pass
    return out


def row(name: str, obj: Any, width: int) -> str:
    """One summary line: name, type, shape/dtype or len, size, and a short preview."""
    f = facts(obj)
    bits = [name, f["type"]]
    if "shape" in f:
        bits.append("shape " + "×".join(str(n) for n in f["shape"]))
    if "dtype" in f:
        bits.append(f"dtype {f['dtype']}")
    if "dtypes" in f:
        bits.append("dtypes " + ", ".join(f"{k}×{v}" for k, v in f["dtypes"].items()))
    if "len" in f:
        bits.append(f"len {f['len']}")
    if "size" in f:
        bits.append(human_bytes(f["size"]) + (" data" if f.get("size_kind") == "data" else ""))
    if isinstance(obj, (int, float, complex, bool, str, bytes)) or obj is None:
        bits.append("= " + saferepr(obj))
    elif isinstance(obj, (types.FunctionType, types.BuiltinFunctionType, type)):
        import inspect

        try:
            bits.append(f"{obj.__name__}{inspect.signature(obj)}")
        except (TypeError, ValueError):
            pass
    text = "  ".join(bits)
    return text if len(text) <= width else text[: width - 1] + "…"
