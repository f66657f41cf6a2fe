"""Pools: creation (seed minimums per jurisdiction, scope, packs), members, parameter changes, corrections."""

# The shared fixtures are imported by name (tests/jackpots/pool_fixtures.py): pytest injects them as
# arguments, which ruff reads as redefinitions.
# ruff: noqa: F811

from __future__ import annotations

import json
from decimal import Decimal

import pytest
from django.contrib.auth.models import User

from halls.errors import Conflict, InvalidInput, NotFound
from halls.models import AuditEntry, Jurisdiction, Network, Venue
from jackpots.models import LedgerMove, MoveKind, ParameterChange, Pool, PoolLevel, PoolMember
from jackpots.services import contributions, guards, pools, reports
from jackpots.services.pools import LevelSpec
from jackpots.sources import PoolSource
from tests.jackpots.pool_fixtures import (  # noqa: F401 - fixtures
    an10_venue,
    carousel,
    carrusel_level,
    eu_venue,
    key,
    level_of,
    make_pool,
    nothing_written,
    pool_operator,
    venue_of,
)


def create(home: Venue, **overrides: object) -> Pool:
    args: dict[str, object] = {
        "name": "Carrusel",
        "code": "C-1",
        "jurisdiction": home.jurisdiction,
        "authorisation_ref": "AUT-1",
        "rule_pack": "AN10_PSD_CARRUSEL",
        "venue": home,
        "levels": [carrusel_level()],
        "carousel_bet": Decimal("1.00"),
        "actor": "operator",
    }
    args.update(overrides)
    return pools.create_pool(**args)  # type: ignore[arg-type]


# --- creation ------------------------------------------------------------------------------------------


def test_create_pool_opens_levels_at_their_seed_with_the_ledger_and_audit(an10_venue: Venue) -> None:
    pool = create(
        an10_venue,
        levels=[
            carrusel_level("6000", name="Grand", ceiling=Decimal("9000"), overflow_to="next_level"),
            carrusel_level("5000", name="Minor", initial_reserve=Decimal("100")),
        ],
    )
    grand, minor = level_of(pool, 0), level_of(pool, 1)
    assert (grand.amount, grand.seed, grand.ceiling) == (Decimal("6000"), Decimal("6000"), Decimal("9000"))
    assert (minor.amount, minor.reserve) == (Decimal("5000"), Decimal("100"))
    moves = list(
        LedgerMove.objects.filter(pool=pool).order_by("pk").values_list("level_id", "kind", "amount")
    )
    assert moves == [
        (grand.pk, MoveKind.OPENING_SEED, Decimal("6000")),
        (minor.pk, MoveKind.OPENING_SEED, Decimal("5000")),
        (minor.pk, MoveKind.OPENING_RESERVE, Decimal("100")),
    ]
    assert AuditEntry.objects.filter(action="pool.created", venue=an10_venue).count() == 1
    assert reports.balance(pool).holds


@pytest.mark.parametrize(
    ("jurisdiction", "pack", "bet", "minimum"),
    [
        (Jurisdiction.AN10, "AN10_PSD_CARRUSEL", "1.00", "5000"),  # CJ-AN10-08: 5,000 x the bet
        (Jurisdiction.AN10, "AN10_PSD_CARRUSEL", "2.50", "12500"),
        (Jurisdiction.EU, "EU_PCD_JACKPOT_PROGRESSIVE_MANUAL", "1.00", "1000"),  # JP-EU12-10: 1,000 x
        (Jurisdiction.EU, "EU_PCD_JACKPOT_FIXED", "1.00", "2000"),  # JP-EU12-09: 2,000 x
        (Jurisdiction.AN10, "AN10_BJ_BOLSA", "1.00", "3000"),  # BJ-AN10-5: 3,000 x
    ],
)
def test_seed_minimum_per_jurisdiction(
    db: None, jurisdiction: str, pack: str, bet: str, minimum: str
) -> None:
    venue = venue_of(jurisdiction, f"L-{pack}-{bet}")
    floor = Decimal(minimum)
    with nothing_written(), pytest.raises(InvalidInput) as refused:
        create(
            venue,
            rule_pack=pack,
            carousel_bet=Decimal(bet),
            levels=[carrusel_level(str(floor - Decimal("0.01")))],
        )
    assert refused.value.code == "seed_below_minimum"
    assert Decimal(refused.value.details["minimum"]) == floor
    pool = create(venue, rule_pack=pack, carousel_bet=Decimal(bet), levels=[carrusel_level(str(floor))])
    assert level_of(pool).amount == floor
    if pack == "EU_PCD_JACKPOT_FIXED":
        assert level_of(pool).kind == "fixed"


