"""Distributed ingest benchmark: turns/s through real Kafka with one and with two ingest replicas, and
freshness (Ingest accepted → the turn retrievable by Fetch).

Each configuration (replicas = 1, then 2, one after the other in one run) is a stack of its own: every ACM
service an OS process (scripts/bench/_stack.py, the approach of tests/e2e/test_distributed.py) against the
real Kafka, Postgres, Neo4j and Redis, with a fresh Postgres database, a Kafka topic namespace, a vector
store folder (qdrant-edge by default, see scripts/bench/_stack.py) and a client id of its own. Topics have 2
partitions, so two ingest replicas in one consumer group split the turns by session; each replica's share is
counted from its log. The turns' partition key starts with the client id, so the id is picked to split this
chat within 52/48 (with only 87 sessions a random id can put 2/3 of the turns on one partition, which would
decide the comparison by itself).

Workload (the same in every configuration): a seeded chat of `--turns` turns by 30 users (3 customers),
2-4 sessions each, from a few hundred hand-written sentence templates filled with names, places, dates,
amounts and a persona per user; no external data. Every turn is checked to become at least one fact.

Per configuration:
1. warm-up: a few turns until every replica has handled one (group joined, partitions assigned, caches
   and connections warm);
2. throughput: all turns submitted through the gateway's gRPC Ingest, `--concurrency` in flight; a few
   GetJob pollers (oldest job first, with backoff) wait for every job; turns/s = turns / (last job DONE −
   first accept), DONE times being the jobs' server-side `updated_at`. Then the run waits until no
   consumer group has records left (Kafka lag, sampled every 0.5 s): the vector index (retrieve) follows
   ingest through acm.memories.v1, and "all consumers caught up" is the whole pipeline's drain time;
3. freshness: more turns of the same chat at a steady rate below capacity (`--fresh-load` × the first
   configuration's throughput, the same rate for both); one of every `--fresh-every` is a sample: from its
   accept, Fetch in the user's scope with the turn's sentence as query every `--fresh-interval-ms`, until a
   memory whose source_turn_ids holds the turn id comes back (a miss after `--fresh-timeout-s`).
   Freshness is measured apart from the throughput burst on purpose: during a burst the backlog, not the
   pipeline, decides when a turn becomes retrievable (reported as the burst's accept → DONE latency), and
   dozens of samples polling every 20 ms would take the CPU the ingest replicas are measured on. Probes
   share `--fresh-max-inflight` Fetch slots, so a slow Fetch cannot snowball into more load.

CPU seconds per service process, per server (Kafka, Postgres, Neo4j, Redis) and for the whole machine are
read from /proc for each phase: everything shares the machine's cores, which caps what a second replica
can add. A machine already busy before the start is reported (and named) as a warning.

Progress lines while it runs, a table at the end, everything in results/ingest_kafka.json and a plot in
results/ingest_kafka.png (when matplotlib is installed). Processes are always stopped (SIGTERM, then kill),
the database dropped and the stack's topics, graph and cache keys removed, on failure, Ctrl-C and SIGTERM
too; a service that dies has the end of its log printed (logs are kept after a failure, or with --keep-logs).

    .venv/bin/python scripts/bench/ingest_kafka.py [--turns 600] [--replicas 1,2] [--fresh-samples 100]
        [--embedder minilm] [--service-env OPENBLAS_NUM_THREADS=1] [--wait-quiet-s 300]
        [--out results/ingest_kafka.json] [--keep-logs]

Servers come from ACM_TEST_{KAFKA_BOOTSTRAP,POSTGRES_DSN,NEO4J_URI,REDIS_URL}, else from
scripts/infra/up.sh (which starts any that is down).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import platform
import random
import signal
import statistics
import sys
import threading
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass, field, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import FrameType
from typing import Any, TypeVar

import grpc
from _stack import ROOT, Infra, KafkaLag, ServiceDied, Stack, infra_addresses
from aiokafka.partitioner import DefaultPartitioner

from acm.client import AcmClient
from acm.convert import turn_from_pb
from acm.domain.models import Role
from acm.domain.schema import default_schema
from acm.domain.scope import Scope
from acm.v1 import common_pb2, gateway_pb2
from acm_ingest.pipeline import plan_turn
from acm_ingest.settings import IngestSettings

T = TypeVar("T")
AGENT = "concierge"
CUSTOMERS = ("acme", "globex", "initech")
FETCH_BUDGET = 1000
OVERLOAD_LAG = 20  # turns waiting in Kafka during the freshness phase: beyond this, it measured a backlog
# gRPC codes worth retrying an Ingest on: the gateway says so when the bus did not take the turn.
_RETRYABLE = (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED)

# --- the chat ---------------------------------------------------------------------------------------------

FIRST_NAMES = """Maria Tomas Aisha Kenji Lena Omar Sofia Pavel Ines Raj Chloe Mateo Yara Felix Nadia Hugo Priya
Lars Amara Diego Mei Jonas Zara Luca Elif Andre Noor Oskar Leila Marco Hana Ivan Greta Samir Julia Teo Ayla
Bruno Freya Karim Rosa Emil Dalia Nico Vera Arjun Clara Milo Sana Rafael Ingrid Tariq Alba Viktor Esme Hamid
Lucia Soren Maya Idris""".split()
CITIES = """Lisbon Porto Madrid Valencia Seville Barcelona Marseille Lyon Bordeaux Nantes Brussels Antwerp
Utrecht Rotterdam Hamburg Munich Leipzig Cologne Vienna Graz Zurich Geneva Milan Turin Bologna Naples Prague
Brno Krakow Gdansk Warsaw Budapest Ljubljana Zagreb Split Athens Thessaloniki Istanbul Izmir Oslo Bergen
Stockholm Gothenburg Copenhagen Aarhus Helsinki Tallinn Riga Vilnius Dublin Galway Cork Edinburgh Glasgow
Manchester Bristol Montreal Toronto Vancouver Boston Denver Austin Seattle Chicago Nairobi Accra Lagos Cairo
Marrakesh Tokyo Osaka Kyoto Seoul Busan Taipei Singapore Bangkok Hanoi Melbourne Sydney Auckland""".split()
RELATIONS = "sister brother cousin colleague neighbour friend aunt uncle mother father boss flatmate".split()
VENUES = (
    "Casa Lupita; the Blue Door; Golden Lotus; Bistro Margaux; the Harbour Grill; Cafe Aurora; "
    "the Copper Kettle; Trattoria Nonna; the Green Fig; Sakura House; the Old Mill; Taverna Kostas; "
    "the Salt Room; Lotus Garden; the Red Lantern; Cantina Verde; the Olive Tree; Brasserie Lumiere"
).split("; ")
COMPANIES = """Northwind Contoso Initrode Fabrikam Tailspin Wingtip Litware Proseware Adatum Brightline Vandelay
Hooli Stratos Pinecrest Bluewave Orbitel Meridian Quantica Solvent Keystone""".split()
JOBS = (
    "product manager; data analyst; nurse; architect; sales lead; teacher; software engineer; "
    "accountant; designer; pharmacist; project coordinator; researcher"
).split("; ")
PROJECTS = [f"Project {p}" for p in "Falcon Orion Bluebird Atlas Juniper Nimbus Cedar Harbor Polaris Quill".split()]
TICKET_PREFIXES = ("INC", "ORD", "CASE", "RMA")
ITEMS = (
    "bike; laptop; sofa; coffee machine; standing desk; pair of headphones; washing machine; camera; "
    "e-reader; tent; kayak; dishwasher; drone; sewing machine; espresso grinder; winter coat; "
    "pair of hiking boots; monitor; blender; electric scooter"
).split("; ")
HOBBIES = (
    "climbing; pottery; chess; salsa; cycling; photography; choir; rowing; birdwatching; woodworking; "
    "tennis; sailing; yoga; gardening; painting; swimming"
).split("; ")
FOODS = "mushrooms; shellfish; peanuts; coriander; sushi; ramen; olives; aubergine; goat cheese".split("; ")
DISHES = "paella; lasagne; pad thai; shakshuka; risotto; moussaka; dumplings; a lamb tagine".split("; ")
PETS = "dog; cat; rabbit; parrot; tortoise; hamster".split("; ")
PET_NAMES = "Biscuit Luna Pepper Mochi Nutmeg Ziggy Olive Bruno Pickles Sushi Clementine Waffles".split()
COLOURS = "sage green; navy blue; terracotta; mustard yellow; off-white; charcoal grey".split("; ")
BANDS = "the Lumineers; Arctic Monkeys; Florence and the Machine; Khruangbin; Bon Iver; Tame Impala".split("; ")
TEAMS = "Benfica; Ajax; Celtic; Napoli; Porto; Galatasaray; Boca Juniors".split("; ")
LANGUAGES = "Japanese; Portuguese; Italian; Korean; Dutch; Arabic; Polish; Swahili".split("; ")
SUBJECTS = "statistics; organic chemistry; macroeconomics; linear algebra; art history".split("; ")
BOOKS = "The Salt Road; A Winter in Bergen; The Clockmaker's Daughter; Small Hours; The Long Field".split("; ")
PLACES = (
    "the old harbour; the central station; the botanical garden; the river; the cathedral; "
    "the university library; the market hall; the city park; the ferry terminal; the castle"
).split("; ")
MONTHS = "January February March April May June July August September October November December".split()
WEEKDAYS = "Monday Tuesday Wednesday Thursday Friday Saturday Sunday".split()
RELATIVE_DAYS = "next Friday; this weekend; tomorrow; next week; on Saturday morning; next Tuesday".split("; ")
TIMES = "7:30; 8am; 9:15; noon; 1:30pm; 3pm; 4:45pm; 6:15pm; 7pm; 8:30pm".split("; ")

# What users say. Slots: {name} {name2} {rel} {city} {city2} {venue} {company} {job} {project} {ticket}
# {item} {hobby} {food} {dish} {pet} {petname} {colour} {band} {team} {language} {subject} {book} {place}
# {date} {month} {weekday} {relday} {time} {num} {amount}, and the user's persona: {me_city} {me_company}
# {me_partner} {me_pet} {me_petname} {me_hobby}.
USER_FRAMES = [
    # travel
    "I'm flying to {city} on {date} for {name}'s wedding.",
    "We booked a cabin near {city} for the week of {date}.",
    "My train to {city} leaves at {time} on {weekday}.",
    "I spent {num} days in {city} with my {rel} {name} in {month}.",
    "The hotel in {city} cancelled our booking for {date}, so we moved to a guesthouse near {place}.",
    "I'd like a window seat on the {time} flight from {me_city} to {city}.",
    "My passport expires in {month}, so I need to renew it before the {city} trip.",
    "We're driving from {me_city} to {city} {relday} with {name} and the kids.",
    "My luggage got lost on the way back from {city} and the claim is {ticket}.",
    "{name} recommended a restaurant called {venue} in {city}.",
    "I want to visit {city} and {city2} in {month} but only have {num} days off.",
    "The ferry from {city} to {city2} was delayed by {num} hours on {weekday}.",
    "We rented a flat in {city} through a friend of {name} for {amount} a week.",
    "My visa appointment for the {city} trip is on {date} at {time}.",
    "I always get motion sick on long bus rides, so I'd rather take the train to {city}.",
    "Our flight back from {city} lands at {time} on {date}.",
    "I'm looking for a quiet hotel near {place} in {city} for {num} nights.",
    "We went hiking above {city} last {month} and {name} twisted an ankle.",
    "The cheapest fare to {city} I found was {amount} with a stop in {city2}.",
    "I'm taking my {rel} to {city} for their birthday on {date}.",
    # work
    "I started a new job at {company} as a {job} on {date}.",
    "My manager {name} wants the {project} report by {weekday}.",
    "The quarterly review with {company} moved to {date} at {time}.",
    "I'm presenting {project} to the board in {city} {relday}.",
    "Our team at {me_company} is hiring {num} people this quarter.",
    "{name} from {company} asked for a {num} percent discount on the renewal.",
    "I'll be working from {city} until the end of {month}.",
    "The deadline for the {project} proposal is {date}.",
    "Ticket {ticket} about the broken {item} is still open.",
    "My expense report for the {city} trip came to {amount}.",
    "{name} is leaving {me_company} at the end of {month} to join {company}.",
    "The {project} launch slipped to {date} because the supplier in {city} is late.",
    "I got promoted to senior {job} at {me_company} in {month}.",
    "We signed the contract with {company} for {amount} on {weekday}.",
    "I'm interviewing a candidate called {name} for the {job} role on {date}.",
    "The offsite with the {project} team is in {city} from {date}.",
    "Our office in {me_city} is moving to a building near {place} in {month}.",
    "I have a one-to-one with {name} every {weekday} at {time}.",
    "{company} still owes us {amount} for the {project} invoice.",
    "I'm mentoring {name}, a new {job}, until {month}.",
    # family and friends
    "My {rel} {name} just moved to {city} for a new job.",
    "{name}'s birthday is on {date} and they love {dish}.",
    "My {rel} {name} is getting married in {city} in {month}.",
    "We're hosting {num} friends for dinner on {weekday}.",
    "My partner {me_partner} and I celebrate our anniversary on {date}.",
    "Our daughter starts school in {city} in {month}.",
    "My {rel} {name} is visiting from {city} {relday}.",
    "{me_partner} is allergic to {food}, so please leave it out of the recipes.",
    "My {rel} {name} had a baby girl on {date}.",
    "{name} and {name2} are coming to stay with us from {date}.",
    "My grandmother turns ninety on {date} and we're throwing a party in {city}.",
    "{me_partner} got a job offer from {company} in {city}.",
    "My {rel} {name} is recovering from knee surgery in {city}.",
    "Our son has his first {hobby} tournament on {date}.",
    "{name} lent me {amount} for the deposit and I'll pay it back in {month}.",
    "I promised {name} I'd help them move flats on {weekday}.",
    "My {rel} lives near {place} in {city} and works as a {job}.",
    "We're spending the holidays at my {rel}'s house in {city} this year.",
    # health
    "I have a dentist appointment on {date} at {time}.",
    "My physiotherapist {name} said I should rest my knee for {num} weeks.",
    "I've been running {num} kilometres every {weekday} since {month}.",
    "I'm trying to cut down on {food} until {month}.",
    "My blood test results come back on {date}.",
    "I sprained my wrist playing {hobby} on {weekday}.",
    "The clinic in {me_city} moved my check-up to {date} at {time}.",
    "I started taking vitamin D in {month} on my doctor's advice.",
    "I'm allergic to {food} and carry an antihistamine everywhere.",
    "I sleep badly when I work late, so I stop screens at {time}.",
    # food
    "My favourite restaurant in {me_city} is {venue}, the {dish} there is great.",
    "I'm learning to cook {dish} for {name}'s party on {date}.",
    "We ordered {dish} from {venue} and it arrived cold.",
    "I became vegetarian in {month} after a trip to {city}.",
    "I'm baking a cake for {num} people for {name}'s leaving do.",
    "{venue} in {city} does the best {dish} I have ever had.",
    "I can't stand {food}, it ruins any dish for me.",
    "We're trying the new tasting menu at {venue} on {date}.",
    # hobbies
    "I joined a {hobby} club in {me_city} that meets every {weekday}.",
    "I'm reading {book} for my book club on {date}.",
    "I finally finished the {hobby} course I started in {month}.",
    "I bought a used {item} for {amount} to get back into {hobby}.",
    "My {hobby} team plays the final in {city} on {date}.",
    "I've been practising {hobby} with {name} at {place} on {weekday}s.",
    "I want to take up {hobby} this year, maybe with {name}.",
    "My {me_hobby} group is going on a trip to {city} in {month}.",
    "I'm entering a {hobby} competition in {city} on {date}.",
    "I built a bookshelf for {name} out of reclaimed oak last {month}.",
    # home and purchases
    "The new {item} I ordered from {company} is arriving on {date}.",
    "Our landlord is raising the rent by {amount} starting in {month}.",
    "I'm painting the living room {colour} {relday}.",
    "The plumber is coming on {weekday} at {time} to fix the boiler.",
    "I returned the {colour} {item} because it was faulty.",
    "We're moving to a bigger flat in {city} in {month}.",
    "The warranty on my {item} runs out on {date}.",
    "Our neighbour {name} is renovating and the noise starts at {time} every day.",
    "I sold my old {item} to {name} for {amount}.",
    "The broadband at home has been down since {weekday} and {company} keeps rescheduling.",
    "We finally bought a flat near {place} in {me_city}.",
    "I'm replacing the {item} because the repair would cost {amount}.",
    # pets
    "My {me_pet} {me_petname} has a vet appointment on {date}.",
    "We adopted a {pet} named {petname} from a shelter in {city}.",
    "{me_petname} chewed through the cable of my {item} on {weekday}.",
    "{name} is looking after {me_petname} while we're in {city}.",
    "Our {pet} {petname} turned {num} in {month}.",
    "The dog sitter charges {amount} a day, which is a lot for {me_city}.",
    # money
    "I paid {amount} for the {item} but was charged twice.",
    "My subscription to {company} renews on {date} for {amount}.",
    "I'm saving {amount} a month for a trip to {city}.",
    "The refund of {amount} for order {ticket} still hasn't arrived.",
    "My bank in {me_city} blocked my card after a purchase in {city}.",
    "I split the {venue} bill with {name}, it was {amount} each.",
    "We set a budget of {amount} for {name}'s wedding present.",
    "I moved my savings to {company} because of the better rate.",
    # scheduling and support
    "Can you remind me to call {name} about the {project} budget on {weekday}?",
    "Please move my {time} meeting with {name} to {date}.",
    "I can't log in to the {company} portal since {weekday}.",
    "Set up a call with {name} from {company} for {relday} at {time}.",
    "The {item} I bought in {city} stopped working after {num} days.",
    "Could you find me a {hobby} class in {me_city} on {weekday} evenings?",
    "Please book a table for {num} at {venue} on {date}.",
    "I need a reminder to renew my gym membership before {date}.",
    "Can you draft an email to {name} about the delay on {ticket}?",
    "Find me a present for my {rel} under {amount}.",
    # events
    "We're going to the {band} concert in {city} on {date}.",
    "I got tickets for the {team} match on {weekday}.",
    "{name} invited us to a barbecue at their place in {city} on {date}.",
    "The {city} marathon is on {date} and I'm running it with {name}.",
    "I'm speaking at a conference in {city} about {project} in {month}.",
    "Our street party is on {date} and I'm in charge of the music.",
    "We saw {band} live in {city} back in {month} and it was unforgettable.",
    "My {rel} and I are volunteering at the {city} film festival on {date}.",
    # learning
    "I signed up for a {language} course that starts on {date}.",
    "My thesis defence at the University of {city} is on {date}.",
    "{name} is tutoring me in {subject} every {weekday} at {time}.",
    "I passed my {language} exam in {month} with a distinction.",
    "I'm taking an evening class in {subject} at {place}.",
    "I want to be fluent in {language} before we move to {city}.",
    # preferences
    "I prefer morning flights and aisle seats when I travel for {me_company}.",
    "I don't eat {food}, please keep that in mind for the {city} dinner.",
    "I usually work from a cafe near {place} on {weekday}s.",
    "My favourite {hobby} spot is near {place} in {city}.",
    "I'd rather get messages than calls before {time}.",
    "I like my coffee black and my hotel rooms on a high floor.",
    "For work trips I always stay at hotels close to {place}.",
    "I never fly with {company} again after what happened in {city}.",
    # cars and commuting
    "My car failed its inspection in {me_city} on {weekday} because of the brakes.",
    "I'm selling my old hatchback to {name} for {amount}.",
    "The bus to work now leaves at {time} since the timetable changed in {month}.",
    "I got a parking fine of {amount} outside {place} on {date}.",
    "We're thinking of buying an electric car from {company} before {month}.",
    "My bike was stolen from outside {place} on {weekday}.",
    "I cycle {num} kilometres to the {me_company} office most days.",
    "The garage quoted {amount} to fix the clutch and it won't be ready until {date}.",
    # tech
    "My phone screen cracked on {weekday} and the repair shop wants {amount}.",
    "I switched my mobile contract to {company} in {month}.",
    "The {company} app keeps logging me out since the update on {date}.",
    "I'm setting up a home office with a new {item} and a second screen.",
    "My laptop battery only lasts {num} hours now.",
    "I backed up all the photos from the {city} trip to an external drive.",
    # garden and weather
    "I planted tomatoes and basil on the balcony in {month}.",
    "The storm on {weekday} knocked down our fence and {name} is helping us fix it.",
    "Our allotment near {place} finally has running water.",
    "It snowed in {me_city} on {date} for the first time in {num} years.",
    "The heatwave in {city} made us cut the trip short by {num} days.",
    # volunteering and community
    "I volunteer at the food bank near {place} every {weekday} morning.",
    "Our building is organising a clean-up of {place} on {date}.",
    "I joined the parents' committee at our son's school in {month}.",
    "{name} and I are raising {amount} for the children's hospital in {city}.",
    "I'm coaching the under-{num} {hobby} team on {weekday}s.",
    # moving and admin
    "I registered at the town hall in {me_city} on {date} after the move.",
    "My residence permit renewal is due in {month}.",
    "We need a new GP now that we live in {city}.",
    "The movers are booked for {date} and charge {amount} for the day.",
    "I changed my surname on my bank account after the wedding in {month}.",
    "My tax return for last year is due on {date}.",
    "I'm waiting for a letter from the {city} council about the parking permit.",
    # shopping
    "I'm looking for a {colour} rug for the hallway, about {num} metres long.",
    "The {item} I wanted at {company} is out of stock until {month}.",
    "I bought {name} a {item} for their birthday and it's hidden in the garage.",
    "We spent {amount} at the market near {place} on {weekday}.",
    "I'd like to return the boots I bought in {city}, they are half a size too small.",
    "The sofa we ordered in {colour} arrives on {date} between {time} and noon.",
    # feelings and plans
    "I'm nervous about the {project} presentation on {weekday}.",
    "We've decided to spend next summer in {city} instead of {city2}.",
    "I want to run a half marathon before I turn forty.",
    "I'm thinking about going part-time at {me_company} from {month}.",
    "{me_partner} and I are planning a sabbatical in {city} next year.",
    "I'd love to learn to sail before our trip to {city}.",
    "After {num} years in {me_city} we are finally thinking of moving to {city}.",
    "I really miss the {dish} my grandmother used to make in {city}.",
]

# What the assistant says back: confirmations that carry facts too.
ASSISTANT_FRAMES = [
    "I've noted that your {rel} {name} lives in {city}.",
    "Your table for {num} at {venue} is booked for {date} at {time}.",
    "I found {num} flights from {me_city} to {city} on {date}, the cheapest is {amount}.",
    "I've added the {project} review with {name} to your calendar for {weekday} at {time}.",
    "The refund for order {ticket} was issued on {date} and should arrive within {num} days.",
    "I've set a reminder to renew your passport before {month}.",
    "The forecast says it will rain in {city} on {date}, so pack an umbrella.",
    "Your {item} from {company} shipped today and should arrive by {weekday}.",
    "I've cancelled the {time} meeting with {name} and let {company} know.",
    "The {hobby} club in {me_city} meets on {weekday}s at {time} near {place}.",
    "I've updated your address to {city} on the {company} account.",
    "Train tickets to {city} for {date} are {amount} each for {num} people.",
    "I booked {num} nights at a hotel near {place} in {city} from {date}.",
    "{name}'s birthday on {date} is in your calendar with a reminder the day before.",
    "I sent {name} the {project} summary and asked for feedback by {weekday}.",
    "The vet in {me_city} has a slot for {me_petname} on {date} at {time}.",
    "I found a {language} course in {me_city} that starts on {date} for {amount}.",
    "Your claim {ticket} for the {item} was approved on {date}.",
    "I've moved your dentist appointment to {date} at {time}.",
    "There are {num} seats left for the {band} concert in {city} on {date}.",
    "I've shared your {city} itinerary with {me_partner}.",
    "The {company} support line confirmed the outage in {me_city} ends on {weekday}.",
    "Your subscription to {company} was cancelled and the last charge is {amount}.",
    "I put {amount} aside in your budget for the {city} trip in {month}.",
    "A {pet} named {petname} is up for adoption at the shelter in {city}.",
    "I reserved a {item} at the {company} store near {place} for {weekday}.",
    "The {project} deadline is now {date} after {name}'s update.",
    "I found {num} {hobby} classes near {place}, the first one is on {weekday} at {time}.",
    "{venue} can seat your group of {num} on {date} if you arrive by {time}.",
    "I've asked {company} to send the invoice for {ticket} to {name}.",
]

# A second sentence some turns carry (its own fact), and ways people start a message.
FOLLOW_UPS = [
    "{name} will join us on {weekday}.",
    "It cost {amount} in the end.",
    "The last time we went was in {month}.",
    "We might stay until {date}.",
    "My {rel} {name} is coming too.",
    "I'll confirm with {company} by {weekday}.",
    "It's only {num} minutes from {place}.",
    "{me_partner} thinks it's a great idea.",
    "We'll need a car seat for the little one.",
    "I still have the receipt from {venue}.",
    "The whole thing was {name}'s idea.",
    "Please keep it quiet until {date}.",
    "I'd like to be back in {me_city} by {weekday}.",
    "That's the third time this happened since {month}.",
    "{me_petname} is coming with us this time.",
    "I already told {name} about it.",
    "We can pay up to {amount} for it.",
    "The reference number is {ticket}.",
    "It has to fit around {name}'s {hobby} lessons.",
    "I'm free after {time} that day.",
    "I'd rather not go through {city2} again.",
    "{name2} recommended it after their trip in {month}.",
    "It needs to be done before the {project} deadline.",
    "Let's keep the cost under {amount}.",
]
OPENERS = "So, |Also, |Oh, |Well, |Actually, |Anyway, |By the way, |Just so you know, ".split("|")
_FIRST_PERSON = ("I ", "I'm ", "I've ", "I'd ", "I'll ")


@dataclass(frozen=True)
class Persona:
    user_id: str
    customer_id: str
    name: str
    city: str
    company: str
    partner: str
    pet: str
    pet_name: str
    hobby: str
    sessions: tuple[str, ...]
    first_day: datetime


@dataclass(frozen=True)
class ChatTurn:
    index: int
    turn_id: str
    customer_id: str
    user_id: str
    session_id: str
    role: Role
    speaker: str
    content: str
    query: str  # the turn's own sentence: what a freshness sample searches for
    occurred_at: datetime

    def scope(self, session: bool = True) -> common_pb2.Scope:
        return common_pb2.Scope(
            customer_id=self.customer_id,
            user_id=self.user_id,
            agent_id=AGENT,
            session_id=self.session_id if session else "",
        )


def _personas(rng: random.Random, users: int) -> list[Persona]:
    names = rng.sample(FIRST_NAMES, users) if users <= len(FIRST_NAMES) else [f"User{i}" for i in range(users)]
    start = datetime(2024, 3, 4, 9, 0, tzinfo=UTC)
    out = []
    for i, name in enumerate(names):
        out.append(
            Persona(
                user_id=f"u{i + 1:02d}-{name.lower()}",
                customer_id=CUSTOMERS[i % len(CUSTOMERS)],
                name=name,
                city=rng.choice(CITIES),
                company=rng.choice(COMPANIES),
                partner=rng.choice([n for n in FIRST_NAMES if n != name]),
                pet=rng.choice(PETS),
                pet_name=rng.choice(PET_NAMES),
                hobby=rng.choice(HOBBIES),
                sessions=tuple(f"s{k + 1}" for k in range(rng.randint(2, 4))),
                first_day=start + timedelta(days=rng.randint(0, 60)),
            )
        )
    return out


def _slots(rng: random.Random, p: Persona) -> dict[str, str]:
    name, name2 = rng.sample(FIRST_NAMES, 2)
    city, city2 = rng.sample(CITIES, 2)
    return {
        "name": name,
        "name2": name2,
        "rel": rng.choice(RELATIONS),
        "city": city,
        "city2": city2,
        "venue": rng.choice(VENUES),
        "company": rng.choice(COMPANIES),
        "job": rng.choice(JOBS),
        "project": rng.choice(PROJECTS),
        "ticket": f"{rng.choice(TICKET_PREFIXES)}-{rng.randint(1000, 99999)}",
        "item": rng.choice(ITEMS),
        "hobby": rng.choice(HOBBIES),
        "food": rng.choice(FOODS),
        "dish": rng.choice(DISHES),
        "pet": rng.choice(PETS),
        "petname": rng.choice(PET_NAMES),
        "colour": rng.choice(COLOURS),
        "band": rng.choice(BANDS),
        "team": rng.choice(TEAMS),
        "language": rng.choice(LANGUAGES),
        "subject": rng.choice(SUBJECTS),
        "book": rng.choice(BOOKS),
        "place": rng.choice(PLACES),
        "date": f"{rng.randint(1, 28)} {rng.choice(MONTHS)}",
        "month": rng.choice(MONTHS),
        "weekday": rng.choice(WEEKDAYS),
        "relday": rng.choice(RELATIVE_DAYS),
        "time": rng.choice(TIMES),
        "num": str(rng.randint(2, 12)),
        "amount": rng.choice(("{} euros", "${}", "£{}")).format(rng.randint(3, 240) * 10),
        "me_city": p.city,
        "me_company": p.company,
        "me_partner": p.partner,
        "me_pet": p.pet,
        "me_petname": p.pet_name,
        "me_hobby": p.hobby,
    }


def _open(opener: str, frame: str, sentence: str) -> str:
    """Prefix an opener, lower-casing the sentence's first word unless it is "I…" or came from a slot."""
    if frame.startswith("{") or sentence.startswith(_FIRST_PERSON):
        return opener + sentence
    return opener + sentence[0].lower() + sentence[1:]


