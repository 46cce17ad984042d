"""From one (already redacted) turn to fact drafts: one per content-bearing sentence, each carrying the
absolute time it is about and the entities it mentions (pure).

A fact is a verbatim sentence of the turn, attributed to its speaker, with any relative time resolved
against the turn's own timestamp and written out ("I went there yesterday" said on 8 May 2023 →
"… yesterday (7 May 2023)"), so a later reader needs no other context to date it. Pleasantries are not
facts. Sentence granularity lets retrieval hand back the part of a long turn that matters."""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from datetime import datetime, timedelta

from acm.domain import sentences as S
from acm.domain.extract import Mention, mentions
from acm.domain.gate import is_chit_chat, is_lead_in
from acm.domain.records import MAX_RECORD_WEIGHT, MAX_RECORDS_PER_TURN, Record, cut, parts, weight
from acm.domain.timeparse import TimeMention, resolve

MIN_FACT_CHARS = 12
MAX_FACTS_PER_TURN = 40  # a pasted document is not 400 facts: past these, its sentences are kept as passages
RECORD_KIND = "tool_record"


@dataclass(frozen=True, slots=True)
class FactDraft:
    text: str  # "<speaker>: <sentence>[ (<resolved time>)]"
    sentence: str
    valid_from: datetime
    valid_to: datetime | None
    mentions: tuple[Mention, ...]
    slot: str = ""  # "<subject>|<attribute>" when the sentence states a value (see slot_of)
    value: str = ""
    record: Record | None = None  # a tool output's record (one part of it when it is long)
    trust: str = "normal"  # acm.domain.instruction.Trust: "untrusted" facts are stored, never promoted


def _weight(text: str) -> int:
    """Length with CJK characters counting two: "我下周三要去上海出差" says as much as an English sentence."""
    return len(text) + sum(1 for ch in text if "\u3400" <= ch <= "\u9fff")


def split_sentences(text: str) -> list[str]:
    return S.split(text)


def _pieces(sentence: str) -> list[str]:
    """A sentence longer than a memory may be (a log line, a pasted table row) in pieces that fit."""
    if weight(sentence) <= MAX_RECORD_WEIGHT:
        return [sentence]
    out, piece = [], ""
    for word in sentence.split(" "):
        while weight(word) > MAX_RECORD_WEIGHT:  # one unbroken token longer than a memory
            if piece:
                out.append(piece)
                piece = ""
            head = cut(word, MAX_RECORD_WEIGHT)
            out.append(head)
            word = word[len(head) :]
        if piece and weight(piece) + 1 + weight(word) > MAX_RECORD_WEIGHT:
            out.append(piece)
            piece = word
        else:
            piece = f"{piece} {word}" if piece else word
    if piece:
        out.append(piece)
    return out


def _passages(sentences: list[str]) -> list[str]:
    """Sentences past a turn's MAX_FACTS_PER_TURN, joined into passages of at most MAX_RECORD_WEIGHT."""
    out: list[str] = []
    for sentence in sentences:
        if out and weight(out[-1]) + 1 + weight(sentence) <= MAX_RECORD_WEIGHT:
            out[-1] = f"{out[-1]} {sentence}"
        else:
            out.append(sentence)
    return out[:MAX_RECORDS_PER_TURN]


def record_drafts(speaker: str, records: list[Record], occurred_at: datetime) -> list[FactDraft]:
    """One draft per record of a tool output (per part, when long). A record with a key has a slot per part
    ("record:<key>"), so a later result for the same id supersedes it (ingest merges the fields first)."""
    drafts: list[FactDraft] = []
    for record in records:
        rendered = parts(record)
        for i, part in enumerate(rendered):
            slot = ""
            if record.key:
                slot = f"record:{record.key.casefold()}" + (f"#{i + 1}" if len(rendered) > 1 else "")
            drafts.append(
                FactDraft(
                    text=f"{speaker}: {part}",
                    sentence=part,
                    valid_from=occurred_at,
                    valid_to=None,
                    mentions=(),
                    slot=slot,
                    value=part,
                    record=record if len(rendered) == 1 else None,
                )
            )
    return drafts


def render_time(t: TimeMention) -> str:
    """How a resolved time reads inside a fact."""
    day = f"{t.valid_from.day} {t.valid_from:%B %Y}"
    span = t.valid_to - t.valid_from
    if t.granularity == "day" or span <= timedelta(days=1):
        return day
    if t.granularity in ("week", "weekend"):
        return f"the {t.granularity} of {day}"
    if t.granularity == "month":
        return f"{t.valid_from:%B %Y}"
    if t.granularity == "year":
        return f"{t.valid_from.year}"
    last = t.valid_to - timedelta(days=1)
    return f"{day} to {last.day} {last:%B %Y}"


def _annotate(sentence: str, times: list[TimeMention]) -> str:
    firm = [t for t in times if t.confidence >= 0.5]
    if not firm:
        return sentence
    written = "; ".join(dict.fromkeys(render_time(t) for t in firm))
    return f"{sentence} ({written})"