@pytest.mark.parametrize(
    ("overrides", "code"),
    [
        ({"rule_pack": "NOPE"}, "unknown_rule_pack"),
        ({"rule_pack": "EU_PSD_JACKPOT"}, "rule_pack_jurisdiction"),
        ({"jurisdiction": Jurisdiction.ML, "rule_pack": "ML_PSD_CARRUSEL"}, "scope_jurisdiction"),
        ({"venue": None}, "pool_scope"),
        ({"carousel_bet": None}, "carousel_bet_required"),
        ({"carousel_bet": Decimal("-1")}, "bad_bet"),
        ({"carousel_bet": Decimal("1.001")}, "bad_bet"),
        ({"authorisation_ref": " "}, "authorisation_required"),
        ({"levels": []}, "no_levels"),
        ({"levels": [carrusel_level(rate="0.95", reserve="0.10")]}, "bad_rate"),
        ({"levels": [carrusel_level(rate="-0.1")]}, "bad_rate"),
        ({"levels": [carrusel_level(ceiling=Decimal("4999"))]}, "bad_ceiling"),
        ({"levels": [carrusel_level(mystery=True)]}, "bad_mystery"),
        ({"levels": [carrusel_level(overflow_to="next_level")]}, "bad_overflow"),
        ({"levels": [carrusel_level(), carrusel_level()]}, "bad_level_name"),
        ({"levels": [carrusel_level(seed="5000.0000001")]}, "bad_seed"),
        ({"currency": "EURO"}, "bad_currency"),
    ],
)
def test_bad_pools_are_refused_and_nothing_is_written(
    an10_venue: Venue, overrides: dict[str, object], code: str
) -> None:
    with nothing_written(), pytest.raises(InvalidInput) as refused:
        create(an10_venue, **overrides)
    assert refused.value.code == code


def test_a_fixed_pack_refuses_a_progressive_level(eu_venue: Venue) -> None:
    with pytest.raises(InvalidInput) as refused:
        create(
            eu_venue, rule_pack="EU_PCD_JACKPOT_FIXED", levels=[carrusel_level("2000", kind="progressive")]
        )
    assert refused.value.code == "bad_kind"


def test_pool_codes_are_unique(an10_venue: Venue) -> None:
    create(an10_venue)
    with pytest.raises(Conflict) as refused:
        create(an10_venue)
    assert refused.value.code == "pool_code_taken"
    assert Pool.objects.count() == 1


def test_network_pools_only_where_the_pack_links_establishments(db: None) -> None:
    """Spec §6.12: only blackjack progressives may span establishments (ML art. 18.2); pools without a
    table pack (machines, bingo programs) carry their own authorisation."""
    a, b = venue_of(Jurisdiction.AN10, "AN-1"), venue_of(Jurisdiction.AN10, "AN-2")
    network = Network.objects.create(name="Red Andalucía", code="RED-AN", jurisdiction=Jurisdiction.AN10)
    network.venues.set([a, b])
    with nothing_written(), pytest.raises(InvalidInput) as refused:
        create(a, venue=None, network=network)
    assert refused.value.code == "network_not_allowed"
    machines = create(a, venue=None, network=network, rule_pack="", carousel_bet=None, code="LINK-1")
    assert machines.network == network
    assert AuditEntry.objects.filter(action="pool.created").count() == 2  # in both venues' chains

    m1, m2 = venue_of(Jurisdiction.ML, "ML-1"), venue_of(Jurisdiction.ML, "ML-2")
    ml = Network.objects.create(name="Red Melilla", code="RED-ML", jurisdiction=Jurisdiction.ML)
    ml.venues.set([m1, m2])
    bj = create(m1, venue=None, network=ml, rule_pack="ML_BJ_PROGRESIVO", carousel_bet=None, code="BJ-1")
    pools.add_member(pool=bj, source_type="table", source_id="7", venue=m2, actor="operator")
    with pytest.raises(InvalidInput) as outside:
        pools.add_member(pool=bj, source_type="table", source_id="8", venue=a, actor="operator")
    assert outside.value.code == "member_outside_scope"