def build_workload(turns: int, seed: int, users: int = 30) -> list[ChatTurn]:
    """The same chat for every configuration and run with the same seed: turns interleaved across every
    user's sessions (order kept inside a session), a minute or two apart in chat time."""
    rng = random.Random(seed)
    personas = _personas(rng, users)
    sessions = [(p, s) for p in personas for s in p.sessions]
    said: dict[tuple[str, str], int] = {}
    out: list[ChatTurn] = []
    for index in range(turns):
        p, session = rng.choice(sessions)
        k = said[(p.user_id, session)] = said.get((p.user_id, session), 0) + 1
        slots = _slots(rng, p)
        assistant = rng.random() < 0.3
        frame = rng.choice(ASSISTANT_FRAMES if assistant else USER_FRAMES)
        sentence = frame.format(**slots)
        content = _open(rng.choice(OPENERS), frame, sentence) if rng.random() < 0.25 else sentence
        if rng.random() < 0.3:
            content += " " + rng.choice(FOLLOW_UPS).format(**slots)
        session_start = p.first_day + timedelta(days=7 * (int(session[1:]) - 1))
        out.append(
            ChatTurn(
                index=index,
                turn_id=f"t{index:05d}",
                customer_id=p.customer_id,
                user_id=p.user_id,
                session_id=session,
                role=Role.ASSISTANT if assistant else Role.USER,
                speaker="assistant" if assistant else p.name,
                content=content,
                query=sentence,
                occurred_at=session_start + timedelta(seconds=90 * k),
            )
        )
    return out


