"""Meters (what screens may show), the changed-pools poll, the balancing report, seals and the beat tasks."""

# The shared fixtures are imported by name (tests/jackpots/pool_fixtures.py): pytest injects them as
# arguments, which ruff reads as redefinitions.
# ruff: noqa: F811

from __future__ import annotations

import json
from datetime import timedelta
from decimal import Decimal
from typing import Any

from django.utils import timezone

from halls.models import Venue
from jackpots import tasks
from jackpots.engine import Winner
from jackpots.models import Contribution, LedgerSeal, Pool, PoolLevel
from jackpots.poker import rank_hand
from jackpots.services import awards, contributions, folding, pools, reports, seals
from jackpots.services.readmodels import meters
from jackpots.sources import PoolSource
from tests.jackpots.pool_fixtures import (  # noqa: F401 - fixtures
    an10_venue,
    carousel,
    carrusel_level,
    key,
    level_of,
    make_pool,
    pool_operator,
    set_meter,
)
from tests.tampering import as_db_owner

SEAT_1 = PoolSource.of("table", 1).at("seat", 1)


def give(pool: Pool, bet: str = "1.00", source: PoolSource = SEAT_1) -> None:
    contributions.contribute(pool=pool, source=source, bet=Decimal(bet), idempotency_key=key(), actor="t")


def keys_of(value: object) -> set[str]:
    if isinstance(value, dict):
        return set(value) | {k for v in value.values() for k in keys_of(v)}
    if isinstance(value, list):
        return {k for v in value for k in keys_of(v)}
    return set()


def test_the_live_meter_adds_the_unfolded_rows_and_shows_whole_cents_down(carousel: Pool) -> None:
    give(carousel, "0.37")  # 0.259 to the meter
    meter = meters.pool_meter(carousel)
    (level,) = meter.levels
    assert level.amount == Decimal("5000.25")  # 5000.259 shown as 5000.25: never more than the pool holds
    assert level.reserve == Decimal("0.03")  # 0.037
    folding.fold(carousel)
    assert meters.pool_meter(carousel).levels[0].amount == Decimal("5000.25")


def test_the_meter_is_capped_at_the_ceiling_before_the_fold(an10_venue: Venue) -> None:
    pool = make_pool(an10_venue, "op", levels=[carrusel_level(ceiling=Decimal("5001.00"))])
    for _ in range(5):
        give(pool)
    assert meters.pool_meter(pool).levels[0].amount == Decimal("5001.00")


def test_meters_never_carry_the_must_hit_by_value(an10_venue: Venue) -> None:
    pool = make_pool(an10_venue, "op", levels=[carrusel_level(ceiling=Decimal("9000"), mystery=True)])
    secret = level_of(pool).must_hit_by
    assert secret is not None
    shown = meters.pool_meter(pool).as_dict()
    assert not {k for k in keys_of(shown) if "must" in k or "mystery" in k}
    assert str(secret) not in json.dumps(shown) and str(secret.quantize(Decimal("0.01"))) not in json.dumps(
        shown
    )


def test_hits_counts_and_the_last_25(carousel: Pool) -> None:
    set_meter(level_of(carousel), "100000")
    for i in range(27):
        awards.award_hand(
            pool=carousel,
            winners=[Winner(str(i % 7), rank_hand("AS AH AD AC KS"), False)],
            idempotency_key=f"h-{i}",
            actor="croupier",
            context={"table": "1", "hand": str(i), "source": "table:1"},
        )
    meter = meters.pool_meter(carousel)
    level = meter.levels[0]
    assert level.hits == 27 and level.total_paid == Decimal("8100.00")
    assert len(level.last_hits) == 25 and len(meter.last_hits) == 25
    assert [h.hand for h in level.last_hits[:3]] == ["26", "25", "24"]  # newest first
    assert level.last_hits[0].amount == Decimal("300.00") and level.last_hits[0].source == "table:1"


def test_changed_pools_since_reports_the_pools_that_moved(carousel: Pool, an10_venue: Venue) -> None:
    other = make_pool(an10_venue, "op", code="CARR-2")
    everything, cursor = meters.changed_pools_since(None)
    assert everything == {carousel.pk, other.pk}
    assert meters.changed_pools_since(cursor)[0] == set()
    give(other)
    changed, cursor = meters.changed_pools_since(cursor)
    assert changed == {other.pk}
    pools.correct_meter(
        level=level_of(carousel), amount_delta=Decimal("1"), reason="r", authorised_by="j", actor="o"
    )
    changed, cursor = meters.changed_pools_since(cursor)
    assert changed == {carousel.pk}
    pools.change_parameters(
        level=level_of(other), changes={"name": "Jackpot"}, actor="o", authorisation_ref="A"
    )
    assert meters.changed_pools_since(cursor)[0] == {other.pk}


def test_pool_meters_of_several_pools(carousel: Pool, an10_venue: Venue) -> None:
    other = make_pool(
        an10_venue, "op", code="CARR-2", levels=[carrusel_level(name="A"), carrusel_level(name="B")]
    )
    found = meters.pool_meters([carousel.pk, other.pk, 999999])
    assert set(found) == {carousel.pk, other.pk}
    assert [lv.name for lv in found[other.pk].levels] == ["A", "B"]


