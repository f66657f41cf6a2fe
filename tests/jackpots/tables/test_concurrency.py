"""Several tables of one carrusel playing at once on PostgreSQL: bets contribute while other tables
settle, nothing is lost, hits are served one after the other, and the meter balances exactly."""

from __future__ import annotations

import threading
from decimal import Decimal

import pytest
from django.db import connection
from django.db.models import Sum

from jackpots.models import Award, Contribution
from jackpots.services.readmodels.meters import pool_meter
from jackpots.tables.models import CasinoTable, Hand, HandState, SeatPayout
from tests.jackpots.tables.conftest import METER, Casino, make_pool, make_table, play

D = Decimal
SUITS = "SHDC"


@pytest.mark.django_db(transaction=True)
def test_tables_of_one_carrusel_play_at_once_without_losing_a_cent() -> None:
    house = Casino("AN10")
    pool = make_pool(house.venue, house.operator, "AN10_PSD_CARRUSEL", rate=D("0.5"))
    tables = [make_table(house.venue, house.operator, "AN10_PSD_CARRUSEL", pool=pool) for _ in range(4)]
    errors: list[BaseException] = []
    start = threading.Barrier(len(tables))

    def run(index: int) -> None:
        suit, other = SUITS[index], SUITS[(index + 1) % 4]
        nothing = f"2{suit} 4{suit} 6{suit} 9{suit} J{other}"  # high card: pays nothing
        nothing_either = f"3{suit} 5{suit} 7{suit} T{suit} Q{other}"
        straight_flush = f"K{suit} Q{suit} J{suit} T{suit} 9{suit}"
        high_card = f"2{other} 3{other} 5{other} 8{other} A{suit}"
        try:
            start.wait()
            for _ in range(2):
                play(tables[index], house.croupier, {2: nothing, 3: nothing_either})
            # The last hand: a straight flush at tables 0 and 1.
            play(
                tables[index],
                house.croupier,
                {1: straight_flush if index < 2 else nothing, 2: high_card},
            )
        except BaseException as exc:
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(tables))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not errors, errors
    assert Hand.objects.filter(state=HandState.SETTLED).count() == 12

    contributions = Contribution.objects.filter(pool=pool)
    assert contributions.count() == 4 * (2 * 2 + 2)  # two rounds of 2 seats, then 2 seats
    to_meter = contributions.aggregate(total=Sum("to_meter"))["total"]
    assert to_meter == D("12.000000")
    paid = Award.objects.filter(pool=pool).aggregate(total=Sum("from_meter"))["total"]
    # Two straight flushes (K-high at tables 0 and 1), each 10 % of the meter at its turn, in arrival order.
    hits = list(SeatPayout.objects.filter(category="straight_flush").order_by("award_id"))
    assert len(hits) == 2
    bases = [hit.basis for hit in hits]
    assert None not in bases
    for hit, basis in zip(hits, bases, strict=True):
        assert hit.amount == (D(basis or 0) * D("0.1")).quantize(D("0.01"), rounding="ROUND_DOWN")
    assert D(bases[1] or 0) < D(bases[0] or 0)
    assert pool_meter(pool).levels[0].amount == (METER + to_meter - paid).quantize(
        D("0.01"), rounding="ROUND_DOWN"
    )


@pytest.mark.django_db(transaction=True)
def test_a_carrusel_of_all_the_tables_formed_while_a_table_is_created_counts_that_table() -> None:
    """ML art. 61: the carrusel is formed by ALL the PSD tables. A carrusel formed over the others while a
    new table is being created (its transaction still open) waits for it (the venue's lock), then sees it
    missing and is refused: it never goes on without one of the room's tables."""
    from django.db import transaction

    from halls.errors import InvalidInput
    from jackpots.tables.services import tables as table_services

    house = Casino("ML")
    pack = "ML_PSD_CARRUSEL"
    pool = make_pool(house.venue, house.operator, pack)
    first, second = (make_table(house.venue, house.operator, pack) for _ in range(2))
    made, tried = threading.Event(), threading.Event()
    errors: list[BaseException] = []
    refusals: list[InvalidInput] = []

    def create_a_table() -> None:
        try:
            with transaction.atomic():  # held open after the service, as a slow commit would be
                make_table(house.venue, house.operator, pack)
                made.set()
                tried.wait(timeout=1)  # the carrusel must not be formed meanwhile
        except BaseException as exc:
            errors.append(exc)
            made.set()
        finally:
            connection.close()

    def form_the_carrusel() -> None:
        try:
            made.wait(timeout=30)
            table_services.form_carrusel(pool=pool, tables=[first, second], actor=house.operator)
        except InvalidInput as exc:
            refusals.append(exc)
        except BaseException as exc:
            errors.append(exc)
        finally:
            tried.set()
            connection.close()

    threads = [threading.Thread(target=create_a_table), threading.Thread(target=form_the_carrusel)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert not errors, errors
    assert [e.code for e in refusals] == ["carrusel_needs_all_tables"]
    assert not CasinoTable.objects.filter(pool__isnull=False).exists()
    assert CasinoTable.objects.count() == 3
