"""Electronic and automatic bingo (spec §3, §4): specialities and their versioned rules, terminals, the
verification system, sessions, games with their balls, purchases and cards, and the prizes decided.

Money columns are `halls.fields.MoneyField` (exact, integer cents on SQLite). Balls, purchases, cards, wins
and verifications are append-only (the archive of R-01/R-03); a game row moves through its states.
"""

from __future__ import annotations

from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from halls.cashier.models import CashDevice, LedgerTransaction, PlayerCard
from halls.fields import MoneyField
from halls.models import Room, Venue, append_only, room_stream
from jackpots.models import Pool

AMOUNT_DIGITS = 14


class Speciality(models.Model):
    """One speciality of electronic or automatic bingo in a room (EB-03): its terminals share one draw."""

    venue = models.ForeignKey(Venue, on_delete=models.PROTECT, related_name="+", verbose_name=_("venue"))
    room = models.OneToOneField(
        Room, on_delete=models.PROTECT, related_name="speciality", verbose_name=_("room")
    )
    code = models.CharField(_("code"), max_length=30)
    name = models.CharField(_("name"), max_length=80)
    family = models.CharField(max_length=10, verbose_name=_("family"))  # bingo.electronic.prizetable.Family
    # Games start one after the other while a session is open and this is on (the operator's switch).
    running = models.BooleanField(default=False, verbose_name=_("running"))
    created_at = models.DateTimeField(verbose_name=_("created at"))

    class Meta:
        verbose_name = _("speciality")
        verbose_name_plural = _("specialities")
        constraints = [models.UniqueConstraint(fields=["venue", "code"], name="speciality_code_unique")]

    def __str__(self) -> str:
        return self.name

    @property
    def stream(self) -> str:
        """The public stream: the room's (hall screens and terminals follow it)."""
        return room_stream(self.room_id)


class SpecialityVersion(models.Model):
    """The speciality's rules and prize table from `effective_from` on (EB-02), as authorised."""

    speciality = models.ForeignKey(
        Speciality, on_delete=models.PROTECT, related_name="versions", verbose_name=_("speciality")
    )
    number = models.PositiveIntegerField(verbose_name=_("number"))
    rules = models.JSONField(verbose_name=_("rules"))  # bingo.electronic.prizetable.rules_json
    effective_from = models.DateTimeField(verbose_name=_("effective from"))
    authorisation_ref = models.CharField(max_length=120, verbose_name=_("authorisation ref"))
    created_at = models.DateTimeField(verbose_name=_("created at"))
    created_by = models.CharField(max_length=150, verbose_name=_("created by"))

    class Meta:
        verbose_name = _("speciality version")
        verbose_name_plural = _("speciality versions")
        constraints = [
            models.UniqueConstraint(fields=["speciality", "number"], name="speciality_version_unique")
        ]
        triggers = [append_only()]

    def __str__(self) -> str:
        return f"{self.speciality} v{self.number}"


class SpecialityPool(models.Model):
    """The pool (jackpots) of one accumulated prize of a speciality, by the prize's code."""

    speciality = models.ForeignKey(Speciality, on_delete=models.PROTECT, related_name="pools")
    prize_code = models.CharField(max_length=30)
    pool = models.OneToOneField(Pool, on_delete=models.PROTECT, related_name="+")

    class Meta:
        verbose_name = _("speciality pool")
        verbose_name_plural = _("speciality pools")
        constraints = [
            models.UniqueConstraint(fields=["speciality", "prize_code"], name="speciality_pool_unique")
        ]


class TerminalSoftware(models.Model):
    """A terminal software version approved for play (the verification compares terminals against it)."""

    venue = models.ForeignKey(Venue, on_delete=models.PROTECT, related_name="+", verbose_name=_("venue"))
    version = models.CharField(max_length=40, verbose_name=_("version"))
    authorisation_ref = models.CharField(max_length=120, verbose_name=_("authorisation ref"))
    approved_at = models.DateTimeField(verbose_name=_("approved at"))
    withdrawn_at = models.DateTimeField(null=True, blank=True, verbose_name=_("withdrawn at"))

    class Meta:
        verbose_name = _("terminal software")
        verbose_name_plural = _("terminal software versions")
        constraints = [models.UniqueConstraint(fields=["venue", "version"], name="terminal_software_unique")]

    def __str__(self) -> str:
        return self.version


class TerminalState(models.TextChoices):
    IN_SERVICE = "in_service", _("In service")
    FAILED = "failed", _("Failed its verification")
    OUT_OF_SERVICE = "out_of_service", _("Out of service")