# --- members -------------------------------------------------------------------------------------------


def test_members_add_and_remove(carousel: Pool, an10_venue: Venue, pool_operator: User) -> None:
    with pytest.raises(Conflict) as twice:
        pools.add_member(
            pool=carousel, source_type="table", source_id="1", venue=an10_venue, actor=pool_operator
        )
    assert twice.value.code == "already_member"
    with pytest.raises(InvalidInput):
        pools.add_member(pool=carousel, source_type="table", source_id="a/b", venue=an10_venue, actor="x")
    with pytest.raises(InvalidInput):
        pools.add_member(pool=carousel, source_type="spaceship", source_id="1", venue=an10_venue, actor="x")
    removed = pools.remove_member(pool=carousel, source_type="table", source_id="1", actor=pool_operator)
    assert removed.removed_at is not None and removed.removed_by == "pool-operator"
    with pytest.raises(NotFound) as unknown:
        pools.remove_member(pool=carousel, source_type="table", source_id="1", actor=pool_operator)
    assert unknown.value.code == "unknown_member"
    again = pools.add_member(pool=carousel, source_type="table", source_id="1", venue=an10_venue, actor="x")
    assert PoolMember.objects.filter(pool=carousel, source_id="1").count() == 2
    assert again.removed_at is None


# --- parameters ----------------------------------------------------------------------------------------


def test_parameter_change_keeps_who_when_old_and_new(carousel: Pool, pool_operator: User) -> None:
    level = level_of(carousel)
    change = pools.change_parameters(
        level=level,
        changes={"contribution_rate": "0.60", "ceiling": "20000"},
        actor=pool_operator,
        authorisation_ref="AUT-2",
    )
    assert change.old == {"contribution_rate": "0.700000", "ceiling": None}
    assert change.new == {"contribution_rate": "0.60", "ceiling": "20000"}
    assert (change.changed_by, change.actor, change.authorisation_ref) == (
        pool_operator,
        "pool-operator",
        "AUT-2",
    )
    level.refresh_from_db()
    assert level.contribution_rate == Decimal("0.60") and level.params_version == 2
    receipt = contributions.contribute(
        pool=carousel, source=PoolSource.of("table", 1), bet=Decimal("1.00"), idempotency_key=key(), actor="t"
    )
    assert receipt.lines[0].to_meter == Decimal("0.60")
    assert AuditEntry.objects.filter(action="pool.parameters_changed").count() == 1


def test_parameter_change_is_refused_while_a_guard_says_the_pool_is_in_play(carousel: Pool) -> None:
    def hand_open(pool: Pool) -> str | None:
        return f"hand 12 is open at table 3 of {pool.code}"

    guards.register_open_play_guard(hand_open)
    try:
        with nothing_written(), pytest.raises(Conflict) as refused:
            pools.change_parameters(
                level=level_of(carousel),
                changes={"contribution_rate": "0.5"},
                actor="op",
                authorisation_ref="A",
            )
    finally:
        guards.unregister_open_play_guard(hand_open)
    assert refused.value.code == "pool_in_play"
    assert refused.value.details["problems"] == ["hand 12 is open at table 3 of CARR-1"]
    pools.change_parameters(
        level=level_of(carousel), changes={"contribution_rate": "0.5"}, actor="op", authorisation_ref="A"
    )


