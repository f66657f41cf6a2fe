"""The authority's portal, its pure part (no Django): an installation's link state, where it sits on the map,
a pool's history as the points of a line chart, and the game a feed message speaks of.

Exact throughout: positions and chart points are Decimals rounded to a tenth of a pixel (never a float), so
the same messages always draw the same picture.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import ROUND_HALF_UP, Decimal
from enum import StrEnum

TENTH = Decimal("0.1")


class LinkState(StrEnum):
    LIVE = "live"  # heard within its window
    SILENT = "silent"  # heard once, not within its window
    NEVER = "never"  # never heard


def link_state(last_message_at: datetime | None, *, now: datetime, window_seconds: int) -> LinkState:
    """An installation's link as of `now`: live when a message (a heartbeat counts) came within the window."""
    if last_message_at is None:
        return LinkState.NEVER
    if now - last_message_at > timedelta(seconds=window_seconds):
        return LinkState.SILENT
    return LinkState.LIVE


# --- the map --------------------------------------------------------------------------------------------

# The map's drawing (SVG user units): the peninsula, the Balearic Islands, Ceuta and Melilla on a box of
# longitudes and latitudes (a longitude degree drawn at cos 40° of a latitude degree), and the Canary
# Islands in an inset of their own in the box's lower left corner, over the sea.
WIDTH = Decimal(1150)
HEIGHT = Decimal(920)


@dataclass(frozen=True)
class Frame:
    west: Decimal
    east: Decimal
    south: Decimal
    north: Decimal
    left: Decimal  # where the frame is drawn on the map
    top: Decimal
    width: Decimal
    height: Decimal

    def holds(self, latitude: Decimal, longitude: Decimal) -> bool:
        return self.south <= latitude <= self.north and self.west <= longitude <= self.east

    def place(self, latitude: Decimal, longitude: Decimal) -> tuple[Decimal, Decimal]:
        x = self.left + (longitude - self.west) / (self.east - self.west) * self.width
        y = self.top + (self.north - latitude) / (self.north - self.south) * self.height
        return _tenth(x), _tenth(y)


MAINLAND = Frame(
    west=Decimal("-10"), east=Decimal("5"), south=Decimal("35"), north=Decimal("44.2"),
    left=Decimal(0), top=Decimal(0), width=WIDTH, height=HEIGHT,
)  # fmt: skip
CANARIES = Frame(
    west=Decimal("-18.4"), east=Decimal("-13.2"), south=Decimal("27.5"), north=Decimal("29.5"),
    left=Decimal(10), top=Decimal(800), width=Decimal(250), height=Decimal(110),
)  # fmt: skip


def _tenth(value: Decimal) -> Decimal:
    return value.quantize(TENTH, rounding=ROUND_HALF_UP)


def place(latitude: Decimal | None, longitude: Decimal | None) -> tuple[Decimal, Decimal] | None:
    """Where a position is drawn on the map (x, y), or None when it has none or lies off the map."""
    if latitude is None or longitude is None:
        return None
    for frame in (CANARIES, MAINLAND):
        if frame.holds(latitude, longitude):
            return frame.place(latitude, longitude)
    return None


def outline(points: Sequence[tuple[str, str]], frame: Frame = MAINLAND) -> str:
    """The SVG `points` of a polygon given as (longitude, latitude) pairs."""
    placed = [frame.place(Decimal(lat), Decimal(lon)) for lon, lat in points]
    return " ".join(f"{x},{y}" for x, y in placed)


