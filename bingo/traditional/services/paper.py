"""Paper cards (TB-21…TB-24, R-04, R-05): a series imported from the printer's or the authority's file, sheets
printed in the hall and tickets printed at the table (each registered to its game), the public check a
card's QR code opens, and the paper stock of each series (received, in stock, issued, returned, destroyed).
"""

from __future__ import annotations

import hashlib
import hmac
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.urls import reverse
from django.utils import formats, timezone
from django.utils.translation import gettext as _

from bingo import cardgen
from bingo.cardgen import GeneratedSeries
from bingo.cards import CARDS_PER_STRIP, CardGrid
from bingo.traditional import cardimport, cardprint
from bingo.traditional.models import (
    Card,
    CardSeries,
    Game,
    GameState,
    PrintedCards,
    PrintMedium,
    SaleOperation,
    SoldCard,
)
from bingo.traditional.paperstock import first_run, runs, sellable, subtract
from bingo.traditional.services import sales, stock
from bingo.traditional.services.locks import lock_game, lock_series
from bingo.traditional.services.series import IMPORTED, MAX_STRIPS, _insert_cards
from halls import i18n
from halls.cashier.models import Till
from halls.cashier.printing.document import Document, Field, Rule
from halls.cashier.services.printing import PrintResult, print_document
from halls.errors import Conflict, InvalidInput, NotFound
from halls.models import Venue
from halls.services import audit

# --- import ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ReportLine:
    """One problem of an import, translated: the file's line, the card's serial (None: not one card)."""

    line: int
    serial: int | None
    code: str
    message: str


def translate(problem: cardimport.Problem) -> ReportLine:
    return ReportLine(
        problem.line, problem.serial, problem.code, _(cardimport.MESSAGES[problem.code]) % problem.params
    )


def check_file(data: bytes) -> tuple[cardimport.ReadSeries, list[ReportLine]]:
    """The file read and judged, nothing written: what the import page shows before and after."""
    read = cardimport.read_series(data)
    return read, [translate(p) for p in read.problems]


def import_series(
    *, venue: Venue, code: str, face_value: Decimal, data: bytes, actor: User, reference: str = ""
) -> CardSeries:
    """Store a pre-printed series from its file (bingo.traditional.cardimport's format), all of it or nothing.

    Refused with ``bad_cards`` (400) and the report of every problem (``details.problems``: line, serial,
    code, message; ``details.bad_serials``) when any card or strip is wrong. The series' paper is recorded
    as received (its stock), with the file's SHA-256 in the audit entry.
    """
    if face_value <= 0:
        raise InvalidInput(_("The face value of a card must be positive."), code="bad_face_value")
    read, report = check_file(data)
    if not read.ok:
        raise InvalidInput(
            _("Problems found: %(count)s (cards %(serials)s). Nothing was imported.")
            % {"count": len(report), "serials": ", ".join(map(str, read.bad_serials)) or "—"},
            code="bad_cards",
            problems=[r.__dict__ for r in report],
            bad_serials=read.bad_serials,
        )
    strips = len(read.serials) // CARDS_PER_STRIP
    if strips > MAX_STRIPS:  # cardimport.MAX_CARDS keeps this unreachable; the series' own limit still rules
        raise InvalidInput(
            _("A series holds at most %(max)s cards.") % {"max": MAX_STRIPS * 6}, code="bad_strips"
        )
    # The same rules once more, by the generator's own check of whole strips: nothing invalid is ever stored.
    broken = cardgen.strip_problems(read.grids.reshape(strips, CARDS_PER_STRIP, *read.grids.shape[1:]))
    if broken:
        raise AssertionError("an imported series passed its checks but breaks: " + "; ".join(broken))
    digest = hashlib.sha256(data).hexdigest()
    now = timezone.now()
    try:
        with transaction.atomic():
            series = CardSeries.objects.create(
                venue=venue,
                code=code,
                face_value=face_value,
                strips=strips,
                seed="",
                generator=IMPORTED,
                rederived_strips=[],
                created_at=now,
                created_by=actor,
            )
            _insert_cards(series, GeneratedSeries(read.grids, ()), read.codes)
            # Its paper, received with the file: serials 1..N (the series is new: no one else sees it yet).
            stock.record_new(series, actor, note=" · ".join(filter(None, [reference, digest[:16]])))
            audit.record(
                venue_id=venue.pk,
                actor=actor,
                action="series.imported",
                obj=series,
                data={
                    "code": code,
                    "face_value": face_value,
                    "strips": strips,
                    "file_sha256": digest,
                    "reference": reference,
                },
            )
    except IntegrityError as exc:
        raise Conflict(
            _("Venue %(name)s already has a series %(code)s.") % {"name": venue.name, "code": code},
            code="series_exists",
        ) from exc
    return series


