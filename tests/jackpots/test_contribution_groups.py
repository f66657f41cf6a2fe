"""Group commit of contributions (halls.group_commit + contributions.contribute outside a transaction), on
PostgreSQL with real threads and connections: contributions written in groups are exactly the
contributions written one by one (the same rows and splits to the micro-unit, the same meters after a
fold, the balancing identity), whatever the bets, rates and levels; a bad contribution in a group gets
its own refusal and loses none of the others; a retried key is a no-op; a contribution inside a caller's
transaction stays in it."""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable, Sequence
from decimal import Decimal
from typing import Any

import pytest
from django.db import transaction
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from halls.errors import Conflict, InvalidInput
from halls.group_commit import GroupCommit
from halls.models import Jurisdiction, Venue
from halls.money import split_contribution
from jackpots.models import Contribution, Pool, PoolLevel
from jackpots.services import contributions, folding, pools, reports
from jackpots.services.contributions import ContributionReceipt
from jackpots.services.pools import LevelSpec
from jackpots.sources import PoolSource
from tests.threads import in_threads

pytestmark = pytest.mark.django_db(transaction=True)

_runs = itertools.count(1)
TABLES = 4

money = st.decimals(min_value=Decimal("0.01"), max_value=Decimal("9999.99"), places=2)
rates = st.decimals(min_value=Decimal("0"), max_value=Decimal("0.5"), places=6)


def make_pool(levels: Sequence[LevelSpec]) -> Pool:
    run = next(_runs)
    code = f"GRP-{run}"
    venue = Venue.objects.create(name=code, licence_number=code, jurisdiction=Jurisdiction.AN10)
    pool = pools.create_pool(
        name=code,
        code=code,
        jurisdiction=Jurisdiction.AN10,
        authorisation_ref="A",
        rule_pack="",  # a pool only award_level pays: any levels, any seeds
        venue=venue,
        levels=list(levels),
        carousel_bet=None,
        actor="test",
    )
    for table in range(1, TABLES + 1):
        pools.add_member(pool=pool, source_type="table", source_id=str(table), venue=venue, actor="test")
    return pool


def split_of(pool: Pool) -> dict[str, list[tuple[Decimal, Decimal, Decimal, Decimal]]]:
    """Key (without the pool's prefix) -> per level (by position): bet, meter, reserve and house parts."""
    found: dict[str, list[tuple[Decimal, Decimal, Decimal, Decimal]]] = {}
    query = Contribution.objects.filter(pool=pool).order_by("level__position")
    for row in query.values_list("idempotency_key", "bet", "to_meter", "to_reserve", "house"):
        key, bet, meter, reserve, house = row
        found.setdefault(key, []).append((bet, meter, reserve, house))
    return found


def give(pool: Pool, bet: Decimal, n: int, *, actor: str = "t") -> ContributionReceipt:
    return contributions.contribute(
        pool=pool.pk,
        source=PoolSource.of("table", n % TABLES + 1).at("seat", n % 7 + 1),
        bet=bet,
        idempotency_key=f"k-{n}",
        actor=actor,
    )


def level_specs(draw_rates: Sequence[tuple[Decimal, Decimal]]) -> list[LevelSpec]:
    return [
        LevelSpec(f"L{i}", Decimal("1000") * (i + 1), rate, reserve)
        for i, (rate, reserve) in enumerate(draw_rates)
    ]


@settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    bets=st.lists(money, min_size=1, max_size=40),
    level_rates=st.lists(st.tuples(rates, rates), min_size=1, max_size=3),
    threads=st.integers(min_value=2, max_value=8),
)
def test_grouped_contributions_equal_one_by_one_to_the_micro_unit(
    bets: list[Decimal], level_rates: list[tuple[Decimal, Decimal]], threads: int
) -> None:
    specs = level_specs(level_rates)
    alone, grouped = make_pool(specs), make_pool(specs)
    group = contributions.group_commit()
    groups_before, items_before = group.groups, group.items

    # One by one: each in its own transaction (inside a transaction the group commit is not used).
    answered_alone = []
    for n, bet in enumerate(bets):
        with transaction.atomic():
            answered_alone.append(give(alone, bet, n))
    assert (group.groups, group.items) == (groups_before, items_before)

    # Grouped: the same contributions from concurrent threads, outside any transaction.
    answered: dict[int, ContributionReceipt] = {}

    def client(first: int) -> Callable[[], None]:
        def go() -> None:
            for n in range(first, len(bets), threads):
                answered[n] = give(grouped, bets[n], n)

        return go

    assert in_threads([client(t) for t in range(threads)]) == []
    assert group.items - items_before == len(bets)  # every one went through the group commit

    assert split_of(alone) == split_of(grouped)
    for n, bet in enumerate(bets):
        receipt = answered[n]
        assert not receipt.replayed
        assert receipt.bet == bet
        assert [(line.to_meter, line.to_reserve, line.house) for line in receipt.lines] == [
            (line.to_meter, line.to_reserve, line.house) for line in answered_alone[n].lines
        ]
        assert [(line.to_meter, line.to_reserve, line.house) for line in receipt.lines] == [
            split_contribution(bet, rate, reserve) for rate, reserve in level_rates
        ]
    folding.fold(alone.pk)
    folding.fold(grouped.pk)
    meters_alone = list(PoolLevel.objects.filter(pool=alone).order_by("position").values_list("amount"))
    meters = list(PoolLevel.objects.filter(pool=grouped).order_by("position").values_list("amount"))
    assert meters == meters_alone
    seeds = [spec.seed for spec in specs]
    shares = [sum((r.lines[i].to_meter for r in answered.values()), Decimal(0)) for i in range(len(specs))]
    assert [m for (m,) in meters] == [seed + share for seed, share in zip(seeds, shares, strict=True)]
    assert reports.balance(alone).holds
    assert reports.balance(grouped).holds


def test_concurrent_callers_share_transactions() -> None:
    """32 callers at once: far fewer commits than contributions, each caller answered its own receipt."""
    pool = make_pool(level_specs([(Decimal("0.723457"), Decimal("0.051234"))]))
    group = contributions.group_commit()
    groups_before, items_before = group.groups, group.items
    per_thread = 20
    answered: dict[int, ContributionReceipt] = {}

    def client(t: int) -> Callable[[], None]:
        def go() -> None:
            for i in range(per_thread):
                n = t * per_thread + i
                answered[n] = give(pool, Decimal("1.37"), n, actor=f"table-{t}")

        return go

    assert in_threads([client(t) for t in range(32)]) == []
    items, groups = group.items - items_before, group.groups - groups_before
    assert items == 32 * per_thread
    assert groups < items / 2  # grouped: the 32 callers' contributions share commits
    rows = {r.idempotency_key: r for r in Contribution.objects.filter(pool=pool)}
    assert len(rows) == items
    for n, receipt in answered.items():
        row = rows[f"k-{n}"]
        assert receipt.lines[0].contribution_id == row.pk
        assert row.actor == f"table-{n // per_thread}"  # each caller's own actor, not the group's
        assert row.source == f"table:{n % TABLES + 1}/seat:{n % 7 + 1}"
    folding.fold(pool.pk)
    level = PoolLevel.objects.get(pool=pool)
    assert level.amount == Decimal("1000") + sum((r.to_meter for r in answered.values()), Decimal(0))
    assert reports.balance(pool).holds


def test_callers_on_several_pools_are_answered_from_one_group() -> None:
    first = make_pool(level_specs([(Decimal("0.5"), Decimal("0.1"))]))
    second = make_pool(level_specs([(Decimal("0.2"), Decimal("0")), (Decimal("0.1"), Decimal("0.05"))]))
    answered: dict[tuple[int, int], ContributionReceipt] = {}

    def client(t: int) -> Callable[[], None]:
        def go() -> None:
            for i in range(10):
                pool = (first, second)[(t + i) % 2]
                answered[(pool.pk, t * 10 + i)] = give(pool, Decimal("2.50"), t * 10 + i)

        return go

    assert in_threads([client(t) for t in range(12)]) == []
    for (pool_id, n), receipt in answered.items():
        assert receipt.pool_id == pool_id
        stored = Contribution.objects.filter(pool_id=pool_id, idempotency_key=f"k-{n}")
        assert sorted(line.contribution_id for line in receipt.lines) == sorted(r.pk for r in stored)
    assert Contribution.objects.filter(pool=first).count() == 60
    assert Contribution.objects.filter(pool=second).count() == 2 * 60