def check_workload(turns: list[ChatTurn]) -> dict[str, int]:
    """Run ingest's own pure planning on every turn: each must be kept, unflagged, unredacted and make at
    least one fact, or a freshness sample could wait for a memory that never comes."""
    schema = default_schema(AGENT)
    counts = {"turns": len(turns), "facts": 0, "dropped": 0, "flagged": 0, "redacted": 0, "no_fact": 0}
    for t in turns:
        pb = common_pb2.Turn(turn_id=t.turn_id, role=_ROLE_PB[t.role], content=t.content)
        pb.occurred_at.FromDatetime(t.occurred_at)
        scope = Scope("bench", t.customer_id, t.user_id, AGENT, t.session_id)
        plan = plan_turn(turn_from_pb(pb, scope, 65536, t.turn_id), schema, frozenset())
        counts["facts"] += len(plan.facts)
        counts["dropped"] += not plan.gate.keep
        counts["flagged"] += plan.flagged
        counts["redacted"] += bool(plan.redactions)
        counts["no_fact"] += plan.gate.keep and not plan.flagged and not plan.facts
    return counts


def balanced_client_id(turns: list[ChatTurn], base: str, max_share: float = 0.52) -> str:
    """`base` with a suffix such that the turns split across the 2 partitions within `max_share`.

    Turns are keyed by client/customer/user/session, so with the 87 sessions of this chat one client id
    can put 2/3 of the turns on one partition (a deployment with thousands of sessions averages that
    out). Replicas would then be compared on a skew that changes from run to run; a balanced split makes
    runs comparable, and the split is reported."""
    best, best_share = base, 1.0
    for n in range(1000):
        candidate = f"{base}-{n}"
        share = max(partition_split(turns, candidate)) / max(1, len(turns))
        if share <= max_share:
            return candidate
        if share < best_share:
            best, best_share = candidate, share
    return best


