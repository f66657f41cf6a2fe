"""Prize programs through the real game flow (spec §2.4): funding at the close of sales, the announcement
before the first ball, the award with the verified Bingo, the next step, and refusals that write nothing.

Every game sells cards of 2.00 €, so 60 cards are 120.00 € of sales; balls are entered by hand so the
Bingo comes at a chosen ball (tests/bingo/traditional/program_flow.py).
"""

# The shared fixtures are imported by name (tests/bingo/traditional/program_flow.py): pytest injects them as
# arguments, which ruff reads as redefinitions.
# ruff: noqa: F811

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal
from typing import Any

import pytest

from bingo.traditional.models import GameProgram, GameState, PrizeProgram, PrizeProgramVersion, ProgramAward
from bingo.traditional.programs import terms
from bingo.traditional.services import games
from bingo.traditional.services import programs as svc
from bingo.traditional.services.readmodels import game_summary, screen_snapshot
from halls.errors import Conflict, InvalidInput
from halls.models import AuditEntry
from jackpots.models import ParameterChange
from jackpots.services import pools
from tests.bingo.traditional.program_flow import (  # noqa: F401 - fixtures
    SALES,
    Hall,
    assert_balanced,
    clock,
    game_program,
    hall,
    level,
    meter,
    nothing_written,
    paid,
    state_after,
)

D = Decimal


def activate(hall: Hall, code: str, program_type: str, params: dict[str, object]) -> PrizeProgram:
    return svc.activate_program(
        room=hall.room, code=code, program_type=program_type, params=params, actor=hall.operator
    )


# --- BA-1 Prima ---------------------------------------------------------------------------------------------


def test_prima_is_in_play_the_game_after_its_pool_reaches_30_and_is_won_by_ball_48(hall: Hall, clock) -> None:
    prima = activate(hall, "prima-30", "BA-1", {**SALES, "funding_percent": "25", "amount": "30"})

    first = hall.play(60)  # 25 % of 120.00 €: the pool reaches 30 in this game
    gp = game_program(first, prima)
    assert (gp.in_play, gp.funding, gp.pool_amount) == (False, D("30"), D("30"))
    assert first.announcement["programs"] == []
    assert state_after(gp)["reached"] is True

    second = hall.sell_and_close(60)  # "la primera partida posterior": in play, the pool is 60
    assert second.announcement["programs"] == [
        {
            "code": "prima-30",
            "type": "BA-1",
            "name": "Prima",
            "amount": "30.00",
            "max_ball": 48,
            "colour": None,
            "row": None,
            "slot": None,
        }
    ]
    shown = game_summary(second)["programs"]
    assert [(p["code"], p["amount"], p["max_ball"], p["won"]) for p in shown] == [
        ("prima-30", "30.00", 48, None)
    ]

    (claim,) = hall.bingo(second, at=48)
    gp = game_program(second, prima)
    assert (gp.won, gp.bingo_ordinal, gp.prize, gp.share, gp.remainder, gp.carry) == (
        True,
        48,
        D("30"),
        D("30.00"),
        D("0"),
        D("30"),
    )
    assert ProgramAward.objects.get(game_program=gp).claim == claim
    assert paid(gp).amount == D("30.00")
    assert meter(prima) == D("30")  # 60 - 30
    assert_balanced(prima.pool_id)
    # The pool still holds 30 after the award: the Prima is in play again in the next game.
    assert state_after(gp)["reached"] is True
    summary = game_summary(second)["programs"]
    assert summary[0]["won"] is True
    assert summary[0]["winners"] == [
        {"series": claim.series.code, "serial": claim.serial, "amount": D("30.00")}
    ]
    awarded = AuditEntry.objects.filter(action="programs.awarded").get()
    assert awarded.data["awards"][0]["code"] == "prima-30"


def test_prima_not_won_after_ball_48_stays_in_play_with_the_same_limit(hall: Hall, clock) -> None:
    prima = activate(hall, "prima-50", "BA-1", {**SALES, "funding_percent": "50", "amount": "50"})
    hall.play(60)  # pool 60: reached
    late = hall.play(60, at=49)  # in play, pool 120, Bingo at ball 49: not won (OP-03)
    gp = game_program(late, prima)
    assert (gp.in_play, gp.max_ball, gp.won) == (True, 48, False)
    assert not ProgramAward.objects.filter(game_program=gp).exists()
    assert meter(prima) == D("120")

    again = hall.sell_and_close(60)
    gp = game_program(again, prima)
    assert (gp.in_play, gp.max_ball, gp.amount, gp.pool_amount) == (True, 48, D("50"), D("180"))
    hall.bingo(again, at=48)
    assert game_program(again, prima).won is True
    assert meter(prima) == D("130")
    assert_balanced(prima.pool_id)


