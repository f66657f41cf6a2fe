"""What the authority's portal shows, read from the node's rows (Installation, FeedMessage, FeedRefusal,
Alarm) and nothing else: the installations on the map with their link state, the live sessions and games,
each pool's amounts over time, the chain heads received, the alarms, the refused messages and the tax
returns. Reads only.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from decimal import Decimal, InvalidOperation
from typing import Any

from django.conf import settings
from django.db.models import Case, Count, OuterRef, Q, Subquery, Value, When
from django.utils import timezone
from django.utils.dateparse import parse_datetime
from django.utils.formats import date_format
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from halls.feed.kinds import FeedKind
from halls.regulator import live_core, portal_core
from halls.regulator.models import Alarm, AlarmKind, FeedMessage, FeedRefusal, Installation, InstallationKind
from halls.regulator.models import LiveGame as GameRow
from halls.regulator.models import LiveSession as SessionRow
from halls.regulator.services import livemodel
from halls.regulator.services.verify import Problem

# --- the installations and their link ---------------------------------------------------------------------


def window_seconds(installation: Installation) -> int:
    """How long the installation may stay silent: its own window, else the node's setting."""
    return int(installation.silence_seconds or settings.HALL_REGULATOR_SILENCE_SECONDS)


@dataclass
class Place:
    installation: Installation
    state: portal_core.LinkState
    window: int
    open_alarms: int
    x: Decimal | None = None
    y: Decimal | None = None

    @property
    def on_map(self) -> bool:
        return self.x is not None


def installations(now: datetime | None = None) -> list[Place]:
    now = now or timezone.now()
    rows = Installation.objects.annotate(
        open_alarms=Count("alarms", filter=Q(alarms__cleared_at__isnull=True))
    ).order_by("name", "pk")
    places = []
    for installation in rows:
        window = window_seconds(installation)
        state = portal_core.link_state(installation.last_message_at, now=now, window_seconds=window)
        place = Place(installation, state, window, int(installation.open_alarms))
        spot = portal_core.place(installation.latitude, installation.longitude)
        if spot is not None:
            place.x, place.y = spot
        places.append(place)
    return places


@dataclass(frozen=True)
class Shape:
    name: str
    points: str


def map_shapes() -> dict[str, Any]:
    """The map's drawing: the peninsula, the border with Portugal, the islands, the Canaries' inset."""
    core = portal_core
    return {
        "width": core.WIDTH,
        "height": core.HEIGHT,
        "iberia": core.outline(core.IBERIA),
        "border": core.outline(core.PORTUGAL_BORDER),
        "islands": [Shape(name, core.outline(points)) for name, points in core.ISLANDS.items()],
        "canaries": [
            Shape(name, core.outline(points, core.CANARIES)) for name, points in core.CANARY_ISLANDS.items()
        ],
        "inset": core.CANARIES,
        "label_x": core.CANARIES.left + 8,
        "label_y": core.CANARIES.top + 20,
    }


# --- live sessions and games ------------------------------------------------------------------------------

# At most this many games on the live page (the open ones first). The replay (live_replay) reads of each
# installation's latest messages at most this many (all installations), or this many (one installation's).
GAMES_SHOWN = 60
LIVE_ROWS_EACH = 400
LIVE_ROWS_ONE = 5000


@dataclass
class Prize:
    prize: str
    name: str
    amount: str
    ordinal: int | None
    cards: list[str]
    pool: str | None
    where: str


@dataclass
class LiveGame:
    installation: Installation
    venue: str | None
    room: str
    game: str
    commitment: str = ""
    cards: int | None = None
    sales: str | None = None
    balls: list[int] = field(default_factory=list)
    prizes: list[Prize] = field(default_factory=list)
    state: str = "open"  # open, closed, void
    seed: str = ""
    last_at: datetime | None = None

    @property
    def key(self) -> str:
        return f"{self.installation.uid}:{self.venue or ''}:{self.game}"

    @property
    def last_ball(self) -> int | None:
        return self.balls[-1] if self.balls else None

    @property
    def open(self) -> bool:
        return self.state == "open"


@dataclass
class LiveSession:
    installation: Installation
    venue: str | None
    room: str
    session: Any
    family: str
    opened_at: str
    checks: list[dict[str, Any]]
    closed_at: str = ""
    games: Any = None
    sales: str | None = None
    prizes: str | None = None

    @property
    def open(self) -> bool:
        return not self.closed_at

    @property
    def checks_ok(self) -> bool:
        return all(bool(c.get("ok")) for c in self.checks)


