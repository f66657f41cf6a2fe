"""Read a demo hall's SQLite database after a run with machines through SAS bridges and print one JSON summary
(used by test_demo_sas.py in a process of its own: ``SQLITE_PATH=... python tests/sqlite/demo_sas_check.py
DEMO-M01 DEMO-M02 ...``, the bridged machines' assets as arguments).

The machines' pool: its balancing report (in-process and through the API, as the operator). Per machine
named: its plays; the pool's contributions from it, as (seq, bet) per level, against its plays' (seq, bet);
what the contributions put on the meter against bet × rate of its plays; its meter snapshots, each
consecutive pair's coin-in and games grown against the plays recorded between them; its alerts, sequence gaps
and gap contributions; its progressive hits, paid or not, and the plays after each (the machine played on
once the cashier's payment reset its hand pay).
"""

from __future__ import annotations

import itertools
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
from django.db.models import Count, Sum  # noqa: E402
from django.test import Client  # noqa: E402

from demo.hall import VENUE_LICENCE  # noqa: E402
from demo.machines import POOL_CODE  # noqa: E402
from halls.models import Role, StaffRole  # noqa: E402
from jackpots.models import Contribution, Pool, PoolLevel  # noqa: E402
from jackpots.services import reports  # noqa: E402
from machines.models import Machine, MachineAlert, MeterSnapshot, Play, ProgressiveHit, SequenceGap  # noqa: E402


def machine_summary(machine: Machine, levels: list[PoolLevel]) -> dict[str, object]:
    plays = list(Play.objects.filter(machine=machine).order_by("seq").values_list("seq", "bet"))
    played = sorted((seq, str(bet)) for seq, bet in plays)
    rows = Contribution.objects.filter(source=f"machine:{machine.pk}")
    per_level = {}
    for level in levels:
        keyed = rows.filter(level_id=level.pk).values_list("idempotency_key", "bet", "to_meter")
        per_level[level.name] = {
            "contributed": sorted(
                (int(key.rsplit(":", 1)[1]), str(bet)) for key, bet, _ in keyed if "gap" not in key
            ),
            "gap_keys": [key for key, _, _ in keyed if "gap" in key],
            "to_meter": str(sum((to_meter for _, _, to_meter in keyed), Decimal(0))),
            "expected_to_meter": str(sum((bet for _, bet in plays), Decimal(0)) * level.contribution_rate),
        }
    snapshots = list(
        MeterSnapshot.objects.filter(machine=machine)
        .order_by("seq")
        .values_list("seq", "coin_in", "games_played")
    )
    intervals = []
    for (p_seq, p_in, p_games), (n_seq, n_in, n_games) in itertools.pairwise(snapshots):
        between = Play.objects.filter(machine=machine, seq__gt=p_seq, seq__lt=n_seq).aggregate(
            bets=Sum("bet"), n=Count("id")
        )
        intervals.append(
            {
                "seqs": [p_seq, n_seq],
                "coin_in_grown": str(n_in - p_in),
                "bets": str(between["bets"] or Decimal("0.00")),
                "games_grown": n_games - p_games,
                "plays": between["n"],
            }
        )
    hits = []
    for hit in ProgressiveHit.objects.filter(machine=machine).order_by("seq"):
        hits.append(
            {
                "seq": hit.seq,
                "level": hit.level.name,
                "amount": str(hit.amount),
                "paid": hit.paid_at is not None,
                "paid_by": hit.paid_by_label,
                "plays_after": Play.objects.filter(machine=machine, seq__gt=hit.seq).count(),
            }
        )
    return {
        "asset": machine.asset_number,
        "plays": played,
        "levels": per_level,
        "snapshots": len(snapshots),
        "intervals": intervals,
        "alerts": sorted(MachineAlert.objects.filter(machine=machine).values_list("kind", flat=True)),
        "gaps": SequenceGap.objects.filter(machine=machine).count(),
        "hits": hits,
        "software": machine.software_version,
    }


def main(assets: list[str]) -> None:
    assert connection.vendor == "sqlite", connection.vendor
    operator = StaffRole.objects.get(venue__licence_number=VENUE_LICENCE, role=Role.OPERATOR).user
    client = Client()
    client.force_login(operator)
    pool = Pool.objects.get(code=POOL_CODE)
    report = reports.balance(pool)
    api = client.get(f"/api/pools/{pool.pk}/balance/")
    levels = list(PoolLevel.objects.filter(pool=pool).order_by("id"))
    machines = [
        machine_summary(m, levels)
        for m in Machine.objects.filter(asset_number__in=assets).order_by("asset_number")
    ]
    others = Machine.objects.filter(asset_number__startswith="DEMO-M").exclude(asset_number__in=assets)
    print(
        json.dumps(
            {
                "pool": {
                    "holds": report.holds,
                    "api_status": api.status_code,
                    "api_holds": api.json().get("holds") if api.status_code == 200 else None,
                    "hits": sum(level.hits for level in report.levels),
                },
                "machines": machines,
                "other_plays": Play.objects.filter(machine__in=others).count(),
            }
        )
    )


if __name__ == "__main__":
    main(sys.argv[1:])
