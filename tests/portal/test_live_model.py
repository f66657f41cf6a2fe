"""The live page's read model (halls.regulator.services.livemodel): moved by the intake in the transaction
that accepts the messages, it shows what the replay of the stored messages shows (portal.live_replay), in a
bounded number of queries however many messages were stored; `manage.py regulator_rebuild_live` makes the
same rows again. The fold itself (halls.regulator.live_core) is pure: a property test splits random feeds
into random runs, each run's state kept as the model's row keeps it. PostgreSQL and SQLite."""

from __future__ import annotations

import hashlib
import itertools
import random
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from django.core.management import call_command
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from halls.feed import envelope, schema
from halls.regulator import live_core
from halls.regulator.models import Installation, InstallationKind, LiveGame, LiveSession
from halls.regulator.services import intake, livemodel, portal
from tests.portal.support import Sender, authority_user, register

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _regulator(settings: Any) -> None:
    settings.HALL_ROLE = "regulator"


# --- a random feed: games and sessions of a few rooms, interleaved as a venue tells them ---------------


def random_feed(rng: random.Random, *, facts: int, venue: str | None) -> list[tuple[str, dict[str, Any]]]:
    """`facts` messages of games and sessions (schema-valid), interleaved: games committed, sold, drawn
    (a ball told again now and then), won, ended or voided, revealed; sessions opened and closed, one
    closed without its opening, one opened again."""
    out: list[tuple[str, dict[str, Any]]] = []
    games: dict[str, dict[str, Any]] = {}  # open games: their next ordinal and balls left
    made = 0
    sessions: list[tuple[str, str]] = []
    while len(out) < facts:
        roll = rng.random()
        room = rng.choice(["Sala 1", "Sala 2", "Sala electrónica"])
        if roll < 0.08 or not games:
            made += 1
            name = f"{rng.choice(['electronic', 'traditional'])}-{made}"
            games[name] = {"room": room, "ordinal": 1, "balls": rng.sample(range(1, 91), 90)}
            base = {"venue": venue, "room": room, "game": name}
            commitment = hashlib.sha256(name.encode()).hexdigest()
            out.append(("game.committed", {**base, "commitment": commitment, "committed_at": _iso(0)}))
            if rng.random() < 0.7:
                out.append(("game.sales", {**base, "cards": rng.randrange(500), "sales": _euros(rng),
                                           "sales_digest": None, "closed_at": _iso(0)}))  # fmt: skip
            continue
        if roll < 0.14:
            session = f"S-{rng.randrange(4)}"
            if rng.random() < 0.6 or not sessions:
                checks = [{"check": "blower", "ok": rng.random() < 0.8}, {"check": "rng", "ok": True}]
                family = rng.choice(["traditional", "electronic"])
                opened = {"venue": venue, "room": room, "session": session, "family": family}
                out.append(("session.opened", {**opened, "opened_at": _iso(0), "checks": checks}))
                sessions.append((room, session))
            else:
                room, session = rng.choice([*sessions, (room, "S-never-opened")])
                out.append(("session.closed", {"venue": venue, "room": room, "session": session,
                                               "closed_at": _iso(1), "games": rng.randrange(9),
                                               "sales": _euros(rng), "prizes": _euros(rng)}))  # fmt: skip
            continue
        name = rng.choice(sorted(games))
        game = games[name]
        base = {"venue": venue, "room": game["room"], "game": name}
        if roll < 0.8:
            ordinal = game["ordinal"] if rng.random() < 0.9 else max(1, game["ordinal"] - 1)  # told again
            out.append(("game.ball", {**base, "ordinal": ordinal, "number": game["balls"][ordinal - 1]}))
            game["ordinal"] = min(90, max(game["ordinal"], ordinal + 1))
        elif roll < 0.88:
            out.append(("game.prize", {**base, "prize": "line", "name": "Línea", "amount": _euros(rng),
                                       "ordinal": game["ordinal"] - 1 or None,
                                       "cards": [f"T1-{rng.randrange(9999):04d}"],
                                       "pool": rng.choice([None, "POOL-1"]), "where": venue}))  # fmt: skip
        else:
            seed = hashlib.sha256(f"seed-{name}".encode()).hexdigest()
            out.append(("game.ended", {**base, "state": rng.choice(["closed", "closed", "void"]),
                                       "balls": game["ordinal"] - 1, "seed": None}))  # fmt: skip
            if rng.random() < 0.5:
                out.append(("game.revealed", {**base, "commitment": hashlib.sha256(name.encode()).hexdigest(),
                                              "seed": seed, "revealed_at": _iso(1)}))  # fmt: skip
            del games[name]
    return out[:facts]


def _iso(hours: int) -> str:
    return f"2026-12-06T{19 + hours:02d}:00:00+00:00"


def _euros(rng: random.Random) -> str:
    return f"{rng.randrange(100000) / 100:.2f}"


# --- the pure fold: any split into runs, kept as the model keeps it, is the one pass -------------------


def _kept(state: live_core.GameState) -> live_core.GameState:
    """A game's state as its row keeps it and gives it back."""
    values = livemodel._game_values(state, 1)
    return livemodel.game_state(LiveGame(venue=livemodel.venue_of(state.venue), game=state.game, **values))