def request(pool: Pool, bet: str, n: int, source: PoolSource | None = None) -> contributions._Request:
    source = source or PoolSource.of("table", n % TABLES + 1).at("seat", n % 7 + 1)  # as give() names it
    return contributions._Request(pool.pk, f"k-{n}", (str(source), Decimal(bet), source.kind, source.id, "t"))


def test_a_failing_member_of_a_group_gets_its_own_refusal_and_loses_no_other() -> None:
    pool = make_pool(level_specs([(Decimal("0.5"), Decimal("0.1"))]))
    closed = make_pool(level_specs([(Decimal("0.5"), Decimal("0.1"))]))
    Pool.objects.filter(pk=closed.pk).update(active=False)
    give(pool, Decimal("3.00"), 900)  # written before: the group's copy with another bet is refused
    group = [
        request(pool, "1.00", 1),
        request(pool, "2.00", 2, source=PoolSource.of("table", 99).at("seat", 1)),  # not a member
        request(pool, "4.00", 900),  # its key was used for a 3.00 bet
        request(closed, "1.00", 3),  # a closed pool
        request(pool, "5.00", 4),
        request(pool, "5.00", 4),  # the same contribution twice in one group: one row, then a replay
    ]
    answers = contributions._write_group(group)
    assert [type(a) for a in answers] == [
        ContributionReceipt,
        InvalidInput,
        Conflict,
        Conflict,
        ContributionReceipt,
        ContributionReceipt,
    ]
    assert answers[1].code == "source_not_member"  # type: ignore[union-attr]
    assert answers[2].code == "idempotency_key_reused"  # type: ignore[union-attr]
    assert answers[3].code == "pool_inactive"  # type: ignore[union-attr]
    ok = [a for a in answers if isinstance(a, ContributionReceipt)]
    assert [a.replayed for a in ok] == [False, False, True]
    assert ok[1].lines == ok[2].lines
    assert sorted(Contribution.objects.filter(pool=pool).values_list("idempotency_key", "bet")) == [
        ("k-1", Decimal("1.00")),
        ("k-4", Decimal("5.00")),
        ("k-900", Decimal("3.00")),
    ]
    assert not Contribution.objects.filter(pool=closed).exists()


def test_a_key_twice_in_a_group_with_other_bets_is_answered_as_one_by_one() -> None:
    pool = make_pool(level_specs([(Decimal("0.5"), Decimal("0.1"))]))
    other = make_pool(level_specs([(Decimal("0.3"), Decimal("0"))]))
    answers = contributions._write_group(
        [
            request(
                pool, "1.00", 1, source=PoolSource.of("table", 99).at("seat", 1)
            ),  # refused: not a member
            request(other, "2.00", 5),
            request(pool, "2.00", 1),  # the same key, another bet: written, as it would be one by one
            request(pool, "3.00", 1),  # and now that key is taken with 2.00
            request(other, "2.00", 5),  # a replay on the other pool
        ]
    )
    assert isinstance(answers[0], InvalidInput)
    assert isinstance(answers[1], ContributionReceipt) and not answers[1].replayed
    assert isinstance(answers[2], ContributionReceipt) and answers[2].bet == Decimal("2.00")
    assert isinstance(answers[3], Conflict) and answers[3].code == "idempotency_key_reused"
    assert isinstance(answers[4], ContributionReceipt) and answers[4].replayed
    assert list(Contribution.objects.filter(pool=pool).values_list("bet", flat=True)) == [Decimal("2.00")]
    assert Contribution.objects.filter(pool=other).count() == 1


def test_a_group_the_database_refuses_is_written_one_by_one(monkeypatch: pytest.MonkeyPatch) -> None:
    from django.db import OperationalError

    first = make_pool(level_specs([(Decimal("0.5"), Decimal("0.1"))]))
    second = make_pool(level_specs([(Decimal("0.3"), Decimal("0"))]))
    real = contributions._insert_batch
    calls: list[int] = []

    def second_pool_fails_once(pool_id: int, checked: Any) -> Any:
        calls.append(pool_id)
        if pool_id == second.pk and calls.count(pool_id) == 1:
            raise OperationalError("deadlock detected")
        return real(pool_id, checked)

    monkeypatch.setattr(contributions, "_insert_batch", second_pool_fails_once)
    answers = contributions._write_group([request(first, "1.00", 1), request(second, "2.00", 2)])
    assert all(isinstance(a, ContributionReceipt) and not a.replayed for a in answers)
    # The group's transaction rolled back the first pool's row too; one by one wrote each once.
    assert Contribution.objects.filter(pool=first).count() == 1
    assert Contribution.objects.filter(pool=second).count() == 1


