"""Contributions (the hot path) and folding: exact splits, idempotency, refusals, ceilings and overflows."""

# The shared fixtures are imported by name (tests/jackpots/pool_fixtures.py): pytest injects them as
# arguments, which ruff reads as redefinitions.
# ruff: noqa: F811

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from django.contrib.auth.models import User
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from halls import money
from halls.errors import Conflict, InvalidInput, NotFound
from halls.models import Venue
from jackpots import engine
from jackpots.models import Contribution, LedgerMove, MoveKind, Pool
from jackpots.services import contributions, folding, pools, reports
from jackpots.services.contributions import ContributionItem
from jackpots.services.readmodels import meters
from jackpots.sources import PoolSource
from tests.jackpots.pool_fixtures import (  # noqa: F401 - fixtures
    an10_venue,
    carousel,
    carrusel_level,
    key,
    level_of,
    make_pool,
    nothing_written,
    pool_operator,
)

SEAT_2 = PoolSource.of("table", 1).at("seat", 2)


def give(
    pool: Pool | int, bet: str = "1.00", source: PoolSource = SEAT_2, k: str | None = None
) -> contributions.ContributionReceipt:
    return contributions.contribute(
        pool=pool, source=source, bet=Decimal(bet), idempotency_key=k or key(), actor="table-1"
    )


def test_a_contribution_is_one_row_per_level_with_the_engine_split(
    an10_venue: Venue, pool_operator: User
) -> None:
    pool = make_pool(
        an10_venue,
        pool_operator,
        levels=[
            carrusel_level("5000", "0.123457", "0.011111", name="Grand"),
            carrusel_level("5000", "0.3", "0", name="Minor"),
        ],
    )
    receipt = give(pool, "1.37", k="hand-7-seat-2")
    assert not receipt.replayed and receipt.bet == Decimal("1.37")
    rows = list(Contribution.objects.filter(pool=pool).order_by("level__position"))
    assert len(rows) == 2
    for row, rates in zip(rows, [("0.123457", "0.011111"), ("0.3", "0")], strict=True):
        split = money.split_contribution(Decimal("1.37"), Decimal(rates[0]), Decimal(rates[1]))
        assert (row.to_meter, row.to_reserve, row.house) == split
        assert (row.source, row.bet, row.idempotency_key, row.actor) == (
            "table:1/seat:2",
            Decimal("1.37"),
            "hand-7-seat-2",
            "table-1",
        )
    assert [(line.to_meter, line.to_reserve, line.house) for line in receipt.lines] == [
        (r.to_meter, r.to_reserve, r.house) for r in rows
    ]
    # The level rows are untouched until a fold: the hot path only appends.
    assert level_of(pool).amount == Decimal("5000")


# The golden table of the split: bet, contribution rate, reserve rate, seed, ceiling -> meter share, reserve
# share, house share, and the level's meter and reserve after the fold. The engine (halls.money and
# jackpots.engine) and every contribution path (on PostgreSQL the three statements of _insert_sql; on
# SQLite the ORM path) must give exactly these.
GOLDEN = [
    ("1.00", "0.05", "0.01", "5000", "5000.03", "0.050000", "0.010000", "0.940000", "5000.03", "0.030000"),
    (
        "0.50",
        "0.333333",
        "0.333333",
        "5000",
        None,
        "0.166667",
        "0.166666",
        "0.166667",
        "5000.166667",
        "0.166666",
    ),
    (
        "1.37",
        "0.123457",
        "0.011111",
        "5000",
        None,
        "0.169137",
        "0.015222",
        "1.185641",
        "5000.169137",
        "0.015222",
    ),
    (
        "999999999999.99",  # money.MAX_BET
        "0.084600",
        "0.010000",
        "5000",
        None,
        "84599999999.999154",
        "9999999999.999900",
        "905399999999.990946",
        "84600004999.999154",
        "9999999999.999900",
    ),
    ("0.01", "0.000001", "0", "5000", None, "0.000001", "0", "0.009999", "5000.000001", "0"),
    ("2.00", "1", "0", "5000", "5001.50", "2.00", "0", "0", "5001.50", "0.50"),
    ("3.00", "0", "1", "5000", None, "0", "3.00", "0", "5000", "3.00"),
    ("7.77", "0", "0", "5000", None, "0", "0", "7.77", "5000", "0"),
]
SPLIT_PATHS = ["engine", "contribute", "contribute_many", "contribute_pools"]


