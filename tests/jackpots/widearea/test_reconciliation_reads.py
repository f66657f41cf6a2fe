"""Who reads the wide-area reconciliations, in a constant number of queries (issue 31): the operator of
many venues asks one query however many venues they run; an inspector's read is still marked as theirs
inside a read (halls.access.reading: then nothing may be written), and not outside one. And each shown
difference's delta is computed once, whatever shows it (the page's table, the API, the feed)."""

from __future__ import annotations

import itertools
from decimal import Decimal
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from halls import access, money
from halls.models import Jurisdiction, Role, StaffRole, Venue
from jackpots.widearea.models import WideAreaReconciliation
from jackpots.widearea.services import reconciliations
from tests.access_support import HOLDINGS
from tests.api_support import api_client
from tests.conftest import make_user
from tests.jackpots.widearea.support import Net, build, plays, sync
from tests.jackpots.widearea.test_reconciliation import a_stray_ledger_row, reconcile

pytestmark = pytest.mark.django_db
D = Decimal


def venues(count: int, prefix: str) -> list[Venue]:
    return [
        Venue.objects.create(
            name=f"Sala {prefix}{n}", licence_number=f"{prefix}-{n}", jurisdiction=Jurisdiction.AN10
        )
        for n in range(count)
    ]


def queries(fn: Any, *args: Any) -> tuple[Any, int]:
    with CaptureQueriesContext(connection) as captured:
        found = fn(*args)
    return found, len(captured.captured_queries)


@pytest.mark.parametrize("role", [Role.OPERATOR, Role.INSPECTOR])
def test_the_readers_venues_cost_one_query_however_many_they_hold(role: str) -> None:
    few, many = make_user("few"), make_user("many")
    for user, held in ((few, venues(2, "F")), (many, venues(40, "M"))):
        StaffRole.objects.bulk_create([StaffRole(user=user, venue=v, role=role) for v in held])
    with access.reading():
        found_few, asked_few = queries(reconciliations.reader_venue_ids, few)
        found_many, asked_many = queries(reconciliations.reader_venue_ids, many)
    assert (len(found_few), len(found_many)) == (2, 40)
    assert asked_few == asked_many == 1


def test_the_list_through_the_api_does_not_ask_more_with_more_venues() -> None:
    """The operator's list: as many queries for an operator of 40 venues as for one of 2."""
    asked = []
    for count, prefix in ((2, "F"), (40, "M")):
        user = make_user(f"operator-{prefix}")
        StaffRole.objects.bulk_create(
            [StaffRole(user=user, venue=v, role=Role.OPERATOR) for v in venues(count, prefix)]
        )
        client = api_client(user)
        client.get("/api/widearea/reconciliations/")  # the token's first use out of the way
        with CaptureQueriesContext(connection) as captured:
            answer = client.get("/api/widearea/reconciliations/")
        assert answer.status_code == 200
        asked.append(len(captured.captured_queries))
    assert asked[0] == asked[1], asked


def one_by_one(user: Any) -> list[int]:
    """The rule as it was written: `roles_in` asked venue by venue (a query each)."""
    return [v for v in access.venue_ids_for(user) if Role.INSPECTOR in access.roles_in(user, v)]


def test_the_same_venues_and_the_same_inspectors_mark_as_roles_in_venue_by_venue() -> None:
    a, b = venues(2, "R")
    user = make_user("reader")
    for first, second in itertools.product(HOLDINGS, repeat=2):
        StaffRole.objects.filter(user=user).delete()
        StaffRole.objects.bulk_create(
            [StaffRole(user=user, venue=v, role=r) for v, held in ((a, first), (b, second)) for r in held]
        )
        for inside in (True, False):
            seen = []
            for read in (one_by_one, reconciliations.reader_venue_ids):
                if inside:
                    with access.reading():
                        seen.append((sorted(read(user)), access.inspector_reading()))
                else:
                    seen.append((sorted(read(user)), access.inspector_reading()))
            assert seen[0] == seen[1], (first, second, inside, seen)


def test_an_inspectors_read_is_marked_inside_a_read_only_and_never_the_operators() -> None:
    a, b, c = venues(3, "I")
    inspector = make_user("inspector-ab")
    StaffRole.objects.bulk_create([StaffRole(user=inspector, venue=v, role=Role.INSPECTOR) for v in (a, b)])
    StaffRole.objects.create(user=inspector, venue=c, role=Role.CASHIER)
    with access.reading():
        assert sorted(reconciliations.reader_venue_ids(inspector)) == [a.pk, b.pk]
        assert access.inspector_reading()  # nothing may be written in this request now
    assert sorted(reconciliations.reader_venue_ids(inspector)) == [a.pk, b.pk]  # their role, outside a read
    assert not access.inspector_reading()
    operator = make_user("operator-abc")
    StaffRole.objects.bulk_create([StaffRole(user=operator, venue=v, role=Role.OPERATOR) for v in (a, b, c)])
    StaffRole.objects.create(user=operator, venue=a, role=Role.INSPECTOR)
    with access.reading():
        assert sorted(reconciliations.reader_venue_ids(operator)) == [a.pk, b.pk, c.pk]
        assert not access.inspector_reading()  # the operator's own rights: no inspector's read
    cashier = make_user("cashier-c", c, Role.CASHIER)
    with access.reading():
        assert reconciliations.reader_venue_ids(cashier) == []
        assert not access.inspector_reading()


@pytest.fixture
def net() -> Net:
    return build()


class Subtractions:
    """The exact context, counting its subtractions (a delta is one)."""

    def __init__(self, context: Any) -> None:
        self.context, self.count = context, 0

    def subtract(self, a: Decimal, b: Decimal) -> Decimal:
        self.count += 1
        result: Decimal = self.context.subtract(a, b)
        return result

    def __getattr__(self, name: str) -> Any:
        return getattr(self.context, name)


def test_each_delta_is_computed_once_and_shown_and_answered_alike(net: Net, monkeypatch: Any) -> None:
    plays(net.machines["a"], 1, ["1.00"])
    sync(net)
    a_stray_ledger_row(net)
    reconcile(net, "a")
    row = WideAreaReconciliation.objects.get(side="central", venue=net.a)
    item = reconciliations.of(row)
    counting = Subtractions(money.EXACT)
    monkeypatch.setattr(money, "EXACT", counting)
    shown, payload, fed = item.shown, item.as_payload(), item.as_feed()
    assert len(item.differences) == 3
    assert counting.count == 3  # once each, for the page's table, the API's answer and the feed's message
    for d, answered, told in zip(shown, payload["differences"], fed["differences"], strict=True):
        assert d.delta == d.venue - d.central
        assert D(answered["delta"]) == D(told["delta"]) == d.delta
        assert (answered["check"], answered["field"]) == (d.kind, d.field)
