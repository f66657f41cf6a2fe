"""Pool meters on hall screens, end to end: config.asgi.application on the Redis pub/sub layer, real commits.

Contributions flow while the meter publisher is called far more often than beat would (every 20 ms, from
two threads at once): a screen of the pool's venue still gets at most 4 `pool.meters` events a second,
each carrying every pool of the venue that changed since the last (one event per tick, not one per pool),
each figure true (never above what the pool holds, whole cents rounded down), the last one the
exact final meter, and nothing more once nothing changes. A hit is announced on the screens of every room
of the pool's venues (table, seat, hand, amount paid, new amount), in the award's transaction, and the
meter never goes back to its figure from before the hit. Other venues' screens hear nothing.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import threading
import time
from collections.abc import Callable
from datetime import datetime
from decimal import Decimal
from typing import Any, TypeVar

import pytest
from channels.db import DatabaseSyncToAsync, database_sync_to_async
from channels.testing import HttpCommunicator, WebsocketCommunicator
from django.contrib.auth.models import User
from django.test import Client

from config.asgi import application
from halls import money
from halls.models import Network, Room, Screen, StreamCursor, Venue
from jackpots import engine
from jackpots.models import MeterPublisherState, Pool
from jackpots.poker import rank_hand
from jackpots.services import awards, contributions, screen_events
from jackpots.services.pools import LevelSpec
from jackpots.services.readmodels import meters
from jackpots.sources import PoolSource
from tests.jackpots.pool_fixtures import an10_venue, key, make_pool, pool_operator

__all__ = ["an10_venue", "pool_operator"]  # fixtures, imported for pytest

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("isolated_layer")]

TIMEOUT = 5
SEED = Decimal("5000")
D = Decimal
T = TypeVar("T")


@pytest.fixture(autouse=True)
def fresh_publisher() -> None:
    """Each test's publisher starts from a full refresh, like a freshly started worker."""
    screen_events.reset_poll_state()


@pytest.fixture
def hall(an10_venue: Venue) -> Screen:
    room = Room.objects.create(venue=an10_venue, name="Sala de juego")
    return Screen.objects.create(venue=an10_venue, room=room, name="Pantalla sala")


@pytest.fixture
def carousel(an10_venue: Venue, pool_operator: User) -> Pool:
    return make_pool(an10_venue, pool_operator)


