"""`acm bench locomo`: evidence recall of ACM's Fetch on LoCoMo-format conversations, beside four baselines
that read no gold data:

- bm25: BM25 over the turns, unstemmed;
- bm25_stem: the same, with the words stemmed as ACM's keyword index stems them (Snowball English);
- vector: cosine over the turns, with the embedder ACM uses;
- hybrid_sent: every turn split into sentences (ACM's items are sentences too), stemmed BM25 and the same
  embedder over the sentences, fused by reciprocal rank (k = 60); each sentence is credited to its whole turn,
  as each of ACM's memories is credited to its source turns. ACM's lead is measured against the strongest.

    acm bench locomo --data locomo.json --json results/locomo-dev.json [--limit-conversations 1]

For each conversation (one ACM user: customer "locomo", user = sample_id, agent "locomo", a session per
LoCoMo session) every turn goes through the real pipeline (gRPC Ingest into an embedded ACM, jobs awaited),
then every question with evidence is asked through gRPC Fetch in the user's scope, as an agent would.
Scores (LoCoMo paper's turn-level recall): the fraction of a question's evidence turns present in the
returned memories' source_turn_ids, in a bundle of 1,000 and 2,000 tokens, and among the first 5 / 10
items of an unbounded fetch; averaged per category and overall. A baseline's bundle is its items in rank
order until the next one does not fit (fill_budget), each item counting for the turn it comes from.

The first half of this module is pure (loading, evidence normalisation, recall, BM25, packing, summaries);
the runner below it does the IO and keeps its heavy imports local, so `acm --help` stays fast.
"""

from __future__ import annotations

import argparse
import functools
import json
import math
import re
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import Stemmer

from acm_benchmarks.plotting import pyplot

if TYPE_CHECKING:
    from rich.console import Console

    from acm.client import AcmClient
    from acm.ports.embedder import Embedder
    from acm_cli.embedded import EmbeddedAcm

CATEGORIES: dict[int, str] = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
GROUPS: tuple[str, ...] = ("all", *(str(c) for c in CATEGORIES))
SYSTEMS: tuple[str, ...] = ("acm", "bm25", "bm25_stem", "vector", "hybrid_sent")
BASELINES: tuple[str, ...] = SYSTEMS[1:]
LEAD_GROUPS: dict[str, str] = {"all": "overall", "1": "multi-hop", "2": "temporal"}  # ACM's lead is reported on
RRF_K = 60  # hybrid_sent's reciprocal rank fusion constant (the usual one, Cormack et al. 2009)
BUDGETS: tuple[int, ...] = (1000, 2000)
TIMED_BUDGET = 2000  # the budget whose query latency is reported
AT_K: tuple[int, ...] = (5, 10)
# R@k comes from a separate fetch this large, so it is not capped by what fits in 1,000 / 2,000 tokens.
LARGE_BUDGET = 100_000
CUSTOMER = "locomo"
AGENT = "locomo"
PROGRESS_EVERY = 50

# ---------------------------------------------------------------------------------------------------
# Data


@dataclass(frozen=True, slots=True)
class Turn:
    sample_id: str
    dia_id: str  # "D<session>:<turn>"
    session: int
    speaker: str
    text: str
    caption: str  # blip_caption of a shared photo, or ""
    occurred_at: datetime

    @property
    def turn_id(self) -> str:
        """Unique across conversations, and what ACM returns in source_turn_ids."""
        return f"{self.sample_id}:{self.dia_id}"

    @property
    def content(self) -> str:
        """The turn with its photo's caption inline, as the baselines read it (ACM gets the caption in metadata)."""
        return f"{self.text} [shares {self.caption}]" if self.caption else self.text

    @property
    def item_text(self) -> str:
        """A baseline item, as the data README's reference numbers were measured."""
        return f"{self.speaker}: {self.content}"


@dataclass(frozen=True, slots=True)
class Question:
    text: str
    category: int
    evidence: tuple[str, ...]  # turn ids, f"{sample_id}:{dia_id}"


@dataclass(frozen=True, slots=True)
class Conversation:
    sample_id: str
    turns: tuple[Turn, ...]
    questions: tuple[Question, ...]  # only those with evidence
    skipped_no_evidence: int = 0
    evidence_fixed: tuple[str, ...] = ()  # raw evidence strings that were not canonical
    evidence_dangling: tuple[str, ...] = ()  # evidence turn ids with no such turn (kept: they lower recall)


_DATE_TIME = re.compile(
    r"^\s*(\d{1,2}):(\d{2})\s*([ap])\.?m\.?\s+on\s+(\d{1,2})\s+([A-Za-z]+)\.?,?\s+(\d{4})\s*$", re.IGNORECASE
)
_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")


