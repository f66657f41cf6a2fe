"""The simulator's plot as a self-contained SVG (no dependency, no script): pure.

Its words and amounts are said by the caller: `translate` (gettext at the Django edge), `ngettext` (the
words that count something: "1 premio", "2 premios"), `amount` (halls.i18n.amount there, the active
language's "1.234,56 €") and `number` (the share of sales, "0,04"); by default English ("€1,234.56", "0.04").

The pool at the end of each simulated day is a line (from 0 € at activation), the euros paid each day are
thin bars, and each award is a marker at the pool it was paid from, with a tooltip. Coordinates are floats:
they are pixels, not money; every amount shown is formatted from the report's Decimals.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from decimal import Decimal
from xml.sax.saxutils import escape

from bingo.traditional.programs.problems import gettext_noop
from bingo.traditional.programs.regulation import EURO
from bingo.traditional.programs.simulate import SimulationReport
from halls import money
from halls.money import HUNDRED

WIDTH = 960
HEIGHT = 460
LEFT, RIGHT, TOP, BOTTOM = 96, 24, 64, 56
POOL_COLOUR = "#1f5fa8"
HIT_COLOUR = "#d2452b"
PAID_COLOUR = "#f2b134"


def english(amount: Decimal) -> str:
    """The default amount: English, "€1,234.56" (halls.money.for_person)."""
    return money.for_person(amount, "en")


def _unchanged(message: str) -> str:
    return message


def english_number(value: Decimal) -> str:
    """The default number: English, two decimals ("0.04")."""
    return f"{value:.2f}"


def english_plural(singular: str, plural: str, count: int) -> str:
    """The default ngettext: English, one or many."""
    return singular if count == 1 else plural


# The plot's words (English msgids: the Django caller passes gettext as `translate`).
TITLE = gettext_noop("Simulation of %(label)s")
# %(days)s, %(games)s and %(hits)s are the counted words below ("8 days", "1 hit").
SUMMARY = gettext_noop(
    "%(days)s · %(games)s · %(hits)s · paid %(paid)s (%(share)s %% of sales) · seed %(seed)s"
)
DAYS = gettext_noop("Days")
POOL_AXIS = gettext_noop("Pool (%(currency)s)")
DAY_PAID = gettext_noop("day %(day)s: paid %(paid)s")
AWARD_MAX = gettext_noop(" (max %(max_ball)s)")
AWARD_COLOUR = gettext_noop(", colour %(colour)s")
LEGEND_POOL = gettext_noop("pool at end of day")
LEGEND_AWARD = gettext_noop("award")
LEGEND_PAID = gettext_noop("paid")


def nice_step(span: float, ticks: int = 6) -> float:
    """A round tick step (1, 2 or 5 × 10ⁿ) giving about `ticks` ticks over `span`."""
    if span <= 0:
        return 1.0
    raw = span / ticks
    power = 10 ** math.floor(math.log10(raw))
    for factor in (1, 2, 5, 10):
        if raw <= factor * power:
            return float(factor * power)
    return float(10 * power)


def _ticks(top: float, step: float) -> list[float]:
    count = math.floor(top / step + 1e-9)
    return [i * step for i in range(count + 1)]


def render_svg(
    report: SimulationReport,
    *,
    amount: Callable[[Decimal], str] = english,
    translate: Callable[[str], str] = _unchanged,
    ngettext: Callable[[str, str, int], str] = english_plural,
    number: Callable[[Decimal], str] = english_number,
) -> str:
    """The report's pool per day, payouts and hits as an SVG document (a string); `amount` writes every
    amount (the axis, the summary, the tooltips), `translate` every word, `ngettext` every count and
    `number` the share of sales paid back (a percentage)."""
    _ = translate
    plot_w = WIDTH - LEFT - RIGHT
    plot_h = HEIGHT - TOP - BOTTOM
    days = report.days
    peak = max(
        [p.pool_end for p in report.series]
        + [a.pool_before for a in report.awards]
        + [p.paid for p in report.series]
        + [Decimal(1)]
    )
    y_step = nice_step(float(peak))
    y_top = math.ceil(float(peak) / y_step) * y_step
    x_step = max(1.0, nice_step(float(days), 8))

    def x(day: float) -> float:
        return LEFT + plot_w * day / days

    def y(amount: Decimal) -> float:
        return TOP + plot_h * (1 - float(amount) / y_top)

    label = report.program.label
    title = escape(_(TITLE) % {"label": label})
    counted = {
        "days": ngettext("%(days)s day", "%(days)s days", report.days) % {"days": report.days},
        "games": ngettext("%(games)s game", "%(games)s games", report.games) % {"games": report.games},
        "hits": ngettext("%(hits)s hit", "%(hits)s hits", report.hits) % {"hits": report.hits},
    }
    summary = _(SUMMARY) % {
        **counted,
        "paid": amount(report.total_paid),
        "share": number(HUNDRED * report.returned_share),
        "seed": report.seed,
    }
    out: list[str] = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" '
        f'viewBox="0 0 {WIDTH} {HEIGHT}" font-family="sans-serif" font-size="12">',
        f"<title>{title}</title>",
        f'<rect x="0" y="0" width="{WIDTH}" height="{HEIGHT}" fill="#ffffff"/>',
        f'<text x="{LEFT}" y="24" font-size="16" font-weight="bold">{title}</text>',
        f'<text x="{LEFT}" y="44" fill="#555555">{escape(summary)}</text>',
    ]

    # Axes, grid and labels.
    grid: list[str] = ['<g class="axes" stroke="#dddddd" stroke-width="1">']
    labels: list[str] = ['<g class="labels" fill="#333333">']
    for value in _ticks(y_top, y_step):
        yy = y(Decimal(str(value)))
        grid.append(f'<line x1="{LEFT}" y1="{yy:.1f}" x2="{LEFT + plot_w}" y2="{yy:.1f}"/>')
        labels.append(
            f'<text x="{LEFT - 8}" y="{yy + 4:.1f}" text-anchor="end">'
            f"{escape(amount(Decimal(str(value))))}</text>"
        )
    for value in _ticks(float(days), x_step):
        xx = x(value)
        grid.append(f'<line x1="{xx:.1f}" y1="{TOP}" x2="{xx:.1f}" y2="{TOP + plot_h}"/>')
        labels.append(f'<text x="{xx:.1f}" y="{TOP + plot_h + 18}" text-anchor="middle">{value:g}</text>')
    grid.append("</g>")
    pool_axis = _(POOL_AXIS) % {"currency": EURO}
    labels += [
        f'<text x="{LEFT + plot_w / 2:.1f}" y="{HEIGHT - 12}" text-anchor="middle">{escape(_(DAYS))}</text>',
        f'<text x="20" y="{TOP + plot_h / 2:.1f}" text-anchor="middle" '
        f'transform="rotate(-90 20 {TOP + plot_h / 2:.1f})">{escape(pool_axis)}</text>',
        "</g>",
    ]
    out += grid
    out.append(
        f'<path class="frame" d="M{LEFT},{TOP} V{TOP + plot_h} H{LEFT + plot_w}" '
        'fill="none" stroke="#333333" stroke-width="1"/>'
    )
    out += labels

    # Paid per day: thin bars under the line.
    bar_w = max(1.0, plot_w / days * 0.6)
    bars = [f'<g class="paid" fill="{PAID_COLOUR}" fill-opacity="0.7">']
    for point in report.series:
        if point.paid > 0:
            top = y(point.paid)
            tip = escape(_(DAY_PAID) % {"day": point.day, "paid": amount(point.paid)})
            bars.append(
                f'<rect x="{x(point.day - 0.5) - bar_w / 2:.2f}" y="{top:.2f}" width="{bar_w:.2f}" '
                f'height="{TOP + plot_h - top:.2f}"><title>{tip}</title></rect>'
            )
    bars.append("</g>")
    out += bars

    # The pool at the end of each day, from 0 € at activation.
    points = [f"{x(0):.2f},{y(Decimal(0)):.2f}"] + [
        f"{x(p.day):.2f},{y(p.pool_end):.2f}" for p in report.series
    ]
    out.append(
        f'<polyline class="pool" fill="none" stroke="{POOL_COLOUR}" stroke-width="1.5" '
        f'points="{" ".join(points)}"/>'
    )

    # One marker per award, at the pool it was paid from, placed at its game within the day.
    games_per_day = report.profile.games_per_day
    out.append(f'<g class="hits" fill="{HIT_COLOUR}" stroke="#ffffff" stroke-width="1">')
    for award in report.awards:
        when = award.day - 1 + award.game / games_per_day
        tip = (
            ngettext(
                "day %(day)s, game %(game)s: paid %(paid)s to %(winners)s card, Bingo at ball %(ball)s",
                "day %(day)s, game %(game)s: paid %(paid)s to %(winners)s cards, Bingo at ball %(ball)s",
                award.winners,
            )
            % {
                "day": award.day,
                "game": award.game,
                "paid": amount(award.paid),
                "winners": award.winners,
                "ball": award.bingo_ordinal,
            }
            + (_(AWARD_MAX) % {"max_ball": award.max_ball} if award.max_ball is not None else "")
            + (_(AWARD_COLOUR) % {"colour": award.colour} if award.colour else "")
        )
        out.append(
            f'<circle class="hit" cx="{x(when):.2f}" cy="{y(award.pool_before):.2f}" r="4">'
            f"<title>{escape(tip)}</title></circle>"
        )
    out.append("</g>")

    # Legend.
    lx = LEFT + plot_w - 250
    out += [
        f'<g class="legend" transform="translate({lx},{TOP - 14})">',
        f'<line x1="0" y1="0" x2="18" y2="0" stroke="{POOL_COLOUR}" stroke-width="2"/>',
        f'<text x="24" y="4">{escape(_(LEGEND_POOL))}</text>',
        f'<circle cx="140" cy="0" r="4" fill="{HIT_COLOUR}"/>',
        f'<text x="148" y="4">{escape(_(LEGEND_AWARD))}</text>',
        f'<rect x="192" y="-5" width="8" height="10" fill="{PAID_COLOUR}"/>',
        f'<text x="204" y="4">{escape(_(LEGEND_PAID))}</text>',
        "</g>",
        f"<desc>{title}: {escape(summary)}</desc>",  # what a screen reader says, in the reader's language
        "</svg>",
    ]
    return "\n".join(out) + "\n"


__all__ = ["english", "nice_step", "render_svg"]
