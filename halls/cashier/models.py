"""The cashier's rows: tills, shifts, the money ledger (accounts, transactions, legs), player cards and
players, tickets, and prizes payable.

The ledger is double-entry (halls.cashier.ledger): a transaction's legs sum to zero, checked by the service
and by the database (a deferred constraint trigger on PostgreSQL, an insert trigger on SQLite); legs and
transactions are append-only; an account's balance column moves with every leg, under a CHECK that keeps a
guarded account (a drawer, a player card, prizes payable, tickets) at or above zero.
"""

from __future__ import annotations

import pgtrigger
from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from halls.cashier.ledger import GUARDED, Kind
from halls.cashier.limits import LimitKind, Period
from halls.fields import MoneyField
from halls.models import Venue, append_only

_GUARDED = sorted(k.value for k in GUARDED)
AMOUNT_DIGITS = 14  # halls.money.PAYMENT_DIGITS: a ledger amount, numeric(14, 2)


class Means(models.TextChoices):
    """How money crosses the counter."""

    CASH = "cash", _("Cash")
    BANK_CARD = "bank_card", _("Bank card")


class PayoutMethod(models.TextChoices):
    """How a prize or a balance is paid out."""

    CASH = "cash", _("Cash")
    PLAYER_CARD = "player_card", _("Player card")
    TICKET = "ticket", _("Ticket")


class Till(models.Model):
    """A cash desk (caja): where shifts are opened; its receipt printer, if it has one."""

    venue = models.ForeignKey(Venue, on_delete=models.PROTECT, related_name="tills", verbose_name=_("venue"))
    name = models.CharField(_("name"), max_length=80)
    # An ESC/POS printer on the network, "tcp://host:9100"; empty: receipts are PDFs.
    printer = models.CharField(_("printer"), max_length=200, blank=True)
    active = models.BooleanField(default=True, verbose_name=_("active"))

    class Meta:
        verbose_name = _("till")
        verbose_name_plural = _("tills")
        constraints = [models.UniqueConstraint(fields=["venue", "name"], name="till_name_unique_per_venue")]

    def __str__(self) -> str:
        return self.name


class CashierSettings(models.Model):
    """A venue's cashier rules."""

    venue = models.OneToOneField(
        Venue, on_delete=models.PROTECT, related_name="cashier_settings", verbose_name=_("venue")
    )
    # A ticket not redeemed within this many days expires; its amount goes to the house.
    ticket_valid_days = models.PositiveSmallIntegerField(_("ticket validity (days)"), default=30)
    # The most one ticket may hold, and the amount above which a ticket is paid only at the cage (never at
    # a terminal or kiosk); empty: the jurisdiction's default (settings.HALL_TICKET_*). Changed through
    # halls.cashier.services.cashier_settings (audited), the pair checked by halls.cashier.ticketrules.
    ticket_max_amount = MoneyField(
        _("maximum ticket value"), max_digits=AMOUNT_DIGITS, decimal_places=2, null=True, blank=True
    )
    ticket_cage_above = MoneyField(
        _("tickets above this amount are paid only at the cage"),
        max_digits=AMOUNT_DIGITS,
        decimal_places=2,
        null=True,
        blank=True,
    )

    class Meta:
        verbose_name = _("cashier settings")
        verbose_name_plural = _("cashier settings")


class DeviceKind(models.TextChoices):
    TERMINAL = "terminal", _("Player terminal")
    BILL_READER = "bill_reader", _("Bill reader")
    TICKET_KIOSK = "kiosk", _("Ticket kiosk")