def test_live_levels_are_the_meters_amounts_in_one_query(
    carousel: Pool, an10_venue: Venue, django_assert_num_queries: Any
) -> None:
    other = make_pool(
        an10_venue,
        "op",
        code="CARR-3",
        levels=[carrusel_level(name="A"), carrusel_level(name="B", ceiling=Decimal("5000.50"))],
    )
    give(carousel, "0.37")
    for _ in range(3):
        give(other)  # B past its ceiling before the fold: capped, as the meter shows it
    folding.fold(carousel)
    give(carousel, "0.11")  # unfolded rows count too
    with django_assert_num_queries(1):
        found = meters.live_levels([carousel.pk, other.pk, 999999])
    shown = meters.pool_meters([carousel.pk, other.pk])
    assert found == {
        pool_id: tuple((lv.name, lv.amount) for lv in meter.levels) for pool_id, meter in shown.items()
    }
    assert found[other.pk][1] == ("B", Decimal("5000.50"))
    assert meters.live_levels([]) == {}


# --- the balancing report ------------------------------------------------------------------------------


def test_the_balance_proves_the_identity_for_all_time_and_a_period(carousel: Pool) -> None:
    give(carousel, "2.00")
    folding.fold(carousel)
    middle = timezone.now()
    give(carousel, "3.00")
    awards.award_hand(
        pool=carousel,
        winners=[Winner("1", rank_hand("AS KS QS JS TS"), False)],
        idempotency_key="royal",
        actor="croupier",
    )
    give(carousel, "1.00")  # unfolded: the report counts it from the ledger and from the live meter
    report = reports.balance(carousel)
    assert report.holds
    (level,) = report.levels
    assert level.opening == 0 and level.seeds == Decimal("9999.50")  # opening seed + the operator reseed
    assert level.reserve_to_meter == Decimal("0.50")
    assert level.contributions == Decimal("4.20")
    assert level.awards == Decimal("5003.50")
    assert level.closing == Decimal("5000.70")
    assert level.bets == Decimal("6.00") and level.house == Decimal("1.20") and level.contribution_count == 3
    period = reports.balance(carousel, start=middle, end=timezone.now() + timedelta(seconds=1))
    assert period.holds
    assert period.levels[0].opening == Decimal("5001.40")
    assert period.levels[0].contributions == Decimal("2.80")
    earlier = reports.balance(carousel, end=middle)
    assert (
        earlier.holds and not earlier.levels[0].recorded and earlier.levels[0].closing == Decimal("5001.40")
    )
    assert report.as_dict()["holds"] is True


def test_the_balance_fails_when_the_meter_disagrees_with_the_ledger(carousel: Pool) -> None:
    give(carousel)
    folding.fold(carousel)
    PoolLevel.objects.filter(pool=carousel).update(amount=Decimal("5000.71"))  # a meter edited by hand
    report = reports.balance(carousel)
    assert not report.holds and not report.levels[0].meter_holds and report.levels[0].reserve_holds


def test_tripoquer_reports_its_minimum_return(db: None) -> None:
    from tests.jackpots.pool_fixtures import venue_of

    venue = venue_of("AN10", "AN-TQ")
    pool = make_pool(
        venue, "op", pack="AN10_TRIPOQUER_CARRUSEL", bet=None, levels=[carrusel_level("0", "0.75", "0")]
    )
    give(pool, "10.00")
    report = reports.balance(pool)
    assert report.min_return == Decimal("0.70") and report.meets_min_return is True


# --- seals ---------------------------------------------------------------------------------------------


def test_seals_chain_the_ledger_and_detect_tampering(carousel: Pool) -> None:
    give(carousel)
    give(carousel, "2.00")
    first = seals.seal(carousel)
    assert first is not None and first.seq == 1 and first.rows["contributions"] == 2
    assert first.rows["moves"] >= 1  # the opening seed
    assert seals.seal(carousel) is None  # nothing new
    give(carousel, "3.00")
    pools.change_parameters(
        level=level_of(carousel), changes={"name": "Jackpot"}, actor="o", authorisation_ref="A"
    )
    second = seals.seal(carousel)
    assert second is not None and second.prev_hash == first.hash
    assert second.rows == {"contributions": 1, "settlements": 0, "awards": 0, "moves": 0, "changes": 1}
    assert seals.verify(carousel).ok and seals.verify(carousel).seals == 2

    row = Contribution.objects.filter(pool=carousel).order_by("pk").first()
    assert row is not None
    with as_db_owner(Contribution, LedgerSeal):  # the triggers refuse these edits otherwise
        Contribution.objects.filter(pk=row.pk).update(to_meter=row.to_meter + 1)
        check = seals.verify(carousel)
        assert not check.ok and check.first_bad_seq == 1
        Contribution.objects.filter(pk=row.pk).update(to_meter=row.to_meter)
        assert seals.verify(carousel).ok
        LedgerSeal.objects.filter(pk=second.pk).update(digest="0" * 64)
    assert seals.verify(carousel).first_bad_seq == 2


def test_the_beat_tasks_fold_and_seal(carousel: Pool) -> None:
    give(carousel)
    give(carousel)
    assert tasks.fold_pools() == 2
    assert tasks.fold_pools() == 0
    assert level_of(carousel).amount == Decimal("5001.40")
    assert tasks.seal_pools() == 1
    assert tasks.seal_pools() == 0
