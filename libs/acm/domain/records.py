"""Tool output as data: the records a JSON tool output holds, each a small memory retrievable by its id.

A tool that lists 14 SKUs returns 14 records, not one 10,000-token text and not 14 pinned entities. Which
values are records is read off the JSON's shape, never off field names of one domain:
- every object of a top-level array is a record (arrays of arrays are flattened);
- a top-level object is one record, unless it is a container (no id of its own, holding an array of
  objects): then each object of its arrays is a record, and its own scalar fields one more;
- objects and arrays inside a record stay inside it, rendered compactly ("passengers={first_name=Mia, …}"):
  they belong to that record (an order's line item is not the product's own record).
A record's key is its id field ("id", "*_id", "*Id", "*_number", "sku", "code", "uuid", "reference"), else
the object key it was found under when that looks like an id. Protocol noise (status codes, trace and
request ids, debug fields) is dropped (see compaction.noise).

Rendered as ``<key> {k=v, k=v}``, a record is cut into parts of at most ``MAX_RECORD_WEIGHT`` (about 300
tokens), each part naming the key, so that every memory fits a small budget."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from acm.domain.compaction.noise import is_noise_key, render_json
from acm.domain.identifiers import is_identifier

# Characters (CJK weighing 2.5) of one memory: ≤ ~200 o200k tokens for ids, numbers and prose, so that a record
# (or a part of it) fits the memories' share of a 500-token context.
MAX_RECORD_WEIGHT = 480
MAX_RECORDS_PER_TURN = 500  # a 60 KiB inventory is ~300 records; beyond this the turn is not data but a dump
MAX_CONTAINER_SCALARS = 4  # counts, cursors, a query echo: more scalars than that and the object is a record
_KEY_FIELD = re.compile(r"^(?:id|uuid|sku|code|key|reference|ref|number|.*_id|.*Id|.*_number|.*_code|.*_ref)$")
_SPACES = re.compile(r"\s+")
# The names a listing's envelope counts it by ("total": 58, "page_size": 6, "has_more": true): by their shape (a
# number or a flag beside a listing, never inside a record), not by any domain's words.
_LISTING_COUNTER = re.compile(
    r"^(?:total|count|size|limit|offset|skip|start|returned|more|has_?more|has_?next|next|prev(?:ious)?|"
    r"(?:total|result|item|record|row|page)s?_?(?:count|size|total|results|items|records|rows|pages)|"
    r"num_?\w+|\w+_count)$",
    re.IGNORECASE,
)


@dataclass(frozen=True, slots=True)
class Record:
    key: str  # its identifier, "" when it has none
    fields: tuple[tuple[str, str], ...]  # (name, rendered value), in the tool's order

    def body(self) -> str:
        return ", ".join(f"{k}={v}" for k, v in self.fields)

    def render(self) -> str:
        return f"{self.key} {{{self.body()}}}" if self.key else f"{{{self.body()}}}"


def weight(text: str) -> int:
    """Length with CJK characters weighing 2.5 (each is one or two tokens; a Latin character a quarter)."""
    return len(text) + (3 * sum(1 for ch in text if "\u3400" <= ch <= "\u9fff")) // 2


def _scalar(value: Any) -> str | None:
    if value is None or value == "" or isinstance(value, dict | list):
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    return _SPACES.sub(" ", str(value)).strip() or None


def _value(value: Any) -> str | None:
    """A field's value as a record shows it: scalars as they are, objects in braces, arrays joined by "|"."""
    scalar = _scalar(value)
    if scalar is not None:
        return scalar
    if isinstance(value, dict):
        inner = render_json(_without_echoed_keys(value))
        return f"{{{inner}}}" if inner else None
    if isinstance(value, list):
        if any(isinstance(x, dict | list) for x in value):
            parts = [p for p in (_value(x) for x in value) if p]
            return "[" + "; ".join(parts) + "]" if parts else None
        joined = "|".join(s for s in (_scalar(x) for x in value) if s)
        return joined or None
    return None


