"""Service tests on PostgreSQL: sales, claims, splits, recall and the audit chain (spec §2)."""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal

import pytest

from bingo.cards import CardGrid, pack_numbers
from bingo.traditional.models import (
    Ball,
    Card,
    CardSeries,
    Claim,
    Game,
    GameState,
    PrizeResult,
    SaleOperation,
    SoldCard,
)
from bingo.traditional.services import claims, draw, games, readmodels, sales
from bingo.traditional.services import series as series_services
from bingo.traditional.services.readmodels import game_recall
from halls.errors import Conflict, InvalidInput
from halls.models import AuditEntry
from halls.services import audit, sessions
from tests.bingo.traditional.game_support import grid, top_row
from tests.conftest import ALL_BALLS, SEED
from tests.tampering import as_db_owner


def playing(game: Game, series: CardSeries, actor, cashier, first: int = 1, last: int = 60) -> Game:
    game = games.open_sales(game=game, actor=actor)
    sales.sell_range(game=game, series=series, first=first, last=last, actor=cashier)
    game = games.close_sales(game=game, actor=actor)
    return games.start_draw(game=game, actor=actor)


def enter(game: Game, numbers: Sequence[int], actor) -> None:
    for number in numbers:
        draw.enter_ball(game=game, number=number, actor=actor)


def cards_sharing_a_row_number(series: CardSeries, how_many: int) -> tuple[int, list[tuple[int, int]]]:
    """A number x and `how_many` (serial, row) pairs whose row holds x, from different strips."""
    for x in range(1, 91):
        found: list[tuple[int, int]] = []
        strips: set[int] = set()
        for serial in range(1, series.card_count + 1):
            strip = (serial - 1) // 6
            rows = grid(series, serial).row_numbers
            for r, row in enumerate(rows):
                if x in row and strip not in strips:
                    found.append((serial, r))
                    strips.add(strip)
        if len(found) >= how_many:
            return x, found[:how_many]
    raise AssertionError("no shared number")


def test_session_refuses_a_missing_or_repeated_inspection_ball(room, caller):
    balls = [*ALL_BALLS[:-1], 5]
    with pytest.raises(InvalidInput) as refused:
        sessions.open_session(
            room=room, actor=caller, blower_ok=True, reserve_ok=True, reader_ok=True, inspection_balls=balls
        )
    assert "missing: [90]" in refused.value.message and "repeated: [5]" in refused.value.message
    with pytest.raises(InvalidInput, match="reserve device"):
        sessions.open_session(
            room=room,
            actor=caller,
            blower_ok=True,
            reserve_ok=False,
            reader_ok=True,
            inspection_balls=ALL_BALLS,
        )
    assert not room.sessions.exists()


def test_session_cannot_close_while_a_game_is_live(manual_game, session, caller):
    with pytest.raises(Conflict, match="game 1 is still scheduled"):
        sessions.close_session(session=session, actor=caller)
    games.void_game(game=manual_game, actor=caller, reason="blower fault")
    assert sessions.close_session(session=session, actor=caller).closed_at is not None


def test_wrong_transition_is_a_conflict_naming_the_state(manual_game, caller):
    with pytest.raises(Conflict) as refused:
        games.close_sales(game=manual_game, actor=caller)
    assert refused.value.code == "wrong_state"
    assert "scheduled" in refused.value.message
    manual_game.refresh_from_db()
    assert manual_game.state == GameState.SCHEDULED


def test_sell_return_and_refuse_ranges(manual_game, card_series, caller, cashier):
    game = games.open_sales(game=manual_game, actor=caller)
    sales.sell_range(game=game, series=card_series, first=1, last=10, actor=cashier)
    with pytest.raises(Conflict, match="Cards 5–10 of series A are already sold"):
        sales.sell_range(game=game, series=card_series, first=5, last=12, actor=cashier)
    with pytest.raises(InvalidInput, match="serials 1–60"):
        sales.sell_range(game=game, series=card_series, first=55, last=61, actor=cashier)
    with pytest.raises(Conflict, match="were not sold"):
        sales.return_range(game=game, series=card_series, first=9, last=11, actor=cashier)
    sales.return_range(game=game, series=card_series, first=9, last=10, actor=cashier)
    sales.sell_range(game=game, series=card_series, first=21, last=30, actor=cashier)
    game = games.close_sales(game=game, actor=caller)
    assert game.cards_sold == 18
    assert game.announcement["series"] == [
        {"series": "A", "face_value": "2.00", "cards": 18, "ranges": [[1, 8], [21, 30]]}
    ]
    assert "del número 1 al 8 y del número 21 al 30" in game.announcement["formula"]


