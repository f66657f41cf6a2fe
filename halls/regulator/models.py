"""The regulator node's rows: the installations it knows, what they sent, what it refused, its alarms."""

from __future__ import annotations

from django.db import models
from django.utils.translation import gettext_lazy as _

from halls.models import append_only


class InstallationKind(models.TextChoices):
    VENUE = "venue", _("Venue")
    CENTRAL = "central", _("Network central")


class Installation(models.Model):
    """An installation of the authority's region, registered with its public key (its anchors' Ed25519 key).
    `accepted_sequence` is the last message accepted from it: the next must be that plus one."""

    uid = models.CharField(_("installation id"), max_length=16, unique=True)  # its installation.identity()
    name = models.CharField(_("name"), max_length=200)
    kind = models.CharField(_("kind"), max_length=10, choices=InstallationKind.choices)
    licence_number = models.CharField(_("licence number"), max_length=40, blank=True)  # a venue's
    jurisdiction = models.CharField(_("jurisdiction"), max_length=8)
    public_key = models.CharField(_("public key (Ed25519, hex)"), max_length=64)
    latitude = models.DecimalField(_("latitude"), max_digits=9, decimal_places=6, null=True, blank=True)
    longitude = models.DecimalField(_("longitude"), max_digits=9, decimal_places=6, null=True, blank=True)
    # Silent past this many seconds without a message (a heartbeat counts): an alarm. 0: the setting's.
    silence_seconds = models.PositiveIntegerField(_("silence window (seconds)"), default=0)
    registered_at = models.DateTimeField(_("registered at"))
    accepted_sequence = models.BigIntegerField(_("last sequence accepted"), default=0)
    last_message_at = models.DateTimeField(_("last message at"), null=True, blank=True)

    class Meta:
        verbose_name = _("installation")
        verbose_name_plural = _("installations")
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class RegistryAction(models.TextChoices):
    REGISTERED = "registered", _("Registered")
    UPDATED = "updated", _("Details changed")
    KEY_REPLACED = "key_replaced", _("Key replaced")


class RegistryChange(models.Model):
    """A change of the node's registry: an installation registered, its details changed or its key replaced
    (the authority's decision), with who made it, when, and the fields before and after. Append-only: the
    node has no venue's audit chain to write to, so its registry keeps its own record."""

    installation = models.ForeignKey(Installation, on_delete=models.PROTECT, related_name="changes")
    action = models.CharField(_("action"), max_length=20, choices=RegistryAction.choices)
    actor = models.CharField(_("by"), max_length=150)
    at = models.DateTimeField(_("at"))
    before = models.JSONField(_("before"), default=dict)
    after = models.JSONField(_("after"), default=dict)

    class Meta:
        verbose_name = _("registry change")
        verbose_name_plural = _("registry changes")
        ordering = ["-at", "-pk"]
        triggers = [append_only()]


class FeedMessage(models.Model):
    """A message accepted from an installation: once, in order, never changed (append-only)."""

    installation = models.ForeignKey(Installation, on_delete=models.PROTECT, related_name="messages")
    sequence = models.BigIntegerField(_("sequence"))
    kind = models.CharField(_("kind"), max_length=40)
    at = models.DateTimeField(_("fact time"))
    payload = models.JSONField(_("payload"))
    signature = models.CharField(_("signature"), max_length=128)
    received_at = models.DateTimeField(_("received at"))

    class Meta:
        verbose_name = _("feed message")
        verbose_name_plural = _("feed messages")
        constraints = [
            models.UniqueConstraint(fields=["installation", "sequence"], name="feed_message_once"),
        ]
        indexes = [models.Index(fields=["installation", "kind", "at"], name="feed_message_kind_at")]
        triggers = [append_only()]


class FeedRefusal(models.Model):
    """A message the node refused, and why (nothing of it applied): append-only."""

    installation = models.ForeignKey(
        Installation, on_delete=models.PROTECT, related_name="refusals", null=True, blank=True
    )
    claimed_installation = models.CharField(_("installation it claimed"), max_length=64, blank=True)
    sequence = models.BigIntegerField(_("sequence"), null=True, blank=True)
    kind = models.CharField(_("kind"), max_length=40, blank=True)
    reason = models.CharField(_("reason"), max_length=40)  # a code: bad_signature, unknown, replayed, ...
    detail = models.TextField(_("detail"), blank=True)
    received_at = models.DateTimeField(_("received at"))

    class Meta:
        verbose_name = _("refused message")
        verbose_name_plural = _("refused messages")
        triggers = [append_only()]


