"""Hooks that let the apps above halls plug in without halls importing them (DESIGN §2).

- snapshot sections: what a hall screen shows for a room (bingo registers its game; pools come later);
- session-close guards: what must be finished before a session may close;
- session-closed listeners: what an app does, in the closing transaction, once a session closes (bingo's
  prize programs learn which game was the session's last).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from halls.models import GameSession, Room


@dataclass(frozen=True)
class ScreenSection:
    name: str
    snapshot: Callable[[Room], dict[str, Any]]
    template: str
    script: str


_sections: dict[str, ScreenSection] = {}
_close_guards: list[Callable[[GameSession], str | None]] = []
_closed_listeners: list[Callable[[GameSession, Any], None]] = []


def register_screen_section(section: ScreenSection) -> None:
    _sections[section.name] = section


def screen_sections() -> list[ScreenSection]:
    return list(_sections.values())


def register_session_close_guard(guard: Callable[[GameSession], str | None]) -> None:
    """``guard`` returns why the session cannot close yet, or None."""
    if guard not in _close_guards:
        _close_guards.append(guard)


def session_close_problems(session: GameSession) -> list[str]:
    return [problem for guard in _close_guards if (problem := guard(session))]


def register_session_closed(listener: Callable[[GameSession, Any], None]) -> None:
    """``listener(session, actor)`` runs inside the transaction that closes the session."""
    if listener not in _closed_listeners:
        _closed_listeners.append(listener)


def session_closed(session: GameSession, actor: Any) -> None:
    for listener in _closed_listeners:
        listener(session, actor)