def parse_session_datetime(value: str) -> datetime:
    """'1:56 pm on 8 May, 2023' → 2023-05-08 13:56 UTC (LoCoMo dates carry no zone; UTC keeps them as written)."""
    m = _DATE_TIME.match(value)
    if not m:
        raise ValueError(f"unrecognised session date_time {value!r} (expected like '1:56 pm on 8 May, 2023')")
    hour, minute, half, day, month_name, year = m.groups()
    month = _MONTHS.index(month_name[:3].lower()) + 1 if month_name[:3].lower() in _MONTHS else 0
    if not month:
        raise ValueError(f"unrecognised month {month_name!r} in {value!r}")
    h = int(hour) % 12 + (12 if half.lower() == "p" else 0)
    return datetime(int(year), month, int(day), h, int(minute), tzinfo=UTC)


_EVIDENCE = re.compile(r"D\s*:?\s*(\d+)\s*:\s*(\d+)", re.IGNORECASE)


def normalise_evidence(raw: Iterable[object]) -> tuple[str, ...]:
    """Canonical dia_ids, in order, without duplicates. Handles the data's quirks: several ids in one string
    ('D8:6; D9:17'), a stray colon ('D:11:26') and zero-padded numbers ('D30:05' → 'D30:5')."""
    out: dict[str, None] = {}
    for item in raw:
        for session, turn in _EVIDENCE.findall(str(item)):
            out[f"D{int(session)}:{int(turn)}"] = None
    return tuple(out)


def _session_numbers(conversation: Mapping[str, Any]) -> list[int]:
    """Sessions that have a turn list; some data has a session_<n>_date_time with no session_<n>."""
    numbers = []
    for key, value in conversation.items():
        m = re.fullmatch(r"session_(\d+)", key)
        if m and isinstance(value, list):
            numbers.append(int(m.group(1)))
    return sorted(numbers)


def parse_conversation(item: Mapping[str, Any]) -> Conversation:
    sample_id = str(item["sample_id"])
    conversation = item["conversation"]
    turns: list[Turn] = []
    for n in _session_numbers(conversation):
        date_key = f"session_{n}_date_time"
        if date_key not in conversation:
            raise ValueError(f"{sample_id}: session_{n} has turns but no {date_key}")
        start = parse_session_datetime(str(conversation[date_key]))
        for i, raw in enumerate(conversation[f"session_{n}"]):
            turns.append(
                Turn(
                    sample_id=sample_id,
                    dia_id="".join(normalise_evidence([raw.get("dia_id", "")])[:1]),  # "" when unusable
                    session=n,
                    speaker=str(raw.get("speaker", "")),
                    text=str(raw.get("text", "")),
                    caption=str(raw.get("blip_caption") or ""),
                    # i seconds apart: the session has one time stamp, and turn order must survive it.
                    occurred_at=start + timedelta(seconds=i),
                )
            )
    if any(not t.dia_id for t in turns):
        raise ValueError(f"{sample_id}: a turn has no usable dia_id")
    known = {t.turn_id for t in turns}
    questions: list[Question] = []
    skipped = 0
    fixed: list[str] = []
    dangling: list[str] = []
    for qa in item.get("qa", []):
        raw_evidence = list(qa.get("evidence") or [])
        fixed += [str(e) for e in raw_evidence if normalise_evidence([e]) != (str(e),)]
        evidence = tuple(f"{sample_id}:{d}" for d in normalise_evidence(raw_evidence))
        if not evidence:
            skipped += 1
            continue
        dangling += [e for e in evidence if e not in known]
        questions.append(Question(str(qa["question"]), int(qa["category"]), evidence))
    return Conversation(sample_id, tuple(turns), tuple(questions), skipped, tuple(fixed), tuple(dangling))


def load_conversations(path: Path, limit: int | None = None) -> list[Conversation]:
    data = json.loads(path.read_text())
    if not isinstance(data, list):
        raise ValueError(f"{path}: expected a JSON list of LoCoMo conversations")
    return [parse_conversation(item) for item in data[:limit]]


# ---------------------------------------------------------------------------------------------------
# Scoring


def evidence_recall(evidence: Iterable[str], items: Iterable[Iterable[str]]) -> float:
    """Fraction of the evidence turns found in any item; an item covering several turns counts for each."""
    wanted = set(evidence)
    if not wanted:
        raise ValueError("a question without evidence cannot be scored")
    found: set[str] = set()
    for turn_ids in items:
        found.update(turn_ids)
    return len(wanted & found) / len(wanted)


def fill_budget(ranking: Sequence[int], sizes: Sequence[int], budget: int) -> list[int]:
    """Items in rank order until the next one does not fit (a plain rank-order fill, as the reference
    baselines were measured; ACM's own packing may skip an item that does not fit and go on)."""
    kept: list[int] = []
    total = 0
    for i in ranking:
        if total + sizes[i] > budget:
            break
        kept.append(i)
        total += sizes[i]
    return kept


def percentile(values: Sequence[float], q: float) -> float:
    """Linear interpolation between closest ranks (numpy's default)."""
    if not values:
        return math.nan
    ordered = sorted(values)
    pos = (len(ordered) - 1) * q / 100
    lo, hi = math.floor(pos), math.ceil(pos)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