@dataclass
class Live:
    sessions: list[LiveSession]
    games: list[LiveGame]
    since: datetime


def _game_view(installation: Installation, game: live_core.GameState) -> LiveGame:
    return LiveGame(
        installation,
        game.venue,
        game.room,
        game.game,
        game.commitment,
        game.cards,
        game.sales,
        game.balls,
        [Prize(**prize) for prize in game.prizes],
        game.state,
        game.seed,
        game.last_at,
    )


def _session_view(installation: Installation, s: live_core.SessionState) -> LiveSession:
    return LiveSession(
        installation, s.venue, s.room, s.session, s.family, s.opened_at, s.checks, s.closed_at, s.games,
        s.sales, s.prizes,
    )  # fmt: skip


def _live_since(now: datetime | None) -> datetime:
    return (now or timezone.now()) - timedelta(minutes=int(settings.HALL_REGULATOR_LIVE_MINUTES))


def live(*, installation: Installation | None = None, now: datetime | None = None) -> Live:
    """The sessions and games with a message in the last HALL_REGULATOR_LIVE_MINUTES (of one installation,
    or of all heard in that time): each game with its commitment, sales, balls in order, prizes and end.
    Read from the live read model (LiveGame, LiveSession: services.livemodel): two queries, however many
    messages were stored."""
    since = _live_since(now)
    open_first = Case(When(state="open", then=Value(0)), default=Value(1))
    game_rows = GameRow.objects.filter(last_at__gte=since).select_related("installation")
    session_rows = SessionRow.objects.filter(last_at__gte=since).select_related("installation")
    if installation is not None:
        game_rows = game_rows.filter(installation=installation)
        session_rows = session_rows.filter(installation=installation)
    else:
        game_rows = game_rows.filter(installation__last_message_at__gte=since)
        session_rows = session_rows.filter(installation__last_message_at__gte=since)
    # Ties as the replay leaves them: installation by installation (by name), each's games as first seen.
    games = game_rows.order_by(open_first, "-last_at", "installation__name", "installation_id", "pk")
    shown = [_game_view(row.installation, livemodel.game_state(row)) for row in games[:GAMES_SHOWN]]
    session_list = [
        _session_view(row.installation, livemodel.session_state(row))
        for row in session_rows.order_by(
            Case(When(closed_at="", then=Value(0)), default=Value(1)),
            "installation__name",
            "room",
            "installation_id",
            "pk",
        )
    ]
    return Live(session_list, shown, since)


def live_replay(*, installation: Installation | None = None, now: datetime | None = None) -> Live:
    """What `live` shows, replayed from the stored messages (each installation's latest LIVE_ROWS_EACH of
    its games and sessions in the time, in sequence order): the read model's check, never a page's (a
    query an installation)."""
    now = now or timezone.now()
    since = _live_since(now)
    if installation is not None:
        owners, cap = [installation], LIVE_ROWS_ONE
    else:
        owners, cap = list(Installation.objects.filter(last_message_at__gte=since)), LIVE_ROWS_EACH
    games: list[LiveGame] = []
    sessions: list[LiveSession] = []
    for owner in owners:
        # Each installation's latest messages of its games and sessions, along the index
        # (installation, kind, at), then in their order.
        latest = (
            FeedMessage.objects.filter(
                installation=owner, kind__in=sorted(live_core.LIVE_KINDS), at__gte=since
            )
            .order_by("-at", "-sequence")
            .values_list("sequence", "kind", "payload", "at")[:cap]
        )
        its_games: dict[live_core.GameKey, live_core.GameState] = {}
        its_sessions: dict[live_core.SessionKey, live_core.SessionState] = {}
        for _sequence, kind, payload, at in sorted(latest, key=lambda row: int(row[0])):
            live_core.fold(its_games, its_sessions, kind, payload, at)
        games.extend(_game_view(owner, g) for g in its_games.values())
        sessions.extend(_session_view(owner, s) for s in its_sessions.values())
    shown = sorted(games, key=lambda g: (not g.open, -(g.last_at or now).timestamp()))[:GAMES_SHOWN]
    session_list = sorted(sessions, key=lambda s: (not s.open, s.installation.name, str(s.room)))
    return Live(session_list, shown, since)


# --- pools ------------------------------------------------------------------------------------------------


def _decimal(value: Any) -> Decimal | None:
    try:
        return Decimal(str(value))
    except (InvalidOperation, ValueError):
        return None