async def in_thread(fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
    """Run sync code in a thread of its own (not the shared sync thread), closing its connection after."""
    result: T = await DatabaseSyncToAsync(fn, thread_sensitive=False)(*args, **kwargs)
    return result


async def connect(token: str) -> WebsocketCommunicator:
    communicator = WebsocketCommunicator(application, f"/ws/screens/{token}/")
    connected, _ = await communicator.connect(timeout=TIMEOUT)
    assert connected
    return communicator


async def drain(communicator: WebsocketCommunicator, quiet: float = 0.6) -> list[dict[str, Any]]:
    """Every event received until the socket has been quiet for `quiet` seconds."""
    received = []
    # (receive_nothing peeks; a receive that times out would cancel the application)
    while not await communicator.receive_nothing(timeout=quiet):
        received.append(json.loads(await communicator.receive_from(timeout=TIMEOUT)))
    return received


def at(event: dict[str, Any]) -> float:
    return datetime.fromisoformat(event["at"]).timestamp()


def live_amounts(pool: Pool) -> list[str]:
    return [str(level.amount) for level in meters.pool_meter(pool).levels]


def meters_of(events: list[dict[str, Any]], pool_id: int) -> list[tuple[float, dict[str, Any]]]:
    """(time, pool) of each `pool.meters` event that carries the pool."""
    return [
        (at(e), pool)
        for e in events
        if e["type"] == "pool.meters"
        for pool in e["data"]["pools"]
        if pool["id"] == pool_id
    ]


def assert_at_most_four_a_second(meter_events: list[tuple[float, dict[str, Any]]]) -> None:
    times = [t for t, _ in meter_events]
    gaps = [b - a for a, b in itertools.pairwise(times)]
    assert all(gap >= screen_events.MIN_INTERVAL for gap in gaps), gaps
    for start in times:
        assert sum(start <= t < start + 1 for t in times) <= 4


def contribute_for(pool: Pool, seconds: float, bet: Decimal, stop: threading.Event) -> int:
    """Contribute through the service, one bet every ~5 ms, for `seconds`; returns how many."""
    done = 0
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        contributions.contribute(
            pool=pool,
            source=PoolSource.of("table", 1).at("hand", done // 7).at("seat", done % 7),
            bet=bet,
            idempotency_key=key("c"),
            actor="table-1 console",
        )
        done += 1
        time.sleep(0.005)
    stop.set()
    return done


def tick_until(stop: threading.Event, every: float = 0.02) -> int:
    """A publisher far more eager than beat: called every `every` s until told to stop, then once more."""
    ticks = 0
    while not stop.is_set():
        screen_events.publish_meters()
        ticks += 1
        time.sleep(every)
    time.sleep(screen_events.MIN_INTERVAL)
    screen_events.publish_meters()  # the last figure, once the limit allows it
    return ticks + 1


async def test_contributions_make_at_most_four_meter_events_a_second_with_true_amounts(
    layer: Any, hall: Screen, carousel: Pool, an10_venue: Venue, pool_operator: User
) -> None:
    # A second pool of the venue: two levels, the first with a ceiling it is about to reach.
    linked = await in_thread(
        make_pool,
        an10_venue,
        pool_operator,
        code="SLOTS-1",
        pack="",
        bet=None,
        members=("m1",),
        source_type="machine",
        levels=[
            LevelSpec(name="Grand", seed=D("1000"), contribution_rate=D("0.05"), ceiling=D("1000.50")),
            LevelSpec(name="Minor", seed=D("50"), contribution_rate=D("0.011")),
        ],
    )
    screen = await connect(hall.token)
    # The first tick shows both pools as they stand.
    first = await in_thread(screen_events.publish_meters)
    assert set(first) == {carousel.pk, linked.pk}
    opening = await drain(screen, quiet=0.3)
    # One event for the tick, carrying both pools.
    assert [(e["type"], [p["id"] for p in e["data"]["pools"]]) for e in opening] == [
        ("pool.meters", [carousel.pk, linked.pk]),
    ]
    first_carousel = opening[0]["data"]["pools"][0]
    assert [lv["amount"] for lv in first_carousel["levels"]] == ["5000.00"]
    assert first_carousel["levels"][0]["name"] == "Carrusel"
    assert "must_hit_by" not in json.dumps(opening) and "reserve" not in json.dumps(opening)
    # Nothing changed: nothing is published.
    await asyncio.sleep(screen_events.MIN_INTERVAL)
    assert await in_thread(screen_events.publish_meters) == {}

    # 0.33 € pool bets: 70 % to the meter is 0.231 €, so the meter carries fractions of a cent.
    stop = threading.Event()
    started = time.monotonic()
    done, ticks_a, ticks_b, extra = await asyncio.gather(
        in_thread(contribute_for, carousel, 2.2, D("0.33"), stop),
        in_thread(tick_until, stop),
        in_thread(tick_until, stop),  # two workers racing: the limit still holds
        in_thread(
            lambda: [
                contributions.contribute(
                    pool=linked,
                    source=PoolSource.of("machine", "m1"),
                    bet=D("10.00"),
                    idempotency_key=key("m"),
                    actor="smib",
                )
                for _ in range(20)
            ]
        ),
    )
    elapsed = time.monotonic() - started
    received = await drain(screen)
    assert len(extra) == 20

    stream = hall.room.stream
    seqs = [e["seq"] for e in opening + received]
    assert seqs == list(range(seqs[0], seqs[0] + len(seqs))), "the room stream's numbering has a gap"
    assert {e["stream"] for e in received} == {stream}
    assert {e["type"] for e in received} == {"pool.meters"}
    assert_at_most_four_a_second([(at(e), e) for e in received])  # all pools together: 4 events a second
    assert any(len(e["data"]["pools"]) == 2 for e in received), "the two pools never shared a tick's event"

    mine = meters_of(received, carousel.pk)
    assert_at_most_four_a_second(mine)
    assert ticks_a + ticks_b > 4 * len(mine)  # the publisher was asked far more often than it published
    assert 4 <= len(mine) <= 4 * elapsed + 2
    figures = [D(pool["levels"][0]["amount"]) for _, pool in mine]
    assert figures == sorted(figures) and len(set(figures)) == len(figures), "only when changed, never down"
    # Every figure is a true meter: the seed plus k contributions, rounded down to the cent.
    possible = {money.cents_down(SEED + D("0.231") * k) for k in range(done + 1)}
    assert set(figures) <= possible
    final = money.cents_down(SEED + D("0.231") * done)
    assert figures[-1] == final
    assert await database_sync_to_async(live_amounts)(carousel) == [str(final)]

    # The linked pool: the Grand stops at its ceiling (20 × 0.50 € offered, 0.50 € of room), the Minor
    # shows 50 + 20 × 0.11 = 52.20.
    theirs = meters_of(received, linked.pk)
    assert_at_most_four_a_second(theirs)
    assert [lv["amount"] for lv in theirs[-1][1]["levels"]] == ["1000.50", "52.20"]
    assert [lv["name"] for lv in theirs[-1][1]["levels"]] == ["Grand", "Minor"]

    # Quiet again: ticks publish nothing, the snapshot shows the same figures at the stream's seq.
    await asyncio.sleep(screen_events.MIN_INTERVAL)
    assert await in_thread(screen_events.publish_meters, full=True) == {}
    assert await screen.receive_nothing(timeout=0.3)
    body = await snapshot(hall.token)
    assert body["seq"] == seqs[-1]
    pools = body["sections"]["jackpots"]["pools"]
    assert [(p["id"], [lv["amount"] for lv in p["levels"]]) for p in pools] == [
        (carousel.pk, [str(final)]),
        (linked.pk, ["1000.50", "52.20"]),
    ]
    await screen.disconnect()


async def snapshot(token: str, path: str = "snapshot/") -> dict[str, Any]:
    communicator = HttpCommunicator(application, "GET", f"/screens/{token}/{path}")
    response = await communicator.get_response(TIMEOUT)
    await communicator.wait(TIMEOUT)
    assert response["status"] == 200, response
    body: dict[str, Any] = json.loads(response["body"])
    return body


def royal_flush_at_seat_3(pool: Pool, actor: User) -> awards.AwardResult:
    return awards.award_hand(
        pool=pool,
        winners=[
            engine.Winner("3", rank_hand("AS KS QS JS TS"), False),
            engine.Winner("5", rank_hand("9H 9D 9C 9S 2H"), False),
        ],
        idempotency_key=key("hand"),
        actor=actor,
        context={"table": 1, "table_name": "Mesa 1", "table_number": 1, "hand": 41, "source": "table:1"},
    )


async def test_a_hit_is_announced_in_its_transaction_and_the_meter_never_goes_back(
    layer: Any, hall: Screen, carousel: Pool, an10_venue: Venue, pool_operator: User
) -> None:
    other_room = await database_sync_to_async(Room.objects.create)(venue=an10_venue, name="Sala 2")
    second = await database_sync_to_async(Screen.objects.create)(venue=an10_venue, room=other_room, name="P2")
    elsewhere = await database_sync_to_async(Venue.objects.create)(
        name="Casino Málaga", licence_number="AN-C-0999", jurisdiction="AN10"
    )
    far_room = await database_sync_to_async(Room.objects.create)(venue=elsewhere, name="Sala")
    far = await database_sync_to_async(Screen.objects.create)(venue=elsewhere, room=far_room, name="Lejos")
    for n in range(40):
        await database_sync_to_async(contributions.contribute)(
            pool=carousel,
            source=PoolSource.of("table", 1).at("hand", 40).at("seat", 2),
            bet=D("1.00"),
            idempotency_key=f"h40-{n}",
            actor="t",
        )
    await in_thread(screen_events.publish_meters)
    before = await snapshot(hall.token)
    [shown] = before["sections"]["jackpots"]["pools"]
    assert shown["levels"][0]["amount"] == "5028.00"  # 40 × 0.70 €
    assert (await snapshot(far.token))["sections"]["jackpots"]["pools"] == []

    screens_here = [await connect(hall.token), await connect(second.token)]
    bystander = await connect(far.token)
    result = await database_sync_to_async(royal_flush_at_seat_3)(carousel, pool_operator)
    paid = {line.seat: line.amount for line in result.lines if line.amount > 0}
    assert set(paid) == {"3", "5"}
    new_amount = money.cents_down(result.meter_after)

    for communicator, room in zip(screens_here, [hall.room, other_room], strict=True):
        hits = [await communicator.receive_json_from(timeout=TIMEOUT) for _ in paid]
        assert [h["type"] for h in hits] == ["pool.hit"] * len(paid)
        assert {h["stream"] for h in hits} == {room.stream}
        assert {h["data"]["settlement"] for h in hits} == {result.settlement_id}
        for hit in hits:
            data = hit["data"]
            assert data["pool"] == carousel.pk and data["name"] == carousel.name
            assert (data["source"], data["hand"], data["level_name"]) == ("Mesa 1", "41", "Carrusel")
            assert D(data["amount"]) == paid[data["seat"]]
            assert data["new_amount"] == str(new_amount)
            assert data["meter"]["levels"][0]["amount"] == str(new_amount)
            assert data["meter"]["levels"][0]["version"] > shown["levels"][0]["version"]
        royal = next(h["data"] for h in hits if h["data"]["seat"] == "3")
        assert (royal["category"], royal["category_label"]) == ("royal_flush", "Escalera real")
    assert await bystander.receive_nothing(timeout=0.3)

    # The next tick publishes the meter after the hit, never the figure from before it.
    await asyncio.sleep(screen_events.MIN_INTERVAL)
    published = await in_thread(screen_events.publish_meters)
    assert published[carousel.pk]["levels"][0]["amount"] == str(new_amount)
    event = await screens_here[0].receive_json_from(timeout=TIMEOUT)
    assert event["type"] == "pool.meters"
    assert [p["levels"][0]["amount"] for p in event["data"]["pools"]] == [str(new_amount)]

    # The table-side page of the pool shows the hit's winners under the meter.
    page = await snapshot(hall.token, f"pools/{carousel.pk}/snapshot/")
    assert page["stream"] == hall.room.stream
    meter = page["sections"]["meter"]
    assert meter["pool"]["levels"][0]["amount"] == str(new_amount)
    assert [(h["seat"], D(h["amount"])) for h in meter["last_hits"]] == sorted(
        paid.items(), key=lambda item: -item[1]
    )
    assert meter["last_hits"][0]["new_amount"] == str(new_amount)
    for communicator in [*screens_here, bystander]:
        await communicator.disconnect()


async def test_a_network_pool_is_shown_in_every_venue_of_the_network(
    layer: Any, hall: Screen, an10_venue: Venue, pool_operator: User
) -> None:
    def setup() -> tuple[Pool, Screen]:
        partner = Venue.objects.create(name="Casino Cádiz", licence_number="AN-C-0500", jurisdiction="AN10")
        network = Network.objects.create(name="Red Sur", code="SUR", jurisdiction="AN10")
        network.venues.add(an10_venue, partner)
        room = Room.objects.create(venue=partner, name="Sala Cádiz")
        screen = Screen.objects.create(venue=partner, room=room, name="Cádiz")
        pool = make_pool(
            an10_venue,
            pool_operator,
            code="RED-1",
            pack="",
            bet=None,
            network=network,
            members=("m1",),
            source_type="machine",
            levels=[LevelSpec(name="Red", seed=D("2000"), contribution_rate=D("0.10"))],
        )
        return pool, screen

    pool, partner_screen = await database_sync_to_async(setup)()
    sockets = [await connect(hall.token), await connect(partner_screen.token)]
    await database_sync_to_async(contributions.contribute)(
        pool=pool, source=PoolSource.of("machine", "m1"), bet=D("2.00"), idempotency_key="n1", actor="smib"
    )
    assert set(await in_thread(screen_events.publish_meters)) == {pool.pk}
    for communicator in sockets:
        event = await communicator.receive_json_from(timeout=TIMEOUT)
        assert (event["type"], [p["id"] for p in event["data"]["pools"]]) == ("pool.meters", [pool.pk])
        assert event["data"]["pools"][0]["levels"][0]["amount"] == "2000.20"
        await communicator.disconnect()
    # The pool stands on both venues' screens and table-side pages.
    for token in (hall.token, partner_screen.token):
        assert [p["id"] for p in (await snapshot(token))["sections"]["jackpots"]["pools"]] == [pool.pk]
        assert (await snapshot(token, f"pools/{pool.pk}/snapshot/"))["sections"]["meter"]["pool"][
            "id"
        ] == pool.pk


def test_the_meter_page_is_public_by_screen_token_and_only_for_the_venues_pools(
    hall: Screen, carousel: Pool, pool_operator: User
) -> None:
    client = Client()
    page = client.get(f"/screens/{hall.token}/pools/{carousel.pk}/")
    assert page.status_code == 200
    html = page.content.decode()
    assert f'data-snapshot-url="/screens/{hall.token}/pools/{carousel.pk}/snapshot/"' in html
    assert "jackpots/meter.js" in html
    body = client.get(f"/screens/{hall.token}/pools/{carousel.pk}/snapshot/").json()
    assert body["sections"]["meter"]["pool"]["levels"][0]["amount"] == "5000.00"
    assert body["sections"]["meter"]["last_hits"] == []

    other = Venue.objects.create(name="Casino Huelva", licence_number="AN-C-0777", jurisdiction="AN10")
    foreign = make_pool(other, pool_operator, code="HUELVA-1")
    assert client.get(f"/screens/{hall.token}/pools/{foreign.pk}/").status_code == 404
    assert client.get(f"/screens/{hall.token}/pools/{foreign.pk}/snapshot/").status_code == 404
    assert client.get(f"/screens/no-such-token/pools/{carousel.pk}/").status_code == 404
    Screen.objects.filter(pk=hall.pk).update(active=False)
    assert client.get(f"/screens/{hall.token}/pools/{carousel.pk}/").status_code == 404
    # The hall screen page carries the pools section.
    Screen.objects.filter(pk=hall.pk).update(active=True)
    screen_page = client.get(f"/screens/{hall.token}/").content.decode()
    assert 'id="jackpots"' in screen_page and "jackpots/screen.js" in screen_page


def test_the_publisher_state_is_kept_apart_from_the_streams(hall: Screen, carousel: Pool) -> None:
    """The publisher's bookkeeping has its own rows; the streams' cursors hold only stream sequences."""
    screen_events.publish_meters()
    names = set(MeterPublisherState.objects.values_list("name", flat=True))
    assert {screen_events.TICK_ROW, screen_events.POOL_ROW.format(carousel.pk)} <= names
    assert not StreamCursor.objects.filter(stream__startswith="meters").exists()
