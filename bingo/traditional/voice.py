"""The caller's voice (spec §2.7 S3, S6–S10, TB-41, TB-42): what the hall's loudspeakers say, as clips.

Every clip is generated offline, once, from its Spanish text (`manage.py build_voice`, espeak-ng); nothing is
synthesised while a game is played. A ball is one clip of its own ("el cuarenta y cinco", said whole, so it
sounds as a caller says it). An announcement whose figures are only known at the close of sales (the S6
formula, the prize amounts, the max balls) is a sequence of clips: fixed phrases ("cartones vendidos", "del
número", "al") and whole numbers below a thousand ("ciento dieciocho", one phrase each, joined by "mil"),
played one after another; bingo.traditional.voicefiles trims each clip's silences so they follow as speech
does.

`CLIPS` is the whole catalogue, key -> text; every key any function here returns is in it (a property test
holds that). Pure: no Django.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from decimal import Decimal
from typing import Any

# --- Spanish number words ---------------------------------------------------------------------------------

_UNITS = [
    "cero",
    "uno",
    "dos",
    "tres",
    "cuatro",
    "cinco",
    "seis",
    "siete",
    "ocho",
    "nueve",
    "diez",
    "once",
    "doce",
    "trece",
    "catorce",
    "quince",
    "dieciséis",
    "diecisiete",
    "dieciocho",
    "diecinueve",
    "veinte",
    "veintiuno",
    "veintidós",
    "veintitrés",
    "veinticuatro",
    "veinticinco",
    "veintiséis",
    "veintisiete",
    "veintiocho",
    "veintinueve",
]
_TENS = {3: "treinta", 4: "cuarenta", 5: "cincuenta", 6: "sesenta", 7: "setenta", 8: "ochenta", 9: "noventa"}
_HUNDREDS = {
    1: "ciento",
    2: "doscientos",
    3: "trescientos",
    4: "cuatrocientos",
    5: "quinientos",
    6: "seiscientos",
    7: "setecientos",
    8: "ochocientos",
    9: "novecientos",
}
MAX_NUMBER = 999_999_999


def _below_hundred(n: int) -> list[str]:
    if n < 30:
        return [_UNITS[n]]
    tens, unit = divmod(n, 10)
    return [_TENS[tens]] if unit == 0 else [_TENS[tens], "y", _UNITS[unit]]


def _below_thousand(n: int) -> list[str]:
    if n == 100:
        return ["cien"]
    hundreds, rest = divmod(n, 100)
    words = [_HUNDREDS[hundreds]] if hundreds else []
    return words + (_below_hundred(rest) if rest or not hundreds else [])


def _apocope(words: list[str]) -> list[str]:
    """ "uno" before a noun (or "mil"): "un", "veintiún" (veintiún mil, treinta y un euros)."""
    if words and words[-1] == "uno":
        return [*words[:-1], "un"]
    if words and words[-1] == "veintiuno":
        return [*words[:-1], "veintiún"]
    return words


def number_words(n: int, *, before_noun: bool = False) -> list[str]:
    """The words of a cardinal 0…999 999 999, in order: 45 -> ["cuarenta", "y", "cinco"]; 1 000 -> ["mil"];
    21 000 -> ["veintiún", "mil"]; 2 000 000 -> ["dos", "millones"]. `before_noun`: the form said before a
    noun ("un euro", "veintiún cartones")."""
    if not 0 <= n <= MAX_NUMBER:
        raise ValueError(f"{n} is not a number this voice says (0…{MAX_NUMBER})")
    if n == 0:
        return ["cero"]
    millions, rest = divmod(n, 1_000_000)
    thousands, units = divmod(rest, 1000)
    words: list[str] = []
    if millions:
        words += ["un", "millón"] if millions == 1 else [*_apocope(_below_thousand(millions)), "millones"]
    if thousands:
        words += ["mil"] if thousands == 1 else [*_apocope(_below_thousand(thousands)), "mil"]
    if units:
        words += _below_thousand(units)
    return _apocope(words) if before_noun else words


def number_text(n: int, *, before_noun: bool = False) -> str:
    return " ".join(number_words(n, before_noun=before_noun))


def ball_text(ball: int) -> str:
    """What the caller says for a ball: "el cuarenta y cinco"."""
    if not 1 <= ball <= 90:
        raise ValueError(f"{ball} is not a ball (1…90)")
    return "el " + number_text(ball)


# --- the catalogue ----------------------------------------------------------------------------------------

# Fixed announcements (S9, S13, S14, S15) and the pieces of the composed ones (S3, S6, S7, S8).
PHRASES: dict[str, str] = {
    "line": "¡Línea!",
    "bingo": "¡Bingo!",
    "more-lines": "¿Alguna línea más?",
    "more-bingos": "¿Algún bingo más?",
    "closing": "La partida queda cerrada.",
    "start": "Comienza la partida.",
    "series-on-sale": "Series a la venta:",
    "series": "serie",
    "face-value": "valor facial",
    "cards-sold": "Cartones vendidos",
    "from-number": "del número",
    "to": "al",
    "and": "y",
    "of-the-series": "de las series en juego.",
    "line-prize": "Premio de línea:",
    "bingo-prize": "Premio de bingo:",
    "euro": "euro",
    "euros": "euros",
    "with": "con",
    "cent": "céntimo",
    "cents": "céntimos",
    "max-ball": "bola máxima",
    "ball-colour": "bola de color",
    "accumulated": "Premio acumulado",
    "prima": "Prima",
    "bingo-extra": "Bingo Extra",
    "acumulado": "Bingo Acumulado",
    "super-prima": "Súper Prima",
    "colour-prima": "Prima de Color",
}
COLOURS: dict[str, str] = {
    "red": "rojo",
    "yellow": "amarillo",
    "green": "verde",
    "blue": "azul",
    "purple": "morado",
    "orange": "naranja",
    "pink": "rosa",
    "white": "blanco",
    "black": "negro",
    "brown": "marrón",
    "grey": "gris",
    "cyan": "cian",
}
PROGRAM_PHRASES: dict[str, str] = {
    "prima": "prima",
    "bingo_extra": "bingo-extra",
    "acumulado": "acumulado",
    "scheduled": "bingo-extra",
    "next_game_prima": "prima",
    "super_prima": "super-prima",
    "colour_prima": "colour-prima",
}


def ball_clip(ball: int) -> str:
    return f"ball-{ball}"


def word_clip(word: str) -> str:
    return f"n-{word}"


# The words that join the groups of a large number: "un millón", "dos millones", "mil".
_JOINING_WORDS = ("un", "mil", "millón", "millones")


def group_clip(n: int, *, before_noun: bool = False) -> str:
    """The clip of a whole number 0…999, said as one phrase ("ciento dieciocho"): `before_noun`, its form
    before a noun where that differs ("treinta y un")."""
    if not 0 <= n <= 999:
        raise ValueError(f"{n} is not a group of a number (0…999)")
    apocope = before_noun and number_text(n, before_noun=True) != number_text(n)
    return f"num-{n}-un" if apocope else f"num-{n}"


def catalogue() -> dict[str, str]:
    """Every clip: key -> the Spanish text it is generated from."""
    clips = {ball_clip(b): ball_text(b) for b in range(1, 91)}
    clips.update(PHRASES)
    clips.update({f"colour-{c}": word for c, word in COLOURS.items()})
    for n in range(1000):
        clips[group_clip(n)] = number_text(n)
        clips[group_clip(n, before_noun=True)] = number_text(n, before_noun=True)
    clips.update({word_clip(w): w for w in _JOINING_WORDS})
    return clips


CLIPS: Mapping[str, str] = catalogue()


# --- composed announcements -------------------------------------------------------------------------------


def number_clips(n: int, *, before_noun: bool = False) -> list[str]:
    """A number as the fewest clips: each group below a thousand is one phrase ("ciento dieciocho"), joined
    by "mil" and "millones" (2 000 118 -> "dos" "millones" "ciento dieciocho")."""
    if not 0 <= n <= MAX_NUMBER:
        raise ValueError(f"{n} is not a number this voice says (0…{MAX_NUMBER})")
    if n == 0:
        return [group_clip(0)]
    millions, rest = divmod(n, 1_000_000)
    thousands, units = divmod(rest, 1000)
    clips: list[str] = []
    if millions:
        clips += (
            [word_clip("un"), word_clip("millón")]
            if millions == 1
            else [group_clip(millions, before_noun=True), word_clip("millones")]
        )
    if thousands:
        clips += (
            [word_clip("mil")]
            if thousands == 1
            else [group_clip(thousands, before_noun=True), word_clip("mil")]
        )
    if units:
        clips.append(group_clip(units, before_noun=before_noun))
    return clips


def amount_clips(amount: Decimal | str) -> list[str]:
    """118.50 -> "ciento dieciocho euros con cincuenta céntimos"; 1 -> "un euro"."""
    cents = int((Decimal(amount) * 100).to_integral_value())
    if cents < 0:
        raise ValueError(f"{amount} is not an amount this voice says")
    euros, rest = divmod(cents, 100)
    clips = [*number_clips(euros, before_noun=True), "euro" if euros == 1 else "euros"]
    if rest:
        clips += ["with", *number_clips(rest, before_noun=True), "cent" if rest == 1 else "cents"]
    return clips


def series_clips(offered: Iterable[Mapping[str, Any]]) -> list[str]:
    """S3: "Series a la venta: serie <n>, valor facial <amount>; …" for [{"number": int, "face_value"}].
    A series is said by its position (its code is free text a recorded voice cannot say)."""
    clips = ["series-on-sale"]
    for position, series in enumerate(offered, start=1):
        clips += ["series", *number_clips(position), "face-value", *amount_clips(series["face_value"])]
    return clips


def formula_clips(ranges: Sequence[Sequence[int]], cards: int) -> list[str]:
    """S6: "Cartones vendidos <n>, del número <a> al <b> y del número <c> al <d>, de las series en juego"."""
    clips = ["cards-sold", *number_clips(cards)]
    for index, (first, last) in enumerate(ranges):
        if index:
            clips.append("and")
        clips += ["from-number", *number_clips(first), "to", *number_clips(last)]
    return [*clips, "of-the-series"]


def prize_clips(line_prize: Decimal | str, bingo_prize: Decimal | str) -> list[str]:
    """S7: "Premio de línea: … euros. Premio de bingo: … euros"."""
    return ["line-prize", *amount_clips(line_prize), "bingo-prize", *amount_clips(bingo_prize)]


def program_clips(program: Mapping[str, Any]) -> list[str]:
    """S7–S8, one accumulated prize in play: its kind, amount, and max ball or colour when it has one."""
    clips = [PROGRAM_PHRASES.get(str(program.get("type")), "accumulated")]
    clips += amount_clips(program["amount"])
    if program.get("max_ball"):
        clips += ["max-ball", *number_clips(int(program["max_ball"]))]
    colour = program.get("colour")
    if colour and colour in COLOURS:
        clips += ["ball-colour", f"colour-{colour}"]
    return clips


def announcement_clips(announcement: Mapping[str, Any]) -> list[str]:
    """The whole sales announcement (S6–S8) as the hall hears it, from `Game.announcement`."""
    ranges = [r for s in announcement.get("series", []) for r in s.get("ranges", [])]
    clips = formula_clips(ranges, int(announcement["cards_sold"]))
    clips += prize_clips(announcement["line_prize"], announcement["bingo_prize"])
    for program in announcement.get("programs", []) or []:
        clips += program_clips(program)
    return clips