def test_sale_retry_with_the_same_key_is_a_no_op(manual_game, card_series, caller, cashier):
    game = games.open_sales(game=manual_game, actor=caller)
    first = sales.sell_range(
        game=game, series=card_series, first=1, last=6, actor=cashier, idempotency_key="t1-42"
    )
    again = sales.sell_range(
        game=game, series=card_series, first=1, last=6, actor=cashier, idempotency_key="t1-42"
    )
    assert again.pk == first.pk
    assert SoldCard.objects.filter(game=game).count() == 6
    with pytest.raises(Conflict, match="used for another operation"):
        sales.sell_range(
            game=game, series=card_series, first=7, last=8, actor=cashier, idempotency_key="t1-42"
        )


def test_two_cards_with_the_same_numbers_are_never_on_sale_in_one_game(
    manual_game, card_series, operator, caller, cashier
):
    twin = series_services.create_series(
        venue=card_series.venue, code="B", face_value=Decimal("2.00"), strips=1, actor=operator, seed=SEED
    )
    game = games.open_sales(game=manual_game, actor=caller)
    sales.sell_range(game=game, series=card_series, first=1, last=1, actor=cashier)
    with pytest.raises(Conflict) as refused:
        sales.sell_range(game=game, series=twin, first=1, last=1, actor=cashier)
    assert refused.value.code == "duplicate_numbers"
    assert SaleOperation.objects.filter(game=game).count() == 1


def test_co_winners_at_one_ball_share_the_line_to_the_cent(manual_game, card_series, caller, cashier):
    x, winners = cards_sharing_a_row_number(card_series, 3)
    game = games.open_sales(game=manual_game, actor=caller)
    serials = [serial for serial, _ in winners]
    extra = next(s for s in range(1, 61) if s not in serials)
    for serial in [*serials, extra]:
        sales.sell_range(game=game, series=card_series, first=serial, last=serial, actor=cashier)
    game = games.start_draw(game=games.close_sales(game=game, actor=caller), actor=caller)
    assert game.line_prize == Decimal("0.80")  # 10 % of 4 cards × 2.00 €
    rows = {serial: sorted(n for n in grid(card_series, serial).rows[r] if n) for serial, r in winners}
    enter(game, [*sorted(set().union(*rows.values()) - {x}), x], caller)
    for serial in rows:
        claim = claims.file_claim(game=game, kind="line", series_code="A", serial=serial, actor=caller)
        assert claim.valid, claim.reason
        assert claim.bound_ordinal == game.balls.count()
    result = claims.confirm_claims(game=game, kind="line", actor=caller)
    assert (result.winners, result.share, result.remainder) == (3, Decimal("0.26"), Decimal("0.02"))
    assert sorted(a.amount for a in result.awards.all()) == [Decimal("0.26")] * 3
    assert "rounding residue" in result.remainder_to


def test_a_line_after_the_line_was_won_is_refused_and_recorded(manual_game, card_series, caller, cashier):
    game = playing(manual_game, card_series, caller, cashier)
    first, second = top_row(card_series, 1), top_row(card_series, 7)
    enter(game, first, caller)
    assert claims.file_claim(game=game, kind="line", series_code="A", serial=1, actor=caller).valid
    claims.confirm_claims(game=game, kind="line", actor=caller)
    enter(game, [n for n in second if n not in first], caller)
    late = claims.file_claim(game=game, kind="line", series_code="A", serial=7, actor=caller)
    assert not late.valid
    assert late.refusal == "line_already_won"
    assert f"ball {len(first)}" in late.reason
    game.refresh_from_db()
    assert game.state == GameState.DRAWING


