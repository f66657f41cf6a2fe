"""Selling and returning contiguous serial ranges of a series ("from no. X to Y") while a game is on sale."""

from __future__ import annotations

import uuid
from decimal import Decimal

from django.contrib.auth.models import User
from django.db import IntegrityError, connection, transaction
from django.db.models import Count, Field, Model
from django.utils import timezone
from django.utils.translation import gettext, gettext_noop
from django.utils.translation import gettext as _

from bingo.announce import contiguous_ranges
from bingo.traditional import hooks
from bingo.traditional.models import (
    Card,
    CardSeries,
    Game,
    GameState,
    SaleKind,
    SaleOperation,
    SoldCard,
)
from bingo.traditional.services import stock
from bingo.traditional.services.locks import lock_game, lock_series
from bingo.traditional.services.readmodels import sales_totals
from bingo.traditional.services.steps import record, step
from halls.cashier import ledger
from halls.cashier.ledger import Kind
from halls.cashier.models import LedgerTransaction, Means, Shift, TxKind
from halls.cashier.services import ledger as books
from halls.cashier.services.shifts import open_shift_of
from halls.errors import Conflict, InvalidInput, NotFound
from halls.eventtypes import EventType, Sale, SalesChanged


def _check_range(series: CardSeries, first: int, last: int) -> None:
    if first > last:
        raise InvalidInput(
            _("The range %(first)s–%(last)s runs backwards: give the lower serial first.")
            % {"first": first, "last": last},
            code="bad_range",
        )
    if first < 1 or last > series.card_count:
        raise InvalidInput(
            _("Cards %(first)s–%(last)s are not all in series %(code)s (serials 1–%(card_count)s).")
            % {"first": first, "last": last, "code": series.code, "card_count": series.card_count},
            code="range_not_in_series",
        )


def _replay(
    game: Game, key: str | None, kind: str, series: CardSeries, first: int, last: int
) -> SaleOperation | None:
    """A device retry: the same key answers with the first operation; another request under it is refused."""
    if not key:
        return None
    previous = SaleOperation.objects.filter(game=game, idempotency_key=key).first()
    if previous is None:
        return None
    if (previous.kind, previous.series_id, previous.first_serial, previous.last_serial) != (
        kind,
        series.pk,
        first,
        last,
    ):
        raise Conflict(
            _("Idempotency key %(key)r was used for another operation.") % {"key": key},
            code="idempotency_key_reused",
        )
    return previous


def _lock_on_sale(game: Game, series: CardSeries, doing: str) -> Game:
    game = lock_game(game.pk)
    hooks.refuse_relayed(game)
    if series.venue_id != game.room.venue_id:
        raise NotFound(_("No series %(code)s in this venue.") % {"code": series.code}, code="unknown_series")
    if game.state != GameState.ON_SALE:
        label = GameState(game.state).label.lower()
        raise Conflict(
            _("Game %(number)s is %(label)s: cards can be %(doing)s only while it is on sale.")
            % {"number": game.number, "label": label, "doing": gettext(doing)},
            code="wrong_state",
        )
    return game


def _post_to_drawer(
    game: Game, kind: SaleKind, amount: Decimal, actor: User, idempotency_key: str | None
) -> tuple[Shift, LedgerTransaction]:
    """Post a sale's cash into (or a return's out of) the drawer of the acting cashier's open shift.

    Takes the shift's lock (after the game's: GAME comes before SHIFT); refuses `no_open_shift` when the
    cashier has none and `drawer_short` when the drawer does not hold a return's money. The ledger key is
    the operation's own: the game and the caller's idempotency key (a fresh one when there is none, since
    the operation row, written once, cannot name its transaction after the fact).
    """
    venue_id = game.room.venue_id
    shift = open_shift_of(venue_id=venue_id, cashier=actor)
    cash = books.drawer(shift, Means.CASH).pk
    sales_account = books.venue_account(venue_id, Kind.SALES).pk
    if kind == SaleKind.SELL:
        tx_kind, prefix = TxKind.SALE, "sale"
        legs = [ledger.debit(cash, amount), ledger.credit(sales_account, amount)]
    else:
        tx_kind, prefix = TxKind.SALE_RETURN, "sale_return"
        legs = [ledger.debit(sales_account, amount), ledger.credit(cash, amount)]
    posted = books.post(
        venue_id=venue_id,
        kind=tx_kind,
        key=f"{prefix}:{game.pk}:{idempotency_key or uuid.uuid4().hex}",
        legs=legs,
        actor=actor,
        shift=shift,
        device=shift.till.name,
        data={"game": game.pk},
    )
    return shift, posted.transaction


