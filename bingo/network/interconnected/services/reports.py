"""The central's network reports (spec §8, R-01…R-03 statistics; IB-02…IB-04 tags): per venue, region or
operator over a date range (the central's local days, both included). Read-only: nothing here writes.

Figures, per group:
- the contributions to each interconnected prize (meter + hidden reserve), from the tagged rows
  (`RoundContribution`: venue, operator and region as they stood when counted, and game), selected by the
  date of the pool ledger's row they made (the pool's truth);
- the sales of network games: the interconnected round games' sales (what funded the prize) and the
  simultaneous games' sales the central counted (`ReportedSale`, returns deducted);
- the prizes won: interconnected shares of the rounds decided in the range, simultaneous prize shares
  decided in the range (each winning card's share, by its hall);
- the network's return to players: prizes won ÷ sales of network games × 100.

Interpretations: an interconnected share is grouped under the tags of its hall's contribution to that
round; a simultaneous game's sales and prizes under the hall's region and operator as they stand now
(those rows carry no tags of their own). What cannot be shared (remainders) stays in the pool or goes
where the decision recorded it, and is not a prize won.

Reconciliation: for every interconnected prize, the report's contributions (summed over the groups) must
equal the contributions the pool's ledger holds for the same range, to the last meter decimal
(`PoolCheck.holds`).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta
from decimal import Decimal

from django.db.models import Sum
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from bingo.network.interconnected.models import (
    NetworkPrize,
    PrizeRound,
    RoundContribution,
    RoundShare,
    RoundState,
)
from bingo.network.simultaneous.models import ClaimStatus, NetworkClaim, PrizeKind, ReportedSale
from bingo.network.simultaneous.models import NetworkPrize as GamePrize
from halls import money
from halls.errors import InvalidInput
from halls.models import Venue
from jackpots.models import Contribution

ZERO = Decimal(0)
MAX_DAYS = 366


class GroupBy(enum.StrEnum):
    VENUE = "venue"
    REGION = "region"
    OPERATOR = "operator"


GROUP_LABELS = {
    GroupBy.VENUE: gettext_lazy("Venue"),
    GroupBy.REGION: gettext_lazy("Region"),
    GroupBy.OPERATOR: gettext_lazy("Operator"),
}


@dataclass(frozen=True)
class Tags:
    licence: str
    name: str
    region: str
    operator: str

    def key(self, by: GroupBy) -> str:
        return {GroupBy.VENUE: self.licence, GroupBy.REGION: self.region, GroupBy.OPERATOR: self.operator}[by]


@dataclass
class ReportRow:
    key: str
    label: str
    contributions: dict[str, Decimal] = field(default_factory=dict)  # prize code -> meter + reserve
    ib_sales: Decimal = ZERO
    sb_sales: Decimal = ZERO
    ib_prizes: Decimal = ZERO
    sb_prizes: Decimal = ZERO

    @property
    def contributed(self) -> Decimal:
        return sum(self.contributions.values(), ZERO)

    @property
    def sales(self) -> Decimal:
        return self.ib_sales + self.sb_sales

    @property
    def prizes(self) -> Decimal:
        return self.ib_prizes + self.sb_prizes

    @property
    def return_percent(self) -> Decimal | None:
        """Prizes won per 100 of network games' sales (two decimals); None without sales."""
        return money.return_percent(self.prizes, self.sales)

    def contribution(self, code: str) -> Decimal:
        return self.contributions.get(code, ZERO)


@dataclass(frozen=True)
class PoolCheck:
    prize: str
    pool: str
    tagged_meter: Decimal
    tagged_reserve: Decimal
    ledger_meter: Decimal
    ledger_reserve: Decimal

    @property
    def holds(self) -> bool:
        return (self.tagged_meter, self.tagged_reserve) == (self.ledger_meter, self.ledger_reserve)


