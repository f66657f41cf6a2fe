"""The paper stock of each series, per range of serials (TB-21…TB-24): received from the printer or the
authority, in stock, issued to a game, returned from it, destroyed. The arithmetic is
bingo.traditional.paperstock's;
here it is read from and written to the database under the series' lock, each movement recorded and audited,
and a sale or a print that would use destroyed paper, or paper issued to another game, is refused."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone
from django.utils.functional import Promise
from django.utils.translation import gettext as _
from django.utils.translation import pgettext_lazy

from bingo.traditional import paperstock
from bingo.traditional.models import CardSeries, Game, GameState, PaperRange, StockMovement, StockState
from bingo.traditional.paperstock import Span
from bingo.traditional.services.locks import lock_series
from halls.errors import Conflict, InvalidInput
from halls.services import audit

# What a range of serials is, as a sentence's part names it ("101–120: returned from game 7").
STATE_TEXT: dict[str, Promise] = {
    paperstock.NOT_RECEIVED: pgettext_lazy("paper serials", "not received"),
    StockState.RECEIVED: pgettext_lazy("paper serials", "received"),
    StockState.IN_STOCK: pgettext_lazy("paper serials", "in stock"),
    StockState.ISSUED: pgettext_lazy("paper serials", "issued"),
    StockState.RETURNED: pgettext_lazy("paper serials", "returned"),
    StockState.DESTROYED: pgettext_lazy("paper serials", "destroyed"),
}


@dataclass(frozen=True)
class Stock:
    """A series' paper as it stands: its ranges (with the games they name) and the cards in each state."""

    series: CardSeries
    spans: tuple[Span, ...]
    games: dict[int, Game]

    @property
    def counts(self) -> dict[str, int]:
        return paperstock.counts(self.spans, self.series.card_count)

    @property
    def recorded(self) -> bool:
        return bool(self.spans)


def _spans(rows: Iterable[PaperRange]) -> tuple[Span, ...]:
    return tuple(Span(r.first_serial, r.last_serial, r.state, r.game_id) for r in rows)


def spans_of(series: CardSeries) -> tuple[Span, ...]:
    return _spans(PaperRange.objects.filter(series=series).order_by("first_serial"))


def _games(spans: Iterable[Span]) -> dict[int, Game]:
    ids = {s.game for s in spans if s.game is not None}
    return {g.pk: g for g in Game.objects.filter(pk__in=ids).select_related("room")} if ids else {}


def stock_of(series: CardSeries) -> Stock:
    spans = spans_of(series)
    return Stock(series, spans, _games(spans))


def stocks_of(series: Sequence[CardSeries]) -> dict[int, Stock]:
    """Every series' stock, in two queries (the paper page)."""
    by_series: dict[int, list[PaperRange]] = {s.pk: [] for s in series}
    for row in PaperRange.objects.filter(series__in=list(series)).order_by("series", "first_serial"):
        by_series[row.series_id].append(row)
    spans = {pk: _spans(rows) for pk, rows in by_series.items()}
    games = _games(s for group in spans.values() for s in group)
    return {s.pk: Stock(s, spans[s.pk], games) for s in series}


def describe(spans: Iterable[Span], games: dict[int, Game]) -> str:
    """Ranges and what they are, as a person reads them: "100: issued to game 7; 121–130: destroyed"."""
    parts = []
    for span in spans:
        what = str(STATE_TEXT[span.state])
        game = games.get(span.game) if span.game is not None else None
        if game is not None and span.state == StockState.ISSUED:
            what = _("issued to game %(number)s") % {"number": game.number}
        elif game is not None and span.state == StockState.RETURNED:
            what = _("returned from game %(number)s") % {"number": game.number}
        parts.append(f"{paperstock.shown([span])}: {what}")
    return "; ".join(parts)


def _named(spans: Sequence[Span]) -> list[dict[str, object]]:
    return [{"first": s.first, "last": s.last, "state": s.state, "game": s.game} for s in spans]


