"""The wings' readers of their verifiable games, for the public page and the recall: each wing registers
one per room at ready() (bingo.draws cannot import the wings)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol


class Reader(Protocol):
    def balls(self, game_ref: str) -> list[int]:
        """The balls drawn, in order."""

    def sales(self, game_ref: str) -> Iterable[tuple[str, Iterable[int]]]:
        """Every card sold: (serial, numbers)."""

    def title(self, game_ref: str) -> str:
        """How a person names the game (its room and number)."""

    def finished(self, game_ref: str) -> bool:
        """Whether the game is over (only then is its seed revealed)."""

    def golden(self, game_ref: str) -> int | None:
        """The golden ball drawn at the close of sales (electronic bingo's golden-ball prize), or None."""


_READERS: dict[str, Reader] = {}


def register(room: str, reader: Reader) -> None:
    _READERS[room] = reader


def reader(room: str) -> Reader | None:
    return _READERS.get(room)


def names() -> list[str]:
    return sorted(_READERS)