def _without_echoed_keys(obj: dict[str, Any]) -> dict[str, Any]:
    """An id-keyed map ({"gift_card_7": {"id": "gift_card_7", "amount": 22}}) without the fields that only
    repeat their entry's key: the same facts in fewer tokens."""
    out: dict[str, Any] = {}
    for key, child in obj.items():
        if isinstance(child, dict):
            child = {k: v for k, v in child.items() if not (isinstance(v, str | int) and str(v) == str(key))}
        out[key] = child
    return out


def _key_of(obj: dict[str, Any], under: str) -> str:
    for name, value in obj.items():
        if _KEY_FIELD.match(str(name)) and not is_noise_key(str(name)):
            scalar = _scalar(value)
            if scalar and len(scalar) <= 80:
                return scalar
    return under if under and is_identifier(under) else ""


def _record(obj: dict[str, Any], under: str = "") -> Record | None:
    fields = []
    for name, value in obj.items():
        if is_noise_key(str(name)):
            continue
        rendered = _value(value)
        if rendered is not None:
            fields.append((str(name), rendered))
    return Record(_key_of(obj, under), tuple(fields)) if fields else None


def _is_container(obj: dict[str, Any]) -> bool:
    """An envelope around listings ({"items": [...], "total": 14, "request_id": …}): no id of its own, no
    nested object, a few scalars at most, and an array of at least two objects, or of one that has an id (a
    look-up answered as a listing of one, {"data": [{"po_id": …}]}: that object is the record, with its id)."""
    if _key_of(obj, "") or any(isinstance(v, dict) and not _protocol(str(k), v) for k, v in obj.items()):
        return False  # (a pagination or debug object is noise, not content)
    scalars = sum(not isinstance(v, list) and not is_noise_key(str(k)) for k, v in obj.items())
    listing = any(isinstance(v, list) and _listed(v) for v in obj.values())
    return listing and scalars <= MAX_CONTAINER_SCALARS


def _listed(items: list[Any]) -> bool:
    objects = [x for x in items if isinstance(x, dict)]
    return len(objects) >= 2 or (len(objects) == 1 and bool(_key_of(objects[0], "")))


def records_of(value: Any) -> list[Record]:
    """The records of one decoded JSON value (see the module docstring)."""
    out: list[Record] = []
    if isinstance(value, list):
        for item in value:
            if isinstance(item, list):
                out += records_of(item)
            elif isinstance(item, dict):
                found = _record(item)
                if found is not None:
                    out.append(found)
        return out
    if not isinstance(value, dict):
        return out
    if not _is_container(value):
        found = _record(value)
        return [found] if found is not None else []
    scalars = {k: v for k, v in value.items() if not isinstance(v, list | dict)}
    head = _record(_without_counters(scalars)) if scalars else None
    if head is not None:
        out.append(head)
    for name, item in value.items():
        if (isinstance(item, dict) and _protocol(str(name), item)) or is_noise_key(str(name)):
            continue  # the envelope's debug, headers or pagination object: protocol, not a record
        if isinstance(item, list):
            out += records_of(item)
        elif isinstance(item, dict):
            out += [r for r in [_record(_without_counters(item))] if r is not None]
    return out


def _protocol(name: str, obj: dict[str, Any]) -> bool:
    """An object that only describes the answer: under a noise key, or holding nothing but counters, timings
    and empty values ({"paging": {"offset": 0, "limit": 20, "total_count": 58}})."""
    return is_noise_key(name) or not any(
        v not in (None, "") and not is_noise_key(str(k)) for k, v in _without_counters(obj).items()
    )


def _without_counters(obj: dict[str, Any]) -> dict[str, Any]:
    """An envelope's own fields without the numbers that count its listing (how many, from where, more to
    come): they describe the answer, not the business, and change with every page."""
    return {k: v for k, v in obj.items() if not (isinstance(v, int | float) and _LISTING_COUNTER.match(str(k)))}