class AlarmKind(models.TextChoices):
    SILENT = "silent", _("Installation silent past its window")
    GAP = "gap", _("Sequence gap")
    BAD_SIGNATURE = "bad_signature", _("Bad signature")
    REPLAYED = "replayed", _("Replayed message")
    SCHEMA = "schema", _("Message outside its schema")
    NO_COMMITMENT = "no_commitment", _("Game without its commitment")
    PRIZE_ABOVE_POOL = "prize_above_pool", _("Prize paid above its pool's amount")
    ANCHOR = "anchor", _("Anchors that do not verify")
    UNKNOWN = "unknown", _("Message from an unknown installation")


class Alarm(models.Model):
    """Something the authority should look at, raised by the node; cleared (by a person or when the cause
    ends: a silent installation heard again), never deleted."""

    installation = models.ForeignKey(
        Installation, on_delete=models.PROTECT, related_name="alarms", null=True, blank=True
    )
    kind = models.CharField(_("kind"), max_length=20, choices=AlarmKind.choices)
    detail = models.JSONField(_("detail"), default=dict)
    raised_at = models.DateTimeField(_("raised at"))
    cleared_at = models.DateTimeField(_("cleared at"), null=True, blank=True)
    cleared_by = models.CharField(_("cleared by"), max_length=150, blank=True)

    class Meta:
        verbose_name = _("alarm")
        verbose_name_plural = _("alarms")
        ordering = ["-raised_at"]


class LiveGame(models.Model):
    """The live page's read model: one game of an installation as its messages so far made it
    (halls.regulator.live_core's GameState), moved by the intake in the transaction that accepts them, so
    the page reads a few rows instead of replaying the feed. Derived: `manage.py regulator_rebuild_live`
    makes it again from the stored messages."""

    installation = models.ForeignKey(Installation, on_delete=models.PROTECT, related_name="live_games")
    venue = models.TextField(_("venue"), blank=True)  # "": a central's own game (venue null in the feed)
    room = models.TextField(_("room"), blank=True)
    game = models.TextField(_("game"))
    commitment = models.TextField(_("commitment"), blank=True)
    cards = models.IntegerField(_("cards"), null=True, blank=True)
    sales = models.CharField(_("sales"), max_length=32, null=True, blank=True)  # euros, as the feed says
    balls = models.JSONField(_("balls"), default=list)  # [[ordinal, number], ...] in ordinal order
    prizes = models.JSONField(_("prizes"), default=list)
    state = models.CharField(_("state"), max_length=8, default="open")  # open, closed, void
    seed = models.TextField(_("seed"), blank=True)
    last_at = models.DateTimeField(_("last message at"))
    sequence = models.BigIntegerField(_("last sequence"))

    class Meta:
        verbose_name = _("live game")
        verbose_name_plural = _("live games")
        constraints = [
            # (installation, game) first: the intake reads a run's games along it.
            models.UniqueConstraint(fields=["installation", "game", "venue"], name="live_game_once"),
        ]
        indexes = [models.Index(fields=["last_at"], name="live_game_last_at")]


class LiveSession(models.Model):
    """The live page's read model: one session of an installation as its opening and closing made it
    (halls.regulator.live_core's SessionState), moved with the messages as LiveGame is."""

    installation = models.ForeignKey(Installation, on_delete=models.PROTECT, related_name="live_sessions")
    venue = models.TextField(_("venue"), blank=True)  # "": a central's own session
    room = models.TextField(_("room"))
    session = models.TextField(_("session"))
    family = models.CharField(_("game type"), max_length=20, blank=True)
    opened_at = models.TextField(_("opened at"), blank=True)  # as the feed says it
    checks = models.JSONField(_("checks"), default=list)
    closed_at = models.TextField(_("closed at"), blank=True)
    games = models.IntegerField(_("games"), null=True, blank=True)
    sales = models.CharField(_("sales"), max_length=32, null=True, blank=True)
    prizes = models.CharField(_("prizes"), max_length=32, null=True, blank=True)
    last_at = models.DateTimeField(_("last message at"))
    sequence = models.BigIntegerField(_("last sequence"))

    class Meta:
        verbose_name = _("live session")
        verbose_name_plural = _("live sessions")
        constraints = [
            # (installation, session) first: the intake reads a run's sessions along it.
            models.UniqueConstraint(
                fields=["installation", "session", "venue", "room"], name="live_session_once"
            ),
        ]
        indexes = [models.Index(fields=["last_at"], name="live_session_last_at")]
