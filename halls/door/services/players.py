"""An admitted person is a player (issue 27): the door's side of the cashier's player cards.

`admitted_player` (called by halls.door.services.admission.admit on an admission) finds or makes the
venue's `Player` by the document's keyed digest (the record the cashier's cards point to; no name needed)
and sets its admission to stand until the end of the venue's local day (`Player.admitted_until`, on the
venue's clock): the cashier issues, loads and lets a terminal use that player's cards only while it stands
(halls.cashier.services.admitted).

An admission is withdrawn, and the player's cards blocked at once, when the person turns out to be barred:
a register version loaded (`withdraw_listed`, from registers.load_register_file) or a refusal at the door as
prohibited (an online hit included) lists them, or they self-exclude (`withdraw_self_excluded`, from
admission.self_exclude and admit's refusal). When the player was inside (admitted today, their admission
standing) the door is alerted: a `DoorAlert` row (`open_alerts` lists them for the door's page,
`acknowledge_alert` closes one) and a typed event on the venue's door stream (`door_stream`). "Inside" is
"admitted today": the door records no exits (yet).

The blocked cards' reason names no register's reason; audit rows and events carry ids and counts, never a
document, a digest or a name. Callers hold their own transaction and call these before their own audit
rows (the card locks rank below the audit chain's head: halls.locks).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from zoneinfo import ZoneInfo

from django.conf import settings
from django.contrib.auth.models import User
from django.db import models, transaction
from django.utils import timezone, translation
from django.utils.translation import gettext as _

from halls import events
from halls.actors import Actor, actor_label
from halls.cashier.models import Player
from halls.cashier.services import player_cards
from halls.door.models import AlertKind, Decision, DoorAlert, RegisterEntry, RegisterVersion, Visit
from halls.door.services.doorday import door_day, door_stream
from halls.errors import NotFound
from halls.eventtypes import EventType
from halls.models import Venue
from halls.services import audit, venueclock


def end_of_day(venue: Venue, at: datetime) -> datetime:
    """The end of the venue's door day holding `at` (doorday.door_day: HALL_DOOR_DAY_START_HOUR, so a hall
    open past midnight keeps its evening's players admitted)."""
    return door_day(venue, at)[2]


def _start_of_day(venue: Venue, at: datetime) -> datetime:
    return door_day(venue, at)[1]


# --- an admission ---------------------------------------------------------------------------------------


def admitted_player(*, venue: Venue, digest: bytes, at: datetime) -> Player:
    """The venue's player of this document digest, made if new, admitted until the end of `at`'s local day
    (a later admission of the same day keeps the same end). One get_or_create, and an update when found."""
    until = end_of_day(venue, at)
    player, created = Player.objects.get_or_create(
        venue=venue, digest=digest, defaults={"created_at": timezone.now(), "admitted_until": until}
    )
    if not created and (player.admitted_until is None or player.admitted_until < until):
        Player.objects.filter(pk=player.pk).update(admitted_until=until)
        player.admitted_until = until
    return player


def player_of(*, venue: Venue, digest: bytes) -> Player | None:
    return Player.objects.filter(venue=venue, digest=digest).first()


def is_admitted(player: Player) -> bool:
    """Whether the player's admission stands now (admitted today, not withdrawn), on the venue's clock."""
    return player.admitted_until is not None and venueclock.now(player.venue_id) < player.admitted_until


def _inside(players: list[Player]) -> list[Player]:
    """Those of `players` whose admission stands now, each venue's clock read once."""
    nows = {vid: venueclock.now(vid) for vid in {p.venue_id for p in players}}
    return [p for p in players if p.admitted_until is not None and nows[p.venue_id] < p.admitted_until]


# --- withdrawing ----------------------------------------------------------------------------------------


def _reason(kind: AlertKind) -> str:
    """The blocked cards' reason, in the hall's language (what the till shows): never a register's reason."""
    with translation.override(settings.LANGUAGE_CODE):
        if kind == AlertKind.REGISTER_LISTED:
            return _("Listed on a prohibited-access register.")
        return _("Self-excluded.")