@dataclass
class PoolLevel:
    level: str
    amount: Decimal


@dataclass
class PoolRow:
    installation: Installation
    venue: str | None
    pool: str
    name: str
    family: str
    levels: list[PoolLevel]
    at: datetime
    sequence: int

    @property
    def total(self) -> Decimal:
        return sum((level.amount for level in self.levels), Decimal("0.00"))


def _pool_rows(message: FeedMessage | Mapping[str, Any], installation: Installation) -> Iterable[PoolRow]:
    if isinstance(message, FeedMessage):
        payload, at, sequence = message.payload, message.at, message.sequence
    else:
        payload, at, sequence = message["payload"], message["at"], message["sequence"]
    if not isinstance(payload, dict):
        return
    for entry in payload.get("pools", []):
        if not isinstance(entry, dict):
            continue
        levels = []
        for level in entry.get("levels", []):
            amount = _decimal(level.get("amount")) if isinstance(level, dict) else None
            if amount is not None:
                levels.append(PoolLevel(str(level.get("level")), amount))
        yield PoolRow(
            installation,
            payload.get("venue"),
            str(entry.get("pool", "")),
            str(entry.get("name", "")),
            str(entry.get("family", "")),
            levels,
            at,
            int(sequence),
        )


def _latest_of_each(kind: str) -> list[tuple[Installation, FeedMessage | None]]:
    """Each installation (by name) with its latest message of `kind`, or None: two queries, each
    installation's latest found along the index (installation, kind, at)."""
    latest = (
        FeedMessage.objects.filter(installation=OuterRef("pk"), kind=kind)
        .order_by("-at", "-sequence")
        .values("pk")[:1]
    )
    owners = list(Installation.objects.annotate(latest_id=Subquery(latest)).order_by("name", "pk"))
    ids = [o.latest_id for o in owners if o.latest_id is not None]
    held = {m.pk: m for m in FeedMessage.objects.filter(pk__in=ids).only("payload", "at", "sequence")}
    return [(o, held.get(o.latest_id) if o.latest_id is not None else None) for o in owners]


def pools() -> list[PoolRow]:
    """Every pool as last reported by its installation (the latest pool.amounts of each)."""
    found: list[PoolRow] = []
    for installation, latest in _latest_of_each(FeedKind.POOL_AMOUNTS):
        if latest is not None:
            found.extend(_pool_rows(latest, installation))
    return found


@dataclass
class Award:
    level: str
    amount: str
    before: str
    after: str
    where: str
    at: datetime
    sequence: int


@dataclass
class PoolHistory:
    installation: Installation
    pool: str
    name: str
    family: str
    rows: list[PoolRow]  # newest first
    awards: list[Award]
    chart: portal_core.Chart
    levels: list[str]


# At most this many reports of a pool are drawn (the latest).
HISTORY_REPORTS = 500


def pool_history(*, installation: Installation, pool: str) -> PoolHistory | None:
    """A pool's amounts as each pool.amounts reported them (the latest HISTORY_REPORTS), its awards, and a
    chart of each level's amount over time. None when the installation never reported that pool."""
    reports = (
        FeedMessage.objects.filter(installation=installation, kind=FeedKind.POOL_AMOUNTS)
        .order_by("-at", "-sequence")
        .values("payload", "at", "sequence")[:HISTORY_REPORTS]
    )
    rows = [row for report in reports for row in _pool_rows(report, installation) if row.pool == pool]
    if not rows:
        return None
    awards = [
        Award(
            str(p.get("level", "")),
            str(p.get("amount", "")),
            str(p.get("before", "")),
            str(p.get("after", "")),
            str(p.get("where", "")),
            at,
            int(sequence),
        )
        for p, at, sequence in FeedMessage.objects.filter(
            installation=installation, kind=FeedKind.POOL_AWARD, payload__pool=pool
        )
        .order_by("-at", "-sequence")
        .values_list("payload", "at", "sequence")[:HISTORY_REPORTS]
        if isinstance(p, dict)
    ]
    levels: list[str] = []
    series: dict[str, list[tuple[datetime, Decimal]]] = {}
    for row in reversed(rows):
        for level in row.levels:
            if level.level not in series:
                levels.append(level.level)
            series.setdefault(level.level, []).append((row.at, level.amount))
    latest = rows[0]
    drawn = portal_core.chart(series)
    return PoolHistory(installation, pool, latest.name, latest.family, rows, awards, drawn, levels)


