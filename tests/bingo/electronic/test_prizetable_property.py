"""The prize table (`bingo.electronic.prizetable`), by properties: random valid tables of both families
round-trip through their JSON form; broken ones are refused with every problem named; what each ball
decides, on the completions of a real detector over dealt cards, is what the rules say (a prize decided once,
at its first completion, won iff at or before its max ball, decided as not won at its max ball otherwise;
the golden ball with the Bingo made on its number); the game ends with the Bingo or when the balls run out;
shares to the cent with the remainder recorded. Hypothesis; no Django."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import numpy as np
import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from bingo.electronic.detector import PatternIndex
from bingo.electronic.layouts import LAYOUTS
from bingo.electronic.prizetable import (
    FAMILY_TYPES,
    Family,
    PrizeType,
    Rules,
    RulesError,
    decide,
    fix_terms,
    game_over,
    parse_rules,
    rules_json,
    split,
    terms_from_json,
    terms_json,
)

D = Decimal
cents = st.decimals(min_value=D("0.01"), max_value=D("500.00"), places=2)
percents = st.decimals(min_value=D("0.5"), max_value=D("12"), places=2)
balls_up_to = {"90": 90, "75": 75}


@st.composite
def pools(draw: st.DrawFn) -> dict[str, Any]:
    pool: dict[str, Any] = {
        "funding_percent": str(draw(st.decimals(D("0.1"), D("3"), places=2))),
        "reserve_percent": str(draw(st.decimals(D("0"), D("2"), places=2))),
        "seed": str(draw(st.decimals(D("0"), D("500"), places=2))),
    }
    if draw(st.booleans()):
        pool["ceiling"] = str(draw(st.decimals(D("1000"), D("9000"), places=2)))
    return pool


def _paid(draw: st.DrawFn) -> dict[str, str]:
    return {"percent": str(draw(percents))} if draw(st.booleans()) else {"fixed": str(draw(cents))}


@st.composite
def electronic_rules(draw: st.DrawFn) -> dict[str, Any]:
    layout = draw(st.sampled_from(["90", "75"]))
    top = balls_up_to[layout]
    extractions = draw(st.integers(30, top))
    prizes: list[dict[str, Any]] = [{"code": "bingo", "type": "bingo", **_paid(draw)}]
    if draw(st.booleans()):
        prizes.append({"code": "linea", "type": "line", **_paid(draw)})
    figures = sorted(LAYOUTS[layout].figures)
    for i, figure in enumerate(draw(st.lists(st.sampled_from(figures), max_size=2, unique=True))):
        prizes.append({"code": f"fig{i}", "type": "figure", "figure": figure, **_paid(draw)})
    if draw(st.booleans()):
        prizes.append(
            {
                "code": "acum",
                "type": "accumulated",
                "pool": draw(pools()),
                "max_ball": draw(st.integers(20, top)),
            }
        )
    if draw(st.booleans()):
        prizes.append({"code": "oro", "type": "golden_ball", **_paid(draw)})
    return {
        "family": "electronic",
        "layout": layout,
        "card_price": str(draw(st.decimals(D("0.10"), D("5.00"), places=2))),
        "purchase_sizes": draw(st.lists(st.integers(1, 12), min_size=1, max_size=4, unique=True)),
        "max_cards": draw(st.integers(1, 100)),
        "extractions": extractions,
        "extra_balls": draw(st.integers(0, top - extractions)),
        "pace_seconds": str(draw(st.decimals(D("0.2"), D("10"), places=1))),
        "sale_seconds": draw(st.integers(5, 600)),
        "pause_seconds": draw(st.integers(0, 60)),
        "prizes": draw(st.permutations(prizes)),
    }


@st.composite
def steps(draw: st.DrawFn, low: int, high: int) -> list[dict[str, Any]]:
    """Max extractions by sales: ascending sales levels, each with a max ball in [low, high]."""
    levels = sorted(draw(st.lists(st.integers(0, 500), min_size=1, max_size=3, unique=True)))
    return [{"from_sales": str(level), "max_ball": draw(st.integers(low, high))} for level in levels]


@st.composite
def automatic_rules(draw: st.DrawFn) -> dict[str, Any]:
    prizes: list[dict[str, Any]] = [
        {"code": "bingo", "type": "auto_bingo", **_paid(draw)},
        {"code": "linea", "type": "auto_line", **_paid(draw)},
    ]
    if draw(st.booleans()):
        prizes.append(
            {
                "code": "superlinea",
                "type": "super_line",
                "pool": draw(pools()),
                "max_ball": draw(st.integers(5, 15)),
            }
        )
    if draw(st.booleans()):
        # AB-10: Bingo Extra below Super Bingo at every sales level (a fixed max each: below everywhere).
        super_max = draw(st.integers(35, 60))
        prizes.append(
            {"code": "superbingo", "type": "super_bingo", "pool": draw(pools()), "max_ball": super_max}
        )
        if draw(st.booleans()):
            prizes.append(
                {
                    "code": "extra",
                    "type": "auto_bingo_extra",
                    "pool": draw(pools()),
                    "max_ball": super_max - draw(st.integers(1, 10)),
                }
            )
    if draw(st.booleans()):
        prizes.append({"code": "granlinea", "type": "gran_line", "pool": draw(pools())})
        prizes.append({"code": "granbingo", "type": "gran_bingo", "pool": draw(pools())})
    return {
        "family": "automatic",
        "layout": "90",
        "card_price": str(draw(st.decimals(D("0.10"), D("5.00"), places=2))),
        "extractions": draw(st.integers(40, 90)),
        "prizes": draw(st.permutations(prizes)),
    }


any_rules = st.one_of(electronic_rules(), automatic_rules())


@settings(max_examples=150, deadline=None)
@given(data=any_rules)
def test_valid_tables_round_trip_through_their_json(data: dict[str, Any]) -> None:
    rules = parse_rules(data)
    again = parse_rules(rules_json(rules))
    assert again == rules
    assert rules_json(again) == rules_json(rules)
    # OP-17: a table holds only its family's prize types.
    assert {p.type for p in rules.prizes} <= FAMILY_TYPES[rules.family]
    assert "full" in rules.patterns()
    for key, masks in rules.patterns().items():
        assert masks == rules.layout.pattern(key)


# A broken table, the change that breaks it, and a word of the problem that must be named.
BREAKS: list[tuple[str, Any, str]] = [
    ("duplicate code", lambda d: d["prizes"].append(dict(d["prizes"][0])), "unique"),
    (
        "no bingo",
        lambda d: d.update(
            prizes=[
                p for p in d["prizes"] if p["code"] not in ("bingo", "acum", "oro", "superbingo", "extra")
            ]
        ),
        "Bingo",
    ),
    (
        "too much percent",
        lambda d: d["prizes"].append({"code": "x", "type": d["prizes"][0]["type"], "percent": "100.5"}),
        "100 %",
    ),
    ("zero price", lambda d: d.update(card_price="0"), "card_price"),
    ("bad price", lambda d: d.update(card_price="abc"), "card_price"),
    (
        "other family's type",
        lambda d: d["prizes"].append(
            {"code": "y", "type": "line" if d["family"] == "automatic" else "auto_line", "percent": "1"}
        ),
        "OP-17",
    ),
    (
        "pool prize without pool",
        lambda d: d["prizes"].append(
            {
                "code": "z",
                "type": "accumulated" if d["family"] == "electronic" else "super_bingo",
                "percent": "1",
                "max_ball": 40,
            }
        ),
        "pool",
    ),
    (
        "sales prize with both",
        lambda d: d["prizes"].append(
            {
                "code": "w",
                "type": "bingo" if d["family"] == "electronic" else "auto_bingo",
                "percent": "1",
                "fixed": "2.00",
            }
        ),
        "exactly one",
    ),
    (
        "no max ball",
        lambda d: d["prizes"].append(
            {
                "code": "m",
                "type": "accumulated" if d["family"] == "electronic" else "super_line",
                "pool": {"funding_percent": "1"},
            }
        ),
        "max ball",
    ),
    ("extractions", lambda d: d.update(extractions=0), "extractions"),
    ("pace", lambda d: d.update(pace_seconds="0.01"), "pace_seconds"),
    ("no prizes", lambda d: d.update(prizes=[]), "at least one prize"),
]


@settings(max_examples=100, deadline=None)
@given(data=any_rules, which=st.integers(0, len(BREAKS) - 1))
def test_broken_tables_are_refused_with_their_problem_named(data: dict[str, Any], which: int) -> None:
    name, breaks, word = BREAKS[which]
    breaks(data)
    with pytest.raises(RulesError) as refused:
        parse_rules(data)
    assert any(word in problem for problem in refused.value.problems), (name, refused.value.problems)


def test_unknown_figures_families_and_layouts_are_refused() -> None:
    base: dict[str, Any] = {"card_price": "1", "prizes": [{"code": "b", "type": "bingo", "percent": "50"}]}
    cases: list[tuple[dict[str, Any], str]] = [
        ({"family": "casino"}, "family"),
        ({"layout": "80"}, "unknown card layout"),
        (
            {
                "family": "automatic",
                "layout": "75",
                "prizes": [{"code": "b", "type": "auto_bingo", "percent": "5"}],
            },
            "AB-01",
        ),
        (
            {"prizes": [*base["prizes"], {"code": "f", "type": "figure", "figure": "cross", "fixed": "1"}]},
            "figure must be",
        ),
    ]
    for change, word in cases:
        with pytest.raises(RulesError) as refused:
            parse_rules({**base, **change})
        assert any(word in p for p in refused.value.problems), refused.value.problems


@st.composite
def broken_ab10(draw: st.DrawFn) -> dict[str, Any]:
    """Automatic rules whose Bingo Extra reaches the Super Bingo's max extraction at some sales level."""
    super_steps = draw(steps(30, 60))
    level = draw(st.sampled_from(super_steps))
    extra_steps = [
        {"from_sales": level["from_sales"], "max_ball": level["max_ball"] + draw(st.integers(0, 5))}
    ]
    if level is not super_steps[0] and draw(st.booleans()):
        extra_steps.insert(0, {"from_sales": super_steps[0]["from_sales"], "max_ball": 10})
    return {
        "family": "automatic",
        "card_price": "1",
        "prizes": [
            {"code": "bingo", "type": "auto_bingo", "percent": "50"},
            {
                "code": "sb",
                "type": "super_bingo",
                "pool": {"funding_percent": "1"},
                "max_ball_by_sales": super_steps,
            },
            {
                "code": "bx",
                "type": "auto_bingo_extra",
                "pool": {"funding_percent": "1"},
                "max_ball_by_sales": extra_steps,
            },
        ],
    }