# --- printing -------------------------------------------------------------------------------------------


def check_url(base_url: str, card: Card) -> str:
    """The public URL a card's QR code holds: it answers the card's check (`check_card`)."""
    path = reverse("bingo:card-check", args=[card.series_id, card.serial, card.security_code])
    return base_url.rstrip("/") + path


def _card_texts(series: CardSeries, card: Card) -> tuple[str, str]:
    title = _("Series %(code)s · No. %(serial)s") % {"code": series.code, "serial": card.serial}
    details = _("%(value)s · %(count)s cards in the series · Code %(security)s") % {
        "value": i18n.amount(series.face_value, series.venue.currency),
        "count": series.card_count,
        "security": card.security_code,
    }
    return title, details


def _game_for_print(game: Game, series: CardSeries) -> None:
    if game.room.venue_id != series.venue_id:
        raise NotFound(_("No series %(code)s in this venue.") % {"code": series.code}, code="unknown_series")
    if game.state in (GameState.CLOSED, GameState.VOID):
        raise Conflict(
            _("Game %(number)s is over: no card is printed for it.") % {"number": game.number},
            code="game_not_open",
        )


def print_sheets(
    *, series: CardSeries, game: Game, first: int, last: int, actor: User, base_url: str
) -> tuple[PrintedCards, bytes]:
    """Print cards first..last of a series for a game as a PDF of strips (TB-22), registered to the game."""
    if not 1 <= first <= last <= series.card_count:
        raise InvalidInput(
            _("Cards %(first)s–%(last)s are not all in series %(code)s (serials 1–%(card_count)s).")
            % {"first": first, "last": last, "code": series.code, "card_count": series.card_count},
            code="range_not_in_series",
        )
    _game_for_print(game, series)
    stock.refuse_blocked(series, game, first, last)
    cards = list(Card.objects.filter(series=series, serial__gte=first, serial__lte=last).order_by("serial"))
    printed = [
        cardprint.PrintCard(*_card_texts(series, card), card.grid, check_url(base_url, card))
        for card in cards
    ]
    title = _("%(venue)s · %(room)s · game %(number)s · series %(code)s, cards %(first)s–%(last)s") % {
        "venue": series.venue.name,
        "room": game.room.name,
        "number": game.number,
        "code": series.code,
        "first": first,
        "last": last,
    }
    footer = _(
        "Valid for game %(number)s only. Printed %(when)s by %(who)s; check a card with its QR code."
    ) % {
        "number": game.number,
        "when": formats.date_format(timezone.localtime(), "SHORT_DATETIME_FORMAT"),
        "who": actor.get_username(),
    }
    pdf = cardprint.render(printed, title=title, footer=footer)
    with transaction.atomic():
        row = _register(game, series, first, last, PrintMedium.HALL, actor, hashlib.sha256(pdf).hexdigest())
    return row, pdf


def _register(
    game: Game,
    series: CardSeries,
    first: int,
    last: int,
    medium: str,
    actor: User,
    digest: str,
    sale: SaleOperation | None = None,
) -> PrintedCards:
    # The game first, as every writer of it does: the row's foreign key to the game is checked at COMMIT
    # (deferred), after this transaction took the venue's audit chain, while a sale holding the game waits
    # for that chain (a deadlock between a till's sale and another's print of the same game).
    lock_game(game.pk)
    row = PrintedCards.objects.create(
        game=game,
        series=series,
        first_serial=first,
        last_serial=last,
        cards=last - first + 1,
        medium=medium,
        sale=sale,
        sha256=digest,
        printed_by=actor,
        printed_at=timezone.now(),
    )
    audit.record(
        venue_id=series.venue_id,
        actor=actor,
        action="paper.printed",
        obj=row,
        data={
            "game": game.pk,
            "series": series.code,
            "first": first,
            "last": last,
            "medium": medium,
            "sha256": digest,
        },
    )
    return row


def next_unsold(series: CardSeries, count: int, game: Game) -> int:
    """The first serial of the lowest run of `count` cards of the series that no game has sold and whose
    paper `game` may use (not destroyed, not issued to another game). Under the series' lock, so two tills
    printing from it at once get different cards."""
    sold = SoldCard.objects.filter(card__series=series).values_list("card__serial", flat=True)
    free = subtract(sellable(stock.spans_of(series), series.card_count, game.pk), runs(sold))
    first = first_run(free, count)
    if first is not None:
        return first
    raise Conflict(
        _("Series %(code)s has no %(count)s unsold cards in a row.") % {"code": series.code, "count": count},
        code="no_cards_left",
    )