def _golden_receipts(path: str, an10_venue: Venue) -> list[tuple[Pool, contributions.ContributionReceipt]]:
    """One pool per row of GOLDEN, its bet contributed by `path`."""
    items = []
    for n, (bet, rate, reserve, seed, ceiling, *_) in enumerate(GOLDEN):
        level = carrusel_level(seed, rate, reserve, ceiling=None if ceiling is None else Decimal(ceiling))
        pool = make_pool(an10_venue, "op", code=f"GOLD-{n}", levels=[level])
        items.append(
            (
                pool,
                ContributionItem(
                    source=PoolSource.of("table", 1).at("seat", 1), bet=Decimal(bet), idempotency_key=f"g-{n}"
                ),
            )
        )
    if path == "contribute_pools":
        receipts = contributions.contribute_pools(items=list(items), actor="t")
    elif path == "contribute_many":
        receipts = [
            contributions.contribute_many(pool=pool, items=[item], actor="t")[0] for pool, item in items
        ]
    else:
        receipts = [
            give(pool, str(item.bet), source=item.source, k=item.idempotency_key) for pool, item in items
        ]
    return [(pool, receipt) for (pool, _), receipt in zip(items, receipts, strict=True)]


@pytest.mark.parametrize("path", SPLIT_PATHS)
def test_the_golden_split_table_holds_on_every_path(path: str, an10_venue: Venue) -> None:
    if path == "engine":
        for bet, rate, reserve, seed, ceiling, meter, hidden, house, amount, kept in GOLDEN:
            split = money.split_contribution(Decimal(bet), Decimal(rate), Decimal(reserve))
            assert split == (Decimal(meter), Decimal(hidden), Decimal(house))
            state = engine.LevelState.opened(
                Decimal(seed), ceiling=None if ceiling is None else Decimal(ceiling)
            )
            after = engine.apply_contribution(state, split.to_meter, split.to_reserve).level
            assert (after.amount, after.reserve) == (Decimal(amount), Decimal(kept))
        return
    for (pool, receipt), row in zip(_golden_receipts(path, an10_venue), GOLDEN, strict=True):
        _bet, _rate, _reserve, _seed, _ceiling, meter, hidden, house, amount, kept = row
        [line] = receipt.lines
        assert (line.to_meter, line.to_reserve, line.house) == (
            Decimal(meter),
            Decimal(hidden),
            Decimal(house),
        )
        assert meters.pool_meter(pool).levels[0].amount == money.cents_down(Decimal(amount))  # capped, live
        folding.fold(pool)
        level = level_of(pool)
        assert (level.amount, level.reserve) == (Decimal(amount), Decimal(kept))
        assert reports.balance(pool).holds


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    bet=st.decimals(min_value=Decimal("0.01"), max_value=Decimal("99999.99"), places=2),
    rate=st.decimals(min_value=Decimal("0"), max_value=Decimal("1"), places=6),
    reserve=st.decimals(min_value=Decimal("0"), max_value=Decimal("1"), places=6),
)
def test_the_sql_split_equals_the_engine_split(
    carousel: Pool, bet: Decimal, rate: Decimal, reserve: Decimal
) -> None:
    if rate + reserve > 1:
        reserve = 1 - rate
    level = level_of(carousel)
    level.contribution_rate, level.reserve_rate = rate, reserve
    level.save(update_fields=["contribution_rate", "reserve_rate"])
    receipt = give(carousel, str(bet))
    assert (receipt.lines[0].to_meter, receipt.lines[0].to_reserve, receipt.lines[0].house) == (
        money.split_contribution(bet, rate, reserve)
    )


def test_a_repeated_key_is_a_no_op_that_answers_as_the_first(carousel: Pool) -> None:
    first = give(carousel, "2.00", k="dup")
    with nothing_written():
        again = give(carousel, "2.00", k="dup")
    assert again.replayed and again.lines == first.lines and again.created_at == first.created_at
    with nothing_written(), pytest.raises(Conflict) as other:
        give(carousel, "3.00", k="dup")
    assert other.value.code == "idempotency_key_reused"


def test_a_typed_source_is_stored_as_its_text_and_answered_typed(carousel: Pool) -> None:
    """The service takes the PoolSource; the row keeps the text the column always held; the receipt gives
    the value back; two equal values are the same source to the idempotency check."""
    seat = PoolSource.of("table", 1).at("seat", 2)
    first = give(carousel, "2.00", source=seat, k="typed")
    assert first.source == seat and not first.replayed
    assert set(Contribution.objects.filter(idempotency_key="typed").values_list("source", flat=True)) == {
        "table:1/seat:2"
    }
    with nothing_written():
        again = give(carousel, "2.00", source=PoolSource.of("table", 1).at("seat", 2), k="typed")
    assert again.replayed and again.source == seat and again.lines == first.lines
    with nothing_written(), pytest.raises(Conflict) as other:
        give(carousel, "2.00", source=PoolSource.of("table", 1).at("seat", 3), k="typed")
    assert other.value.code == "idempotency_key_reused"


