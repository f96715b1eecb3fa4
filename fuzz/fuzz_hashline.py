"""atheris: the hashline grammar parses any text into a patch or a PatchSyntaxError.

    python fuzz/fuzz_hashline.py -runs=100000 [corpus_dir]
"""

from __future__ import annotations

import atheris

with atheris.instrument_imports():
    from kli.tools.file import hashline


def test_one_input(data: bytes) -> None:
    text = atheris.FuzzedDataProvider(data).ConsumeUnicodeNoSurrogates(4096)
    try:
        patch = hashline.parse(text)
    except hashline.PatchSyntaxError as exc:
        assert str(exc)
        return
    assert patch.sections


if __name__ == "__main__":
    from _common import run

    run(test_one_input)
