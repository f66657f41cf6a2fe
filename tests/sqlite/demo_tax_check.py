"""After the self-playing demo (test_demo_selfplay.py), its month's gaming-tax return checked by hand: run as
``SQLITE_PATH=... python tests/sqlite/demo_tax_check.py`` in a process of its own, it prints one JSON
summary.

The demo plays in the current month, which is not closed: the venue's lab clock (never in production) is
moved to the first day of the next month, then the return is computed through the product
(halls.tax.services.returns.compute_return, with the demo's rate table, demo/tax.py). Beside it, the same
month worked out by hand from the rows, not through the figures' sources or halls.tax.compute: traditional
bingo at face value from the cashier's sale and return operations of the games that closed in the month (a
void game counts nothing), its prizes from the awards; electronic and automatic bingo from the terminals'
purchases less every prize credited; each machine type's bets and prizes from its meter readings, the type B
machines counted; the tables' drop; then the demo's rates applied with Python's own decimal rounding
(ROUND_HALF_UP to the cent, the table's rule), each line's due and the total.
"""

from __future__ import annotations

import json
import os
import sys
from collections import defaultdict
from datetime import date, datetime, time, timedelta
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path
from zoneinfo import ZoneInfo

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
for name in ("DATABASE_URL", "REDIS_URL"):
    os.environ.pop(name, None)

import django  # noqa: E402

django.setup()

from django.contrib.auth.models import User  # noqa: E402
from django.db import connection  # noqa: E402

from bingo.electronic.models import ElectronicGame, EWin, Purchase  # noqa: E402
from bingo.traditional.models import Award, Game, GameState, ProgramAward, SaleOperation  # noqa: E402
from demo.hall import VENUE_LICENCE  # noqa: E402
from demo.tax import LINES  # noqa: E402
from halls.models import Venue  # noqa: E402
from halls.services import venueclock  # noqa: E402
from halls.tax import compute  # noqa: E402
from halls.tax.services import returns  # noqa: E402
from jackpots.tables.models import TableDrop  # noqa: E402
from machines.models import Machine, MeterSnapshot  # noqa: E402

ZERO = Decimal("0.00")
CENT = Decimal("0.01")


def by_hand(venue: Venue, first: date, last: date) -> dict[str, dict[str, str]]:
    zone = ZoneInfo(venue.time_zone)
    start = datetime.combine(first, time.min, tzinfo=zone)
    end = datetime.combine(last + timedelta(days=1), time.min, tzinfo=zone)
    played: dict[str, Decimal] = defaultdict(lambda: ZERO)
    prizes: dict[str, Decimal] = defaultdict(lambda: ZERO)
    machines: dict[str, int] = defaultdict(int)
    drop = ZERO

    games = Game.objects.filter(
        room__venue=venue, state=GameState.CLOSED, closed_at__gte=start, closed_at__lt=end
    ).values_list("pk", flat=True)
    for kind, amount in SaleOperation.objects.filter(game_id__in=list(games)).values_list("kind", "amount"):
        played["traditional"] += amount if kind == "sell" else -amount
    for amount in Award.objects.filter(result__game_id__in=list(games)).values_list("amount", flat=True):
        prizes["traditional"] += amount
    for amount in ProgramAward.objects.filter(game_program__game_id__in=list(games)).values_list(
        "amount", flat=True
    ):
        prizes["traditional"] += amount

    for game in ElectronicGame.objects.filter(
        speciality__venue=venue, state="closed", closed_at__gte=start, closed_at__lt=end
    ).select_related("speciality"):
        kind = "automatic" if game.speciality.family.startswith("auto") else "electronic"
        for amount in Purchase.objects.filter(game=game).values_list("amount", flat=True):
            played[kind] += amount
        for amount in EWin.objects.filter(prize__game=game).values_list("amount", flat=True):
            prizes[kind] += amount

    for machine in Machine.objects.filter(venue=venue, created_at__lt=end):
        kind = f"machine_{machine.machine_type.lower()}"
        machines[kind] += 1
        readings = list(MeterSnapshot.objects.filter(machine=machine).order_by("seq"))
        before = [r for r in readings if r.taken_at < start]
        upto = [r for r in readings if r.taken_at < end]
        if upto:
            played[kind] += upto[-1].coin_in - (before[-1].coin_in if before else ZERO)
            paid = upto[-1].coin_out + upto[-1].jackpots_paid
            prizes[kind] += paid - ((before[-1].coin_out + before[-1].jackpots_paid) if before else ZERO)

    for amount in TableDrop.objects.filter(table__venue=venue, day__gte=first, day__lte=last).values_list(
        "amount", flat=True
    ):
        drop += amount

    lines = {}
    for rate in LINES:
        kind, basis = str(rate["game_type"]), str(rate["basis"])
        if basis == "sales":
            base = played[kind]
        elif basis == "net":
            base = max(ZERO, played[kind] - prizes[kind])
        elif basis == "drop":
            base = drop
        else:
            base = ZERO
        due = ZERO
        if rate["rate_percent"] is not None:
            due += (base * Decimal(rate["rate_percent"]) / 100).quantize(CENT, rounding=ROUND_HALF_UP)
        if rate["fee_per_machine"] is not None:
            due += Decimal(rate["fee_per_machine"]) * machines[kind]
        lines[kind] = {
            "played": str(played[kind].quantize(CENT)),
            "prizes": str(prizes[kind].quantize(CENT)),
            "base": str(base.quantize(CENT)),
            "machines": str(machines[kind]),
            "due": str(due.quantize(CENT)),
        }
    return lines


def main() -> None:
    assert connection.vendor == "sqlite", connection.vendor
    venue = Venue.objects.get(licence_number=VENUE_LICENCE)
    today = venueclock.today(venue)
    month = date(today.year, today.month, 1)
    after = (month + timedelta(days=32)).replace(day=1)
    zone = ZoneInfo(venue.time_zone)
    actor = User.objects.filter(is_superuser=True).first() or User.objects.create_superuser("tax-check")
    venueclock.move(venue=venue, actor=actor, to=datetime.combine(after, time(hour=9), tzinfo=zone))
    label = month.strftime("%Y-%m")
    draft = returns.compute_return(venue=venue, period=label)
    shown = ("played", "prizes", "base", "machines", "due")
    product = {
        row[0]: {k: v for k, v in zip(compute.COLUMNS, row, strict=True) if k in shown}
        for row in (compute.line_row(line) for line in draft.computed.lines)
    }
    hand = by_hand(venue, month, after - timedelta(days=1))
    total_by_hand = sum((Decimal(line["due"]) for line in hand.values()), ZERO)
    print(
        json.dumps(
            {
                "period": label,
                "product": product,
                "hand": hand,
                "product_total": str(draft.computed.total),
                "hand_total": str(total_by_hand),
            }
        )
    )


if __name__ == "__main__":
    main()
