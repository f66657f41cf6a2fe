"""Wide-area pools' records. The central keeps, per pool, its settings, each member venue's meters as
received and each hit decided; a venue keeps its mirror of the pool (the local pool its machines and
tables contribute to, the central's last levels, what it forwarded) and the hits it reported."""

from __future__ import annotations

from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from halls.fields import MoneyField
from halls.models import Network, Venue, append_only
from jackpots.models import Pool, PoolLevel
from jackpots.widearea.core import Check, OfflineAction, Outcome, SecondHit


class OfflineActionChoice(models.TextChoices):
    UNAVAILABLE = OfflineAction.UNAVAILABLE.value, _("Show the level unavailable")
    LOCK = OfflineAction.LOCK.value, _("Lock the machines")


class SecondHitChoice(models.TextChoices):
    RESET = SecondHit.RESET.value, _("Decided again against the reset level")
    NOTHING = SecondHit.NOTHING.value, _("No wide-area prize")


class OutcomeChoice(models.TextChoices):
    WON = Outcome.WON.value, _("Won")
    REDECIDED = Outcome.REDECIDED.value, _("Decided again against the reset level")
    LOST = Outcome.LOST.value, _("Already won: no prize")


class CheckChoice(models.TextChoices):
    RECEIVED = Check.RECEIVED.value, _("Venue's totals against the central's record")
    BATCHES = Check.BATCHES.value, _("Venue's totals against the batches accepted")
    LEDGER = Check.LEDGER.value, _("Batches accepted against the pool's ledger")


class ReconciliationState(models.TextChoices):
    AGREED = "agreed", _("Agreed")
    DIFFERS = "differs", _("Differences found")


class Side(models.TextChoices):
    CENTRAL = "central", _("Central")
    VENUE = "venue", _("Venue")


# --- the central -----------------------------------------------------------------------------------------


class WideAreaPool(models.Model):
    """Central: a network pool offered across its venues, with its link-failure and simultaneous-hit
    settings (changed only between hits, as every pool parameter)."""

    pool = models.OneToOneField(
        Pool, on_delete=models.PROTECT, related_name="wide_area", verbose_name=_("pool")
    )
    offline_after_seconds = models.PositiveIntegerField(
        default=30, verbose_name=_("withdraw the level after (seconds without the central)")
    )
    offline_action = models.CharField(
        max_length=12,
        choices=OfflineActionChoice.choices,
        default=OfflineActionChoice.UNAVAILABLE,
        verbose_name=_("when withdrawn"),
    )
    second_hit = models.CharField(
        max_length=12,
        choices=SecondHitChoice.choices,
        default=SecondHitChoice.RESET,
        verbose_name=_("a simultaneous second hit"),
    )
    simultaneous_ms = models.PositiveIntegerField(default=2000, verbose_name=_("same instant (ms)"))
    # OP-32: machines and casino tables in one pool only under an express authorisation.
    mixed_sources_authorised = models.BooleanField(
        default=False, verbose_name=_("machines and tables together (authorised)")
    )
    levels_published_at = models.DateTimeField(null=True, blank=True, verbose_name=_("levels published at"))
    levels_fingerprint = models.CharField(max_length=64, blank=True, verbose_name=_("levels fingerprint"))

    class Meta:
        verbose_name = _("wide-area pool")
        verbose_name_plural = _("wide-area pools")

    def __str__(self) -> str:
        return self.pool.code


class WideAreaVenue(models.Model):
    """Central: a member venue of a wide-area pool and its meters as the central received them."""

    wide_area = models.ForeignKey(
        WideAreaPool, on_delete=models.PROTECT, related_name="venues", verbose_name=_("wide-area pool")
    )
    venue = models.ForeignKey(Venue, on_delete=models.PROTECT, related_name="+", verbose_name=_("venue"))
    joined_at = models.DateTimeField(verbose_name=_("joined at"))
    left_at = models.DateTimeField(null=True, blank=True, verbose_name=_("left at"))
    # {level name: LevelSums payload}: every batch applied, summed (core.merge)
    received = models.JSONField(default=dict, verbose_name=_("received"))
    batches = models.PositiveIntegerField(default=0, verbose_name=_("batches"))
    through = models.BigIntegerField(default=0, verbose_name=_("through"))  # the venue's last row forwarded
    kinds = models.JSONField(default=list, verbose_name=_("member kinds"))  # "machine", "table" (OP-32)

    class Meta:
        verbose_name = _("wide-area venue")
        verbose_name_plural = _("wide-area venues")
        constraints = [
            models.UniqueConstraint(fields=["wide_area", "venue"], name="widearea_venue_once"),
        ]


