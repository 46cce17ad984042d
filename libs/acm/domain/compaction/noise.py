"""Protocol noise out of a turn: HTTP status lines and codes, headers, debug/trace fields, raw JSON
(rendered as ``key=value`` with the noise keys dropped) and runs of whitespace.

What is left is what a person would read: the business content of a tool output or a message."""

from __future__ import annotations

import json
import re
from typing import Any

# Keys that describe the transport, not the business: never facts.
_NOISE_KEY = re.compile(
    r"^(?:debug|_debug|trace|trace_?id|span_?id|request_?id|req_?id|correlation_?id|x[-_].*|headers?|http.*|"
    r"status_?code|code|latency.*|duration_?ms|elapsed.*|took|etag|server|host|user_?agent|path|method|url|"
    r"_links|links|pagination|page|per_page|next_?cursor|cursor|api_?version|schema|meta|timing|retries|"
    r"cache.*|checksum|hash|signature|nonce|build|runtime|region_?id|shard|node|pid|thread|hostname|"
    # a time measured in a unit of the machine's clock (db_ms, queue_us): how long serving took, not business
    r"\w+_(?:ms|us|ns|msec|usec|nsec|millis|micros|nanos))$",
    re.IGNORECASE,
)
_HTTP_LINE = re.compile(r"^\s*(?:HTTP/\d(?:\.\d)?\s+\d{3}.*|(?:GET|POST|PUT|PATCH|DELETE|HEAD|OPTIONS)\s+/\S*.*)$")
_HEADER_LINE = re.compile(
    r"^\s*(?:Content-Type|Content-Length|Date|Server|Connection|Cache-Control|ETag|Vary|Keep-Alive|"
    r"Transfer-Encoding|Accept|Authorization|X-[\w-]+)\s*:.*$",
    re.IGNORECASE,
)
_DEBUG_LINE = re.compile(r"^\s*(?:\[?\d[\d:\-T. Z]*\]?\s*)?\[?(?:DEBUG|TRACE)\]?\b.*$", re.IGNORECASE)
_INLINE_HTTP = re.compile(
    r"\(?\b(?:HTTP(?:/\d(?:\.\d)?)?\s*\d{3}(?:\s+[A-Z][A-Za-z ]{1,20}?)?|status[_ ]?code[=:]\s*\d{3})\b\)?"
)
_SPACES = re.compile(r"[ \t]+")
_BLANK_LINES = re.compile(r"\n\s*\n+")


def _scalar(value: Any) -> str | None:
    if value is None or value == "" or value == [] or value == {}:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float | str):
        return str(value).strip()
    return None


def render_json(value: Any) -> str:
    """An object as ``k=v, k=v`` (nested objects in braces, lists joined by ``|``), noise keys dropped."""
    if isinstance(value, dict):
        parts: list[str] = []
        for key, item in value.items():
            if _NOISE_KEY.match(str(key)):
                continue
            scalar = _scalar(item)
            if scalar is not None:
                parts.append(f"{key}={scalar}")
                continue
            if isinstance(item, dict):
                inner = render_json(item)
                if inner:
                    parts.append(f"{key}={{{inner}}}")
            elif isinstance(item, list):
                rendered = _render_list(item)
                if rendered:
                    parts.append(f"{key}={rendered}")
        return ", ".join(parts)
    if isinstance(value, list):
        return _render_list(value)
    return _scalar(value) or ""


def _render_list(items: list[Any]) -> str:
    if any(isinstance(x, dict) for x in items):
        return "; ".join(f"{{{r}}}" for r in (render_json(x) for x in items if isinstance(x, dict)) if r)
    return "|".join(r for r in (_scalar(x) for x in items) if r)


def _replace_json(text: str) -> str:
    """Each JSON object or array embedded in the text, rendered; text around it kept."""
    decoder = json.JSONDecoder()
    out: list[str] = []
    i = 0
    while i < len(text):
        ch = text[i]
        if ch in "{[":
            try:
                value, end = decoder.raw_decode(text, i)
            except ValueError:
                out.append(ch)
                i += 1
                continue
            if isinstance(value, dict | list):
                rendered = render_json(value)
                if rendered:
                    out.append(f"{{{rendered}}}" if isinstance(value, dict) else rendered)
                i = end
                continue
        out.append(ch)
        i += 1
    return "".join(out)


def clean(text: str) -> str:
    """The turn without protocol noise; idempotent."""
    text = _replace_json(text)
    lines = [
        line
        for line in text.splitlines()
        if not (_HTTP_LINE.match(line) or _HEADER_LINE.match(line) or _DEBUG_LINE.match(line))
    ]
    text = _INLINE_HTTP.sub("", "\n".join(lines))
    text = _SPACES.sub(" ", text)
    text = _BLANK_LINES.sub("\n", text)
    return "\n".join(line.strip() for line in text.splitlines() if line.strip())


def is_noise_key(key: str) -> bool:
    """A JSON key that describes the transport (status code, trace id, debug field), not the business."""
    return _NOISE_KEY.match(key) is not None