class CashDevice(models.Model):
    """A device that takes or gives money for the cashier: a terminal's bill reader, a ticket kiosk.

    It authenticates with a device token (only its hash is kept); its messages carry a sequence number,
    so a retry is a no-op."""

    venue = models.ForeignKey(Venue, on_delete=models.PROTECT, related_name="+", verbose_name=_("venue"))
    name = models.CharField(_("name"), max_length=80)
    kind = models.CharField(max_length=12, choices=DeviceKind.choices, verbose_name=_("kind"))
    token_hash = models.CharField(
        max_length=64, verbose_name=_("token hash")
    )  # sha256 hex of the device token (shown once)
    active = models.BooleanField(default=True, verbose_name=_("active"))

    class Meta:
        verbose_name = _("cash device")
        verbose_name_plural = _("cash devices")
        constraints = [models.UniqueConstraint(fields=["venue", "name"], name="cash_device_name_unique")]

    def __str__(self) -> str:
        return self.name


class ShiftState(models.TextChoices):
    OPEN = "open", _("Open")
    CLOSED = "closed", _("Closed")


class Shift(models.Model):
    """A cashier's turn at a till: opened with a counted float, closed with a counted cash-up (arqueo)."""

    venue = models.ForeignKey(Venue, on_delete=models.PROTECT, related_name="+", verbose_name=_("venue"))
    till = models.ForeignKey(Till, on_delete=models.PROTECT, related_name="shifts", verbose_name=_("till"))
    cashier = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+", verbose_name=_("cashier")
    )
    state = models.CharField(
        max_length=6, choices=ShiftState.choices, default=ShiftState.OPEN, verbose_name=_("state")
    )
    opened_at = models.DateTimeField(verbose_name=_("opened at"))
    float_amount = MoneyField(max_digits=AMOUNT_DIGITS, decimal_places=2, verbose_name=_("float amount"))
    closed_at = models.DateTimeField(null=True, blank=True, verbose_name=_("closed at"))
    # The cash-up, per means of payment ({"cash": "512.30", ...}): what the ledger expected, what was counted.
    expected = models.JSONField(default=dict, blank=True, verbose_name=_("expected"))
    counted = models.JSONField(default=dict, blank=True, verbose_name=_("counted"))
    difference = MoneyField(
        max_digits=AMOUNT_DIGITS, decimal_places=2, null=True, blank=True, verbose_name=_("difference")
    )
    # The second person who signs a cash-up that does not match.
    witness = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        verbose_name=_("witness"),
    )
    note = models.TextField(blank=True, verbose_name=_("note"))

    class Meta:
        verbose_name = _("shift")
        verbose_name_plural = _("shifts")
        constraints = [
            models.UniqueConstraint(
                fields=["till"], condition=Q(state="open"), name="one_open_shift_per_till"
            ),
            models.UniqueConstraint(
                fields=["venue", "cashier"], condition=Q(state="open"), name="one_open_shift_per_cashier"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.till} · {self.opened_at:%Y-%m-%d %H:%M}"


class Player(models.Model):
    """A registered player, for halls that register them; no personal data is needed to play."""

    venue = models.ForeignKey(Venue, on_delete=models.PROTECT, related_name="+")
    name = models.CharField(_("name"), max_length=150, blank=True)
    id_document = models.CharField(_("ID document"), max_length=40, blank=True)
    # The keyed digest of the document shown at the door (halls.door.documents.keyed_digest under
    # halls.door.services.registers.register_key()): how an admitted person is recognised, never the number.
    digest = models.BinaryField(max_length=32, null=True, blank=True, verbose_name=_("document digest"))
    # Until when the player's admission at the door stands: the end of the venue's local day of their latest
    # admission, on the venue's clock (halls.door.services.admission.admit sets it). NULL: never admitted,
    # or the admission was withdrawn (a register listed them while inside, a self-exclusion). The cards are
    # issued, loaded and used only while it is ahead (halls.cashier.services.admitted).
    admitted_until = models.DateTimeField(null=True, blank=True, verbose_name=_("admitted until"))
    created_at = models.DateTimeField()

    class Meta:
        verbose_name = _("player")
        verbose_name_plural = _("players")
        constraints = [
            models.UniqueConstraint(
                fields=["venue", "digest"],
                condition=Q(digest__isnull=False),
                name="cashier_player_digest_once_per_venue",
            ),
        ]

    def __str__(self) -> str:
        return self.name


class PlayerCardState(models.TextChoices):
    ACTIVE = "active", _("Active")
    BLOCKED = "blocked", _("Blocked")


class PlayerCard(models.Model):
    """An anonymous prepaid card (tarjeta de jugador): a printed number and a QR code; its money is its
    account."""

    venue = models.ForeignKey(Venue, on_delete=models.PROTECT, related_name="+", verbose_name=_("venue"))
    number = models.CharField(_("number"), max_length=24, unique=True)
    state = models.CharField(
        max_length=8, choices=PlayerCardState.choices, default=PlayerCardState.ACTIVE, verbose_name=_("state")
    )
    blocked_reason = models.CharField(max_length=200, blank=True, verbose_name=_("blocked reason"))
    player = models.ForeignKey(
        Player,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="cards",
        verbose_name=_("player"),
    )
    created_at = models.DateTimeField(verbose_name=_("created at"))
    # A lost card, blocked, is replaced once: the new card took its balance.
    replaced_by = models.OneToOneField(
        "self",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="replaces",
        verbose_name=_("replaced by"),
    )

    class Meta:
        verbose_name = _("player card")
        verbose_name_plural = _("player cards")

    def __str__(self) -> str:
        return self.number


class Account(models.Model):
    """One account of a venue's ledger; `balance` is shown on its normal side (halls.cashier.ledger)."""

    venue = models.ForeignKey(Venue, on_delete=models.PROTECT, related_name="+", verbose_name=_("venue"))
    kind = models.CharField(max_length=16, choices=[(k.value, k.value) for k in Kind], verbose_name=_("kind"))
    # Unique within the venue: "sales", "house", "drawer:<shift>:cash", "card:<number>".
    code = models.CharField(max_length=60, verbose_name=_("code"))
    shift = models.ForeignKey(
        Shift,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="drawers",
        verbose_name=_("shift"),
    )
    means = models.CharField(max_length=10, choices=Means.choices, blank=True, verbose_name=_("means"))
    card = models.OneToOneField(
        PlayerCard,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="account",
        verbose_name=_("card"),
    )
    device = models.OneToOneField(
        CashDevice,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="account",
        verbose_name=_("device"),
    )
    guarded = models.BooleanField(verbose_name=_("guarded"))
    balance = MoneyField(max_digits=AMOUNT_DIGITS, decimal_places=2, default=0, verbose_name=_("balance"))

    class Meta:
        verbose_name = _("ledger account")
        verbose_name_plural = _("ledger accounts")
        constraints = [
            models.UniqueConstraint(fields=["venue", "code"], name="account_code_unique_per_venue"),
            models.CheckConstraint(
                condition=Q(guarded=False) | Q(balance__gte=0), name="guarded_never_negative"
            ),
            # The guard follows the kind (halls.cashier.ledger.GUARDED): no guarded account made unguarded.
            models.CheckConstraint(
                condition=Q(kind__in=_GUARDED, guarded=True) | (~Q(kind__in=_GUARDED) & Q(guarded=False)),
                name="account_guarded_by_kind",
            ),
        ]

    def __str__(self) -> str:
        return self.code


class TxKind(models.TextChoices):
    """What a ledger transaction is."""

    FLOAT = "float", _("Opening float")
    CASH_UP = "cash_up", _("Cash-up")
    OVER_SHORT = "over_short", _("Cash-up difference")
    SALE = "sale", _("Card sale")
    SALE_RETURN = "sale_return", _("Card return")
    CARD_CASH_IN = "card_cash_in", _("Card cash-in")
    CARD_CASH_OUT = "card_cash_out", _("Card cash-out")
    CARD_SPEND = "card_spend", _("Card spend")
    CARD_TRANSFER = "card_transfer", _("Balance moved to a replacement card")
    DEVICE_CASH_IN = "device_cash_in", _("Notes taken by a device")
    DEVICE_EMPTIED = "device_emptied", _("Device emptied")
    PRIZE_AWARD = "prize_award", _("Prize awarded")
    PRIZE_PAYOUT = "prize_payout", _("Prize paid")
    TICKET_ISSUE = "ticket_issue", _("Ticket issued")
    TICKET_REDEEM = "ticket_redeem", _("Ticket redeemed")
    TICKET_EXPIRE = "ticket_expire", _("Ticket expired")


class LedgerTransaction(models.Model):
    """A balanced set of legs, written once. `key` (unique per venue) makes a retried call a no-op."""

    venue = models.ForeignKey(Venue, on_delete=models.PROTECT, related_name="+", verbose_name=_("venue"))
    kind = models.CharField(max_length=16, choices=TxKind.choices, verbose_name=_("kind"))
    key = models.CharField(max_length=120, verbose_name=_("key"))
    # The shift whose drawer the money crossed; none for what no till touches (a prize awarded, a card spend).
    shift = models.ForeignKey(
        Shift,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="transactions",
        verbose_name=_("shift"),
    )
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        verbose_name=_("actor"),
    )
    actor_label = models.CharField(max_length=150, verbose_name=_("actor label"))
    device = models.CharField(
        max_length=80, blank=True, verbose_name=_("device")
    )  # a terminal, a bill reader, a till's name
    created_at = models.DateTimeField(verbose_name=_("created at"))
    memo = models.CharField(max_length=200, blank=True, verbose_name=_("memo"))
    data = models.JSONField(default=dict, blank=True, verbose_name=_("data"))
    # The SQLite balance trigger checks the legs once all of them are in.
    leg_count = models.PositiveSmallIntegerField(verbose_name=_("leg count"))

    class Meta:
        verbose_name = _("ledger transaction")
        verbose_name_plural = _("ledger transactions")
        constraints = [models.UniqueConstraint(fields=["venue", "key"], name="ledger_key_unique_per_venue")]
        indexes = [models.Index(fields=["venue", "created_at"]), models.Index(fields=["kind"])]
        triggers = [append_only()]

    def __str__(self) -> str:
        return f"{self.kind} {self.key}"


