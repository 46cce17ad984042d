"""The forms a turn's text arrives in, made scannable: width/space normalisation and JSON decoding (pure).

- `normalise_width`: full-width digits and letters ("４１１１", "ｐｗｄ") and odd spaces (NBSP, ideographic space, thin
  spaces) become their ASCII form, one character for one, so offsets found on the result are offsets in
  the original text.
- `json_parts` / `map_json_strings`: a turn's content, a metadata value or a tool-call argument may be JSON
  (`json.dumps` writes Chinese as \\uXXXX escapes, and a tool call's "arguments" is JSON inside a JSON
  string). Detectors scan the decoded strings, each with the key it sits under (a cue such as "验证码" or
  "pwd" is often only in the key); changed strings are encoded back the way they came.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

# Full-width digits, letters and the characters of numbers and addresses (+ - . @ _ /); not the CJK
# punctuation ("，" "：" "（"), which detectors read as the end of a value.
_WIDTH = {i: i - 0xFEE0 for i in (*range(0xFF10, 0xFF1A), *range(0xFF21, 0xFF3B), *range(0xFF41, 0xFF5B))}
_WIDTH.update({ord(c): ord(c) - 0xFEE0 for c in "＋－．＠＿／＃"})
_WIDTH.update(
    {
        ord(c): 0x20
        for c in "\u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u202f\u205f\u3000"
    }
)


def normalise_width(text: str) -> str:
    """Full-width digits and letters to ASCII and Unicode spaces to " ": same length, same offsets."""
    return text if text.isascii() else text.translate(_WIDTH)


# --- JSON ----------------------------------------------------------------------------------------

_MAX_DEPTH = 6  # JSON in a string in JSON ...: deeper than this is scanned as plain text


def loads_container(text: str) -> Any | None:
    """The object or array `text` holds (whitespace around allowed), else None."""
    stripped = text.strip()
    if len(stripped) < 2 or stripped[0] not in "{[" or stripped[-1] not in "}]":
        return None
    try:
        value = json.loads(stripped)
    except ValueError:
        return None
    return value if isinstance(value, (dict, list)) else None


def dumps_like(value: Any, original: str) -> str:
    """Encode `value` as `original` was encoded: \\uXXXX escapes if it used them, compact if it was."""
    ensure_ascii = original.isascii()
    compact = '":"' in original or '","' in original or ('": ' not in original and '", ' not in original)
    separators = (",", ":") if compact else (", ", ": ")
    return json.dumps(value, ensure_ascii=ensure_ascii, separators=separators)


@dataclass(frozen=True, slots=True)
class JsonString:
    """One string of a JSON document: where it is, and the key (or parent key) it sits under."""

    text: str
    key: str  # "" at the top level
    is_key: bool


def json_parts(value: Any, key: str = "", depth: int = 0) -> Iterator[JsonString]:
    """Every key and string (numbers too: an OTP may be an int) in a decoded JSON value, nested JSON decoded."""
    if isinstance(value, dict):
        for k, v in value.items():
            yield JsonString(str(k), key, True)
            yield from json_parts(v, str(k), depth + 1)
    elif isinstance(value, list):
        for item in value:
            yield from json_parts(item, key, depth + 1)
    elif isinstance(value, str):
        inner = loads_container(value) if depth < _MAX_DEPTH else None
        if inner is not None:
            yield from json_parts(inner, key, depth + 1)
        else:
            yield JsonString(value, key, False)
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        yield JsonString(str(value), key, False)


# fn(text, key, is_key) -> the new text (the same object when nothing changed)
StringMap = Callable[[str, str, bool], str]


def map_json_strings(value: Any, fn: StringMap, key: str = "", depth: int = 0) -> Any:
    """`value` with every key and string (and number) replaced by fn's answer; nested JSON re-encoded."""
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for k, v in value.items():
            new_key = fn(str(k), key, True)
            out[new_key] = map_json_strings(v, fn, str(k), depth + 1)
        return out
    if isinstance(value, list):
        return [map_json_strings(item, fn, key, depth + 1) for item in value]
    if isinstance(value, str):
        inner = loads_container(value) if depth < _MAX_DEPTH else None
        if inner is not None:
            mapped = map_json_strings(inner, fn, key, depth + 1)
            return value if mapped == inner else dumps_like(mapped, value)
        return fn(value, key, False)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        text = str(value)
        new = fn(text, key, False)
        return value if new == text else new
    return value