# --- BA-3 Bingo Acumulado -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("cards", "max_ball"),
    [(50, 44), (51, 43), (100, 43), (101, 42), (150, 42), (151, 41), (200, 41), (201, 40)],
)
def test_acumulado_max_ball_follows_the_cards_sold_scale(
    hall: Hall, clock, cards: int, max_ball: int
) -> None:
    acumulado = activate(hall, "acumulado", "BA-3", SALES)
    game = hall.sell_and_close(cards)
    gp = game_program(game, acumulado)
    pool = D(cards) * 2 / 10
    assert (gp.in_play, gp.cards_sold, gp.max_ball, gp.pool_amount) == (True, cards, max_ball, pool)
    (announced,) = game.announcement["programs"]
    assert (announced["max_ball"], announced["amount"]) == (max_ball, f"{pool * D('0.8'):.2f}")


def test_acumulado_pays_80_percent_and_keeps_20_percent_as_the_next_seed(hall: Hall, clock) -> None:
    acumulado = activate(hall, "acumulado", "BA-3", SALES)
    won = hall.play(50, at=44)  # pool 10.00; Bingo at ball 44 with 50 cards sold: won
    gp = game_program(won, acumulado)
    assert (gp.won, gp.prize, gp.share, gp.carry) == (True, D("8"), D("8.00"), D("2"))
    assert meter(acumulado) == D("2")  # the 20 % carry is the first endowment of the next prize

    nxt = hall.sell_and_close(50)  # 2 + 10
    gp = game_program(nxt, acumulado)
    assert (gp.pool_amount, gp.amount, gp.max_ball) == (D("12"), D("9.6"), 44)
    hall.bingo(nxt, at=45)
    assert game_program(nxt, acumulado).won is False
    assert meter(acumulado) == D("12")  # not won: the pool grows
    assert_balanced(acumulado.pool_id)


# --- simultaneous winners -----------------------------------------------------------------------------------


def test_simultaneous_bingo_winners_share_each_program_to_the_cent(hall: Hall, clock) -> None:
    prima = activate(hall, "prima", "BA-1", {**SALES, "funding_percent": "50", "amount": "50"})
    especial = activate(hall, "especial", "BA-14", {**SALES, "funding_percent": "90", "amount": "100"})
    acumulado = activate(hall, "acumulado", "BA-3", {**SALES, "funding_percent": "7.33"})
    hall.play(60, at=60)  # pools 60, 108 and 8.796: the Primas reach their amounts
    game = hall.sell_and_close(60)
    assert {p["code"] for p in game.announcement["programs"]} == {"prima", "especial", "acumulado"}
    assert game_program(game, acumulado).max_ball == 43

    winners = hall.bingo(game, at=43, winners=3)
    expected = {
        # program: (pool at the Bingo, share, remainder left in the pool, carry)
        prima: (D("120"), D("16.66"), D("0.02"), D("70")),
        especial: (D("216"), D("33.33"), D("0.01"), D("116")),
        acumulado: (D("17.592"), D("4.69"), D("0.0036"), D("3.5184")),
    }
    for program, (pool, share, remainder, carry) in expected.items():
        gp = game_program(game, program)
        assert (gp.won, gp.winners, gp.share, gp.remainder, gp.carry) == (True, 3, share, remainder, carry)
        assert sorted(a.claim_id for a in gp.awards.all()) == sorted(c.pk for c in winners)
        assert all(a.amount == share for a in gp.awards.all())
        assert paid(gp).amount == share * 3
        assert meter(program) == pool - share * 3 == carry + remainder
        assert_balanced(program.pool_id)
    shown = {p["code"]: p for p in game_summary(game)["programs"]}
    assert (shown["acumulado"]["prize"], shown["acumulado"]["share"], shown["acumulado"]["remainder"]) == (
        "14.07",  # 14.0736 shown in whole cents
        "4.69",
        "0.0036",
    )
    assert [w["amount"] for w in shown["prima"]["winners"]] == [D("16.66")] * 3


# --- BA-2 Bingo Extra ---------------------------------------------------------------------------------------


