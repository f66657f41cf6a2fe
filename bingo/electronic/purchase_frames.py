"""Purchases over the terminal's WebSocket (the door the terminal already holds, authenticated at connect):
the frames, their parse and answers, and the batches they are written in.

The terminal sends (UTF-8 JSON, at most MAX_FRAME_BYTES)::

    {"type": "purchase", "key": "k-17", "card": "<number or TJ:<number>>", "cards": 3, "game": 812,
     "lang": "es"}

``key``, ``card``, ``cards`` and ``game`` are the HTTP door's (``POST /api/electronic/terminal/purchase/``;
``game`` may be null: the game on sale); ``lang`` (optional, else the handshake's Accept-Language, else the
hall's language) is the language of a refusal's message. Each purchase frame is answered by one frame with
the same ``key``::

    {"type": "purchase.answer", "key": "k-17", "status": 201, "result": {<the HTTP door's body>}}
    {"type": "purchase.answer", "key": "k-17", "status": 409,
     "error": {"code": "sales_closed", "message": "...", "details": {...}}}

``status`` and ``error`` are the HTTP door's (201 bought, 200 a retry: the first purchase, nothing written;
400, 401, 404, 409; 429 ``busy`` and 503 ``server_error``: nothing written, send it again). A frame that is
not a JSON object gets ``malformed_json``, another ``type`` ``unknown_type``, one over MAX_FRAME_BYTES
``too_large`` (each with ``key`` null unless it could be read); one far beyond that closes the socket
(1009). A terminal may have MAX_PENDING purchases waiting; they are answered in the order sent.

The purchases of all the process's terminal sockets go to one `Batcher` per event loop (halls.loop_batcher):
one call of `write_batch` per batch (prepared, then written one batch at a time), on threads of
this door's own (not Channels' one sync thread, which every consumer of the process shares), one
transaction for the batch's new purchases.
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
import weakref
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Final

from django.conf import settings
from django.utils import translation
from django.utils.translation import gettext as _

from bingo.electronic.models import Terminal
from bingo.electronic.services import messages, sales
from halls.errors import DomainError
from halls.loop_batcher import LoopBatcher

log = logging.getLogger("hall.terminals")

PURCHASE: Final = "purchase"
ANSWER: Final = "purchase.answer"
MAX_FRAME_BYTES: Final = 2048
ABUSE_BYTES: Final = 16 * MAX_FRAME_BYTES  # not a terminal's frame gone wrong: the socket is closed
MAX_PENDING: Final = 8

# Batches: purchases per batch, how long a batch waits for more after its first, batches in the works at
# once (each on a thread of its own, so this many threads and database connections). Only one of them
# writes at a time (`_writing`): two groups of one venue wait for each other anyway (its sales account
# and audit chain head are held till commit), and at 2,000 purchases in 10 s on 2 cores one writer gave
# p50 64 / p99 253 ms where two gave 130 / 400. The second prepares the next batch (its terminals, retries
# and game read, its cards dealt) and answers the last one while the first writes: the writer's thread
# does nothing but write. Waiting 2 ms for company rather than 5: p50 46 / p99 238 ms.
BATCH_SIZE: int = getattr(settings, "HALL_ESALES_BATCH_SIZE", 100)
BATCH_WAIT: float = getattr(settings, "HALL_ESALES_BATCH_WAIT_MS", 2) / 1000
BATCH_RUNNERS: int = getattr(settings, "HALL_ESALES_BATCH_RUNNERS", 2)

_writing = threading.Lock()  # one batch of this process written at a time
_executor = ThreadPoolExecutor(max_workers=BATCH_RUNNERS, thread_name_prefix="terminal-purchases")


@dataclass(frozen=True)
class Request:
    """A purchase frame as read: its fields unchecked (the service checks them as the HTTP door's)."""

    key: Any
    card: Any
    cards: Any
    game: Any
    language: str


@dataclass(frozen=True)
class Refusal:
    """A frame refused before the service: its key (if it could be read) and the error."""

    key: Any
    status: int
    code: str
    message: str


def language_of(value: Any, fallback: str) -> str:
    """A language of the hall's (LANGUAGES) for `value` ("es", "en-GB"), else `fallback`."""
    if isinstance(value, str) and 0 < len(value) <= 20:
        try:
            return translation.get_supported_language_variant(value.strip().lower())
        except LookupError:
            pass
    return fallback


def handshake_language(scope: dict[str, Any]) -> str:
    """The first of the handshake's Accept-Language the hall speaks, else the hall's language."""
    for name, value in scope.get("headers") or ():
        if name == b"accept-language":
            for part in value.decode("latin-1").split(","):
                found = language_of(part.split(";")[0].strip(), "")
                if found:
                    return found
    return str(settings.LANGUAGE_CODE)


def parse(frame: str | bytes, language: str) -> Request | Refusal:
    """The frame as a purchase request, or its refusal (nothing written for it)."""
    with translation.override(language):
        if len(frame) > MAX_FRAME_BYTES:
            return Refusal(
                None,
                413,
                "too_large",
                _("A frame is at most %(bytes)s bytes.") % {"bytes": MAX_FRAME_BYTES},
            )
        try:
            data = json.loads(frame)
        except (ValueError, RecursionError):
            data = None
        if not isinstance(data, dict):
            return Refusal(None, 400, "malformed_json", _("A frame is one JSON object."))
        key = data.get("key")
        key = key if isinstance(key, str | int) and not isinstance(key, bool) else None
        if data.get("type") != PURCHASE:
            return Refusal(key, 400, "unknown_type", _("A terminal's socket takes purchase frames only."))
    return Request(
        key=data.get("key"),
        card=data.get("card"),
        cards=data.get("cards"),
        game=data.get("game"),
        language=language_of(data.get("lang"), language),
    )


def refused(refusal: Refusal) -> str:
    error = {"code": refusal.code, "message": refusal.message}
    return json.dumps({"type": ANSWER, "key": refusal.key, "status": refusal.status, "error": error})


def busy(request: Request | Refusal) -> str:
    language = request.language if isinstance(request, Request) else settings.LANGUAGE_CODE
    with translation.override(language):
        message = _("Too many purchases waiting: send it again later.")
    return refused(Refusal(_key_of(request), 429, "busy", message))


def failed(request: Request) -> str:
    with translation.override(request.language):
        message = _("Not taken: send it again later.")
    return refused(Refusal(_key_of(request), 503, "server_error", message))


def _key_of(request: Request | Refusal) -> Any:
    key = request.key
    return key if isinstance(key, str | int) and not isinstance(key, bool) else None


def _answer(request: Request, answer: Any) -> str:
    key = _key_of(request)
    if isinstance(answer, sales.Bought):
        result = messages.purchase_answer(answer)
        status = 200 if answer.replayed else 201
        return json.dumps({"type": ANSWER, "key": key, "status": status, "result": result})
    if isinstance(answer, DomainError):
        return json.dumps({"type": ANSWER, "key": key, "status": answer.status, "error": answer.as_dict()})
    log.error("a purchase over the terminal socket failed", exc_info=answer)
    return failed(request)


Item = tuple[int, str, Request]  # the socket's device id and token hash, its request


def write_batch(items: list[Item]) -> list[str]:
    """Each request's answer frame: the terminals read in one query (a socket whose token was rotated since
    it opened is refused, as the sweep will close it), the purchases prepared (`sales.prepare_many`), then
    written when no other batch of the process is (`sales.write_prepared`)."""
    terminals = {
        t.device_id: t
        for t in Terminal.objects.select_related("device").filter(device_id__in={d for d, _h, _r in items})
    }
    asks: list[sales.Ask] = []
    answers: dict[int, str] = {}
    for i, (device_id, token_hash, request) in enumerate(items):
        terminal = terminals.get(device_id)
        if terminal is None or terminal.device.token_hash != token_hash:
            with translation.override(request.language):
                message = _("This terminal's token is no longer valid: the socket closes.")
            answers[i] = refused(Refusal(_key_of(request), 401, "token_revoked", message))
            continue
        asks.append(
            sales.Ask(
                terminal=terminal,
                card_number=request.card,
                cards=request.cards,
                key=request.key,
                game=request.game,
                language=request.language,
            )
        )
    asked = [i for i in range(len(items)) if i not in answers]
    if asks:
        prepared = sales.prepare_many(asks)
        with _writing:
            written = sales.write_prepared(prepared)
        for i, answer in zip(asked, written, strict=True):
            answers[i] = _answer(items[i][2], answer)
    return [answers[i] for i in range(len(items))]


_batchers: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, LoopBatcher[Item, str]] = (
    weakref.WeakKeyDictionary()
)


def batcher() -> LoopBatcher[Item, str]:
    """The running loop's batcher (a process serves on one loop; tests may run several loops)."""
    loop = asyncio.get_running_loop()
    found = _batchers.get(loop)
    if found is None:
        found = _batchers[loop] = LoopBatcher(
            write_batch, executor=_executor, size=BATCH_SIZE, wait=BATCH_WAIT, runners=BATCH_RUNNERS
        )
    return found
