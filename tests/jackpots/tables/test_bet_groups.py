"""register_bets in groups (jackpots.tables.services.bets), on PostgreSQL with real threads and connections:
the calls of concurrent tables written in groups are exactly the calls written one by one (the same
answers, seat rows, audit entries and contributions to the micro-unit, the same meter after a fold, the
balancing identity), whatever the bets, rates and refused calls; a refused call gets its own answer and
loses none of the others; a group the engine or the database refuses is written again one by one; a
retried request is a no-op; inside a caller's transaction the call stays in it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import pytest
from django.db import OperationalError, connection, transaction
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from halls import events
from halls.errors import Conflict, DomainError
from halls.models import AuditEntry
from halls.services import audit
from jackpots.models import Contribution, Pool, PoolLevel
from jackpots.services import contributions, folding, reports
from jackpots.tables import rules
from jackpots.tables.models import Hand, SeatBet
from jackpots.tables.services import bets as bet_service
from jackpots.tables.services import hands
from tests.api_support import api_client
from tests.jackpots.tables.conftest import METER, Casino, make_pool, make_table
from tests.threads import in_threads

pytestmark = pytest.mark.django_db(transaction=True)

D = Decimal
PACK = "EU_PSD_JACKPOT"  # pool bets of any amount up to half the table minimum (no stipulated bet)
MINIMUM = D("10.00")  # so the cap is 5.00


@dataclass(frozen=True)
class Call:
    """One register_bets request of a table: its seats' (seat, pool bet) and initial bet."""

    seats: tuple[tuple[int, Decimal], ...]
    initial: Decimal = MINIMUM


class Floor:
    """A casino with one pool of the given rates and `n` tables on it, each with an open hand."""

    def __init__(self, n: int, rate: Decimal, reserve: Decimal) -> None:
        self.house = Casino("EU")
        self.pool = make_pool(
            self.house.venue, self.house.operator, PACK, bet=None, rate=rate, reserve_rate=reserve
        )
        self.tables = [
            make_table(self.house.venue, self.house.operator, PACK, pool=self.pool, minimum=MINIMUM, seats=7)
            for _ in range(n)
        ]
        self.hands = [hands.open_hand(table=t, actor=self.house.croupier) for t in self.tables]

    def send(self, t: int, call: Call) -> str:
        """The call at table t: "ok" or the refusal's code."""
        seat_bets = [rules.SeatBetInput(seat, call.initial, bet) for seat, bet in call.seats]
        try:
            hands.register_bets(hand=self.hands[t], actor=self.house.croupier, bets=seat_bets)
        except DomainError as exc:
            return exc.code
        return "ok"

    def index(self, table_id: int) -> int:
        return [t.pk for t in self.tables].index(table_id)

    def seat_rows(self) -> list[tuple[int, int, Decimal, Decimal, str]]:
        found = []
        for row in SeatBet.objects.filter(hand__in=self.hands):
            t = self.index(row.hand.table_id)
            key = row.contribution_key.replace(f"table:{row.hand.table_id}:hand:{row.hand_id}", f"T{t}")
            found.append((t, row.seat, row.initial_bet, row.pool_bet, key))
        return sorted(found)

    def contributions(self) -> list[tuple[int, str, Decimal, Decimal, Decimal, Decimal, bool]]:
        found = []
        for row in Contribution.objects.filter(pool=self.pool):
            table_id = int(row.source.split("/")[0].split(":")[1])
            where = row.source.split("/", 1)[1]
            found.append(
                (
                    self.index(table_id),
                    where,
                    row.bet,
                    row.to_meter,
                    row.to_reserve,
                    row.house,
                    row.actor == self.house.croupier.username,
                )
            )
        return sorted(found)

    def audit(self) -> list[tuple[int, int]]:
        """(table, seats registered) of every bets entry."""
        found = []
        for entry in AuditEntry.objects.filter(venue=self.house.venue, action="hand.bets_registered"):
            found.append((self.index(entry.data["table"]), len(entry.data.get("bets", []))))
        return sorted(found)

    def streams(self) -> list[int]:
        """Each table's stream: its last event's number."""
        return [events.current_seq(t.stream) for t in self.tables]

    def meter(self) -> Decimal:
        folding.fold(self.pool.pk)
        return PoolLevel.objects.get(pool=self.pool).amount