# --- chain heads ------------------------------------------------------------------------------------------


@dataclass
class Heads:
    installation: Installation
    key_id: str
    chains: list[dict[str, Any]]
    at: datetime | None
    sequence: int | None
    anchors: int


def chain_heads() -> list[Heads]:
    """Each installation's chain heads as its latest anchor message reported them."""
    counts = dict(
        FeedMessage.objects.filter(kind=FeedKind.ANCHOR)
        .values("installation_id")
        .annotate(n=Count("pk"))
        .values_list("installation_id", "n")
    )
    found = []
    for installation, latest in _latest_of_each(FeedKind.ANCHOR):
        payload = latest.payload if latest is not None and isinstance(latest.payload, dict) else {}
        chains = [c for c in payload.get("chains", []) if isinstance(c, dict)]
        found.append(
            Heads(
                installation,
                str(payload.get("key_id", "")),
                chains,
                latest.at if latest is not None else None,
                latest.sequence if latest is not None else None,
                int(counts.get(installation.pk, 0)),
            )
        )
    return found


# --- alarms, refusals, tax returns ------------------------------------------------------------------------


# A message from an installation the node does not know (the intake's AlarmKind.UNKNOWN).
ALARM_UNKNOWN = "unknown"


def alarm_text(alarm: Alarm) -> str:
    """What an alarm says, in the page's language, from its detail (never a player's identity: the detail
    holds venues, games, pools, amounts and sequences)."""
    d = alarm.detail if isinstance(alarm.detail, dict) else {}
    values = {k: ("—" if v is None else str(v)) for k, v in d.items() if not isinstance(v, list | dict)}
    kind = alarm.kind
    if kind == AlarmKind.NO_COMMITMENT:
        return _(
            "Game %(game)s of %(venue)s: its sales or balls arrived without its commitment "
            "(message %(sequence)s)."
        ) % _with(values, "game", "venue", "sequence")
    if kind == AlarmKind.PRIZE_ABOVE_POOL and "prize" in d:
        return _(
            "Prize %(prize)s of game %(game)s (%(venue)s): %(amount)s paid from pool %(pool)s, which last "
            "reported %(reported)s (message %(sequence)s)."
        ) % _with(values, "prize", "game", "venue", "amount", "pool", "reported", "sequence")
    if kind == AlarmKind.PRIZE_ABOVE_POOL:
        return _(
            "Pool %(pool)s (%(venue)s): level %(level)s awarded %(amount)s, above the %(reported)s last "
            "reported (message %(sequence)s)."
        ) % _with(values, "pool", "venue", "level", "amount", "reported", "sequence")
    if kind == AlarmKind.ANCHOR:
        problems = [Problem.from_detail(p).text for p in d.get("problems", []) if isinstance(p, dict)]
        more = int(d.get("count") or len(problems)) - len(problems)
        text = " ".join(problems)
        return text + (" " + _("And %(n)s more.") % {"n": more} if more > 0 else "")
    if kind == AlarmKind.SILENT:
        heard = parse_datetime(values.get("last_heard", ""))
        values["last_heard"] = (
            date_format(timezone.localtime(heard), "SHORT_DATETIME_FORMAT") if heard else "—"
        )
        return _("Not heard from since %(last_heard)s (its window: %(window_seconds)s s).") % _with(
            values, "last_heard", "window_seconds"
        )
    if kind == ALARM_UNKNOWN:
        return _("Message %(sequence)s from an installation this node does not know (%(claimed)s).") % _with(
            values, "sequence", "claimed"
        )
    said = (
        {
            AlarmKind.GAP: _("Message %(sequence)s arrived out of order: the node expected %(expected)s."),
            AlarmKind.BAD_SIGNATURE: _("Message %(sequence)s: its signature does not hold."),
            AlarmKind.REPLAYED: _("Message %(sequence)s was sent again with another content."),
            AlarmKind.SCHEMA: _("Message %(sequence)s is outside its schema (%(where)s)."),
        }.get(AlarmKind(kind))
        if kind in AlarmKind.values
        else None
    )
    if said is not None:
        text = said % _with(values, "sequence", "expected", "where")
        if "claimed" in values:
            text += " " + _("It claimed to be installation %(claimed)s.") % _with(values, "claimed")
        return text
    return "; ".join(f"{k}: {v}" for k, v in sorted(values.items()))