class Leg(models.Model):
    """One side of a transaction: a signed amount on an account (> 0 debit, < 0 credit)."""

    transaction = models.ForeignKey(
        LedgerTransaction, on_delete=models.PROTECT, related_name="legs", verbose_name=_("transaction")
    )
    account = models.ForeignKey(
        Account, on_delete=models.PROTECT, related_name="legs", verbose_name=_("account")
    )
    amount = MoneyField(max_digits=AMOUNT_DIGITS, decimal_places=2, verbose_name=_("amount"))

    class Meta:
        verbose_name = _("ledger leg")
        verbose_name_plural = _("ledger legs")
        constraints = [
            models.CheckConstraint(condition=~Q(amount=0), name="leg_not_zero"),
            models.UniqueConstraint(fields=["transaction", "account"], name="one_leg_per_account"),
        ]
        triggers = [
            append_only(),
            # Hordak's idea: once the transaction commits, its legs must sum to zero.
            pgtrigger.Trigger(
                name="legs_balance",
                operation=pgtrigger.Insert,
                when=pgtrigger.After,
                timing=pgtrigger.Deferred,
                func=pgtrigger.Func(  # type: ignore[no-untyped-call]
                    "IF (SELECT SUM(amount) FROM {meta.db_table} "
                    "WHERE transaction_id = NEW.transaction_id) <> 0 THEN "
                    "RAISE EXCEPTION 'ledger transaction % does not balance', NEW.transaction_id; END IF; "
                    "RETURN NULL;"
                ),
            ),
        ]


