"""What the public page of a draw shows (bingo.draws.views): its record, the balls its room drew, the sales
as the standalone verifier reads them, the server's own verification and the command line to repeat it.

Read-only: the room's Reader (bingo.draws.rooms, registered by each wing) gives the balls and the sales; this
module decides nothing and writes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.utils.translation import gettext as _

from bingo import verifiable
from bingo.draws import rooms, services

VERIFIER = "scripts/verify_draw.py"


@dataclass(frozen=True)
class DrawPage:
    """The draw's public page: its record and, once revealed, its verification."""

    room: str
    game_ref: str
    title: str
    record: services.DrawRecord
    balls: list[int]
    golden: int | None  # the golden ball drawn at the close of sales (electronic bingo), or None
    finished: bool
    verification: verifiable.Verification | None  # None before the reveal
    verdict: str  # the verification in the reader's language ("" before the reveal)
    sales_file: str  # the sales JSON's file name
    command: str  # the verifier's command line ("" before the reveal)


def sales(room: str, game_ref: str, reader: rooms.Reader, record: services.DrawRecord) -> verifiable.Sales:
    """The game's sales as its room holds them now (SalesError if they have no canonical form)."""
    sold = tuple(verifiable.SoldCard(str(s), tuple(n)) for s, n in reader.sales(game_ref))
    return verifiable.Sales(game=record.game, max_ball=record.max_ball, cards=sold)


def sales_file_name(room: str, game_ref: str) -> str:
    return f"ventas-{room}-{game_ref}.json"


def verdict(result: verifiable.Verification) -> str:
    """The verification said in the reader's language (bingo.verifiable's reasons and facts)."""
    texts = {
        "verified": _(
            "Verified: the seed matches its commitment and all %(count)s balls drawn follow from it and "
            "from the sales."
        ),
        "commitment_mismatch": _(
            "The seed does not match the commitment: its SHA-256 is %(computed)s, the commitment published "
            "was %(commitment)s."
        ),
        "sales_digest_mismatch": _(
            "The sales digest differs: the sales held now give %(computed)s, the digest fixed at the close "
            "of sales was %(given)s."
        ),
        "ball_differs": _("Ball %(position)s differs: %(drawn)s was drawn, the seed gives %(expected)s."),
        "golden_differs": _(
            "The golden ball differs: %(drawn)s was drawn at the close of sales, the seed gives %(expected)s."
        ),
        "too_many_balls": _(
            "%(count)s balls drawn, but a game of balls 1-%(max_ball)s has only %(max_ball)s."
        ),
    }
    said = texts[result.reason] % dict(result.facts)
    if result.verified and "golden" in result.facts:
        said += " " + _("The golden ball %(golden)s follows from them too.") % dict(result.facts)
    return said


def page(room: str, game_ref: str) -> DrawPage | None:
    """The draw's page, or None when the room has no such committed game."""
    reader = rooms.reader(room)
    record = services.record(room=room, game_ref=game_ref)
    if reader is None or record is None:
        return None
    balls = list(reader.balls(game_ref))
    golden = reader.golden(game_ref)
    result: verifiable.Verification | None = None
    command = ""
    if record.seed:
        try:
            held = sales(room, game_ref, reader, record)
        except verifiable.SalesError:
            held = None  # checked below without them: the digest fixed at the close still decides the balls
        result = services.check(room=room, game_ref=game_ref, drawn=balls, sales=held, golden=golden)
        drawn = ",".join(map(str, balls)) or '""'
        command = (
            f"python3 {VERIFIER} --seed {record.seed} --commitment {record.commitment} "
            f"--sales {sales_file_name(room, game_ref)} --sales-digest {record.sales_digest} "
            f"--balls {drawn}" + (f" --golden {golden}" if golden is not None else "")
        )
    return DrawPage(
        room=room,
        game_ref=game_ref,
        title=reader.title(game_ref),
        record=record,
        balls=balls,
        golden=golden,
        finished=reader.finished(game_ref),
        verification=result,
        verdict=verdict(result) if result is not None else "",
        sales_file=sales_file_name(room, game_ref),
        command=command,
    )


def sales_json(room: str, game_ref: str) -> dict[str, Any] | None:
    """The sales in the verifier's JSON shape (bingo-sales/v1), once fixed at the close of sales."""
    reader = rooms.reader(room)
    record = services.record(room=room, game_ref=game_ref)
    if reader is None or record is None or not record.sales_digest:
        return None
    return verifiable.sales_to_json(sales(room, game_ref, reader, record))