class Terminal(models.Model):
    """A player terminal (EB-05.f): a cash device of kind terminal (its token, its messages) playing one
    speciality. It may play only while in service and verified for the open session."""

    device = models.OneToOneField(
        CashDevice, on_delete=models.PROTECT, related_name="terminal", verbose_name=_("device")
    )
    speciality = models.ForeignKey(
        Speciality, on_delete=models.PROTECT, related_name="terminals", verbose_name=_("speciality")
    )
    state = models.CharField(
        max_length=16,
        choices=TerminalState.choices,
        default=TerminalState.IN_SERVICE,
        verbose_name=_("state"),
    )
    software_version = models.CharField(
        max_length=40, blank=True, verbose_name=_("software version")
    )  # what the terminal last reported
    last_seen_at = models.DateTimeField(null=True, blank=True, verbose_name=_("last seen at"))
    clock_offset_ms = models.IntegerField(
        null=True, blank=True, verbose_name=_("clock offset ms")
    )  # terminal clock minus server clock
    # The verification it last passed; it plays only in the session opened on that verification or after.
    verified_by = models.ForeignKey(
        "Verification",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        verbose_name=_("verified by"),
    )

    class Meta:
        verbose_name = _("terminal")
        verbose_name_plural = _("terminals")

    def __str__(self) -> str:
        return self.device.name

    @property
    def stream(self) -> str:
        """The terminal's own stream: its cards, prizes and balance."""
        return terminal_stream(self.pk)


def terminal_stream(terminal_id: int) -> str:
    """A terminal's own stream, named without a Terminal at hand."""
    return f"terminal.{terminal_id}"


class Verification(models.Model):
    """A run of the verification system before a session (EB-05.e, AB-03, R-07): the system's checks, the
    RNG self-tests and every terminal's check, recorded."""

    speciality = models.ForeignKey(
        Speciality, on_delete=models.PROTECT, related_name="verifications", verbose_name=_("speciality")
    )
    started_at = models.DateTimeField(verbose_name=_("started at"))
    finished_at = models.DateTimeField(verbose_name=_("finished at"))
    passed = models.BooleanField(
        verbose_name=_("passed")
    )  # the system and RNG checks (a failed terminal only keeps itself out)
    system_checks = models.JSONField(verbose_name=_("system checks"))  # [{"check", "ok", "detail"}]
    rng_checks = models.JSONField(verbose_name=_("rng checks"))  # [{"test", "ok", "statistic", "detail"}]
    actor_label = models.CharField(max_length=150, verbose_name=_("actor label"))

    class Meta:
        verbose_name = _("terminal verification")
        verbose_name_plural = _("terminal verifications")
        triggers = [append_only()]


class TerminalCheck(models.Model):
    verification = models.ForeignKey(
        Verification, on_delete=models.PROTECT, related_name="terminal_checks", verbose_name=_("verification")
    )
    terminal = models.ForeignKey(
        Terminal, on_delete=models.PROTECT, related_name="checks", verbose_name=_("terminal")
    )
    passed = models.BooleanField(verbose_name=_("passed"))
    checks = models.JSONField(
        verbose_name=_("checks")
    )  # [{"check": "alive" | "software" | "clock", "ok", "detail"}]

    class Meta:
        verbose_name = _("terminal check")
        verbose_name_plural = _("terminal checks")
        constraints = [
            models.UniqueConstraint(fields=["verification", "terminal"], name="terminal_check_unique")
        ]
        triggers = [append_only()]


class ElectronicSession(models.Model):
    """A gaming session of a speciality, opened only on a passed verification."""

    speciality = models.ForeignKey(
        Speciality, on_delete=models.PROTECT, related_name="sessions", verbose_name=_("speciality")
    )
    verification = models.OneToOneField(
        Verification, on_delete=models.PROTECT, related_name="session", verbose_name=_("verification")
    )
    opened_at = models.DateTimeField(verbose_name=_("opened at"))
    opened_by = models.CharField(max_length=150, verbose_name=_("opened by"))
    closed_at = models.DateTimeField(null=True, blank=True, verbose_name=_("closed at"))
    closed_by = models.CharField(max_length=150, blank=True, verbose_name=_("closed by"))

    class Meta:
        verbose_name = _("electronic session")
        verbose_name_plural = _("electronic sessions")
        constraints = [
            models.UniqueConstraint(
                fields=["speciality"], condition=Q(closed_at__isnull=True), name="one_open_electronic_session"
            )
        ]


class EGameState(models.TextChoices):
    SELLING = "selling", _("Selling")
    DRAWING = "drawing", _("Drawing")
    CLOSED = "closed", _("Closed")
    VOID = "void", _("Void")