def test_a_group_without_failures_answers_duplicates_as_replays() -> None:
    pool = make_pool(level_specs([(Decimal("0.5"), Decimal("0.1"))]))
    first = give(pool, Decimal("1.00"), 1)
    answers = contributions._write_group(
        [request(pool, "1.00", 1), request(pool, "2.00", 2), request(pool, "2.00", 2)]
    )
    assert all(isinstance(a, ContributionReceipt) for a in answers)
    receipts = [a for a in answers if isinstance(a, ContributionReceipt)]
    assert [r.replayed for r in receipts] == [True, False, True]
    assert receipts[0].lines == first.lines
    assert Contribution.objects.filter(pool=pool).count() == 2


def test_concurrent_callers_with_a_bad_one_each_get_their_own_answer() -> None:
    pool = make_pool(level_specs([(Decimal("0.723457"), Decimal("0.051234"))]))
    refused: list[BaseException] = []
    answered: dict[int, ContributionReceipt] = {}

    def client(t: int) -> Callable[[], None]:
        def go() -> None:
            for i in range(15):
                n = t * 100 + i
                if t == 0 and i % 3 == 0:  # thread 0 sometimes bets from a table outside the pool
                    try:
                        contributions.contribute(
                            pool=pool.pk,
                            source=PoolSource.of("table", 77).at("seat", 1),
                            bet=Decimal("1"),
                            idempotency_key="x",
                            actor="t",
                        )
                    except InvalidInput as exc:
                        refused.append(exc)
                    continue
                answered[n] = give(pool, Decimal("0.50") * (i + 1), n)
                # a device retry at once: a no-op answering as the first
                again = give(pool, Decimal("0.50") * (i + 1), n)
                assert again.replayed and again.lines == answered[n].lines

        return go

    assert in_threads([client(t) for t in range(10)]) == []
    assert len(refused) == 5 and {exc.code for exc in refused} == {"source_not_member"}  # type: ignore[attr-defined]
    stored = Contribution.objects.filter(pool=pool)
    assert sorted(stored.values_list("idempotency_key", flat=True)) == sorted(f"k-{n}" for n in answered)
    folding.fold(pool.pk)
    level = PoolLevel.objects.get(pool=pool)
    assert level.amount == Decimal("1000") + sum((r.to_meter for r in answered.values()), Decimal(0))
    assert reports.balance(pool).holds


def test_inside_a_transaction_the_contribution_is_the_callers() -> None:
    pool = make_pool(level_specs([(Decimal("0.5"), Decimal("0.1"))]))
    group = contributions.group_commit()
    before = group.items

    class Abandon(Exception):
        pass

    def abandoned() -> None:
        with transaction.atomic():
            give(pool, Decimal("1.00"), 1)
            raise Abandon

    with pytest.raises(Abandon):
        abandoned()
    assert group.items == before
    assert not Contribution.objects.filter(pool=pool).exists()  # rolled back with the caller


# --- the group commit itself (no database) ---------------------------------------------------------------


def test_every_caller_gets_its_own_answer_and_groups_hold_at_most_size() -> None:
    seen: list[int] = []

    def write_many(items: Sequence[int]) -> list[int | BaseException]:
        seen.append(len(items))
        time.sleep(0.005)  # a commit: callers arriving meanwhile gather into the next group
        return [ValueError(i) if i % 5 == 0 else i * 10 for i in items]

    group: GroupCommit[int, int] = GroupCommit(write_many, size=4, wait=0.005, runners=2)
    results: dict[int, object] = {}
    start = threading.Barrier(40)

    def caller(i: int) -> None:
        start.wait()
        try:
            results[i] = group.submit(i)
        except ValueError as exc:
            results[i] = exc

    threads = [threading.Thread(target=caller, args=(i,)) for i in range(1, 41)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=10)
    assert all(not t.is_alive() for t in threads)
    for i in range(1, 41):
        if i % 5 == 0:
            error = results[i]
            assert isinstance(error, ValueError) and error.args == (i,)
        else:
            assert results[i] == i * 10
    assert sum(seen) == 40 and max(seen) <= 4 and len(seen) < 40


