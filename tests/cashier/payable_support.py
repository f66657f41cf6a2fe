"""What the payables tests share: a cashier on shift with cash in the drawer, a traditional game whose Line
is shared by three cards and whose Bingo one of them wins, and the ledger's balances."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from django.contrib.auth.models import User

from bingo.traditional.models import CardSeries, Game
from bingo.traditional.services import claims, games, sales
from halls.cashier.ledger import Kind
from halls.cashier.models import Account, Means, Payable, Shift, ShiftState, Till
from halls.cashier.services import ledger as books
from halls.cashier.services import shifts
from halls.models import Role, StaffRole, Venue
from tests.bingo.traditional.game_support import grid
from tests.bingo.traditional.test_game_services import cards_sharing_a_row_number, enter

D = Decimal


def on_shift(user: User, venue: Venue, float_amount: str = "0") -> Shift:
    """The user's open shift in the venue: the one already open, or a new one with this float."""
    shift = Shift.objects.filter(venue=venue, cashier=user, state=ShiftState.OPEN).first()
    if shift is not None:
        return shift
    till, _ = Till.objects.get_or_create(venue=venue, name=f"Caja {user.get_username()}")
    return shifts.open_shift(till=till, cashier=user, float_amount=D(float_amount), actor=user)


def new_cashier(venue: Venue, name: str) -> User:
    user = User.objects.create_user(username=name, password="pw-" + name)
    StaffRole.objects.create(user=user, venue=venue, role=Role.CASHIER)
    return user


def cash(shift: Shift) -> Decimal:
    return Account.objects.get(pk=books.drawer(shift, Means.CASH).pk).balance


def balance(venue: Venue, kind: Kind) -> Decimal:
    return Account.objects.get(pk=books.venue_account(venue.pk, kind).pk).balance


def line_and_bingo(game: Game, series: CardSeries, caller: Any, cashier: Any) -> dict[str, Any]:
    """Four cards sold (8.00 €: a Line of 0.80 and a Bingo of 4.00); three share the Line at one ball
    (0.26 each, 0.02 left), then the first of them completes its card and wins the Bingo alone."""
    x, winners = cards_sharing_a_row_number(series, 3)
    serials = [serial for serial, _ in winners]
    extra = next(s for s in range(1, series.card_count + 1) if s not in serials)
    game = games.open_sales(game=game, actor=caller)
    for serial in [*serials, extra]:
        sales.sell_range(game=game, series=series, first=serial, last=serial, actor=cashier)
    game = games.start_draw(game=games.close_sales(game=game, actor=caller), actor=caller)
    rows = {serial: sorted(n for n in grid(series, serial).rows[r] if n) for serial, r in winners}
    enter(game, [*sorted(set().union(*rows.values()) - {x}), x], caller)
    for serial in serials:
        claims.file_claim(game=game, kind="line", series_code=series.code, serial=serial, actor=caller)
    claims.confirm_claims(game=game, kind="line", actor=caller)
    drawn = set().union(*rows.values())
    enter(game, sorted(grid(series, serials[0]).numbers - drawn), caller)
    claims.file_claim(game=game, kind="bingo", series_code=series.code, serial=serials[0], actor=caller)
    claims.confirm_claims(game=game, kind="bingo", actor=caller)
    game.refresh_from_db()
    return {
        "game": game,
        "line_serials": serials,
        "bingo_serial": serials[0],
        "lines": list(Payable.objects.filter(kind="line").order_by("pk")),
        "bingo": Payable.objects.get(kind="bingo"),
    }