def partition_split(turns: list[ChatTurn], client_id: str, partitions: int = 2) -> list[int]:
    """Turns per partition of acm.turns.v1: the gateway keys each turn by its session, and the producer's
    default partitioner hashes that key (murmur2), so this is exactly how replicas will share the work."""
    partitioner = DefaultPartitioner()
    counts = [0] * partitions
    ids = list(range(partitions))
    for t in turns:
        key = Scope(client_id, t.customer_id, t.user_id, AGENT, t.session_id).session_key.encode()
        counts[partitioner(key, ids, ids)] += 1
    return counts


_ROLE_PB = {Role.USER: common_pb2.ROLE_USER, Role.ASSISTANT: common_pb2.ROLE_ASSISTANT}


# --- measuring ------------------------------------------------------------------------------------------


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


def pct(values: list[float], q: float) -> float | None:
    """The q-th percentile (nearest rank on the sorted values), None for no values."""
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q / 100 * len(ordered) + 0.5) - 1))]


def dist_ms(seconds: list[float]) -> dict[str, float | None]:
    def ms(x: float | None) -> float | None:
        return None if x is None else round(x * 1000, 1)

    return {
        "p50": ms(pct(seconds, 50)),
        "p95": ms(pct(seconds, 95)),
        "max": ms(max(seconds) if seconds else None),
        "mean": ms(statistics.fmean(seconds) if seconds else None),
    }


@dataclass
class Accepted:
    turn: ChatTurn
    job_id: str
    accepted_wall: float  # time.time() when Ingest returned: comparable with the jobs' server timestamps
    accepted_mono: float
    rpc_s: float
    retries: int = 0


@dataclass
class JobResult:
    status: str  # "done", "failed" or "timeout"
    done_wall: float | None = None  # the job's updated_at (set by the ingest replica that finished it)
    counts: dict[str, int] = field(default_factory=dict)


@dataclass
class Probe:
    turn_id: str
    found: bool
    freshness_s: float | None  # accept → the Fetch that returned the turn's memory had answered
    fetch_calls: int  # answered
    fetch_errors: list[str]  # gRPC codes of the calls that failed
    fetch_s: list[float]
    waited_s: float  # for a free Fetch slot (see probe)


async def ingest_one(client: AcmClient, turn: ChatTurn, attempts: int = 3) -> Accepted:
    """Ingest one turn; UNAVAILABLE (the bus did not take it) and deadlines are retried, counted."""
    for attempt in range(attempts):
        started = time.monotonic()
        try:
            reply = await client.ingest(
                turn.scope(),
                turn.content,
                turn.role,
                occurred_at=turn.occurred_at,
                turn_id=turn.turn_id,
                metadata={"speaker": turn.speaker},
            )
        except grpc.aio.AioRpcError as exc:
            if exc.code() not in _RETRYABLE or attempt == attempts - 1:
                raise
            await asyncio.sleep(0.2 * 2**attempt)
            continue
        now = time.monotonic()
        return Accepted(turn, reply.job_id, time.time(), now, now - started, attempt)
    raise AssertionError("unreachable")


async def poll_jobs(
    client: AcmClient, queue: asyncio.Queue[Accepted | None], results: dict[str, JobResult], timeout_s: float
) -> None:
    """One completion poller: takes the oldest accepted job not yet being watched and polls it (backoff
    20 → 250 ms) until it is no longer pending. Jobs finish roughly in accept order (per partition), so
    a few pollers walking the queue keep up without flooding the gateway with GetJob calls."""
    while (item := await queue.get()) is not None:
        delay = 0.02
        while True:
            try:
                job = await client.get_job(item.turn.scope(), item.job_id)
            except grpc.aio.AioRpcError:
                job = None
            if job is not None and job.status != gateway_pb2.JOB_STATUS_PENDING:
                done = job.status == gateway_pb2.JOB_STATUS_DONE
                stamp = job.updated_at.seconds + job.updated_at.nanos / 1e9
                results[item.job_id] = JobResult("done" if done else "failed", stamp, dict(job.counts))
                break
            if time.time() - item.accepted_wall > timeout_s:
                results[item.job_id] = JobResult("timeout")
                break
            await asyncio.sleep(delay)
            delay = min(delay * 1.5, 0.25)


async def probe(
    client: AcmClient, acc: Accepted, interval_s: float, give_up_s: float, slots: asyncio.Semaphore
) -> Probe:
    """Fetch in the user's scope with the turn's sentence until a memory from this turn comes back.

    `slots` bounds the Fetch calls all probes have in flight: with every sample polling every 20 ms, a
    hiccup that slows Fetch would otherwise pile up probes, each adding load, until Fetch collapses and the
    benchmark measures itself. A probe waiting for a slot polls less often (its wait is counted)."""
    calls = 0
    errors: list[str] = []
    fetch_s: list[float] = []
    waited = 0.0
    while True:
        tick = time.monotonic()
        if tick - acc.accepted_mono > give_up_s:
            return Probe(acc.turn.turn_id, False, None, calls, errors, fetch_s, waited)
        async with slots:
            started = time.monotonic()
            waited += started - tick
            try:
                reply = await client.fetch(acc.turn.scope(session=False), acc.turn.query, budget_tokens=FETCH_BUDGET)
            except grpc.aio.AioRpcError as exc:
                errors.append(exc.code().name)
                reply = None
        now = time.monotonic()
        if reply is not None:
            calls += 1
            fetch_s.append(now - started)
            if any(acc.turn.turn_id in m.source_turn_ids for m in reply.memories):
                if now - acc.accepted_mono > give_up_s:  # answered, but too late: a miss all the same
                    return Probe(acc.turn.turn_id, False, None, calls, errors, fetch_s, waited)
                return Probe(acc.turn.turn_id, True, now - acc.accepted_mono, calls, errors, fetch_s, waited)
        await asyncio.sleep(max(0.0, interval_s - (now - tick)))


def _all_cpu() -> dict[int, tuple[float, str]]:
    """{pid: (CPU seconds, command line)} of every process, from /proc."""
    tick = os.sysconf("SC_CLK_TCK")
    out = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            argv = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        out[int(entry.name)] = ((int(fields[11]) + int(fields[12])) / tick, argv or stat.split("(")[1].split(")")[0])
    return out


def _server_of(command: str) -> str | None:
    """Which of the servers a process is, from its command line."""
    first = os.path.basename(command.split(" ", 1)[0])
    if first.startswith("redis-server"):
        return "redis"
    if first.startswith("postgres"):  # the postmaster, and one backend per connection ("postgres: acm ...")
        return "postgres"
    if first == "java":
        if "kafka.Kafka" in command:
            return "kafka"
        if "neo4j" in command:
            return "neo4j"
    return None


@dataclass
class CpuSnapshot:
    wall: float
    machine_busy: float
    machine_total: float
    procs: dict[int, tuple[float, str]]