def _withdraw(
    players: list[Player],
    *,
    kind: AlertKind,
    actor: Actor,
    version: RegisterVersion | None = None,
) -> list[DoorAlert]:
    """Withdraw the players' admissions, block their active cards, and alert the door of each one who was
    inside. Inside the caller's transaction; before its audit rows."""
    if not players:
        return []
    now = timezone.now()
    inside = _inside(players)
    Player.objects.filter(pk__in=[p.pk for p in inside]).update(admitted_until=None)
    blocked = player_cards.block_cards_of(
        player_ids=sorted(p.pk for p in players), reason=_reason(kind), actor=actor
    )
    per_player: dict[int, int] = {}
    for card in blocked:
        per_player[card.player_id or 0] = per_player.get(card.player_id or 0, 0) + 1
    alerts = []
    for player in sorted(inside, key=lambda p: (p.venue_id, p.pk)):  # the audit heads in venue order
        venue = Venue.objects.get(pk=player.venue_id)
        visit = (
            Visit.objects.filter(
                venue=venue,
                player=player,
                decision=Decision.ADMITTED,
                at__gte=_start_of_day(venue, venueclock.now(venue.pk)),
            )
            .order_by("-at")
            .first()
        )
        alert = DoorAlert.objects.create(
            venue=venue,
            kind=kind,
            player=player,
            visit=visit,
            register_version=version,
            cards_blocked=per_player.get(player.pk, 0),
            raised_at=now,
        )
        player.admitted_until = None
        audit.record(
            venue_id=venue.pk,
            actor=actor,
            action="door.alert_raised",
            obj=alert,
            data={
                "kind": kind.value,
                "player": player.pk,
                "visit": visit.pk if visit else None,
                "register": version.register.code if version else None,
                "register_version": version.number if version else None,
                "cards_blocked": alert.cards_blocked,
            },
        )
        events.emit(
            door_stream(venue.pk),
            EventType.DOOR_ALERT,
            {
                "alert": alert.pk,
                "kind": kind.value,
                "raised_at": now,
                "visit": visit.pk if visit else None,
                "door": visit.door if visit else None,
                "admitted_at": visit.at if visit else None,
                "register": version.register.code if version else None,
                "register_version": version.number if version else None,
                "cards_blocked": alert.cards_blocked,
            },
        )
        alerts.append(alert)
    return alerts


def withdraw_listed(*, version: RegisterVersion, venue_ids: list[int], actor: Actor) -> list[DoorAlert]:
    """A register version just loaded: every player inside one of `venue_ids` (the venues the register
    binds) whose document it lists has their admission withdrawn, their cards blocked, the door alerted.
    Two queries to find them: the players inside, then which of their digests the version lists."""
    real_now = timezone.now()  # a venue's clock runs at or ahead of it: those inside are among these
    candidates = _inside(
        list(
            Player.objects.filter(
                venue_id__in=venue_ids, admitted_until__gt=real_now, digest__isnull=False
            ).order_by("pk")
        )
    )
    if not candidates:
        return []
    listed = {
        bytes(d)
        for d in RegisterEntry.objects.filter(
            version=version, digest__in=[bytes(p.digest) for p in candidates if p.digest is not None]
        ).values_list("digest", flat=True)
    }
    found = [p for p in candidates if p.digest is not None and bytes(p.digest) in listed]
    return _withdraw(found, kind=AlertKind.REGISTER_LISTED, actor=actor, version=version)


def withdraw_refused(
    *, venue: Venue, digest: bytes, decision: Decision, version_id: int | None, actor: Actor
) -> list[DoorAlert]:
    """A refusal at the door as prohibited or self-excluded (an online register's hit included) of a known
    player: their admission withdrawn, their cards blocked, the door alerted if they were inside."""
    if decision not in (Decision.PROHIBITED, Decision.SELF_EXCLUDED):
        return []  # an admission or a minor: no query
    player = player_of(venue=venue, digest=digest)
    if player is None:
        return []
    if decision == Decision.PROHIBITED:
        version = (
            RegisterVersion.objects.select_related("register").get(pk=version_id) if version_id else None
        )
        return _withdraw([player], kind=AlertKind.REGISTER_LISTED, actor=actor, version=version)
    return _withdraw([player], kind=AlertKind.SELF_EXCLUDED, actor=actor)


def withdraw_self_excluded(*, venue: Venue, digest: bytes, actor: Actor) -> list[DoorAlert]:
    """A self-exclusion recorded: the person's player (if any) has their admission withdrawn and their cards
    blocked; the door is alerted if they were inside."""
    player = player_of(venue=venue, digest=digest)
    return _withdraw([player], kind=AlertKind.SELF_EXCLUDED, actor=actor) if player is not None else []


# --- the door's read model and acknowledgement ----------------------------------------------------------