@dataclass(frozen=True)
class Report:
    group_by: GroupBy
    date_from: date
    date_to: date
    prizes: list[str]  # the interconnected prizes' codes: one contribution column each
    rows: list[ReportRow]
    total: ReportRow
    checks: list[PoolCheck]

    def amounts(self, row: ReportRow) -> list[Decimal]:
        """The row's contribution to each prize, in the order of `prizes`."""
        return [row.contribution(code) for code in self.prizes]

    @property
    def lines(self) -> list[tuple[ReportRow, list[Decimal]]]:
        return [(row, self.amounts(row)) for row in self.rows]

    @property
    def total_amounts(self) -> list[Decimal]:
        return self.amounts(self.total)

    @property
    def reconciled(self) -> bool:
        return all(c.holds for c in self.checks)


def bounds(date_from: date, date_to: date) -> tuple[datetime, datetime]:
    """The range's instants: from the start of `date_from` to the start of the day after `date_to`."""
    if date_to < date_from:
        raise InvalidInput(_("The range ends before it starts."), code="bad_range")
    if (date_to - date_from).days >= MAX_DAYS:
        raise InvalidInput(_("A report covers at most %(days)s days.") % {"days": MAX_DAYS}, code="bad_range")
    zone = timezone.get_current_timezone()
    start = datetime.combine(date_from, time.min, tzinfo=zone)
    end = datetime.combine(date_to + timedelta(days=1), time.min, tzinfo=zone)
    return start, end


def _venue_tags() -> dict[int, Tags]:
    tags = {}
    for venue in Venue.objects.select_related("region", "operator"):
        operator = venue.operator
        tags[venue.pk] = Tags(
            licence=venue.licence_number,
            name=venue.name,
            region=venue.region.code if venue.region is not None else "",
            operator=f"{operator.tax_id} · {operator.name}"[:160] if operator is not None else "",
        )
    return tags


class _Book:
    """The rows of a report as they fill up, by group key."""

    def __init__(self, by: GroupBy, venues: dict[int, Tags]) -> None:
        self.by, self.venues = by, venues
        self.rows: dict[str, ReportRow] = {}

    def row(self, tags: Tags) -> ReportRow:
        key = tags.key(self.by)
        if key not in self.rows:
            label = tags.name if self.by == GroupBy.VENUE else key
            self.rows[key] = ReportRow(key=key, label=label or _("(none recorded)"))
        return self.rows[key]

    def of_venue(self, venue_id: int) -> ReportRow:
        return self.row(self.venues[venue_id])


def _contributions(
    book: _Book, prizes: list[NetworkPrize], start: datetime, end: datetime
) -> dict[str, tuple[Decimal, Decimal]]:
    """Each tagged contribution whose pool ledger row falls in the range; the tagged sums per prize."""
    by_pool = {p.pool_id: p.code for p in prizes}
    ledger = Contribution.objects.filter(pool_id__in=by_pool, created_at__gte=start, created_at__lt=end)
    tagged: dict[str, tuple[Decimal, Decimal]] = {}
    rows = list(
        RoundContribution.objects.filter(contribution_id__in=ledger.values("id"))
        .select_related("round__prize", "venue")
        .order_by("pk")
    )
    for c in rows:
        code = c.round.prize.code
        tags = book.venues[c.venue_id]
        row = book.row(Tags(tags.licence, tags.name, c.region, c.operator))
        row.contributions[code] = row.contribution(code) + c.to_meter + c.to_reserve
        row.ib_sales += c.sales
        meter, reserve = tagged.get(code, (ZERO, ZERO))
        tagged[code] = (meter + c.to_meter, reserve + c.to_reserve)
    return tagged


def _checks(
    prizes: list[NetworkPrize], tagged: dict[str, tuple[Decimal, Decimal]], start: datetime, end: datetime
) -> list[PoolCheck]:
    checks = []
    for prize in prizes:
        sums = Contribution.objects.filter(
            pool_id=prize.pool_id, created_at__gte=start, created_at__lt=end
        ).aggregate(meter=Sum("to_meter", default=ZERO), reserve=Sum("to_reserve", default=ZERO))
        meter, reserve = tagged.get(prize.code, (ZERO, ZERO))
        checks.append(
            PoolCheck(
                prize.code, prize.pool.code, meter, reserve, Decimal(sums["meter"]), Decimal(sums["reserve"])
            )
        )
    return checks