money = st.decimals(min_value=D("0.01"), max_value=D("5.20"), places=2)  # above 5.00: refused
seat_bets = st.lists(
    st.tuples(st.integers(min_value=1, max_value=8), money),  # seat 8 does not exist: refused
    min_size=1,
    max_size=4,
    unique_by=lambda s: s[0],
)
calls = st.builds(Call, seats=seat_bets.map(tuple))
rates = st.decimals(min_value=D("0"), max_value=D("0.5"), places=6)


@settings(
    max_examples=8,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    plan=st.lists(st.lists(calls, min_size=1, max_size=4), min_size=2, max_size=5),
    rate=rates,
    reserve=rates,
    repeat=st.booleans(),
)
def test_grouped_bets_equal_one_by_one_to_the_micro_unit(
    plan: list[list[Call]], rate: Decimal, reserve: Decimal, repeat: bool
) -> None:
    if repeat:  # each table's first request sent again at the end: a retry (or its refusal again)
        plan = [[*table_calls, table_calls[0]] for table_calls in plan]
    alone, grouped = Floor(len(plan), rate, reserve), Floor(len(plan), rate, reserve)
    group = bet_service.bet_group()
    items_before = group.items

    # One by one: each call in its own transaction (inside a transaction the group is not used).
    answered_alone: dict[tuple[int, int], str] = {}
    for t, table_calls in enumerate(plan):
        for c, call in enumerate(table_calls):
            with transaction.atomic():
                answered_alone[(t, c)] = alone.send(t, call)
    assert group.items == items_before

    # Grouped: a thread per table sends its calls in order, outside any transaction.
    answered: dict[tuple[int, int], str] = {}

    def table_client(t: int) -> Callable[[], None]:
        def go() -> None:
            for c, call in enumerate(plan[t]):
                answered[(t, c)] = grouped.send(t, call)

        return go

    assert in_threads([table_client(t) for t in range(len(plan))]) == []
    assert group.items - items_before == sum(len(p) for p in plan)  # every call went through the group

    assert answered == answered_alone
    assert grouped.seat_rows() == alone.seat_rows()
    assert grouped.contributions() == alone.contributions()
    assert grouped.audit() == alone.audit()
    assert grouped.meter() == alone.meter()
    shares = sum((row[3] for row in grouped.contributions()), D(0))
    assert grouped.meter() == METER + shares
    assert reports.balance(alone.pool).holds
    assert reports.balance(grouped.pool).holds
    assert audit.verify_chain(grouped.house.venue.pk).ok  # the group's entries chained in order
    assert grouped.streams() == alone.streams()


def call_of(
    floor: Floor, t: int, *seats: tuple[int, str], initial: Decimal = MINIMUM
) -> bet_service.BetsCall:
    return bet_service.BetsCall(
        hand_id=floor.hands[t].pk,
        actor=floor.house.croupier,
        bets=tuple(rules.SeatBetInput(seat, initial, D(bet)) for seat, bet in seats),
        total=None,
    )


def test_thirty_two_tables_share_transactions_and_one_refused_loses_nothing(caplog: Any) -> None:
    floor = Floor(32, D("0.723457"), D("0.051234"))
    group = bet_service.bet_group()
    groups_before, items_before = group.groups, group.items
    answered: dict[tuple[int, int], str] = {}

    def table_client(t: int) -> Callable[[], None]:
        def go() -> None:
            for seat in range(1, 4):
                bet = D("6.00") if (t, seat) == (5, 2) else D("1.37")  # one over the cap: refused alone
                answered[(t, seat)] = floor.send(t, Call(((seat, bet),)))
            # a retry of the first request at once: a no-op
            answered[(t, 9)] = floor.send(t, Call(((1, D("1.37")),)))

        return go

    with caplog.at_level("WARNING", logger="hall.jackpots.tables"):
        assert in_threads([table_client(t) for t in range(32)]) == []
    assert not [r for r in caplog.records if "one by one" in r.getMessage()]  # no group fell back
    items, groups = group.items - items_before, group.groups - groups_before
    assert items == 32 * 4 and groups < items / 2  # grouped: the tables' calls share commits
    assert answered.pop((5, 2)) == "pool_bet_over_limit"
    assert set(answered.values()) == {"ok"}
    rows = floor.seat_rows()
    assert len(rows) == 32 * 3 - 1 and (5, 2) not in [(t, seat) for t, seat, *_ in rows]
    assert len(floor.contributions()) == 32 * 3 - 1
    assert floor.audit() == sorted([(t, 1) for t in range(32) for _ in range(3 if t != 5 else 2)])
    shares = sum((row[3] for row in floor.contributions()), D(0))
    assert floor.meter() == METER + shares
    assert reports.balance(floor.pool).holds
    assert audit.verify_chain(floor.house.venue.pk).ok
    # Each table's stream: created, joined its pool, hand opened, then one event per call that wrote
    # (the refused call and the retries write none).
    assert floor.streams() == [6 if t != 5 else 5 for t in range(32)]


