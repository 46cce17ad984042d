"""strip_control: terminal escape sequences leave no fragments; printable text, tabs and newlines stay."""

from __future__ import annotations

import pytest

from acm.domain.text import strip_control


@pytest.mark.parametrize(
    ("raw", "clean"),
    [
        ("\x1b[31merror\x1b[0m: disk full", "error: disk full"),  # SGR colour
        ("\x1b[1;38;5;196mred\x1b[m", "red"),  # 256 colours, empty reset
        ("\x1b[38;2;255;0;0mtrue\x1b[39m colour", "true colour"),  # 24-bit colour
        ("50%\x1b[2K\x1b[1G100%", "50%100%"),  # erase line, cursor to column 1
        ("\x1b[?25lhidden cursor\x1b[?25h", "hidden cursor"),  # private-mode parameters
        ("\x1b]0;build #12\x07done", "done"),  # OSC window title ended by BEL
        ("\x1b]2;title\x1b\\done", "done"),  # OSC ended by ST
        ("see \x1b]8;;https://example.com\x1b\\the docs\x1b]8;;\x1b\\.", "see the docs."),  # OSC 8 hyperlink
        ("\x1bP1$r0m\x1b\\ok", "ok"),  # DCS
        ("\x1b_private\x1b\\ok", "ok"),  # APC
        ("\x1b(Bplain\x1b)0", "plain"),  # charset designation (nF escapes)
        ("\x1b7saved\x1b8", "saved"),  # save / restore cursor (Fp escapes)
        ("\x1b=keypad\x1b>", "keypad"),
        ("\x9b31mC1 CSI\x9b0m", "C1 CSI"),  # 8-bit CSI
        ("\x9d0;title\x9cafter", "after"),  # 8-bit OSC and ST
        ("trailing escape\x1b", "trailing escape"),  # lone ESC
        ("cut \x1b[31", "cut "),  # a CSI cut off by the end of the text
        ("\x1b]0;no terminator\nnext line", "\nnext line"),  # an unterminated OSC ends at the newline
        ("nul\x00bell\x07bs\x08del\x7f", "nulbellbsdel"),  # C0 and DEL
        ("c1\x80\x85\x8dend", "c1end"),  # C1 controls that introduce nothing
    ],
)
def test_sequences_are_removed_whole(raw: str, clean: str) -> None:
    assert strip_control(raw) == clean


@pytest.mark.parametrize(
    "text",
    [
        "",
        "plain text, nothing to do",
        "tab\tnewline\nreturn\r\n",
        "Lisbon é ü ß 東京 🙂 — “quoted” [1] (a) {b} ~^_`",
        "a literal [31m without ESC is text",
        "PO-20261028-0098 for 125,000.00 CNY; path C:\\tmp\\x",
    ],
)
def test_printable_text_is_unchanged(text: str) -> None:
    assert strip_control(text) == text


def test_idempotent_and_no_fragment_survives() -> None:
    raw = "\x1b[1m\x1b[31mFAIL\x1b[0m tests/test_x.py::t \x1b]8;;file:///x\x07link\x1b]8;;\x07 \x1b[K"
    once = strip_control(raw)
    assert once == "FAIL tests/test_x.py::t link "
    assert strip_control(once) == once
    assert "[" not in once and "]" not in once and "\x1b" not in once
