"""Concurrency on PostgreSQL (real transactions, real connections per thread): many threads contributing
(with retried keys), folding and hitting at once. No lost update, no double write, the identity holds,
and the final meter is exactly the seed plus the sum of every answered contribution minus what was paid."""

from __future__ import annotations

import threading
from collections.abc import Callable
from decimal import Decimal
from typing import Any

import pytest

from halls.models import Jurisdiction, Venue
from jackpots.engine import Winner
from jackpots.models import Award, Contribution, PoolLevel, PoolSettlement
from jackpots.poker import rank_hand
from jackpots.services import awards, contributions, folding, pools, reports
from jackpots.services.pools import LevelSpec
from jackpots.sources import PoolSource
from tests.threads import in_threads

pytestmark = pytest.mark.django_db(transaction=True)

THREADS = 12
PER_THREAD = 60


def make(code: str, *levels: LevelSpec) -> Any:
    venue = Venue.objects.create(name=code, licence_number=code, jurisdiction=Jurisdiction.AN10)
    pool = pools.create_pool(
        name=code,
        code=code,
        jurisdiction=Jurisdiction.AN10,
        authorisation_ref="A",
        rule_pack="AN10_PSD_CARRUSEL",
        venue=venue,
        levels=list(levels)
        or [LevelSpec("Carrusel", Decimal("5000"), Decimal("0.723457"), Decimal("0.051234"))],
        carousel_bet=Decimal("1.00"),
        actor="test",
    )
    for table in range(1, 5):
        pools.add_member(pool=pool, source_type="table", source_id=str(table), venue=venue, actor="test")
    return pool


def test_concurrent_contributions_and_folds_lose_nothing() -> None:
    pool = make("CONC-1")
    answered: list[Decimal] = []
    lock = threading.Lock()
    stop = threading.Event()

    def contributor(n: int) -> Callable[[], None]:
        def go() -> None:
            for i in range(PER_THREAD):
                bet = Decimal(str(round(0.01 + (n * 37 + i * 11) % 500 / 100, 2)))
                receipt = contributions.contribute(
                    pool=pool.pk,
                    source=PoolSource.of("table", n % 4 + 1).at("seat", i % 7),
                    bet=bet,
                    idempotency_key=f"{n}-{i}",
                    actor="t",
                )
                # a device retry of the same play, at once: a no-op answering the same
                again = contributions.contribute(
                    pool=pool.pk,
                    source=PoolSource.of("table", n % 4 + 1).at("seat", i % 7),
                    bet=bet,
                    idempotency_key=f"{n}-{i}",
                    actor="t",
                )
                assert again.replayed and again.lines == receipt.lines
                with lock:
                    answered.append(receipt.to_meter)

        return go

    def folder() -> None:
        while not stop.is_set():
            folding.fold(pool.pk)

    fold_thread = threading.Thread(target=lambda: in_threads([folder]))
    fold_thread.start()
    errors = in_threads([contributor(n) for n in range(THREADS)])
    stop.set()
    fold_thread.join()
    assert errors == []
    folding.fold(pool.pk)
    level = PoolLevel.objects.get(pool=pool)
    assert Contribution.objects.filter(pool=pool).count() == THREADS * PER_THREAD == len(answered)
    assert level.amount == Decimal("5000") + sum(answered, Decimal(0))
    assert level.folded_through == Contribution.objects.filter(pool=pool).latest("id").pk
    assert reports.balance(pool).holds


def test_concurrent_contributions_hits_and_folds_keep_the_identity() -> None:
    pool = make(
        "CONC-2",
        LevelSpec("Grand", Decimal("5000"), Decimal("0.5"), Decimal("0.1"), Decimal("5200"), "next_level"),
        LevelSpec("Minor", Decimal("5000"), Decimal("0.2"), Decimal("0.05"), Decimal("5100")),
    )
    grand, minor = PoolLevel.objects.filter(pool=pool).order_by("position")
    answered: list[Decimal] = []
    lock = threading.Lock()

    def contributor(n: int) -> Callable[[], None]:
        def go() -> None:
            for i in range(PER_THREAD):
                receipt = contributions.contribute(
                    pool=pool.pk,
                    source=PoolSource.of("table", n % 4 + 1),
                    bet=Decimal("2.50"),
                    idempotency_key=f"{n}-{i}",
                    actor="t",
                )
                with lock:
                    answered.append(receipt.to_meter)

        return go

    def hitter(n: int) -> Callable[[], None]:
        def go() -> None:
            for i in range(15):
                if i % 3 == 0:
                    awards.award_level(
                        level=minor,
                        percent=Decimal("10"),
                        winner={"source": f"machine:{n}"},
                        idempotency_key=f"l-{n}-{i}",
                        actor="gw",
                    )
                else:
                    cards = "KS QS JS TS 9S" if i % 3 == 1 else "AS AH AD AC KS"
                    awards.award_hand(
                        pool=pool,
                        winners=[Winner(str(n), rank_hand(cards), False)],
                        idempotency_key=f"h-{n}-{i}",
                        actor="croupier",
                        context={"table": str(n), "hand": str(i)},
                    )

        return go

    def folder() -> None:
        for _ in range(30):
            folding.fold(pool.pk)

    errors = in_threads([*[contributor(n) for n in range(8)], *[hitter(n) for n in range(3)], folder])
    assert errors == []
    folding.fold(pool.pk)
    report = reports.balance(pool)
    assert report.holds, report.as_dict()
    assert PoolSettlement.objects.filter(pool=pool).count() == 45  # every hit recorded
    # Arrival order: each settlement starts from the meter the previous one (or a fold) left.
    for level in (grand, minor):
        level.refresh_from_db()
        assert level.amount >= level.seed
        paid = sum(Award.objects.filter(level=level).values_list("amount", flat=True), Decimal(0))
        assert level.total_paid == paid
    total_in = sum(answered, Decimal(0))
    meters_out = sum((b.awards for b in report.levels), Decimal(0))
    seeds = sum((b.seeds for b in report.levels), Decimal(0))
    to_reserve = sum((b.overflow_to_reserve - b.reserve_to_meter for b in report.levels), Decimal(0))
    assert grand.amount + minor.amount == seeds + total_in - meters_out - to_reserve


def test_the_same_award_key_from_two_threads_pays_once() -> None:
    pool = make("CONC-3")
    results: list[awards.AwardResult] = []

    def settle() -> None:
        results.append(
            awards.award_hand(
                pool=pool,
                winners=[Winner("1", rank_hand("KS QS JS TS 9S"), False)],
                idempotency_key="same",
                actor="c",
            )
        )

    errors = in_threads([settle for _ in range(6)])
    assert errors == []
    assert PoolSettlement.objects.filter(pool=pool).count() == 1
    assert len({r.settlement_id for r in results}) == 1 and sum(not r.replayed for r in results) == 1