@pytest.mark.parametrize(
    ("bet", "code"),
    [
        ("0", "bad_bet"),
        ("-1.00", "bad_bet"),
        ("1.001", "bad_bet"),
        ("NaN", "bad_bet"),
        ("Infinity", "bad_bet"),
    ],
)
def test_bad_bets_are_refused_and_nothing_is_written(carousel: Pool, bet: str, code: str) -> None:
    with nothing_written(), pytest.raises(InvalidInput) as refused:
        give(carousel, bet)
    assert refused.value.code == code


@pytest.mark.parametrize("bet", [1.5, True, None, "abc", [1]])
def test_bets_must_be_exact(carousel: Pool, bet: object) -> None:
    with nothing_written(), pytest.raises(InvalidInput) as refused:
        contributions.contribute(
            pool=carousel,
            source=PoolSource.of("table", 1),
            bet=bet,  # type: ignore[arg-type]
            idempotency_key="k",
            actor="x",
        )
    assert refused.value.code == "bad_bet"


def test_refusals_for_pool_source_and_key(carousel: Pool) -> None:
    with nothing_written():
        with pytest.raises(NotFound) as unknown:
            give(carousel.pk + 1000)
        assert unknown.value.code == "unknown_pool"
        with pytest.raises(InvalidInput) as stranger:
            give(carousel, source=PoolSource.of("table", 99).at("seat", 1))
        assert stranger.value.code == "source_not_member"
        for text in ("table:1/seat:2", "", "table", "x" * 121):  # a malformed text makes no PoolSource
            with pytest.raises(TypeError, match="a contribution's source is a PoolSource, not str"):
                give(carousel, source=text)  # type: ignore[arg-type]
        for bad_key in ("", " ", "k" * 101):
            with pytest.raises(InvalidInput) as no_key:
                give(carousel, k=bad_key or " ")
            assert no_key.value.code == "idempotency_key_required"
    pools.remove_member(pool=carousel, source_type="table", source_id="2", actor="op")
    with pytest.raises(InvalidInput) as removed:
        give(carousel, source=PoolSource.of("table", 2))
    assert removed.value.code == "source_not_member"
    Pool.objects.filter(pk=carousel.pk).update(active=False)
    with pytest.raises(Conflict) as closed:
        give(carousel)
    assert closed.value.code == "pool_inactive"


def test_contribute_many_is_all_or_nothing_and_idempotent(carousel: Pool) -> None:
    give(carousel, "1.00", k="b-1")
    items = [
        ContributionItem(PoolSource.of("table", 1).at("seat", 1), Decimal("1.00"), "b-1"),  # a replay
        ContributionItem(PoolSource.of("table", 1).at("seat", 2), Decimal("2.00"), "b-2"),
        ContributionItem(PoolSource.of("table", 2).at("seat", 1), Decimal("0.50"), "b-3"),
        ContributionItem(
            PoolSource.of("table", 2).at("seat", 1), Decimal("0.50"), "b-3"
        ),  # the same item twice
    ]
    with pytest.raises(Conflict):
        contributions.contribute_many(pool=carousel, items=items, actor="gw")
    items[0] = ContributionItem(PoolSource.of("table", 1).at("seat", 2), Decimal("1.00"), "b-1")
    receipts = contributions.contribute_many(pool=carousel, items=items, actor="gw")
    assert [r.replayed for r in receipts] == [True, False, False, False]
    assert receipts[2] == receipts[3]
    assert Contribution.objects.filter(pool=carousel).count() == 3
    with nothing_written():
        again = contributions.contribute_many(pool=carousel, items=items, actor="gw")
    assert all(r.replayed for r in again)
    bad = [
        ContributionItem(PoolSource.of("table", 1), Decimal("1.00"), "b-4"),
        ContributionItem(PoolSource.of("table", 9), Decimal("1.00"), "b-5"),
    ]
    with nothing_written(), pytest.raises(InvalidInput) as refused:
        contributions.contribute_many(pool=carousel, items=bad, actor="gw")
    assert refused.value.code == "source_not_member"
    with nothing_written(), pytest.raises(InvalidInput):
        contributions.contribute_many(
            pool=carousel,
            items=[
                ContributionItem(PoolSource.of("table", 1), Decimal("1.00"), "b-6"),
                ContributionItem(PoolSource.of("table", 1), Decimal("2.00"), "b-6"),
            ],
            actor="gw",
        )
    assert contributions.contribute_many(pool=carousel, items=[], actor="gw") == []


