"""Venues, rooms, screens, staff roles, game sessions, the audit chain and stream cursors."""

from __future__ import annotations

import secrets
import zoneinfo
from datetime import date, timedelta
from decimal import Decimal

import pgtrigger
from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _


def append_only() -> pgtrigger.Protect:
    """A PostgreSQL trigger refusing UPDATE and DELETE of a model's rows (no-op on SQLite).

    Row triggers: TRUNCATE (the test teardown) is not refused; the database owner can still disable it,
    which is what the chains, seals and anchors are for.
    """
    return pgtrigger.Protect(name="append_only", operation=pgtrigger.Update | pgtrigger.Delete)


class Jurisdiction(models.TextChoices):
    """Jurisdiction profiles of spec §0.3: which regulation's rules apply."""

    ML = "ML", _("Melilla 2014")
    AN96 = "AN96", _("Andalucía 1996")
    AN10 = "AN10", _("Andalucía 2010")
    CT = "CT", _("Catalonia 2000")
    EU = "EU", _("Euskadi 2010")


class HallCategory(models.TextChoices):
    FIRST = "1", "1ª"
    SECOND = "2", "2ª"
    THIRD = "3", "3ª"


class Role(models.TextChoices):
    OPERATOR = "operator", _("Hall operator")
    CALLER = "caller", _("Caller")
    CASHIER = "cashier", _("Cashier")
    # The regulator's inspector: reads every page and report of the venue and runs the audit verification;
    # never writes (halls.access: read rights on safe requests only; halls.readonly refuses the rest).
    INSPECTOR = "inspector", _("Inspector")
    # The door staff: admit or refuse people at the venue's entrance (halls.door) and nothing else.
    DOOR = "door", _("Door staff")


def validate_time_zone(value: str) -> None:
    try:
        zoneinfo.ZoneInfo(value)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError) as exc:
        raise ValidationError(_("%(value)r is not an IANA time zone") % {"value": value}) from exc


PERCENT = [MinValueValidator(Decimal("0")), MaxValueValidator(Decimal("100"))]


class Region(models.Model):
    """An Autonomous Community or City (spec §5 IB-02): where a venue is licensed, under one jurisdiction."""

    code = models.CharField(max_length=20, unique=True, verbose_name=_("code"))
    name = models.CharField(max_length=120, verbose_name=_("name"))
    jurisdiction = models.CharField(
        max_length=4, choices=Jurisdiction.choices, verbose_name=_("jurisdiction")
    )
    created_at = models.DateTimeField(auto_now_add=True, verbose_name=_("created at"))

    class Meta:
        verbose_name = _("region")
        verbose_name_plural = _("regions")

    def __str__(self) -> str:
        return f"{self.name} ({self.code})"


class Operator(models.Model):
    """The licensed company that runs venues (spec §5 IB-03: operators sign the inter-regional agreements)."""

    name = models.CharField(max_length=160, verbose_name=_("name"))
    tax_id = models.CharField(max_length=20, unique=True, verbose_name=_("tax id"))
    created_at = models.DateTimeField(auto_now_add=True, verbose_name=_("created at"))

    class Meta:
        verbose_name = _("operator")
        verbose_name_plural = _("operators")

    def __str__(self) -> str:
        return f"{self.name} ({self.tax_id})"