@dataclass(frozen=True, slots=True)
class Outcome:
    """One question answered by one system."""

    category: int
    recall: Mapping[int, float]  # budget → recall
    at_k: Mapping[int, float]  # k → recall over the first k items
    latency_ms: float  # the TIMED_BUDGET query
    bundle_tokens: Mapping[int, int]  # budget → tokens in the bundle
    detail: Mapping[str, Any] | None = None  # ACM only: what --misses writes
    sample_id: str = ""  # the conversation it belongs to


Summary = dict[str, dict[str, float | int | None]]


def _pct(values: Sequence[float]) -> float | None:
    return round(100 * sum(values) / len(values), 1) if values else None


def _ms(value: float) -> float | None:
    return None if math.isnan(value) else round(value, 2)


def summarise(outcomes: Sequence[Outcome]) -> Summary:
    """Per group ("all", "1".."5"): recalls in percent (1 decimal), latency p50/p95 in ms, n. A group with no
    question has n = 0 and null metrics."""
    by_group: dict[str, list[Outcome]] = {g: [] for g in GROUPS}
    for o in outcomes:
        by_group["all"].append(o)
        if str(o.category) in by_group:
            by_group[str(o.category)].append(o)
    summary: Summary = {}
    for group, items in by_group.items():
        latencies = [o.latency_ms for o in items]
        row: dict[str, float | int | None] = {f"recall_{b}": _pct([o.recall[b] for o in items]) for b in BUDGETS}
        row |= {f"recall_at_{k}": _pct([o.at_k[k] for o in items]) for k in AT_K}
        row |= {
            "fetch_p50_ms": _ms(percentile(latencies, 50)),
            "fetch_p95_ms": _ms(percentile(latencies, 95)),
            "n": len(items),
        }
        summary[group] = row
    return summary


def by_conversation(outcomes: Mapping[str, Sequence[Outcome]]) -> dict[str, dict[str, dict[str, float | None]]]:
    """Recall@1000 per conversation, system and group: a change should help each conversation, not only the
    total (a gain carried by one conversation is the first sign of fitting to it)."""
    samples = list(dict.fromkeys(o.sample_id for items in outcomes.values() for o in items))
    return {
        sample: {
            name: {g: row["recall_1000"] for g, row in summarise([o for o in items if o.sample_id == sample]).items()}
            for name, items in outcomes.items()
        }
        for sample in samples
    }


def lead_over_best_baseline(systems: Mapping[str, Summary]) -> dict[str, dict[str, Any]]:
    """Per LEAD_GROUPS group: the baseline with the highest recall@1000 there, and ACM's recall minus its (in
    points). A group no system has figures for is left out."""
    out: dict[str, dict[str, Any]] = {}
    for group in LEAD_GROUPS:
        scored = {name: systems[name][group]["recall_1000"] for name in BASELINES}
        acm = systems["acm"][group]["recall_1000"]
        known = {name: float(v) for name, v in scored.items() if v is not None}
        if acm is None or not known:
            continue
        best = max(known, key=lambda name: known[name])
        out[group] = {"baseline": best, "points": round(float(acm) - known[best], 1)}
    return out


def lead_line(lead: Mapping[str, Mapping[str, Any]]) -> str:
    """'ACM − best baseline: +5.2 overall (hybrid_sent), -1.0 multi-hop (hybrid_sent), …'"""
    parts = [f"{row['points']:+.1f} {LEAD_GROUPS[g]} ({row['baseline']})" for g, row in lead.items()]
    return f"ACM − best baseline (recall@{BUDGETS[0]}): " + ", ".join(parts)


def mean_bundle_tokens(outcomes: Sequence[Outcome]) -> dict[str, float | None]:
    return {
        str(b): round(sum(o.bundle_tokens[b] for o in outcomes) / len(outcomes), 1) if outcomes else None
        for b in BUDGETS
    }


# ---------------------------------------------------------------------------------------------------
# Baselines over raw turns and their sentences

# NLTK's English stop words (a fixed list, so the baseline does not drift with a package version).
STOP_WORDS = frozenset(
    """i me my myself we our ours ourselves you you're you've you'll you'd your yours yourself yourselves he
    him his himself she she's her hers herself it it's its itself they them their theirs themselves what which
    who whom this that that'll these those am is are was were be been being have has had having do does did
    doing a an the and but if or because as until while of at by for with about against between into through
    during before after above below to from up down in out on off over under again further then once here
    there when where why how all any both each few more most other some such no nor not only own same so than
    too very s t can will just don don't should should've now d ll m o re ve y ain aren aren't couldn couldn't
    didn didn't doesn doesn't hadn hadn't hasn hasn't haven haven't isn isn't ma mightn mightn't mustn mustn't
    needn needn't shan shan't shouldn shouldn't wasn wasn't weren weren't won won't wouldn wouldn't""".split()
)
_WORD = re.compile(r"[a-z0-9]+")


def tokenize(text: str) -> list[str]:
    """Lowercase words and numbers, English stop words removed."""
    return [w for w in _WORD.findall(text.lower()) if w not in STOP_WORDS]


