"""The central's read models on a loopback network of three venues in two regions (central_pages_support):
the pools' meters and decisions, the simultaneous game hall by hall, and the reports per venue, region and
operator, which reconcile exactly with the pools."""

from __future__ import annotations

from datetime import timedelta
from decimal import ROUND_HALF_UP, Decimal

import pytest
from django.db.models import Sum
from django.utils import timezone

from bingo.network.interconnected.models import RoundContribution, RoundShare
from bingo.network.interconnected.services import central_overview, reports
from bingo.network.interconnected.services import readmodels as network_readmodels
from bingo.network.simultaneous.models import NetworkPrize as GamePrize
from bingo.network.simultaneous.models import ReportedSale
from jackpots.models import Contribution
from tests.bingo.network.interconnected.central_pages_support import SB_COUNTS, Scene, build_scene
from tests.bingo.traditional.game_support import fresh_process, no_celery  # noqa: F401 (autouse fixtures)

pytestmark = pytest.mark.django_db


@pytest.fixture
def scene(monkeypatch: pytest.MonkeyPatch) -> Scene:
    return build_scene(monkeypatch)


def _today_report(by: reports.GroupBy) -> reports.Report:
    today = timezone.localdate()
    return reports.network_report(group_by=by, date_from=today, date_to=today)


def test_the_pools_and_games_read_models(scene: Scene) -> None:
    (card,) = central_overview.network_prizes()
    assert card.code == "IB1" and card.max_ball == 40
    # The pool's live meter is the engine's: after round 1 (118.01 shared, 0.01 left, topped up to the
    # seed 100.01) plus hall 1's 2.00 of round 2.
    assert card.amount == network_readmodels.live_meter(scene.prize) == Decimal("102.01")
    assert central_overview.live_meters() == {"IB1": {"amount": "102.01", "currency": "EUR"}}
    assert [(m.licence, m.region, m.operator) for m in card.members] == [
        ("ML-B-0001", "ML", "B11111111 · Operator B11111111"),
        ("ML-B-0002", "ML", "B22222222 · Operator B22222222"),
        ("ML-B-0003", "CE", "B11111111 · Operator B11111111"),
    ]
    (running,) = card.open_rounds
    assert (running.number, running.contributed, running.reported) == (2, ["ML-B-0001"], [])
    (decided,) = card.decisions
    assert (decided.number, decided.ordinal, decided.share, decided.rule) == (
        1,
        15,
        Decimal("59.00"),
        "all_reported",
    )
    assert [(w.licence, w.card, w.amount) for w in decided.winners] == [
        ("ML-B-0001", "A-0007", Decimal("59.00")),
        ("ML-B-0002", "A-0007", Decimal("59.00")),
    ]
    assert card.paid == Decimal("118.00")

    # The simultaneous game, hall by hall.
    (game,) = central_overview.network_games()
    assert (game.code, game.state, game.cards_sold, game.sales_total) == (
        "SB-1",
        "drawing",
        13,
        Decimal("13.00"),
    )
    assert [(h.licence, h.allocated, h.sold, h.amount) for h in game.halls] == [
        ("ML-B-0001", 12, 6, Decimal("6.00")),
        ("ML-B-0002", 12, 4, Decimal("4.00")),
        ("ML-B-0003", 12, 3, Decimal("3.00")),
    ]
    assert game.balls_drawn == 15 and len(game.last_balls) == 10
    assert [(c.hall, c.kind, c.status) for c in game.claims] == [("Bingo 1", "bingo", "won")]
    assert sorted((d.kind, d.scope, d.amount, d.winners) for d in game.decisions) == [
        ("bingo", "network", Decimal("5.85"), 1),
        ("hall", "Bingo 1", Decimal("0.65"), 1),
    ]
    assert game.in_progress