class Venue(models.Model):
    name = models.CharField(max_length=120, verbose_name=_("name"))
    licence_number = models.CharField(max_length=60, unique=True, verbose_name=_("licence number"))
    jurisdiction = models.CharField(
        max_length=4, choices=Jurisdiction.choices, default=Jurisdiction.ML, verbose_name=_("jurisdiction")
    )
    # Where the venue is licensed and by whom (set through halls.services.regions, audited).
    region = models.ForeignKey(
        Region,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="venues",
        verbose_name=_("region"),
    )
    operator = models.ForeignKey(
        Operator,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="venues",
        verbose_name=_("operator"),
    )
    hall_category = models.CharField(
        max_length=1,
        choices=HallCategory.choices,
        default=HallCategory.FIRST,
        verbose_name=_("hall category"),
    )
    time_zone = models.CharField(
        max_length=64, default="Europe/Madrid", validators=[validate_time_zone], verbose_name=_("time zone")
    )
    currency = models.CharField(max_length=3, default="EUR", verbose_name=_("currency"))
    # The language of the venue's public screens (settings.LANGUAGES); staff pages follow the person's choice.
    language = models.CharField(
        max_length=8, choices=settings.LANGUAGES, default="es", verbose_name=_("language")
    )
    # Line and Bingo prizes as percentages of each game's sales (spec §2.7 S7), set per venue.
    line_percent = models.DecimalField(
        max_digits=5,
        decimal_places=2,
        default=Decimal("10"),
        validators=PERCENT,
        verbose_name=_("line percent"),
    )
    bingo_percent = models.DecimalField(
        max_digits=5,
        decimal_places=2,
        default=Decimal("50"),
        validators=PERCENT,
        verbose_name=_("bingo percent"),
    )

    class Meta:
        verbose_name = _("venue")
        verbose_name_plural = _("venues")
        constraints = [
            models.CheckConstraint(
                condition=Q(line_percent__gte=0)
                & Q(bingo_percent__gte=0)
                & Q(line_percent__lte=100)
                & Q(bingo_percent__lte=100)
                & Q(line_percent__lte=100 - models.F("bingo_percent")),
                name="venue_prize_percents_within_sales",
            )
        ]

    def __str__(self) -> str:
        return self.name


