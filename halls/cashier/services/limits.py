"""A player's loss and spend limits, and the terminals' play sessions with their reality checks.

Limits (halls.cashier.limits decides): a registered player's limits hold on all their cards; an anonymous
card's, on the card. `set_limit` lowers (or sets a first limit) at once and records a raise or a removal
as pending until the jurisdiction's cooling-off has run (`cooling_off`); a different raise while one is
pending is refused (409 limit_cooling_off), nothing written. What a period used is read from the ledger:
staked = the card spends (CARD_SPEND debits of the cards' accounts), won = the prizes credited to them
(PRIZE_AWARD, PRIZE_PAYOUT), in the venue's local day, ISO week or calendar month.

`check_stake(card, amount, at)` is the one check every place a card stakes calls before its money moves
(electronic bingo's purchases, bingo.electronic.services.sales; a group of purchases checks each through
one `Stakes`, so the group's earlier stakes count): 409 limit_reached naming the limit, what is left and
when it resets, or 409 reality_check_due while the card's terminal session waits for its reality check.
It runs under the card's lock (Rank.PLAYER_CARD) and its limits' (Rank.PLAYER_LIMIT, when it has any), so
two purchases of one card, or of two cards of one player, are checked one after the other.

Play sessions: a card's session begins when the card goes into a terminal (or with its first purchase) and
ends when it is taken out; it follows the card to another terminal (its time and checks go on). Every
`reality_every` of it a reality check is due (time played, staked, won, net since it began) and purchases
are refused until the player acknowledges it (`acknowledge`, idempotent by the check's number, audited).

Audit data carries ids, kinds, periods and amounts: never a person's name or document.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any
from zoneinfo import ZoneInfo

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Q, Sum
from django.utils import formats, timezone
from django.utils.translation import gettext as _

from halls import i18n, money
from halls.actors import Actor
from halls.cashier import limits as core
from halls.cashier.limits import LimitKind, Period
from halls.cashier.models import (
    Account,
    CashDevice,
    Leg,
    PlayerCard,
    PlayerLimit,
    PlaySession,
    RealityCheck,
    TxKind,
)
from halls.cashier.services.locks import lock_player_card, lock_player_limit, lock_player_limits
from halls.cashier.services.player_cards import check_active
from halls.errors import Conflict, InvalidInput
from halls.models import Venue
from halls.services import audit

PRIZES = (TxKind.PRIZE_AWARD, TxKind.PRIZE_PAYOUT)


# --- the jurisdiction's figures -------------------------------------------------------------------------


def _setting(venue: Venue, name: str, default: float) -> float:
    overrides = settings.HALL_LIMITS_BY_JURISDICTION.get(venue.jurisdiction, {})
    return float(overrides.get(name, default))


def cooling_off(venue: Venue) -> timedelta:
    """How long a raised or removed limit waits before it applies (72 h by default)."""
    return timedelta(hours=_setting(venue, "cooling_off_hours", settings.HALL_LIMITS_COOLING_OFF_HOURS))


def reality_every(venue: Venue) -> timedelta:
    """Every how long a terminal session shows its reality check (60 minutes by default)."""
    minutes = _setting(venue, "reality_check_minutes", settings.HALL_LIMITS_REALITY_CHECK_MINUTES)
    return timedelta(minutes=max(minutes, 1 / 60))


# --- words ----------------------------------------------------------------------------------------------


def limit_name(kind: str, period: str) -> str:
    """ "daily loss limit" and the five others, whole (a language orders them its own way)."""
    names = {
        (LimitKind.LOSS, Period.DAY): _("daily loss limit"),
        (LimitKind.LOSS, Period.WEEK): _("weekly loss limit"),
        (LimitKind.LOSS, Period.MONTH): _("monthly loss limit"),
        (LimitKind.SPEND, Period.DAY): _("daily spend limit"),
        (LimitKind.SPEND, Period.WEEK): _("weekly spend limit"),
        (LimitKind.SPEND, Period.MONTH): _("monthly spend limit"),
    }
    return names[(LimitKind(kind), Period(period))]


def _when(instant: datetime, venue: Venue) -> str:
    """A moment in the venue's time, as a person reads it: "07/12/2026 00:00"."""
    local = timezone.localtime(instant, ZoneInfo(venue.time_zone))
    return f"{formats.date_format(local, 'SHORT_DATE_FORMAT')} {local:%H:%M}"