def _ticket(
    series: CardSeries, game: Game, cards: list[Card], sale: SaleOperation, base_url: str
) -> Document:
    lines: list[Any] = [
        Field(_("Game"), f"{game.room.name} · {game.number}"),
        Field(_("Series"), series.code),
        Field(_("Cards in the series"), str(series.card_count)),
        Field(_("Face value"), i18n.amount(series.face_value, series.venue.currency)),
    ]
    for card in cards:
        lines.append(Rule())
        lines.append(
            Field(
                _("Card %(serial)s") % {"serial": card.serial},
                _("Code %(code)s") % {"code": card.security_code},
            )
        )
        for row in card.grid:
            # Two characters a cell and one space between (a slip's text collapses runs of spaces).
            lines.append(ticket_row(row))
    lines.append(Rule())
    return Document(
        venue=series.venue.name,
        title=_("Bingo cards"),
        kind="cards",
        lines=tuple(lines),
        amount=Field(_("Total"), i18n.amount(sale.amount, series.venue.currency)),
        qr=check_url(base_url, cards[0]),
        footer=(_("Valid for game %(number)s only.") % {"number": game.number},),
    )


def ticket_row(row: list[int | None]) -> str:
    """A card's row on a thermal ticket: "07 15 20 -- -- -- -- 77 82"."""
    return " ".join(f"{n:02d}" if n else "--" for n in row)


@dataclass(frozen=True)
class TablePrint:
    sale: SaleOperation
    register: PrintedCards
    result: PrintResult


def print_at_table(
    *,
    game: Game,
    series: CardSeries,
    count: int,
    actor: User,
    till: Till,
    base_url: str,
    idempotency_key: str | None = None,
) -> TablePrint:
    """Sell a player's `count` cards (the next unsold of the series) and print them at once as a ticket at
    the till's ESC/POS printer (TB-23), registered to the game. A retry with the same key prints again the
    same cards (a second register row: every print is recorded)."""
    if not 1 <= count <= 60:
        raise InvalidInput(
            _("A player buys 1 to 60 cards at a time, not %(count)s.") % {"count": count}, code="bad_count"
        )
    _game_for_print(game, series)
    with transaction.atomic():
        previous = (
            SaleOperation.objects.filter(game=game, idempotency_key=idempotency_key).first()
            if idempotency_key
            else None
        )
        if previous is None:
            # The game, then the series (the lock order sell_range keeps): the next unsold cards are this
            # till's until it commits.
            lock_game(game.pk)
            lock_series(series.pk)
        first = previous.first_serial if previous else next_unsold(series, count, game)
        sale = sales.sell_range(
            game=game,
            series=series,
            first=first,
            last=first + count - 1,
            actor=actor,
            idempotency_key=idempotency_key,
        )
    cards = list(
        Card.objects.filter(series=series, serial__gte=sale.first_serial, serial__lte=sale.last_serial)
    )
    document = _ticket(series, game, cards, sale, base_url)
    result = print_document(till=till, document=document, actor=actor, subject=sale)
    with transaction.atomic():
        row = _register(
            game, series, sale.first_serial, sale.last_serial, PrintMedium.TABLE, actor, result.sha256, sale
        )
    return TablePrint(sale, row, result)


# --- the public check -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class CardCheck:
    venue: str
    series: str
    serial: int
    face_value: Decimal
    series_cards: int
    grid: list[list[int | None]]
    game: Game | None  # the game it was sold in, else the last it was printed for
    sold: bool


def check_card(*, series_id: int, serial: int, code: str) -> CardCheck:
    """What a card's QR code answers: its numbers, the game it belongs to and whether it was sold there.

    Needs the card's security code (printed on it): 404 ``unknown_card`` for any wrong part, the same answer
    for a card that does not exist, so the URL cannot be guessed to read master cards."""
    card = Card.objects.filter(series_id=series_id, serial=serial).select_related("series__venue").first()
    if card is None or not hmac.compare_digest(card.security_code.upper(), code.upper()):
        raise NotFound(_("No such card."), code="unknown_card")
    sale = SoldCard.objects.filter(card=card).select_related("game__room").first()
    game = sale.game if sale else None
    if game is None:
        printed = (
            PrintedCards.objects.filter(series=card.series, first_serial__lte=serial, last_serial__gte=serial)
            .select_related("game__room")
            .order_by("-pk")
            .first()
        )
        game = printed.game if printed else None
    grid = CardGrid.from_json(card.grid).to_json()
    return CardCheck(
        venue=card.series.venue.name,
        series=card.series.code,
        serial=serial,
        face_value=card.series.face_value,
        series_cards=card.series.card_count,
        grid=grid,
        game=game,
        sold=sale is not None,
    )
