"""The learned secret detector (acm.domain.secret_model): candidates, features, the shipped weights, its wiring in
acm.domain.pii as a second opinion beside the rules, and the training data generator."""

from __future__ import annotations

import dataclasses
import json
import runpy
from datetime import UTC, datetime
from importlib import resources
from pathlib import Path

import pytest

from acm.domain import secret_model
from acm.domain.models import Role, Turn
from acm.domain.pii import PiiRules, redact, redact_turn
from acm.domain.scope import Scope
from acm.domain.secret_model import Candidate, candidates, feature_index, features

ROOT = Path(__file__).resolve().parents[2]
RULES_ONLY = PiiRules(secret_model=False)


def _values(text: str) -> list[str]:
    return [c.value for c in candidates(text)]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("my pw is Harbor2291! ok", ["Harbor2291!"]),  # "!" kept: passwords end with one
        ("码是8841。", ["8841"]),  # CJK text around a value ends the token
        ("pass=Harbor22", ["Harbor22"]),  # the value of an assignment, not the name
        ("the phrase maple-tiger-river opens it", ["maple-tiger-river"]),
        ("see P@ssword and 2019", ["P@ssword", "2019"]),
        ("the **Reservation** is confirmed", []),  # markdown emphasis, then a plain word
        ("great! self-care matters", []),  # a sentence's "!" and one hyphen are words
        ("call 123456789 now", []),  # nine digits: a number, not a code
        ("trace 0af7651916cd43dd8448eb211c80319c", []),  # a hex run: an identifier (the rules' business)
        ("id d35f6cab-57c8-4bc4-aba9-3e12df9d9644", []),  # a UUID
        ("saved to uploads/a1b2c3d4.png", []),  # a path
        ("mail jdoe42@example.com", []),  # an email is the email detector's
    ],
)
def test_candidates_are_tokens_shaped_like_a_secret(text: str, expected: list[str]) -> None:
    assert _values(text) == expected


def test_candidate_offsets_point_at_the_value() -> None:
    text = "login: jdoe / pwd=Tiger#2024."
    [cand] = list(candidates(text))
    assert text[cand.start : cand.end] == cand.value == "Tiger#2024"


def test_features_name_the_shape_the_words_around_and_the_nearest_cue() -> None:
    text = "my password is Harbor2291! for the router"
    [cand] = list(candidates(text))
    feats = set(features(text, text.lower(), cand))
    assert {"cls:Ulds", "shape:Aa9!", "l1:is", "l:password", "r1:for", "cue:pw:1"} <= feats
    assert "len:5" in feats  # 11 characters: the 9-11 bucket


def test_features_read_chinese_context_and_cues() -> None:
    text = "验证码是482913，请勿泄露"
    [cand] = list(candidates(text))
    feats = set(features(text, text.lower(), cand))
    assert {"lz:证码", "lz:码是", "lz1:是", "rz:请勿", "cue:otp:0", "cls:d", "run:4"} <= feats


def test_a_cue_far_away_or_missing_is_a_different_feature() -> None:
    near = "pin 4821"
    far = "pin: we moved in and the alarm still says 4821"
    none = "room 4821"
    get = [
        set(features(t, t.lower(), Candidate(t.index("4821"), t.index("4821") + 4, "4821"))) for t in (near, far, none)
    ]
    assert "cue:pin:0" in get[0] and "cue:none:6" in get[2]
    assert not any(f.startswith("cue:pin:0") for f in get[1])


def test_feature_index_is_stable_across_processes() -> None:
    # crc32, not hash(): the shipped weights are indexed by it.
    assert (feature_index("bias"), feature_index("l1:is")) == (27227, 25275)


def test_shipped_weights_load_and_flag_a_password_said_in_prose() -> None:
    model = secret_model.shipped()
    assert 0.5 <= model.threshold < 1.0 and len(model.weights) > 1000
    text = "the wifi one is Harbor2291!"
    [(start, end, p)] = list(model.spans(text))
    assert text[start:end] == "Harbor2291!" and p >= model.threshold


def test_shipped_weights_are_package_data() -> None:
    # pyproject's [tool.setuptools.package-data] ships the file with acm.domain; a wheel without it cannot redact.
    data = json.loads(resources.files("acm.domain").joinpath(secret_model.WEIGHTS_FILE).read_text("utf-8"))
    assert data["dim"] == secret_model.DIM
    pyproject = (ROOT / "pyproject.toml").read_text("utf-8")
    assert '"acm.domain" = ["secret_model.json"]' in pyproject


@pytest.mark.parametrize(
    "text",
    ["the wifi one is Harbor2291!", "Harbor2291! is what I use everywhere", "我一直用Copper88!这个"],
)
def test_redact_adds_what_the_rules_miss(text: str) -> None:
    assert redact(text, RULES_ONLY).total == 0  # the rules have no cue here ...
    assert redact(text).counts == {"secret": 1}  # ... the model's second opinion redacts it