def _kept_session(state: live_core.SessionState) -> live_core.SessionState:
    values = livemodel._session_values(state, 1)
    row = LiveSession(
        venue=livemodel.venue_of(state.venue), room=state.room, session=str(state.session), **values
    )
    return livemodel.session_state(row)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    rng=st.randoms(use_true_random=False),
    facts=st.integers(min_value=1, max_value=150),
    cuts=st.lists(st.integers(min_value=1, max_value=150), max_size=12),
    central=st.booleans(),
)
def test_the_fold_in_runs_kept_as_rows_is_the_fold_in_one_pass(
    rng: random.Random, facts: int, cuts: list[int], central: bool
) -> None:
    feed = random_feed(rng, facts=facts, venue=None if central else "ML-B-0001")
    at = datetime(2026, 12, 6, 20, tzinfo=UTC)
    whole_games: dict[Any, live_core.GameState] = {}
    whole_sessions: dict[Any, live_core.SessionState] = {}
    for n, (kind, payload) in enumerate(feed):
        live_core.fold(whole_games, whole_sessions, kind, payload, at + timedelta(seconds=n))
    games: dict[Any, live_core.GameState] = {}
    sessions: dict[Any, live_core.SessionState] = {}
    bounds = sorted({0, len(feed), *(c for c in cuts if c < len(feed))})
    for start, end in itertools.pairwise(bounds):
        for n in range(start, end):
            kind, payload = feed[n]
            live_core.fold(games, sessions, kind, payload, at + timedelta(seconds=n))
        games = {key: _kept(g) for key, g in games.items()}  # stored, and read again for the next run
        sessions = {key: _kept_session(s) for key, s in sessions.items()}
    assert games == whole_games and list(games) == list(whole_games)
    assert sessions == whole_sessions and list(sessions) == list(whole_sessions)


def test_every_message_of_the_random_feed_is_valid_against_the_schema() -> None:
    rng, key = random.Random(29), Ed25519PrivateKey.generate()
    for venue in ("ML-B-0001", None):
        for n, (kind, payload) in enumerate(random_feed(rng, facts=400, venue=venue), start=1):
            signed = envelope.Envelope("00000000deadbeef", n, kind, _iso(0), payload)
            schema.validate(envelope.to_json(envelope.sign(signed, key)))  # raises when not


# --- the node: the intake moves the model, the page reads it ---------------------------------------------


def feed_node(count: int, facts: int, *, seed: int = 29, start: int = 0) -> list[Sender]:
    """`count` installations (every third a central, its games venue-less), each sending `facts` random
    messages through the intake in random runs; their fact times distinct and within the live window."""
    rng = random.Random(seed)
    senders = []
    now = timezone.now()
    clock = 0
    for i in range(start, start + count):
        central = i % 3 == 2
        sender = register(
            f"Bingo {i:03d}",
            uid=f"{i:016x}",
            kind=InstallationKind.CENTRAL if central else InstallationKind.VENUE,
            licence="" if central else f"ML-B-{i:04d}",
        )
        feed = random_feed(rng, facts=facts, venue=None if central else f"ML-B-{i:04d}")
        signed = []
        for n, (kind, payload) in enumerate(feed, start=1):
            clock += 1
            at = now - timedelta(minutes=30) + timedelta(milliseconds=7 * clock)
            message = envelope.Envelope(sender.uid, n, kind, at.isoformat(), payload)
            signed.append(envelope.to_json(envelope.sign(message, sender.key)))
        while signed:
            size = rng.randrange(1, 40)
            run, signed = signed[:size], signed[size:]
            intake.receive(messages=run)
        senders.append(sender)
    return senders


def test_the_read_model_shows_what_the_replay_of_the_stored_feed_shows() -> None:
    senders = feed_node(5, 160)
    now = timezone.now()
    everyone = portal.live(now=now)
    assert everyone == portal.live_replay(now=now)
    assert len(everyone.games) == portal.GAMES_SHOWN and everyone.sessions  # enough to compare
    assert any(g.venue is None for g in everyone.games) and any(g.prizes for g in everyone.games)
    assert any(not s.open for s in everyone.sessions) and any(not g.open for g in everyone.games)
    for sender in senders[:2]:
        one = Installation.objects.get(pk=sender.installation.pk)
        assert portal.live(installation=one, now=now) == portal.live_replay(installation=one, now=now)


def test_the_live_fragment_is_a_few_queries_however_many_messages_were_stored() -> None:
    authority = Client()
    authority.force_login(authority_user())
    url = reverse("regulator:live")

    def fragment_queries() -> tuple[int, int]:
        with CaptureQueriesContext(connection) as read:
            portal.live()
        with CaptureQueriesContext(connection) as page:
            answer = authority.get(url, {"fragment": "1"})
        assert answer.status_code == 200 and b"data-game=" in answer.content
        return len(read), len(page)

    feed_node(2, 40)
    small = fragment_queries()
    feed_node(6, 200, seed=7, start=2)  # four times the installations, twenty times the messages
    large = fragment_queries()
    assert small == large
    assert large[0] == 2  # the games and the sessions, each with its installation


def _without_id(row: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in row.items() if k != "id"}


def test_the_rebuild_makes_the_rows_the_intake_made() -> None:
    feed_node(4, 120)

    def rows() -> tuple[list[Any], list[Any]]:
        games = LiveGame.objects.order_by("installation_id", "venue", "game").values()
        sessions = LiveSession.objects.order_by("installation_id", "venue", "room", "session").values()
        return [_without_id(r) for r in games], [_without_id(r) for r in sessions]

    now = timezone.now()
    made, shown = rows(), portal.live(now=now)
    LiveGame.objects.filter(installation__name="Bingo 001").update(state="void", balls=[])  # spoilt
    call_command("regulator_rebuild_live", verbosity=0)
    assert rows() == made
    assert portal.live(now=now) == shown
    one = Installation.objects.get(name="Bingo 002")
    LiveGame.objects.filter(installation=one).delete()
    call_command("regulator_rebuild_live", one.uid, verbosity=0)
    assert rows() == made