@functools.cache
def _stemmer() -> Stemmer.Stemmer:
    # One per process: a Stemmer is not thread-safe, and the benchmark ranks from one thread.
    return Stemmer.Stemmer("english")


def stemmed_tokens(text: str) -> list[str]:
    """tokenize()'s words, stemmed by Snowball English (PyStemmer), as ACM's keyword index and prefetch pool
    stem theirs: "painted" meets "painting", "dogs" meets "dog"."""
    return list(_stemmer().stemWords(tokenize(text)))


class Ranker(Protocol):
    def rank(self, query: str) -> list[int]:
        """Item indices, best first."""


class BM25:
    """BM25 Okapi over a fixed corpus, with the non-negative (Lucene) idf: log(1 + (N - df + .5) / (df + .5)).
    ``analyzer`` makes a text's terms, for the documents and the query alike (default: unstemmed words).

    rank() returns only documents sharing a term with the query: the others are not retrieved at all.
    """

    def __init__(
        self,
        documents: Sequence[str],
        k1: float = 1.5,
        b: float = 0.75,
        analyzer: Callable[[str], list[str]] = tokenize,
    ) -> None:
        self.k1, self.b = k1, b
        self._analyze = analyzer
        tokenized = [analyzer(d) for d in documents]
        self._lengths = [len(t) for t in tokenized]
        self._avg_length = (sum(self._lengths) / len(tokenized)) if tokenized else 0.0
        self._postings: dict[str, list[tuple[int, int]]] = defaultdict(list)
        for doc, tokens in enumerate(tokenized):
            for term, tf in Counter(tokens).items():
                self._postings[term].append((doc, tf))
        n = len(tokenized)
        self._idf = {t: math.log(1 + (n - len(p) + 0.5) / (len(p) + 0.5)) for t, p in self._postings.items()}

    def scores(self, query: str) -> dict[int, float]:
        out: dict[int, float] = defaultdict(float)
        avg = self._avg_length or 1.0
        for term in self._analyze(query):  # a repeated query term counts each time (as in rank_bm25)
            idf = self._idf.get(term)
            if idf is None:
                continue
            for doc, tf in self._postings[term]:
                norm = self.k1 * (1 - self.b + self.b * self._lengths[doc] / avg)
                out[doc] += idf * tf * (self.k1 + 1) / (tf + norm)
        return out

    def rank(self, query: str) -> list[int]:
        """Document indices, best first (ties: corpus order)."""
        return [doc for doc, _ in sorted(self.scores(query).items(), key=lambda kv: (-kv[1], kv[0]))]


class VectorIndex:
    """Exact cosine search over the turns' embeddings."""

    def __init__(self, embedder: Embedder, documents: Sequence[str]) -> None:
        import numpy as np

        self._embedder = embedder
        self._matrix = _unit(np.asarray(embedder.embed(list(documents)), dtype=np.float32))

    def rank(self, query: str) -> list[int]:
        import numpy as np

        if not len(self._matrix):
            return []
        q = _unit(np.asarray(self._embedder.embed_query([query]), dtype=np.float32))[0]
        order = np.argsort(-(self._matrix @ q), kind="stable")
        return [int(i) for i in order]


def _unit(m: Any) -> Any:
    import numpy as np

    norms = np.linalg.norm(m, axis=1, keepdims=True)
    return m / np.where(norms == 0, 1, norms)


def rrf(rankings: Iterable[Sequence[int]], k: int = RRF_K) -> list[int]:
    """Reciprocal rank fusion: items by Σ 1 / (k + rank) over the rankings that hold them, best first (ties:
    item order)."""
    scores: dict[int, float] = defaultdict(float)
    for ranking in rankings:
        for rank, item in enumerate(ranking, start=1):
            scores[item] += 1 / (k + rank)
    return sorted(scores, key=lambda item: (-scores[item], item))


@dataclass(frozen=True, slots=True)
class Sentences:
    """The sentences of a conversation's turns as retrieval items, each knowing the turn it came from."""

    texts: tuple[str, ...]  # "<speaker>: <sentence>", as ACM's facts are written
    turn_ids: tuple[str, ...]  # the whole turn each sentence is credited to


def split_turns(turns: Sequence[Turn]) -> Sentences:
    """Every turn's content (a shared photo's caption included) split by ACM's own sentence splitter; a turn
    with no text has no sentence."""
    from acm.domain import sentences

    texts: list[str] = []
    turn_ids: list[str] = []
    for turn in turns:
        for sentence in sentences.split(turn.content):
            texts.append(f"{turn.speaker}: {sentence}")
            turn_ids.append(turn.turn_id)
    return Sentences(tuple(texts), tuple(turn_ids))


class SentenceHybrid:
    """Stemmed BM25 and cosine over the sentences (``items.texts``), fused by RRF: the plain sentence-level
    system ACM must beat."""

    def __init__(self, embedder: Embedder, items: Sentences) -> None:
        self._bm25 = BM25(items.texts, analyzer=stemmed_tokens)
        self._vector = VectorIndex(embedder, items.texts)

    def rank(self, query: str) -> list[int]:
        return rrf([self._bm25.rank(query), self._vector.rank(query)])