@pytest.mark.parametrize(
    "text",
    [
        "my order 48213 shipped on 2024-05-01",
        "we adopted Max in 2021 and he is 3 now",
        "upgraded to v2.14.3 yesterday",
        "card ending in 7447",
        "the zip code is 94107",
        "it cost $1299.00",
        "Sure, it's sofia_kim_7287.",
        "flight UA2291 lands at 18:05, room 1204",
    ],
)
def test_look_alikes_stay(text: str) -> None:
    assert redact(text).text == text


def test_a_rule_span_keeps_its_kind() -> None:
    # The model may score a card's digits; the rule's card stands (a second opinion never renames a finding).
    assert redact("Amex 3782 822463 10005 is the one on file").counts == {"card": 1}


def test_training_data_is_seeded_labelled_bilingual_and_split_by_phrasing() -> None:
    generate = runpy.run_path(str(ROOT / "tests/data/safety/make_train_secrets.py"))["generate"]
    rows = generate(seed=7, per_family=20)
    assert rows == generate(seed=7, per_family=20)
    for row in rows:
        for start, end in row["spans"]:
            assert 0 <= start < end <= len(row["text"])
    assert any(row["spans"] for row in rows) and sum(not row["spans"] for row in rows) > len(rows) / 3
    assert any("密码" in row["text"] and row["spans"] for row in rows)
    assert {row["split"] for row in rows} == {"train", "dev"}
    # A dev phrasing is never a train phrasing: the split is by template, within each family.
    dev = {(row["family"], row["phrasing"]) for row in rows if row["split"] == "dev"}
    train = {(row["family"], row["phrasing"]) for row in rows if row["split"] == "train"}
    assert dev and not dev & train


def test_a_turn_s_tool_json_and_metadata_get_the_second_opinion() -> None:
    turn = Turn(
        turn_id="t1",
        scope=Scope("c", "acme", "u1", "agent", "s1"),
        role=Role("tool"),
        content='{"note": "the wifi one is Harbor2291!", "order": "48213"}',
        occurred_at=datetime(2026, 12, 1, tzinfo=UTC),
        metadata={"comment": "我一直用Copper88!这个"},
    )
    out, counts = redact_turn(turn)
    assert "Harbor2291!" not in out.content and "48213" in out.content
    assert "Copper88!" not in out.metadata["comment"]
    assert counts == {"secret": 2}
    assert redact_turn(turn, RULES_ONLY)[1] == {}


def test_a_flag_s_dashes_and_every_name_before_the_value_are_not_the_value() -> None:
    text = "kubectl create secret generic db --from-literal=password=Tiger#2024"
    assert _values(text) == ["Tiger#2024"]


def _log(lines: int) -> str:
    return "".join(
        f"2026-11-0{i % 9 + 1} build {4810 + i} order ORD-{48213 + i} v2.{i}.3 took {100 + i}ms\n" for i in range(lines)
    )


def test_inside_a_whole_artifact_a_token_needs_the_crowd_threshold() -> None:
    said = "the wifi one is Harbor2291!"
    crowded = _log(3) + said + "\n" + _log(3)
    model = secret_model.shipped()
    assert model.threshold < model.crowd_threshold < 1.0
    as_prose = dataclasses.replace(model, crowd_threshold=model.threshold)
    silent = dataclasses.replace(model, crowd_threshold=1.0)
    assert [crowded[s:e] for s, e, _p in as_prose.spans(crowded)] == ["Harbor2291!"]
    assert not list(silent.spans(crowded))
    # Far from the crowd (over 300 characters), a sentence again: the prose threshold.
    apart = said + "\n" + " " * 400 + _log(3)
    assert [apart[s:e] for s, e, _p in silent.spans(apart)] == ["Harbor2291!"]
    # The shipped bar among a log's ids: this one stays (its words there score under 0.9965); a rule finds its own.
    assert redact(crowded).total == 0
    assert redact(crowded + "card 4539 1488 0343 6467").counts == {"card": 1}


def test_artifacts_are_seeded_labelled_and_mostly_ids() -> None:
    generate = runpy.run_path(str(ROOT / "tests/data/safety/make_train_artifacts.py"))["generate"]
    rows = generate(seed=7, per_family=8)
    assert rows == generate(seed=7, per_family=8)
    assert {row["split"] for row in rows} == {"train", "dev"}
    assert all(row["split"] == ("dev" if row["phrasing"] == 3 else "train") for row in rows)
    secrets = ids = 0
    for row in rows:
        for start, end in row["spans"]:
            assert 0 <= start < end <= len(row["text"])
            assert row["text"][start:end].strip() == row["text"][start:end]
        found = list(candidates(row["text"]))
        secrets += sum(any(c.start < e and c.end > s for s, e in row["spans"]) for c in found)
        ids += len(found)
    assert secrets and ids > 20 * secrets
