"""Text hygiene for stored content: terminal escape sequences and control characters out, whole.

Agents paste tool output, and tool output carries colours, cursor moves, window titles and hyperlinks
(ECMA-48 / xterm). Removing only the control bytes leaves their printable tails in memory ("[31m",
"]0;title"), which then match keyword searches and cost tokens. `strip_control` removes each sequence as
a unit, then the remaining C0/C1 control characters; tab, newline and carriage return are kept.
"""

from __future__ import annotations

import re

# ST (string terminator): ESC \, its 8-bit form U+009C, or BEL (xterm's common alternative).
_ST = r"(?:\x1b\\|\x9c|\x07)"
_SEQUENCE = re.compile(
    # OSC, DCS, SOS, PM, APC (ESC ] / P / X / ^ / _, or their 8-bit forms) + payload up to ST. An
    # unterminated one ends at the next ESC, newline or the end of the text, so a line is never lost.
    r"(?:\x1b[\]PX^_]|[\x9d\x90\x98\x9e\x9f])[^\x07\x1b\x9c\n]*" + _ST + "?"
    # CSI (ESC [ or U+009B): parameter bytes, intermediate bytes, final byte ("\x1b[38;5;196m", "\x1b[2K").
    r"|(?:\x1b\[|\x9b)[\x30-\x3f]*[\x20-\x2f]*[\x40-\x7e]?"
    # Other escapes: ESC, intermediate bytes, a final byte ("\x1b(B", "\x1b7", "\x1b="); or a lone ESC.
    r"|\x1b[\x20-\x2f]*[\x30-\x7e]?"
    # Any other C0 or C1 control character, DEL included; \t \n \r are text.
    r"|[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]"
)


def strip_control(text: str) -> str:
    """`text` without terminal escape sequences (each removed whole) and control characters.

    Tab, newline and carriage return stay; so does everything printable, including brackets that merely
    look like an escape's tail ("[31m" without its ESC is text, not a sequence)."""
    return _SEQUENCE.sub("", text)