# ---------------------------------------------------------------------------------------------------
# Runner (IO)


@dataclass
class Options:
    data: Path
    json_out: Path | None
    plot_out: Path | None
    limit_conversations: int | None
    encoding: str
    embedder: str
    data_dir: Path | None
    reuse_ingest: bool = False
    misses_out: Path | None = None


@dataclass
class IngestStats:
    turns: int = 0
    wall_s: float = 0.0
    index_wait_s: float = 0.0
    job_ms: list[float] = field(default_factory=list)  # accepted → DONE, per job


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "locomo",
        help="evidence recall of Fetch on LoCoMo-format data, beside BM25, vector and sentence-hybrid baselines",
        description="Evidence recall of ACM's Fetch on LoCoMo-format conversations, beside baselines over the raw "
        "turns (BM25 unstemmed and stemmed, vector) and their sentences (stemmed BM25 + vector, RRF). Runs its own "
        "embedded ACM.",
    )
    p.add_argument("--data", type=Path, required=True, help="a LoCoMo-format JSON file")
    p.add_argument("--json", dest="json_out", type=Path, help="write the results here")
    p.add_argument(
        "--plot", dest="plot_out", type=Path, help="bar chart of recall@1000 (default: locomo.png beside --json)"
    )
    p.add_argument("--limit-conversations", type=int, metavar="N", help="only the first N conversations")
    p.add_argument(
        "--encoding",
        default="o200k_base",
        choices=["cl100k_base", "o200k_base"],
        help="tokenizer of the budgets (default o200k_base)",
    )
    p.add_argument("--embedder", help="embedder of ACM and the vector baselines (default: embedded ACM's)")
    p.add_argument("--data-dir", type=Path, help="embedded ACM's data (default: a fresh temporary folder)")
    p.add_argument(
        "--reuse-ingest",
        action="store_true",
        help="with --data-dir: skip conversations a previous run already ingested there (to compare retrieval "
        "changes only; ingest figures are then not measured)",
    )
    p.add_argument("--misses", type=Path, help="write ACM's per-question results (evidence vs bundle) here")
    p.set_defaults(run=run)


async def run(args: argparse.Namespace) -> None:
    from acm_cli.embedded import EmbeddedSettings

    if not args.data.is_file():
        raise SystemExit(f"no such file: {args.data}")
    plot_out = args.plot_out or (args.json_out.parent / "locomo.png" if args.json_out else None)
    options = Options(
        data=args.data,
        json_out=args.json_out,
        plot_out=plot_out,
        limit_conversations=args.limit_conversations,
        encoding=args.encoding,
        embedder=args.embedder or str(EmbeddedSettings.model_fields["embedder"].default),
        data_dir=args.data_dir,
        reuse_ingest=args.reuse_ingest,
        misses_out=args.misses,
    )
    await run_benchmark(options)


async def run_benchmark(options: Options) -> dict[str, Any]:
    import tempfile

    from rich.console import Console

    console = Console(soft_wrap=True)  # progress lines stay whole in logs and pipes
    conversations = load_conversations(options.data, options.limit_conversations)
    started_at = datetime.now(UTC)
    t0 = time.perf_counter()
    console.print(
        f"[bold]LoCoMo[/bold] {options.data.name}: {len(conversations)} conversations, "
        f"{sum(len(c.turns) for c in conversations)} turns, {sum(len(c.questions) for c in conversations)} "
        f"questions with evidence; encoding {options.encoding}, embedder {options.embedder}"
    )
    for c in conversations:
        if c.evidence_fixed or c.skipped_no_evidence or c.evidence_dangling:
            console.print(
                f"  {c.sample_id}: evidence normalised {list(c.evidence_fixed)}, "
                f"{c.skipped_no_evidence} questions without evidence skipped, "
                f"evidence pointing at no turn: {list(c.evidence_dangling)}"
            )
    if options.data_dir is None:
        with tempfile.TemporaryDirectory(prefix="acm-bench-locomo-") as tmp:
            outcomes, stats = await _run_all(conversations, options, Path(tmp), console, t0)
    else:
        outcomes, stats = await _run_all(conversations, options, options.data_dir, console, t0)
    result = _result(conversations, options, outcomes, stats, started_at, time.perf_counter() - t0)
    if options.misses_out:
        details = [o.detail for o in outcomes["acm"] if o.detail and o.detail["recall_1000"] < 1]
        options.misses_out.write_text(json.dumps(details, indent=1, ensure_ascii=False) + "\n")
        console.print(f"wrote {len(details)} questions below full recall@{BUDGETS[0]} to {options.misses_out}")
    _print_tables(console, result)
    if options.json_out:
        options.json_out.parent.mkdir(parents=True, exist_ok=True)
        options.json_out.write_text(json.dumps(result, indent=2) + "\n")
        console.print(f"wrote {options.json_out}")
    if options.plot_out:
        if write_plot(result, options.plot_out):
            console.print(f"wrote {options.plot_out}")
        else:
            console.print("[yellow]matplotlib is not installed: no plot[/yellow] (pip install matplotlib)")
    return result


