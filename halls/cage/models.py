"""The cage's rows: identifications of winners, the payouts tied to a person, and the flags for the AML
officer. Written through halls.cage.services only.

`Identification` is the ONE place in the product where a person's identity lives in clear (the document,
the full name, the date of birth): Ley 10/2010 makes the operator keep it for ten years (a setting), then
the purge deletes it. Nothing of it goes into audit data, events, logs or error messages: they name the
identification's id. Everything else (payout records, flags) knows a person only by the keyed digest of
their document (halls.door.documents.keyed_digest under halls.door.services.registers.register_key()).
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _

from halls.cashier.models import AMOUNT_DIGITS, LedgerTransaction, Payable, PlayerCard, Ticket
from halls.fields import MoneyField


class Identification(models.Model):
    """A winner identified at the cage: the document shown (checked as at the door), the person's full
    name, date of birth and nationality, and the reference of the document's scan the cage keeps. The one
    place the identity lives in clear; deleted by the purge after ``keep_until``."""

    venue = models.ForeignKey(
        "halls.Venue", on_delete=models.PROTECT, related_name="+", verbose_name=_("venue")
    )
    document_kind = models.CharField(max_length=12, verbose_name=_("document type"))
    document_number = models.CharField(max_length=20, verbose_name=_("document number"))
    document_country = models.CharField(max_length=2, verbose_name=_("issuing country"))
    full_name = models.CharField(max_length=150, verbose_name=_("full name"))
    birth_date = models.DateField(verbose_name=_("date of birth"))
    nationality = models.CharField(max_length=2, verbose_name=_("nationality"))
    scan_reference = models.CharField(max_length=200, verbose_name=_("scan reference"))
    digest = models.BinaryField(max_length=32, verbose_name=_("document digest"))
    identified_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        verbose_name=_("identified by"),
    )
    identified_by_label = models.CharField(max_length=150, verbose_name=_("identified by (label)"))
    identified_at = models.DateTimeField(verbose_name=_("identified at"))
    keep_until = models.DateTimeField(verbose_name=_("kept until"))

    class Meta:
        verbose_name = _("identification")
        verbose_name_plural = _("identifications")
        indexes = [
            models.Index(fields=["keep_until"], name="cage_identification_keep"),
            models.Index(fields=["venue", "identified_at"], name="cage_identification_at"),
        ]

    def __str__(self) -> str:
        return f"#{self.pk}"


class PayoutKind(models.TextChoices):
    LINE = "line", _("Line")
    BINGO = "bingo", _("Bingo")
    ACCUMULATED = "accumulated", _("Accumulated prize")
    TABLE = "table", _("Table jackpot")
    MACHINE = "machine", _("Machine hand pay")
    TICKET = "ticket", _("Ticket redeemed")
    CARD_CASH_OUT = "card_cash_out", _("Card cash-out")


class PayoutRecord(models.Model):
    """A payout tied to a person: identified at the cage, or paid to a player card whose player is known
    by their document's digest. What the window adds up; the identification's id, never its content."""

    venue = models.ForeignKey(
        "halls.Venue", on_delete=models.PROTECT, related_name="+", verbose_name=_("venue")
    )
    kind = models.CharField(max_length=16, choices=PayoutKind.choices, verbose_name=_("kind"))
    # What was paid, unique per venue: "payable:12", "ticket:34", "card_cash_out:<ledger tx>".
    source = models.CharField(max_length=80, verbose_name=_("source"))
    amount = MoneyField(max_digits=AMOUNT_DIGITS, decimal_places=2, verbose_name=_("amount"))
    at = models.DateTimeField(verbose_name=_("paid at"))
    paid_by_label = models.CharField(max_length=150, verbose_name=_("paid by"))
    # The person's document digest; cleared by the purge with the identification.
    digest = models.BinaryField(max_length=32, null=True, blank=True, verbose_name=_("document digest"))
    identification = models.ForeignKey(
        Identification,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="payouts",
        verbose_name=_("identification"),
    )
    identified = models.BooleanField(verbose_name=_("identified at the cage"))
    transaction = models.OneToOneField(
        LedgerTransaction, on_delete=models.PROTECT, related_name="+", verbose_name=_("ledger transaction")
    )
    payable = models.ForeignKey(
        Payable, null=True, blank=True, on_delete=models.PROTECT, related_name="+", verbose_name=_("prize")
    )
    ticket = models.ForeignKey(
        Ticket, null=True, blank=True, on_delete=models.PROTECT, related_name="+", verbose_name=_("ticket")
    )
    card = models.ForeignKey(
        PlayerCard,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        verbose_name=_("player card"),
    )
    keep_until = models.DateTimeField(verbose_name=_("kept until"))

    class Meta:
        verbose_name = _("payout record")
        verbose_name_plural = _("payout records")
        constraints = [
            models.UniqueConstraint(fields=["venue", "source"], name="cage_payout_source_once"),
        ]
        indexes = [
            models.Index(fields=["venue", "digest", "at"], name="cage_payout_person_at"),
            models.Index(fields=["venue", "at"], name="cage_payout_at"),
            models.Index(fields=["keep_until"], name="cage_payout_keep"),
        ]

    def __str__(self) -> str:
        return self.source


class FlagKind(models.TextChoices):
    STRUCTURING = "structuring", _("Structuring: payouts split under the threshold")
    LITTLE_PLAY = "little_play", _("Little play between cash-in and cash-out")


class Flag(models.Model):
    """Something the AML officer must look at: a person's payouts that add up to the threshold within the
    window while each stays under it (structuring), or money cashed in and out of a card or a ticket with
    little play in between. Reviewed by an operator (who, when, a note); never changed otherwise."""

    venue = models.ForeignKey(
        "halls.Venue", on_delete=models.PROTECT, related_name="+", verbose_name=_("venue")
    )
    kind = models.CharField(max_length=12, choices=FlagKind.choices, verbose_name=_("kind"))
    at = models.DateTimeField(verbose_name=_("flagged at"))
    # The person's document digest, when known (cleared by the purge).
    digest = models.BinaryField(max_length=32, null=True, blank=True, verbose_name=_("document digest"))
    records = models.ManyToManyField(
        PayoutRecord, blank=True, related_name="flags", verbose_name=_("payouts involved")
    )
    total = MoneyField(max_digits=AMOUNT_DIGITS, decimal_places=2, verbose_name=_("total paid out"))
    # Little play: what was cashed in and played before the cash-out (the card's, or the ticket's).
    cashed_in = MoneyField(
        max_digits=AMOUNT_DIGITS, decimal_places=2, null=True, blank=True, verbose_name=_("cashed in")
    )
    played = MoneyField(
        max_digits=AMOUNT_DIGITS, decimal_places=2, null=True, blank=True, verbose_name=_("played")
    )
    # The cash-out that raised it (little play).
    transaction = models.ForeignKey(
        LedgerTransaction,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        verbose_name=_("ledger transaction"),
    )
    ticket = models.ForeignKey(
        Ticket, null=True, blank=True, on_delete=models.PROTECT, related_name="+", verbose_name=_("ticket")
    )
    card = models.ForeignKey(
        PlayerCard,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        verbose_name=_("player card"),
    )
    reviewed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        verbose_name=_("reviewed by"),
    )
    reviewed_at = models.DateTimeField(null=True, blank=True, verbose_name=_("reviewed at"))
    review_note = models.TextField(blank=True, verbose_name=_("review note"))
    keep_until = models.DateTimeField(verbose_name=_("kept until"))

    class Meta:
        verbose_name = _("AML flag")
        verbose_name_plural = _("AML flags")
        indexes = [
            models.Index(fields=["venue", "at"], name="cage_flag_at"),
            models.Index(fields=["keep_until"], name="cage_flag_keep"),
        ]

    def __str__(self) -> str:
        return f"{self.kind} #{self.pk}"