class ElectronicGame(models.Model):
    """One game of a speciality: one draw common to all its terminals (EB-01)."""

    speciality = models.ForeignKey(
        Speciality, on_delete=models.PROTECT, related_name="games", verbose_name=_("speciality")
    )
    version = models.ForeignKey(
        SpecialityVersion, on_delete=models.PROTECT, related_name="+", verbose_name=_("version")
    )
    session = models.ForeignKey(
        ElectronicSession, on_delete=models.PROTECT, related_name="games", verbose_name=_("session")
    )
    number = models.PositiveIntegerField(verbose_name=_("number"))  # 1, 2, ... per speciality
    state = models.CharField(
        max_length=8, choices=EGameState.choices, default=EGameState.SELLING, verbose_name=_("state")
    )
    created_at = models.DateTimeField(verbose_name=_("created at"))
    # When the sales window ends, on the venue's clock: halls.services.venueclock, real in production.
    sales_close_at = models.DateTimeField(verbose_name=_("sales close at"))
    sales_closed_at = models.DateTimeField(null=True, blank=True, verbose_name=_("sales closed at"))
    last_ball_at = models.DateTimeField(null=True, blank=True, verbose_name=_("last ball at"))
    closed_at = models.DateTimeField(null=True, blank=True, verbose_name=_("closed at"))
    cards_sold = models.PositiveIntegerField(default=0, verbose_name=_("cards sold"))
    sales_total = MoneyField(
        max_digits=AMOUNT_DIGITS, decimal_places=2, default=0, verbose_name=_("sales total")
    )
    balls_drawn = models.PositiveSmallIntegerField(default=0, verbose_name=_("balls drawn"))
    # Fixed at the close of sales: bingo.electronic.prizetable.terms_json, and the pools' meters announced.
    terms = models.JSONField(default=dict, blank=True, verbose_name=_("terms"))
    # The prizes decided so far (codes), so a ball step knows what is still open without reading them all.
    decided = models.JSONField(default=list, blank=True, verbose_name=_("decided"))

    class Meta:
        verbose_name = _("electronic game")
        verbose_name_plural = _("electronic games")
        constraints = [
            models.UniqueConstraint(fields=["speciality", "number"], name="electronic_game_number_unique"),
            # Sales for the next game run while the current one draws: one of each at most.
            models.UniqueConstraint(
                fields=["speciality"], condition=Q(state="selling"), name="one_selling_electronic_game"
            ),
            models.UniqueConstraint(
                fields=["speciality"], condition=Q(state="drawing"), name="one_drawing_electronic_game"
            ),
        ]
        indexes = [models.Index(fields=["state", "speciality"], name="egame_state_idx")]

    def __str__(self) -> str:
        return f"{self.speciality} · {self.number}"


class EBall(models.Model):
    game = models.ForeignKey(
        ElectronicGame, on_delete=models.PROTECT, related_name="balls", verbose_name=_("game")
    )
    ordinal = models.PositiveSmallIntegerField(verbose_name=_("ordinal"))
    number = models.PositiveSmallIntegerField(verbose_name=_("number"))
    drawn_at = models.DateTimeField(verbose_name=_("drawn at"))

    class Meta:
        verbose_name = _("electronic ball")
        verbose_name_plural = _("electronic balls")
        constraints = [
            models.UniqueConstraint(fields=["game", "ordinal"], name="eball_ordinal_unique"),
            models.UniqueConstraint(fields=["game", "number"], name="eball_number_unique"),
        ]
        triggers = [append_only()]


class Purchase(models.Model):
    """Cards bought at a terminal with a player card's balance for one game. `key` (unique per terminal)
    makes a retried purchase a no-op."""

    game = models.ForeignKey(
        ElectronicGame, on_delete=models.PROTECT, related_name="purchases", verbose_name=_("game")
    )
    terminal = models.ForeignKey(
        Terminal, on_delete=models.PROTECT, related_name="purchases", verbose_name=_("terminal")
    )
    player_card = models.ForeignKey(
        PlayerCard, on_delete=models.PROTECT, related_name="+", verbose_name=_("player card")
    )
    key = models.CharField(max_length=80, verbose_name=_("key"))
    cards = models.PositiveSmallIntegerField(verbose_name=_("number of cards"))
    amount = MoneyField(max_digits=AMOUNT_DIGITS, decimal_places=2, verbose_name=_("amount"))
    seed = models.CharField(
        max_length=64, verbose_name=_("seed")
    )  # hex: the cards are dealt from it (layouts.Layout.deal)
    transaction = models.OneToOneField(
        LedgerTransaction, on_delete=models.PROTECT, related_name="+", verbose_name=_("transaction")
    )
    created_at = models.DateTimeField(verbose_name=_("created at"))

    class Meta:
        verbose_name = _("purchase")
        verbose_name_plural = _("purchases")
        constraints = [models.UniqueConstraint(fields=["terminal", "key"], name="purchase_key_unique")]
        indexes = [models.Index(fields=["game", "terminal"], name="purchase_game_terminal_idx")]
        triggers = [append_only()]