def _ib_prizes(book: _Book, start: datetime, end: datetime) -> None:
    rounds = PrizeRound.objects.filter(state=RoundState.DECIDED, decided_at__gte=start, decided_at__lt=end)
    tagged = {
        (c.round_id, c.venue_id): (c.region, c.operator)
        for c in RoundContribution.objects.filter(round__in=rounds)
    }
    for share in RoundShare.objects.filter(round__in=rounds).order_by("pk"):
        tags = book.venues[share.venue_id]
        region, operator = tagged.get((share.round_id, share.venue_id), (tags.region, tags.operator))
        book.row(Tags(tags.licence, tags.name, region, operator)).ib_prizes += share.amount


def _sb_sales(book: _Book, start: datetime, end: datetime) -> None:
    sales = ReportedSale.objects.filter(received_at__gte=start, received_at__lt=end)
    for sale in sales.order_by("pk"):
        book.of_venue(sale.venue_id).sb_sales += -sale.amount if sale.returned else sale.amount


def _sb_prizes(book: _Book, start: datetime, end: datetime) -> None:
    """Each decided simultaneous prize's share to every winning card (its claim, by the claim's hall)."""
    decided = GamePrize.objects.filter(decided_at__gte=start, decided_at__lt=end).order_by("pk")
    for prize in decided:
        kind = PrizeKind.LINE if prize.kind == PrizeKind.LINE else PrizeKind.BINGO
        winners = NetworkClaim.objects.filter(
            game_id=prize.game_id, kind=kind, ordinal=prize.ordinal, status=ClaimStatus.WON
        )
        if prize.scope != "network":
            winners = winners.filter(venue__licence_number=prize.scope)
        for venue_id in winners.values_list("venue_id", flat=True):
            book.of_venue(venue_id).sb_prizes += prize.share


def network_report(*, group_by: GroupBy, date_from: date, date_to: date) -> Report:
    """The report of the network's games and prizes over [date_from, date_to], grouped by `group_by`."""
    start, end = bounds(date_from, date_to)
    prizes = list(NetworkPrize.objects.select_related("pool").order_by("code"))
    book = _Book(group_by, _venue_tags())
    tagged = _contributions(book, prizes, start, end)
    _ib_prizes(book, start, end)
    _sb_sales(book, start, end)
    _sb_prizes(book, start, end)
    rows = sorted(book.rows.values(), key=lambda r: (r.label, r.key))
    total = ReportRow(key="", label=str(_("Network total")))
    for row in rows:
        for code, amount in row.contributions.items():
            total.contributions[code] = total.contribution(code) + amount
        total.ib_sales += row.ib_sales
        total.sb_sales += row.sb_sales
        total.ib_prizes += row.ib_prizes
        total.sb_prizes += row.sb_prizes
    return Report(
        group_by=group_by,
        date_from=date_from,
        date_to=date_to,
        prizes=[p.code for p in prizes],
        rows=rows,
        total=total,
        checks=_checks(prizes, tagged, start, end),
    )


def csv_rows(report: Report) -> list[list[str]]:
    """The report as CSV rows: a header, one row per group, the network's total (exact amounts)."""
    header = [
        str(GROUP_LABELS[report.group_by]),
        *[_("Contributions %(prize)s") % {"prize": code} for code in report.prizes],
        _("Interconnected games' sales"),
        _("Simultaneous games' sales"),
        _("Interconnected prizes won"),
        _("Simultaneous prizes won"),
        _("Prizes won"),
        _("Return to players (%)"),
    ]

    def line(row: ReportRow) -> list[str]:
        ret = row.return_percent
        return [
            row.label,
            *[str(row.contribution(code)) for code in report.prizes],
            str(row.ib_sales),
            str(row.sb_sales),
            str(row.ib_prizes),
            str(row.sb_prizes),
            str(row.prizes),
            "" if ret is None else str(ret),
        ]

    return [header, *[line(r) for r in report.rows], line(report.total)]