class Room(models.Model):
    """A bingo room (sala / mesa): where one game at a time is played and shown on its screens."""

    venue = models.ForeignKey(Venue, on_delete=models.PROTECT, related_name="rooms", verbose_name=_("venue"))
    name = models.CharField(max_length=80, verbose_name=_("name"))
    # Seconds between RNG balls.
    ball_pace_seconds = models.DecimalField(
        max_digits=5,
        decimal_places=2,
        default=Decimal("4"),
        validators=[MinValueValidator(Decimal("0.05"))],
        verbose_name=_("ball pace seconds"),
    )
    # Seconds shown on screens for "any more lines / bingos?" (OP-13); closing stays a staff action.
    claim_window_seconds = models.PositiveIntegerField(default=20, verbose_name=_("claim window seconds"))
    # The caller's voice on the room's audio screen (spec §2.7 S10, TB-42): set from the console, live
    # (halls.services.voice).
    voice_muted = models.BooleanField(default=False, verbose_name=_("voice muted"))
    voice_volume = models.PositiveSmallIntegerField(
        default=80, validators=[MinValueValidator(0), MaxValueValidator(100)], verbose_name=_("voice volume")
    )

    class Meta:
        verbose_name = _("room")
        verbose_name_plural = _("rooms")
        constraints = [
            models.UniqueConstraint(fields=["venue", "name"], name="room_name_unique_per_venue"),
            models.CheckConstraint(
                condition=models.Q(voice_volume__lte=100), name="room_voice_volume_max_100"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.venue} · {self.name}"

    @property
    def stream(self) -> str:
        return room_stream(self.pk)


def room_stream(room_id: int) -> str:
    """A room's public stream (its screens, its terminals), named without a Room at hand."""
    return f"room.{room_id}"


def room_staff_stream(room_id: int) -> str:
    """A room's staff-only stream: what the caller's console sees beyond the public screens (the consoles
    of the room, bingo.traditional.services.console, listen to it with the public one)."""
    return f"room.{room_id}.staff"


def new_screen_token() -> str:
    return secrets.token_urlsafe(24)


class Screen(models.Model):
    """A public display, reached read-only by an unguessable token URL."""

    venue = models.ForeignKey(
        Venue, on_delete=models.PROTECT, related_name="screens", verbose_name=_("venue")
    )
    room = models.ForeignKey(Room, on_delete=models.PROTECT, related_name="screens", verbose_name=_("room"))
    name = models.CharField(max_length=80, verbose_name=_("name"))
    token = models.CharField(
        max_length=64, unique=True, default=new_screen_token, editable=False, verbose_name=_("token")
    )
    active = models.BooleanField(default=True, verbose_name=_("active"))
    # The room's audio screen: the one whose loudspeakers say the balls (at most one per room; chosen through
    # halls.services.voice.choose_audio_screen).
    plays_audio = models.BooleanField(default=False, verbose_name=_("plays audio"))

    class Meta:
        verbose_name = _("screen")
        verbose_name_plural = _("screens")
        constraints = [
            models.UniqueConstraint(
                fields=["room"], condition=models.Q(plays_audio=True), name="screen_one_audio_screen_per_room"
            )
        ]

    def __str__(self) -> str:
        return self.name

    def clean(self) -> None:
        if self.room_id and self.venue_id and self.room.venue_id != self.venue_id:
            raise ValidationError(_("A screen shows a room of its own venue."))


class StaffRole(models.Model):
    """A user's role in one venue. Staff of one venue can neither see nor act on another."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="hall_roles", verbose_name=_("user")
    )
    venue = models.ForeignKey(
        Venue, on_delete=models.CASCADE, related_name="staff_roles", verbose_name=_("venue")
    )
    role = models.CharField(max_length=10, choices=Role.choices, verbose_name=_("role"))

    class Meta:
        verbose_name = _("staff role")
        verbose_name_plural = _("staff roles")
        constraints = [models.UniqueConstraint(fields=["user", "venue", "role"], name="staff_role_unique")]

    def __str__(self) -> str:
        return f"{self.user} · {self.get_role_display()} @ {self.venue}"


class GameSession(models.Model):
    """A sesión (spec §2.7 S1–S2): opened after the pre-session checks, closed at the end of the day."""

    room = models.ForeignKey(Room, on_delete=models.PROTECT, related_name="sessions", verbose_name=_("room"))
    opened_at = models.DateTimeField(verbose_name=_("opened at"))
    opened_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+", verbose_name=_("opened by")
    )
    blower_ok = models.BooleanField(verbose_name=_("blower ok"))
    reserve_ok = models.BooleanField(verbose_name=_("reserve ok"))
    reader_ok = models.BooleanField(verbose_name=_("reader ok"))
    # The 90 numbers of the inspection draw, in the order they came out.
    inspection_balls = models.JSONField(verbose_name=_("inspection balls"))
    closed_at = models.DateTimeField(null=True, blank=True, verbose_name=_("closed at"))
    closed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        verbose_name=_("closed by"),
    )

    class Meta:
        verbose_name = _("game session")
        verbose_name_plural = _("game sessions")
        constraints = [
            models.UniqueConstraint(
                fields=["room"], condition=Q(closed_at__isnull=True), name="one_open_session_per_room"
            )
        ]

    def __str__(self) -> str:
        return str(_("Session %(id)s · %(room)s")) % {"id": self.pk, "room": self.room}

    @property
    def is_open(self) -> bool:
        return self.closed_at is None


class CheckName(models.TextChoices):
    """The pre-session checks of a traditional session (spec §2.7 S1–S2, R-07)."""

    BLOWER = "blower", _("Ball blower")
    RESERVE = "reserve", _("Reserve device")
    READER = "reader", _("Ball reader")
    INSPECTION = "inspection", _("Inspection draw (90 balls)")


class SessionCheck(models.Model):
    """One pre-session check of a room (R-07): which, its result, who ran it and when.

    A check recorded before the session opens waits on the room (``session`` empty) and is attached to the
    session that opens next; a check the opener states when opening is theirs. The minutes print each.
    """

    room = models.ForeignKey(Room, on_delete=models.PROTECT, related_name="checks")
    session = models.ForeignKey(
        GameSession, null=True, blank=True, on_delete=models.PROTECT, related_name="checks"
    )
    check_name = models.CharField(max_length=20, choices=CheckName.choices)
    ok = models.BooleanField()
    checked_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    checked_at = models.DateTimeField()
    note = models.CharField(max_length=500, blank=True)

    class Meta:
        verbose_name = _("session check")
        verbose_name_plural = _("session checks")
        ordering = ["checked_at", "pk"]
        indexes = [models.Index(fields=["room", "session", "checked_at"])]

    def __str__(self) -> str:
        return f"{self.get_check_name_display()} · {self.checked_by} · {self.ok}"


class StreamCursor(models.Model):
    """The last sequence number published on one event stream (e.g. ``room.7``)."""

    stream = models.CharField(max_length=80, unique=True)
    seq = models.BigIntegerField(default=0)

    class Meta:
        verbose_name = _("stream cursor")
        verbose_name_plural = _("stream cursors")


class DisplayAck(models.Model):
    """One frame a screen or terminal says it put on the glass (issue 28): the stream sequence it rendered,
    when, and the digest of what it showed (halls.acks). Append-only; a retry of the same (device, stream,
    seq) is a no-op. Written in batches off the draw path (halls.ack_batcher -> halls.services.acks)."""

    class Kind(models.TextChoices):
        SCREEN = "screen", _("hall screen")
        TERMINAL = "terminal", _("player terminal")

    kind = models.CharField(max_length=12, choices=Kind.choices, verbose_name=_("kind"))
    device = models.BigIntegerField(verbose_name=_("device"))  # the Screen's or the Terminal's id
    stream = models.CharField(max_length=80, verbose_name=_("stream"))
    seq = models.BigIntegerField(verbose_name=_("sequence"))
    frame = models.CharField(max_length=40, verbose_name=_("frame"))  # the event type, or "snapshot"
    game = models.BigIntegerField(null=True, blank=True, verbose_name=_("game"))
    balls = models.JSONField(default=list, verbose_name=_("balls"))  # the balls that frame showed
    digest = models.CharField(max_length=16, verbose_name=_("digest"))
    rendered_at = models.DateTimeField(verbose_name=_("rendered at"))  # the device's clock
    received_at = models.DateTimeField(verbose_name=_("received at"))  # the server's

    class Meta:
        verbose_name = _("display acknowledgement")
        verbose_name_plural = _("display acknowledgements")
        constraints = [
            models.UniqueConstraint(fields=["kind", "device", "stream", "seq"], name="display_ack_once")
        ]
        indexes = [models.Index(fields=["stream", "game"], name="display_ack_game")]
        triggers = [append_only()]

    def __str__(self) -> str:
        return f"{self.kind}:{self.device} {self.stream}#{self.seq}"


class AuditEntry(models.Model):
    """Append-only, hash-chained record of every write that decides money or play.

    Each entry's hash (an HMAC under a key kept outside the database, see ``alg``) covers its content and
    the previous entry's hash (per venue), so editing or removing a row breaks the chain, which
    ``halls.services.audit.verify_chain`` detects. On PostgreSQL a trigger refuses UPDATE and DELETE.
    """

    venue = models.ForeignKey(Venue, on_delete=models.PROTECT, related_name="+", verbose_name=_("venue"))
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        verbose_name=_("actor"),
    )
    actor_label = models.CharField(max_length=150, verbose_name=_("actor label"))
    action = models.CharField(max_length=80, verbose_name=_("action"))
    object_type = models.CharField(max_length=80, verbose_name=_("object type"))
    object_id = models.CharField(max_length=40, verbose_name=_("object id"))
    data = models.JSONField(default=dict, verbose_name=_("data"))
    created_at = models.DateTimeField(verbose_name=_("created at"))
    prev_hash = models.CharField(max_length=64, verbose_name=_("prev hash"))
    hash = models.CharField(max_length=64, unique=True, verbose_name=_("hash"))
    # How ``hash`` was made: "hmac-sha256:<key id>", or "sha256" for entries from before the key.
    alg = models.CharField(max_length=32, default="sha256", verbose_name=_("alg"))

    class Meta:
        verbose_name = _("audit entry")
        verbose_name_plural = _("audit entries")
        indexes = [models.Index(fields=["object_type", "object_id"])]
        triggers = [append_only()]

    def __str__(self) -> str:
        return f"{self.created_at:%Y-%m-%d %H:%M:%S} {self.action} {self.object_type}:{self.object_id}"


class AuditChainHead(models.Model):
    """The tip of one venue's audit chain; locked while appending so entries chain in a single line."""

    venue = models.OneToOneField(Venue, on_delete=models.PROTECT, related_name="+")
    last_hash = models.CharField(max_length=64)
    length = models.BigIntegerField(default=0)
    alg = models.CharField(max_length=32, default="sha256")  # the last entry's (see AuditEntry.alg)

    class Meta:
        verbose_name = _("audit chain head")
        verbose_name_plural = _("audit chain heads")
        # The tip only moves forward: a rewound or deleted head is refused (a tail cut needs both).
        triggers = [
            pgtrigger.Protect(name="head_never_deleted", operation=pgtrigger.Delete),
            pgtrigger.Protect(
                name="head_only_grows",
                operation=pgtrigger.Update,
                condition=pgtrigger.Q(new__length__lte=pgtrigger.F("old__length")),
            ),
        ]


class Installation(models.Model):
    """This installation's identity (one row, halls.services.installation): a random id made at its first
    anchor, which names what it publishes outside the database (the audit anchors). Append-only: an id that
    changed would leave the installation's anchors behind."""

    id = models.PositiveSmallIntegerField(primary_key=True, default=1)
    uid = models.CharField(max_length=32, unique=True, verbose_name=_("installation id"))
    created_at = models.DateTimeField(verbose_name=_("created at"))

    class Meta:
        verbose_name = _("installation")
        verbose_name_plural = _("installations")
        constraints = [models.CheckConstraint(condition=Q(id=1), name="installation_one_row")]
        triggers = [append_only()]

    def __str__(self) -> str:
        return self.uid


class VenueClock(models.Model):
    """A certification lab's clock of one venue (never in production: halls.services.venueclock): how far
    ahead of the real time the venue's time runs, so scheduled prizes by hour and by operating day can be
    played black-box. Only moves forward; each move is audited on the venue's chain."""

    venue = models.OneToOneField(
        Venue, on_delete=models.CASCADE, primary_key=True, related_name="+", verbose_name=_("venue")
    )
    offset = models.DurationField(default=timedelta(0), verbose_name=_("offset"))
    moved_at = models.DateTimeField(verbose_name=_("moved at"))  # real time of the latest move
    moved_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        verbose_name=_("moved by"),
    )

    class Meta:
        verbose_name = _("lab clock")
        verbose_name_plural = _("lab clocks")

    def __str__(self) -> str:
        return f"venue {self.venue_id} +{self.offset}"