class ECard(models.Model):
    """An electronic card in play (EB-04): its cells in the layout's order, 0 = the free cell."""

    game = models.ForeignKey(ElectronicGame, on_delete=models.PROTECT, related_name="cards")
    purchase = models.ForeignKey(Purchase, on_delete=models.PROTECT, related_name="card_rows")
    position = models.PositiveSmallIntegerField()  # 1.. within the purchase
    cells = models.BinaryField()

    class Meta:
        verbose_name = _("electronic card")
        verbose_name_plural = _("electronic cards")
        constraints = [models.UniqueConstraint(fields=["purchase", "position"], name="ecard_position_unique")]
        indexes = [models.Index(fields=["game", "id"], name="ecard_game_idx")]
        triggers = [append_only()]


class EPrize(models.Model):
    """A prize of a game as decided at a ball: won (with its winners) or not."""

    game = models.ForeignKey(
        ElectronicGame, on_delete=models.PROTECT, related_name="prizes", verbose_name=_("game")
    )
    code = models.CharField(max_length=30, verbose_name=_("code"))
    type = models.CharField(max_length=20, verbose_name=_("type"))  # bingo.electronic.prizetable.PrizeType
    name = models.CharField(max_length=60, verbose_name=_("name"))
    ordinal = models.PositiveSmallIntegerField(verbose_name=_("ordinal"))  # the ball that decided it
    won = models.BooleanField(verbose_name=_("won"))
    winners = models.PositiveIntegerField(default=0, verbose_name=_("winners"))
    amount = MoneyField(
        max_digits=AMOUNT_DIGITS, decimal_places=2, default=0, verbose_name=_("amount")
    )  # the prize (before sharing)
    share = MoneyField(
        max_digits=AMOUNT_DIGITS, decimal_places=2, default=0, verbose_name=_("share")
    )  # each winning card's
    remainder = MoneyField(
        max_digits=AMOUNT_DIGITS, decimal_places=2, default=0, verbose_name=_("remainder")
    )  # left where it came from
    pool = models.ForeignKey(
        Pool, null=True, blank=True, on_delete=models.PROTECT, related_name="+", verbose_name=_("pool")
    )
    settlement_id = models.BigIntegerField(
        null=True, blank=True, verbose_name=_("settlement id")
    )  # the pool engine's, for a pool prize
    transaction = models.OneToOneField(
        LedgerTransaction,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        verbose_name=_("transaction"),
    )
    decided_at = models.DateTimeField(verbose_name=_("decided at"))

    class Meta:
        verbose_name = _("electronic prize")
        verbose_name_plural = _("electronic prizes")
        constraints = [models.UniqueConstraint(fields=["game", "code"], name="eprize_code_unique")]
        triggers = [append_only()]


class EWin(models.Model):
    """One winning card's share of a prize, credited to the player card that bought it."""

    prize = models.ForeignKey(EPrize, on_delete=models.PROTECT, related_name="wins", verbose_name=_("prize"))
    card = models.ForeignKey(ECard, on_delete=models.PROTECT, related_name="wins", verbose_name=_("card"))
    purchase = models.ForeignKey(
        Purchase, on_delete=models.PROTECT, related_name="wins", verbose_name=_("purchase")
    )
    amount = MoneyField(max_digits=AMOUNT_DIGITS, decimal_places=2, verbose_name=_("amount"))

    class Meta:
        verbose_name = _("electronic win")
        verbose_name_plural = _("electronic wins")
        constraints = [models.UniqueConstraint(fields=["prize", "card"], name="ewin_card_unique")]
        triggers = [append_only()]


class TerminalMessage(models.Model):
    """A terminal's message, once per (terminal, seq): a retry answers `result`, the first answer."""

    terminal = models.ForeignKey(
        Terminal, on_delete=models.PROTECT, related_name="messages", verbose_name=_("terminal")
    )
    seq = models.PositiveBigIntegerField(verbose_name=_("seq"))
    kind = models.CharField(max_length=16, verbose_name=_("kind"))
    body = models.JSONField(verbose_name=_("body"))
    result = models.JSONField(verbose_name=_("result"))
    received_at = models.DateTimeField(verbose_name=_("received at"))

    class Meta:
        verbose_name = _("terminal message")
        verbose_name_plural = _("terminal messages")
        constraints = [models.UniqueConstraint(fields=["terminal", "seq"], name="terminal_message_unique")]
        triggers = [append_only()]
