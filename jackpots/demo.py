"""The pool engine's part of the demo hall: a póquer carrusel with two self-playing tables.

Imported by ``halls.demo_seed.seed_demo`` (Django's module autodiscovery), which then calls ``seed_jackpots``.
Everything is created through the services (``jackpots.services.pools.create_pool``,
``jackpots.tables.services.tables.create_table`` / ``join_pool``, which adds the pool member) and only when
missing, so a restart keeps the pool, its meter and its ledger.

- "Carrusel Póquer": Melilla's póquer sin descarte carrusel (``ML_PSD_CARRUSEL``, spec §6.2: royal flush
  takes the whole carrusel, straight flush 10 %), a stipulated pool bet of 1 € at tables of 5 € minimum
  (the pack caps the pool bet at half the table minimum). The pack sets no minimum seed; the demo seeds
  1,000 €. Tables "Demo Póquer 1" and "Demo Póquer 2" are its members, and play by themselves while the
  demo runs (``jackpots.tables.tasks.autoplay_tables``, switched on by HALL_DEMO_TABLE_AUTOPLAY).
- No "Bolsa Blackjack": Melilla's only blackjack pack (``ML_BJ_PROGRESIVO``, art. 18.2) takes its
  combinations AND its paytable from the authorisation (OP-30), and an authorised paytable alone cannot
  make it usable (the pack has no hand ordering to rank a blackjack hand with), so it is left out rather
  than invented.
"""

from __future__ import annotations

from decimal import Decimal

from halls.demo_seed import DemoHall, register_seeder
from jackpots.models import Pool
from jackpots.services import pools
from jackpots.services.pools import LevelSpec
from jackpots.tables.models import CasinoTable, TableGame
from jackpots.tables.services import tables

POOL_CODE = "DEMO-ML-CARRUSEL"
POOL_NAME = "Carrusel Póquer"
RULE_PACK = "ML_PSD_CARRUSEL"
CAROUSEL_BET = Decimal("1.00")
TABLE_MINIMUM = Decimal("5.00")
SEED = Decimal("1000.00")
CONTRIBUTION_RATE = Decimal("0.75")
RESERVE_RATE = Decimal("0.05")
# (number, name): the tables the autoplay task plays are the demo venue's tables named "Demo …".
TABLE_PREFIX = "Demo "
TABLES = ((1, "Demo Póquer 1"), (2, "Demo Póquer 2"))


def seed_jackpots(hall: DemoHall) -> None:
    venue = hall.venue
    actor = hall.operator
    pool = Pool.objects.filter(code=POOL_CODE).first()
    if pool is None:
        pool = pools.create_pool(
            name=POOL_NAME,
            code=POOL_CODE,
            jurisdiction=venue.jurisdiction,
            currency=venue.currency,
            authorisation_ref="DEMO — not an authorisation",
            rule_pack=RULE_PACK,
            venue=venue,
            levels=[
                LevelSpec(
                    name="Carrusel",
                    seed=SEED,
                    contribution_rate=CONTRIBUTION_RATE,
                    reserve_rate=RESERVE_RATE,
                )
            ],
            carousel_bet=CAROUSEL_BET,
            actor=actor,
        )
    for number, name in TABLES:
        table = CasinoTable.objects.filter(venue=venue, number=number).first()
        if table is None:
            table = tables.create_table(
                venue=venue,
                number=number,
                name=name,
                game=TableGame.POKER_SIN_DESCARTE,
                table_minimum=TABLE_MINIMUM,
                rule_pack=RULE_PACK,
                actor=actor,
            )
        if table.pool_id is None:
            tables.join_pool(table=table, pool=pool, actor=actor)
    hall.notes.append(
        f"pool {pool.name} ({pool.rule_pack}, pool bet {pool.carousel_bet} {pool.currency}): "
        f"tables {', '.join(name for _, name in TABLES)} play by themselves"
    )


register_seeder(seed_jackpots)