@dataclass(frozen=True, slots=True)
class OpenAlert:
    """An alert the door has not acknowledged yet, as the door's page lists it (no personal data)."""

    id: int
    kind: str
    kind_label: str
    raised_at: datetime
    player: int
    visit: int | None
    door: str | None  # the door that admitted them today, and when
    admitted_at: datetime | None
    register: str | None  # the register's code and version that listed them (never its reason)
    register_version: int | None
    cards_blocked: int


def open_alerts(venue: Venue, *, day: date | None = None) -> list[OpenAlert]:
    """The venue's alerts not acknowledged yet, newest first (with `day`: only those raised on that local
    day of the venue). Two queries at most."""
    rows = DoorAlert.objects.filter(venue=venue, acknowledged_at__isnull=True)
    if day is not None:
        zone = ZoneInfo(venue.time_zone)
        start = datetime.combine(day, time.min, tzinfo=zone)
        rows = rows.filter(raised_at__gte=start, raised_at__lt=start + timedelta(days=1))
    labels = dict(AlertKind.choices)
    return [
        OpenAlert(
            id=a.pk,
            kind=a.kind,
            kind_label=str(labels.get(a.kind, a.kind)),
            raised_at=a.raised_at,
            player=a.player_id,
            visit=a.visit_id,
            door=a.visit.door if a.visit else None,
            admitted_at=a.visit.at if a.visit else None,
            register=a.register_version.register.code if a.register_version else None,
            register_version=a.register_version.number if a.register_version else None,
            cards_blocked=a.cards_blocked,
        )
        for a in rows.select_related("visit", "register_version__register").order_by("-raised_at", "-pk")
    ]


def acknowledge_alert(*, venue: Venue, alert_id: int, actor: Actor) -> DoorAlert:
    """The door staff have seen the alert (and dealt with the person): it leaves the open list. Again on an
    acknowledged alert changes nothing. 404 unknown_alert for another venue's or none."""
    with transaction.atomic():
        now = timezone.now()
        # Compare-and-swap: of two acknowledgements at once, one closes it and is audited.
        closed = DoorAlert.objects.filter(venue=venue, pk=alert_id, acknowledged_at__isnull=True).update(
            acknowledged_at=now,
            acknowledged_by=actor if isinstance(actor, User) else None,
            acknowledged_by_label=actor_label(actor)[:150],
        )
        alert = DoorAlert.objects.filter(venue=venue, pk=alert_id).first()
        if alert is None:
            raise NotFound(_("No alert %(alert)s at this venue.") % {"alert": alert_id}, code="unknown_alert")
        if not closed:
            return alert
        audit.record(venue_id=venue.pk, actor=actor, action="door.alert_acknowledged", obj=alert, data={})
        events.emit(
            door_stream(venue.pk),
            EventType.DOOR_ALERT_ACKNOWLEDGED,
            {
                "alert": alert.pk,
                "acknowledged_at": alert.acknowledged_at,
                "acknowledged_by": alert.acknowledged_by_label,
            },
        )
    return alert


# --- the retention --------------------------------------------------------------------------------------


def player_retention(venue: Venue) -> timedelta:
    """How long a player's document digest is kept after their last admission (its jurisdiction's
    "player_retention_days"; HALL_DOOR_PLAYER_RETENTION_DAYS, 365 days by default)."""
    overrides = settings.HALL_DOOR_BY_JURISDICTION.get(venue.jurisdiction, {})
    return timedelta(
        days=int(overrides.get("player_retention_days", settings.HALL_DOOR_PLAYER_RETENTION_DAYS))
    )


def purge_players(*, now: datetime | None = None, actor: Actor = "door.purge") -> int:
    """Clear the document digest of every player not admitted within their venue's retention (never admitted:
    since the record was made). The player record stays (their cards, their ledger); a person coming back
    afterwards is a new player. Audited per venue with the count; returns how many were cleared."""
    now = now or timezone.now()
    total = 0
    venue_ids = sorted(set(Player.objects.filter(digest__isnull=False).values_list("venue_id", flat=True)))
    with transaction.atomic():
        for venue in Venue.objects.filter(pk__in=venue_ids).order_by("pk"):  # the audit heads' order
            before = now - player_retention(venue)
            stale = Player.objects.filter(venue=venue, digest__isnull=False).filter(
                models.Q(admitted_until__lt=before)
                | models.Q(admitted_until__isnull=True, created_at__lt=before)
            )
            cleared = stale.update(digest=None, admitted_until=None)
            if cleared:
                total += cleared
                audit.record(
                    venue_id=venue.pk,
                    actor=actor,
                    action="door.players_purged",
                    obj=venue,
                    data={"players": cleared, "before": before.isoformat()},
                )
    return total