class WideAreaHit(models.Model):
    """Central: one hit reported by a venue, decided once (unique by pool, venue and the venue's key)."""

    wide_area = models.ForeignKey(
        WideAreaPool, on_delete=models.PROTECT, related_name="hits", verbose_name=_("wide-area pool")
    )
    venue = models.ForeignKey(Venue, on_delete=models.PROTECT, related_name="+", verbose_name=_("venue"))
    key = models.CharField(max_length=100, verbose_name=_("key"))
    level = models.ForeignKey(PoolLevel, on_delete=models.PROTECT, related_name="+", verbose_name=_("level"))
    source = models.CharField(max_length=120, verbose_name=_("source"))
    hit_at = models.DateTimeField(verbose_name=_("hit at"))
    outcome = models.CharField(max_length=12, choices=OutcomeChoice.choices, verbose_name=_("outcome"))
    amount = MoneyField(max_digits=14, decimal_places=2, verbose_name=_("amount"))
    settlement_id = models.BigIntegerField(null=True, blank=True, verbose_name=_("settlement id"))
    decided_at = models.DateTimeField(verbose_name=_("decided at"))

    class Meta:
        verbose_name = _("wide-area hit")
        verbose_name_plural = _("wide-area hits")
        constraints = [
            models.UniqueConstraint(fields=["wide_area", "venue", "key"], name="widearea_hit_once"),
        ]
        triggers = [append_only()]


class WideAreaReconciliation(models.Model):
    """One reconciliation of a venue's meters, recorded once on each side: at the central for the venue's
    meters message (`key`: its sequence on the link, so a message delivered again is not reconciled
    twice), at the venue for the central's answer (`key`: the same sequence, told back). The totals each
    record held, per level ({level: LevelSums payload}), and how many differences the checks found."""

    side = models.CharField(max_length=8, choices=Side.choices, verbose_name=_("side"))
    pool_code = models.CharField(max_length=40, verbose_name=_("pool code"))
    venue = models.ForeignKey(Venue, on_delete=models.PROTECT, related_name="+", verbose_name=_("venue"))
    key = models.BigIntegerField(verbose_name=_("meters message"))
    through = models.BigIntegerField(default=0, verbose_name=_("forwarded through"))
    stated = models.JSONField(default=dict, verbose_name=_("venue's totals"))
    received = models.JSONField(default=dict, verbose_name=_("central's record"))
    applied = models.JSONField(default=dict, verbose_name=_("batches accepted"))
    ledger = models.JSONField(default=dict, verbose_name=_("pool's ledger"))
    # the last ledger row summed (the central's: the next reconciliation of the venue sums the rows after it)
    ledger_through = models.BigIntegerField(default=0, verbose_name=_("ledger through"))
    differences = models.PositiveIntegerField(default=0, verbose_name=_("differences"))
    state = models.CharField(max_length=8, choices=ReconciliationState.choices, verbose_name=_("state"))
    reconciled_at = models.DateTimeField(verbose_name=_("reconciled at"))

    class Meta:
        verbose_name = _("wide-area reconciliation")
        verbose_name_plural = _("wide-area reconciliations")
        constraints = [
            models.UniqueConstraint(
                fields=["side", "venue", "pool_code", "key"], name="widearea_reconciliation_once"
            ),
        ]
        indexes = [
            models.Index(fields=["side", "pool_code", "-reconciled_at"], name="widearea_reconciliation_at")
        ]
        triggers = [append_only()]


