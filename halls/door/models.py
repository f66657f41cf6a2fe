"""The prohibited-access registers (the national RGIAJ, each region's own): what the door checks against.

A `Register` is of one jurisdiction (halls.models.Jurisdiction) or national (blank): a venue is bound by
the national registers and those of its jurisdiction. Each loaded file is a `RegisterVersion` (its number,
issue date, SHA-256, entry count, who loaded it and when); the register points at its one current version,
and only that version's entries are kept (a superseded version keeps its row, so a visit records which
version decided). An entry is the keyed digest (HMAC-SHA256 under settings.HALL_REGISTER_KEY) of a
person's normalized document: no register's numbers in clear, and never its reasons. Written through
halls.door.services.registers only.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _

from halls.models import Jurisdiction


class Register(models.Model):
    code = models.CharField(max_length=20, unique=True, verbose_name=_("code"))
    name = models.CharField(max_length=120, verbose_name=_("name"))
    # Blank: a national register (every venue is bound by it); else the jurisdiction whose venues it binds.
    jurisdiction = models.CharField(
        max_length=4, choices=Jurisdiction.choices, blank=True, verbose_name=_("jurisdiction")
    )
    current_version = models.OneToOneField(
        "RegisterVersion",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        verbose_name=_("current version"),
    )
    created_at = models.DateTimeField(auto_now_add=True, verbose_name=_("created at"))

    class Meta:
        verbose_name = _("prohibited-access register")
        verbose_name_plural = _("prohibited-access registers")

    def __str__(self) -> str:
        return f"{self.name} ({self.code})"

    @property
    def is_national(self) -> bool:
        return not self.jurisdiction


class RegisterVersion(models.Model):
    register = models.ForeignKey(
        Register, on_delete=models.PROTECT, related_name="versions", verbose_name=_("register")
    )
    number = models.PositiveIntegerField(verbose_name=_("version"))
    issued_on = models.DateField(verbose_name=_("issued on"))
    sha256 = models.CharField(max_length=64, verbose_name=_("SHA-256 of the file"))
    # Which HALL_REGISTER_KEY keyed the entries (halls.door.services.registers.key_id): after the key
    # changes, a version keyed with the old one matches nobody, so the lookup reports it as unreadable.
    key_id = models.CharField(max_length=16, verbose_name=_("key id"))
    entry_count = models.PositiveIntegerField(verbose_name=_("entries"))
    loaded_at = models.DateTimeField(verbose_name=_("loaded at"))
    loaded_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        verbose_name=_("loaded by"),
    )
    # Who loaded it when it was no user (a command, a task): the actor's label.
    loaded_by_label = models.CharField(max_length=150, verbose_name=_("loaded by (label)"))
    superseded_at = models.DateTimeField(null=True, blank=True, verbose_name=_("superseded at"))

    class Meta:
        verbose_name = _("register version")
        verbose_name_plural = _("register versions")
        constraints = [
            models.UniqueConstraint(fields=["register", "number"], name="door_register_version_once"),
        ]

    def __str__(self) -> str:
        return f"{self.register.code} v{self.number}"


class RegisterEntry(models.Model):
    """One person on a register's version: the keyed digest of their document (32 bytes), nothing else."""

    # No index of its own: entries are found by digest; a version's are deleted once, when superseded.
    version = models.ForeignKey(
        RegisterVersion, on_delete=models.CASCADE, related_name="+", db_index=False, verbose_name=_("version")
    )
    digest = models.BinaryField(max_length=32, verbose_name=_("digest"))

    class Meta:
        verbose_name = _("register entry")
        verbose_name_plural = _("register entries")
        indexes = [models.Index(fields=["digest"], name="door_entry_digest")]


class SelfExclusion(models.Model):
    """A person's own self-exclusion at this venue, by the keyed digest of their document (never the
    number): in force from ``since`` until ``until`` (its term), never lifted before. One per person and
    venue; a longer term extends it (halls.door.services.admission.self_exclude)."""

    venue = models.ForeignKey(
        "halls.Venue", on_delete=models.PROTECT, related_name="+", verbose_name=_("venue")
    )
    digest = models.BinaryField(max_length=32, verbose_name=_("digest"))
    since = models.DateField(verbose_name=_("from"))
    until = models.DateField(verbose_name=_("until"))
    recorded_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        verbose_name=_("recorded by"),
    )
    recorded_at = models.DateTimeField(verbose_name=_("recorded at"))
    # What the receipt shows of the document so its holder recognises it: its type and its last three
    # characters (halls.door.receipt.masked), never the number (blank: recorded before receipts).
    document_kind = models.CharField(max_length=10, blank=True, verbose_name=_("document type"))
    document_tail = models.CharField(max_length=3, blank=True, verbose_name=_("document's last characters"))

    class Meta:
        verbose_name = _("self-exclusion")
        verbose_name_plural = _("self-exclusions")
        constraints = [
            models.UniqueConstraint(fields=["venue", "digest"], name="door_self_exclusion_once"),
            models.CheckConstraint(
                condition=models.Q(until__gte=models.F("since")), name="door_self_exclusion_term"
            ),
        ]


class Decision(models.TextChoices):
    ADMITTED = "admitted", _("admitted")
    MINOR = "minor", _("refused: a minor")
    PROHIBITED = "prohibited", _("refused: on a prohibited-access register")
    SELF_EXCLUDED = "self_excluded", _("refused: self-excluded here")