def test_fold_brings_the_exact_sum_into_the_level(carousel: Pool) -> None:
    bets = ["1.00", "0.37", "2.51", "0.01", "9.99"]
    shares = [give(carousel, b).to_meter for b in bets]
    result = folding.fold(carousel)
    level = level_of(carousel)
    assert result.folded == len(bets)
    assert level.amount == Decimal("5000") + sum(shares, Decimal(0))
    assert level.reserve == sum(
        (money.split_contribution(Decimal(b), Decimal("0.7"), Decimal("0.1")).to_reserve for b in bets),
        Decimal(0),
    )
    assert level.folded_through == Contribution.objects.filter(pool=carousel).latest("id").pk
    assert folding.fold(carousel).folded == 0
    assert reports.balance(carousel).holds


def test_the_ceiling_overflows_to_the_reserve(an10_venue: Venue, pool_operator: User) -> None:
    pool = make_pool(an10_venue, pool_operator, levels=[carrusel_level(ceiling=Decimal("5001"))])
    for _ in range(3):
        give(pool, "1.00")  # 0.70 each to the meter: 2.10 offered, 1.00 fits
    folding.fold(pool)
    level = level_of(pool)
    assert level.amount == Decimal("5001")
    assert level.overflow_total == Decimal("1.10")
    assert level.reserve == Decimal("0.30") + Decimal("1.10")
    assert LedgerMove.objects.get(level=level, kind=MoveKind.OVERFLOW_TO_RESERVE).amount == Decimal("1.10")
    assert reports.balance(pool).holds


def test_the_ceiling_overflows_to_the_next_level(an10_venue: Venue, pool_operator: User) -> None:
    pool = make_pool(
        an10_venue,
        pool_operator,
        levels=[
            carrusel_level(ceiling=Decimal("5000.50"), overflow_to="next_level", name="Major"),
            carrusel_level("5000", "0.1", "0", name="Minor"),
        ],
    )
    give(pool, "1.00")
    give(pool, "1.00")
    folding.fold(pool)
    major, minor = level_of(pool, 0), level_of(pool, 1)
    assert major.amount == Decimal("5000.50")
    assert minor.amount == Decimal("5000") + Decimal("0.2") + Decimal("0.90")
    assert LedgerMove.objects.get(level=major, kind=MoveKind.OVERFLOW_TO_NEXT).amount == Decimal("0.90")
    assert LedgerMove.objects.get(level=minor, kind=MoveKind.OVERFLOW_IN).amount == Decimal("0.90")
    assert reports.balance(pool).holds


def test_a_fixed_jackpot_does_not_grow(db: None) -> None:
    from tests.jackpots.pool_fixtures import venue_of

    venue = venue_of("EU", "EU-F-1")
    pool = make_pool(venue, "op", pack="EU_PCD_JACKPOT_FIXED", levels=[carrusel_level("2000", "0.5", "0")])
    give(pool, "1.00")
    folding.fold(pool)
    level = level_of(pool)
    assert (level.amount, level.reserve) == (Decimal("2000"), Decimal("0.50"))
    assert reports.balance(pool).holds


def test_pools_to_fold_lists_only_pools_with_new_rows(carousel: Pool, an10_venue: Venue) -> None:
    other = make_pool(an10_venue, "op", code="CARR-2")
    assert folding.pools_to_fold() == []
    give(other)
    assert folding.pools_to_fold() == [other.pk]
    folding.fold(other)
    assert folding.pools_to_fold() == []


def test_a_fold_tick_reads_its_pools_and_its_lag_in_one_query(
    carousel: Pool, an10_venue: Venue, django_assert_num_queries: Any
) -> None:
    other = make_pool(an10_venue, "op", code="CARR-2")
    with django_assert_num_queries(1):
        assert folding.unfolded() == folding.Unfolded(pools=[], oldest_at=None)
    first = give(other)
    give(carousel)
    give(other)
    with django_assert_num_queries(1):
        todo = folding.unfolded()
    assert todo == folding.Unfolded(pools=sorted([carousel.pk, other.pk]), oldest_at=first.created_at)