async def _run_all(
    conversations: Sequence[Conversation], options: Options, data_dir: Path, console: Console, t0: float
) -> tuple[dict[str, list[Outcome]], IngestStats]:
    from acm.adapters.embedders import build_embedder
    from acm.adapters.tokenizer import TiktokenCounter
    from acm.client import AcmClient
    from acm_cli.embedded import EmbeddedAcm, EmbeddedSettings

    outcomes: dict[str, list[Outcome]] = {s: [] for s in SYSTEMS}
    stats = IngestStats()
    # The vector baselines embed with the model ACM uses (same name): same vectors, so only retrieval differs.
    embedder = build_embedder(options.embedder)
    counter = TiktokenCounter()
    settings = EmbeddedSettings(data_dir=data_dir, listen_addr="127.0.0.1:0", embedder=options.embedder)
    async with EmbeddedAcm(settings) as acm, AcmClient(f"127.0.0.1:{acm.port}", acm.api_key, timeout_s=60) as client:
        for conv in conversations:
            before = len(stats.job_ms), stats.wall_s
            marker = data_dir / f"ingested-{conv.sample_id}"
            if options.reuse_ingest and marker.exists():
                console.print(f"{conv.sample_id}: already ingested in {data_dir}, reused")
            else:
                await _ingest(client, acm, conv, stats)
                marker.touch()
            wall = stats.wall_s - before[1]
            console.print(
                f"{conv.sample_id}: {len(conv.turns)} turns ingested in {wall:.1f} s "
                f"({1000 * wall / max(len(conv.turns), 1):.1f} ms/turn, job p50 "
                f"{percentile(stats.job_ms[before[0] :], 50):.0f} ms); asking {len(conv.questions)} questions "
                f"[{time.perf_counter() - t0:.0f} s]"
            )
            baselines = _baselines(conv, embedder, lambda text: counter.count(text, options.encoding))
            for i, question in enumerate(conv.questions, start=1):
                outcomes["acm"].append(await _ask_acm(client, conv.sample_id, question, options.encoding))
                for name, baseline in baselines.items():
                    outcomes[name].append(_ask_baseline(baseline, question, conv.sample_id))
                if i % PROGRESS_EVERY == 0 or i == len(conv.questions):
                    done = summarise(outcomes["acm"])["all"]
                    console.print(
                        f"  {conv.sample_id}: {i}/{len(conv.questions)} questions; acm recall@1000 so far "
                        f"{done['recall_1000']} % [{time.perf_counter() - t0:.0f} s]"
                    )
    return outcomes, stats


@dataclass(frozen=True, slots=True)
class Baseline:
    ranker: Ranker
    turn_ids: Sequence[str]  # per item, the turn it is credited to
    sizes: Sequence[int]  # per item, its tokens


def _baselines(conv: Conversation, embedder: Embedder, count: Callable[[str], int]) -> dict[str, Baseline]:
    """The BASELINES over one conversation, in that order."""
    items = [t.item_text for t in conv.turns]
    turn_ids = [t.turn_id for t in conv.turns]
    sizes = [count(text) for text in items]
    sentences = split_turns(conv.turns)
    return {
        "bm25": Baseline(BM25(items), turn_ids, sizes),
        "bm25_stem": Baseline(BM25(items, analyzer=stemmed_tokens), turn_ids, sizes),
        "vector": Baseline(VectorIndex(embedder, items), turn_ids, sizes),
        "hybrid_sent": Baseline(
            SentenceHybrid(embedder, sentences), sentences.turn_ids, [count(text) for text in sentences.texts]
        ),
    }


def _scope(sample_id: str, session_id: str = "") -> Any:
    from acm.v1 import common_pb2

    return common_pb2.Scope(customer_id=CUSTOMER, user_id=sample_id, agent_id=AGENT, session_id=session_id)


async def ingest_turn(client: AcmClient, scope: Any, turn: Turn) -> str:
    """One LoCoMo turn through gRPC Ingest, as its speaker said it on its session's date; the job id. A
    shared photo's caption travels as an agent would send it, in metadata["image_caption"] (ingest makes it
    text of the turn); the baselines read it inline (item_text)."""
    from acm.domain.models import Role

    metadata = {"speaker": turn.speaker, **({"image_caption": turn.caption} if turn.caption else {})}
    response = await client.ingest(
        scope,
        turn.text,
        Role.USER,
        occurred_at=turn.occurred_at,
        turn_id=turn.turn_id,
        metadata=metadata,
    )
    return response.job_id