# The Iberian peninsula's coast and the Pyrenees, coarsely (longitude, latitude): enough to find a region.
IBERIA: Points = (
    ("-9.3", "43.05"), ("-8.9", "43.35"), ("-8.0", "43.75"), ("-7.0", "43.55"), ("-5.8", "43.6"),
    ("-4.5", "43.4"), ("-3.8", "43.47"), ("-2.9", "43.35"), ("-1.8", "43.38"), ("-1.4", "43.05"),
    ("-0.7", "42.85"), ("0.7", "42.85"), ("1.7", "42.5"), ("3.2", "42.43"), ("3.2", "41.9"),
    ("2.2", "41.4"), ("1.0", "41.05"), ("0.9", "40.7"), ("0.2", "40.05"), ("-0.3", "39.45"),
    ("0.2", "38.75"), ("-0.5", "38.3"), ("-0.75", "37.6"), ("-1.6", "37.3"), ("-2.1", "36.73"),
    ("-3.0", "36.75"), ("-4.4", "36.72"), ("-5.35", "36.15"), ("-5.6", "36.02"), ("-6.3", "36.5"),
    ("-6.9", "37.15"), ("-7.4", "37.2"), ("-7.9", "37.0"), ("-8.9", "37.0"), ("-8.8", "38.4"),
    ("-9.5", "38.75"), ("-8.9", "40.2"), ("-8.7", "41.8"), ("-8.9", "42.4"),
)  # fmt: skip
# Spain's border with Portugal (drawn as a dashed line over the peninsula).
PORTUGAL_BORDER: Points = (
    ("-8.9", "41.9"), ("-8.1", "41.85"), ("-6.6", "41.95"), ("-6.2", "41.6"), ("-6.9", "41.0"),
    ("-6.85", "40.25"), ("-7.0", "39.7"), ("-7.3", "39.45"), ("-7.0", "39.05"), ("-7.3", "38.45"),
    ("-7.0", "38.0"), ("-7.5", "37.55"), ("-7.4", "37.2"),
)  # fmt: skip
Points = tuple[tuple[str, str], ...]
ISLANDS: dict[str, Points] = {
    "mallorca": (("2.35", "39.6"), ("3.05", "39.95"), ("3.45", "39.7"), ("3.1", "39.3"), ("2.7", "39.45")),
    "menorca": (("3.8", "40.05"), ("4.3", "39.95"), ("4.2", "39.8"), ("3.85", "39.9")),
    "ibiza": (("1.2", "38.95"), ("1.55", "39.1"), ("1.6", "38.9"), ("1.35", "38.85")),
}
CANARY_ISLANDS: dict[str, Points] = {
    "tenerife": (("-16.9", "28.35"), ("-16.2", "28.55"), ("-16.4", "28.15"), ("-16.75", "28.0")),
    "gran-canaria": (("-15.8", "28.1"), ("-15.4", "28.15"), ("-15.4", "27.8"), ("-15.65", "27.75")),
    "lanzarote": (("-13.85", "29.2"), ("-13.45", "29.2"), ("-13.75", "28.85")),
    "fuerteventura": (("-14.0", "28.75"), ("-13.85", "28.7"), ("-14.3", "28.05"), ("-14.5", "28.1")),
    "la-palma": (("-17.95", "28.85"), ("-17.75", "28.8"), ("-17.85", "28.45")),
    "la-gomera": (("-17.35", "28.2"), ("-17.1", "28.15"), ("-17.2", "28.0")),
    "el-hierro": (("-18.15", "27.8"), ("-17.9", "27.85"), ("-17.95", "27.65")),
}


# --- a pool's history as a line chart -------------------------------------------------------------------


@dataclass(frozen=True)
class Chart:
    width: Decimal
    height: Decimal
    lines: dict[str, str]  # a series' name -> its SVG polyline points
    top: Decimal  # the amount at the chart's top edge (its bottom edge is 0)
    first: datetime | None
    last: datetime | None


def chart(
    series: Mapping[str, Sequence[tuple[datetime, Decimal]]],
    *,
    width: Decimal = Decimal(1200),
    height: Decimal = Decimal(300),
) -> Chart:
    """Each series' (time, amount) points as a polyline on a `width` × `height` box: time left to right,
    from the earliest point to the latest, and the amount from 0 at the bottom to the largest at the top.
    A single point (or points at one time) is drawn at the box's middle."""
    points = [point for values in series.values() for point in values]
    if not points:
        return Chart(width, height, {}, Decimal(0), None, None)
    first = min(at for at, _ in points)
    last = max(at for at, _ in points)
    top = max(max(amount for _, amount in points), Decimal(0))
    span = Decimal((last - first).total_seconds())
    lines = {}
    for name, values in series.items():
        placed = []
        for at, amount in sorted(values, key=lambda p: p[0]):
            x = width / 2 if span == 0 else Decimal((at - first).total_seconds()) / span * width
            y = height if top == 0 else height - max(amount, Decimal(0)) / top * height
            placed.append(f"{_tenth(x)},{_tenth(y)}")
        lines[name] = " ".join(placed)
    return Chart(width, height, lines, top, first, last)


# --- the game a message speaks of -----------------------------------------------------------------------


def room_of(game: str) -> str:
    """The draw room of a game as bingo.draws names it: "electronic" of "electronic-40", "simultaneous" of
    "simultaneous-SB-7"."""
    return game.split("-", 1)[0]
