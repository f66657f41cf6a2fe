"""Type B and C machines linked to progressive pools (spec §7, MQ-03/MQ-04), and what their interface boards
report: plays, meter snapshots, events and progressive hits, each unique by (machine, seq).

A machine's sequence numbers are one space shared by every stored message (play, meters, event, hit):
`Machine.last_seq` is the highest accepted; a jump records a `SequenceGap` that the next meter snapshot
reconciles. Plays are the append-only record of play: they are not audited one by one.
"""

from __future__ import annotations

import pgtrigger
from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from halls.fields import MoneyField
from halls.models import Venue, append_only
from jackpots.models import Pool, PoolLevel, SourceType
from jackpots.sources import PoolSource


class MachineType(models.TextChoices):
    B = "B", _("Type B (recreational with prize)")
    C = "C", _("Type C (gambling)")


class Modality(models.TextChoices):
    INDIVIDUAL = "individual", _("Individual")
    TWO_PLAYER = "two_player", _("Two-player")
    MULTI_POSITION = "multi_position", _("Multi-position")


class MachineState(models.TextChoices):
    IN_SERVICE = "in_service", _("In service")
    LOCKED = "locked", _("Locked")
    OUT_OF_SERVICE = "out_of_service", _("Out of service")


class LockReason(models.TextChoices):
    NONE = "", "—"
    HAND_PAY = "hand_pay", _("Hand pay")
    LINK_LOST = "link_lost", _("Link lost")
    OPERATOR = "operator", _("Operator")