def _json_spans(text: str) -> Iterator[tuple[int, int, Any]]:
    decoder = json.JSONDecoder()
    i = 0
    while i < len(text):
        start = min((j for j in (text.find("{", i), text.find("[", i)) if j >= 0), default=-1)
        if start < 0:
            return
        try:
            value, end = decoder.raw_decode(text, start)
        except ValueError:
            i = start + 1
            continue
        if isinstance(value, dict | list):
            yield start, end, value
        i = end


def json_values(text: str) -> Iterator[Any]:
    """Each JSON object or array in ``text`` (a tool output may wrap JSON in prose or log lines)."""
    for _start, _end, value in _json_spans(text):
        yield value


def outside_json(text: str) -> str:
    """``text`` without its JSON objects and arrays: the prose or log lines a tool wrote around them."""
    out, at = [], 0
    for start, end, _value in _json_spans(text):
        out.append(text[at:start])
        at = end
    out.append(text[at:])
    return "".join(out)


def tool_records(text: str) -> list[Record]:
    """The records of a tool output's JSON, at most MAX_RECORDS_PER_TURN; [] when it holds no JSON."""
    out: list[Record] = []
    for value in json_values(text):
        out += records_of(value)
        if len(out) >= MAX_RECORDS_PER_TURN:
            return out[:MAX_RECORDS_PER_TURN]
    return out


def parts(record: Record, max_weight: int = MAX_RECORD_WEIGHT) -> list[str]:
    """The record rendered in parts of at most ``max_weight``, each naming the record's key; a value longer
    than a part is cut (its start is what identifies it)."""
    whole = record.render()
    if weight(whole) <= max_weight:
        return [whole]
    room = max_weight - weight(record.key) - 16  # " (part 12/34) {" and "}"
    chunks: list[list[str]] = [[]]
    used = 0
    for name, value in record.fields:
        piece = f"{name}={value}"
        if weight(piece) > room:
            piece = cut(piece, room - 1) + "…"
        if chunks[-1] and used + weight(piece) + 2 > room:
            chunks.append([])
            used = 0
        chunks[-1].append(piece)
        used += weight(piece) + 2
    n = len(chunks)
    head = f"{record.key} " if record.key else ""
    return [f"{head}(part {i + 1}/{n}) {{{', '.join(c)}}}" for i, c in enumerate(chunks)]


def cut(text: str, max_weight: int) -> str:
    """The longest start of ``text`` that weighs at most ``max_weight``."""
    used = 0
    for i, ch in enumerate(text):
        used += weight(ch)
        if used > max_weight:
            return text[:i]
    return text


def parse_fields(rendered: str) -> dict[str, str]:
    """The fields of a record as ``render`` wrote it ("KEY {a=1, b={c=2, d=3}}"): the inverse used to merge a
    later partial result into the record it updates."""
    start = rendered.find("{")
    if start < 0 or not rendered.endswith("}"):
        return {}
    body = rendered[start + 1 : -1]
    fields: dict[str, str] = {}
    depth, begin = 0, 0
    ext = body + ", "
    for i, ch in enumerate(ext):
        if ch in "{[":
            depth += 1
        elif ch in "}]":
            depth -= 1
        elif depth == 0 and ext[i : i + 2] == ", " and re.match(r"[\w.\-]+=", ext[i + 2 :] or "x="):
            name, sep, value = body[begin:i].partition("=")
            if sep:
                fields[name] = value
            begin = i + 2
    return fields


def merged(old: dict[str, str], new: Sequence[tuple[str, str]]) -> tuple[tuple[str, str], ...]:
    """The record after a later result: the new values replace the old, fields it does not repeat stay."""
    out = dict(old)
    out.update(new)
    return tuple(out.items())
