"""atheris: ws_patch's parser takes any text to a patch or a PatchParseError, and the ladder
finds spans inside the text for any search string.

    python fuzz/fuzz_ws_patch.py -runs=100000
"""

from __future__ import annotations

import atheris

with atheris.instrument_imports():
    from kli.tools.ws import ladder, patch_parse, splice


def test_one_input(data: bytes) -> None:
    fdp = atheris.FuzzedDataProvider(data)
    text = fdp.ConsumeUnicodeNoSurrogates(2048)
    try:
        patch_parse.parse(text)
    except patch_parse.PatchParseError as exc:
        assert str(exc)
    old = fdp.ConsumeUnicodeNoSurrogates(200)
    new = fdp.ConsumeUnicodeNoSurrogates(200)
    match = ladder.seek(text, old)
    for span in match.spans:
        assert 0 <= span.start <= span.end <= len(text)
    if match.count == 1:
        try:
            out, _n = splice.apply(text, match, new, old=old)
        except splice.DoesNotFit:
            return
        span = match.spans[0]
        assert out.startswith(text[: span.start]) and out.endswith(text[span.end :])


if __name__ == "__main__":
    from _common import run

    run(test_one_input)
