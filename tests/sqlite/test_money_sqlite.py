"""Money on SQLite (halls.fields.MoneyField): stored as integer units, summed exactly, read back at scale.

The issue's figures: a pool's bets summed to "2170.40000000001" and folding refused a to_meter of
0.0846000000000001, because SQLite kept the decimals as doubles and summed them in float.
"""

# ruff: noqa: F811

from __future__ import annotations

from decimal import Decimal
from typing import Any, cast

import pytest
from django.apps import apps
from django.contrib.auth.models import User
from django.db import connection
from django.db.models import Sum
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from halls.fields import MoneyField, from_units, sqlite_to_units, to_units
from halls.models import Venue
from jackpots.models import Contribution, Pool, PoolLevel
from jackpots.services import contributions, folding, reports
from jackpots.sources import PoolSource
from tests.jackpots.pool_fixtures import (  # noqa: F401 - fixtures
    an10_venue,
    carrusel_level,
    key,
    level_of,
    make_pool,
    pool_operator,
)

pytestmark = pytest.mark.django_db


def give(pool: Pool, bet: Decimal) -> None:
    contributions.contribute(
        pool=pool,
        source=PoolSource.of("table", 1).at("seat", 1),
        bet=bet,
        idempotency_key=key("m"),
        actor="t",
    )


def raw(sql: str, params: list[Any] | None = None) -> list[tuple[Any, ...]]:
    with connection.cursor() as cursor:
        cursor.execute(sql, params or [])
        return list(cursor.fetchall())


def test_the_run_is_on_sqlite() -> None:
    assert connection.vendor == "sqlite"


def test_units_round_trip_at_the_fields_scale() -> None:
    assert to_units(Decimal("2170.40"), 2) == 217040
    assert to_units(Decimal("0.084600"), 6) == 84600
    assert from_units(84600, 6) == Decimal("0.084600")
    assert str(from_units(217040, 2)) == "2170.40"
    # Finer than the scale: rounded half away from zero, as numeric(p, s) does on PostgreSQL.
    assert to_units(Decimal("0.0846005"), 6) == 84601
    assert to_units(Decimal("-0.0846005"), 6) == -84601
    with pytest.raises(ValueError, match="whole units"):
        from_units(Decimal("1.5"), 2)


def test_a_money_column_is_an_integer_of_units_on_sqlite(an10_venue: Venue, pool_operator: User) -> None:
    pool = make_pool(an10_venue, pool_operator, levels=[carrusel_level(rate="0.084600", reserve="0")])
    give(pool, Decimal("1.00"))
    (kind, units, bet_kind, bet), *_ = raw(
        "SELECT typeof(to_meter), to_meter, typeof(bet), bet FROM jackpots_contribution"
    )
    assert (kind, units, bet_kind, bet) == ("integer", 84600, "integer", 100)
    row = Contribution.objects.get()
    assert (row.to_meter, row.bet) == (Decimal("0.084600"), Decimal("1.00"))
    assert str(row.to_meter) == "0.084600"  # the same text as numeric(20, 6) gives on PostgreSQL
    # Filters with Decimal literals compare in units.
    assert Contribution.objects.filter(to_meter=Decimal("0.0846")).count() == 1
    assert Contribution.objects.filter(to_meter__gt=Decimal("0.084599")).count() == 1
    assert Contribution.objects.filter(to_meter__gt=Decimal("0.0846")).count() == 0


def test_eighteen_significant_digits_survive_storage_and_sums(an10_venue: Venue, pool_operator: User) -> None:
    pool = make_pool(
        an10_venue, pool_operator, levels=[carrusel_level(name=n, rate="0.01", reserve="0") for n in "ABC"]
    )
    big = [Decimal("123456789012.345678"), Decimal("876543210987.654321"), Decimal("0.000001")]
    for level, amount in zip(PoolLevel.objects.filter(pool=pool).order_by("position"), big, strict=True):
        PoolLevel.objects.filter(pk=level.pk).update(amount=amount)
    assert [lv.amount for lv in PoolLevel.objects.filter(pool=pool).order_by("position")] == big
    total = PoolLevel.objects.filter(pool=pool).aggregate(t=Sum("amount"))["t"]
    assert total == Decimal("1000000000000.000000")
    assert total == sum(big, Decimal(0))


