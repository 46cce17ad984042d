"""Decoding the strings a turn carries (acm.domain.textforms): JSON escapes of characters beyond the BMP come as
surrogate pairs ("\\ud83d\\ude4f", as json.dumps writes an emoji), and half a pair is valid JSON. What detectors,
the sentence splitter and the stores read must be UTF-8 writable: a pair is one character, a lone half U+FFFD."""

from __future__ import annotations

import json

from acm.domain.sentences import split
from acm.domain.textforms import decoded_strings, unescape_with_offsets, without_lone_surrogates


def _writable(texts: list[str]) -> None:
    for t in texts:
        t.encode("utf-8")  # raises on a lone surrogate
        split(t)


def test_a_pair_in_truncated_json_is_one_character_and_maps_back_to_its_twelve_source_characters() -> None:
    raw = json.dumps({"note": "thanks 🙏 谢谢, card 4111 1111 1111 1111"})[:-5]  # truncated: not JSON
    decoded, starts, ends = unescape_with_offsets(raw)
    at = decoded.index("🙏")
    assert raw[starts[at] : ends[at]] == "\\ud83d\\ude4f"
    card = decoded.index("4111")
    assert raw[starts[card] : ends[card + 3]] == "4111"
    _writable(decoded_strings(raw))


def test_a_lone_half_becomes_the_replacement_character_in_json_and_in_escaped_prose() -> None:
    whole = '{"note": "half \\ud83d pair", "other": "low \\ude4f alone"}'
    assert decoded_strings(whole) == ["note", "note: half \ufffd pair", "other", "other: low \ufffd alone"]
    prose = 'tool said \\"half \\ud83d\\" and \\u8c22 then cut'
    assert decoded_strings(prose) == ['tool said "half \ufffd" and 谢 then cut']
    embedded = 'see {"a": "x \\udc00 y"} and more'
    _writable(decoded_strings(embedded))


def test_text_without_surrogates_is_returned_as_is() -> None:
    text = "plain 谢谢 🙏 text"
    assert without_lone_surrogates(text) is text
    assert without_lone_surrogates("a\ud83d\ude4fb") == "a🙏b"
    assert without_lone_surrogates("a\ud83db") == "a\ufffdb"


def test_the_injection_checks_pieces_of_such_tool_outputs_are_sentences_not_an_error() -> None:
    # Before: the sentence splitter raised on a lone surrogate, so ingest failed the turn (retried, dead-lettered).
    from acm.domain.injection_meaning import pieces

    whole = json.dumps({"ticket": "T-88", "note": "Customer wrote 🙏 and says the courier never came, half \ud83d"})
    for raw in (whole, whole[:-3], whole[:-12]):
        got = pieces(raw)
        assert got and any("courier never came" in p for p in got)
        _writable(got)