async def _ingest(client: AcmClient, acm: EmbeddedAcm, conv: Conversation, stats: IngestStats) -> None:
    """Every turn through gRPC Ingest, one at a time and in order (as an agent publishes them), then wait
    for every job; the wall time covers both. Then wait until the vector index has caught up (it follows
    the jobs through the memories topic), so no question sees a half-built index."""
    from acm.v1 import gateway_pb2

    start = time.perf_counter()
    jobs: list[tuple[Any, str]] = []
    for turn in conv.turns:
        scope = _scope(conv.sample_id, f"session_{turn.session}")
        jobs.append((scope, await ingest_turn(client, scope, turn)))
    for scope, job_id in jobs:
        job = await client.wait_job(scope, job_id, timeout_s=300)
        if job.status != gateway_pb2.JOB_STATUS_DONE:
            raise RuntimeError(f"{conv.sample_id}: ingest job {job_id} ended {job.status}: {job.error}")
        accepted, done = job.created_at.ToDatetime(), job.updated_at.ToDatetime()
        stats.job_ms.append((done - accepted).total_seconds() * 1000)
    stats.wall_s += time.perf_counter() - start
    stats.turns += len(conv.turns)
    waited = time.perf_counter()
    await wait_until_indexed(acm)
    stats.index_wait_s += time.perf_counter() - waited


async def wait_until_indexed(acm: EmbeddedAcm, timeout_s: float = 300.0) -> None:
    """Until every consumer group has reached the end of its topic on the embedded bus, including a group that
    has not committed on a topic yet (anticipate's first MemoriesIndexed, published by retrieve)."""
    import asyncio
    import sqlite3

    from acm.asyncapi import CONSUMERS

    path = Path(acm.urls.bus.removeprefix("sqlite:///"))
    deadline = time.monotonic() + timeout_s
    while True:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, isolation_level=None)
        try:
            # One read transaction, so both reads see the same moment: read apart, a consumer could publish
            # (say, a PoolReady) and commit between them and look done while what it published is unread.
            conn.execute("BEGIN")
            offsets = conn.execute("SELECT consumer_group, topic, seq FROM offsets").fetchall()
            last = dict(conn.execute("SELECT topic, MAX(seq) FROM records GROUP BY topic").fetchall())
            conn.execute("COMMIT")
        finally:
            conn.close()
        done = {(group, topic): seq for group, topic, seq in offsets}
        behind = [(g, t) for (g, t), seq in done.items() if seq < last.get(t, 0)]
        # Every group the services subscribe from the start (the catalogue is what EmbeddedAcm subscribes).
        behind += [
            (c.group, c.topic)
            for c in CONSUMERS
            if not c.from_now and (c.group, c.topic) not in done and last.get(c.topic, 0) > 0
        ]
        if not behind:
            return
        if time.monotonic() > deadline:
            raise TimeoutError(f"consumers still behind after {timeout_s:.0f} s: {behind}")
        await asyncio.sleep(0.05)


async def _ask_acm(client: AcmClient, sample_id: str, question: Question, encoding: str) -> Outcome:
    scope = _scope(sample_id)
    recall: dict[int, float] = {}
    tokens: dict[int, int] = {}
    latency_ms = math.nan
    for budget in BUDGETS:
        start = time.perf_counter()
        response = await client.fetch(scope, question.text, budget, encoding)
        if budget == TIMED_BUDGET:
            latency_ms = (time.perf_counter() - start) * 1000
        recall[budget] = evidence_recall(question.evidence, (m.source_turn_ids for m in response.memories))
        tokens[budget] = response.total_tokens
    ranked = (await client.fetch(scope, question.text, LARGE_BUDGET, encoding)).memories
    at_k = {k: evidence_recall(question.evidence, (m.source_turn_ids for m in ranked[:k])) for k in AT_K}
    first_rank = {e: next((i for i, m in enumerate(ranked) if e in m.source_turn_ids), None) for e in question.evidence}
    detail = {
        "sample_id": sample_id,
        "question": question.text,
        "category": question.category,
        "evidence": list(question.evidence),
        "recall_1000": recall[BUDGETS[0]],
        "evidence_rank": first_rank,  # position of the first memory built from each evidence turn (None: absent)
        "top": [[m.text, list(m.source_turn_ids)] for m in ranked[:12]],
    }
    return Outcome(question.category, recall, at_k, latency_ms, tokens, detail, sample_id)


def _ask_baseline(baseline: Baseline, q: Question, sample_id: str) -> Outcome:
    start = time.perf_counter()
    ranking = baseline.ranker.rank(q.text)
    sizes, turn_ids = baseline.sizes, baseline.turn_ids
    timed = fill_budget(ranking, sizes, TIMED_BUDGET)
    latency_ms = (time.perf_counter() - start) * 1000
    bundles = {b: timed if b == TIMED_BUDGET else fill_budget(ranking, sizes, b) for b in BUDGETS}
    recall = {b: evidence_recall(q.evidence, ([turn_ids[i]] for i in kept)) for b, kept in bundles.items()}
    at_k = {k: evidence_recall(q.evidence, ([turn_ids[i]] for i in ranking[:k])) for k in AT_K}
    tokens = {b: sum(sizes[i] for i in kept) for b, kept in bundles.items()}
    return Outcome(q.category, recall, at_k, latency_ms, tokens, sample_id=sample_id)