def test_the_issues_figures_sum_exactly(an10_venue: Venue, pool_operator: User) -> None:
    """Bets of 0.10 € to 2.00 € that add up to 2,170.40 €, at a 6-decimal rate: the report holds, the bets
    are 2170.40 to the cent and the fold takes the exact sum (no "must be a multiple of 0.000001")."""
    pool = make_pool(an10_venue, pool_operator, levels=[carrusel_level(rate="0.084600", reserve="0")])
    bets = [Decimal("0.10"), Decimal("0.20"), Decimal("0.30"), Decimal("1.10"), Decimal("2.00")] * 586
    bets += [Decimal("2.00"), Decimal("0.20")]
    assert sum(bets, Decimal(0)) == Decimal("2170.40")
    contributions.contribute_many(
        pool=pool,
        items=[
            contributions.ContributionItem(
                source=PoolSource.of("table", 1).at("seat", 1), bet=b, idempotency_key=key("f")
            )
            for b in bets
        ],
        actor="t",
    )
    report = reports.balance(pool)
    assert report.holds
    (level,) = report.levels
    assert str(level.bets) == "2170.40"
    exact_meter = sum((b * Decimal("0.084600") for b in bets), Decimal(0))
    assert level.contributions == exact_meter
    assert report.as_dict()["levels"][0]["bets"] == "2170.40"
    result = folding.fold(pool)
    assert result.folded == len(bets)
    assert level_of(pool).amount == Decimal(5000) + exact_meter
    assert reports.balance(pool).holds


money = st.decimals(min_value=Decimal("0.01"), max_value=Decimal("500.00"), places=2)
rates = st.decimals(min_value=Decimal("0.000001"), max_value=Decimal("0.500000"), places=6)


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    bets=st.lists(money, min_size=1, max_size=40), rate=rates, reserve=rates, fold_every=st.integers(1, 40)
)
def test_many_random_contributions_sum_exactly_on_sqlite(
    an10_venue: Venue,
    pool_operator: User,
    bets: list[Decimal],
    rate: Decimal,
    reserve: Decimal,
    fold_every: int,
) -> None:
    reserve = min(reserve, Decimal(1) - rate)
    pool = make_pool(
        an10_venue,
        pool_operator,
        code=key("P"),
        levels=[carrusel_level(rate=str(rate), reserve=str(reserve))],
    )
    for index, bet in enumerate(bets, start=1):
        give(pool, bet)
        if index % fold_every == 0:
            folding.fold(pool)
    rows = list(Contribution.objects.filter(pool=pool))
    to_meter = sum((r.to_meter for r in rows), Decimal(0))
    to_reserve = sum((r.to_reserve for r in rows), Decimal(0))
    # Each row is the engine's exact split of its bet; the database sums are the Decimal sums.
    assert sum((r.bet for r in rows), Decimal(0)) == sum(bets, Decimal(0))
    sums = Contribution.objects.filter(pool=pool).aggregate(
        b=Sum("bet"), m=Sum("to_meter"), r=Sum("to_reserve")
    )
    assert (sums["b"], sums["m"], sums["r"]) == (sum(bets, Decimal(0)), to_meter, to_reserve)
    report = reports.balance(pool)
    assert report.holds
    (level,) = report.levels
    assert (level.bets, level.contributions, level.contribution_count) == (
        sum(bets, Decimal(0)),
        to_meter,
        len(bets),
    )
    folding.fold(pool)
    folded = level_of(pool)
    assert (folded.amount, folded.reserve) == (Decimal(5000) + to_meter, to_reserve)


def test_a_database_written_before_gets_its_decimals_as_units(an10_venue: Venue, pool_operator: User) -> None:
    """The migration step (halls.fields.sqlite_to_units) on rows a pre-MoneyField SQLite file held: whole
    values as INTEGER, others as REAL."""
    pool = make_pool(an10_venue, pool_operator, levels=[carrusel_level(rate="0.02", reserve="0")])
    level = level_of(pool)
    raw(
        "UPDATE jackpots_poollevel SET amount = 2170.4, seed = 30, reserve = 0.0846 WHERE id = %s", [level.pk]
    )
    step = sqlite_to_units([("jackpots", "poollevel", f) for f in ("amount", "seed", "reserve")])
    # Inside the test's transaction: the editor is not entered (that would switch foreign keys off).
    step.code(cast(Any, apps), connection.schema_editor())
    level.refresh_from_db()
    assert (level.amount, level.seed, level.reserve) == (
        Decimal("2170.400000"),
        Decimal("30.000000"),
        Decimal("0.084600"),
    )


def test_the_money_columns_are_money_fields() -> None:
    """Every column that holds an amount is a MoneyField (rates, percents, paces and an installation's map
    coordinates are not money)."""
    plain = [
        f"{model._meta.label}.{field.name}"
        for model in apps.get_models()
        for field in model._meta.concrete_fields
        if type(field).__name__ == "DecimalField"
    ]
    not_money = ("percent", "rate", "pace", "latitude", "longitude")
    assert all(any(word in name for word in not_money) for name in plain), plain
    assert isinstance(Contribution._meta.get_field("to_meter"), MoneyField)