@settings(max_examples=60, deadline=None)
@given(data=broken_ab10())
def test_a_bingo_extra_not_below_the_super_bingo_is_refused_ab10(data: dict[str, Any]) -> None:
    with pytest.raises(RulesError) as refused:
        parse_rules(data)
    assert any("AB-10" in p for p in refused.value.problems)
    data["prizes"] = [p for p in data["prizes"] if p["code"] != "sb"]
    with pytest.raises(RulesError) as refused:
        parse_rules(data)
    assert any("AB-10" in p for p in refused.value.problems)  # a Bingo Extra needs a Super Bingo


@settings(max_examples=60, deadline=None)
@given(family=st.sampled_from(list(Family)), other=st.sampled_from(list(PrizeType)))
def test_automatic_and_electronic_prize_types_never_mix_op17(family: Family, other: PrizeType) -> None:
    assert not FAMILY_TYPES[Family.ELECTRONIC] & FAMILY_TYPES[Family.AUTOMATIC]
    if other in FAMILY_TYPES[family]:
        return
    bingo = "bingo" if family is Family.ELECTRONIC else "auto_bingo"
    prize: dict[str, Any] = {"code": "other", "type": str(other), "percent": "1", "figure": "corners"}
    with pytest.raises(RulesError) as refused:
        parse_rules(
            {
                "family": str(family),
                "card_price": "1",
                "prizes": [{"code": "b", "type": bingo, "percent": "5"}, prize],
            }
        )
    assert any("OP-17" in p for p in refused.value.problems)