def _with(values: dict[str, str], *keys: str) -> dict[str, str]:
    return {key: values.get(key, "—") for key in keys}


@dataclass
class AlarmRow:
    alarm: Alarm
    text: str


def alarms(*, limit: int = 300) -> tuple[list[AlarmRow], list[AlarmRow]]:
    """(open, cleared) alarms, newest first."""
    rows = Alarm.objects.select_related("installation").order_by("-raised_at", "-pk")
    open_ = [AlarmRow(a, alarm_text(a)) for a in rows.filter(cleared_at__isnull=True)[:limit]]
    cleared = [AlarmRow(a, alarm_text(a)) for a in rows.filter(cleared_at__isnull=False)[:limit]]
    return open_, cleared


def open_alarm_count() -> int:
    return Alarm.objects.filter(cleared_at__isnull=True).count()


# Why the intake refused a message (its FeedRefusal.reason codes), as a person reads it.
REASONS = {
    "bad_signature": gettext_lazy("Bad signature"),
    "unknown_installation": gettext_lazy("Unknown installation"),
    "replayed": gettext_lazy("Replayed"),
    "out_of_order": gettext_lazy("Out of order"),
    "schema": gettext_lazy("Outside its schema"),
    "shape": gettext_lazy("Not a feed message"),
    "format": gettext_lazy("Unknown format"),
    "bad_batch": gettext_lazy("Bad batch"),
    "mixed_batch": gettext_lazy("Batch of several installations"),
}


@dataclass
class RefusalRow:
    refusal: FeedRefusal
    reason: str  # as a person reads it (the code when it is not a known one)


def refusals(*, limit: int = 300) -> list[RefusalRow]:
    """The refused messages, newest first."""
    rows = FeedRefusal.objects.select_related("installation").order_by("-received_at", "-pk")[:limit]
    return [RefusalRow(r, str(REASONS.get(r.reason, r.reason))) for r in rows]


@dataclass
class TaxReturn:
    installation: Installation
    venue: str
    jurisdiction: str
    period: str
    bases: list[dict[str, Any]]
    rate_table: str
    due: str
    digest: str
    at: datetime
    sequence: int


def tax_returns(*, limit: int = 500) -> list[TaxReturn]:
    """The tax returns received, newest first."""
    rows = (
        FeedMessage.objects.filter(kind=FeedKind.TAX_RETURN)
        .select_related("installation")
        .order_by("-received_at", "-pk")[:limit]
    )
    found = []
    for message in rows:
        p = message.payload if isinstance(message.payload, dict) else {}
        found.append(
            TaxReturn(
                message.installation,
                str(p.get("venue", "")),
                str(p.get("jurisdiction", "")),
                str(p.get("period", "")),
                [b for b in p.get("bases", []) if isinstance(b, dict)],
                str(p.get("rate_table", "")),
                str(p.get("due", "")),
                str(p.get("digest", "")),
                message.at,
                int(message.sequence),
            )
        )
    return found


# --- wide-area reconciliations ----------------------------------------------------------------------------

# A reconciliation's records, in the order the page shows them, and what its checks and parts are as a
# person reads them (the words of the operator's page, jackpots.widearea: the node reads the feed only).
RECORDS = ("stated", "received", "applied", "ledger")
CHECKS = {
    "received": gettext_lazy("Venue's totals against the central's record"),
    "batches": gettext_lazy("Venue's totals against the batches accepted"),
    "ledger": gettext_lazy("Batches accepted against the pool's ledger"),
}
PARTS = {
    "count": gettext_lazy("Contributions counted"),
    "bet": gettext_lazy("Played"),
    "to_meter": gettext_lazy("To the meter"),
    "to_reserve": gettext_lazy("To the reserve"),
    "house": gettext_lazy("House's share"),
}
SIDES = {"central": gettext_lazy("Central"), "venue": gettext_lazy("Venue")}
STATES = {"agreed": gettext_lazy("Agreed"), "differs": gettext_lazy("Differences found")}
# At most this many reconciliations are listed (the newest: the filters narrow them).
RECONCILIATIONS_SHOWN = 200


@dataclass(frozen=True)
class ReconciledLevel:
    """One level's totals as each record held them (None: the record has nothing of the level)."""

    level: str
    totals: dict[str, dict[str, Decimal | None] | None]


@dataclass(frozen=True)
class ReconciledDifference:
    kind: str
    check: str
    level: str
    field: str
    part: str
    venue: Decimal | None
    central: Decimal | None
    delta: Decimal | None  # as the installation computed it (venue minus central): never again here

    @property
    def is_count(self) -> bool:
        return self.field == "count"