class TicketState(models.TextChoices):
    ISSUED = "issued", _("Issued")
    REDEEMED = "redeemed", _("Redeemed")
    EXPIRED = "expired", _("Expired")


class Ticket(models.Model):
    """A TITO ticket: a validation number and a barcode for an amount, redeemed once, until it expires."""

    venue = models.ForeignKey(Venue, on_delete=models.PROTECT, related_name="+", verbose_name=_("venue"))
    number = models.CharField(_("validation number"), max_length=24, unique=True)
    amount = MoneyField(max_digits=AMOUNT_DIGITS, decimal_places=2, verbose_name=_("amount"))
    state = models.CharField(
        max_length=8, choices=TicketState.choices, default=TicketState.ISSUED, verbose_name=_("state")
    )
    issued_at = models.DateTimeField(verbose_name=_("issued at"))
    expires_at = models.DateTimeField(verbose_name=_("expires at"))
    issued_by = models.CharField(
        max_length=150, verbose_name=_("issued by")
    )  # the cashier's or the terminal's label
    issue_tx = models.OneToOneField(
        LedgerTransaction, on_delete=models.PROTECT, related_name="+", verbose_name=_("issue tx")
    )
    closed_at = models.DateTimeField(
        null=True, blank=True, verbose_name=_("closed at")
    )  # redeemed or expired
    close_tx = models.OneToOneField(
        LedgerTransaction,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        verbose_name=_("close tx"),
    )

    class Meta:
        verbose_name = _("ticket")
        verbose_name_plural = _("tickets")
        constraints = [models.CheckConstraint(condition=Q(amount__gt=0), name="ticket_amount_positive")]

    def __str__(self) -> str:
        return self.number


