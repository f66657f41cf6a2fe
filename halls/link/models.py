"""The link's rows. A venue installation writes its outbox and follows the central's streams; the central
keeps each venue's link, the messages it accepted and the streams it publishes. One codebase, one schema:
which rows fill up is the role's (config.settings.HALL_ROLE)."""

from __future__ import annotations

from django.db import models
from django.utils.translation import gettext_lazy as _

from halls.models import Venue, append_only


class Destination(models.TextChoices):
    """Whom an outbox message is owed to: the central of the venue's network (run_link's sender), the
    gaming authority (its notices endpoint, HALL_AUTHORITY_URL: halls.link.transport.AuthoritySender), or
    the regulator's node (the feed, HALL_REGULATOR_URL: halls.link.transport.FeedSender)."""

    CENTRAL = "central", _("the central")
    AUTHORITY = "authority", _("the gaming authority")
    REGULATOR = "regulator", _("the regulator's node")


class OutboxMessage(models.Model):
    """One message owed to a destination (the central, the authority, the regulator's node), written with
    the fact it reports. Sent in sequence order until acknowledged; the payload is never changed once
    written, except its ``personal`` part (what only the destination may keep: a document's number), erased
    once the destination acknowledged it.

    The regulator's feed is numbered per installation, not per venue (one sequence for everything this
    installation tells its node, halls.link.services.feed_outbox): its messages keep the venue of their
    fact when there is one, and none for the installation's own (a heartbeat, an anchor, a central's);
    every other destination's message has its venue (the check constraint)."""

    venue = models.ForeignKey(Venue, on_delete=models.PROTECT, related_name="+", null=True, blank=True)
    destination = models.CharField(max_length=12, choices=Destination.choices, default=Destination.CENTRAL)
    # 1, 2, 3… per venue and destination (per installation for the regulator's), in commit order
    sequence = models.BigIntegerField()
    kind = models.CharField(max_length=60)
    payload = models.JSONField()
    created_at = models.DateTimeField(auto_now_add=True)
    acked_at = models.DateTimeField(null=True, blank=True)  # the central accepted it (applied or duplicate)

    class Meta:
        verbose_name = _("outbox message")
        verbose_name_plural = _("outbox messages")
        constraints = [
            models.UniqueConstraint(
                fields=["venue", "destination", "sequence"], name="outbox_venue_destination_sequence_once"
            ),
            models.UniqueConstraint(
                fields=["sequence"],
                condition=models.Q(destination="regulator"),
                name="outbox_regulator_sequence_once",
            ),
            models.CheckConstraint(
                condition=models.Q(venue__isnull=False) | models.Q(destination="regulator"),
                name="outbox_venue_unless_regulator",
            ),
        ]
        indexes = [
            models.Index(
                fields=["venue", "destination", "sequence"],
                name="outbox_unacked_by_destination",
                condition=models.Q(acked_at__isnull=True),
            ),
            models.Index(
                fields=["destination", "sequence"],
                name="outbox_unacked_regulator",
                condition=models.Q(acked_at__isnull=True, destination="regulator"),
            ),
        ]


class VenueLink(models.Model):
    """Central side: a member venue's link: the last message it applied and when it was last heard."""

    venue = models.OneToOneField(Venue, on_delete=models.PROTECT, related_name="link")
    applied_sequence = models.BigIntegerField(default=0)
    last_seen_at = models.DateTimeField(null=True, blank=True)  # any authenticated contact
    # The highest outbox sequence the venue said it holds (its backlog here: this minus applied_sequence).
    reported_sequence = models.BigIntegerField(default=0)
    # Its socket (services.presence): opened last, closed last (connected while opened > closed).
    connected_at = models.DateTimeField(null=True, blank=True)
    disconnected_at = models.DateTimeField(null=True, blank=True)
    # From its HELLO: its software; from every request: the central's clock minus the venue's, in ms
    # (one-way network time included).
    software_version = models.CharField(max_length=80, blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    clock_offset_ms = models.IntegerField(null=True, blank=True)

    class Meta:
        verbose_name = _("venue link")
        verbose_name_plural = _("venue links")


class InboxMessage(models.Model):
    """Central side, append-only: every venue message applied, exactly once, with what it answered."""

    venue = models.ForeignKey(Venue, on_delete=models.PROTECT, related_name="+")
    sequence = models.BigIntegerField()
    kind = models.CharField(max_length=60)
    payload = models.JSONField()
    answer = models.JSONField(default=dict)
    received_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name = _("inbox message")
        verbose_name_plural = _("inbox messages")
        constraints = [
            models.UniqueConstraint(fields=["venue", "sequence"], name="inbox_venue_sequence_once"),
        ]
        triggers = [append_only()]


class StreamEntry(models.Model):
    """Central side, append-only: one entry of a numbered stream ("network.<code>", "venue.<id>"), kept
    for the venues that missed it."""

    stream = models.CharField(max_length=80)
    sequence = models.BigIntegerField()
    kind = models.CharField(max_length=60)
    payload = models.JSONField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name = _("stream entry")
        verbose_name_plural = _("stream entries")
        constraints = [
            models.UniqueConstraint(fields=["stream", "sequence"], name="stream_entry_once"),
        ]
        triggers = [append_only()]


class StreamPosition(models.Model):
    """Venue side: how far this installation has applied a central stream."""

    stream = models.CharField(max_length=80, unique=True)
    applied_sequence = models.BigIntegerField(default=0)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name = _("stream position")
        verbose_name_plural = _("stream positions")


class VenueCredential(models.Model):
    """Central side: a venue's key and the salted hash of its secret (the secret is shown once, never
    stored). Working until revoked, or until `expires_at` (set when it is rotated: the grace)."""

    venue = models.ForeignKey(Venue, on_delete=models.PROTECT, related_name="+")
    key = models.CharField(max_length=40, unique=True)
    secret_hash = models.CharField(max_length=128)  # "sha256$<salt>$<hex>" (services.credentials)
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        verbose_name = _("venue credential")
        verbose_name_plural = _("venue credentials")


class LinkNotice(models.Model):
    """Venue side: a message of the central for this venue's operator (a NOTICE entry), kept to be read."""

    stream = models.CharField(max_length=80)
    sequence = models.BigIntegerField()
    text = models.TextField()
    level = models.CharField(max_length=10, default="info")
    received_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name = _("link notice")
        verbose_name_plural = _("link notices")
        constraints = [models.UniqueConstraint(fields=["stream", "sequence"], name="link_notice_once")]