def _result(
    conversations: Sequence[Conversation],
    options: Options,
    outcomes: Mapping[str, Sequence[Outcome]],
    stats: IngestStats,
    started_at: datetime,
    duration_s: float,
) -> dict[str, Any]:
    systems = {name: summarise(outcomes[name]) for name in SYSTEMS}
    return {
        "systems": systems,
        "lead_over_best_baseline": lead_over_best_baseline(systems),
        "by_conversation": by_conversation({name: outcomes[name] for name in SYSTEMS}),
        "run": {
            "data": options.data.name,
            "encoding": options.encoding,
            "embedder": options.embedder,
            "conversations": len(conversations),
            "turns": stats.turns,
            "questions": len(outcomes["acm"]),
            "skipped_no_evidence": sum(c.skipped_no_evidence for c in conversations),
            "evidence_normalised": [e for c in conversations for e in c.evidence_fixed],
            "ingest_ms_per_turn": round(1000 * stats.wall_s / stats.turns, 2) if stats.turns else None,
            "ingest_job_p50_ms": _ms(percentile(stats.job_ms, 50)),
            "index_wait_s": round(stats.index_wait_s, 2),
            "budgets": list(BUDGETS),
            "recall_at_k_budget": LARGE_BUDGET,
            "mean_bundle_tokens": {name: mean_bundle_tokens(outcomes[name]) for name in SYSTEMS},
            "started_at": started_at.isoformat(timespec="seconds"),
            "duration_s": round(duration_s, 1),
        },
    }


def _print_tables(console: Console, result: Mapping[str, Any]) -> None:
    from rich.table import Table

    def cell(value: object) -> str:
        return "-" if value is None else str(value)

    run_info = result["run"]
    for name in SYSTEMS:
        caption = f"@B: bundle of B {run_info['encoding']} tokens; R@k: first k items"
        table = Table(title=f"{name}: recall %", caption=caption)
        for column in ("category", "@1000", "@2000", "R@5", "R@10", "p50 ms", "p95 ms", "n"):
            table.add_column(column, justify="left" if column == "category" else "right")
        for group, row in result["systems"][name].items():
            label = "all" if group == "all" else f"{group} {CATEGORIES[int(group)]}"
            table.add_row(
                label,
                *(cell(row[k]) for k in ("recall_1000", "recall_2000", "recall_at_5", "recall_at_10")),
                cell(row["fetch_p50_ms"]),
                cell(row["fetch_p95_ms"]),
                cell(row["n"]),
            )
        console.print(table)
    for sample, systems in result["by_conversation"].items():
        cells = ", ".join(f"{name} {cell(rows['all'])} (multi-hop {cell(rows['1'])})" for name, rows in systems.items())
        console.print(f"{sample} recall@{BUDGETS[0]}: {cells}")
    tokens = ", ".join(f"{name} {t['1000']} / {t['2000']}" for name, t in run_info["mean_bundle_tokens"].items())
    console.print(
        f"ingest: {run_info['ingest_ms_per_turn']} ms/turn wall ({run_info['turns']} turns), job accepted→done p50 "
        f"{run_info['ingest_job_p50_ms']} ms; vector index catch-up {run_info['index_wait_s']} s"
    )
    console.print(f"mean bundle tokens (budget 1,000 / 2,000): {tokens}")
    console.print(f"{run_info['questions']} questions, duration {run_info['duration_s']} s")
    console.print(f"[bold]{lead_line(result['lead_over_best_baseline'])}[/bold]")


def write_plot(result: Mapping[str, Any], path: Path) -> bool:
    """Grouped bars of recall@1000 by category, one bar per system; False when matplotlib is missing."""
    plt = pyplot()
    if plt is None:
        return False
    groups = [*(str(c) for c in CATEGORIES), "all"]
    labels = [f"{CATEGORIES[int(g)]}\n(n={result['systems']['acm'][g]['n']})" if g != "all" else "all" for g in groups]
    width = 0.8 / len(SYSTEMS)
    fig, ax = plt.subplots(figsize=(12, 5))
    for s, name in enumerate(SYSTEMS):
        values = [result["systems"][name][g]["recall_1000"] or 0.0 for g in groups]
        xs = [i + (s - (len(SYSTEMS) - 1) / 2) * width for i in range(len(groups))]
        bars = ax.bar(xs, values, width, label=name)
        ax.bar_label(bars, fmt="%.0f", fontsize=7, padding=2)
    ax.set_xticks(range(len(groups)), labels)
    ax.set_ylabel("evidence recall in a 1,000-token bundle (%)")
    ax.set_ylim(0, 118)  # room for the legend above the bars
    run_info = result["run"]
    ax.set_title(
        f"LoCoMo {run_info['data']}: recall@1000 tokens ({run_info['encoding']}, {run_info['embedder']})\n"
        + lead_line(result["lead_over_best_baseline"]),
        fontsize=10,
    )
    ax.legend(ncols=len(SYSTEMS), loc="upper center", fontsize=8)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return True