def embedded_json(text: str) -> Iterator[tuple[int, int, Any]]:
    """JSON objects and arrays inside prose ("Tool returned: {...}"): (start, end, decoded value)."""
    decoder = json.JSONDecoder()
    pos = 0
    while True:
        starts = [i for i in (text.find('{"', pos), text.find("[{", pos), text.find('["', pos)) if i >= 0]
        if not starts:
            return
        start = min(starts)
        try:
            value, end = decoder.raw_decode(text, start)
        except ValueError:
            pos = start + 1
            continue
        yield start, end, value
        pos = end


_ESCAPE = {"n": "\n", "t": "\t", "r": "\r", '"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f"}


def unescape_with_offsets(text: str) -> tuple[str, list[int], list[int]]:
    """JSON string escapes (\\uXXXX, \\n, \\") decoded in text that is not valid JSON (a truncated tool output).

    Returns the decoded text and, for each of its characters, the start and end offset in `text`, so a span
    found on the decoded text maps back: (starts[a], ends[b - 1])."""
    out: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch == "\\" and i + 1 < n:
            nxt = text[i + 1]
            if nxt == "u" and i + 6 <= n and _hex4(text, i + 2):
                code, width = int(text[i + 2 : i + 6], 16), 6
                if 0xD800 <= code < 0xDC00 and text[i + 6 : i + 8] == "\\u" and _hex4(text, i + 8):
                    low = int(text[i + 8 : i + 12], 16)
                    if 0xDC00 <= low < 0xE000:  # a surrogate pair, as json.dumps writes an emoji: one character
                        code, width = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00), 12
                # A lone surrogate is no character (UTF-8 cannot hold it): the replacement character stands in.
                out.append("\ufffd" if 0xD800 <= code < 0xE000 else chr(code))
                starts.append(i)
                ends.append(i + width)
                i += width
                continue
            if nxt in _ESCAPE:
                out.append(_ESCAPE[nxt])
                starts.append(i)
                ends.append(i + 2)
                i += 2
                continue
        out.append(ch)
        starts.append(i)
        ends.append(i + 1)
        i += 1
    return "".join(out), starts, ends


def _hex4(text: str, at: int) -> bool:
    return len(text) >= at + 4 and all(c in "0123456789abcdefABCDEF" for c in text[at : at + 4])


_SURROGATE = re.compile("[\ud800-\udfff]")


def without_lone_surrogates(text: str) -> str:
    """``text`` with surrogate pairs joined and lone surrogates replaced by U+FFFD: JSON may escape half a pair
    ("\\ud83d" alone is valid JSON), and no UTF-8 writer (SQLite, the sentence splitter, a log) takes one."""
    if not _SURROGATE.search(text):
        return text
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def has_escapes(text: str) -> bool:
    return "\\u" in text or '\\"' in text


def decoded_strings(text: str, with_keys: bool = True) -> list[str]:
    """The texts a detector should read in `text`: its JSON strings (each after its key) or the text itself.

    A JSON document gives one "key: value" line per string; prose with JSON inside gives the prose and the
    JSON's lines; escaped text that is not JSON is unescaped. Without keys, each string alone."""
    value = loads_container(text)
    if value is not None:
        return [without_lone_surrogates(_line(part, with_keys)) for part in json_parts(value)]
    pieces: list[str] = []
    pos = 0
    prose: list[str] = []
    for start, end, inner in embedded_json(text):
        prose.append(text[pos:start])
        pieces.extend(_line(part, with_keys) for part in json_parts(inner))
        pos = end
    prose.append(text[pos:])
    rest = "".join(prose)
    if has_escapes(rest):
        rest = unescape_with_offsets(rest)[0]
    rest, pieces = without_lone_surrogates(rest), [without_lone_surrogates(p) for p in pieces]
    return [rest, *pieces] if pieces else [rest]


def _line(part: JsonString, with_key: bool) -> str:
    if part.is_key or not part.key or not with_key:
        return part.text
    return f"{part.key.replace('_', ' ')}: {part.text}"
