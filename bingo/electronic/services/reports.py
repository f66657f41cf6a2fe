"""Statistics and reports of electronic and automatic bingo (R-02, R-03): per venue-local day and per
speciality, the games played, the cards sold, the amounts played, the prizes by combination (decided, won,
not won, winners, amount paid, remainders), the pools' funding and awards, and the return to players
(prizes paid / amounts played, exact Decimal).

A game counts on the venue's calendar day (its time zone) on which it finished (`closed_at`), with all its
figures: its sales, its prizes, its pools' funding. Games still selling or drawing are not played yet;
void games are counted apart. A handful of GROUP BY queries whatever the number of games; the pools'
funding is read by the games' contribution keys (egame:<id>), a chunk at a time.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal
from typing import Any
from zoneinfo import ZoneInfo

from django.db.models import Count, Q, Sum
from django.db.models.functions import TruncDate
from django.utils.translation import gettext as _

from bingo.electronic.models import EGameState, ElectronicGame, EPrize, Speciality, SpecialityPool
from bingo.electronic.prizetable import POOL_TYPES
from halls import money
from halls.cashier.services.reports import MAX_DAYS, day_bounds
from halls.errors import InvalidInput
from halls.models import Venue
from jackpots.models import Contribution

ZERO = money.ZERO
KEYS_A_QUERY = 2000


@dataclass
class PrizeLine:
    """One combination (prize code) of a speciality: how often it was decided, won, not won; its winners
    (cards), the amount paid to them and the remainders left where the prize came from."""

    code: str
    type: str
    name: str
    from_pool: bool
    decided: int = 0
    won: int = 0
    winners: int = 0
    paid: Decimal = ZERO
    remainder: Decimal = ZERO

    @property
    def not_won(self) -> int:
        return self.decided - self.won

    def add(self, other: PrizeLine) -> None:
        self.decided += other.decided
        self.won += other.won
        self.winners += other.winners
        self.paid += other.paid
        self.remainder += other.remainder

    def as_dict(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "type": self.type,
            "name": self.name,
            "from_pool": self.from_pool,
            "decided": self.decided,
            "won": self.won,
            "not_won": self.not_won,
            "winners": self.winners,
            "paid": money.text(self.paid),
            "remainder": money.text(self.remainder),
        }


def return_percent(paid: Decimal, played: Decimal) -> Decimal | None:
    """Prizes paid per 100 played, to the hundredth (half up); None when nothing was played."""
    return money.return_percent(paid, played)


@dataclass
class Stats:
    """The figures of one speciality over one day (or a range of days)."""

    speciality: int
    code: str
    name: str
    family: str
    day: date | None  # None: the whole range
    games: int = 0  # played: closed with cards sold
    games_without_sales: int = 0  # closed at once, no card sold
    void: int = 0
    cards: int = 0
    played: Decimal = ZERO  # the amounts played: the games' sales (the sum of their purchases)
    prizes: dict[str, PrizeLine] = field(default_factory=dict)
    pool_to_meter: Decimal = ZERO  # the pools' funding from these games (6 decimals, as the pools keep it)
    pool_to_reserve: Decimal = ZERO

    @property
    def sales_prizes(self) -> Decimal:
        return sum((p.paid for p in self.prizes.values() if not p.from_pool), ZERO)

    @property
    def pool_awards(self) -> Decimal:
        return sum((p.paid for p in self.prizes.values() if p.from_pool), ZERO)

    @property
    def pool_awards_count(self) -> int:
        return sum(p.won for p in self.prizes.values() if p.from_pool)

    @property
    def paid(self) -> Decimal:
        return self.sales_prizes + self.pool_awards

    @property
    def pool_funding(self) -> Decimal:
        return self.pool_to_meter + self.pool_to_reserve

    @property
    def return_to_players(self) -> Decimal | None:
        return return_percent(self.paid, self.played)

    def add(self, other: Stats) -> None:
        self.games += other.games
        self.games_without_sales += other.games_without_sales
        self.void += other.void
        self.cards += other.cards
        self.played += other.played
        self.pool_to_meter += other.pool_to_meter
        self.pool_to_reserve += other.pool_to_reserve
        for code, line in other.prizes.items():
            mine = self.prizes.setdefault(
                code, PrizeLine(code=code, type=line.type, name=line.name, from_pool=line.from_pool)
            )
            mine.add(line)

    def as_dict(self) -> dict[str, Any]:
        rtp = self.return_to_players
        return {
            "speciality": self.speciality,
            "code": self.code,
            "name": self.name,
            "family": self.family,
            **({"day": self.day.isoformat()} if self.day else {}),
            "games": self.games,
            "games_without_sales": self.games_without_sales,
            "void": self.void,
            "cards": self.cards,
            "played": money.text(self.played),
            "prizes": [line.as_dict() for _code, line in sorted(self.prizes.items())],
            "sales_prizes": money.text(self.sales_prizes),
            "pool_funding": {
                "to_meter": money.text(self.pool_to_meter),
                "to_reserve": money.text(self.pool_to_reserve),
                "total": money.text(self.pool_funding),
            },
            "pool_awards": {"count": self.pool_awards_count, "amount": money.text(self.pool_awards)},
            "paid": money.text(self.paid),
            "return_to_players": None if rtp is None else str(rtp),
        }


@dataclass
class Report:
    """Electronic bingo's statistics of a venue from `first` to `last` (its days, both included)."""

    venue_id: int
    first: date
    last: date
    time_zone: str
    days: list[Stats] = field(default_factory=list)  # per (day, speciality), in that order
    specialities: list[Stats] = field(default_factory=list)  # per speciality over the range
    total: Stats | None = None  # every speciality over the range

    def as_dict(self) -> dict[str, Any]:
        return {
            "venue": self.venue_id,
            "from": self.first.isoformat(),
            "to": self.last.isoformat(),
            "time_zone": self.time_zone,
            "days": [s.as_dict() for s in self.days],
            "specialities": [s.as_dict() for s in self.specialities],
            "total": self.total.as_dict() if self.total else None,
        }