def played_text(seconds: int) -> str:
    hours, rest = divmod(max(seconds, 0), 3600)
    return _("%(hours)d h %(minutes)02d min") % {"hours": hours, "minutes": rest // 60}


# --- reading the ledger ---------------------------------------------------------------------------------


def _owner(card: PlayerCard) -> tuple[str, int]:
    """Whose limits a card's stakes count against first: its player's, or the anonymous card's own."""
    return ("player", card.player_id) if card.player_id is not None else ("card", card.pk)


def _accounts(owner: tuple[str, int]) -> list[int]:
    """The ledger accounts of an owner's cards (a player's: all their cards')."""
    kind, pk = owner
    found = (
        Account.objects.filter(card__player_id=pk) if kind == "player" else Account.objects.filter(card_id=pk)
    )
    return list(found.values_list("pk", flat=True))


def _used(accounts: list[int], spans: Mapping[Any, tuple[datetime, datetime]]) -> dict[Any, core.Used]:
    """Staked and won on `accounts` in each span [start, end): one query whatever the number of spans."""
    if not accounts or not spans:
        return {name: core.Used() for name in spans}
    earliest = min(start for start, _end in spans.values())
    legs = Leg.objects.filter(
        account_id__in=accounts,
        transaction__created_at__gte=earliest,
        transaction__kind__in=[TxKind.CARD_SPEND, *PRIZES],
    )
    sums: dict[str, Any] = {}
    for i, (start, end) in enumerate(spans.values()):
        within = Q(transaction__created_at__gte=start, transaction__created_at__lt=end)
        sums[f"s{i}"] = Sum("amount", filter=within & Q(transaction__kind=TxKind.CARD_SPEND))
        sums[f"w{i}"] = Sum("amount", filter=within & Q(transaction__kind__in=PRIZES))
    row = legs.aggregate(**sums)
    # A card account is credit-normal: a spend debits it (+), a prize credits it (-).
    return {
        name: core.Used(staked=row[f"s{i}"] or money.ZERO, won=-(row[f"w{i}"] or money.ZERO))
        for i, name in enumerate(spans)
    }


def _periods(venue: Venue, at: datetime) -> dict[Period, tuple[datetime, datetime]]:
    local = timezone.localtime(at, ZoneInfo(venue.time_zone))
    return {period: core.period_bounds(period, local) for period in Period}


def _setting_of(row: PlayerLimit) -> core.Setting:
    return core.Setting(row.amount, row.pending, row.pending_amount, row.pending_from)


# --- what a card's limits are ---------------------------------------------------------------------------


@dataclass(frozen=True)
class LimitView:
    """One of the six limits as it stands at `at`: in force, pending, used, left, and when it resets."""

    kind: str
    period: str
    amount: Decimal | None
    pending: bool
    pending_amount: Decimal | None
    pending_from: datetime | None
    used: Decimal
    left: Decimal | None
    resets_at: datetime


def _views(card: PlayerCard, rows: Iterable[PlayerLimit], at: datetime) -> list[LimitView]:
    venue = Venue.objects.get(pk=card.venue_id)
    periods = _periods(venue, at)
    used = _used(_accounts(_owner(card)), periods)
    by_slot = {(r.kind, r.period): r for r in rows}
    views = []
    for kind in LimitKind:
        for period in Period:
            row = by_slot.get((kind.value, period.value))
            setting = core.settled(_setting_of(row), at) if row is not None else core.NONE
            amount = setting.amount
            views.append(
                LimitView(
                    kind=kind.value,
                    period=period.value,
                    amount=amount,
                    pending=setting.pending,
                    pending_amount=setting.pending_amount,
                    pending_from=setting.pending_from,
                    used=used[period].of(kind),
                    left=None if amount is None else core.left(kind, amount, used[period]),
                    resets_at=periods[period][1],
                )
            )
    return views


def _owned_rows(card: PlayerCard) -> list[PlayerLimit]:
    kind, pk = _owner(card)
    return list(PlayerLimit.objects.filter(**{f"{kind}_id": pk}))


def limits_of(card: PlayerCard, *, at: datetime | None = None) -> list[LimitView]:
    """The card's six limits (its player's, for a registered player's card) as they stand now."""
    return _views(card, _owned_rows(card), at or timezone.now())


# --- setting a limit ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class LimitChange:
    outcome: core.Outcome  # at_once, pending or unchanged (refused raises)
    limit: LimitView
    limits: list[LimitView]


def _choice(value: Any, allowed: type[LimitKind] | type[Period], field: str) -> str:
    if value not in {member.value for member in allowed}:
        raise InvalidInput(
            _("%(field)s is one of %(allowed)s.")
            % {"field": field, "allowed": ", ".join(m.value for m in allowed)},
            code=f"bad_{field}",
            field=field,
        )
    return str(value)


def limit_amount(value: Any) -> Decimal | None:
    """A limit's amount: positive, whole cents, at most the ledger's maximum; None (null) for no limit."""
    if value is None:
        return None
    try:
        amount = money.parse("amount", value, places=money.CENT_PLACES, positive=True, maximum=money.MAX_BET)
    except money.MoneyError:
        raise InvalidInput(
            _(
                "amount is a limit above 0 in whole cents, at most %(maximum)s, or null for no limit; "
                "got %(value)s."
            )
            % {"maximum": i18n.amount(money.MAX_BET), "value": str(value)[:40]},
            code="bad_amount",
            field="amount",
        ) from None
    return money.cents(amount)


def _row(card: PlayerCard, kind: str, period: str, at: datetime) -> PlayerLimit:
    """The owner's limit row for (kind, period), made empty on first use, locked."""
    owner, pk = _owner(card)
    found = PlayerLimit.objects.filter(kind=kind, period=period, **{f"{owner}_id": pk}).first()
    if found is None:
        try:
            with transaction.atomic():  # a savepoint: the same row made at this instant by another call
                found = PlayerLimit.objects.create(
                    venue_id=card.venue_id, kind=kind, period=period, changed_at=at, **{f"{owner}_id": pk}
                )
        except IntegrityError:
            found = PlayerLimit.objects.get(kind=kind, period=period, **{f"{owner}_id": pk})
    return lock_player_limit(found.pk)


def set_limit(
    *, card: PlayerCard, kind: Any, period: Any, amount: Any, actor: Actor, at: datetime | None = None
) -> LimitChange:
    """Ask for the (kind, period) limit `amount` (None: none) on the card's owner. Lowered or first set: in
    force at once; raised or removed: pending until the cooling-off has run (the same raise again is that
    change); another raise while one is pending: 409 limit_cooling_off, nothing written. Audited."""
    kind = _choice(kind, LimitKind, "kind")
    period = _choice(period, Period, "period")
    wanted = limit_amount(amount)
    at = at or timezone.now()
    venue = Venue.objects.get(pk=card.venue_id)
    with transaction.atomic():
        locked = lock_player_card(card.pk)
        check_active(locked)
        row = _row(locked, kind, period, at)
        decision = core.decide(_setting_of(row), wanted, at, cooling_off(venue))
        if decision.outcome == core.Outcome.REFUSED:
            before = decision.before
            assert before.pending_from is not None
            raise Conflict(
                _(
                    "The %(limit)s already has a change waiting its cooling-off (to %(pending)s, from "
                    "%(from)s): another raise can be asked once it applies. A lower limit applies at once."
                )
                % {
                    "limit": limit_name(kind, period),
                    "pending": i18n.amount(before.pending_amount, missing=_("no limit")),
                    "from": _when(before.pending_from, venue),
                },
                code="limit_cooling_off",
                kind=kind,
                period=period,
                pending_amount=money.text_cents(before.pending_amount),
                pending_from=before.pending_from.isoformat(),
            )
        if decision.outcome != core.Outcome.UNCHANGED or decision.after != _setting_of(row):
            after = decision.after
            row.amount, row.pending = after.amount, after.pending
            row.pending_amount, row.pending_from = after.pending_amount, after.pending_from
            row.changed_at = at
            row.save(update_fields=["amount", "pending", "pending_amount", "pending_from", "changed_at"])
            audit.record(
                venue_id=card.venue_id,
                actor=actor,
                action=f"cashier.limit_{decision.outcome.value}",
                obj=row,
                data={
                    "card": locked.pk,
                    "player": locked.player_id,
                    "kind": kind,
                    "period": period,
                    "from": money.text_cents(decision.before.amount),
                    "to": money.text_cents(wanted),
                    "in_force": money.text_cents(after.amount),
                    "pending_from": after.pending_from.isoformat() if after.pending_from else None,
                },
            )
        views = _views(locked, _owned_rows(locked), at)
    mine = next(v for v in views if (v.kind, v.period) == (kind, period))
    return LimitChange(outcome=decision.outcome, limit=mine, limits=views)


# --- play sessions --------------------------------------------------------------------------------------


def open_session(card: PlayerCard) -> PlaySession | None:
    return PlaySession.objects.filter(card_id=card.pk, ended_at__isnull=True).first()


def begin_session(
    *, device: CashDevice, card: PlayerCard, at: datetime | None = None, card_held: bool = False
) -> PlaySession:
    """The card's session, now at the terminal `device`: its open one (which follows the card from another
    terminal, its time and checks going on), or a new one; another card's session at this terminal ends.
    The card is locked here, unless `card_held`: a purchase's transaction locked it before its money."""
    at = at or timezone.now()
    with transaction.atomic():
        if not card_held:  # a purchase, which locked the card before its money, writes it after
            lock_player_card(card.pk)
        found = open_session(card)
        if found is not None and found.device_id == device.pk:
            return found
        PlaySession.objects.filter(device_id=device.pk, ended_at__isnull=True).exclude(
            card_id=card.pk
        ).update(ended_at=at)
        if found is not None:
            PlaySession.objects.filter(pk=found.pk).update(device=device)
            found.device = device
            return found
        session = PlaySession.objects.create(venue_id=card.venue_id, device=device, card=card, started_at=at)
        audit.record(
            venue_id=card.venue_id,
            actor=device.name,
            action="cashier.play_session_started",
            obj=session,
            data={"device": device.pk, "card": card.pk},
        )
        return session


def end_session(*, device: CashDevice, card: PlayerCard, at: datetime | None = None) -> bool:
    """The card taken out of the terminal: its session there ends (False when none was open)."""
    at = at or timezone.now()
    with transaction.atomic():
        lock_player_card(card.pk)
        session = PlaySession.objects.filter(
            device_id=device.pk, card_id=card.pk, ended_at__isnull=True
        ).first()
        if session is None:
            return False
        PlaySession.objects.filter(pk=session.pk).update(ended_at=at)
        audit.record(
            venue_id=card.venue_id,
            actor=device.name,
            action="cashier.play_session_ended",
            obj=session,
            data={"device": device.pk, "card": card.pk, "checks": session.acknowledged},
        )
        return True


@dataclass(frozen=True)
class Reality:
    """What a reality check shows of a session at `at`, and which check is due (None: none)."""

    session: PlaySession
    at: datetime
    due: int | None
    every: timedelta
    next_at: datetime
    played_seconds: int
    staked: Decimal
    won: Decimal

    @property
    def net(self) -> Decimal:
        """Net spent: staked less won (negative when the player is ahead)."""
        return self.staked - self.won


def _reality(session: PlaySession, venue: Venue, at: datetime) -> Reality:
    every = reality_every(venue)
    used = _used(
        _accounts(("card", session.card_id)), {"s": (session.started_at, at + timedelta(microseconds=1))}
    )["s"]
    return Reality(
        session=session,
        at=at,
        due=core.due_check(session.started_at, session.acknowledged, at, every),
        every=every,
        next_at=core.next_check_at(session.started_at, session.acknowledged, every),
        played_seconds=int((at - session.started_at).total_seconds()),
        staked=used.staked,
        won=used.won,
    )


def reality_of(session: PlaySession, *, at: datetime | None = None) -> Reality:
    return _reality(session, Venue.objects.get(pk=session.venue_id), at or timezone.now())


def _no_session() -> Conflict:
    return Conflict(
        _("This card has no play session at this terminal: insert it again."), code="no_play_session"
    )


def acknowledge(
    *, device: CashDevice, card: PlayerCard, number: Any, at: datetime | None = None
) -> tuple[RealityCheck, bool]:
    """The player acknowledges reality check `number` of the card's session at `device` (and those before
    it): recorded with what it showed, audited. Again: the first record, nothing written (True). 409
    no_play_session, reality_check_not_due."""
    if isinstance(number, bool) or not isinstance(number, int) or number < 1:
        raise InvalidInput(_("check is the reality check's number, from 1."), code="bad_check", field="check")
    at = at or timezone.now()
    with transaction.atomic():
        lock_player_card(card.pk)
        session = PlaySession.objects.filter(
            device_id=device.pk, card_id=card.pk, ended_at__isnull=True
        ).first()
        if session is None:
            raise _no_session()
        done = RealityCheck.objects.filter(session=session, number=number).first()
        if done is not None:
            return done, True
        if number <= session.acknowledged:  # a later check was acknowledged: this one with it
            later = (
                RealityCheck.objects.filter(session=session, number__gte=number).order_by("number").first()
            )
            assert later is not None
            return later, True
        shown = reality_of(session, at=at)
        if number > core.checks_due(session.started_at, at, shown.every):
            raise Conflict(
                _("Reality check %(number)s is not due yet.") % {"number": number},
                code="reality_check_not_due",
            )
        check = RealityCheck.objects.create(
            session=session,
            number=number,
            acknowledged_at=at,
            played_seconds=shown.played_seconds,
            staked=shown.staked,
            won=shown.won,
        )
        PlaySession.objects.filter(pk=session.pk).update(acknowledged=number)
        audit.record(
            venue_id=session.venue_id,
            actor=device.name,
            action="cashier.reality_check_acknowledged",
            obj=check,
            data={
                "session": session.pk,
                "card": card.pk,
                "number": number,
                "played_seconds": shown.played_seconds,
                "staked": money.text_cents(shown.staked),
                "won": money.text_cents(shown.won),
            },
        )
    return check, False


# --- checking a stake -----------------------------------------------------------------------------------


@dataclass
class Stakes:
    """The stakes of one transaction, each checked against its card's limits and reality check with the
    earlier ones counted (a group of purchases); what it reads is read once per card, owner and venue."""

    at: datetime
    _venues: dict[int, Venue] = field(default_factory=dict)
    _rows: dict[tuple[str, int], list[PlayerLimit]] = field(default_factory=dict)
    _used: dict[tuple[str, int], dict[Period, core.Used]] = field(default_factory=dict)
    _sessions: dict[int, PlaySession | None] = field(default_factory=dict)

    def load(self, cards: Iterable[PlayerCard]) -> None:
        """Read the limits and open sessions of `cards` (those not read yet) in two queries."""
        new = {c.pk: c for c in cards if c.pk not in self._sessions}
        if not new:
            return
        owners = {_owner(c) for c in new.values()} | {("card", pk) for pk in new}
        players = [pk for kind, pk in owners if kind == "player"]
        found = PlayerLimit.objects.filter(Q(card_id__in=list(new)) | Q(player_id__in=players))
        # Locked (after the cards, in id order): a player's purchases on two cards at once are checked one
        # after the other, each against the ledger as the other left it.
        rows = lock_player_limits(found.values_list("pk", flat=True)).values()
        for owner in owners:
            self._rows.setdefault(owner, [])
        for row in rows:
            mine: tuple[str, int] = (
                ("player", row.player_id) if row.player_id is not None else ("card", int(row.card_id or 0))
            )
            if mine in owners and row not in self._rows[mine]:
                self._rows[mine].append(row)
        for pk in new:
            self._sessions[pk] = None
        for session in PlaySession.objects.filter(card_id__in=list(new), ended_at__isnull=True):
            self._sessions[session.card_id] = session

    def playing(self, pairs: Iterable[tuple[CashDevice, PlayerCard]]) -> None:
        """Stakes written at these terminals: each card's session goes on there, or begins (rarely: a
        purchase with no card put in first, or from another terminal)."""
        for device, card in pairs:
            session = self._sessions.get(card.pk)
            if session is None or session.device_id != device.pk:
                self._sessions[card.pk] = begin_session(device=device, card=card, at=self.at, card_held=True)

    def _venue(self, venue_id: int) -> Venue:
        if venue_id not in self._venues:
            self._venues[venue_id] = Venue.objects.get(pk=venue_id)
        return self._venues[venue_id]

    def _usage(self, owner: tuple[str, int], venue: Venue) -> dict[Period, core.Used]:
        if owner not in self._used:
            self._used[owner] = _used(_accounts(owner), _periods(venue, self.at))
        return self._used[owner]

    def check(self, card: PlayerCard, amount: Decimal) -> None:
        """Refuse the stake `amount` on `card`, locked by the caller (409 card_blocked, reality_check_due,
        limit_reached), else count it."""
        check_active(card)
        self.load([card])
        venue = self._venue(card.venue_id)
        session = self._sessions[card.pk]
        if session is not None:
            due = core.due_check(session.started_at, session.acknowledged, self.at, reality_every(venue))
            if due is not None:
                raise _check_due(_reality(session, venue, self.at))
        owners = [_owner(card)] + ([("card", card.pk)] if card.player_id is not None else [])
        counted = []
        for owner in owners:
            for row in self._rows.get(owner, []):
                limit = core.in_force(_setting_of(row), self.at)
                if limit is None:
                    continue
                kind, period = LimitKind(row.kind), Period(row.period)
                used = self._usage(owner, venue)[period]
                if not core.allows(kind, limit, used, amount):
                    raise _reached(
                        kind, period, limit, used, amount, _periods(venue, self.at)[period][1], venue
                    )
            if self._rows.get(owner):
                counted.append(owner)
        for owner in counted:
            usage = self._usage(owner, venue)
            self._used[owner] = {p: u.plus(amount) for p, u in usage.items()}


def _check_due(shown: Reality) -> Conflict:
    return Conflict(
        _(
            "Time for a reality check: you have played %(played)s and spent %(net)s net (staked %(staked)s, "
            "won %(won)s). Acknowledge it on the screen to play on."
        )
        % {
            "played": played_text(shown.played_seconds),
            "net": i18n.amount(shown.net),
            "staked": i18n.amount(shown.staked),
            "won": i18n.amount(shown.won),
        },
        code="reality_check_due",
        check=shown.due,
        played_seconds=shown.played_seconds,
        staked=money.text_cents(shown.staked),
        won=money.text_cents(shown.won),
    )


def _reached(
    kind: LimitKind,
    period: Period,
    limit: Decimal,
    used: core.Used,
    amount: Decimal,
    resets: datetime,
    venue: Venue,
) -> Conflict:
    rest = core.left(kind, limit, used)
    return Conflict(
        _(
            "Your %(limit)s of %(amount)s does not allow this purchase of %(stake)s: %(left)s left until "
            "%(resets)s."
        )
        % {
            "limit": limit_name(kind, period),
            "amount": i18n.amount(limit),
            "stake": i18n.amount(amount),
            "left": i18n.amount(rest),
            "resets": _when(resets, venue),
        },
        code="limit_reached",
        kind=kind.value,
        period=period.value,
        limit=money.text_cents(limit),
        left=money.text_cents(rest),
        stake=money.text_cents(amount),
        resets_at=resets.isoformat(),
    )


def check_stake(
    card: PlayerCard, amount: Decimal, at: datetime, *, stakes: Stakes | None = None
) -> PlayerCard:
    """The one check before a card stakes `amount` at `at`, inside the staking transaction, before the
    money moves: the card locked (Rank.PLAYER_CARD) and usable (409 card_blocked), then 409
    reality_check_due or limit_reached (naming the limit, what is left and when it resets). Answers the
    locked card. `stakes`: the transaction's own, counting this stake for the next, and `playing` once the
    stake is written."""
    locked = lock_player_card(card.pk)
    (stakes or Stakes(at)).check(locked, amount)
    return locked