class CpuMeter:
    """CPU seconds used in a phase by each service process, by each server (Kafka, Postgres, Neo4j, Redis,
    told apart by command line), by this client, by the whole machine, and by anything else (named): on
    a 2-core machine running all of it, this says where the time went, and whether someone else's job
    took part of it."""

    def __init__(self, stack: Stack) -> None:
        self._stack = stack

    @staticmethod
    def machine() -> tuple[float, float]:
        """(busy, total) CPU seconds of the whole machine since boot."""
        tick = os.sysconf("SC_CLK_TCK")
        cpu = [int(x) for x in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
        idle = cpu[3] + cpu[4]  # idle + iowait
        return (sum(cpu) - idle) / tick, sum(cpu) / tick

    def snapshot(self) -> CpuSnapshot:
        busy, total = self.machine()
        return CpuSnapshot(time.monotonic(), busy, total, _all_cpu())

    def delta(self, before: CpuSnapshot, after: CpuSnapshot) -> dict[str, Any]:
        ours = {p.pid: name for name, p in self._stack.procs.items()}
        groups: dict[str, float] = {name: 0.0 for name in self._stack.procs}
        groups.update({"bench-client": 0.0, "kafka": 0.0, "postgres": 0.0, "neo4j": 0.0, "redis": 0.0})
        others: list[tuple[float, str]] = []
        for pid, (cpu, command) in after.procs.items():
            # A process born during the phase counts from zero (a postgres backend that ended during it
            # takes its time with it, which lands in "other").
            used = cpu - before.procs[pid][0] if pid in before.procs else cpu
            if pid in ours:
                groups[ours[pid]] += used
            elif pid == os.getpid():
                groups["bench-client"] += used
            elif (server := _server_of(command)) is not None:
                groups[server] += used
            elif used > 0:
                others.append((used, command))
        busy = after.machine_busy - before.machine_busy
        total = after.machine_total - before.machine_total
        acm = sum(groups[name] for name in self._stack.procs)
        servers = sum(groups[s] for s in ("kafka", "postgres", "neo4j", "redis"))
        out: dict[str, Any] = {k: round(v, 2) for k, v in groups.items()}
        out.update(
            {
                "wall_s": round(after.wall - before.wall, 2),
                "machine_busy": round(busy, 2),
                "machine_busy_pct": round(100 * busy / total, 1) if total else 0.0,
                "acm_services": round(acm, 2),
                "servers": round(servers, 2),
                # Whatever else ran, kernel threads and processes that came and went included.
                "other": round(busy - acm - servers - groups["bench-client"], 2),
                "other_top": [
                    {"cpu_s": round(cpu, 2), "command": command[:100]}
                    for cpu, command in sorted(others, reverse=True)[:3]
                    if cpu >= 0.5
                ],
            }
        )
        return out


async def machine_check(seconds: float = 2.0) -> dict[str, Any]:
    """How busy the machine is before anything starts, and with what: another job using the CPU lowers
    every figure here, so the run says so instead of reporting a slow machine as a slow ACM."""
    before, busy_before = _all_cpu(), CpuMeter.machine()
    await asyncio.sleep(seconds)
    after, busy_after = _all_cpu(), CpuMeter.machine()
    used = sorted(
        ((after[p][0] - before[p][0], after[p][1]) for p in after if p in before and p != os.getpid()), reverse=True
    )
    total = busy_after[1] - busy_before[1]
    return {
        "busy_pct": round(100 * (busy_after[0] - busy_before[0]) / total, 1) if total else 0.0,
        "top": [{"cpu_pct": round(100 * cpu / seconds), "command": cmd[:120]} for cpu, cmd in used[:3] if cpu > 0],
    }


def disturbed(label: str, phase: str, cpu: dict[str, Any], threshold: float = 0.15) -> bool:
    """Warn when something outside the benchmark used a share of the machine during a phase."""
    if cpu["machine_busy"] <= 0 or cpu["other"] / cpu["machine_busy"] < threshold:
        return False
    top = "; ".join(f"{t['cpu_s']:.0f}s {t['command']}" for t in cpu["other_top"]) or "processes that have ended"
    log(
        f"  WARNING {label} {phase}: {cpu['other']:.0f} of {cpu['machine_busy']:.0f} CPU seconds went to something "
        f"else on the machine ({top}); this phase's figures are lower than the system's"
    )
    return True


class LagSampler:
    """Consumer lag of the stack's groups, sampled in the background: how far the vector index (retrieve)
    and the other consumers trail the turns ingest has finished."""

    def __init__(self, lag: KafkaLag, every_s: float = 0.5) -> None:
        self._lag = lag
        self._every_s = every_s
        self.samples: list[tuple[float, dict[str, int]]] = []  # (time.time(), {group: lag})

    @property
    def latest(self) -> dict[str, int]:
        return self.samples[-1][1] if self.samples else {}

    async def run(self) -> None:
        while True:
            try:
                self.samples.append((time.time(), await self._lag.measure()))
            except Exception as exc:  # a failed read is a missing sample, not a failed benchmark
                log(f"  (consumer lag not read: {exc!r})")
            await asyncio.sleep(self._every_s)

    def max_since(self, since_wall: float) -> dict[str, int]:
        out: dict[str, int] = {}
        for t, lags in self.samples:
            if t >= since_wall:
                for group, n in lags.items():
                    out[group] = max(out.get(group, 0), n)
        return out

    async def drained(self, timeout_s: float) -> float | None:
        """Wait for a sample, taken from now on, in which no group has anything left; its time (or None)."""
        since = time.time()
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            for t, lags in self.samples:
                if t >= since and lags and not any(lags.values()):
                    return t
            await asyncio.sleep(self._every_s / 2)
        return None


async def guarded(stack: Stack, work: Awaitable[T], status: Callable[[], str] | None = None, every_s: float = 3.0) -> T:
    """Await `work` while watching the stack's processes (a dead service aborts the phase with the end of
    its log) and printing `status()` every few seconds."""
    task = asyncio.ensure_future(work)
    last = time.monotonic()
    try:
        while not task.done():
            await asyncio.wait({task}, timeout=0.5)
            if task.done():
                break
            stack.check_alive()
            if status is not None and time.monotonic() - last >= every_s:
                log(status())
                last = time.monotonic()
        return task.result()
    finally:
        if not task.done():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task


def split(after: dict[str, int], before: dict[str, int]) -> dict[str, int]:
    return {name: after[name] - before.get(name, 0) for name in after}


# --- the phases -----------------------------------------------------------------------------------------


async def warm_up(stack: Stack, client: AcmClient, sample: list[ChatTurn], timeout_s: float) -> dict[str, Any]:
    """Rounds of a few turns in sessions of their own until every ingest replica has handled one: the
    consumer group has settled (each replica owns a partition) before anything is measured."""
    started = time.monotonic()
    before = stack.ingest_counts()
    rounds = 0
    while True:
        rounds += 1
        batch = [
            replace(t, customer_id="warmup", user_id="warmup", session_id=f"w{rounds}-{k}", turn_id=f"w{rounds}-{k}")
            for k, t in enumerate(sample)
        ]
        accepted = await asyncio.gather(*(ingest_one(client, t) for t in batch))
        for acc in accepted:
            await client.wait_job(acc.turn.scope(), acc.job_id, timeout_s=max(1.0, timeout_s))
        counts = split(stack.ingest_counts(), before)
        if all(n > 0 for n in counts.values()):
            # Fetch once per warm-up turn too: the first calls into retrieve (connections, the vector
            # collection, the embedder) are slower, and freshness should not measure them.
            found = 0
            for acc in accepted:
                reply = await client.fetch(acc.turn.scope(session=False), acc.turn.query, budget_tokens=FETCH_BUDGET)
                found += any(acc.turn.turn_id in m.source_turn_ids for m in reply.memories)
            return {
                "rounds": rounds,
                "turns": rounds * len(sample),
                "per_replica": counts,
                "fetches": len(accepted),
                "fetch_found": found,
                "seconds": round(time.monotonic() - started, 2),
            }
        if time.monotonic() - started > timeout_s:
            idle = [n for n, c in counts.items() if c == 0]
            raise TimeoutError(
                f"{stack.label}: {idle} handled no warm-up turn in {timeout_s:.0f}s (no partition assigned?); "
                f"end of {idle[0]}'s log:\n{stack.log_tail(idle[0])}"
            )
        await asyncio.sleep(1.0)  # a replica still joining the group: let the rebalance finish


async def burst(
    stack: Stack,
    client: AcmClient,
    meter: CpuMeter,
    lags: LagSampler,
    turns: list[ChatTurn],
    args: argparse.Namespace,
) -> dict[str, Any]:
    """Every turn submitted with `concurrency` in flight; done when every job is (or timed out), then
    until every consumer group has caught up (the vector index holds every fact)."""
    queue: asyncio.Queue[Accepted | None] = asyncio.Queue()
    results: dict[str, JobResult] = {}
    accepted: list[Accepted] = []
    submit_errors: list[str] = []
    pending = iter(turns)  # shared by the submitters: turns go out in order
    first_send = time.time()

    async def submitter() -> None:
        for turn in pending:
            try:
                acc = await ingest_one(client, turn)
            except grpc.aio.AioRpcError as exc:
                submit_errors.append(f"{turn.turn_id}: {exc.code().name} {exc.details()}")
                continue
            accepted.append(acc)
            queue.put_nowait(acc)

    async def submit_all() -> None:
        await asyncio.gather(*(submitter() for _ in range(args.concurrency)))
        for _ in range(args.pollers):
            queue.put_nowait(None)

    async def everything() -> None:
        await asyncio.gather(
            submit_all(), *(poll_jobs(client, queue, results, args.job_timeout_s) for _ in range(args.pollers))
        )

    before, cpu_before = stack.ingest_counts(), meter.snapshot()
    t0 = time.monotonic()

    def status() -> str:
        handled = split(stack.ingest_counts(), before)
        rate = sum(handled.values()) / max(1e-9, time.monotonic() - t0)
        shares = ", ".join(f"{n} {c}" for n, c in handled.items()) if len(handled) > 1 else ""
        return (
            f"  {stack.label} throughput: accepted {len(accepted)}/{len(turns)}, handled {sum(handled.values())}"
            f" ({rate:.1f}/s so far{'; ' + shares if shares else ''}), DONE confirmed {len(results)}, "
            f"retrieve lag {lags.latest.get('retrieve', '?')}"
        )

    await guarded(stack, everything(), status)
    cpu = meter.delta(cpu_before, meter.snapshot())
    per_replica = split(stack.ingest_counts(), before)
    lag_at_done = lags.latest
    was_disturbed = disturbed(stack.label, "throughput", cpu)
    # The vector index (retrieve) and the other consumers may still be behind: wait for them, so the
    # freshness phase starts from a drained pipeline, and say how long the whole pipeline took.
    log(f"  {stack.label}: every job done; consumer lag now {lag_at_done}, waiting for it to drain")
    drained_at = await guarded(stack, lags.drained(args.settle_timeout_s))

    done = {j: r for j, r in results.items() if r.status == "done" and r.done_wall is not None}
    first_accept = min((a.accepted_wall for a in accepted), default=first_send)
    last_accept = max((a.accepted_wall for a in accepted), default=first_send)
    last_done = max((r.done_wall for r in done.values() if r.done_wall is not None), default=first_accept)
    drain = last_done - first_accept
    system_cpu = max(1e-9, cpu["acm_services"] + cpu["servers"])  # not this client, not other jobs
    ingest_cpu = sum(v for k, v in cpu.items() if k.startswith("ingest-"))
    to_done = [r.done_wall - a.accepted_wall for a in accepted if (r := done.get(a.job_id)) and r.done_wall]
    return {
        "turns": len(turns),
        "concurrency": args.concurrency,
        "accepted": len(accepted),
        "submit_errors": submit_errors[:20],
        "ingest_retries": sum(a.retries for a in accepted),
        "completed": len(done),
        "failed": sum(r.status == "failed" for r in results.values()),
        "timed_out": sum(r.status == "timeout" for r in results.values()),
        "facts": sum(r.counts.get("facts", 0) for r in done.values()),
        "accept_s": round(last_accept - first_send, 3),
        "accept_rate_per_s": round(len(accepted) / max(1e-9, last_accept - first_send), 1),
        "ingest_rpc_ms": dist_ms([a.rpc_s for a in accepted]),
        "drain_s": round(drain, 3),
        "throughput_turns_per_s": round(len(done) / drain, 2) if drain > 0 else None,
        "accept_to_done_ms": dist_ms(to_done),
        "per_replica_turns": per_replica,
        "per_partition_turns": partition_split(turns, stack.client_id),
        "cpu_s": cpu,
        "disturbed": was_disturbed,
        # CPU per turn of the ACM processes and the servers: with every core busy, the most this machine
        # could ingest is cores / that, however many replicas run.
        "cpu_ms_per_turn": round(1000 * system_cpu / len(done), 1) if done else None,
        "ingest_cpu_ms_per_turn": round(1000 * ingest_cpu / len(done), 1) if done else None,
        "cpu_ceiling_turns_per_s": round((os.cpu_count() or 1) * len(done) / system_cpu, 1) if done else None,
        "max_lag": lags.max_since(first_send),
        "lag_at_last_done": lag_at_done,
        # First accept → no consumer group behind (sampled every 0.5 s): the whole pipeline's drain.
        "pipeline_drain_s": round(drained_at - first_accept, 1) if drained_at else None,
        "pipeline_turns_per_s": round(len(done) / (drained_at - first_accept), 2) if drained_at else None,
        # Seconds from the first accept at which each job was DONE: the completion curve in the plot.
        "done_at_s": sorted(round(r.done_wall - first_accept, 3) for r in done.values() if r.done_wall),
    }


async def freshness(
    stack: Stack,
    client: AcmClient,
    meter: CpuMeter,
    lags: LagSampler,
    turns: list[ChatTurn],
    rate: float,
    args: argparse.Namespace,
) -> dict[str, Any]:
    """Turns at a steady `rate` (open loop); every `fresh_every`-th is probed with Fetch from its accept."""
    phase_start = time.time()
    accepted: list[Accepted] = []
    probes: list[Probe] = []
    submit_errors: list[str] = []
    before, cpu_before = stack.ingest_counts(), meter.snapshot()
    interval_s = args.fresh_interval_ms / 1000
    slots = asyncio.Semaphore(args.fresh_max_inflight)

    async def one(k: int, turn: ChatTurn) -> None:
        try:
            acc = await ingest_one(client, turn)
        except grpc.aio.AioRpcError as exc:
            submit_errors.append(f"{turn.turn_id}: {exc.code().name} {exc.details()}")
            return
        accepted.append(acc)
        if k % args.fresh_every == 0:
            probes.append(await probe(client, acc, interval_s, args.fresh_timeout_s, slots))

    async def paced() -> None:
        start = time.monotonic()
        tasks = []
        for k, turn in enumerate(turns):
            await asyncio.sleep(max(0.0, start + k / rate - time.monotonic()))
            tasks.append(asyncio.create_task(one(k, turn)))
        await asyncio.gather(*tasks)

    samples = len(range(0, len(turns), args.fresh_every))

    def status() -> str:
        found = [p.freshness_s for p in probes if p.freshness_s is not None]
        so_far = f", p95 so far {1000 * (pct(found, 95) or 0):.0f} ms" if found else ""
        return (
            f"  {stack.label} freshness: submitted {len(accepted)}/{len(turns)}, samples done "
            f"{len(probes)}/{samples}{so_far}"
        )

    await guarded(stack, paced(), status)
    cpu = meter.delta(cpu_before, meter.snapshot())
    was_disturbed = disturbed(stack.label, "freshness", cpu)
    backlog = lags.max_since(phase_start).get("ingest", 0)
    overloaded = backlog > OVERLOAD_LAG
    if overloaded:
        log(
            f"  WARNING {stack.label} freshness: up to {backlog} turns waited in Kafka, so this rate was over "
            "capacity and freshness includes backlog; try a lower --fresh-load or --fresh-rate"
        )

    # Every job of the phase must finish too (and the samples' own accept → DONE is worth knowing).
    queue: asyncio.Queue[Accepted | None] = asyncio.Queue()
    for acc in accepted:
        queue.put_nowait(acc)
    for _ in range(args.pollers):
        queue.put_nowait(None)
    results: dict[str, JobResult] = {}
    await guarded(
        stack, asyncio.gather(*(poll_jobs(client, queue, results, args.job_timeout_s) for _ in range(args.pollers)))
    )
    by_turn = {a.turn.turn_id: a for a in accepted}
    sampled_done = [
        r.done_wall - by_turn[p.turn_id].accepted_wall
        for p in probes
        if (r := results.get(by_turn[p.turn_id].job_id)) is not None and r.done_wall is not None
    ]
    found = [p.freshness_s for p in probes if p.freshness_s is not None]
    return {
        "rate_per_s": round(rate, 2),
        "turns": len(turns),
        "accepted": len(accepted),
        "submit_errors": submit_errors[:20],
        "completed": sum(r.status == "done" for r in results.values()),
        "samples": len(probes),
        "found": len(found),
        "misses": len(probes) - len(found),
        "interval_ms": args.fresh_interval_ms,
        "give_up_s": args.fresh_timeout_s,
        "freshness_ms": dist_ms(found),
        "sample_accept_to_done_ms": dist_ms(sampled_done),
        "fetch_calls_per_sample": round(statistics.fmean(p.fetch_calls for p in probes), 1) if probes else None,
        # Found by the very first Fetch: retrievable before one Fetch could answer, so the figure above is
        # that Fetch's latency more than the pipeline's.
        "first_fetch_hit_pct": round(
            100 * sum(p.found and p.fetch_calls == 1 and not p.fetch_errors for p in probes) / len(probes), 1
        )
        if probes
        else None,
        "fetch_errors": dict(Counter(code for p in probes for code in p.fetch_errors)),
        "fetch_ms": dist_ms([s for p in probes for s in p.fetch_s]),
        "max_fetches_in_flight": args.fresh_max_inflight,
        "probes_that_waited": sum(p.waited_s > 0.005 for p in probes),
        "per_replica_turns": split(stack.ingest_counts(), before),
        "per_partition_turns": partition_split(turns, stack.client_id),
        "cpu_s": cpu,
        "disturbed": was_disturbed,
        "over_capacity": overloaded,
        "max_lag": lags.max_since(phase_start),
        "freshness_s": sorted(round(s, 4) for s in found),
    }


async def run_config(
    infra: Infra,
    replicas: int,
    burst_turns: list[ChatTurn],
    fresh_turns: list[ChatTurn],
    fresh_rate: float | None,
    args: argparse.Namespace,
    stacks: list[Stack],
) -> dict[str, Any]:
    extra = dict(args.service_env)
    if args.embedder:
        extra["ACM_EMBEDDER"] = args.embedder
    stack = Stack(
        infra, label=f"r{replicas}", ingest_replicas=replicas, extra_env=extra, vector_store=args.vector_store
    )
    stack.client_id = balanced_client_id(burst_turns, stack.client_id)
    stacks.append(stack)  # stopped by main() whatever happens next
    log(
        f"replicas={replicas}: starting {', '.join(stack.names)} (Kafka namespace {stack.namespace!r}, "
        f"database {stack.database})"
    )
    started = time.monotonic()
    await stack.start(timeout_s=args.start_timeout_s)
    startup_s = time.monotonic() - started
    log(f"replicas={replicas}: healthy in {startup_s:.1f}s; warming up")
    meter = CpuMeter(stack)
    async with (
        AcmClient(stack.gateway_addr, stack.api_key, timeout_s=10.0) as client,
        KafkaLag(infra.kafka, stack.namespace) as kafka_lag,
    ):
        lags = LagSampler(kafka_lag)
        sampling = asyncio.create_task(lags.run())
        try:
            warm, b, f = await phases(stack, client, meter, lags, burst_turns, fresh_turns, fresh_rate, args)
        finally:
            sampling.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await sampling
    stack.check_alive()
    config = {
        "replicas": replicas,
        "namespace": stack.namespace,
        "database": stack.database,
        "client_id": stack.client_id,
        "startup_s": round(startup_s, 2),
        "warmup": warm,
        "throughput": b,
        "freshness": f,
    }
    await asyncio.to_thread(stack.stop, args.keep_logs)
    return config


async def phases(
    stack: Stack,
    client: AcmClient,
    meter: CpuMeter,
    lags: LagSampler,
    burst_turns: list[ChatTurn],
    fresh_turns: list[ChatTurn],
    fresh_rate: float | None,
    args: argparse.Namespace,
) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """Warm-up, throughput, freshness on one started stack."""
    replicas = stack.ingest_replicas
    warm = await guarded(stack, warm_up(stack, client, burst_turns[:8], args.warmup_timeout_s))
    log(
        f"replicas={replicas}: warm ({warm['turns']} turns, split {warm['per_replica']}); "
        f"throughput: {len(burst_turns)} turns, {args.concurrency} in flight"
    )
    b = await burst(stack, client, meter, lags, burst_turns, args)
    log(
        f"replicas={replicas}: {b['completed']}/{len(burst_turns)} done, {b['throughput_turns_per_s']} turns/s "
        f"(last DONE {b['drain_s']:.1f}s after the first accept), split {b['per_replica_turns']}; "
        f"every consumer caught up after {_f(b['pipeline_drain_s'])}s (max lag {b['max_lag']})"
    )
    rate = fresh_rate if fresh_rate else max(0.5, args.fresh_load * (b["throughput_turns_per_s"] or 1.0))
    log(
        f"replicas={replicas}: freshness: {len(fresh_turns)} turns at {rate:.1f}/s, "
        f"one in {args.fresh_every} probed every {args.fresh_interval_ms:.0f} ms"
    )
    f = await freshness(stack, client, meter, lags, fresh_turns, rate, args)
    fr = f["freshness_ms"]
    log(
        f"replicas={replicas}: freshness p50 {fr['p50']} ms, p95 {fr['p95']} ms, max {fr['max']} ms, "
        f"misses {f['misses']}/{f['samples']}"
    )
    return warm, b, f


# --- report ---------------------------------------------------------------------------------------------


def _f(x: Any, spec: str = "") -> str:
    return "-" if x is None else format(x, spec)


def _ms(d: dict[str, Any], keys: tuple[str, ...] = ("p50", "p95", "max")) -> str:
    return " / ".join(_f(d[k], ".0f") for k in keys)


def _per_replica(counts: dict[str, int]) -> str:
    return " / ".join(str(v) for v in counts.values())


def _cpu_acm(cpu: dict[str, float]) -> str:
    ingest = sum(v for k, v in cpu.items() if k.startswith("ingest-"))
    return f"{ingest:.0f} / {cpu['retrieve']:.0f} / {cpu['acm_services'] - ingest - cpu['retrieve']:.0f}"


def _cpu_servers(cpu: dict[str, float]) -> str:
    return " / ".join(f"{cpu.get(s, 0.0):.0f}" for s in ("kafka", "postgres", "neo4j", "redis"))


# (label, cell of one configuration's results)
ROWS: list[tuple[str, Callable[[dict[str, Any]], str]]] = [
    ("ingest replicas", lambda c: str(c["replicas"])),
    ("turns done / submitted", lambda c: f"{c['throughput']['completed']}/{c['throughput']['turns']}"),
    ("THROUGHPUT turns/s", lambda c: _f(c["throughput"]["throughput_turns_per_s"], ".1f")),
    ("  first accept → last DONE s", lambda c: f"{c['throughput']['drain_s']:.1f}"),
    ("  turns per replica", lambda c: _per_replica(c["throughput"]["per_replica_turns"])),
    ("  turns per partition (key hash)", lambda c: " / ".join(map(str, c["throughput"]["per_partition_turns"]))),
    ("  accept rate turns/s", lambda c: f"{c['throughput']['accept_rate_per_s']:.0f}"),
    ("  Ingest RPC p50/p95 ms", lambda c: _ms(c["throughput"]["ingest_rpc_ms"], ("p50", "p95"))),
    ("  accept → DONE p50/p95/max ms", lambda c: _ms(c["throughput"]["accept_to_done_ms"])),
    (
        "  max lag ingest / retrieve",
        lambda c: _per_replica({g: c["throughput"]["max_lag"].get(g, 0) for g in ("ingest", "retrieve")}),
    ),
    ("  all consumers caught up s", lambda c: _f(c["throughput"]["pipeline_drain_s"])),
    ("    → pipeline turns/s", lambda c: _f(c["throughput"]["pipeline_turns_per_s"], ".1f")),
    ("  machine CPU busy %", lambda c: f"{c['throughput']['cpu_s']['machine_busy_pct']:.0f}"),
    (
        "  CPU ms/turn: ACM+servers / ingest",
        lambda c: (
            f"{_f(c['throughput']['cpu_ms_per_turn'], '.0f')} / {_f(c['throughput']['ingest_cpu_ms_per_turn'], '.0f')}"
        ),
    ),
    ("    → ceiling at 100% CPU turns/s", lambda c: _f(c["throughput"]["cpu_ceiling_turns_per_s"], ".0f")),
    ("  CPU s ingest/retrieve/other ACM", lambda c: _cpu_acm(c["throughput"]["cpu_s"])),
    ("  CPU s kafka/postgres/neo4j/redis", lambda c: _cpu_servers(c["throughput"]["cpu_s"])),
    (
        "  CPU s bench client / rest",
        lambda c: f"{c['throughput']['cpu_s']['bench-client']:.0f} / {c['throughput']['cpu_s']['other']:.0f}",
    ),
    ("FRESHNESS rate turns/s", lambda c: f"{c['freshness']['rate_per_s']:.1f}"),
    ("  samples (misses)", lambda c: f"{c['freshness']['samples']} ({c['freshness']['misses']})"),
    ("  accept → retrievable p50/p95/max ms", lambda c: _ms(c["freshness"]["freshness_ms"])),
    ("  found by the first Fetch %", lambda c: _f(c["freshness"]["first_fetch_hit_pct"], ".0f")),
    ("  sample accept → DONE p50/p95 ms", lambda c: _ms(c["freshness"]["sample_accept_to_done_ms"], ("p50", "p95"))),
    ("  Fetch p50/p95 ms", lambda c: _ms(c["freshness"]["fetch_ms"], ("p50", "p95"))),
    (
        "  max lag ingest / retrieve",
        lambda c: _per_replica({g: c["freshness"]["max_lag"].get(g, 0) for g in ("ingest", "retrieve")}),
    ),
    ("  turns per replica", lambda c: _per_replica(c["freshness"]["per_replica_turns"])),
    ("  machine CPU busy %", lambda c: f"{c['freshness']['cpu_s']['machine_busy_pct']:.0f}"),
]


def table(report: dict[str, Any]) -> str:
    configs = report["configs"]
    rows = [(label, [cell(c) for c in configs.values()]) for label, cell in ROWS]
    width = max(len(label) for label, _ in rows) + 2
    col = max(14, *(len(v) + 2 for _, cells in rows for v in cells))
    lines = [f"{'':<{width}}" + "".join(f"{n:>{col}}" for n in configs)]
    lines.append("-" * len(lines[0]))
    lines += [f"{label:<{width}}" + "".join(f"{v:>{col}}" for v in cells) for label, cells in rows]
    ratio = report["run"].get("throughput_ratio")
    if ratio is not None:
        lines.append(f"\nthroughput ratio replicas_2 / replicas_1: {ratio:.2f}x")
    return "\n".join(lines)


def _ideal_note(configs: dict[str, Any]) -> str:
    two = configs.get("replicas_2")
    if two is None:
        return ""
    split = two["throughput"]["per_partition_turns"]
    return f"; replicas_2's {' / '.join(map(str, split))} caps it at {sum(split) / max(split):.2f}x one replica"


def _env_note(env: dict[str, str]) -> str:
    return f" (services run with {' '.join(f'{k}={v}' for k, v in env.items())})" if env else ""


def notes(report: dict[str, Any]) -> str:
    run, configs = report["run"], report["configs"]
    machine = run["machine"]
    busy = ", ".join(f"{n} {c['throughput']['cpu_s']['machine_busy_pct']:.0f}%" for n, c in configs.items())
    first = next(iter(configs.values()))["freshness"]
    lines = [
        f"embedder: {run['embedder']}{_env_note(run['service_env'])}.",
        f"machine: {machine['cores']} cores ({machine['cpu']}), shared by every ACM process, Kafka, Postgres, Neo4j,",
        f"  Redis and this client. CPU busy in the throughput phase: {busy}; a second replica can only use",
        "  what is left ('rest' = anything else that ran, other users' jobs included).",
        "partitions: 2, keyed by session; each config's client id (part of the key) is picked so that the chat",
        f"  splits within 52/48 ('turns per partition'){_ideal_note(configs)}.",
        f"throughput: {run['turns']} turns submitted at once, {run['concurrency']} in flight; turns/s = turns / "
        "(last job DONE - first accept).",
        "  Its accept → DONE is backlog: turns wait in Kafka behind the ones before them.",
        f"freshness: a separate phase at a steady {first['rate_per_s']:.1f} turns/s (the same for every config); one "
        f"turn in {run['fresh_every']} probed",
        f"  with Fetch every {run['fresh_interval_ms']:.0f} ms from its accept until a memory from it comes back "
        f"(a miss after {run['fresh_timeout_s']:.0f} s).",
    ]
    hits = [c["freshness"]["first_fetch_hit_pct"] or 0 for c in configs.values()]
    if min(hits) >= 90:
        lines += [
            f"  {'All' if min(hits) == 100 else f'{min(hits):.0f}% or more of the'} samples were found by their first "
            "Fetch: each turn was retrievable before one",
            "  Fetch could answer, so freshness here is Fetch's own latency (the pipeline's share: sample "
            "accept → DONE).",
        ]
    if machine["busy_before_start"]["busy_pct"] > 20:
        lines.append(f"WARNING: the machine was {machine['busy_before_start']['busy_pct']:.0f}% busy before the start.")
    for name, c in configs.items():
        for phase in ("throughput", "freshness"):
            if c[phase].get("disturbed"):
                lines.append(f"WARNING: {name} {phase}: other processes used {c[phase]['cpu_s']['other']:.0f} CPU s.")
        if c["freshness"].get("over_capacity"):
            lines.append(f"WARNING: {name} freshness ran over capacity (turns queued in Kafka): it includes backlog.")
    return "\n".join(lines)


def plot(report: dict[str, Any], path: Path) -> bool:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
    for name, c in report["configs"].items():
        t = c["throughput"]
        done = t["done_at_s"]
        left.plot(done, range(1, len(done) + 1), label=f"{name}: {t['throughput_turns_per_s']} turns/s")
        fresh = c["freshness"]["freshness_s"]
        if fresh:
            p95 = c["freshness"]["freshness_ms"]["p95"]
            right.plot(
                [1000 * s for s in fresh],
                [(i + 1) / len(fresh) for i in range(len(fresh))],
                label=f"{name}: p95 {p95:.0f} ms",
            )
    left.set(xlabel="seconds since first accept", ylabel="jobs DONE", title="Throughput (burst)")
    right.set(xlabel="accept → retrievable (ms)", ylabel="fraction of samples", title="Freshness (steady rate)")
    for ax in (left, right):
        ax.grid(alpha=0.3)
        ax.legend()
    cores = report["run"]["machine"]["cores"]
    fig.suptitle(
        f"ACM ingest through Kafka, {report['run']['turns']} turns, embedder {report['run']['embedder']}"
        f"{_env_note(report['run']['service_env'])}; {cores} cores shared by every service and server",
        fontsize=10,
    )
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


# --- main -----------------------------------------------------------------------------------------------


async def bench(args: argparse.Namespace, stacks: list[Stack]) -> dict[str, Any]:
    started_at = datetime.now(UTC)
    t0 = time.monotonic()
    infra = infra_addresses()
    fresh_total = args.fresh_samples * args.fresh_every
    workload = build_workload(args.turns + fresh_total, args.seed, args.users)
    checked = check_workload(workload)
    if checked["dropped"] or checked["flagged"] or checked["no_fact"]:
        raise RuntimeError(f"the generated chat has turns that make no fact: {checked}")
    burst_turns, fresh_turns = workload[: args.turns], workload[args.turns :]
    # What ingest and retrieve will embed with (it sets most of ingest's CPU per turn).
    embedder = args.embedder or os.environ.get("ACM_EMBEDDER") or str(IngestSettings.model_fields["embedder"].default)
    sessions = len({(t.user_id, t.session_id) for t in workload})
    cores = os.cpu_count() or 1
    quiet = await machine_check()
    waited = 0.0
    while quiet["busy_pct"] > 20 and waited < args.wait_quiet_s:
        if waited % 30 < 2:
            top = "; ".join(f"{t['cpu_pct']}% {t['command'][:60]}" for t in quiet["top"])
            log(f"machine {quiet['busy_pct']:.0f}% busy ({top}); waiting for it to be quiet")
        quiet = await machine_check()
        waited += 2.0
    if quiet["busy_pct"] > 20:
        top = "; ".join(f"{t['cpu_pct']}% {t['command']}" for t in quiet["top"])
        log(
            f"WARNING: the machine is {quiet['busy_pct']:.0f}% busy before the benchmark starts ({top}): "
            "every figure will be lower than on a quiet machine"
        )
    log(
        f"workload: {len(burst_turns)} + {len(fresh_turns)} turns, {args.users} users, {sessions} sessions, "
        f"{checked['facts']} facts expected; embedder {embedder}; machine: {cores} cores shared by every ACM "
        "process and Kafka, Postgres, Neo4j and Redis"
    )
    configs: dict[str, Any] = {}
    fresh_rate = args.fresh_rate or None
    async with asyncio.timeout(args.max_seconds):
        for replicas in args.replicas:
            config = await run_config(infra, replicas, burst_turns, fresh_turns, fresh_rate, args, stacks)
            configs[f"replicas_{replicas}"] = config
            fresh_rate = fresh_rate or config["freshness"]["rate_per_s"]  # the same load for every config
    tp = {n: c["throughput"]["throughput_turns_per_s"] for n, c in configs.items()}
    ratio = tp["replicas_2"] / tp["replicas_1"] if tp.get("replicas_1") and tp.get("replicas_2") else None
    return {
        "configs": configs,
        "run": {
            "started_at": started_at.isoformat(timespec="seconds"),
            "duration_s": round(time.monotonic() - t0, 1),
            "turns": args.turns,
            "freshness_turns": len(fresh_turns),
            "seed": args.seed,
            "users": args.users,
            "sessions": sessions,
            "customers": len(CUSTOMERS),
            "templates": {
                "user": len(USER_FRAMES),
                "assistant": len(ASSISTANT_FRAMES),
                "follow_ups": len(FOLLOW_UPS),
                "openers": len(OPENERS),
            },
            "workload_check": checked,
            "embedder": embedder,
            "service_env": dict(args.service_env),
            "vector_store": args.vector_store,
            "concurrency": args.concurrency,
            "pollers": args.pollers,
            "kafka_partitions": 2,
            "client_ids_chosen_for": "a turn split within 52/48 over the 2 partitions (see balanced_client_id)",
            "fresh_load": args.fresh_load,
            "fresh_every": args.fresh_every,
            "fresh_interval_ms": args.fresh_interval_ms,
            "fresh_timeout_s": args.fresh_timeout_s,
            "throughput_ratio": round(ratio, 3) if ratio else None,
            "infra": asdict(infra),
            "machine": {
                "cores": cores,
                "cpu": _cpu_model(),
                "python": platform.python_version(),
                "busy_before_start": quiet,
                "shared_by": "gateway, retrieve, architect, anticipate, compact, the ingest replica(s), "
                "Kafka, Postgres, Neo4j, Redis and this client",
            },
            "method": {
                "throughput": "turns / (last job DONE (server updated_at) - first Ingest accepted), all turns "
                f"submitted at once with {args.concurrency} in flight",
                "freshness": "separate steady-rate phase: Ingest accepted -> a Fetch in the user's scope with the "
                "turn's sentence returns a memory whose source_turn_ids holds the turn id",
            },
        },
    }


def _interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt


def _name_value(text: str) -> tuple[str, str]:
    name, sep, value = text.partition("=")
    if not sep or not name:
        raise argparse.ArgumentTypeError(f"expected NAME=VALUE, got {text!r}")
    return name, value


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("--turns", type=int, default=600, help="turns of the throughput burst")
    p.add_argument(
        "--replicas",
        type=lambda s: [int(x) for x in s.split(",")],
        default=[1, 2],
        help="ingest replica counts to run, in order (default 1,2)",
    )
    p.add_argument("--users", type=int, default=30)
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--concurrency", type=int, default=16, help="Ingest calls in flight")
    p.add_argument("--embedder", default="", help="ACM_EMBEDDER for ingest and retrieve (default: theirs)")
    p.add_argument(
        "--service-env",
        action="append",
        default=[],
        type=_name_value,
        metavar="NAME=VALUE",
        help="an environment variable for every service process (repeatable), e.g. OPENBLAS_NUM_THREADS=1",
    )
    p.add_argument(
        "--vector-store",
        choices=["edge", "qdrant-local"],
        default="edge",
        help="what stands in for the Qdrant server (none can run here): qdrant-edge, Qdrant's Rust engine in the "
        "retrieve process (default), or qdrant-client's local mode (pure Python, meant for tests)",
    )
    p.add_argument("--pollers", type=int, default=4, help="concurrent GetJob pollers")
    p.add_argument("--fresh-samples", type=int, default=100)
    p.add_argument("--fresh-every", type=int, default=2, help="one probed turn in this many (freshness phase)")
    p.add_argument(
        "--fresh-rate",
        type=float,
        default=0.0,
        help="turns/s in the freshness phase (default: --fresh-load × the first config's throughput)",
    )
    # Well below capacity: the probes' own Fetch calls (a query embedding each) share the CPU with ingest.
    p.add_argument("--fresh-load", type=float, default=0.3)
    p.add_argument("--fresh-interval-ms", type=float, default=20.0)
    p.add_argument("--fresh-timeout-s", type=float, default=30.0)
    p.add_argument("--fresh-max-inflight", type=int, default=4, help="Fetch calls all probes may have in flight")
    p.add_argument("--job-timeout-s", type=float, default=180.0, help="a job not DONE this long after accept fails")
    p.add_argument("--settle-timeout-s", type=float, default=120.0, help="wait for consumer lag to drain")
    p.add_argument("--start-timeout-s", type=float, default=120.0)
    p.add_argument("--warmup-timeout-s", type=float, default=60.0)
    p.add_argument("--wait-quiet-s", type=float, default=0.0, help="wait up to this long for a quiet machine")
    p.add_argument("--max-seconds", type=float, default=570.0, help="hard limit for the whole run")
    p.add_argument("--out", type=Path, default=ROOT / "results/ingest_kafka.json")
    p.add_argument("--no-plot", action="store_true")
    p.add_argument("--keep-logs", action="store_true", help="keep /tmp/acm-bench-* (service logs) after a success")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    stacks: list[Stack] = []
    # SIGTERM cleans up like Ctrl-C; only the main thread may set handlers (a test may call us from another).
    main_thread = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, _interrupt) if main_thread else None
    report: dict[str, Any] | None = None
    try:
        report = asyncio.run(bench(args, stacks))
    except KeyboardInterrupt:
        log("interrupted")
    except ServiceDied as exc:
        log(f"a service died: {exc}")
    except Exception as exc:
        log(f"failed: {type(exc).__name__}: {exc}")
        for stack in stacks:
            for name in stack.names:
                if name.startswith("ingest") or name == "gateway":
                    print(f"--- {stack.label}/{name} (end of log) ---\n{stack.log_tail(name, 1500)}", flush=True)
    finally:
        for stack in stacks:
            try:
                stack.stop(keep_work=args.keep_logs or report is None)
            except Exception as exc:  # cleanup goes on with the next stack
                log(f"stopping {stack.label} failed: {exc!r}")
        if report is None and stacks:
            log("service logs kept in " + ", ".join(str(s.work) for s in stacks))
        if main_thread:
            signal.signal(signal.SIGTERM, previous)
    if report is None:
        return 1

    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    print()
    print(table(report))
    print("\n" + notes(report))
    print(f"\nresults: {args.out}")
    if not args.no_plot and plot(report, args.out.with_suffix(".png")):
        print(f"plot:    {args.out.with_suffix('.png')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
