"""A speciality's rules and preset prize table (EB-02, EB-03, §4), the terms fixed at the close of sales, and
what each ball decides. Pure: no Django; money is `halls.money`'s exact Decimal.

Two families, kept apart (OP-17): electronic bingo (art. 152: Line, Bingo, figures, other events, accumulated
prizes with a max ball) and automatic bingo (art. 155: Línea, Super Línea, Bingo, Super Bingo, Bingo Extra,
and the network's Gran Línea / Gran Bingo). A prize goes to the first card or cards completing its pattern
(co-winners at the same ball share to the cent, OP-14); a prize with a max ball is won only if that first
completion is at or before it, and is decided as not won at the first ball past it.

Prizes are paid from the game's sales (a percentage of them or a fixed amount) or from a pool of the pool
engine (the accumulated prizes, funded by a percentage of each game's sales, with a reserve that re-seeds
the pool when it is won: AB-11, OP-15). Network prizes (Gran Línea, Gran Bingo: AB-05, AB-08) are modelled
here and stay out of play until a network switches them on.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from enum import StrEnum
from typing import Any

from bingo.electronic.layouts import Layout, layout_of
from halls import money
from halls.money import ZERO


class Family(StrEnum):
    ELECTRONIC = "electronic"  # art. 150-152
    AUTOMATIC = "automatic"  # art. 153-155


class PrizeType(StrEnum):
    # electronic bingo (art. 152)
    LINE = "line"
    BINGO = "bingo"
    FIGURE = "figure"
    ACCUMULATED = "accumulated"  # a pool, won with the Bingo at or before its max ball
    GOLDEN_BALL = "golden_ball"  # other event: the Bingo made on the ball the RNG chose at the close
    # automatic bingo (art. 155), distinct types even where the name is a traditional one's (OP-17)
    AUTO_LINE = "auto_line"
    SUPER_LINE = "super_line"
    AUTO_BINGO = "auto_bingo"
    SUPER_BINGO = "super_bingo"
    AUTO_BINGO_EXTRA = "auto_bingo_extra"
    GRAN_LINE = "gran_line"  # network
    GRAN_BINGO = "gran_bingo"  # network


FAMILY_TYPES: Mapping[Family, frozenset[PrizeType]] = {
    Family.ELECTRONIC: frozenset(
        {PrizeType.LINE, PrizeType.BINGO, PrizeType.FIGURE, PrizeType.ACCUMULATED, PrizeType.GOLDEN_BALL}
    ),
    Family.AUTOMATIC: frozenset(
        {
            PrizeType.AUTO_LINE,
            PrizeType.SUPER_LINE,
            PrizeType.AUTO_BINGO,
            PrizeType.SUPER_BINGO,
            PrizeType.AUTO_BINGO_EXTRA,
            PrizeType.GRAN_LINE,
            PrizeType.GRAN_BINGO,
        }
    ),
}
POOL_TYPES = frozenset(
    {
        PrizeType.ACCUMULATED,
        PrizeType.SUPER_LINE,
        PrizeType.SUPER_BINGO,
        PrizeType.AUTO_BINGO_EXTRA,
        PrizeType.GRAN_LINE,
        PrizeType.GRAN_BINGO,
    }
)
NETWORK_TYPES = frozenset({PrizeType.GRAN_LINE, PrizeType.GRAN_BINGO})
LINE_TYPES = frozenset({PrizeType.LINE, PrizeType.AUTO_LINE, PrizeType.SUPER_LINE, PrizeType.GRAN_LINE})
# The pattern each type plays on (a figure names its own).
_PATTERN = {t: "line" for t in LINE_TYPES} | {
    t: "full"
    for t in (
        PrizeType.BINGO,
        PrizeType.ACCUMULATED,
        PrizeType.GOLDEN_BALL,
        PrizeType.AUTO_BINGO,
        PrizeType.SUPER_BINGO,
        PrizeType.AUTO_BINGO_EXTRA,
        PrizeType.GRAN_BINGO,
    )
}
# A max extraction is what makes these prizes what they are.
NEEDS_MAX_BALL = frozenset(
    {PrizeType.ACCUMULATED, PrizeType.SUPER_LINE, PrizeType.SUPER_BINGO, PrizeType.AUTO_BINGO_EXTRA}
)


class RulesError(ValueError):
    """Rules or a prize table that break the regulation or do not hold together; `problems` lists all."""

    def __init__(self, problems: Sequence[str]) -> None:
        self.problems = list(problems)
        super().__init__("; ".join(self.problems))


@dataclass(frozen=True)
class PoolSpec:
    """An accumulated prize's pool: `funding_percent` of each game's sales to the meter, `reserve_percent` to
    the reserve that re-seeds it when won (AB-11), its `seed`, and an optional `ceiling`."""

    funding_percent: Decimal
    reserve_percent: Decimal = ZERO
    seed: Decimal = ZERO
    ceiling: Decimal | None = None


@dataclass(frozen=True)
class MaxBallStep:
    """From `from_sales` (the game's total bets) up, the max extraction is `max_ball` (AB-06/AB-09)."""

    from_sales: Decimal
    max_ball: int


@dataclass(frozen=True)
class PrizeSpec:
    code: str
    name: str
    type: PrizeType
    figure: str = ""  # the figure's name (type figure)
    percent: Decimal | None = None  # of the game's sales
    fixed: Decimal | None = None  # a fixed amount, from the game's sales
    pool: PoolSpec | None = None
    max_ball: int | None = None
    max_ball_by_sales: tuple[MaxBallStep, ...] = ()
    info: str = ""  # what players must be told about it

    @property
    def pattern(self) -> str:
        return self.figure if self.type is PrizeType.FIGURE else _PATTERN[self.type]

    @property
    def network(self) -> bool:
        return self.type in NETWORK_TYPES

    def max_ball_for(self, sales: Decimal) -> int | None:
        """The max extraction of a game with `sales` total bets (the highest step reached)."""
        if not self.max_ball_by_sales:
            return self.max_ball
        reached = [s.max_ball for s in self.max_ball_by_sales if sales >= s.from_sales]
        return reached[-1] if reached else self.max_ball_by_sales[0].max_ball


@dataclass(frozen=True)
class Rules:
    """A speciality's preset rules (one version of them)."""

    family: Family
    layout: Layout
    card_price: Decimal
    purchase_sizes: tuple[int, ...]  # how many cards one purchase may be
    max_cards: int  # per terminal and game
    extractions: int  # balls drawn at most (the number of extractions used, EB-02)
    extra_balls: int  # other event: more balls for the Bingo when the extractions end without one
    pace_seconds: Decimal
    sale_seconds: int
    pause_seconds: int  # between a game's end and the next one's sales
    prizes: tuple[PrizeSpec, ...]
    extra: Mapping[str, Any] = field(default_factory=dict, repr=False)

    def prize(self, code: str) -> PrizeSpec:
        for spec in self.prizes:
            if spec.code == code:
                return spec
        raise KeyError(code)

    def patterns(self) -> dict[str, tuple[int, ...]]:
        """Pattern key -> masks, for the detector: every pattern a prize plays on, and the full card."""
        keys = ["full", *(p.pattern for p in self.prizes)]
        return {key: self.layout.pattern(key) for key in dict.fromkeys(keys)}


# --- parsing and checking ---------------------------------------------------------------------------------


def _dec(problems: list[str], where: str, value: Any, *, places: int = 2) -> Decimal | None:
    if value is None:
        return None
    try:
        return money.parse(where, value, places=places)
    except (money.MoneyError, TypeError, ValueError) as exc:
        problems.append(f"{where}: {exc}")
        return None


def _int(problems: list[str], where: str, value: Any, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        problems.append(f"{where} must be a whole number from {low} to {high}, got {value!r}")
        return low
    return value


def parse_rules(data: Mapping[str, Any]) -> Rules:
    """Rules from their JSON form (the stored version), every problem reported at once (`RulesError`)."""
    problems: list[str] = []
    if not isinstance(data, Mapping):
        raise RulesError(["the rules are an object"])
    try:
        family = Family(data.get("family", Family.ELECTRONIC))
    except ValueError:
        raise RulesError([f"family must be one of {', '.join(Family)}"]) from None
    try:
        layout = layout_of(str(data.get("layout", "90")))
    except ValueError as exc:
        raise RulesError([str(exc)]) from None
    if family is Family.AUTOMATIC and layout.code != "90":
        problems.append("automatic bingo is played on the 90-ball card (AB-01)")
    price = _dec(problems, "card_price", data.get("card_price")) or ZERO
    if price <= 0 and not any(p.startswith("card_price") for p in problems):
        problems.append("card_price must be above zero")
    sizes = data.get("purchase_sizes", [1, 2, 3, 4, 5, 6])
    if not isinstance(sizes, list) or not sizes:
        problems.append("purchase_sizes is a list of card counts")
        sizes = [1]
    purchase_sizes = tuple(sorted({_int(problems, "purchase_sizes", s, 1, 60) for s in sizes}))
    max_cards = _int(problems, "max_cards", data.get("max_cards", 60), 1, 600)
    extractions = _int(
        problems, "extractions", data.get("extractions", layout.max_number), 1, layout.max_number
    )
    extra_balls = _int(
        problems, "extra_balls", data.get("extra_balls", 0), 0, layout.max_number - extractions
    )
    pace = _dec(problems, "pace_seconds", data.get("pace_seconds", "3"), places=3) or Decimal(3)
    if not Decimal("0.2") <= pace <= 60:
        problems.append("pace_seconds must be from 0.2 to 60")
    sale_seconds = _int(problems, "sale_seconds", data.get("sale_seconds", 30), 5, 3600)
    pause_seconds = _int(problems, "pause_seconds", data.get("pause_seconds", 10), 0, 3600)
    raw = data.get("prizes")
    if not isinstance(raw, list) or not raw:
        problems.append("the prize table lists at least one prize")
        raw = []
    prizes = tuple(_prize(problems, i, item, family, layout) for i, item in enumerate(raw))
    rules = Rules(
        family=family,
        layout=layout,
        card_price=price,
        purchase_sizes=purchase_sizes,
        max_cards=max_cards,
        extractions=extractions,
        extra_balls=extra_balls,
        pace_seconds=pace,
        sale_seconds=sale_seconds,
        pause_seconds=pause_seconds,
        prizes=prizes,
    )
    problems.extend(_table_problems(rules))
    if problems:
        raise RulesError(problems)
    return rules


def _prize(problems: list[str], i: int, item: Any, family: Family, layout: Layout) -> PrizeSpec:
    where = f"prize {i + 1}"
    if not isinstance(item, Mapping):
        problems.append(f"{where} is an object")
        return PrizeSpec(code=f"?{i}", name="?", type=PrizeType.BINGO)
    code = str(item.get("code", "")).strip()
    where = f"prize {code or i + 1}"
    if not code or len(code) > 30:
        problems.append(f"{where}: a code of 1-30 characters")
    try:
        type_ = PrizeType(str(item.get("type")))
    except ValueError:
        problems.append(f"{where}: type must be one of {', '.join(sorted(FAMILY_TYPES[family]))}")
        return PrizeSpec(code=code or f"?{i}", name="?", type=PrizeType.BINGO)
    if type_ not in FAMILY_TYPES[family]:
        problems.append(f"{where}: {type_} is not a prize of {family} bingo (OP-17)")
    figure = str(item.get("figure", "")) if type_ is PrizeType.FIGURE else ""
    if type_ is PrizeType.FIGURE and figure not in layout.figures:
        problems.append(f"{where}: figure must be one of {', '.join(sorted(layout.figures))}")
    percent = _dec(problems, f"{where} percent", item.get("percent"), places=4)
    fixed = _dec(problems, f"{where} fixed", item.get("fixed"))
    pool = None
    if "pool" in item:
        p = item["pool"] if isinstance(item["pool"], Mapping) else {}
        pool = PoolSpec(
            funding_percent=_dec(
                problems, f"{where} pool funding_percent", p.get("funding_percent"), places=4
            )
            or ZERO,
            reserve_percent=_dec(
                problems, f"{where} pool reserve_percent", p.get("reserve_percent", "0"), places=4
            )
            or ZERO,
            seed=_dec(problems, f"{where} pool seed", p.get("seed", "0")) or ZERO,
            ceiling=_dec(problems, f"{where} pool ceiling", p.get("ceiling")),
        )
    funded = [name for name, v in (("percent", percent), ("fixed", fixed), ("pool", pool)) if v is not None]
    if type_ in POOL_TYPES and funded != ["pool"]:
        problems.append(f"{where}: a {type_} prize is paid from its pool (pool, and no percent or fixed)")
    if (type_ not in POOL_TYPES and len(funded) != 1) or (type_ not in POOL_TYPES and pool is not None):
        problems.append(f"{where}: a {type_} prize is paid from the sales: exactly one of percent or fixed")
    max_ball = item.get("max_ball")
    if max_ball is not None:
        max_ball = _int(problems, f"{where} max_ball", max_ball, 1, layout.max_number)
    steps = []
    for j, step in enumerate(item.get("max_ball_by_sales") or []):
        if not isinstance(step, Mapping):
            problems.append(f"{where} max_ball_by_sales {j + 1} is an object")
            continue
        steps.append(
            MaxBallStep(
                from_sales=_dec(
                    problems, f"{where} max_ball_by_sales {j + 1} from_sales", step.get("from_sales")
                )
                or ZERO,
                max_ball=_int(
                    problems, f"{where} max_ball_by_sales {j + 1} max_ball", step.get("max_ball"), 1, 90
                ),
            )
        )
    if [s.from_sales for s in steps] != sorted({s.from_sales for s in steps}):
        problems.append(f"{where}: max_ball_by_sales steps ascend by from_sales, each once")
    if type_ in NEEDS_MAX_BALL and max_ball is None and not steps:
        problems.append(f"{where}: a {type_} prize has a max ball (max_ball or max_ball_by_sales)")
    name = str(item.get("name", "")).strip() or code
    return PrizeSpec(
        code=code,
        name=name[:60],
        type=type_,
        figure=figure,
        percent=percent,
        fixed=fixed,
        pool=pool,
        max_ball=max_ball,
        max_ball_by_sales=tuple(steps),
        info=str(item.get("info", ""))[:500],
    )


def _table_problems(rules: Rules) -> list[str]:
    problems = []
    codes = [p.code for p in rules.prizes]
    if len(codes) != len(set(codes)):
        problems.append("prize codes are unique in a table")
    paid = sum((p.percent or ZERO for p in rules.prizes), ZERO)
    funded = sum((p.pool.funding_percent + p.pool.reserve_percent for p in rules.prizes if p.pool), ZERO)
    if paid + funded > money.HUNDRED:
        problems.append(f"prizes and pool funding take {paid + funded} % of the sales, more than 100 %")
    if not any(p.pattern == "full" and p.type not in NETWORK_TYPES for p in rules.prizes):
        problems.append("the table has a Bingo (a prize on the full card)")
    if rules.family is Family.AUTOMATIC:
        problems.extend(_automatic_problems(rules))
    return problems


def _automatic_problems(rules: Rules) -> list[str]:
    """AB-10: at every level of sales, Bingo Extra's max extraction is below Super Bingo's."""
    supers = [p for p in rules.prizes if p.type is PrizeType.SUPER_BINGO]
    extras = [p for p in rules.prizes if p.type is PrizeType.AUTO_BINGO_EXTRA]
    if extras and not supers:
        return [
            "a Bingo Extra's max extraction is below a Super Bingo's: the table needs a Super Bingo (AB-10)"
        ]
    levels = sorted({ZERO} | {s.from_sales for p in (*supers, *extras) for s in p.max_ball_by_sales})
    problems = []
    for extra in extras:
        for super_ in supers:
            for sales in levels:
                e, s = extra.max_ball_for(sales), super_.max_ball_for(sales)
                if e is not None and s is not None and e >= s:
                    problems.append(
                        f"{extra.code}'s max extraction ({e}) is not below {super_.code}'s ({s}) at sales of "
                        f"{sales} (AB-10)"
                    )
                    break
    return problems


def rules_json(rules: Rules) -> dict[str, Any]:
    """The JSON form `parse_rules` reads (money as text)."""

    def prize(p: PrizeSpec) -> dict[str, Any]:
        out: dict[str, Any] = {"code": p.code, "name": p.name, "type": str(p.type)}
        if p.figure:
            out["figure"] = p.figure
        for name in ("percent", "fixed"):
            if getattr(p, name) is not None:
                out[name] = str(getattr(p, name))
        if p.pool is not None:
            out["pool"] = {
                "funding_percent": str(p.pool.funding_percent),
                "reserve_percent": str(p.pool.reserve_percent),
                "seed": str(p.pool.seed),
                **({"ceiling": str(p.pool.ceiling)} if p.pool.ceiling is not None else {}),
            }
        if p.max_ball is not None:
            out["max_ball"] = p.max_ball
        if p.max_ball_by_sales:
            out["max_ball_by_sales"] = [
                {"from_sales": str(s.from_sales), "max_ball": s.max_ball} for s in p.max_ball_by_sales
            ]
        if p.info:
            out["info"] = p.info
        return out

    return {
        "family": str(rules.family),
        "layout": rules.layout.code,
        "card_price": str(rules.card_price),
        "purchase_sizes": list(rules.purchase_sizes),
        "max_cards": rules.max_cards,
        "extractions": rules.extractions,
        "extra_balls": rules.extra_balls,
        "pace_seconds": str(rules.pace_seconds),
        "sale_seconds": rules.sale_seconds,
        "pause_seconds": rules.pause_seconds,
        "prizes": [prize(p) for p in rules.prizes],
    }


# --- the terms of one game, fixed at the close of sales ---------------------------------------------------


@dataclass(frozen=True)
class PrizeTerms:
    """One prize as announced for a game: `amount` for a sales prize (a pool pays what it holds when won)."""

    code: str
    type: PrizeType
    pattern: str
    in_play: bool
    amount: Decimal | None
    max_ball: int | None
    golden_ball: int | None = None  # the golden-ball event's number, drawn at the close


@dataclass(frozen=True)
class Terms:
    sales: Decimal
    cards: int
    last_ordinal: int  # the extractions (more only as extra balls, for the Bingo)
    extra_balls: int
    prizes: tuple[PrizeTerms, ...]

    def prize(self, code: str) -> PrizeTerms:
        for p in self.prizes:
            if p.code == code:
                return p
        raise KeyError(code)


def fix_terms(
    rules: Rules, *, sales: Decimal, cards: int, golden_ball: int | None = None, network: bool = False
) -> Terms:
    """What a game with `sales` total bets on `cards` cards plays for. Network prizes are in play only on
    a network (`network`); a golden-ball event needs the number the RNG drew (`golden_ball`)."""
    prizes = []
    for spec in rules.prizes:
        amount = None
        if spec.percent is not None:
            amount = money.cents_down(money.percent_of(sales, spec.percent))
        elif spec.fixed is not None:
            amount = spec.fixed
        in_play = cards > 0 and (network or not spec.network)
        golden = None
        if spec.type is PrizeType.GOLDEN_BALL:
            if in_play and golden_ball is None:
                raise ValueError("a golden-ball prize needs the golden ball drawn at the close")
            golden = golden_ball
        prizes.append(
            PrizeTerms(
                code=spec.code,
                type=spec.type,
                pattern=spec.pattern,
                in_play=in_play,
                amount=amount,
                max_ball=spec.max_ball_for(sales),
                golden_ball=golden,
            )
        )
    return Terms(
        sales=sales,
        cards=cards,
        last_ordinal=rules.extractions,
        extra_balls=rules.extra_balls,
        prizes=tuple(prizes),
    )


def terms_json(terms: Terms) -> dict[str, Any]:
    return {
        "sales": str(terms.sales),
        "cards": terms.cards,
        "last_ordinal": terms.last_ordinal,
        "extra_balls": terms.extra_balls,
        "prizes": [
            {
                "code": p.code,
                "type": str(p.type),
                "pattern": p.pattern,
                "in_play": p.in_play,
                "amount": None if p.amount is None else str(p.amount),
                "max_ball": p.max_ball,
                "golden_ball": p.golden_ball,
            }
            for p in terms.prizes
        ],
    }


def terms_from_json(data: Mapping[str, Any]) -> Terms:
    return Terms(
        sales=Decimal(data["sales"]),
        cards=int(data["cards"]),
        last_ordinal=int(data["last_ordinal"]),
        extra_balls=int(data["extra_balls"]),
        prizes=tuple(
            PrizeTerms(
                code=p["code"],
                type=PrizeType(p["type"]),
                pattern=p["pattern"],
                in_play=bool(p["in_play"]),
                amount=None if p["amount"] is None else Decimal(p["amount"]),
                max_ball=p["max_ball"],
                golden_ball=p.get("golden_ball"),
            )
            for p in data["prizes"]
        ),
    )


# --- what a ball decides ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Decision:
    """A prize decided at `ordinal`: won by `winners` (card ids, ascending), or not won (no winners)."""

    code: str
    ordinal: int
    winners: tuple[int, ...]

    @property
    def won(self) -> bool:
        return bool(self.winners)


def decide(
    terms: Terms,
    *,
    ordinal: int,
    ball: int,
    completed: Mapping[str, Sequence[int]],
    decided: frozenset[str] | set[str],
) -> list[Decision]:
    """The prizes ball `ordinal` (number `ball`) decides, given the cards completing each pattern for the
    first time with it (`completed`: pattern key -> card ids) and the prizes decided before (`decided`).

    The first ball at which any card completes a prize's pattern decides it: won by those cards if it is at or
    before its max ball. A prize still open past its max ball is decided then as not won. The golden ball is
    won by the game's Bingo when the ball that makes it is the golden number.
    """
    out = []
    for p in terms.prizes:
        if not p.in_play or p.code in decided:
            continue
        cards = tuple(sorted(int(c) for c in completed.get(p.pattern, ())))
        if p.type is PrizeType.GOLDEN_BALL:
            if cards:
                out.append(Decision(p.code, ordinal, cards if ball == p.golden_ball else ()))
            continue
        if cards:
            won = p.max_ball is None or ordinal <= p.max_ball
            out.append(Decision(p.code, ordinal, cards if won else ()))
        elif p.max_ball is not None and ordinal >= p.max_ball:
            out.append(Decision(p.code, ordinal, ()))  # its last chance has passed
    return out


def game_over(terms: Terms, *, ordinal: int, bingo_made: bool) -> bool:
    """The game ends with its Bingo (the first full card), or when the balls run out: the extractions, and
    the extra balls when they end without a Bingo."""
    if bingo_made:
        return True
    return ordinal >= terms.last_ordinal + terms.extra_balls


@dataclass(frozen=True)
class Split:
    share: Decimal  # each winner's, whole cents
    remainder: Decimal  # what could not be shared: stays where the prize came from

    def total(self, winners: int) -> Decimal:
        return self.share * winners


def split(amount: Decimal, winners: int) -> Split:
    """`amount` among `winners` equal shares to the cent (OP-14), the remainder recorded."""
    share, remainder = money.share_cents(amount, winners)
    return Split(share, remainder)
