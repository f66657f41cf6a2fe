"""Property test: random sequences of contributions (with repeated keys), folds, hand and level awards,
mystery hits, parameter changes (also while a guard says the pool is in play) and corrections.

After every step, per level: the balancing identity holds exactly (ledger vs the recorded meter), no
meter stands below its seed, and the meter never went down except by an award (a hand, a level award, a
mystery hit at a fold) or a negative authorised correction.
"""

from __future__ import annotations

import contextlib
import itertools
from decimal import Decimal

import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule, run_state_machine_as_test

from halls.errors import Conflict, DomainError
from halls.models import Jurisdiction, Venue
from halls.money import METER_QUANTUM
from jackpots.engine import Winner
from jackpots.models import Contribution, Pool, PoolLevel, PoolSettlement
from jackpots.poker import rank_hand
from jackpots.services import awards, contributions, folding, guards, pools, reports
from jackpots.services.pools import LevelSpec
from jackpots.sources import PoolSource
from tests.jackpots.pool_fixtures import nothing_written

_runs = itertools.count(1)

HANDS = {
    "royal": "AS KS QS JS TS",
    "straight_flush": "9H 8H 7H 6H 5H",
    "four": "QS QH QD QC 2S",
    "full": "JS JH JD 4C 4S",
    "nothing": "2S 3D 5C 8H JD",
}
money = st.decimals(min_value=Decimal("0.01"), max_value=Decimal("50.00"), places=2)
rates = st.decimals(min_value=Decimal("0"), max_value=Decimal("0.6"), places=6)


class PoolMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        run = next(_runs)
        venue = Venue.objects.create(
            name=f"P{run}", licence_number=f"PROP-{run}", jurisdiction=Jurisdiction.AN10
        )
        self.pool = pools.create_pool(
            name="Property",
            code=f"PROP-{run}",
            jurisdiction=Jurisdiction.AN10,
            authorisation_ref="A",
            rule_pack="AN10_PSD_CARRUSEL",
            venue=venue,
            levels=[
                LevelSpec(
                    "Grand", Decimal("5000"), Decimal("0.5"), Decimal("0.1"), Decimal("5060"), "next_level"
                ),
                LevelSpec(
                    "Minor", Decimal("5000"), Decimal("0.2"), Decimal("0.05"), Decimal("5030"), mystery=True
                ),
            ],
            carousel_bet=Decimal("1.00"),
            actor="prop",
        )
        for table in ("1", "2", "3"):
            pools.add_member(pool=self.pool, source_type="table", source_id=table, venue=venue, actor="prop")
        self.keys: list[tuple[str, PoolSource, Decimal]] = []
        self.in_play = False
        self.meters = self.shown()
        self.hits = 0

    def levels(self) -> list[PoolLevel]:
        return list(PoolLevel.objects.filter(pool=self.pool).order_by("position"))

    def shown(self) -> dict[int, Decimal]:
        """Each level's live meter: folded + unfolded, capped at the ceiling (what a screen shows, exact)."""
        result = {}
        for level in self.levels():
            unfolded = sum(
                Contribution.objects.filter(level=level, id__gt=level.folded_through).values_list(
                    "to_meter", flat=True
                ),
                Decimal(0),
            )
            live = level.amount + unfolded
            result[level.pk] = min(live, level.ceiling) if level.ceiling is not None else live
        return result

    def mystery_hits(self) -> int:
        return PoolSettlement.objects.filter(pool=self.pool, kind="mystery").count()

    def moved(self, *, may_drop: bool) -> None:
        """Check the step: a meter goes down only by an award (any fold may pay a mystery hit) or a
        negative correction."""
        now = self.shown()
        hits = self.mystery_hits()
        may_drop = may_drop or hits > self.hits
        self.hits = hits
        if not may_drop:
            for level_id, before in self.meters.items():
                assert now[level_id] >= before, f"level {level_id} went down from {before} to {now[level_id]}"
        self.meters = now

    # --- rules -----------------------------------------------------------------------------------------

    @rule(bet=money, table=st.sampled_from(["1", "2", "3"]), seat=st.integers(1, 7))
    def contribute(self, bet: Decimal, table: str, seat: int) -> None:
        k = f"c-{len(self.keys)}"
        source = PoolSource.of("table", table).at("seat", seat)
        contributions.contribute(pool=self.pool, source=source, bet=bet, idempotency_key=k, actor="t")
        self.keys.append((k, source, bet))
        self.moved(may_drop=False)

    @rule(data=st.data())
    def repeat_a_key(self, data: st.DataObject) -> None:
        if not self.keys:
            return
        k, source, bet = data.draw(st.sampled_from(self.keys))
        with nothing_written():
            receipt = contributions.contribute(
                pool=self.pool, source=source, bet=bet, idempotency_key=k, actor="t"
            )
        assert receipt.replayed

    @rule()
    def fold(self) -> None:
        result = folding.fold(self.pool)
        assert result.mystery_hits == self.mystery_hits() - self.hits
        self.moved(may_drop=False)

    @rule(names=st.lists(st.sampled_from(sorted(HANDS)), min_size=1, max_size=4))
    def settle_a_hand(self, names: list[str]) -> None:
        winners = [Winner(str(seat), rank_hand(HANDS[name]), False) for seat, name in enumerate(names, 1)]
        awards.award_hand(
            pool=self.pool, winners=winners, idempotency_key=f"h-{len(self.keys)}-{names}", actor="croupier"
        )
        self.moved(may_drop=True)

    @rule(
        position=st.sampled_from([0, 1]),
        percent=st.sampled_from([Decimal("100"), Decimal("10"), Decimal("0.5")]),
    )
    def award_a_percentage(self, position: int, percent: Decimal) -> None:
        awards.award_level(
            level=self.levels()[position],
            percent=percent,
            winner={"source": "machine:1"},
            idempotency_key=f"p-{next(_runs)}",
            actor="gw",
        )
        self.moved(may_drop=True)

    @rule(
        position=st.sampled_from([0, 1]),
        amount=st.decimals(min_value=Decimal("1"), max_value=Decimal("6000"), places=2),
    )
    def award_a_fixed_amount(self, position: int, amount: Decimal) -> None:
        awards.award_level(
            level=self.levels()[position],
            amount=amount,
            winner={"source": "machine:2"},
            idempotency_key=f"f-{next(_runs)}",
            actor="gw",
        )
        self.moved(may_drop=True)

    @rule(position=st.sampled_from([0, 1]), rate=rates, reserve=rates)
    def change_rates(self, position: int, rate: Decimal, reserve: Decimal) -> None:
        self.change(position, {"contribution_rate": str(rate), "reserve_rate": str(reserve)})

    @rule(
        position=st.sampled_from([0, 1]),
        seed=st.decimals(min_value=Decimal("4990"), max_value=Decimal("5025"), places=2),
    )
    def change_seed(self, position: int, seed: Decimal) -> None:
        self.change(position, {"seed": str(seed)})

    @rule(
        position=st.sampled_from([0, 1]),
        ceiling=st.decimals(min_value=Decimal("5000"), max_value=Decimal("5100"), places=2),
    )
    def change_ceiling(self, position: int, ceiling: Decimal) -> None:
        self.change(position, {"ceiling": str(ceiling)})

    @rule()
    def open_or_close_a_hand(self) -> None:
        self.in_play = not self.in_play

    def change(self, position: int, changes: dict[str, str]) -> None:
        level = self.levels()[position]

        def guard(pool: Pool) -> str | None:
            return "hand open" if self.in_play and pool.pk == self.pool.pk else None

        guards.register_open_play_guard(guard)
        try:
            if self.in_play:
                with nothing_written(), pytest.raises(Conflict):
                    pools.change_parameters(level=level, changes=changes, actor="op", authorisation_ref="A")
                return
            # A refusal (seed below 5,000 x the bet, ceiling below the meter, rates over 1) writes nothing.
            with contextlib.suppress(DomainError):
                pools.change_parameters(level=level, changes=changes, actor="op", authorisation_ref="A")
        finally:
            guards.unregister_open_play_guard(guard)
        self.moved(may_drop=False)

    @rule(
        position=st.sampled_from([0, 1]),
        delta=st.decimals(min_value=Decimal("-40"), max_value=Decimal("40"), places=6),
    )
    def correct(self, position: int, delta: Decimal) -> None:
        try:
            pools.correct_meter(
                level=self.levels()[position],
                amount_delta=delta,
                reason="count",
                authorised_by="jefe",
                actor="op",
            )
        except DomainError:
            self.moved(may_drop=False)
            return
        self.moved(may_drop=delta < 0)

    # --- invariants ------------------------------------------------------------------------------------

    @invariant()
    def balances_exactly(self) -> None:
        report = reports.balance(self.pool)
        assert report.holds, report.as_dict()

    @invariant()
    def no_meter_below_its_seed(self) -> None:
        for level in self.levels():
            assert level.amount >= level.seed, (level.name, level.amount, level.seed)
            assert level.reserve >= 0
            assert level.amount == level.amount.quantize(METER_QUANTUM)


@pytest.mark.django_db
def test_random_sequences_keep_the_identity_and_the_seeds() -> None:
    run_state_machine_as_test(
        PoolMachine,
        settings=settings(max_examples=25, stateful_step_count=30, deadline=None),
    )
