"""Read the demo hall's SQLite database after it played and print one JSON summary of its electronic rooms
(used by test_demo_electronic.py in a process of its own: ``SQLITE_PATH=... python
tests/sqlite/demo_electronic_check.py``).

Per speciality: games by state, balls drawn, purchases (count, cards, amount), the prizes won with their
wins; and the money, row by row in Decimal: each game past its sales sold exactly its purchases; each prize
won was shared to the cent (wins = share × winners, the remainder what is left of the amount of a sales
prize); each simulated player card holds exactly what it was loaded with, less its purchases, plus its wins.
"""

from __future__ import annotations

import json
import os
import sys
from decimal import Decimal
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
for name in ("DATABASE_URL", "REDIS_URL"):
    os.environ.pop(name, None)

import django  # noqa: E402

django.setup()

from django.db import connection  # noqa: E402

from bingo.electronic import provisioning  # noqa: E402
from bingo.electronic.models import EGameState, ElectronicGame, EPrize, EWin, Purchase, Speciality  # noqa: E402
from bingo.electronic.prizetable import POOL_TYPES  # noqa: E402
from demo.electronic import SPECIALITIES  # noqa: E402
from halls.cashier.services import player_cards  # noqa: E402

ZERO = Decimal(0)


def main() -> None:
    assert connection.vendor == "sqlite", connection.vendor
    out = []
    for _room, code, _name, _rules in SPECIALITIES:
        speciality = Speciality.objects.get(code=code)
        games = list(ElectronicGame.objects.filter(speciality=speciality).order_by("number"))
        purchases = list(Purchase.objects.filter(game__speciality=speciality).select_related("player_card"))
        problems: list[str] = []
        for game in games:
            if game.state == EGameState.SELLING:
                continue
            mine = [p for p in purchases if p.game_id == game.pk]
            if game.cards_sold != sum(p.cards for p in mine):
                problems.append(f"game {game.number}: cards_sold {game.cards_sold}")
            if game.sales_total != sum((p.amount for p in mine), ZERO):
                problems.append(f"game {game.number}: sales_total {game.sales_total}")
        prizes = list(EPrize.objects.filter(game__speciality=speciality, won=True).order_by("id"))
        for prize in prizes:
            wins = list(EWin.objects.filter(prize=prize))
            if len(wins) != prize.winners or any(w.amount != prize.share for w in wins):
                problems.append(
                    f"prize {prize.code} of game {prize.game_id}: wins {[w.amount for w in wins]}"
                )
            if prize.type not in POOL_TYPES and prize.share * prize.winners + prize.remainder != prize.amount:
                problems.append(f"prize {prize.code} of game {prize.game_id}: share × winners + remainder")
        cards_checked = 0
        for card in {p.player_card for p in purchases}:
            spent = sum((p.amount for p in purchases if p.player_card_id == card.pk), ZERO)
            won = sum((w.amount for w in EWin.objects.filter(purchase__player_card=card)), ZERO)
            balance = player_cards.balance(card)
            if balance != provisioning.FLOAT - spent + won:
                problems.append(f"card {card.number}: {balance} != {provisioning.FLOAT} - {spent} + {won}")
            cards_checked += 1
        out.append(
            {
                "code": code,
                "games": {state: sum(g.state == state for g in games) for state in EGameState.values},
                "balls": sum(g.balls_drawn for g in games),
                "purchases": len(purchases),
                "cards": sum(p.cards for p in purchases),
                "spent": str(sum((p.amount for p in purchases), ZERO)),
                "prizes_won": [f"{p.code}@{p.ordinal}:{p.winners}x{p.share}" for p in prizes],
                "won": str(sum((p.share * p.winners for p in prizes), ZERO)),
                "cards_checked": cards_checked,
                "problems": problems,
            }
        )
    print(json.dumps({"specialities": out}))


if __name__ == "__main__":
    main()