class TicketEventKind(models.TextChoices):
    ISSUED = "issued", _("Issued")
    PRINTED = "printed", _("Printed")
    REPRINTED = "reprinted", _("Reprinted")
    REDEEMED = "redeemed", _("Redeemed")
    REFUSED = "refused", _("Redemption refused")
    EXPIRED = "expired", _("Expired")


class TicketEvent(models.Model):
    """One moment of a ticket's life, written once: issued, printed, reprinted, redeemed, a redemption
    refused (with its reason), expired; who (a cashier, a terminal, the beat) and where (a till, a device)."""

    venue = models.ForeignKey(Venue, on_delete=models.PROTECT, related_name="+")
    ticket = models.ForeignKey(Ticket, on_delete=models.PROTECT, related_name="events")
    kind = models.CharField(max_length=10, choices=TicketEventKind.choices)
    at = models.DateTimeField()
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    actor_label = models.CharField(max_length=150)
    device = models.CharField(max_length=80, blank=True)  # the till's or the terminal's name
    shift = models.ForeignKey(Shift, null=True, blank=True, on_delete=models.PROTECT, related_name="+")
    transaction = models.ForeignKey(
        LedgerTransaction, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    reason = models.CharField(max_length=40, blank=True)  # a refusal's error code
    data = models.JSONField(default=dict, blank=True)  # where the money went, the refusal's message...

    class Meta:
        verbose_name = _("ticket event")
        verbose_name_plural = _("ticket events")
        indexes = [models.Index(fields=["ticket", "at"])]
        triggers = [append_only()]

    def __str__(self) -> str:
        return f"{self.ticket_id} {self.kind}"


class PayableKind(models.TextChoices):
    LINE = "line", _("Line")
    BINGO = "bingo", _("Bingo")
    ACCUMULATED = "accumulated", _("Accumulated prize")
    TABLE = "table", _("Table jackpot")
    MACHINE = "machine", _("Machine hand pay")


class PayableState(models.TextChoices):
    WAITING = "waiting", _("Waiting at the cashier")
    PAID = "paid", _("Paid")


class Payable(models.Model):
    """A prize awarded and owed to a winner until the cashier pays it (once, whatever retries)."""

    venue = models.ForeignKey(Venue, on_delete=models.PROTECT, related_name="+", verbose_name=_("venue"))
    kind = models.CharField(max_length=12, choices=PayableKind.choices, verbose_name=_("kind"))
    # What awarded it, unique per venue: "bingo.award:41", "bingo.programaward:7", "tables.seatpayout:3",
    # "machines.hit:12".
    source = models.CharField(max_length=80, verbose_name=_("source"))
    description = models.CharField(
        max_length=200, verbose_name=_("description")
    )  # "Game 12 · Line · card 1-0345"
    amount = MoneyField(max_digits=AMOUNT_DIGITS, decimal_places=2, verbose_name=_("amount"))
    state = models.CharField(
        max_length=8, choices=PayableState.choices, default=PayableState.WAITING, verbose_name=_("state")
    )
    awarded_at = models.DateTimeField(verbose_name=_("awarded at"))
    award_tx = models.OneToOneField(
        LedgerTransaction, on_delete=models.PROTECT, related_name="+", verbose_name=_("award tx")
    )
    paid_at = models.DateTimeField(null=True, blank=True, verbose_name=_("paid at"))
    paid_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        verbose_name=_("paid by"),
    )
    method = models.CharField(
        max_length=12, choices=PayoutMethod.choices, blank=True, verbose_name=_("method")
    )
    payout_tx = models.OneToOneField(
        LedgerTransaction,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        verbose_name=_("payout tx"),
    )
    receipt = models.CharField(max_length=24, blank=True, verbose_name=_("receipt"))

    class Meta:
        verbose_name = _("prize payable")
        verbose_name_plural = _("prizes payable")
        constraints = [
            models.UniqueConstraint(fields=["venue", "source"], name="payable_source_unique_per_venue"),
            models.CheckConstraint(condition=Q(amount__gt=0), name="payable_amount_positive"),
        ]
        indexes = [models.Index(fields=["venue", "state"])]

    def __str__(self) -> str:
        return self.description


