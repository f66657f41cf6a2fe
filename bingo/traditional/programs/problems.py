"""The problems of the accumulated prize programs' pure modules (rules, schedule, regulation, simulate).

One mechanism: a `Problem` is a str that is its English sentence (what logs, the command line and the pure
tests read) and carries a `code` (a key of MESSAGES, an English msgid marked with gettext_noop), its
parameters (amounts kept as Decimals), the program's label and the rule's citation. The Django edge says it
in the reader's language (`Problem.said(gettext, halls.i18n.amount)`, in services/programs/refusals.py).
Pure: no Django. A ValueError of these modules carries its Problem as its first argument (`of_error`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from decimal import Decimal
from types import MappingProxyType

from halls import money


def gettext_noop(message: str) -> str:
    """Marks a message for the catalogues (makemessages reads this name) without importing Django."""
    return message


# Every problem's code and its English message; the Django edge says them in the reader's language
# (`Problem.said`, with gettext). Parameters named in AMOUNTS are amounts of money (Decimals), in
# AMOUNT_LISTS lists of them: the edge shows them with halls.money.for_person.
MESSAGES: Mapping[str, str] = MappingProxyType(
    {
        "as_given": "%(text)s",  # a problem another pure module wrote (a schedule's hours, a scale's bands)
        "unknown_type": gettext_noop("unknown program type %(value)r (BA-1 … BA-20, spec §2.4)"),
        "unknown_params": gettext_noop("unknown parameter(s) %(names)s (allowed: %(allowed)s)"),
        "empty_program_id": gettext_noop("program_id must not be empty"),
        "bad_version": gettext_noop("version must be >= 1, got %(version)s"),
        "bad_decimal_type": gettext_noop(
            "%(name)s must be a Decimal, an int or a decimal string, not %(kind)s"
        ),
        "not_a_number": gettext_noop("%(name)s %(value)r is not a number"),
        "not_finite": gettext_noop("%(name)s must be finite, got %(value)r"),
        "not_whole": gettext_noop("%(name)s must be a whole number, not %(value)r"),
        "bad_choice": gettext_noop("%(name)s %(value)r is not one of %(choices)s"),
        "bad_ball": gettext_noop(
            "%(name)s %(value)s must be an extraction order between %(low)s and %(high)s"
        ),
        "percent_required": gettext_noop(
            "%(name)s is required: the deduction from each game's sales is authorised, no default (OP-02)"
        ),
        "percent_range": gettext_noop("%(name)s %(value)s must be more than 0 and less than 100"),
        "not_positive": gettext_noop("%(name)s must be more than 0 €, got %(value)s"),
        "not_a_colour": gettext_noop("%(what)s must be a colour name, got %(value)r"),
        "unknown_colour": gettext_noop("unknown colour %(value)r for %(what)s (known: %(known)s)"),
        "prima_levels_list": gettext_noop("prima_levels must be a non-empty list of amounts"),
        "prima_amount_required": gettext_noop("amount is required: one of the Prima levels %(levels)s"),
        "not_a_prima_level": gettext_noop("amount %(amount)s is not a Prima level (%(levels)s)"),
        "extra_amount_required": gettext_noop(
            "amount is required: the amount set by regulation to put the Bingo Extra in play (OP-02)"
        ),
        "extra_order_required": gettext_noop(
            "extraction_order is required: the order fixed by the hall manager or game technicians"
        ),
        "below_floor": gettext_noop("extraction order %(order)s is below the floor of %(floor)s"),
        "scale_list": gettext_noop("scale must be a list of (from cards, to cards or None, max ball)"),
        "bad_band": gettext_noop("scale band %(band)r must be (from cards, to cards or None, max ball)"),
        "carry_range": gettext_noop("carry_percent %(value)s must be at least 0 and less than 100"),
        "acumulado_amount": gettext_noop(
            "amount does not apply: the Bingo Acumulado is in play in every game"
        ),
        "ba6_profile_only": gettext_noop("ba6_profile applies only to BA-6 (OP-06)"),
        "hours_list": gettext_noop("hours must be a list of 'HH:MM'"),
        "hours_count": gettext_noop("%(wanted)s scheduled game(s) per session (BX-3), got %(got)s hour(s)"),
        "fixed_step_only": gettext_noop(
            "fixed_step applies only to the Fijo tables (BA-5, BA-7, BA-9, BA-11)"
        ),
        "next_game_amount_required": gettext_noop(
            "amount is required: the amount determined by regulation is not in the seed (OP-11)"
        ),
        "over_maximum": gettext_noop("amount %(amount)s is over the maximum of %(maximum)s"),
        "colours_list": gettext_noop("colours must be a non-empty list of the ball sets' colours"),
        "bad_authorisation": gettext_noop("authorisation_ref must be a non-empty text, got %(value)r"),
        "authorisation_required": gettext_noop(
            "authorisation_ref is required: the prize and its deduction are authorised (BA-G1, spec §0.4)"
        ),
        "no_funding_percent": gettext_noop(
            "funding_percent does not apply: paid from the Bolsa Acumulada (BA-G2, OP-36)"
        ),
        "pool_less_carry_only": gettext_noop("pays 'pool_less_carry' applies only to the Bingo Acumulado"),
        "same_instant": gettext_noop(
            "'%(program)s': versions %(first)s and %(second)s take effect at the same instant"
        ),
        "type_changed": gettext_noop(
            "'%(program)s': version %(version)s changes the program type; activate a new program"
        ),
        "not_from_sales": gettext_noop(
            "%(program)s is paid from the Bolsa Acumulada, not funded from sales (BA-G2)"
        ),
        "two_picks": gettext_noop("two manager picks for program '%(program)s' in one game"),
        "pick_for_other": gettext_noop("the pick is for program '%(program)s'"),
        "not_picked": gettext_noop("the hall manager does not pick the game, amount or order of this prize"),
        "extra_order_fixed": gettext_noop(
            "the order is fixed for the trigger game and rises by one per game (now step %(step)s)"
        ),
        "extra_order_only": gettext_noop("only the extraction order can be picked for a Bingo Extra"),
        "already_in_play": gettext_noop("already in play since an earlier game; it stays until awarded"),
        "amount_to_announce": gettext_noop("the hall manager must announce the amount"),
        "super_no_colour": gettext_noop("a Super Prima has no colour"),
        "order_to_announce": gettext_noop("the hall manager must announce the fixed extraction order"),
        "colour_no_order": gettext_noop("a Colour Prima has no extraction order"),
        "colour_to_announce": gettext_noop("the hall manager must announce the Color Prima"),
        "no_amount_announced": gettext_noop("no amount announced for the prize"),
        "pool_short": gettext_noop("its pool holds %(held)s, less than the prize %(prize)s"),
        "bolsa_short": gettext_noop("the Bolsa Acumulada holds %(held)s, less than the prize %(prize)s"),
        "not_reached": gettext_noop("%(program)s is not in play in this game: its amount is not reached"),
        "not_reached_next": gettext_noop(
            "%(program)s is not in play in the next game: its amount is not reached"
        ),
        "pick_not_allowed": gettext_noop("the hall manager does not pick this prize"),
        "not_in_play_won": gettext_noop(
            "%(program)s was not in play in this game, so it cannot have been won"
        ),
        "prize_over_maximum": gettext_noop("prize %(prize)s is over the maximum of %(maximum)s"),
        # The game's context and the Bingo (rules.GameContext, rules.evaluate, rules.payout)
        "bad_cards_sold": gettext_noop("cards_sold must be an int >= 0, got %(value)r"),
        "bad_pool_amount": gettext_noop("pool_amount must be a Decimal >= 0, got %(value)r"),
        "bad_hall_category": gettext_noop(
            "hall_category must be 1, 2 or 3 (1ª, 2ª, 3ª; OP-33), got %(value)r"
        ),
        "bad_bingo_ordinal": gettext_noop("bingo_ordinal must be an int, got %(value)r"),
        "bingo_ordinal_range": gettext_noop("a Bingo comes at extraction %(low)s–%(high)s, got %(value)s"),
        "bingo_colour_needed": gettext_noop(
            "the colour of the ball that gave the Bingo is needed for the Colour Prima"
        ),
        # Scheduled hours and time zones (schedule.py)
        "unknown_zone": gettext_noop("unknown IANA time zone %(value)r (e.g. 'Africa/Ceuta' for Melilla)"),
        "naive_instant": gettext_noop("%(what)s must be an aware datetime, got naive %(value)s"),
        "hour_not_hhmm": gettext_noop("scheduled hour %(value)r is not HH:MM"),
        "hour_kind": gettext_noop("scheduled hour must be 'HH:MM', got %(kind)s"),
        "hour_not_plain": gettext_noop("scheduled hour %(value)r must be a plain local HH:MM"),
        "previous_after": gettext_noop("previous game start %(before)s is after this game's %(begins)s"),
        "hour_twice": gettext_noop("the hour %(hour)s is listed twice"),
        "period_empty": gettext_noop("effective_to %(to)s is not after effective_from %(since)s"),
        "two_versions": gettext_noop("two versions are in force at the same time"),
        "two_versions_room": gettext_noop("two versions are in force at the same time in room %(room)r"),
        "hours_shared": gettext_noop(
            "two programs (%(first)s, %(second)s) both claim the game after %(hours)s"
        ),
        "hours_shared_room": gettext_noop(
            "two programs (%(first)s, %(second)s) in room %(room)r both claim the game after %(hours)s"
        ),
        "hours_shared_kind": gettext_noop(
            "two %(kind)s programs (%(first)s, %(second)s) both claim the game after %(hours)s"
        ),
        "hours_shared_kind_room": gettext_noop(
            "two %(kind)s programs (%(first)s, %(second)s) in room %(room)r both claim the game after "
            "%(hours)s"
        ),
        # The regulation's tables and the cards-sold scale (regulation.py)
        "no_regulation": gettext_noop("no accumulated-prize regulation in force on %(day)s"),
        "bad_game_index": gettext_noop("scheduled game index must be >= 1, got %(value)s"),
        "bad_day_offset": gettext_noop("day offset must be >= 0, got %(value)s"),
        "scale_no_bands": gettext_noop("the cards-sold scale has no bands"),
        "scale_gap": gettext_noop("the cards-sold scale must continue at %(expected)s cards, not %(got)s"),
        "band_ball": gettext_noop("band from %(cards)s cards: max ball %(ball)s is not in 15–90"),
        "open_band_not_last": gettext_noop("only the last band of the cards-sold scale may be open-ended"),
        "band_empty": gettext_noop("band %(low)s–%(high)s cards is empty"),
        "scale_not_open": gettext_noop("the cards-sold scale needs an open last band (more than %(cards)s)"),
        # The simulator's inputs (simulate.py)
        "sim_hall_category": gettext_noop("hall category must be 1, 2 or 3, got %(value)r"),
        "sim_whole": gettext_noop("%(what)s must be a whole number >= %(least)s, got %(value)r"),
        "sim_sessions_or_games": gettext_noop("give sessions per day or games per session, not both"),
        "sim_sessions_games": gettext_noop(
            "%(sessions)s sessions per day need at least as many games per day"
        ),
        "sim_card_price": gettext_noop("card price must be a Decimal more than 0 €, got %(value)r"),
        "sim_first_game": gettext_noop("the first game's time must be a local time of day (no time zone)"),
        "sim_start_date": gettext_noop("start date must be a date, got %(value)r"),
        "sim_day_span": gettext_noop(
            "a day of %(games)s games of %(minutes)s minutes (and breaks) runs %(span)s, more than "
            "%(limit)s: it would run into the next day's first game"
        ),
        "sim_bolsa_percent_needed": gettext_noop(
            "%(program)s is paid from the Bolsa Acumulada: give the Bolsa's funding percentage"
        ),
        "sim_bolsa_percent_range": gettext_noop(
            "the Bolsa's funding percentage must be more than 0 and less than 100, got %(value)s"
        ),
        "sim_no_bolsa_percent": gettext_noop(
            "%(program)s is funded from sales: a Bolsa percentage does not apply"
        ),
        "sim_picks_nothing": gettext_noop("the hall manager picks nothing for this prize"),
        "sim_order_by_trigger": gettext_noop("the order is picked for the trigger game, not by session"),
        "sim_no_colour": gettext_noop(
            "no colour it may announce (%(allowed)s) is on the simulated ball set (%(palette)s), so it "
            "could never be won"
        ),
    }
)
AMOUNTS = frozenset({"amount", "maximum", "held", "prize"})
AMOUNT_LISTS = frozenset({"levels"})
WORDS = frozenset({"what"})  # parameters that are words of the message (translated with it)
THE_COLOR_PRIMA = gettext_noop("the Color Prima")
# The words the simulator and the schedule name in their problems (WORDS: translated with the message).
WHAT_WORDS = (
    gettext_noop("days"),
    gettext_noop("games per day"),
    gettext_noop("cards per game"),
    gettext_noop("cards spread"),
    gettext_noop("minutes per game"),
    gettext_noop("session break minutes"),
    gettext_noop("sessions per day"),
    gettext_noop("games per session"),
    gettext_noop("game start"),
    gettext_noop("previous game start"),
)


def _english(value: Decimal) -> str:
    return money.for_person(value, "en")


class Problem(str):
    """One problem with a program: its English sentence (what logs, the command line and the pure tests
    read), with what the Django edge needs to say it in the reader's language: `code` (a key of MESSAGES),
    `params` (amounts kept as Decimals), the program's `label` and the rule's `citation` (None: none)."""

    code: str
    params: Mapping[str, object]
    label: str | None
    citation: str | None

    def __new__(
        cls,
        code: str,
        params: Mapping[str, object] | None = None,
        *,
        label: str | None = None,
        citation: str | None = None,
    ) -> Problem:
        if code not in MESSAGES:
            raise KeyError(f"no message for problem {code!r}")
        frozen = MappingProxyType(dict(params or {}))
        text = _say(code, frozen, label, citation, lambda message: message, _english)
        self = super().__new__(cls, text)
        self.code, self.params, self.label, self.citation = code, frozen, label, citation
        return self

    def said(self, translate: Callable[[str], str], amount: Callable[[Decimal], str]) -> str:
        """The sentence through `translate` (gettext) with amounts written by `amount` (the reader's)."""
        return _say(self.code, self.params, self.label, self.citation, translate, amount)

    def __reduce__(self) -> tuple[object, ...]:
        return (_rebuild, (self.code, dict(self.params), self.label, self.citation))


def _rebuild(code: str, params: dict[str, object], label: str | None, citation: str | None) -> Problem:
    return Problem(code, params, label=label, citation=citation)


def _say(
    code: str,
    params: Mapping[str, object],
    label: str | None,
    citation: str | None,
    translate: Callable[[str], str],
    amount: Callable[[Decimal], str],
) -> str:
    shown: dict[str, object] = {}
    for name, value in params.items():
        if name in AMOUNTS and isinstance(value, Decimal):
            shown[name] = amount(value)
        elif name in AMOUNT_LISTS and isinstance(value, tuple | list):
            shown[name] = ", ".join(amount(v) for v in value)
        elif name in WORDS and isinstance(value, str):
            shown[name] = translate(value)
        else:
            shown[name] = value
    message = MESSAGES[code]
    text = (translate(message) if code != "as_given" else message) % shown
    if label is not None:
        text = f"{label}: {text}"
    if citation is not None:
        text = f"{text} ({citation})"
    return text


def problem(code: str, *, label: str | None = None, citation: str | None = None, **params: object) -> Problem:
    return Problem(code, params, label=label, citation=citation)


def of_error(error: ValueError) -> str:
    """The problem a ValueError of the pure modules carries (its first argument), else its text."""
    first = error.args[0] if error.args else None
    return first if isinstance(first, Problem) else str(error)
