"""Run a notebook cell's source in the kernel's image as a cell, capturing its outputs as
nbformat outputs (the ``run_cells`` tool's host side, ``kli.tools.roles.CellRunner``).

It runs through IPython (``shell.run_cell``, history stored), so the cell gets the next
execution count, magics and ``!`` lines work, ``_`` / ``Out`` are updated, as for a cell the
person runs. Outputs are captured in order — stdout / stderr streams (consecutive writes of one
stream merged), ``display()`` and ``clear_output()``, the execute result, the error with
IPython's traceback — and not sent to iopub: the tool writes them into the notebook document,
where the person sees them. The call must run on the kernel's main thread between cells (the
tool touches the image: the kernel queues it behind a running cell). A time budget stops the
cell as ``eval``'s does (SIGALRM on the main thread); the kernel's interrupt stops it too.
"""

from __future__ import annotations

import io
import sys
from typing import Any

from kli.tools.process.eval import _Budget, _Deadline
from kli.tools.process.run_cells import CellRun


class _Stream(io.TextIOBase):
    def __init__(self, name: str, outputs: list[dict[str, Any]]) -> None:
        self.name_ = name
        self.outputs = outputs

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        if not text:
            return 0
        last = self.outputs[-1] if self.outputs else None
        if last and last.get("output_type") == "stream" and last.get("name") == self.name_:
            last["text"] += text
        else:
            self.outputs.append({"output_type": "stream", "name": self.name_, "text": text})
        return len(text)

    def flush(self) -> None:
        pass


class _DisplayPub:
    """Stands in for the shell's display publisher while a cell runs."""

    is_publishing = False

    def __init__(self, outputs: list[dict[str, Any]], real: Any) -> None:
        self.outputs = outputs
        self.real = real
        self.wait_clear = False

    def __getattr__(self, name: str) -> Any:
        return getattr(self.real, name)

    def publish(self, data: dict[str, Any], metadata: dict[str, Any] | None = None,
                *args: Any, **kwargs: Any) -> None:
        if self.wait_clear:
            self.outputs.clear()
            self.wait_clear = False
        self.outputs.append({"output_type": "display_data", "data": dict(data),
                             "metadata": dict(metadata or {})})

    def clear_output(self, wait: bool = False) -> None:
        if wait:
            self.wait_clear = True
        else:
            self.outputs.clear()


class ShellRunner:
    """``CellRunner`` over a kli kernel's IPython shell."""

    def __init__(self, kernel: Any) -> None:
        self.kernel = kernel

    def run(self, source: str, timeout: float) -> CellRun:
        shell = self.kernel.shell
        outputs: list[dict[str, Any]] = []
        count = int(shell.execution_count)
        real_hook = shell.displayhook

        def hook(value: Any = None) -> None:
            if value is None:
                return
            data, md = shell.display_formatter.format(value)
            outputs.append({"output_type": "execute_result", "execution_count": count,
                            "data": data, "metadata": md})
            real_hook.update_user_ns(value)

        def traceback(etype: Any, evalue: BaseException, stb: list[str]) -> None:
            outputs.append({"output_type": "error", "ename": getattr(etype, "__name__", str(etype)),
                            "evalue": str(evalue), "traceback": list(stb)})

        saved = (sys.stdout, sys.stderr, shell.display_pub, shell.display_trap.hook,
                 shell.__dict__.get("_showtraceback"))
        budget = _Budget(timeout)
        status = "ok"
        try:
            sys.stdout, sys.stderr = _Stream("stdout", outputs), _Stream("stderr", outputs)
            shell.display_pub = _DisplayPub(outputs, saved[2])
            shell.display_trap.hook = hook
            shell._showtraceback = traceback
            with budget.running():
                result = shell.run_cell(source, store_history=True, silent=False)
        except _Deadline:  # landed outside the cell's own code
            result = None
        finally:
            sys.stdout, sys.stderr = saved[0], saved[1]
            shell.display_pub = saved[2]
            shell.display_trap.hook = saved[3]
            if saved[4] is None:
                shell.__dict__.pop("_showtraceback", None)
            else:
                shell._showtraceback = saved[4]
        error = None if result is None else (result.error_in_exec or result.error_before_exec)
        if budget.fired:
            status = "timeout"
            outputs[:] = [o for o in outputs if not (o.get("output_type") == "error"
                                                     and o.get("ename") == "_Deadline")]
            outputs.append({"output_type": "error", "ename": "TimeoutError",
                            "evalue": f"the cell was stopped after {timeout:g} s "
                                      "(run_cells timeout); the image may be partly changed",
                            "traceback": []})
        elif isinstance(error, KeyboardInterrupt):
            status = "interrupted"
        elif error is not None:
            status = "error"
        return CellRun(count if int(shell.execution_count) > count else None, outputs, status)