class Machine(models.Model):
    venue = models.ForeignKey(
        Venue, on_delete=models.PROTECT, related_name="machines", verbose_name=_("venue")
    )
    asset_number = models.CharField(max_length=40, verbose_name=_("asset number"))
    machine_type = models.CharField(max_length=1, choices=MachineType.choices, verbose_name=_("machine type"))
    modality = models.CharField(
        max_length=20, choices=Modality.choices, default=Modality.INDIVIDUAL, verbose_name=_("modality")
    )
    positions = models.PositiveSmallIntegerField(default=1, verbose_name=_("positions"))
    manufacturer = models.CharField(max_length=80, verbose_name=_("manufacturer"))
    model = models.CharField(max_length=80, verbose_name=_("model"))
    serial = models.CharField(max_length=80, verbose_name=_("serial"))
    denomination = MoneyField(max_digits=8, decimal_places=2, verbose_name=_("denomination"))
    paytable_id = models.CharField(max_length=60, verbose_name=_("paytable id"))
    software_version = models.CharField(
        max_length=60, verbose_name=_("software version")
    )  # the approved version
    location = models.CharField(max_length=120, blank=True, verbose_name=_("location"))
    state = models.CharField(
        max_length=20, choices=MachineState.choices, default=MachineState.IN_SERVICE, verbose_name=_("state")
    )
    lock_reason = models.CharField(
        max_length=20, choices=LockReason.choices, default="", blank=True, verbose_name=_("lock reason")
    )
    # When the operator's lock began (None when not locked by the operator): a game in progress then may
    # still end and report its play (machines.services.gateway_batch).
    operator_locked_at = models.DateTimeField(null=True, blank=True, verbose_name=_("operator locked at"))
    online = models.BooleanField(default=False, verbose_name=_("online"))
    last_seen_at = models.DateTimeField(null=True, blank=True, verbose_name=_("last seen at"))
    token_hash = models.CharField(
        max_length=64, verbose_name=_("token hash")
    )  # sha256 hex of the device token (shown once)
    last_seq = models.BigIntegerField(default=0, verbose_name=_("last seq"))  # highest seq accepted
    created_at = models.DateTimeField(verbose_name=_("created at"))
    # Kept on the row the gateway updates anyway, so the floor page never counts plays.
    last_play_at = models.DateTimeField(null=True, blank=True, verbose_name=_("last play at"))
    plays_day = models.DateField(
        null=True, blank=True, verbose_name=_("plays day")
    )  # the venue-local day plays_today counts
    plays_today = models.PositiveIntegerField(default=0, verbose_name=_("plays today"))

    class Meta:
        verbose_name = _("machine")
        verbose_name_plural = _("machines")
        constraints = [
            models.UniqueConstraint(fields=["venue", "asset_number"], name="machine_asset_once_per_venue"),
            models.CheckConstraint(condition=Q(positions__gte=1), name="machine_positions_positive"),
            models.CheckConstraint(condition=Q(denomination__gt=0), name="machine_denomination_positive"),
            models.CheckConstraint(
                condition=(Q(state="locked") & ~Q(lock_reason="")) | (~Q(state="locked") & Q(lock_reason="")),
                name="machine_lock_reason_iff_locked",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.asset_number} ({self.machine_type})"

    @property
    def source(self) -> PoolSource:
        """The pool source its contributions carry (stored as "machine:<id>")."""
        return PoolSource.of(SourceType.MACHINE, self.pk)

    @property
    def group_name(self) -> str:
        """The channel-layer group its connection joins (machines.services.push)."""
        return f"machine.{self.pk}"


class LinkGroup(models.Model):
    """Machines linked to one pool. `same_type_and_denomination` defaults from machines.rules."""

    venue = models.ForeignKey(
        Venue, on_delete=models.PROTECT, related_name="link_groups", verbose_name=_("venue")
    )
    code = models.CharField(max_length=40, verbose_name=_("code"))
    name = models.CharField(max_length=120, verbose_name=_("name"))
    pool = models.ForeignKey(
        Pool, on_delete=models.PROTECT, related_name="link_groups", verbose_name=_("pool")
    )
    same_type_and_denomination = models.BooleanField(
        default=True, verbose_name=_("same type and denomination")
    )
    created_at = models.DateTimeField(verbose_name=_("created at"))

    class Meta:
        verbose_name = _("link group")
        verbose_name_plural = _("link groups")
        constraints = [
            models.UniqueConstraint(fields=["venue", "code"], name="link_group_code_once_per_venue")
        ]

    def __str__(self) -> str:
        return f"{self.code} · {self.name}"

    @property
    def channel_group(self) -> str:
        """The channel-layer group of its broadcasts."""
        return f"machines.link.{self.pk}"


class LinkMember(models.Model):
    group = models.ForeignKey(
        LinkGroup, on_delete=models.PROTECT, related_name="members", verbose_name=_("group")
    )
    machine = models.ForeignKey(
        Machine, on_delete=models.PROTECT, related_name="links", verbose_name=_("machine")
    )
    joined_at = models.DateTimeField(verbose_name=_("joined at"))
    left_at = models.DateTimeField(null=True, blank=True, verbose_name=_("left at"))

    class Meta:
        verbose_name = _("link member")
        verbose_name_plural = _("link members")
        constraints = [
            models.UniqueConstraint(
                fields=["machine"], condition=Q(left_at__isnull=True), name="machine_in_one_active_link"
            )
        ]


class Play(models.Model):
    """One game played (append-only). `played_at` is the device's clock, `received_at` ours."""

    machine = models.ForeignKey(
        Machine, on_delete=models.PROTECT, related_name="plays", verbose_name=_("machine")
    )
    seq = models.BigIntegerField(verbose_name=_("seq"))
    game_id = models.CharField(max_length=64, verbose_name=_("game id"))
    bet = MoneyField(max_digits=14, decimal_places=2, verbose_name=_("bet"))
    win = MoneyField(max_digits=14, decimal_places=2, verbose_name=_("win"))
    played_at = models.DateTimeField(null=True, blank=True, verbose_name=_("played at"))
    received_at = models.DateTimeField(verbose_name=_("received at"))

    class Meta:
        verbose_name = _("play")
        verbose_name_plural = _("plays")
        constraints = [models.UniqueConstraint(fields=["machine", "seq"], name="play_seq_once")]
        triggers = [append_only()]


class MeterSnapshot(models.Model):
    machine = models.ForeignKey(
        Machine, on_delete=models.PROTECT, related_name="meter_snapshots", verbose_name=_("machine")
    )
    seq = models.BigIntegerField(verbose_name=_("seq"))
    coin_in = MoneyField(max_digits=16, decimal_places=2, verbose_name=_("coin in"))
    coin_out = MoneyField(max_digits=16, decimal_places=2, verbose_name=_("coin out"))
    games_played = models.BigIntegerField(verbose_name=_("games played"))
    jackpots_paid = MoneyField(max_digits=16, decimal_places=2, verbose_name=_("jackpots paid"))
    credits = MoneyField(max_digits=16, decimal_places=2, verbose_name=_("credits"))
    taken_at = models.DateTimeField(
        verbose_name=_("taken at")
    )  # the device's clock when given, else when received

    class Meta:
        verbose_name = _("meter snapshot")
        verbose_name_plural = _("meter snapshots")
        constraints = [models.UniqueConstraint(fields=["machine", "seq"], name="meter_snapshot_seq_once")]


class EventKind(models.TextChoices):
    DOOR_OPEN = "door_open", _("Door open")
    DOOR_CLOSED = "door_closed", _("Door closed")
    POWER_ON = "power_on", _("Power on")
    POWER_OFF = "power_off", _("Power off")
    TILT = "tilt", _("Tilt")
    HAND_PAY = "hand_pay", _("Hand pay")


class MachineEvent(models.Model):
    machine = models.ForeignKey(
        Machine, on_delete=models.PROTECT, related_name="events", verbose_name=_("machine")
    )
    seq = models.BigIntegerField(verbose_name=_("seq"))
    kind = models.CharField(max_length=20, choices=EventKind.choices, verbose_name=_("kind"))
    at = models.DateTimeField(verbose_name=_("at"))

    class Meta:
        verbose_name = _("machine event")
        verbose_name_plural = _("machine events")
        constraints = [models.UniqueConstraint(fields=["machine", "seq"], name="machine_event_seq_once")]


class SequenceGap(models.Model):
    """Seqs first_missing..last_missing never arrived (yet). A late one is still accepted while the gap is
    open; the next meter snapshot reconciles it (the missing coin-in is contributed once) and closes it."""

    machine = models.ForeignKey(
        Machine, on_delete=models.PROTECT, related_name="gaps", verbose_name=_("machine")
    )
    first_missing = models.BigIntegerField(verbose_name=_("first missing"))
    last_missing = models.BigIntegerField(verbose_name=_("last missing"))
    detected_at = models.DateTimeField(verbose_name=_("detected at"))
    reconciled_at = models.DateTimeField(null=True, blank=True, verbose_name=_("reconciled at"))
    snapshot = models.ForeignKey(
        MeterSnapshot,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="reconciled_gaps",
        verbose_name=_("snapshot"),
    )
    missing_coin_in = MoneyField(
        max_digits=16, decimal_places=2, null=True, blank=True, verbose_name=_("missing coin in")
    )
    missing_games = models.BigIntegerField(null=True, blank=True, verbose_name=_("missing games"))
    note = models.CharField(max_length=300, blank=True, verbose_name=_("note"))

    class Meta:
        verbose_name = _("sequence gap")
        verbose_name_plural = _("sequence gaps")
        constraints = [
            models.CheckConstraint(condition=Q(first_missing__gte=1), name="gap_starts_at_one"),
            models.CheckConstraint(
                condition=Q(last_missing__gte=models.F("first_missing")), name="gap_range_ordered"
            ),
        ]
        indexes = [models.Index(fields=["machine", "first_missing"], name="gap_machine_first")]


PAYMENT_FIELDS = ("paid_at", "paid_by", "paid_by_label", "payment_ref")  # set once, by the hand pay


class ProgressiveHit(models.Model):
    """A machine's progressive win, awarded by the pool engine, paid by hand at the cashier."""

    machine = models.ForeignKey(
        Machine, on_delete=models.PROTECT, related_name="hits", verbose_name=_("machine")
    )
    seq = models.BigIntegerField(verbose_name=_("seq"))
    group = models.ForeignKey(
        LinkGroup, on_delete=models.PROTECT, related_name="hits", verbose_name=_("group")
    )
    level = models.ForeignKey(PoolLevel, on_delete=models.PROTECT, related_name="+", verbose_name=_("level"))
    game_id = models.CharField(max_length=64, blank=True, verbose_name=_("game id"))
    settlement_id = models.BigIntegerField(verbose_name=_("settlement id"))  # jackpots.PoolSettlement
    amount = MoneyField(max_digits=14, decimal_places=2, verbose_name=_("amount"))
    reported_at = models.DateTimeField(verbose_name=_("reported at"))
    paid_at = models.DateTimeField(null=True, blank=True, verbose_name=_("paid at"))
    paid_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        verbose_name=_("paid by"),
    )
    paid_by_label = models.CharField(max_length=150, blank=True, verbose_name=_("paid by label"))
    payment_ref = models.CharField(max_length=120, blank=True, verbose_name=_("payment ref"))

    class Meta:
        verbose_name = _("progressive hit")
        verbose_name_plural = _("progressive hits")
        constraints = [models.UniqueConstraint(fields=["machine", "seq"], name="progressive_hit_seq_once")]
        indexes = [
            models.Index(fields=["machine"], condition=Q(paid_at__isnull=True), name="hit_pending_by_machine")
        ]
        # PostgreSQL: what was won is never edited or deleted; the hand pay is written once.
        triggers = [
            pgtrigger.Protect(name="hit_never_deleted", operation=pgtrigger.Delete),
            pgtrigger.ReadOnly(name="hit_won_read_only", exclude=list(PAYMENT_FIELDS)),
            pgtrigger.Protect(
                name="hit_paid_once",
                operation=pgtrigger.Update,
                condition=pgtrigger.Q(old__paid_at__isnull=False),
            ),
        ]


class AlertKind(models.TextChoices):
    LINK_LOST = "link_lost", _("Link lost")
    SEQUENCE_GAP = "sequence_gap", _("Sequence gap")
    METER_MISMATCH = "meter_mismatch", _("Meter mismatch")
    SOFTWARE_MISMATCH = "software_mismatch", _("Software version not approved")


class MachineAlert(models.Model):
    machine = models.ForeignKey(
        Machine, on_delete=models.PROTECT, related_name="alerts", verbose_name=_("machine")
    )
    kind = models.CharField(max_length=20, choices=AlertKind.choices, verbose_name=_("kind"))
    message = models.CharField(max_length=300, verbose_name=_("message"))
    raised_at = models.DateTimeField(verbose_name=_("raised at"))
    cleared_at = models.DateTimeField(null=True, blank=True, verbose_name=_("cleared at"))

    class Meta:
        verbose_name = _("machine alert")
        verbose_name_plural = _("machine alerts")
        indexes = [
            models.Index(fields=["machine", "kind"], condition=Q(cleared_at__isnull=True), name="alert_open")
        ]