@pytest.mark.parametrize(
    ("changes", "error", "code"),
    [
        ({"must_hit_by": "6000"}, InvalidInput, "unknown_parameter"),
        ({"color": "red"}, InvalidInput, "unknown_parameter"),
        ({"seed": "4999.99"}, InvalidInput, "seed_below_minimum"),
        ({"contribution_rate": "0.95"}, InvalidInput, "bad_rate"),
        ({"contribution_rate": 0.5}, InvalidInput, "bad_rate"),
        ({"contribution_rate": "0.70"}, InvalidInput, "no_change"),
        ({}, InvalidInput, "no_change"),
        ({"ceiling": "5000.50"}, Conflict, "ceiling_below_meter"),
        ({"overflow_to": "next_level"}, InvalidInput, "bad_overflow"),
        ({"mystery": True}, InvalidInput, "bad_mystery"),
    ],
)
def test_bad_parameter_changes_write_nothing(
    carousel: Pool, changes: dict[str, object], error: type[Exception], code: str
) -> None:
    contributions.contribute(
        pool=carousel, source=PoolSource.of("table", 1), bet=Decimal("1.00"), idempotency_key=key(), actor="t"
    )
    from jackpots.services.folding import fold

    fold(carousel)
    with nothing_written(), pytest.raises(error) as refused:
        pools.change_parameters(level=level_of(carousel), changes=changes, actor="op", authorisation_ref="A")
    assert refused.value.code == code  # type: ignore[attr-defined]


def test_a_seed_raised_above_the_meter_is_funded_by_the_operator(carousel: Pool) -> None:
    pools.change_parameters(
        level=level_of(carousel), changes={"seed": "7000"}, actor="op", authorisation_ref="A"
    )
    level = level_of(carousel)
    assert level.amount == level.seed == Decimal("7000")
    assert LedgerMove.objects.filter(level=level, kind=MoveKind.OPERATOR_SEED).get().amount == Decimal("2000")
    assert reports.balance(carousel).holds


def test_mystery_changes_draw_a_secret_value_never_recorded(carousel: Pool) -> None:
    level = level_of(carousel)
    pools.change_parameters(
        level=level, changes={"ceiling": "8000", "mystery": True}, actor="op", authorisation_ref="A"
    )
    level.refresh_from_db()
    assert level.must_hit_by is not None and Decimal("5000") <= level.must_hit_by <= Decimal("8000")
    change = ParameterChange.objects.get(level=level)
    assert "must_hit_by" not in json.dumps([change.old, change.new])
    assert str(level.must_hit_by) not in json.dumps(list(AuditEntry.objects.values_list("data", flat=True)))


# --- corrections ---------------------------------------------------------------------------------------


def test_authorised_correction_is_recorded_and_balances(carousel: Pool, pool_operator: User) -> None:
    level = level_of(carousel)
    move = pools.correct_meter(
        level=level,
        amount_delta=Decimal("250.5"),
        reason="slot counter misread",
        authorised_by="jefe",
        actor=pool_operator,
    )
    assert (move.kind, move.amount, move.authorised_by, move.actor) == (
        "correction",
        Decimal("250.5"),
        "jefe",
        "pool-operator",
    )
    pools.correct_meter(
        level=level, amount_delta=Decimal("-100"), reason="undo part", authorised_by="jefe", actor="op"
    )
    assert level_of(carousel).amount == Decimal("5150.5")
    assert reports.balance(carousel).holds


@pytest.mark.parametrize(
    ("delta", "reason", "authoriser", "error", "code"),
    [
        ("-0.01", "r", "jefe", Conflict, "correction_below_seed"),
        ("0", "r", "jefe", InvalidInput, "bad_amount"),
        ("1", " ", "jefe", InvalidInput, "reason_required"),
        ("1", "r", "", InvalidInput, "authorisation_required"),
        ("0.0000001", "r", "jefe", InvalidInput, "bad_amount"),
    ],
)
def test_bad_corrections_write_nothing(
    carousel: Pool, delta: str, reason: str, authoriser: str, error: type[Exception], code: str
) -> None:
    with nothing_written(), pytest.raises(error) as refused:
        pools.correct_meter(
            level=level_of(carousel),
            amount_delta=Decimal(delta),
            reason=reason,
            authorised_by=authoriser,
            actor="op",
        )
    assert refused.value.code == code  # type: ignore[attr-defined]


def test_levels_without_pack_take_any_seed(an10_venue: Venue) -> None:
    pool = create(
        an10_venue, rule_pack="", carousel_bet=None, levels=[LevelSpec("Mini", Decimal("0"), Decimal("0.01"))]
    )
    assert PoolLevel.objects.get(pool=pool).amount == Decimal("0")