def move_paper(
    *,
    series: CardSeries,
    to_state: str,
    actor: User,
    first: int | None = None,
    last: int | None = None,
    game: Game | None = None,
    note: str = "",
) -> Stock:
    """Move serials first..last (default: the whole series) of a series' paper to `to_state`, or refuse
    changing nothing: 400 ``bad_range``, ``range_not_in_series``, ``bad_stock_state``, ``game_required``;
    409 ``bad_stock_move`` naming every range at fault and what it is (``details.offending``),
    ``several_games`` / ``issued_elsewhere`` (a return), ``game_not_open`` (issuing to a game over or of
    another venue). Each part moved is a StockMovement row; one audit entry names them all."""
    first = 1 if first is None else first
    last = series.card_count if last is None else last
    with transaction.atomic():
        series = lock_series(series.pk)
        if game is not None:  # as it stands now
            game = Game.objects.select_related("room").get(pk=game.pk)
        over = game is not None and game.state in (GameState.CLOSED, GameState.VOID)
        if (
            to_state == StockState.ISSUED
            and game is not None
            and (game.room.venue_id != series.venue_id or over)
        ):
            raise Conflict(
                _("Game %(number)s is not open in this venue.") % {"number": game.number},
                code="game_not_open",
            )
        spans = spans_of(series)
        try:
            moved = paperstock.move(
                spans,
                size=series.card_count,
                first=first,
                last=last,
                to=to_state,
                game=game.pk if game is not None else None,
            )
        except paperstock.Refused as refused:
            raise _refusal(series, refused, first, last, to_state) from None
        now = timezone.now()
        PaperRange.objects.filter(series=series).delete()
        PaperRange.objects.bulk_create(
            PaperRange(
                series=series,
                first_serial=s.first,
                last_serial=s.last,
                state=s.state,
                game_id=s.game,
                updated_at=now,
            )
            for s in moved.spans
        )
        went_to = next(s.game for s in moved.spans if s.first <= first <= s.last)
        StockMovement.objects.bulk_create(
            StockMovement(
                series=series,
                first_serial=piece.first,
                last_serial=piece.last,
                from_state=piece.state,
                to_state=to_state,
                game_id=went_to if to_state == StockState.ISSUED else piece.game,
                note=note,
                actor=actor,
                at=now,
            )
            for piece in moved.pieces
        )
        audit.record(
            venue_id=series.venue_id,
            actor=actor,
            action="paper.received" if to_state == StockState.RECEIVED else "paper.moved",
            obj=series,
            data={
                "first": first,
                "last": last,
                "to": to_state,
                "game": went_to,
                "from": _named(moved.pieces),
                "note": note,
            },
        )
    return Stock(series, moved.spans, _games(moved.spans))


def record_new(series: CardSeries, actor: User, *, note: str = "") -> None:
    """A new series' paper, all of it received (inside the transaction that stores the series, which
    audits it)."""
    now = timezone.now()
    size = series.card_count
    PaperRange.objects.create(
        series=series, first_serial=1, last_serial=size, state=StockState.RECEIVED, updated_at=now
    )
    StockMovement.objects.create(
        series=series,
        first_serial=1,
        last_serial=size,
        from_state=paperstock.NOT_RECEIVED,
        to_state=StockState.RECEIVED,
        note=note[:200],
        actor=actor,
        at=now,
    )


def receive_paper(
    *, series: CardSeries, actor: User, reference: str = "", first: int | None = None, last: int | None = None
) -> Stock:
    """Record serials first..last (default: all) of a series as received; the delivery reference is the
    movement's note. 409 ``bad_stock_move`` for serials already recorded."""
    return move_paper(
        series=series, to_state=StockState.RECEIVED, actor=actor, first=first, last=last, note=reference
    )


def _refusal(series: CardSeries, refused: paperstock.Refused, first: int, last: int, to: str) -> Exception:
    code = refused.code
    if code == "bad_range":
        return InvalidInput(
            _("The range %(first)s–%(last)s runs backwards: give the lower serial first.")
            % {"first": first, "last": last},
            code=code,
        )
    if code == "range_not_in_series":
        return InvalidInput(
            _("Cards %(first)s–%(last)s are not all in series %(code)s (serials 1–%(card_count)s).")
            % {"first": first, "last": last, "code": series.code, "card_count": series.card_count},
            code=code,
        )
    if code == "bad_stock_state":
        return InvalidInput(_("Unknown stock state %(state)s.") % {"state": to}, code=code)
    if code == "game_required":
        return InvalidInput(_("Name the game the paper is issued to."), code=code)
    games = _games(refused.spans)
    named = {"code": series.code, "what": describe(refused.spans, games)}
    details = {"offending": _named(refused.spans), "serials": [[s.first, s.last] for s in refused.spans]}
    if code == "several_games":
        message = _(
            "Series %(code)s: a return takes back the paper of one game at a time (%(what)s). "
            "Nothing was moved."
        )
    elif code == "issued_elsewhere":
        message = _(
            "Series %(code)s: these serials were not issued to that game (%(what)s). Nothing was moved."
        )
    else:
        named["to"] = str(STATE_TEXT[to])
        message = _("Series %(code)s: these serials cannot become %(to)s (%(what)s). Nothing was moved.")
    return Conflict(message % named, code=code, **details)


def refuse_blocked(series: CardSeries, game: Game, first: int, last: int) -> None:
    """409 when serials first..last of a series cannot be sold or printed in `game`
    (bingo.traditional.paperstock.
    blocked): ``paper_destroyed`` or ``paper_issued_elsewhere``, naming the serials (``details.serials``).
    A series whose paper no movement has recorded (generated, never printed) is the hall's to sell."""
    spans = paperstock.blocked(spans_of(series), first, last, game.pk)
    if not spans:
        return
    destroyed = [s for s in spans if s.state == StockState.DESTROYED]
    at_fault = destroyed or list(spans)
    games = _games(at_fault)
    named = {"code": series.code, "shown": paperstock.shown(at_fault), "what": describe(at_fault, games)}
    serials = [[s.first, s.last] for s in at_fault]
    if destroyed:
        raise Conflict(
            _("Cards %(shown)s of series %(code)s: their paper was destroyed.") % named,
            code="paper_destroyed",
            serials=serials,
        )
    raise Conflict(
        _("Cards %(shown)s of series %(code)s are not this game's paper (%(what)s).") % named,
        code="paper_issued_elsewhere",
        serials=serials,
    )
