"""The gateway's hot-path statements and their ORM twins (gateway_rows): each test runs twice, through the
function the gateway calls (SQL on PostgreSQL, the twin on SQLite) and through the twin itself, so on
PostgreSQL each twin is held to its SQL and on SQLite the twins run as the embedded hall runs them."""

from __future__ import annotations

from collections.abc import Callable
from datetime import date, timedelta
from decimal import Decimal
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.utils import timezone

from halls.models import Venue
from jackpots.models import Pool
from machines.models import LinkGroup, LockReason, Machine, MachineState, Play
from machines.services import gateway_rows, links
from tests.machines.machine_fixtures import (
    an10_venue,
    link,
    make_machine_pool,
    pool_operator,
    register,
    slot_pool,
)

__all__ = ["an10_venue", "link", "pool_operator", "slot_pool"]

pytestmark = pytest.mark.django_db

D = Decimal
TWINS = ["statement", "orm"]


def twin(name: str, which: str) -> Callable[..., Any]:
    """gateway_rows.<name> (what the gateway runs here) or gateway_rows.<name>_orm."""
    fn: Callable[..., Any] = getattr(gateway_rows, name if which == "statement" else f"{name}_orm")
    return fn


@pytest.mark.parametrize("which", TWINS)
def test_lock_reads_each_machine_with_its_venue_zone_and_active_link(
    which: str, an10_venue: Venue, pool_operator: User, link: LinkGroup, slot_pool: Pool
) -> None:
    linked, alone, left, dormant = (register(an10_venue, pool_operator)[0] for _ in range(4))
    links.join_link(group=link, machine=linked, actor=pool_operator)
    links.join_link(group=link, machine=left, actor=pool_operator)
    links.leave_link(group=link, machine=left, actor=pool_operator)
    other = make_machine_pool(an10_venue, pool_operator, code="SLOT-OFF")
    off = links.create_link_group(
        venue=an10_venue,
        code="L2",
        name="Isla 2",
        pool=other,
        same_type_and_denomination=None,
        actor=pool_operator,
    )
    links.join_link(group=off, machine=dormant, actor=pool_operator)
    Pool.objects.filter(pk=other.pk).update(active=False)  # a link to an inactive pool is no link
    ids = [dormant.pk, alone.pk, linked.pk, left.pk]
    locked = twin("lock_machines", which)(ids)
    assert list(locked) == sorted(ids)
    links_of = {
        pk: (m.venue_time_zone, m.link_group_id, m.link_pool_id, m.asset_number, m.last_seq)
        for pk, m in locked.items()
    }
    zone = an10_venue.time_zone
    assert links_of == {
        linked.pk: (zone, link.pk, slot_pool.pk, linked.asset_number, 0),
        alone.pk: (zone, None, None, alone.asset_number, 0),
        left.pk: (zone, None, None, left.asset_number, 0),
        dormant.pk: (zone, None, None, dormant.asset_number, 0),
    }
    assert twin("lock_machines", which)([999_999]) == {}


@pytest.mark.parametrize("which", TWINS)
def test_insert_plays_writes_every_column(which: str, an10_venue: Venue, pool_operator: User) -> None:
    m, _ = register(an10_venue, pool_operator)
    at = timezone.now()
    plays = [
        Play(machine=m, seq=1, game_id="g-1", bet=D("0.20"), win=D("0.00"), played_at=None, received_at=at),
        Play(
            machine=m,
            seq=2,
            game_id="g-2",
            bet=D("999999999999.99"),
            win=D("12.34"),
            played_at=at,
            received_at=at,
        ),
    ]
    twin("insert_plays", which)(plays)
    twin("insert_plays", which)([])
    stored = Play.objects.filter(machine=m).order_by("seq")
    assert list(stored.values_list("seq", "game_id", "bet", "win", "played_at", "received_at")) == [
        (1, "g-1", D("0.20"), D("0.00"), None, at),
        (2, "g-2", D("999999999999.99"), D("12.34"), at, at),
    ]


@pytest.mark.parametrize("which", TWINS)
def test_update_machines_writes_what_the_batch_changed(
    which: str, an10_venue: Venue, pool_operator: User
) -> None:
    first, second, untouched = (register(an10_venue, pool_operator)[0] for _ in range(3))
    at = timezone.now()
    first.last_seq, first.last_seen_at, first.plays_day, first.plays_today, first.last_play_at = (
        7,
        at,
        None,
        0,
        None,
    )
    second.last_seq, second.last_seen_at, second.plays_day = 3, at, date(2026, 3, 1)
    second.plays_today, second.last_play_at = 2, at - timedelta(seconds=5)
    second.state, second.lock_reason = MachineState.LOCKED, LockReason.HAND_PAY
    twin("update_machines", which)([first, second])
    twin("update_machines", which)([])
    fields = (
        "last_seq",
        "last_seen_at",
        "online",
        "state",
        "lock_reason",
        "plays_day",
        "plays_today",
        "last_play_at",
    )
    rows = {row[0]: row[1:] for row in Machine.objects.values_list("pk", *fields)}
    assert rows[first.pk] == (7, at, True, MachineState.IN_SERVICE, "", None, 0, None)
    assert rows[second.pk] == (
        3,
        at,
        True,
        MachineState.LOCKED,
        LockReason.HAND_PAY,
        date(2026, 3, 1),
        2,
        at - timedelta(seconds=5),
    )
    assert rows[untouched.pk][:3] == (0, None, False)


@pytest.mark.parametrize("which", TWINS)
def test_mark_heard_moves_only_rows_last_seen_before_the_stale_mark(
    which: str, an10_venue: Venue, pool_operator: User
) -> None:
    stale, fresh, never, other = (register(an10_venue, pool_operator)[0] for _ in range(4))
    now = timezone.now()
    Machine.objects.filter(pk__in=[stale.pk, other.pk]).update(last_seen_at=now - timedelta(seconds=3))
    Machine.objects.filter(pk=fresh.pk).update(last_seen_at=now - timedelta(milliseconds=200))
    twin("mark_heard", which)([stale.pk, fresh.pk, never.pk], now, now - timedelta(seconds=1))
    seen = dict(Machine.objects.values_list("pk", "last_seen_at"))
    assert seen == {
        stale.pk: now,
        fresh.pk: now - timedelta(milliseconds=200),
        never.pk: None,  # never seen: left to the link watch
        other.pk: now - timedelta(seconds=3),
    }