def sell_range(
    *,
    game: Game,
    series: CardSeries,
    first: int,
    last: int,
    actor: User,
    idempotency_key: str | None = None,
) -> SaleOperation:
    """Sell cards first..last of a series in a game, in one INSERT ... SELECT.

    The database's unique constraints refuse a card sold twice and two cards with the same numbers in one
    game; only when they do are the cards at fault looked up, to name them in the refusal.
    """
    _check_range(series, first, last)
    try:
        with transaction.atomic():
            game = _lock_on_sale(game, series, gettext_noop("sold"))
            replay = _replay(game, idempotency_key, SaleKind.SELL, series, first, last)
            if replay:
                return replay
            # The series after the game (the lock order): its paper's ranges hold still while they are
            # checked, and a table print choosing its next unsold cards waits for this sale.
            lock_series(series.pk)
            stock.refuse_blocked(series, game, first, last)
            count = last - first + 1  # _check_range: every serial of the range is a card of the series
            amount = series.face_value * count
            shift, posted = _post_to_drawer(game, SaleKind.SELL, amount, actor, idempotency_key)
            operation = SaleOperation.objects.create(
                game=game,
                series=series,
                kind=SaleKind.SELL,
                first_serial=first,
                last_serial=last,
                cards=count,
                amount=amount,
                cashier=actor,
                created_at=timezone.now(),
                idempotency_key=idempotency_key or None,
                shift=shift,
                ledger_tx=posted,
            )
            try:
                with transaction.atomic():  # a savepoint: a refused insert leaves the transaction usable
                    inserted = _insert_sold_cards(operation, first, last)
            except IntegrityError:
                _refuse_sale(game, series, first, last)
                raise  # nothing to name: a sale of another transaction got there first
            if inserted != count:  # a series always holds strips × 6 cards; anything else is corruption
                raise AssertionError(f"series {series.code} lacks cards in {first}–{last}")
            sale = _sale(operation, game)
            record(game, actor, EventType.SALES_SOLD, sale, SalesChanged(**step(game), **sale))
    except IntegrityError as exc:
        # Another game sold one of these cards at the same moment.
        raise Conflict(
            _("Cards %(first)s–%(last)s of series %(code)s are already sold.")
            % {"first": first, "last": last, "code": series.code},
            code="already_sold",
        ) from exc
    return operation


def _refuse_sale(game: Game, series: CardSeries, first: int, last: int) -> None:
    """Raise the Conflict that names why cards first..last cannot be sold in `game`, if one is found."""
    in_range = Card.objects.filter(series=series, serial__gte=first, serial__lte=last)
    taken = sorted(
        SoldCard.objects.filter(card__in=in_range.values("pk")).values_list("card__serial", flat=True)
    )
    if taken:
        shown = ", ".join(f"{a}–{b}" if a != b else str(a) for a, b in contiguous_ranges(taken))
        raise Conflict(
            _("Cards %(shown)s of series %(code)s are already sold.") % {"shown": shown, "code": series.code},
            code="already_sold",
            serials=taken,
        )
    repeated = in_range.order_by().values("key").annotate(n=Count("pk")).filter(n__gt=1)
    on_sale = SoldCard.objects.filter(game=game, card_key__in=in_range.values("key"))
    if repeated.exists() or on_sale.exists():
        raise Conflict(
            _("Two cards with the same numbers cannot be on sale in one game."), code="duplicate_numbers"
        )


def _column(model: type[Model], name: str) -> str:
    field = model._meta.get_field(name)
    assert isinstance(field, Field)  # a concrete column, not a relation's reverse side
    return connection.ops.quote_name(field.column)


def _insert_sold_cards(operation: SaleOperation, first: int, last: int) -> int:
    """INSERT ... SELECT the range's cards as sold (PostgreSQL and SQLite alike); returns the rows written."""
    into = ", ".join(_column(SoldCard, name) for name in ("game", "card", "card_key", "sale"))
    id_, key, series, serial = (_column(Card, name) for name in ("id", "key", "series", "serial"))
    # Identifiers come from the models' metadata; every value is a parameter.
    sql = (
        f"INSERT INTO {connection.ops.quote_name(SoldCard._meta.db_table)} ({into}) "  # noqa: S608
        f"SELECT %s, {id_}, {key}, %s FROM {connection.ops.quote_name(Card._meta.db_table)} "
        f"WHERE {series} = %s AND {serial} BETWEEN %s AND %s"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [operation.game_id, operation.pk, operation.series_id, first, last])
        return int(cursor.rowcount)


def return_range(
    *,
    game: Game,
    series: CardSeries,
    first: int,
    last: int,
    actor: User,
    idempotency_key: str | None = None,
) -> SaleOperation:
    _check_range(series, first, last)
    with transaction.atomic():
        game = _lock_on_sale(game, series, gettext_noop("returned"))
        replay = _replay(game, idempotency_key, SaleKind.RETURN, series, first, last)
        if replay:
            return replay
        sold = SoldCard.objects.filter(
            game=game, card__series=series, card__serial__gte=first, card__serial__lte=last
        )
        count = sold.count()
        expected = last - first + 1
        if count != expected:
            unsold = sorted(set(range(first, last + 1)) - set(sold.values_list("card__serial", flat=True)))
            shown = ", ".join(f"{a}–{b}" if a != b else str(a) for a, b in contiguous_ranges(unsold))
            raise Conflict(
                _("Cards %(shown)s of series %(code)s were not sold in game %(number)s: nothing returned.")
                % {"shown": shown, "code": series.code, "number": game.number},
                code="not_sold",
                serials=unsold,
            )
        amount = series.face_value * count
        shift, posted = _post_to_drawer(game, SaleKind.RETURN, amount, actor, idempotency_key)
        operation = SaleOperation.objects.create(
            game=game,
            series=series,
            kind=SaleKind.RETURN,
            first_serial=first,
            last_serial=last,
            cards=count,
            amount=amount,
            cashier=actor,
            created_at=timezone.now(),
            idempotency_key=idempotency_key or None,
            shift=shift,
            ledger_tx=posted,
        )
        sold.delete()
        sale = _sale(operation, game)
        record(game, actor, EventType.SALES_RETURNED, sale, SalesChanged(**step(game), **sale))
    return operation


def _sale(operation: SaleOperation, game: Game) -> Sale:
    """The operation and the game's sales after it."""
    return Sale(
        series=operation.series.code,
        first=operation.first_serial,
        last=operation.last_serial,
        cards=operation.cards,
        amount=operation.amount,
        **sales_totals(game),
    )
