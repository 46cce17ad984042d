"""The turns of `acm bench fleet`'s simulated agents: LoCoMo-like dialogue and tool JSON.

Dialogue comes from LoCoMo conversations when a file is given (each agent starts in a conversation of its
own), else from seeded template sentences; tool calls and their JSON answers come from the tool-heavy
session generator (acm_benchmarks.toolsessions). Pure: same (agent, count, seed, dialogue), same turns;
everything is generated before the clock starts, so the load loop does no generation work.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from acm_benchmarks.toolsessions import KINDS
from acm_benchmarks.toolsessions import generate as generate_tool_session

TOOL_SESSION_TURNS = 40  # a tool session is generated this long and replayed from the start when used up
QUERY_CHARS = 300  # what an agent sends as its Fetch query: the last thing said, cut here

NAMES = ("Caroline", "Melanie", "Jon", "Gina", "Audrey", "Andrew", "Nate", "Joanna", "Tim", "John", "Maria", "Evan")
PLACES = ("Lisbon", "the lake", "Boston", "the pottery class", "the shelter", "Tokyo", "the beach", "the museum")
THINGS = ("a puppy", "a new guitar", "a painting", "running shoes", "a camping tent", "a cookbook", "a bike")
ACTIVITIES = ("hiking", "painting", "volunteering", "baking", "swimming", "reading", "playing chess", "gardening")
WHEN = ("yesterday", "last weekend", "last month", "on Tuesday", "two weeks ago", "this morning", "in May")
TEMPLATES = (
    "I went {activity} at {place} with {name} {when}.",
    "{name} gave me {thing} {when}, I love it!",
    "Did you end up going to {place}? I remember you said {name} would be there.",
    "I've been {activity} a lot lately, it really helps me relax after work.",
    "We're planning a trip to {place} next month, {name} is coming too.",
    "I finally bought {thing} {when}; {name} helped me pick it.",
    "That sounds amazing! How long have you been into {activity}?",
    "{name} and I talked about {activity} {when}, she wants to try it at {place}.",
)


@dataclass(frozen=True, slots=True)
class FleetTurn:
    role: str  # user, assistant or tool (acm.domain.models.Role values)
    content: str
    tool_name: str = ""
    speaker: str = ""  # a dialogue turn's speaker, sent as metadata
    query: str = ""  # what the agent asks Fetch before this turn's "model call": the last prose said


def template_dialogue(count: int, seed: int) -> list[tuple[str, str]]:
    """``count`` (speaker, sentence) lines of everyday chat from the templates, seeded."""
    rng = random.Random(f"fleet-dialogue:{seed}")
    speakers = rng.sample(NAMES, 2)
    return [
        (
            speakers[i % 2],
            rng.choice(TEMPLATES).format(
                name=rng.choice(NAMES),
                place=rng.choice(PLACES),
                thing=rng.choice(THINGS),
                activity=rng.choice(ACTIVITIES),
                when=rng.choice(WHEN),
            ),
        )
        for i in range(count)
    ]


def agent_turns(
    agent: int,
    count: int,
    seed: int,
    *,
    dialogue: Sequence[Sequence[tuple[str, str]]] = (),
    tool_share: float = 0.3,
) -> list[FleetTurn]:
    """Agent ``agent``'s first ``count`` turns: dialogue lines (from ``dialogue``, a list of conversations of
    (speaker, text), the agent starting in conversation ``agent`` mod their number; templates when empty),
    with a share ``tool_share`` of turns taken from a tool-heavy session instead (calls and JSON answers)."""
    if not 0.0 <= tool_share <= 1.0:
        raise ValueError(f"tool_share must be between 0 and 1 (got {tool_share})")
    rng = random.Random(f"fleet-agent:{seed}:{agent}")
    lines: list[tuple[str, str]] = (
        [line for conv in (dialogue[(agent + j) % len(dialogue)] for j in range(len(dialogue))) for line in conv]
        if dialogue
        else template_dialogue(max(count, 1), seed * 1000 + agent)
    )
    tools = generate_tool_session(KINDS[agent % len(KINDS)], TOOL_SESSION_TURNS, seed * 1000 + agent).turns
    said = lines[0][1]
    turns: list[FleetTurn] = []
    line_i = tool_i = 0
    for _ in range(count):
        if tools and rng.random() < tool_share:
            gen = tools[tool_i % len(tools)]
            tool_i += 1
            if gen.role == "user":  # the user's prose; an agent queries with that, not with its own calls
                said = gen.text
            turns.append(FleetTurn(gen.role, gen.text, gen.tool_name, query=said[:QUERY_CHARS]))
        else:
            speaker, text = lines[line_i % len(lines)]
            line_i += 1
            turns.append(FleetTurn("user", text, speaker=speaker, query=said[:QUERY_CHARS]))
            said = text
    return turns


def locomo_dialogue(path: str) -> list[list[tuple[str, str]]]:
    """LoCoMo conversations as lists of (speaker, text), in order (a shared photo's caption kept in the text)."""
    from pathlib import Path

    from acm_benchmarks.locomo import load_conversations

    return [[(t.speaker, t.content) for t in conv.turns] for conv in load_conversations(Path(path))]