class DeviceMessage(models.Model):
    """A cash device's message, once per (device, seq): a retry answers `result`, the first answer; the
    same seq with another body is refused."""

    device = models.ForeignKey(CashDevice, on_delete=models.PROTECT, related_name="messages")
    seq = models.PositiveBigIntegerField()
    kind = models.CharField(max_length=16)  # "notes_in"
    body = models.JSONField()  # the message as understood (the card's number, the amount)
    result = models.JSONField()
    transaction = models.OneToOneField(
        LedgerTransaction, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    received_at = models.DateTimeField()

    class Meta:
        verbose_name = _("device message")
        verbose_name_plural = _("device messages")
        constraints = [models.UniqueConstraint(fields=["device", "seq"], name="device_message_seq_unique")]
        triggers = [append_only()]

    def __str__(self) -> str:
        return f"{self.device_id}#{self.seq}"


# --- a player's limits and the terminals' reality checks (halls.cashier.limits, services.limits) ----------

LIMIT_KINDS = [(LimitKind.LOSS.value, _("loss")), (LimitKind.SPEND.value, _("spend"))]
LIMIT_PERIODS = [
    (Period.DAY.value, _("daily")),
    (Period.WEEK.value, _("weekly")),
    (Period.MONTH.value, _("monthly")),
]


class PlayerLimit(models.Model):
    """A loss or spend limit per day, week or month: a registered player's (on all their cards) or, for an
    anonymous card, the card's own. `amount` is in force (null: none); a raise or a removal waits its
    cooling-off as the pending change (`pending_amount`, null for a removal, from `pending_from`)."""

    venue = models.ForeignKey(Venue, on_delete=models.PROTECT, related_name="+", verbose_name=_("venue"))
    player = models.ForeignKey(
        Player,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="limits",
        verbose_name=_("player"),
    )
    card = models.ForeignKey(
        PlayerCard,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="limits",
        verbose_name=_("player card"),
    )
    kind = models.CharField(max_length=5, choices=LIMIT_KINDS, verbose_name=_("kind"))
    period = models.CharField(max_length=5, choices=LIMIT_PERIODS, verbose_name=_("period"))
    amount = MoneyField(
        max_digits=AMOUNT_DIGITS, decimal_places=2, null=True, blank=True, verbose_name=_("limit in force")
    )
    pending = models.BooleanField(default=False, verbose_name=_("change pending"))
    pending_amount = MoneyField(
        max_digits=AMOUNT_DIGITS, decimal_places=2, null=True, blank=True, verbose_name=_("pending limit")
    )
    pending_from = models.DateTimeField(null=True, blank=True, verbose_name=_("pending from"))
    changed_at = models.DateTimeField(verbose_name=_("changed at"))

    class Meta:
        verbose_name = _("player limit")
        verbose_name_plural = _("player limits")
        constraints = [
            models.CheckConstraint(
                condition=Q(player__isnull=True, card__isnull=False)
                | Q(player__isnull=False, card__isnull=True),
                name="player_limit_one_owner",
            ),
            models.UniqueConstraint(
                fields=["player", "kind", "period"],
                condition=Q(player__isnull=False),
                name="player_limit_once_per_player",
            ),
            models.UniqueConstraint(
                fields=["card", "kind", "period"],
                condition=Q(card__isnull=False),
                name="player_limit_once_per_card",
            ),
            models.CheckConstraint(
                condition=Q(amount__isnull=True) | Q(amount__gt=0), name="player_limit_amount_positive"
            ),
            models.CheckConstraint(
                condition=Q(pending=False) | Q(pending_from__isnull=False),
                name="player_limit_pending_has_date",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.kind}/{self.period}"


class PlaySession(models.Model):
    """A player card's session at a terminal: from the card going in (or its first purchase) until it is
    taken out or goes into another terminal; the reality checks count from `started_at`."""

    venue = models.ForeignKey(Venue, on_delete=models.PROTECT, related_name="+", verbose_name=_("venue"))
    device = models.ForeignKey(
        CashDevice, on_delete=models.PROTECT, related_name="+", verbose_name=_("terminal")
    )
    card = models.ForeignKey(
        PlayerCard, on_delete=models.PROTECT, related_name="+", verbose_name=_("player card")
    )
    started_at = models.DateTimeField(verbose_name=_("started at"))
    ended_at = models.DateTimeField(null=True, blank=True, verbose_name=_("ended at"))
    acknowledged = models.PositiveIntegerField(default=0, verbose_name=_("reality checks acknowledged"))

    class Meta:
        verbose_name = _("play session")
        verbose_name_plural = _("play sessions")
        constraints = [
            models.UniqueConstraint(
                fields=["device"], condition=Q(ended_at__isnull=True), name="play_session_one_open_per_device"
            ),
            models.UniqueConstraint(
                fields=["card"], condition=Q(ended_at__isnull=True), name="play_session_one_open_per_card"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.device_id}:{self.card_id}@{self.started_at:%Y-%m-%d %H:%M}"


class RealityCheck(models.Model):
    """A reality check a player acknowledged: what it showed (time played, staked, won, net) and when."""

    session = models.ForeignKey(
        PlaySession, on_delete=models.PROTECT, related_name="checks", verbose_name=_("play session")
    )
    number = models.PositiveIntegerField(verbose_name=_("number"))  # the session's n-th check
    acknowledged_at = models.DateTimeField(verbose_name=_("acknowledged at"))
    played_seconds = models.PositiveIntegerField(verbose_name=_("time played (s)"))
    staked = MoneyField(max_digits=AMOUNT_DIGITS, decimal_places=2, verbose_name=_("staked"))
    won = MoneyField(max_digits=AMOUNT_DIGITS, decimal_places=2, verbose_name=_("won"))

    class Meta:
        verbose_name = _("reality check")
        verbose_name_plural = _("reality checks")
        constraints = [
            models.UniqueConstraint(fields=["session", "number"], name="reality_check_once_per_number")
        ]
        triggers = [append_only()]

    def __str__(self) -> str:
        return f"{self.session_id}#{self.number}"