def test_a_group_whose_writer_fails_answers_every_caller_with_the_failure() -> None:
    def write_many(items: Sequence[int]) -> list[int | BaseException]:
        raise RuntimeError("database gone")

    group: GroupCommit[int, int] = GroupCommit(write_many, size=8, wait=0.01, runners=1)
    errors: list[BaseException] = []

    def caller(i: int) -> None:
        try:
            group.submit(i)
        except RuntimeError as exc:
            errors.append(exc)

    threads = [threading.Thread(target=caller, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=10)
    assert len(errors) == 6 and all(str(e) == "database gone" for e in errors)
    assert group._writing == 0 and not group._pending and not group._gathering


def test_a_lone_caller_waits_at_most_the_window() -> None:
    group: GroupCommit[int, int] = GroupCommit(lambda items: list(items), size=100, wait=0.05, runners=1)
    t0 = time.monotonic()
    assert group.submit(7) == 7
    assert time.monotonic() - t0 < 1.0


# --- several pools in one statement (a game's program funding) -------------------------------------------


def test_contributions_to_several_pools_in_one_statement_equal_one_by_one() -> None:
    specs = [
        level_specs([(Decimal("0.723457"), Decimal("0.051234"))]),
        level_specs([(Decimal("0.2"), Decimal("0")), (Decimal("0.1"), Decimal("0.05"))]),
        level_specs([(Decimal("0.333333"), Decimal("0.111111"))]),
    ]
    alone = [make_pool(s) for s in specs]
    together = [make_pool(s) for s in specs]
    bets = [Decimal("1234.57"), Decimal("0.01"), Decimal("77.77")]
    with transaction.atomic():
        expected = [give(pool, bet, n) for n, (pool, bet) in enumerate(zip(alone, bets, strict=True))]

    def items(n0: int = 0) -> list[tuple[int, contributions.ContributionItem]]:
        return [
            (
                pool.pk,
                contributions.ContributionItem(
                    PoolSource.of("table", n % TABLES + 1).at("seat", n % 7 + 1), bet, f"k-{n}"
                ),
            )
            for n, (pool, bet) in enumerate(zip(together, bets, strict=True), start=n0)
        ]

    with transaction.atomic():
        receipts = contributions.contribute_pools(items=[*items(), items()[0]], actor="t")
    assert [r.pool_id for r in receipts] == [p.pk for p in together] + [together[0].pk]
    assert [r.replayed for r in receipts] == [False, False, False, True]  # the same one twice: a replay
    for receipt, one in zip(receipts, expected, strict=False):
        assert [(x.to_meter, x.to_reserve, x.house) for x in receipt.lines] == [
            (x.to_meter, x.to_reserve, x.house) for x in one.lines
        ]
    for pool, one_pool in zip(together, alone, strict=True):
        assert split_of(pool) == split_of(one_pool)
    with transaction.atomic():
        again = contributions.contribute_pools(items=items(), actor="t")  # a retry: nothing written
    assert all(r.replayed for r in again) and Contribution.objects.filter(pool__in=together).count() == 4


def test_one_refused_pool_refuses_the_whole_statement() -> None:
    open_pool = make_pool(level_specs([(Decimal("0.5"), Decimal("0.1"))]))
    closed = make_pool(level_specs([(Decimal("0.5"), Decimal("0.1"))]))
    Pool.objects.filter(pk=closed.pk).update(active=False)
    item = contributions.ContributionItem(PoolSource.of("table", 1).at("seat", 1), Decimal("10.00"), "k-1")
    with pytest.raises(Conflict) as refused, transaction.atomic():
        contributions.contribute_pools(items=[(open_pool.pk, item), (closed.pk, item)], actor="t")
    assert refused.value.code == "pool_inactive"
    assert not Contribution.objects.filter(pool__in=[open_pool, closed]).exists()
