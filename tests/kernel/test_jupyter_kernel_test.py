"""The official jupyter_kernel_test suite for the ``kli`` kernel, every sample field filled."""
# ruff: noqa: RUF012  (the base class declares the samples as plain class attributes)

from __future__ import annotations

import shutil
import tempfile
import time
import unittest

import jupyter_kernel_test as jkt
import pytest
from jupyter_client.manager import start_new_kernel

from kli.kernel import EDIT_MIME

pytestmark = pytest.mark.kernel


class KliKernelTests(jkt.KernelTests):
    kernel_name = "kli"
    root = ""

    @classmethod
    def setUpClass(cls) -> None:
        # the kernel's working directory is the tools' root: keep the magics' files out of
        # the repository
        cls.root = tempfile.mkdtemp(prefix="kli-jkt-")
        cls.km, cls.kc = start_new_kernel(kernel_name=cls.kernel_name, cwd=cls.root)

    @classmethod
    def tearDownClass(cls) -> None:
        super().tearDownClass()
        shutil.rmtree(cls.root, ignore_errors=True)
    language_name = "python"
    file_extension = ".py"

    code_hello_world = "print('hello, world')"
    code_stderr = "import sys; print('to stderr', file=sys.stderr)"

    completion_samples = [
        {"text": "zi", "matches": {"zip"}},
        {"text": "import collections; collections.Ord", "matches": {"OrderedDict"}},
    ]
    complete_code_samples = ["1", "print('hello, world')", "def f(x):\n    return x\n",
                             "%kli tools"]
    incomplete_code_samples = ["print('''hello", "def f(x):\n    x = 1", "for i in range(3):"]
    invalid_code_samples = ["import = 7q", "x = (1 +]"]

    code_page_something = "print?"
    code_generate_error = "raise ValueError('kli test error')"

    code_execute_result = [
        {"code": "1 + 2 + 3", "result": "6"},
        {"code": "'k' + 'li'", "result": "'kli'"},
        {"code": "[n * n for n in range(4)]", "result": "[0, 1, 4, 9]"},
    ]
    code_display_data = [
        {"code": "from IPython.display import HTML, display; display(HTML('<b>kli</b>'))",
         "mime": "text/html"},
        {"code": "from IPython.display import Math, display; display(Math(r'\\alpha'))",
         "mime": "text/latex"},
        # the kernel's own edit bundle, through the magic
        {"code": "%%kli write jkt_sample.txt\nsample\n", "mime": EDIT_MIME},
    ]

    code_history_pattern = "1 + 2*"
    supported_history_operations = ("tail", "range", "search")

    code_inspect_sample = "zip"
    code_clear_output = "from IPython.display import clear_output; clear_output()"


class KliIopubWelcomeTests(jkt.IopubWelcomeTests):
    kernel_name = "kli"
    support_iopub_welcome = True

    @classmethod
    def setUpClass(cls) -> None:
        """The base class subscribes while the kernel may still be starting: ipykernel sends
        the welcome from its IOPub thread once it sees the subscription, and a status message
        published in between came first (1 failure in a full run of tests/kernel). Wait until
        the kernel answers on its shell channel alone (no IOPub subscription yet), so that
        nothing else is being published when the test subscribes."""
        super().setUpClass()
        probe = cls.km.client()
        probe.start_channels(shell=True, iopub=False, stdin=False, hb=False, control=False)
        try:
            msg_id = probe.kernel_info()
            while True:
                reply = probe.get_shell_msg(timeout=60)
                if reply["parent_header"].get("msg_id") == msg_id:
                    break
        finally:
            probe.stop_channels()
        time.sleep(0.5)  # the reply's idle status goes out after the reply itself


if __name__ == "__main__":  # pragma: no cover
    unittest.main()