def test_a_contribution_the_engine_refuses_sends_the_group_one_by_one(caplog: Any) -> None:
    """A pool closed while a hand was open: the call's checks pass, the engine refuses its money; the
    group rolls back and one by one answers that call its refusal and writes the others."""
    floor = Floor(2, D("0.5"), D("0"))
    other = Floor(1, D("0.5"), D("0"))
    Pool.objects.filter(pk=other.pool.pk).update(active=False)
    calls = [call_of(floor, 0, (1, "1.00")), call_of(other, 0, (1, "2.00")), call_of(floor, 1, (2, "3.00"))]
    with caplog.at_level("WARNING", logger="hall.jackpots.tables"):
        answers = bet_service.write_group(calls)
    assert any("one by one" in r.getMessage() for r in caplog.records)
    assert isinstance(answers[0], Hand) and isinstance(answers[2], Hand)
    assert isinstance(answers[1], Conflict) and answers[1].code == "pool_inactive"
    assert [(t, seat, bet) for t, seat, _, bet, _ in floor.seat_rows()] == [
        (0, 1, D("1.00")),
        (1, 2, D("3.00")),
    ]
    assert len(floor.contributions()) == 2 and floor.audit() == [(0, 1), (1, 1)]
    assert other.seat_rows() == [] and other.contributions() == [] and other.audit() == []


def test_a_group_the_database_refuses_is_written_one_by_one(monkeypatch: pytest.MonkeyPatch) -> None:
    floor = Floor(3, D("0.5"), D("0.1"))
    real = contributions.contribute_answers
    failures: list[int] = []

    def fails_once(**kwargs: Any) -> Any:
        if not failures:
            failures.append(1)
            raise OperationalError("deadlock detected")
        return real(**kwargs)

    monkeypatch.setattr(bet_service, "contribute_answers", fails_once)
    answers = bet_service.write_group([call_of(floor, t, (t + 1, "2.00")) for t in range(3)])
    assert failures and all(isinstance(a, Hand) for a in answers)
    # The group's transaction rolled back its rows; one by one wrote each call once.
    assert [(t, seat) for t, seat, *_ in floor.seat_rows()] == [(0, 1), (1, 2), (2, 3)]
    assert len(floor.contributions()) == 3 and floor.audit() == [(0, 1), (1, 1), (2, 1)]


def test_calls_of_one_hand_in_one_group_answer_as_one_after_the_other() -> None:
    floor = Floor(2, D("0.5"), D("0"))
    answers = bet_service.write_group(
        [
            call_of(floor, 1, (1, "1.00"), (2, "2.00")),
            call_of(floor, 0, (1, "1.00")),
            call_of(floor, 1, (1, "1.00"), (2, "2.00")),  # a retry in the same group: nothing written
            call_of(floor, 1, (2, "2.50")),  # the seat has other bets already: refused
            call_of(floor, 1, (3, "5.01"), (4, "1.00")),  # over the cap: refused whole
            call_of(floor, 1, (3, "1.00")),
        ]
    )
    assert [type(a).__name__ for a in answers] == ["Hand", "Hand", "Hand", "Conflict", "InvalidInput", "Hand"]
    assert answers[3].code == "bet_already_registered"  # type: ignore[union-attr]
    assert [(t, seat, bet) for t, seat, _, bet, _ in floor.seat_rows()] == [
        (0, 1, D("1.00")),
        (1, 1, D("1.00")),
        (1, 2, D("2.00")),
        (1, 3, D("1.00")),
    ]
    assert [(t, where, bet) for t, where, bet, *_ in floor.contributions()] == [
        (0, "hand:1/seat:1", D("1.00")),
        (1, "hand:1/seat:1", D("1.00")),
        (1, "hand:1/seat:2", D("2.00")),
        (1, "hand:1/seat:3", D("1.00")),
    ]
    assert floor.audit() == [(0, 1), (1, 1), (1, 2)]