def test_the_reports_reconcile_with_the_pools_to_the_cent(scene: Scene) -> None:
    report = _today_report(reports.GroupBy.VENUE)
    pool_meter = Contribution.objects.filter(pool_id=scene.prize.pool_id).aggregate(s=Sum("to_meter"))["s"]
    pool_reserve = Contribution.objects.filter(pool_id=scene.prize.pool_id).aggregate(s=Sum("to_reserve"))[
        "s"
    ]
    assert sum(r.contribution("IB1") for r in report.rows) == pool_meter + pool_reserve == Decimal("20")
    assert report.total.contribution("IB1") == pool_meter + pool_reserve
    (check,) = report.checks
    assert check.holds and (check.ledger_meter, check.tagged_meter) == (pool_meter, pool_meter)
    assert report.reconciled
    by_venue = {r.key: r for r in report.rows}
    assert {k: r.contribution("IB1") for k, r in by_venue.items()} == {
        "ML-B-0001": Decimal("8.000000"),
        "ML-B-0002": Decimal("6.000000"),
        "ML-B-0003": Decimal("6.000000"),
    }
    # Sales of network games: the round games' (what funded the prize) and the simultaneous game's.
    assert [(by_venue[k].ib_sales, by_venue[k].sb_sales) for k in sorted(by_venue)] == [
        (Decimal("80.00"), Decimal("6.00")),
        (Decimal("60.00"), Decimal("4.00")),
        (Decimal("60.00"), Decimal("3.00")),
    ]
    # Prizes won: hall 1 the interconnected share, the network Bingo and its hall's prize; hall 2 its share.
    assert [by_venue[k].prizes for k in sorted(by_venue)] == [
        Decimal("59.00") + Decimal("5.85") + Decimal("0.65"),
        Decimal("59.00"),
        Decimal("0"),
    ]
    shares = RoundShare.objects.aggregate(s=Sum("amount"))["s"]
    sb_paid = sum(p.share * p.winners for p in GamePrize.objects.all())
    assert report.total.prizes == shares + sb_paid
    sold = sum(s.amount for s in ReportedSale.objects.all())
    assert report.total.sales == RoundContribution.objects.aggregate(s=Sum("sales"))["s"] + sold
    assert sold == Decimal(sum(SB_COUNTS))
    # The network's return: prizes won per 100 of sales (two decimals).
    assert report.total.return_percent == (report.total.prizes * 100 / report.total.sales).quantize(
        Decimal("0.01"), rounding=ROUND_HALF_UP
    )

    # Per region and per operator, by the contributions' tags.
    by_region = {r.key: r for r in _today_report(reports.GroupBy.REGION).rows}
    assert sorted(by_region) == ["CE", "ML"]
    assert (by_region["ML"].contribution("IB1"), by_region["CE"].contribution("IB1")) == (
        Decimal("14.000000"),
        Decimal("6.000000"),
    )
    assert by_region["ML"].prizes == Decimal("124.50") and by_region["CE"].prizes == 0
    by_operator = {r.key: r for r in _today_report(reports.GroupBy.OPERATOR).rows}
    first, second = (f"{c.tax_id} · {c.name}" for c in scene.companies)
    assert by_operator[first].contribution("IB1") == Decimal("14.000000")  # halls 1 and 3
    assert by_operator[second].contribution("IB1") == Decimal("6.000000")
    assert by_operator[first].sb_sales == Decimal("9.00") and by_operator[second].sb_sales == Decimal("4.00")

    # A range without activity: empty, and it still reconciles.
    yesterday = timezone.localdate() - timedelta(days=1)
    report = reports.network_report(group_by=reports.GroupBy.VENUE, date_from=yesterday, date_to=yesterday)
    assert report.rows == [] and report.reconciled
    assert report.total.return_percent is None

    # The CSV: a header, a row per group, the network's total.
    rows = reports.csv_rows(_today_report(reports.GroupBy.REGION))
    assert len(rows) == 1 + 2 + 1
    assert rows[0][0] == "Region" and rows[0][1] == "Contributions IB1"
    assert rows[-1][1] == "20.000000"
    assert [r[0] for r in rows[1:-1]] == ["CE", "ML"]
