"""Read a demo hall's SQLite database after a self-playing run and print one JSON summary (used by
test_demo_selfplay.py in a process of its own: ``SQLITE_PATH=... python tests/sqlite/demo_check.py``).

For every pool: the balancing report, the same report through the API (as the operator), and the report's
sums against the ledger rows added up one by one in Python with Decimal. For every machine: the
reconciliation page's status code.
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
from django.test import Client  # noqa: E402

from demo.hall import VENUE_LICENCE  # noqa: E402
from halls.models import Role, StaffRole  # noqa: E402
from jackpots.models import Award, Contribution, Pool  # noqa: E402
from jackpots.services import reports  # noqa: E402
from machines.models import Machine, MeterSnapshot, Play  # noqa: E402


def main() -> None:
    assert connection.vendor == "sqlite", connection.vendor
    operator = StaffRole.objects.get(venue__licence_number=VENUE_LICENCE, role=Role.OPERATOR).user
    client = Client()
    client.force_login(operator)
    pools = []
    for pool in Pool.objects.order_by("id"):
        report = reports.balance(pool)
        api = client.get(f"/api/pools/{pool.pk}/balance/")
        rows = Contribution.objects.filter(pool_id=pool.pk)
        by_row = {
            "bets": sum((c.bet for c in rows.only("bet")), Decimal(0)),
            "to_meter": sum((c.to_meter for c in rows.only("to_meter")), Decimal(0)),
            "paid": sum((a.amount for a in Award.objects.filter(pool_id=pool.pk).only("amount")), Decimal(0)),
        }
        pools.append(
            {
                "id": pool.pk,
                "code": pool.code,
                "holds": report.holds,
                "api_status": api.status_code,
                "api_holds": api.json().get("holds") if api.status_code == 200 else None,
                "api_bets": [level["bets"] for level in api.json().get("levels", [])]
                if api.status_code == 200
                else None,
                "contributions": rows.count(),
                "levels": [
                    {
                        "name": level.name,
                        "opening": str(level.opening),
                        "contributions": str(level.contributions),
                        "awards": str(level.awards),
                        "closing": str(level.closing),
                        "closing_from_ledger": str(level.closing_from_ledger),
                        "bets": str(level.bets),
                        "hits": level.hits,
                        "contribution_count": level.contribution_count,
                    }
                    for level in report.levels
                ],
                "report_bets": str(sum((level.bets for level in report.levels), Decimal(0))),
                "report_to_meter": str(sum((level.contributions for level in report.levels), Decimal(0))),
                "report_paid": str(sum((level.prizes_paid for level in report.levels), Decimal(0))),
                "by_row": {k: str(v) for k, v in by_row.items()},
            }
        )
    machines = []
    for machine in Machine.objects.order_by("id"):
        page = client.get(f"/machines/{machine.pk}/reconciliation/")
        machines.append(
            {
                "asset": machine.asset_number,
                "status": page.status_code,
                "plays": Play.objects.filter(machine=machine).count(),
                "snapshots": MeterSnapshot.objects.filter(machine=machine).count(),
            }
        )
    print(json.dumps({"pools": pools, "machines": machines}))


if __name__ == "__main__":
    main()