def test_bingo_extra_escalates_one_ball_per_game_and_resets_after_the_session(hall: Hall, clock) -> None:
    extra = activate(hall, "extra", "BA-2", {**SALES, "amount": "10", "extraction_order": 50})
    hall.play(60)  # pool 12: reached

    trigger = hall.open_game(60)
    svc.set_manager_pick(game=trigger, program=extra, max_ball=55, actor=hall.operator)
    hall.close(trigger)
    assert (game_program(trigger, extra).max_ball, game_program(trigger, extra).step) == (55, 0)
    hall.bingo(trigger, at=60)

    third = hall.open_game(60)
    with nothing_written(), pytest.raises(InvalidInput) as refused:
        svc.set_manager_pick(game=third, program=extra, max_ball=60, actor=hall.operator)
    assert "rises by one per game" in refused.value.message
    hall.close(third)
    assert game_program(third, extra).max_ball == 56
    hall.bingo(third, at=60)
    fourth = hall.play(60, at=60)
    assert game_program(fourth, extra).max_ball == 57
    assert state_after(game_program(fourth, extra))["steps"] == 3

    hall.new_session()  # game 4 was the last of its session: the escalation stops (OP-04)
    gp = game_program(fourth, extra)
    assert gp.last_game_of_session is True
    assert (state_after(gp)["steps"], state_after(gp)["pick"]) == (0, None)
    assert AuditEntry.objects.filter(action="programs.last_game_of_session").exists()

    fresh = hall.sell_and_close(60)
    assert (game_program(fresh, extra).max_ball, game_program(fresh, extra).pool_amount) == (50, D("60"))
    hall.bingo(fresh, at=50)
    assert game_program(fresh, extra).won is True
    assert meter(extra) == D("50")
    assert_balanced(extra.pool_id)


# --- BA-19 Super Prima and BA-20 Colour Prima, paid from the Bolsa Acumulada -------------------------------


def test_super_prima_is_the_managers_pick_and_rises_one_ball_per_game(hall: Hall, clock) -> None:
    bolsa = svc.open_bolsa(
        room=hall.room, funding_percent=D("10"), authorisation_ref="ML-B-1", actor=hall.operator
    )
    super_prima = activate(hall, "super", "BA-19", {})
    assert super_prima.pool_id == bolsa.pool_id
    first = hall.play(60)  # the Bolsa holds 12
    assert game_program(first, super_prima).in_play is False

    picked = hall.open_game(60)
    with nothing_written(), pytest.raises(InvalidInput) as short:
        svc.set_manager_pick(
            game=picked, program=super_prima, amount=D("15"), max_ball=45, actor=hall.operator
        )
    assert "holds €12.00, less than the prize €15.00" in short.value.message
    svc.set_manager_pick(game=picked, program=super_prima, amount=D("5.00"), max_ball=45, actor=hall.operator)
    hall.close(picked)
    gp = game_program(picked, super_prima)
    assert (gp.in_play, gp.max_ball, gp.amount, gp.pool_amount) == (True, 45, D("5"), D("24"))
    hall.bingo(picked, at=46)
    assert game_program(picked, super_prima).won is False

    rolled = hall.sell_and_close(60)  # no new pick: the same amount, one ball more
    assert (game_program(rolled, super_prima).max_ball, game_program(rolled, super_prima).amount) == (
        46,
        D("5"),
    )
    hall.bingo(rolled, at=46)
    assert game_program(rolled, super_prima).won is True
    assert level(bolsa.pool_id).amount == D("31")  # 36 - 5
    assert game_program(hall.sell_and_close(60), super_prima).in_play is False
    assert_balanced(bolsa.pool_id)


def test_a_picked_amount_is_exact_to_the_cent_and_a_negative_one_is_refused_by_the_rules(
    hall: Hall, clock
) -> None:
    """The pick's amount goes through halls.money.parse: a float, a text that is no number and a fraction
    of a cent are bad_amount; a negative amount reaches the rules and is refused with the pick's problems."""
    svc.open_bolsa(room=hall.room, funding_percent=D("10"), authorisation_ref="ML-B-1", actor=hall.operator)
    colour = activate(hall, "color", "BA-20", {})
    hall.play(60)  # the Bolsa holds 12
    game = hall.open_game(60)
    cases: list[tuple[Any, str, str]] = [
        (1.5, "bad_amount", "must be exact"),
        ("diez", "bad_amount", "is not a number"),
        (D("10.005"), "bad_amount", "not a whole number of cents"),
        ("-5", "bad_pick", "amount must be more than 0 €, got -5"),
    ]
    with nothing_written():
        for amount, code, words in cases:
            with pytest.raises(InvalidInput) as refused:
                svc.set_manager_pick(
                    game=game, program=colour, amount=amount, colour="red", actor=hall.operator
                )
            assert (refused.value.code, words in refused.value.message) == (code, True), refused.value.message
    pick = svc.set_manager_pick(
        game=game, program=colour, amount=D("10.5"), colour="red", actor=hall.operator
    )
    assert pick.amount == D("10.50")