def test_inside_a_transaction_the_call_is_the_callers() -> None:
    floor = Floor(1, D("0.5"), D("0"))
    group = bet_service.bet_group()
    before = group.items

    class Abandon(Exception):
        pass

    def abandoned() -> None:
        with transaction.atomic():
            assert floor.send(0, Call(((1, D("1.00")),))) == "ok"
            raise Abandon

    with pytest.raises(Abandon):
        abandoned()
    assert group.items == before
    assert floor.seat_rows() == [] and floor.contributions() == []


def test_concurrent_api_requests_each_get_their_own_answer() -> None:
    floor = Floor(8, D("0.5"), D("0"))
    client = api_client(floor.house.croupier)
    group = bet_service.bet_group()
    before = group.items
    answered: dict[int, Any] = {}

    def request(t: int) -> Callable[[], None]:
        def go() -> None:
            bet = "9.00" if t == 3 else "1.00"  # table 3's is over the cap
            body = {"bets": [{"seat": 1, "initial_bet": "10.00", "pool_bet": bet}]}
            answered[t] = api_client(floor.house.croupier).post(
                f"/api/hands/{floor.hands[t].pk}/bets/", body, format="json"
            )

        return go

    assert in_threads([request(t) for t in range(8)]) == []
    assert group.items - before == 8
    bad = answered.pop(3)
    assert bad.status_code == 400 and bad.json()["error"]["code"] == "pool_bet_over_limit"
    for answer in answered.values():
        assert answer.status_code == 200, answer.content
        assert [s["seat"] for s in answer.json()["seats"]] == [1]
    # A retried request: the same answer, nothing written.
    count = Contribution.objects.count()
    body = {"bets": [{"seat": 1, "initial_bet": "10.00", "pool_bet": "1.00"}]}
    again = client.post(f"/api/hands/{floor.hands[0].pk}/bets/", body, format="json")
    assert again.status_code == 200 and Contribution.objects.count() == count
    assert len(floor.seat_rows()) == 7


def test_on_sqlite_or_inside_a_transaction_there_is_no_group(monkeypatch: pytest.MonkeyPatch) -> None:
    # PostgreSQL, outside a transaction: grouped; the embedded SQLite never.
    assert bet_service._grouped() is (connection.vendor == "postgresql")
    with transaction.atomic():
        assert not bet_service._grouped()
    monkeypatch.setattr(connection, "vendor", "sqlite")
    assert not bet_service._grouped()  # the embedded demo writes each call inline


def test_a_manual_total_in_a_group_contributes_once() -> None:
    house = Casino("EU")
    pool = make_pool(house.venue, house.operator, "EU_PCD_JACKPOT_PROGRESSIVE_MANUAL", rate=D("0.25"))
    table = make_table(house.venue, house.operator, "EU_PCD_JACKPOT_PROGRESSIVE_MANUAL", pool=pool)
    hand = hands.open_hand(table=table, actor=house.croupier)

    def call(total: str | None, *seats: int) -> bet_service.BetsCall:
        seat_bets = tuple(rules.SeatBetInput(s, MINIMUM, D("1.00")) for s in seats)
        return bet_service.BetsCall(hand.pk, house.croupier, seat_bets, D(total) if total else None)

    answers = bet_service.write_group([call(None, 1, 2), call("2.00"), call("2.00"), call("3.00")])
    assert [type(a).__name__ for a in answers] == ["Hand", "Hand", "Hand", "Conflict"]
    assert list(Contribution.objects.filter(pool=pool).values_list("source", "bet", "to_meter")) == [
        (f"table:{table.pk}/hand:1/total", D("2.00"), D("0.500000"))
    ]
    assert Hand.objects.get(pk=hand.pk).manual_total == D("2.00")