# --- what each ball decides -------------------------------------------------------------------------------


@settings(max_examples=150, deadline=None)
@given(
    data=any_rules,
    seed=st.binary(min_size=1, max_size=8),
    count=st.integers(1, 80),
    sales=st.decimals(D("0"), D("600"), places=2),
    order=st.randoms(use_true_random=False),
    golden_at=st.integers(0, 200),
    lucky=st.integers(0, 40),
)
def test_each_prize_is_decided_once_as_the_rules_say(
    data: dict[str, Any], seed: bytes, count: int, sales: Decimal, order: Any, golden_at: int, lucky: int
) -> None:
    rules: Rules = parse_rules(data)
    layout = rules.layout
    cards = layout.deal(seed, count)
    balls = list(range(1, layout.max_number + 1))
    order.shuffle(balls)
    if lucky < count:  # a lucky card: its numbers come early (after `lucky` others), so early prizes are won
        early = [n for n in balls if n in cards[lucky]]
        balls = [n for n in balls if n not in early]
        balls[lucky:lucky] = early
    # The golden number is the RNG's; often one of the balls around the Bingo here, to see it won too.
    golden = balls[golden_at - 30] if 30 <= golden_at < 30 + len(balls) else balls[golden_at % len(balls)]
    if lucky < count and golden_at % 2:
        golden = early[-1]  # the lucky card's last number: its Bingo, if no other card's came first
    terms = fix_terms(rules, sales=sales, cards=count, golden_ball=golden)
    assert terms_from_json(terms_json(terms)) == terms
    ids = [1000 + i for i in range(count)]
    index = PatternIndex(layout, ids, np.array(cards, dtype=np.uint8), rules.patterns())

    decided: dict[str, tuple[int, tuple[int, ...]]] = {}
    firsts: dict[str, tuple[int, tuple[int, ...]]] = {}  # pattern -> first completion (ordinal, cards)
    ball_at: dict[int, int] = {}
    ended_at = None
    for ordinal, ball in enumerate(balls, start=1):
        result = index.apply(ball)
        ball_at[ordinal] = ball
        completed = {key: [int(i) for i in ids_] for key, ids_ in result.completed.items()}
        for key, got in completed.items():
            firsts.setdefault(key, (ordinal, tuple(sorted(got))))
        for decision in decide(terms, ordinal=ordinal, ball=ball, completed=completed, decided=set(decided)):
            assert decision.code not in decided  # decided once
            assert decision.ordinal == ordinal
            decided[decision.code] = (ordinal, decision.winners)
        over = game_over(terms, ordinal=ordinal, bingo_made=bool(completed.get("full")))
        assert over == (bool(completed.get("full")) or ordinal >= terms.last_ordinal + terms.extra_balls)
        if over:
            ended_at = ordinal
            break
    assert ended_at is not None

    for prize in terms.prizes:
        if not prize.in_play:
            assert prize.code not in decided  # network prizes wait for a network
            continue
        first = firsts.get(prize.pattern)
        if prize.type is PrizeType.GOLDEN_BALL:
            # Decided with the Bingo: won iff the ball that made it is the golden number.
            if first is None:
                assert prize.code not in decided
            else:
                won = ball_at[first[0]] == prize.golden_ball
                event(f"golden ball {'won' if won else 'not won'}")
                assert decided[prize.code] == (first[0], first[1] if won else ())
            continue
        limit = prize.max_ball
        if first is not None and (limit is None or first[0] <= limit):
            assert decided[prize.code] == first  # won at its first completion, by exactly those cards
            event(f"{prize.type} won" + (f", {len(first[1])} winners" if len(first[1]) > 1 else ""))
        elif limit is not None and (first is not None or limit <= ended_at):
            assert decided[prize.code] == (limit, ())  # not won: decided at its max ball
            event(f"{prize.type} not won at its max ball")
        else:
            assert prize.code not in decided  # the game ended before anything decided it


@settings(max_examples=300, deadline=None)
@given(amount=st.decimals(D("0"), D("100000"), places=2), winners=st.integers(1, 5000))
def test_shares_are_to_the_cent_and_the_remainder_is_recorded(amount: Decimal, winners: int) -> None:
    shared = split(amount, winners)
    assert shared.share * winners + shared.remainder == amount
    assert shared.total(winners) == shared.share * winners
    assert shared.share == shared.share.quantize(D("0.01"))
    assert shared.share >= 0
    assert 0 <= shared.remainder < winners * D("0.01")


def test_no_share_among_nobody() -> None:
    with pytest.raises(ValueError, match="cannot share"):
        split(D("10.00"), 0)
