"""Quality gate: the first ingest step, deciding which turns are worth turning into memories.

It drops what carries no memory: empty turns, pure chit-chat ("thanks!", "ok 👍", "好的"), log noise
(debug/trace dumps, heartbeats and health-check pings, progress bars, raw HTTP access-log lines) and
errors or stack traces this session has already seen. Everything else is kept, including short turns
with content ("ok, book it for Friday") and bare answers ("No", "Yes", "是"), which mean something in
a conversation.

Repeated errors are recognised by `fingerprint()`: a hash over the error's lines with the parts that
change from one occurrence to the next (timestamps, line numbers, addresses, ids, paths' directories)
normalised away. The caller keeps the fingerprints seen in a session and passes them as `seen`; the
first occurrence of an error is kept and its fingerprint returned so the caller can add it.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Collection
from dataclasses import dataclass

REASONS = ("kept", "empty", "chit_chat", "log_noise", "repeated_error", "seen_stack_trace")


@dataclass(frozen=True, slots=True)
class GateRules:
    """What to drop; the agent schema can keep any of these (a support bot may want its chit-chat)."""

    chit_chat: bool = True
    log_noise: bool = True
    repeated_errors: bool = True
    seen_stack_traces: bool = True
    min_chars: int = 2  # CJK characters count two: "是" (yes) is a whole answer


@dataclass(frozen=True, slots=True)
class GateDecision:
    keep: bool
    reason: str  # one of REASONS
    fingerprint: str | None  # "trace:<hex>" / "error:<hex>" when the turn is an error, kept or not


# Roles whose turns are machine output: "OK" from a tool is a result, not a pleasantry.
_NON_CONVERSATIONAL_ROLES = frozenset(
    {"tool", "function", "system", "tool_result", "tool_call", "observation", "developer", "ipython"}
)


def decide(text: str, role: str, rules: GateRules, seen: Collection[str]) -> GateDecision:
    """Keep or drop one turn. `seen` holds the fingerprints of errors already kept in this session."""
    stripped = text.strip()
    if not stripped:
        return GateDecision(False, "empty", None)
    if rules.chit_chat and role.casefold() not in _NON_CONVERSATIONAL_ROLES and is_chit_chat(stripped):
        return GateDecision(False, "chit_chat", None)
    if len(stripped) < rules.min_chars and _visible_len(stripped) < rules.min_chars:  # cheap test first
        return GateDecision(False, "empty", None)
    fp = fingerprint(stripped)
    if fp is not None:
        if fp in seen:
            if fp.startswith("trace:") and rules.seen_stack_traces:
                return GateDecision(False, "seen_stack_trace", fp)
            if fp.startswith("error:") and rules.repeated_errors:
                return GateDecision(False, "repeated_error", fp)
        return GateDecision(True, "kept", fp)  # an error is never log noise: its first occurrence matters
    if rules.log_noise and is_log_noise(stripped):
        return GateDecision(False, "log_noise", None)
    return GateDecision(True, "kept", None)


def _visible_len(text: str) -> int:
    if text.isascii():
        return len(text)
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


# --- chit-chat ----------------------------------------------------------------------------------

# Whole-turn pleasantries. Deliberately absent: yes/no/yep/nope, "right", "correct", "agreed", "later",
# "可以", "是", "对" — answers that carry meaning in a conversation.
_CHIT_EN = (
    # greetings
    r"h+i+|hello+|hey+|heya|hiya|yo|howdy|hola|greetings|good\s+(?:morning|afternoon|evening|night|day)|morning"
    r"|evening|gm|gn|sup|whats\s+up|wassup|how\s+are\s+you(?:\s+doing)?(?:\s+today)?|how\s+r\s+u|hows\s+it\s+going"
    r"|hope\s+you(?:\s+a)?re\s+(?:well|doing\s+well)|nice\s+to\s+meet\s+you|long\s+time\s+no\s+see|im\s+good|im\s+fine"
    r"|doing\s+well|not\s+bad"
    # thanks
    r"|thanks?(?:\s+you)?|thank\s+u|thx|thnx|tnx|ty|tysm|tyvm|many\s+thanks|much\s+appreciated|appreciate\s+it"
    r"|appreciated|cheers|much\s+obliged|you\s+rock|youre\s+the\s+best|so\s+much|very\s+much|a\s+lot|a\s+ton"
    r"|for\s+(?:all\s+)?(?:your|the)\s+help(?:\s+today)?|for\s+everything|great\s+help"
    # acknowledgements
    r"|o+k+|okay+|okey|okie(?:\s+dokie)?|k+|alright|all\s+right|aight|sure(?:\s+thing)?|cool|coolio|great|nice"
    r"|awesome|perfect|excellent|wonderful|fantastic|amazing|brilliant|lovely|neat|sweet|got\s+it|gotcha"
    r"|understood|noted|roger(?:\s+that)?|copy\s+that|will\s+do|sounds\s+(?:good|great|perfect|fine)|fine|good"
    r"|no\s+problem(?:\s+at\s+all)?|no\s+worries|np|nw|fair\s+enough|makes\s+sense|i\s+see|ack|acknowledged"
    # praise and cheers
    r"|congrats|congratulations|kudos|bravo|well\s+done|(?:good|great|nice)\s+(?:job|work|one)|way\s+to\s+go"
    r"|woo+\s*hoo+|yippee|hooray|hurray"
    # laughter and fillers
    r"|lo+l+|lmf?ao+|rofl|(?:ha){2,}h?|(?:a+h+){2,}a*|(?:he){2,}h?|hihi|xd+|oh+|ah+|hmm*|um+|uh+|wow+|whoa|yay+|woo+|omg|oops|ooh+"
    # farewells
    r"|bye+|goodbye|bye\s+bye|see\s+(?:you|ya)(?:\s+(?:later|soon|tomorrow))?|cya|ttyl|take\s+care"
    r"|have\s+a\s+(?:nice|good|great|wonderful|lovely)\s+(?:day|one|weekend|evening|night)"
    r"|talk\s+(?:to\s+you\s+)?(?:later|soon)|catch\s+you\s+later"
    # assistant politeness
    r"|you(?:\s+a)?re\s+welcome|welcome|my\s+pleasure|glad\s+(?:i\s+could|to)\s+help|happy\s+to\s+help|any\s*time"
    r"|you\s+too|same\s+to\s+you|likewise|is\s+there\s+anything\s+else(?:\s+i\s+can\s+(?:help\s+you\s+with|do\s+for\s+you))?"
    r"|anything\s+else|let\s+me\s+know\s+if\s+you\s+need\s+anything\s+else"
    r"|how\s+(?:can|may)\s+i\s+(?:help|assist)(?:\s+you)?(?:\s+today)?"
    # glue between pleasantries ("ok and thanks again")
    r"|and|so|again|too|really|just|then|also|very|much|all|well|guys|everyone|all\s+of\s+you"
)
_GLUE = re.compile(r"(?<![a-z])(?:and|or|so|again|too|really|just|then|also|very|much|all|well|guys|everyone)(?![a-z])")
_CHIT_EN_RE = re.compile(r"(?<![a-z0-9])(?:" + _CHIT_EN + r")(?![a-z0-9])")
_CHIT_EN_ANY_CASE = re.compile(r"(?<![A-Za-z0-9])(?:" + _CHIT_EN + r")(?![A-Za-z0-9])", re.IGNORECASE)
_CHIT_ZH_RE = re.compile(
    r"好的|好吧|好哒|好滴|好嘞|好|行吧|行|嗯+|哦+|噢+|啊+|哈+|呵呵+|嘿嘿+|谢谢(?:你|您)?(?:啦|了)?|多谢|感谢(?:你|您)?|非常感谢"
    r"|谢啦|辛苦(?:了|啦)|你好|您好|早上好|上午好|下午好|晚上好|早安|晚安|再见|拜拜|回头见|明天见|收到|明白了?|了解|知道了|懂了"
    r"|没问题|没事|不客气|客气了|不用谢|哈喽|在吗|在不在"
)
# Emoticons; emoji and other symbols are removed by Unicode category.
_EMOTICON = re.compile(r"(?<!\w)(?:[:;=8xX][-'^]?[)(\]\[DPpOo3/\\|*]+|<3+|\^_*\^|\(:|T_T|o_O|O_o)(?!\w)")
_APOSTROPHES = re.compile(r"['’‘`]")


# A name the pleasantry is addressed to ("Thanks, Melanie!", "Hey Mel", "Caroline, congrats!", "Bye Ms. Chen"):
# capitalised words, with an optional title. Day and month names are content ("Great, Friday!").
_VOCATIVE = re.compile(r"(?<![\w'’])(?:(?:Mr|Mrs|Ms|Miss|Dr|Prof)\.?\s+)?[A-Z][a-z]+(?:[ -][A-Z][a-z]+){0,2}(?![\w'’])")
_NAME_WORD = re.compile(r"[A-Z][a-z]+")
_MAX_VOCATIVE_WORDS = 3
_NOT_VOCATIVE = frozenset(
    "monday tuesday wednesday thursday friday saturday sunday january february march april may june july august "
    "september october november december today tomorrow yesterday tonight".split()
)


def is_chit_chat(text: str) -> bool:
    """True when the whole turn is greetings, thanks, acknowledgements, laughter or emoji, possibly addressed to
    someone by name."""
    if len(text) > 200:
        return False  # nobody writes 200 characters of pure pleasantry
    if _only_pleasantries(text):
        return True
    # Take the names out and look again: what is left must be pleasantries, and something must be left.
    rest = _without_vocative(text)
    if rest is None:
        return False
    # "Luna and Oliver!" (an answer naming names) leaves only glue: content, not a pleasantry.
    return _only_pleasantries(rest, empty=False) and bool(re.search(r"[^\W\d_]", _GLUE.sub(" ", rest.casefold())))


def _without_vocative(text: str) -> str | None:
    """The text without the name(s) it is addressed to; None when it names no one who could be addressed (no
    capitalised word, more than a short name, or a day or month)."""
    # Names are looked for once the pleasantries are out: "No worries, Mel!" starts with a capital too.
    masked = _CHIT_EN_ANY_CASE.sub(" ", _APOSTROPHES.sub("", text))
    names = [w for m in _VOCATIVE.finditer(masked) for w in _NAME_WORD.findall(m.group(0))]
    words = [w.casefold() for w in names]
    if not names or len(words) > _MAX_VOCATIVE_WORDS or _NOT_VOCATIVE.intersection(words):
        return None
    return re.sub(r"(?<![\w'’])(?:" + "|".join(map(re.escape, names)) + r")\.?(?![\w'’])", " ", text)


# Agreement that opens a longer turn ("Yeah, Caroline! It takes courage to ..."). Alone, such a sentence
# says nothing a later question could ask about: what was agreed to is in the turn's other sentences.
_AFFIRMATION = re.compile(
    r"(?<![A-Za-z])(?:yes|yeah|yep|yup|yea|agreed|absolutely|totally|exactly|definitely|indeed|certainly|true"
    r"|right|of\s+course|for\s+sure|you\s+bet|me\s+too|same\s+here"
    r"|(?:i\s+)?(?:totally\s+|completely\s+|so\s+|fully\s+)?agree(?:\s+with\s+you)?)(?![A-Za-z])",
    re.IGNORECASE,
)


_NAMES_JOINED = re.compile(r"(?<![a-z])(?:and|or|&)(?![a-z])")


def is_lead_in(sentence: str) -> bool:
    """True when a sentence that is not chit-chat (see is_chit_chat, checked first by callers) is only
    agreement, possibly addressed to someone by name ("Yep, Caroline.", "Absolutely, Mel!", "I totally
    agree."). Meant for one sentence of a longer turn: a turn that is nothing but "Yes" answers what was
    asked before it and is kept."""
    if len(sentence) > 80:
        return False
    plain = _APOSTROPHES.sub("", sentence)
    rest = _AFFIRMATION.sub(" ", plain)
    if rest == plain:
        return False  # no agreement in it
    if _only_pleasantries(rest):
        return True
    unnamed = _without_vocative(rest)
    # "Yep, Luna and Oliver!" answers with names: content, not someone addressed.
    return unnamed is not None and _only_pleasantries(unnamed) and not _NAMES_JOINED.search(unnamed.casefold())


def _only_pleasantries(text: str, *, empty: bool = True) -> bool:
    """True when nothing but pleasantries is left; `empty` is the answer when nothing at all is left."""
    t = _EMOTICON.sub(" ", unicodedata.normalize("NFKC", text))
    t = _APOSTROPHES.sub("", t).casefold()
    # Punctuation, symbols (emoji), format characters (ZWJ) and marks (variation selectors) are not content.
    t = "".join(" " if unicodedata.category(c)[0] in "PSCZM" else c for c in t)
    if not t.strip():
        return empty  # "👍", "!!", "🙏🙏"
    t = _CHIT_ZH_RE.sub(" ", _CHIT_EN_RE.sub(" ", t))
    return not t.strip()


# --- errors and stack traces --------------------------------------------------------------------
# Speed: these run on every turn, so each check starts with a literal (the regex engine then jumps
# between candidates) or is guarded by a substring test; per-line work only happens for lines that can
# match.

# Cheap substring test before anything else: most turns are not errors.
_ERROR_HINTS = (
    "error", "exception", "traceback", "fatal", "panic", "err!", "critical", "severe", "fault", "failure",
    "core dumped", "oomkilled", "exit code", "exit status", "exited with",
)  # fmt: skip
_ERROR_PHRASES = (
    "traceback (most recent call last)", "exception in thread", "npm err!", "panicked at", "segmentation fault",
    "core dumped", "oomkilled", "[error]", "[fatal]", "[critical]", "[crit]", "[err]",
)  # fmt: skip
# KeyError:, java.lang.NullPointerException, AssertionFailure( ... : a class name ending in one of these.
_EXCEPTION_NAME = re.compile(r"(?:Error|Exception|Fault|Failure)(?=:|[ \t]*$|\s+at\b|\s*\()", re.MULTILINE)
_LEVEL_WORD = re.compile(r"(?:ERROR|FATAL|CRITICAL|SEVERE|PANIC)(?=[\]|:\s]|$)", re.MULTILINE)
_LOWER_ERROR = re.compile(
    r"level\s*=\s*\"?(?:error|fatal|critical|panic)\b"
    r"|exit(?:ed)?\s+(?:with\s+)?(?:code|status)\s+[1-9]"
    r"|^[ \t]*(?:error|fatal|panic)(?:\[[a-z0-9]+\])?:",
    re.MULTILINE,
)


def _has_error(text: str, low: str) -> bool:
    if any(p in low for p in _ERROR_PHRASES):
        return True
    for m in _EXCEPTION_NAME.finditer(text):
        i = m.start()
        if i == 0 or text[i - 1] in "\n \t" or text[i - 1].isalnum():
            return True  # "Error: ..." at a line start, or a class name such as KeyError
    for m in _LEVEL_WORD.finditer(text):
        if m.start() == 0 or text[m.start() - 1] in "\n \t[|":
            return True
    return bool(_LOWER_ERROR.search(low))


_FRAME_LINE = re.compile(
    r'\s*File "[^"]+", line \d+'  # Python
    r"|\s+at\s+\S.*(?:\(.*:\d+(?::\d+)?\)|:\d+(?::\d+)?|\((?:Native Method|Unknown Source)\))\s*$"  # JS, Java
    r"|\s*#\d+\s+(?:0x[0-9a-fA-F]+\s+in\s+)?\S+.*\bat\b"  # gdb, C++
    r"|goroutine \d+ \[[^\]]+\]:"  # Go
    r"|\s+\S+\.go:\d+"
    r"|\s*\d+:\s+(?:0x[0-9a-f]+\s+-\s+)?[\w:<>]+::\w+"  # Rust backtrace
    r"|\s+\.\.\.\s*\d+\s+more\s*$"  # Java "... 42 more"
    r"|\s*Caused by:"
)
_FRAME_STARTS = (" ", "\t", "File", "goroutine", "Caused", "#", "0", "1", "2", "3", "4", "5", "6", "7", "8", "9")
_PY_FRAME = re.compile(r'\s*File "[^"]+", line \d+')
_CARETS = re.compile(r"[\s~^]+$")  # Python 3.11 position markers under a source line


def _is_frame(line: str) -> bool:
    return line.startswith(_FRAME_STARTS) and bool(_FRAME_LINE.match(line))


# Normalisation of what changes between two occurrences of the same error, in a few fast passes over the
# key text: UUIDs; paths (keep the file name); digits; then what is left of random ids and hashes.
_UUID_HINT = re.compile(r"-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-")
_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
_PATH = re.compile(r"[\\/][\w.@~+-]+(?:[\\/][\w.@~+-]+)*")  # starts with its separator: fast to scan
_DIGITS = re.compile(r"\d+")
# After digits became "#": "8f7a6b2c" -> "#f#a#b#c", "0x7f3a" -> "#x#f#a". Interleaved runs are random
# ids, hashes and addresses; "user_#" (from user_42) keeps its name, so it still differs from "order_#".
_SCRAMBLED = re.compile(r"#[A-Za-z]{1,3}#[A-Za-z#]*")


def _last_component(m: re.Match[str]) -> str:
    return "/" + re.split(r"[\\/]", m.group(0))[-1]  # /home/alice/app/x.py and /srv/app/x.py: "/x.py"


def _normalise(text: str) -> str:
    if _UUID_HINT.search(text):
        text = _UUID.sub("<uuid>", text)
    if "/" in text or "\\" in text:
        text = _PATH.sub(_last_component, text)
    text = _SCRAMBLED.sub("<id>", _DIGITS.sub("#", text))
    return "\n".join(" ".join(line.split()) for line in text.splitlines())


def fingerprint(text: str) -> str | None:
    """A stable id for an error or stack trace, or None when `text` is not one.

    Two occurrences of the same exception match even when their timestamps, line numbers, addresses,
    request ids and directories differ. Surrounding prose counts: a trace sent again with a new
    question is a new turn. The "trace:" or "error:" prefix says which kind it is.
    """
    low = text.casefold()
    if not any(h in low for h in _ERROR_HINTS):
        return None
    lines = text.splitlines()
    frames = sum(1 for line in lines if _is_frame(line))
    if frames < 2 and not _has_error(text, low):
        return None
    kind = "trace" if frames or "traceback (most recent call last)" in low else "error"
    key: list[str] = []
    after_py_frame = False
    for line in lines:
        if not line.strip() or _CARETS.match(line):
            continue
        if after_py_frame and line[:1].isspace() and not _is_frame(line):
            after_py_frame = False
            continue  # the source line Python prints under a frame: code, not identity
        after_py_frame = bool(_PY_FRAME.match(line))
        if _is_noise_line(line) and not any(h in line.casefold() for h in _ERROR_HINTS):
            continue  # debug chatter around an error varies from run to run
        key.append(line)
    digest = hashlib.sha256(_normalise("\n".join(key)).encode("utf-8")).hexdigest()[:16]
    return f"{kind}:{digest}"


# --- log noise ----------------------------------------------------------------------------------

# Optional timestamp / logger prefix: "2026-10-28T10:00:01.123Z", "[10:00:01]", "Oct 28 10:00:01 host app[12]:".
_TS = (
    r"(?:\[?\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?\]?\s+"
    r"|\[?\d{2}:\d{2}:\d{2}(?:[.,]\d+)?\]?\s+"
    r"|[A-Z][a-z]{2}\s+\d{1,2}\s+\d{2}:\d{2}:\d{2}\s+(?:[\w.-]+\s+)?(?:[\w./-]+(?:\[\d+\])?:\s+)?)?"
)
_DEBUG_LINE = re.compile(
    r"\s*" + _TS + r"(?:[\w.\-\[\]]+\s+)?\[?\s*(?:DEBUG|TRACE|VERBOSE|DBG|debug|trace|verbose)\s*\]?(?:[\s:|]|$)"
    r"|\s*[DV]/[\w.$-]+(?:\(\s*\d+\))?:"  # Android logcat D/Tag: ...
)
_DEBUG_LEVEL = re.compile(r"level\s*=\s*\"?(?:debug|trace)\b")
_HEARTBEAT_LINE = re.compile(
    r"\s*" + _TS + r"(?:\[?(?:INFO|DEBUG|TRACE|NOTICE|info|debug|trace)\]?:?\s+)?(?:\[[^\]]*\]\s+)?(?:[\w.-]+:\s+)?"
    r"(?i:heart-?beat|keep-?alive|ping|pong|health(?:-?check)?|healthz|readyz|livez|liveness(?:\s+probe)?"
    r"|readiness(?:\s+probe)?)\b[\w\s=:.,/()#%-]{0,60}$"
)
_HEARTBEAT_WORDS = ("heart", "keep", "ping", "pong", "health", "ready", "live")
_ACCESS_LINE = re.compile(
    r"\"(?:GET|POST|PUT|DELETE|PATCH|HEAD|OPTIONS|CONNECT|TRACE) \S+ HTTP/\d(?:\.\d)?\"\s+\d{3}\b"
    r"|^\s*" + _TS + r"(?:\[?INFO\]?:?\s+)?(?:[\w.:-]+\s+)?(?:GET|POST|PUT|DELETE|PATCH|HEAD|OPTIONS)\s+/\S*"
    r"(?:\s+HTTP/\d(?:\.\d)?)?\s+(?:->\s+)?\d{3}\b"
)
_HTTP_VERBS = ("GET ", "POST ", "PUT ", "DELETE ", "PATCH ", "HEAD ", "OPTIONS ", "CONNECT ", "TRACE ")
_PROGRESS_WORDS = re.compile(
    r"(?i:progress|download|upload|load|install|build|compil|process|extract|copy|copying|sync|index|train|epoch"
    r"|step|pull|push|writ|read|transfer|\d+/\d+)"
)
_PROGRESS_LINE = re.compile(
    r"[█▉▊▋▌▍▎▏■▓▒░]{3,}"  # tqdm, rich
    r"|\[[=#>\-.\s]{5,}\]"  # [=====>     ]
    r"|(?:^|\s)\d{1,3}(?:\.\d+)?%(?:\s|$)"
)
_BAR_CHARS = ("%", "█", "▉", "▊", "▋", "▌", "▍", "▎", "▏", "■", "▓", "▒", "░", "[")
# Lines that continue the record above them: indented, or JSON-ish ("payload={", '"id": 3,', "}").
_CONTINUATION = re.compile(r"(?:\s+\S|[{}\[\],\"]|\s*\"?[\w.-]+\"?\s*[:=]\s*\S)")


def _is_noise_line(line: str) -> bool:
    low = line.casefold()
    if ("debug" in low or "trace" in low or "verbose" in low or "dbg" in low or line[1:2] == "/") and (
        _DEBUG_LINE.match(line) or _DEBUG_LEVEL.search(low)
    ):
        return True
    if any(w in low for w in _HEARTBEAT_WORDS) and _HEARTBEAT_LINE.match(line):
        return True
    if any(v in line for v in _HTTP_VERBS) and _ACCESS_LINE.search(line):
        return True
    return (
        len(line) < 200
        and any(c in line for c in _BAR_CHARS)
        and bool(_PROGRESS_LINE.search(line))
        and bool(_PROGRESS_WORDS.search(line))
    )


def is_log_noise(text: str) -> bool:
    """True when every line is log noise (or continues a noise record) and none reports an error."""
    noisy = False
    for line in text.splitlines():
        if not line.strip():
            continue
        if _is_noise_line(line):
            noisy = True
        elif not (noisy and _CONTINUATION.match(line)):
            return False  # a line with content: keep the turn
    return noisy