def facts_from_turn(speaker: str, content: str, occurred_at: datetime) -> list[FactDraft]:
    drafts: list[FactDraft] = []
    every = [piece for sentence in split_sentences(content) for piece in _pieces(sentence)]
    sentences, rest = every[:MAX_FACTS_PER_TURN], every[MAX_FACTS_PER_TURN:]
    for sentence in sentences:
        if _weight(sentence) < MIN_FACT_CHARS or is_chit_chat(sentence):
            continue
        if len(sentences) > 1 and is_lead_in(sentence):
            continue  # "Yep, Caroline." before what the turn says: nothing to remember on its own
        times = resolve(sentence, occurred_at)
        firm = [t for t in times if t.confidence >= 0.5]
        slot, value = slot_of(speaker, sentence) or ("", "")
        drafts.append(
            FactDraft(
                text=f"{speaker}: {_annotate(sentence, times)}",
                sentence=sentence,
                valid_from=firm[0].valid_from if firm else occurred_at,
                valid_to=firm[0].valid_to if firm else None,
                mentions=tuple(mentions(sentence)),
                slot=slot,
                value=value,
            )
        )
    for passage in _passages(rest):
        drafts.append(FactDraft(f"{speaker}: {passage}", passage, occurred_at, None, tuple(mentions(passage))))
    return drafts


def normalised(text: str) -> str:
    """The key under which the same fact said twice is one memory."""
    return re.sub(r"[^\w]+", " ", text.casefold()).strip()


# Statements of a value that a later statement replaces: where someone lives or works, a "my X is Y",
# a favourite, the status of an id. (subject, attribute) is the slot; the rest is the value.
_VALUE = (
    r"([^,.;!?()]+?)(?=\s+(?:and|but|with|since|because|now|for|last|next|this|yesterday|today|tomorrow|ago|"
    r"in\s+(?:\d{4}|" + "|".join(calendar.month_name[1:]) + r")|on|when|after|before)\b|[,.;!?()]|$)"
)
_FIRST_PERSON_SLOTS: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "lives_in",
        re.compile(r"\bI(?:'m| am)?\s+(?:now\s+|currently\s+)?(?:live|living|based|staying)\s+in\s+" + _VALUE, re.I),
    ),
    (
        "lives_in",
        re.compile(
            r"\bI(?:'ve| have)?\s+(?:just\s+|recently\s+|finally\s+)?(?:moved|relocated)\s+to\s+" + _VALUE, re.I
        ),
    ),
    ("works_at", re.compile(r"\bI(?:'m| am)?\s+(?:now\s+)?(?:work|working)\s+(?:at|for)\s+" + _VALUE, re.I)),
    ("works_at", re.compile(r"\bI(?:'ve| have)?\s+(?:just\s+)?joined\s+" + _VALUE, re.I)),
)
_MY_ATTRIBUTE = re.compile(
    r"\bmy\s+(favou?rite\s+\w+|email|e-mail|phone(?:\s+number)?|address|title|role|job|manager|boss|budget|plan|"
    r"team|birthday|username)\s+(?:is|was changed to|has changed to|is now|changed to)\s+" + _VALUE,
    re.I,
)
_ID_STATUS = re.compile(
    r"\b([A-Z]{2,6}-[\d][\d-]*)\b\s+(?:is|was|has been|got)\s+(?:now\s+)?(approved|rejected|pending|closed|"
    r"cancell?ed|shipped|resolved|paid|on hold|open|escalated|delivered)\b"
)


def slot_of(speaker: str, sentence: str) -> tuple[str, str] | None:
    """("<subject>|<attribute>", value) when the sentence states a replaceable value, else None."""
    m = _ID_STATUS.search(sentence)
    if m:
        return f"{m.group(1).lower()}|status", m.group(2).lower()
    subject = normalised(speaker) or "user"
    m = _MY_ATTRIBUTE.search(sentence)
    if m:
        attribute = re.sub(r"\s+", "_", m.group(1).lower().replace("favourite", "favorite").replace("e-mail", "email"))
        return f"{subject}|{attribute}", m.group(2).strip()
    for attribute, pattern in _FIRST_PERSON_SLOTS:
        m = pattern.search(sentence)
        # Places and employers are names: "I joined a pottery class" is not a new employer.
        if m and m.group(1).strip()[:1].isupper():
            return f"{subject}|{attribute}", m.group(1).strip()
    return None


_PREFERENCE = re.compile(
    r"\b(?:I\s+(?:really\s+|absolutely\s+|just\s+)?(?:love|like|prefer|enjoy|adore|hate|dislike|can't stand|"
    r"am allergic to|am vegan|am vegetarian)|my\s+favou?rite|I'm\s+(?:a\s+)?(?:vegan|vegetarian|allergic))\b",
    re.I,
)


def is_lasting(draft: FactDraft) -> bool:
    """Preferences and stated attributes outlive the session they were said in (→ the LONG layer)."""
    return bool(draft.slot) or bool(_PREFERENCE.search(draft.sentence))


def replied_sentence(previous_turn: str, speaker: str) -> str:
    """The question a turn answers: the last sentence of the previous turn ("<speaker>: <text>") when another
    speaker asked it; "" otherwise. A speaker continuing their own thought answers nothing new, and after a
    statement the reply's own words are what it is about (every category of locomo-dev gained or held with
    questions only; with any last sentence, multi-hop lost 1.2 points)."""
    who, sep, text = previous_turn.partition(": ")
    if not sep or who == speaker:
        return ""
    sentences = split_sentences(text)
    return sentences[-1] if sentences and sentences[-1].rstrip().endswith("?") else ""


def in_context(fact_text: str, replied_to: str) -> str:
    """What a fact's vector is computed from: the fact, after the question its turn answered. A sentence
    like "We explored nature and went on a hike." answers "How was the camping trip?": the question's words
    ("camping") are often in what was asked, not in the answer (contextual retrieval)."""
    return f"{replied_to} {fact_text}" if replied_to else fact_text