def test_colour_prima_is_won_by_a_bingo_ball_of_the_announced_colour_and_capped_at_500(
    hall: Hall, clock
) -> None:
    bolsa = svc.open_bolsa(
        room=hall.room, funding_percent=D("10"), authorisation_ref="ML-B-1", actor=hall.operator
    )
    colour = activate(hall, "color", "BA-20", {})
    hall.play(60)  # the Bolsa holds 12

    game = hall.open_game(60)
    with nothing_written():
        with pytest.raises(InvalidInput) as over:
            svc.set_manager_pick(
                game=game, program=colour, amount=D("600"), colour="green", actor=hall.operator
            )
        with pytest.raises(InvalidInput) as unknown:
            svc.set_manager_pick(
                game=game, program=colour, amount=D("10"), colour="magenta", actor=hall.operator
            )
    assert "amount €600.00 is over the maximum of €500.00" in over.value.message
    assert "unknown colour 'magenta'" in unknown.value.message
    svc.set_manager_pick(game=game, program=colour, amount=D("10"), colour="Green", actor=hall.operator)
    game = hall.close(game)
    (announced,) = game.announcement["programs"]
    assert (announced["colour"], announced["amount"], announced["max_ball"]) == ("green", "10.00", None)
    hall.bingo(game, at=50, colour="red")
    gp = game_program(game, colour)
    assert (gp.won, gp.bingo_colour) == (False, "red")

    again = hall.sell_and_close(60)  # stays in play, same colour and amount (OP-12)
    assert (game_program(again, colour).colour, game_program(again, colour).amount) == ("green", D("10"))
    hall.bingo(again, at=50, colour="green")
    assert game_program(again, colour).won is True
    assert level(bolsa.pool_id).amount == D("26")  # 36 - 10
    assert_balanced(bolsa.pool_id)


# --- configuration ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("program_type", "params", "message"),
    [
        (
            "BA-2",
            {**SALES, "amount": "10", "extraction_order": 45},
            "extraction order 45 is below the floor of 50",
        ),
        ("BA-20", {"amount": "600", "colour": "red"}, "amount €600.00 is over the maximum of €500.00"),
        ("BA-20", {"amount": "100", "colour": "magenta"}, "unknown colour 'magenta'"),
        ("BA-1", {**SALES, "amount": "75"}, "amount €75.00 is not a Prima level"),
        (
            "BA-1",
            {**SALES, "funding_percent": "1.555", "amount": "30"},
            "funding_percent 1.555 has more than 2",
        ),
        ("BA-77", {}, "unknown program type 'BA-77'"),
    ],
)
def test_bad_configuration_is_refused_and_writes_nothing(
    hall: Hall, clock, program_type: str, params: dict[str, object], message: str
) -> None:
    svc.open_bolsa(room=hall.room, funding_percent=D("5"), authorisation_ref="ML-B-1", actor=hall.operator)
    with nothing_written(), pytest.raises(InvalidInput) as refused:
        activate(hall, "bad", program_type, params)
    assert refused.value.code == "bad_program"
    assert message in refused.value.message
    assert any(message in p for p in refused.value.details["problems"])


def test_overlapping_schedules_in_a_room_are_refused(hall: Hall, clock) -> None:
    activate(hall, "extra-12/2", "BA-8", {**SALES, "amount": "100"})
    with nothing_written(), pytest.raises(InvalidInput) as refused:
        activate(hall, "extra-12/2-bis", "BA-8", {**SALES, "amount": "100"})
    assert refused.value.code == "schedule_overlap"
    assert "both claim the game after 00:00, 20:00" in refused.value.message
    activate(hall, "extra-30/1", "BA-12", {**SALES, "amount": "100"})  # another kind may share 20:00 (OP-35)


def test_a_colour_prima_needs_the_rooms_bolsa(hall: Hall, clock) -> None:
    with nothing_written(), pytest.raises(Conflict) as refused:
        activate(hall, "color", "BA-20", {})
    assert refused.value.code == "no_bolsa"