class WideAreaDifference(models.Model):
    """A difference found reconciling a venue's meters with the central's (recorded on both sides), with
    the check that found it (`kind`): for `ledger`, `venue_value` is what the venue's accepted batches
    said and `central_value` what the pool's ledger holds of them."""

    side = models.CharField(max_length=8, verbose_name=_("side"))  # "central" or "venue"
    pool_code = models.CharField(max_length=40, verbose_name=_("pool code"))
    venue = models.ForeignKey(Venue, on_delete=models.PROTECT, related_name="+", verbose_name=_("venue"))
    reconciliation = models.ForeignKey(
        WideAreaReconciliation,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="found",
        verbose_name=_("reconciliation"),
    )
    kind = models.CharField(  # the check that found it
        max_length=10, choices=CheckChoice.choices, default=CheckChoice.RECEIVED, verbose_name=_("check")
    )
    level = models.CharField(max_length=60, verbose_name=_("level"))
    field = models.CharField(max_length=20, verbose_name=_("field"))
    venue_value = MoneyField(max_digits=20, decimal_places=6, verbose_name=_("venue's value"))
    central_value = MoneyField(max_digits=20, decimal_places=6, verbose_name=_("central's value"))
    found_at = models.DateTimeField(verbose_name=_("found at"))

    class Meta:
        verbose_name = _("wide-area meter difference")
        verbose_name_plural = _("wide-area meter differences")
        triggers = [append_only()]


# --- a venue ---------------------------------------------------------------------------------------------


class WideAreaMirror(models.Model):
    """A venue's side of a wide-area pool: its local mirror pool (the central's wide-area levels, same
    names and rates, and any local levels of its own), the central's levels as last heard, and how far its
    contributions were forwarded."""

    venue = models.ForeignKey(Venue, on_delete=models.PROTECT, related_name="+", verbose_name=_("venue"))
    network = models.ForeignKey(
        Network, on_delete=models.PROTECT, related_name="+", verbose_name=_("network")
    )
    central_code = models.CharField(max_length=40, verbose_name=_("central pool code"))
    pool = models.OneToOneField(
        Pool, on_delete=models.PROTECT, related_name="wide_area_mirror", verbose_name=_("local pool")
    )
    wide_levels = models.JSONField(default=list, verbose_name=_("wide-area levels"))  # level names
    levels = models.JSONField(default=list, verbose_name=_("central's levels"))  # [{"level", "amount"}]
    levels_at = models.DateTimeField(null=True, blank=True, verbose_name=_("central's levels at"))
    heard_at = models.DateTimeField(null=True, blank=True, verbose_name=_("last heard from the central"))
    offline_after_seconds = models.PositiveIntegerField(default=30, verbose_name=_("withdraw after (s)"))
    offline_action = models.CharField(
        max_length=12, choices=OfflineActionChoice.choices, default=OfflineActionChoice.UNAVAILABLE
    )
    state = models.CharField(max_length=12, default="available", verbose_name=_("state"))  # last recorded
    state_since = models.DateTimeField(null=True, blank=True, verbose_name=_("state since"))
    forwarded_through = models.BigIntegerField(default=0, verbose_name=_("forwarded through"))
    forwarded = models.JSONField(default=dict, verbose_name=_("forwarded"))  # {level: LevelSums payload}
    batches = models.PositiveIntegerField(default=0, verbose_name=_("batches"))
    joined_at = models.DateTimeField(verbose_name=_("joined at"))
    left_at = models.DateTimeField(null=True, blank=True, verbose_name=_("left at"))

    class Meta:
        verbose_name = _("wide-area mirror")
        verbose_name_plural = _("wide-area mirrors")
        constraints = [
            models.UniqueConstraint(
                fields=["venue", "central_code"],
                condition=Q(left_at__isnull=True),
                name="widearea_mirror_once",
            ),
        ]


class WideAreaClaim(models.Model):
    """A venue: a hit one of its members reported on a wide-area level, waiting for the central's decision
    (then its outcome and amount, paid at this venue's cashier)."""

    mirror = models.ForeignKey(
        WideAreaMirror, on_delete=models.PROTECT, related_name="claims", verbose_name=_("mirror")
    )
    key = models.CharField(max_length=100, verbose_name=_("key"))
    source = models.CharField(max_length=120, verbose_name=_("source"))
    level = models.CharField(max_length=60, verbose_name=_("level"))
    reported_at = models.DateTimeField(verbose_name=_("reported at"))
    context = models.JSONField(default=dict, verbose_name=_("context"))  # the member's own (machine, seq…)
    outcome = models.CharField(max_length=12, blank=True, verbose_name=_("outcome"))
    amount = MoneyField(max_digits=14, decimal_places=2, null=True, blank=True, verbose_name=_("amount"))
    decided_at = models.DateTimeField(null=True, blank=True, verbose_name=_("decided at"))

    class Meta:
        verbose_name = _("wide-area claim")
        verbose_name_plural = _("wide-area claims")
        constraints = [models.UniqueConstraint(fields=["mirror", "key"], name="widearea_claim_once")]