class Consultation(models.TextChoices):
    """How the registers were consulted for a decision."""

    ONLINE = "online", _("online")  # every register consulted online answered
    FILE_FALLBACK = "file_fallback", _("last loaded file (the online service did not answer)")
    FILE = "file", _("loaded file")  # no register is consulted online


class Visit(models.Model):
    """One person at the door and what was decided. No name and no number: the document's keyed digest
    only, and only until ``keep_until`` (then purged to NULL); the counts stay."""

    venue = models.ForeignKey(
        "halls.Venue", on_delete=models.PROTECT, related_name="+", verbose_name=_("venue")
    )
    door = models.CharField(max_length=60, verbose_name=_("door"))
    at = models.DateTimeField(verbose_name=_("at"))
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        verbose_name=_("decided by"),
    )
    decided_by_label = models.CharField(max_length=150, verbose_name=_("decided by (label)"))
    decision = models.CharField(max_length=16, choices=Decision.choices, verbose_name=_("decision"))
    # The register's version that listed the person (a refusal as prohibited); never the register's reason.
    register_version = models.ForeignKey(
        RegisterVersion,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        verbose_name=_("register version"),
    )
    # The register that listed the person (online or by its file), when one did.
    register = models.ForeignKey(
        Register,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        verbose_name=_("register"),
    )
    consultation = models.CharField(
        max_length=16,
        choices=Consultation.choices,
        default=Consultation.FILE,
        verbose_name=_("registers consulted by"),
    )
    # Whether every register in force for the venue could be consulted (loaded, under the current key).
    registers_readable = models.BooleanField(verbose_name=_("all registers readable"))
    digest = models.BinaryField(max_length=32, null=True, blank=True, verbose_name=_("digest"))
    # The player record an admission made or found (the one the cashier's cards point to); NULL for a refusal,
    # a visit before players were linked, and once the retention purge cleared the visit's personal data.
    player = models.ForeignKey(
        "cashier.Player",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        verbose_name=_("player"),
    )
    keep_until = models.DateTimeField(verbose_name=_("personal data kept until"))
    # The key the door's page or device sent with the admission: a retry answers this visit, once.
    idempotency_key = models.CharField(
        max_length=64, null=True, blank=True, verbose_name=_("idempotency key")
    )
    # Admitted by override (a document the door could not read): who confirmed it with their own password.
    override = models.BooleanField(default=False, verbose_name=_("override"))
    confirmed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        verbose_name=_("confirmed by"),
    )
    confirmed_by_label = models.CharField(
        max_length=150, blank=True, default="", verbose_name=_("confirmed by (label)")
    )
    # An admitted person recorded as leaving (the same document scanned at the exit): no longer inside.
    left_at = models.DateTimeField(null=True, blank=True, verbose_name=_("left at"))
    left_door = models.CharField(max_length=60, blank=True, default="", verbose_name=_("left by door"))

    class Meta:
        verbose_name = _("visit")
        verbose_name_plural = _("visits")
        indexes = [
            models.Index(fields=["venue", "at"], name="door_visit_venue_at"),
            models.Index(fields=["keep_until"], name="door_visit_keep_until"),
        ]
        constraints = [
            models.UniqueConstraint(
                fields=["venue", "idempotency_key"],
                condition=models.Q(idempotency_key__isnull=False),
                name="door_visit_idempotency_once",
            ),
            models.CheckConstraint(
                condition=models.Q(override=False) | models.Q(confirmed_by_label__gt=""),
                name="door_visit_override_confirmed",
            ),
        ]


class AlertKind(models.TextChoices):
    REGISTER_LISTED = "register_listed", _("listed on a prohibited-access register while inside")
    SELF_EXCLUDED = "self_excluded", _("self-excluded while inside")


class DoorAlert(models.Model):
    """A player inside the hall (admitted today) whose admission was withdrawn: their cards are blocked and
    the door is told (halls.door.services.players). Open until the door staff acknowledge it. Ids only: the
    player, the visit that admitted them, the register version that listed them (never its reason)."""

    venue = models.ForeignKey(
        "halls.Venue", on_delete=models.PROTECT, related_name="+", verbose_name=_("venue")
    )
    kind = models.CharField(max_length=20, choices=AlertKind.choices, verbose_name=_("kind"))
    player = models.ForeignKey(
        "cashier.Player", on_delete=models.PROTECT, related_name="+", verbose_name=_("player")
    )
    # The visit that admitted the player today (the door and the time the door staff look for).
    visit = models.ForeignKey(
        Visit, null=True, blank=True, on_delete=models.PROTECT, related_name="+", verbose_name=_("visit")
    )
    register_version = models.ForeignKey(
        RegisterVersion,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        verbose_name=_("register version"),
    )
    cards_blocked = models.PositiveIntegerField(default=0, verbose_name=_("cards blocked"))
    raised_at = models.DateTimeField(verbose_name=_("raised at"))
    acknowledged_at = models.DateTimeField(null=True, blank=True, verbose_name=_("acknowledged at"))
    acknowledged_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        verbose_name=_("acknowledged by"),
    )
    acknowledged_by_label = models.CharField(
        max_length=150, blank=True, verbose_name=_("acknowledged by (label)")
    )

    class Meta:
        verbose_name = _("door alert")
        verbose_name_plural = _("door alerts")
        indexes = [
            models.Index(
                fields=["venue", "raised_at"],
                condition=models.Q(acknowledged_at__isnull=True),
                name="door_alert_open",
            ),
        ]