def _check_days(first: date, last: date) -> None:
    if last < first:
        raise InvalidInput(
            _("The range ends (%(last)s) before it starts (%(first)s).") % {"first": first, "last": last},
            code="bad_range",
            field="date_to",
        )
    if (last - first).days + 1 > MAX_DAYS:
        raise InvalidInput(
            _("A report covers at most %(days)s days.") % {"days": MAX_DAYS},
            code="range_too_long",
            field="date_to",
        )


def _chunks(items: list[str], size: int) -> Iterator[list[str]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def statistics(*, venue: Venue, first: date, last: date, speciality: Speciality | None = None) -> Report:
    """The statistics of the venue's specialities (or one) over its days `first`..`last`."""
    _check_days(first, last)
    zone = ZoneInfo(venue.time_zone)
    start, _end = day_bounds(venue, first)
    _start, end = day_bounds(venue, last)
    report = Report(venue_id=venue.pk, first=first, last=last, time_zone=venue.time_zone)
    specialities = Speciality.objects.filter(venue=venue).order_by("code")
    if speciality is not None:
        specialities = specialities.filter(pk=speciality.pk)
    known = {s.pk: s for s in specialities}
    games = ElectronicGame.objects.filter(
        speciality__in=list(known),
        state__in=[EGameState.CLOSED, EGameState.VOID],
        closed_at__gte=start,
        closed_at__lt=end,
    ).annotate(day=TruncDate("closed_at", tzinfo=zone))
    cells: dict[tuple[date, int], Stats] = {}

    def cell(day: date, speciality_id: int) -> Stats:
        s = known[speciality_id]
        return cells.setdefault(
            (day, speciality_id),
            Stats(speciality=s.pk, code=s.code, name=s.name, family=s.family, day=day),
        )

    closed = Q(state=EGameState.CLOSED)
    for row in (
        games.values("day", "speciality_id")
        .annotate(
            n_games=Count("id", filter=closed & Q(cards_sold__gt=0)),
            n_empty=Count("id", filter=closed & Q(cards_sold=0)),
            n_void=Count("id", filter=Q(state=EGameState.VOID)),
            n_cards=Sum("cards_sold", filter=closed),
            played_sum=Sum("sales_total", filter=closed),
        )
        .order_by()
    ):
        stats = cell(row["day"], row["speciality_id"])
        stats.games, stats.games_without_sales, stats.void = row["n_games"], row["n_empty"], row["n_void"]
        stats.cards, stats.played = row["n_cards"] or 0, row["played_sum"] or ZERO
    played_games = games.filter(closed)
    for row in (
        EPrize.objects.filter(game__in=played_games.values("pk"))
        .annotate(day=TruncDate("game__closed_at", tzinfo=zone))
        .values("day", "game__speciality_id", "code", "type", "name")
        .annotate(
            n_decided=Count("id"),
            n_won=Count("id", filter=Q(won=True)),
            n_winners=Sum("winners"),
            won_amount=Sum("amount", filter=Q(won=True)),
            won_remainder=Sum("remainder", filter=Q(won=True)),
        )
        .order_by()
    ):
        stats = cell(row["day"], row["game__speciality_id"])
        line = stats.prizes.setdefault(
            row["code"],
            PrizeLine(
                code=row["code"], type=row["type"], name=row["name"], from_pool=row["type"] in POOL_TYPES
            ),
        )
        remainder = row["won_remainder"] or ZERO
        line.add(
            PrizeLine(
                code=row["code"],
                type=row["type"],
                name=row["name"],
                from_pool=line.from_pool,
                decided=row["n_decided"],
                won=row["n_won"],
                winners=row["n_winners"] or 0,
                # What a won prize paid: its amount less what could not be shared (share x winners).
                paid=(row["won_amount"] or ZERO) - remainder,
                remainder=remainder,
            )
        )
    _pool_funding(played_games, known, cell)
    report.days = [cells[k] for k in sorted(cells, key=lambda k: (k[0], known[k[1]].code))]
    totals: dict[int, Stats] = {}
    for stats in report.days:
        s = known[stats.speciality]
        totals.setdefault(s.pk, Stats(speciality=s.pk, code=s.code, name=s.name, family=s.family, day=None))
        totals[s.pk].add(stats)
    report.specialities = [totals[pk] for pk in sorted(totals, key=lambda pk: known[pk].code)]
    total = Stats(speciality=0, code="", name=_("All specialities"), family="", day=None)
    for stats in report.specialities:
        total.add(stats)
    report.total = total
    return report


def _pool_funding(games: Any, known: dict[int, Speciality], cell: Any) -> None:
    """Each game's contributions to its speciality's pools (key egame:<id>), into its day's cell."""
    where = {
        f"egame:{pk}": (day, speciality_id)
        for pk, day, speciality_id in games.values_list("pk", "day", "speciality_id")
    }
    pools = list(
        SpecialityPool.objects.filter(speciality_id__in=list(known)).values_list("pool_id", flat=True)
    )
    if not where or not pools:
        return
    for keys in _chunks(list(where), KEYS_A_QUERY):
        for key, to_meter, to_reserve in Contribution.objects.filter(
            pool_id__in=pools, idempotency_key__in=keys
        ).values_list("idempotency_key", "to_meter", "to_reserve"):
            stats = cell(*where[key])
            stats.pool_to_meter += to_meter
            stats.pool_to_reserve += to_reserve


# --- CSV ---------------------------------------------------------------------------------------------------


def rows(report: Report) -> Iterable[list[str]]:
    """The report as (day, speciality, section, item, count, amount) rows, for a spreadsheet: each day and
    speciality, then each speciality over the range ("" day), then the total ("" speciality)."""
    yield [_("day"), _("speciality"), _("section"), _("item"), _("count"), _("amount")]

    def lines(stats: Stats, day: str, speciality: str) -> Iterator[list[str]]:
        def row(section: str, item: str, count: Any, amount: Decimal | str | None) -> list[str]:
            shown = "" if amount is None else amount if isinstance(amount, str) else money.text(amount)
            return [day, speciality, section, item, "" if count is None else str(count), shown]

        yield row(_("games"), _("played"), stats.games, None)
        yield row(_("games"), _("closed without sales"), stats.games_without_sales, None)
        yield row(_("games"), _("void"), stats.void, None)
        yield row(_("sales"), _("cards sold"), stats.cards, stats.played)
        for code, line in sorted(stats.prizes.items()):
            item = f"{line.name} ({code})"
            yield row(_("prizes won"), item, line.won, line.paid)
            yield row(_("prizes not won"), item, line.not_won, None)
            yield row(_("winning cards"), item, line.winners, None)
            yield row(_("remainders"), item, None, line.remainder)
        yield row(_("pools"), _("funding to the meters"), None, stats.pool_to_meter)
        yield row(_("pools"), _("funding to the reserves"), None, stats.pool_to_reserve)
        yield row(_("pools"), _("awards"), stats.pool_awards_count, stats.pool_awards)
        yield row(_("return"), _("prizes paid"), None, stats.paid)
        rtp = stats.return_to_players
        yield row(_("return"), _("return to players (%)"), None, "" if rtp is None else str(rtp))

    for stats in report.days:
        yield from lines(stats, stats.day.isoformat() if stats.day else "", stats.code)
    for stats in report.specialities:
        yield from lines(stats, "", stats.code)
    if report.total is not None:
        yield from lines(report.total, "", "")