class Network(models.Model):
    """Linked venues that share network-wide pools (and, later, interconnected bingo games)."""

    name = models.CharField(max_length=120, verbose_name=_("name"))
    code = models.CharField(max_length=40, unique=True, verbose_name=_("code"))
    jurisdiction = models.CharField(
        max_length=4, choices=Jurisdiction.choices, verbose_name=_("jurisdiction")
    )
    venues = models.ManyToManyField(Venue, related_name="networks", blank=True, verbose_name=_("venues"))

    class Meta:
        verbose_name = _("network")
        verbose_name_plural = _("networks")

    def __str__(self) -> str:
        return self.name


class AgreementEnd(models.TextChoices):
    REVOKED = "revoked", _("Revoked")
    EXPIRED = "expired", _("Expired")


class RegionAgreement(models.Model):
    """What lets a network prize span two regions (spec §5 IB-03, IB-04, R-14): the operators' agreement
    and the administrations' collaboration protocol, each with its reference and signing date, valid from
    ``valid_from`` through ``valid_until`` (None: open-ended).

    The pair is unordered and stored normalised (``region_a`` has the lower id); at most one agreement of a
    pair is open (not ended) at a time. Rows are written through halls.services.regions only.
    """

    region_a = models.ForeignKey(
        Region, on_delete=models.PROTECT, related_name="+", verbose_name=_("region a")
    )
    region_b = models.ForeignKey(
        Region, on_delete=models.PROTECT, related_name="+", verbose_name=_("region b")
    )
    operator_agreement_ref = models.CharField(
        max_length=120, blank=True, verbose_name=_("operator agreement ref")
    )
    operator_agreement_signed_on = models.DateField(
        null=True, blank=True, verbose_name=_("operator agreement signed on")
    )
    operators = models.ManyToManyField(
        Operator, related_name="agreements", blank=True, verbose_name=_("operators")
    )
    protocol_ref = models.CharField(max_length=120, blank=True, verbose_name=_("protocol ref"))
    protocol_signed_on = models.DateField(null=True, blank=True, verbose_name=_("protocol signed on"))
    valid_from = models.DateField(verbose_name=_("valid from"))
    valid_until = models.DateField(null=True, blank=True, verbose_name=_("valid until"))
    recorded_at = models.DateTimeField(verbose_name=_("recorded at"))
    recorded_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        verbose_name=_("recorded by"),
    )
    ended_at = models.DateTimeField(null=True, blank=True, verbose_name=_("ended at"))
    ended_as = models.CharField(
        max_length=8, choices=AgreementEnd.choices, blank=True, verbose_name=_("ended as")
    )
    ended_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        verbose_name=_("ended by"),
    )
    end_note = models.CharField(max_length=240, blank=True, verbose_name=_("end note"))

    class Meta:
        verbose_name = _("region agreement")
        verbose_name_plural = _("region agreements")
        constraints = [
            models.CheckConstraint(
                condition=Q(region_a__lt=models.F("region_b")), name="region_agreement_pair_normalised"
            ),
            models.CheckConstraint(
                condition=Q(valid_until__isnull=True) | Q(valid_until__gte=models.F("valid_from")),
                name="region_agreement_period",
            ),
            models.CheckConstraint(
                condition=(Q(operator_agreement_ref="") & Q(operator_agreement_signed_on__isnull=True))
                | (~Q(operator_agreement_ref="") & Q(operator_agreement_signed_on__isnull=False)),
                name="region_agreement_operator_document",
            ),
            models.CheckConstraint(
                condition=(Q(protocol_ref="") & Q(protocol_signed_on__isnull=True))
                | (~Q(protocol_ref="") & Q(protocol_signed_on__isnull=False)),
                name="region_agreement_protocol_document",
            ),
            models.CheckConstraint(
                condition=(Q(ended_at__isnull=True) & Q(ended_as=""))
                | (Q(ended_at__isnull=False) & ~Q(ended_as="")),
                name="region_agreement_end",
            ),
            models.UniqueConstraint(
                fields=["region_a", "region_b"],
                condition=Q(ended_at__isnull=True),
                name="one_open_agreement_per_region_pair",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.region_a.code} ↔ {self.region_b.code}"

    def missing_on(self, day: date) -> list[str]:
        """What keeps the agreement from covering ``day``: empty when it is valid then."""
        missing = []
        if not self.operator_agreement_ref or (
            self.operator_agreement_signed_on is None or self.operator_agreement_signed_on > day
        ):
            missing.append("operator_agreement")
        if not self.protocol_ref or self.protocol_signed_on is None or self.protocol_signed_on > day:
            missing.append("administration_protocol")
        if self.ended_at is not None:
            missing.append(str(self.ended_as))
        elif day < self.valid_from:
            missing.append("not_yet_valid")
        elif self.valid_until is not None and day > self.valid_until:
            missing.append("expired")
        return missing


class ProposalStatus(models.TextChoices):
    PROPOSED = "proposed", _("Proposed")
    APPROVED = "approved", _("Approved")  # decided, to be applied later by its kind (none does yet)
    REJECTED = "rejected", _("Rejected")
    EXPIRED = "expired", _("Expired")
    APPLIED = "applied", _("Applied")  # approved and applied in the same transaction


class Proposal(models.Model):
    """A money-deciding change waiting for a second person (four eyes, halls.foureyes): proposed by one
    member of the venue's staff, approved (and applied at once) or rejected by another, who types their own
    password at that moment; it expires after HALL_FOUR_EYES_EXPIRY_MINUTES. Written only by
    halls.services.proposals; ``params`` never holds personal data (ids, amounts, rates, digests)."""

    venue = models.ForeignKey(Venue, on_delete=models.PROTECT, related_name="+", verbose_name=_("venue"))
    kind = models.CharField(max_length=60, verbose_name=_("kind"))  # a key of halls.foureyes' registry
    target = models.CharField(max_length=120, verbose_name=_("target"))  # e.g. "pool-level:12", "table:3"
    params = models.JSONField(verbose_name=_("change"))  # canonical: what the kind's validator returned
    digest = models.CharField(max_length=64, verbose_name=_("digest"))  # halls.foureyes.params_digest
    proposed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        related_name="+",
        verbose_name=_("proposed by"),
    )
    proposed_at = models.DateTimeField(verbose_name=_("proposed at"))
    expires_at = models.DateTimeField(verbose_name=_("expires at"))
    status = models.CharField(
        max_length=10,
        choices=ProposalStatus.choices,
        default=ProposalStatus.PROPOSED,
        verbose_name=_("status"),
    )
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        verbose_name=_("decided by"),
    )
    decided_at = models.DateTimeField(null=True, blank=True, verbose_name=_("decided at"))
    reason = models.CharField(max_length=500, blank=True, verbose_name=_("reason"))
    # The digest printed on the posted sheet the approver read (empty when the kind posts none).
    posted_digest = models.CharField(max_length=64, blank=True, verbose_name=_("posted digest"))
    result = models.JSONField(default=dict, blank=True, verbose_name=_("result"))  # what the applier did

    class Meta:
        verbose_name = _("four-eyes proposal")
        verbose_name_plural = _("four-eyes proposals")
        indexes = [models.Index(fields=["venue", "status"])]
        constraints = [
            models.CheckConstraint(
                condition=Q(status="proposed", decided_at__isnull=True)
                | (~Q(status="proposed") & Q(decided_at__isnull=False)),
                name="proposal_decided_when_not_proposed",
            ),
        ]

    def __str__(self) -> str:
        return f"#{self.pk} {self.kind} {self.target} ({self.status})"
