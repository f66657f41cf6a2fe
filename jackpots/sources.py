"""A pool bet's source, typed: the pool member that made it (its kind and id) and where in it (a hand, a
seat, a game). Pure.

It is a value everywhere in the product and text in one place each way: `str(source)` where it is stored
(the contribution and award rows' ``source`` column, jackpots.services.contributions) or sent, and
`PoolSource.parse` where stored text is read back. The text is the one the columns have always held, so
existing databases need no migration: ``"<kind>:<id>"`` then ``"/<detail>"`` parts, e.g. ``"machine:7"``,
``"table:12/hand:40/seat:3"``, ``"table:12/hand:40/total"``, ``"bingo_room:5/game:88"``.
"""

from __future__ import annotations

from dataclasses import dataclass

# The longest source text a contribution row keeps (its column is 120 characters).
MAX_TEXT = 120


class SourceError(ValueError):
    """A text that is not a pool source: the message says why."""


@dataclass(frozen=True)
class PoolSource:
    """`kind` (a jackpots.models.SourceType value: "machine", "table", ...) and `id` name the pool member;
    `detail` says where in it the bet was made, outermost first (("hand:40", "seat:3"))."""

    kind: str
    id: str
    detail: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        for name, part in (("kind", self.kind), ("id", self.id)):
            if not part or not part.strip() or any(c in part for c in ":/"):
                raise SourceError(f"a pool source's {name} is a word without ':' or '/', got {part!r}")
        for part in self.detail:
            if not part or not part.strip() or "/" in part:
                raise SourceError(f"a pool source's detail is a part without '/', got {part!r}")
        if len(str(self)) > MAX_TEXT:
            raise SourceError(f"a pool source is at most {MAX_TEXT} characters")

    @classmethod
    def of(cls, kind: str, id: int | str) -> PoolSource:
        """The member itself: ``PoolSource.of("machine", 7)`` is ``machine:7``."""
        return cls(str(kind), str(id))

    def at(self, key: str, value: int | str | None = None) -> PoolSource:
        """Where in the member: ``source.at("hand", 40).at("seat", 3)``; a bare part with no value
        (``at("total")``)."""
        part = key if value is None else f"{key}:{value}"
        return PoolSource(self.kind, self.id, (*self.detail, part))

    @property
    def member(self) -> PoolSource:
        """The member alone, without where in it."""
        return PoolSource(self.kind, self.id)

    @property
    def where(self) -> str:
        """Where in the member, as text (``"hand:40/seat:3"``); "" for the member itself."""
        return "/".join(self.detail)

    def part(self, key: str) -> str | None:
        """The value of a ``key:value`` detail part (``"40"`` for "hand"), None when there is none."""
        for part in self.detail:
            found, sep, value = part.partition(":")
            if sep and found == key:
                return value
        return None

    def __str__(self) -> str:
        return "/".join((f"{self.kind}:{self.id}", *self.detail))

    @classmethod
    def parse(cls, text: str) -> PoolSource:
        """The source a stored or sent text names; SourceError when it names none."""
        if not isinstance(text, str) or not text.strip():
            raise SourceError(f"a pool source is a text like 'table:12/seat:3', got {text!r}")
        head, *detail = text.split("/")
        kind, sep, ident = head.partition(":")
        if not sep:
            raise SourceError(
                f"a pool source names its member as '<kind>:<id>' (e.g. 'table:12/seat:3'): {text!r}"
            )
        return cls(kind, ident, tuple(detail))