def test_bingo_claimed_late_is_valid_and_refusals_are_recorded(manual_game, card_series, caller, cashier):
    game = playing(manual_game, card_series, caller, cashier, first=1, last=30)
    card = grid(card_series, 2)
    enter(game, sorted(card.numbers), caller)
    extra = next(n for n in range(1, 91) if n not in card.numbers)
    enter(game, [extra], caller)  # the Bingo is called one ball late
    unsold = claims.file_claim(game=game, kind="bingo", series_code="A", serial=45, actor=caller)
    assert (unsold.valid, unsold.refusal) == (False, "not_sold")
    incomplete = claims.file_claim(game=game, kind="bingo", series_code="A", serial=3, actor=caller)
    assert incomplete.refusal == "not_complete" and "not drawn" in incomplete.reason
    bingo = claims.file_claim(game=game, kind="bingo", series_code="A", serial=2, actor=caller)
    assert bingo.valid and bingo.bound_ordinal == 16 and bingo.completed_at == 15
    claims.confirm_claims(game=game, kind="bingo", actor=caller)
    game.refresh_from_db()
    assert game.state == GameState.CLOSED
    assert PrizeResult.objects.get(game=game, kind="bingo").amount == game.bingo_prize
    claims_before = Claim.objects.count()
    with pytest.raises(Conflict) as refused:
        claims.file_claim(game=game, kind="bingo", series_code="A", serial=2, actor=caller)
    assert refused.value.code == "game_closed"
    assert Claim.objects.count() == claims_before


def test_the_caller_sees_a_winning_card_nobody_claimed(manual_game, card_series, caller, cashier):
    game = playing(manual_game, card_series, caller, cashier)
    enter(game, top_row(card_series, 4), caller)
    unclaimed = readmodels.unclaimed_winners(game)
    assert {"series": "A", "serial": 4, "since_ball": 5} in unclaimed["line"]
    claims.file_claim(game=game, kind="line", series_code="A", serial=4, actor=caller)
    assert all(row["serial"] != 4 for row in readmodels.unclaimed_winners(game)["line"])


def test_ball_rules(manual_game, card_series, caller, cashier):
    game = playing(manual_game, card_series, caller, cashier)
    with pytest.raises(InvalidInput, match="out of range"):
        draw.enter_ball(game=game, number=91, actor=caller)
    first = draw.enter_ball(game=game, number=17, actor=caller, ordinal=1)
    assert draw.enter_ball(game=game, number=17, actor=caller, ordinal=1).pk == first.pk  # a retry
    with pytest.raises(Conflict, match="already drawn, at ordinal 1"):
        draw.enter_ball(game=game, number=17, actor=caller)
    with pytest.raises(Conflict, match="next ball is ordinal 2"):
        draw.enter_ball(game=game, number=18, actor=caller, ordinal=5)
    assert Ball.objects.filter(game=game).count() == 1


def test_recall_and_the_audit_chain(manual_game, card_series, caller, cashier):
    game = playing(manual_game, card_series, caller, cashier)
    card = grid(card_series, 9)
    enter(game, sorted(card.numbers), caller)
    claims.file_claim(game=game, kind="bingo", series_code="A", serial=9, actor=caller)
    claims.confirm_claims(game=game, kind="bingo", actor=caller)
    recall = game_recall(Game.objects.get(pk=game.pk))
    assert [b["ordinal"] for b in recall["balls"]] == list(range(1, 16))
    assert recall["sale_operations"][0]["first"] == 1 and recall["sale_operations"][0]["last"] == 60
    assert recall["claims"][0]["valid"] is True
    assert recall["prizes"][0]["winners"][0]["serial"] == 9
    venue_id = game.room.venue_id
    check = audit.verify_chain(venue_id)
    assert check.ok and check.entries == AuditEntry.objects.filter(venue_id=venue_id).count()
    tampered = AuditEntry.objects.filter(venue_id=venue_id, action="ball.drawn").earliest("pk")
    with as_db_owner(AuditEntry):  # the trigger refuses the edit otherwise
        AuditEntry.objects.filter(pk=tampered.pk).update(data={**tampered.data, "ball": 1})
    assert audit.verify_chain(venue_id).first_bad_id == tampered.pk


def test_a_series_stores_each_cards_packed_numbers(card_series):
    stored = list(Card.objects.filter(series=card_series).order_by("serial"))
    assert len(stored) == card_series.card_count
    for card in stored:
        assert bytes(card.numbers) == pack_numbers(CardGrid.from_json(card.grid))
