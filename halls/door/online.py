"""The authority's online register query, pure of Django: is this document listed, asked over HTTP.

A register may be consulted online at its authority's URL (config.settings.HALL_DOOR_ONLINE_REGISTERS).
The query is one POST of the document (the authority is its legitimate recipient: it keeps the register):

    POST <url>   {"kind": "DNI", "number": "12345678Z", "country": "ES"}
    200          {"listed": true | false}

Anything else is no answer: the service unreachable (``DOWN``), no answer within the timeout (``TIMEOUT``),
an HTTP status other than 200 (``HTTP_ERROR``), or a body that is not that JSON (``GARBAGE``). Then the
caller lets the last loaded file of the register decide (halls.door.services.registers.check_document).

Nothing here logs or raises the document: an `Answer` names only the outcome and how long it took.
"""

from __future__ import annotations

import json
import time
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass
from enum import StrEnum

import httpx

from halls.door.documents import Document


class Outcome(StrEnum):
    LISTED = "listed"
    NOT_LISTED = "not_listed"
    DOWN = "down"  # refused or lost connection, unknown host
    TIMEOUT = "timeout"  # no (whole) answer within the timeout
    HTTP_ERROR = "http_error"  # an answer other than 200
    GARBAGE = "garbage"  # 200 but not {"listed": bool}

    @property
    def answered(self) -> bool:
        """The authority said whether the document is listed."""
        return self in (Outcome.LISTED, Outcome.NOT_LISTED)


@dataclass(frozen=True, slots=True)
class OnlineRegister:
    """Where and how a register is consulted online."""

    url: str
    timeout: float  # seconds, the whole query (connect, send, answer)
    token: str = ""  # sent as "Authorization: Bearer <token>" when set


@dataclass(frozen=True, slots=True)
class Answer:
    outcome: Outcome
    seconds: float
    status: int | None = None  # the HTTP status, when there was one


def query_body(document: Document) -> dict[str, str]:
    return {"kind": document.kind.value, "number": document.number, "country": document.country}


def read_answer(status: int, content: bytes) -> Outcome:
    """The outcome of an HTTP answer: 200 with {"listed": true|false}, anything else is not an answer."""
    if status != 200:
        return Outcome.HTTP_ERROR
    try:
        body = json.loads(content)
    except (ValueError, UnicodeDecodeError):
        return Outcome.GARBAGE
    if not isinstance(body, dict) or not isinstance(body.get("listed"), bool):
        return Outcome.GARBAGE
    return Outcome.LISTED if body["listed"] else Outcome.NOT_LISTED


# Queries run here so the caller waits for the whole query at most its timeout (httpx bounds each phase,
# connect, write, read, not their sum); one abandoned at its deadline ends at httpx's own timeouts.
_POOL = ThreadPoolExecutor(max_workers=8, thread_name_prefix="door-online")


def _post(register: OnlineRegister, document: Document, limit: float) -> httpx.Response:
    headers = {"Authorization": f"Bearer {register.token}"} if register.token else {}
    with httpx.Client(timeout=httpx.Timeout(limit)) as client:
        return client.post(register.url, json=query_body(document), headers=headers)


def query(register: OnlineRegister, document: Document, *, timeout: float | None = None) -> Answer:
    """Ask the register's authority whether ``document`` is listed, within its timeout (or ``timeout``
    seconds, when the caller's budget has less left); never raises for the service's faults."""
    limit = max(0.001, min(register.timeout, timeout if timeout is not None else register.timeout))
    started = time.monotonic()
    running = _POOL.submit(_post, register, document, limit)
    try:
        response = running.result(timeout=limit)
    except (httpx.TimeoutException, FutureTimeout):
        return Answer(Outcome.TIMEOUT, time.monotonic() - started)
    except (httpx.TransportError, httpx.InvalidURL):
        return Answer(Outcome.DOWN, time.monotonic() - started)
    seconds = time.monotonic() - started
    return Answer(read_answer(response.status_code, response.content), seconds, response.status_code)
