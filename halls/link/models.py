"""The link's rows. A venue installation writes its outbox and follows the central's streams; the central
keeps each venue's link, the messages it accepted and the streams it publishes. One codebase, one schema:
which rows fill up is the role's (config.settings.HALL_ROLE)."""

from __future__ import annotations

from django.db import models
from django.utils.translation import gettext_lazy as _

from halls.models import Venue, append_only


class OutboxMessage(models.Model):
    """Venue side: one message owed to the central, written with the fact it reports. Sent in sequence
    order until acknowledged; the payload is never changed once written."""

    venue = models.ForeignKey(Venue, on_delete=models.PROTECT, related_name="+")
    sequence = models.BigIntegerField()  # 1, 2, 3… per venue, in commit order
    kind = models.CharField(max_length=60)
    payload = models.JSONField()
    created_at = models.DateTimeField(auto_now_add=True)
    acked_at = models.DateTimeField(null=True, blank=True)  # the central accepted it (applied or duplicate)

    class Meta:
        verbose_name = _("outbox message")
        constraints = [
            models.UniqueConstraint(fields=["venue", "sequence"], name="outbox_venue_sequence_once"),
        ]
        indexes = [
            models.Index(
                fields=["venue", "sequence"], name="outbox_unacked", condition=models.Q(acked_at__isnull=True)
            )
        ]


class VenueLink(models.Model):
    """Central side: a member venue's link: the last message it applied and when it was last heard."""

    venue = models.OneToOneField(Venue, on_delete=models.PROTECT, related_name="link")
    applied_sequence = models.BigIntegerField(default=0)
    last_seen_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        verbose_name = _("venue link")


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