@dataclass(frozen=True)
class Reconciliation:
    installation: Installation  # who reported it: the central, or the venue's own installation
    venue: str  # the licence of the venue whose meters were reconciled
    pool: str
    side: str
    sequence: int  # the venue's meters message on the link
    through: int
    state: str
    levels: list[ReconciledLevel]
    shown: list[ReconciledDifference]
    at: datetime
    message: int  # the feed message's sequence
    venue_name: str = ""  # the name the node registered the venue's installation under ("": not registered)

    @property
    def side_label(self) -> str:
        return str(SIDES.get(self.side, self.side))

    @property
    def state_label(self) -> str:
        return str(STATES.get(self.state, self.state))


def _levels_of(totals: Any) -> list[ReconciledLevel]:
    given = totals if isinstance(totals, dict) else {}
    records: dict[str, dict[str, Any]] = {
        name: held if isinstance(held := given.get(name), dict) else {} for name in RECORDS
    }
    names = sorted({level for held in records.values() for level in held})
    levels = []
    for name in names:
        by_record: dict[str, dict[str, Decimal | None] | None] = {}
        for record, held in records.items():
            sums = held.get(name)
            by_record[record] = (
                {part: _decimal(sums.get(part)) for part in PARTS} if isinstance(sums, dict) else None
            )
        levels.append(ReconciledLevel(name, by_record))
    return levels


def _differences_of(found: Any) -> list[ReconciledDifference]:
    shown = []
    for d in found if isinstance(found, list) else []:
        if not isinstance(d, dict):
            continue
        kind, part = str(d.get("check", "")), str(d.get("field", ""))
        shown.append(
            ReconciledDifference(
                kind,
                str(CHECKS.get(kind, kind)),
                str(d.get("level", "")),
                part,
                str(PARTS.get(part, part)),
                _decimal(d.get("venue")),
                _decimal(d.get("central")),
                _decimal(d.get("delta")),
            )
        )
    return shown


def reconciliation_filters(params: Mapping[str, Any]) -> tuple[str, str, str]:
    """The side, pool and venue (a licence) a reader asked for (the query's `side`, `pool`, `venue`); a
    side not known is every side."""
    side = str(params.get("side") or "")
    return (
        side if side in SIDES else "",
        str(params.get("pool") or "").strip()[:40],
        str(params.get("venue") or "").strip()[:40],
    )


def reconciliations(
    *, side: str = "", pool: str = "", venue: str = "", limit: int = RECONCILIATIONS_SHOWN
) -> list[Reconciliation]:
    """The wide-area reconciliations received (widearea.reconciled), newest first, optionally of one side,
    pool and venue: each with its totals per level and record and its differences as the installation
    recorded them."""
    rows = FeedMessage.objects.filter(kind=FeedKind.WIDE_AREA_RECONCILED).select_related("installation")
    if side:
        rows = rows.filter(payload__side=side)
    if pool:
        rows = rows.filter(payload__pool=pool)
    if venue:
        rows = rows.filter(payload__venue=venue)
    found = []
    for message in rows.order_by("-at", "-pk")[:limit]:
        p = message.payload if isinstance(message.payload, dict) else {}
        found.append(
            Reconciliation(
                message.installation,
                str(p.get("venue", "")),
                str(p.get("pool", "")),
                str(p.get("side", "")),
                int(p.get("sequence") or 0),
                int(p.get("through") or 0),
                str(p.get("state", "")),
                _levels_of(p.get("totals")),
                _differences_of(p.get("differences")),
                message.at,
                int(message.sequence),
            )
        )
    names = dict(
        Installation.objects.filter(
            kind=InstallationKind.VENUE, licence_number__in={r.venue for r in found}
        ).values_list("licence_number", "name")
    )
    return [replace(r, venue_name=names.get(r.venue, "")) for r in found]


def reconciliation_choices() -> tuple[list[str], list[str]]:
    """The pools and the venues (licences) of the reconciliations received (the page's filters): two
    queries, each distinct in the database."""
    received = FeedMessage.objects.filter(kind=FeedKind.WIDE_AREA_RECONCILED)

    def distinct(key: str) -> list[str]:
        values = received.order_by().values_list(f"payload__{key}", flat=True).distinct()
        return sorted({str(v) for v in values if v})

    return distinct("pool"), distinct("venue")