def test_a_version_change_is_refused_while_a_game_is_in_play_then_takes_effect(hall: Hall, clock) -> None:
    prima = activate(hall, "prima", "BA-1", {**SALES, "amount": "100"})
    game = hall.sell_and_close(60)
    with nothing_written(), pytest.raises(Conflict) as refused:
        svc.change_program(
            program=prima, params={**SALES, "funding_percent": "20", "amount": "100"}, actor=hall.operator
        )
    assert refused.value.code == "game_in_play"
    with pytest.raises(Conflict) as guarded:  # the pool engine asks bingo too (open-play guard)
        pools.change_parameters(
            level=level(prima.pool_id),
            changes={"contribution_rate": D("0.2")},
            actor="x",
            authorisation_ref="y",
        )
    assert guarded.value.code == "pool_in_play"

    hall.bingo(game, at=60)
    clock.advance(minutes=5)
    version = svc.change_program(
        program=prima, params={**SALES, "funding_percent": "20", "amount": "100"}, actor=hall.operator
    )
    assert version.version == 2
    assert PrizeProgramVersion.objects.filter(program=prima).count() == 2
    assert level(prima.pool_id).contribution_rate == D("0.2")
    assert ParameterChange.objects.filter(level=level(prima.pool_id)).count() == 1
    assert svc.current_version(prima).funding_percent == D("20")
    nxt = hall.sell_and_close(60)
    gp = game_program(nxt, prima)
    assert (gp.version_id, gp.funding, meter(prima)) == (version.pk, D("24"), D("36"))
    assert_balanced(prima.pool_id)


def test_a_future_version_takes_effect_at_its_instant(hall: Hall, clock) -> None:
    prima = activate(hall, "prima", "BA-1", {**SALES, "amount": "100"})
    later = clock.now() + timedelta(hours=2)
    svc.change_program(
        program=prima,
        params={**SALES, "funding_percent": "20", "amount": "100"},
        effective_from=later,
        actor=hall.operator,
    )
    assert level(prima.pool_id).contribution_rate == D("0.1")  # not yet
    before = hall.play(60)
    assert game_program(before, prima).funding == D("12")
    clock.set(later)
    after = hall.sell_and_close(60)
    assert (game_program(after, prima).version.version, game_program(after, prima).funding) == (2, D("24"))
    assert level(prima.pool_id).contribution_rate == D("0.2")


# --- the rest of the game flow ------------------------------------------------------------------------------


def test_a_voided_game_keeps_its_funding_but_does_not_advance_the_programs(hall: Hall, clock) -> None:
    prima = activate(hall, "prima", "BA-1", {**SALES, "funding_percent": "50", "amount": "50"})
    game = hall.sell_and_close(60)
    games.void_game(game=game, actor=hall.caller, reason="blower failure")
    gp = game_program(game, prima)
    assert (gp.state_after, meter(prima)) == (None, D("60"))
    assert svc.current_state(prima).reached is False
    nxt = hall.sell_and_close(60)  # the pool reached 50 in the voided game; this game records it
    assert (game_program(nxt, prima).in_play, game_program(nxt, prima).pool_amount) == (False, D("120"))


def test_a_room_without_programs_plays_as_before(hall: Hall, clock) -> None:
    game = hall.play(60)
    assert game.state == GameState.CLOSED
    assert game.announcement["programs"] == []
    assert game_summary(game)["programs"] == []
    assert screen_snapshot(hall.room)["programs"] == []
    assert not GameProgram.objects.exists()


def test_the_screen_and_staff_views_show_the_programs(hall: Hall, clock) -> None:
    prima = activate(hall, "prima", "BA-1", {**SALES, "funding_percent": "50", "amount": "50"})
    hall.play(60)
    (shown,) = screen_snapshot(hall.room)["programs"]
    assert shown == {
        "code": "prima",
        "type": "BA-1",
        "name": "Prima",
        "family": "prima",
        "amount": "60.00",
        "next": {"amount": "50.00", "max_ball": 48, "colour": None, "slot": None},
        # The short digest of the terms in force, as the posted prize table prints it.
        "digest_short": terms.short(prima.versions.get().digest),
    }
    view = svc.program_view(prima)
    assert [v["version"] for v in view["versions"]] == [1]
    assert view["versions"][0]["in_force"] is True
    assert view["state"]["reached"] is True
    assert view["recent_games"][0]["funding"] == "60.00"
    assert {t["type"] for t in svc.program_types()} == {f"BA-{n}" for n in range(1, 21)}
    svc.deactivate_program(program=prima, actor=hall.operator)
    assert screen_snapshot(hall.room)["programs"] == []
    assert not GameProgram.objects.filter(game=hall.sell_and_close(60), program=prima).exists()
