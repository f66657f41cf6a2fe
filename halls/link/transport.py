"""The venue's link process (`manage.py run_link`): the outbox to the central over HTTPS, the central's
streams back over a WebSocket the venue holds open.

Two loops in one event loop, each moving bytes; every database step is one short call of
services.venue_side on a worker thread.

- **Sender**: reads the oldest unacknowledged messages (at most HALL_LINK_BATCH), POSTs them in order to
  ``/api/link/messages/``, and marks as sent what the central accepted (applied, refused by its handler,
  or a duplicate). ``409 out_of_order`` carries the sequence the central expects: everything before it is
  marked sent, everything from it on is sent again. Network errors, timeouts and 5xx/429 are retried with
  capped exponential backoff and jitter (tenacity) for as long as it takes: the outbox is never skipped,
  reordered or lost, since nothing is marked sent before the central's answer names it. A refused
  credential (401) or a message the central cannot read (400) is logged and retried at the cap.
- **Follower**: opens ``/ws/link/`` with the same credential, learns which streams to follow and their
  heads, catches each one up over GET from its applied position, then applies pushed entries as they come
  (streams.apply skips what it has and reports a gap, which is caught up over GET). Every
  HALL_LINK_HEARTBEAT_SECONDS it sends a heartbeat (its highest outbox sequence and its clock), and every
  HALL_LINK_CATCHUP_SECONDS it catches up anyway (a lost last push shows no gap). A lost socket is
  reopened with capped backoff, and caught up again.

- **Authority sender** (`AuthoritySender`, when HALL_AUTHORITY_URL is set): the outbox's messages owed to
  the gaming authority (a person's self-exclusion), POSTed one by one to ``<url>/notices`` in order per
  venue, with the same retry, until the authority answers ``{"accepted": sequence}``; then marked sent and
  their personal part erased.

- **Feed sender** (`FeedSender`, when HALL_REGULATOR_URL is set; a venue or a central): the feed to the
  regulator's node (halls.feed, halls.link.services.feed_outbox), each message signed with the
  installation's key and POSTed in batches, in order, to ``<url>/api/regulator/feed/`` until the node
  answers ``{"accepted": <its last accepted sequence>}``: marked sent up to there. ``409 out_of_order``
  names the sequence the node expects (sent again from there); a refusal (a message the node will not
  take) is logged and retried at the backoff cap, never skipped. Nothing to send for
  HALL_FEED_HEARTBEAT_SECONDS: a heartbeat message.

SIGTERM or SIGINT: the loops stop at their next step (a POST in flight is finished or abandoned:
either way nothing is marked sent that the central did not name), and the process exits 0.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, TypeVar
from urllib.parse import quote

import httpx
from asgiref.sync import sync_to_async
from django.db import close_old_connections
from tenacity import AsyncRetrying, RetryCallState, retry_if_exception, wait_exponential_jitter
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import InvalidStatus, WebSocketException

from halls.link.services import feed_outbox, venue_side

log = logging.getLogger("hall.link")

T = TypeVar("T")


@dataclass(frozen=True)
class LinkConfig:
    central_url: str  # https://central.example.net (no trailing slash)
    key: str
    secret: str
    venue_id: int  # this installation's Venue row
    batch: int = 200
    poll_seconds: float = 0.2
    heartbeat_seconds: float = 10.0
    catchup_seconds: float = 30.0
    backoff_max_seconds: float = 30.0
    connect_timeout: float = 5.0
    timeout: float = 15.0

    @property
    def authorization(self) -> str:
        return f"Link {self.key}:{self.secret}"

    @property
    def ws_url(self) -> str:
        base = self.central_url
        if base.startswith("https://"):
            return "wss://" + base.removeprefix("https://") + "/ws/link/"
        return "ws://" + base.removeprefix("http://") + "/ws/link/"


class Retryable(Exception):
    """An answer worth trying again as it is: the central is down, overloaded or restarting."""


class Refused(Exception):
    """An answer that will not change by retrying at once (401, 400): logged, retried at the backoff cap."""

    def __init__(self, status: int, body: Any) -> None:
        super().__init__(f"{status}: {body}")
        self.status = status
        self.body = body


def _db(fn: Callable[..., T]) -> Callable[..., Awaitable[T]]:
    """`fn` on a worker thread with a usable database connection (a restarted database is reconnected)."""

    def call(*args: Any, **kwargs: Any) -> T:
        close_old_connections()
        return fn(*args, **kwargs)

    return sync_to_async(call, thread_sensitive=True)


def _error_code(body: Any) -> str:
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        return str(body["error"].get("code", ""))
    return ""


class _Retrier:
    """What the link's senders share: a stop, waits it wakes, and the capped, jittered retry."""

    def __init__(self, backoff_max_seconds: float) -> None:
        self.stop = asyncio.Event()
        self.backoff_max_seconds = backoff_max_seconds

    async def sleep(self, seconds: float) -> None:
        """Sleep, woken early by the stop."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.stop.wait(), timeout=seconds)

    def _retrying(self, what: str) -> AsyncRetrying:
        """Retry transport errors and retryable answers with capped exponential backoff, until the stop."""

        def log_retry(state: RetryCallState) -> None:
            exc = state.outcome.exception() if state.outcome else None
            wait = state.next_action.sleep if state.next_action else 0
            log.warning("%s failed (%s), try %d again in %.1f s", what, exc, state.attempt_number, wait)

        return AsyncRetrying(
            retry=retry_if_exception(lambda e: isinstance(e, httpx.TransportError | Retryable | Refused)),
            wait=wait_exponential_jitter(multiplier=0.2, max=self.backoff_max_seconds, jitter=0.5),
            stop=lambda _state: self.stop.is_set(),
            sleep=self.sleep,
            before_sleep=log_retry,
            reraise=True,
        )


class Link(_Retrier):
    """One venue's link to the central: `run()` until `stop` is set."""

    def __init__(self, config: LinkConfig) -> None:
        super().__init__(config.backoff_max_seconds)
        self.config = config
        self.client = httpx.AsyncClient(
            base_url=config.central_url,
            headers={"Authorization": config.authorization},
            timeout=httpx.Timeout(config.timeout, connect=config.connect_timeout),
        )
        self.sent = 0  # messages the central accepted since start (a figure for the log and the tests)
        self.applied = 0  # stream entries applied since start
        self.followed: list[str] = []

    async def _request(self, method: str, url: str, **kwargs: Any) -> tuple[int, Any]:
        response = await self.client.request(method, url, **kwargs)
        if response.status_code >= 500 or response.status_code == 429:
            raise Retryable(f"{response.status_code} from the central")
        try:
            body = response.json()
        except ValueError:
            raise Retryable(f"{response.status_code} without JSON from the central") from None
        if response.status_code in (400, 401, 403, 404):
            if response.status_code == 401:
                log.error("the central refused this venue's credential: %s", _error_code(body))
            raise Refused(response.status_code, body)
        return response.status_code, body

    # --- the sender -----------------------------------------------------------------------------------------

    async def send_once(self) -> int:
        """Send the next batch (if any) until the central answers it; returns how many were accepted."""
        venue_id = self.config.venue_id
        messages, reported = await _db(venue_side.next_batch)(venue_id=venue_id, limit=self.config.batch)
        if not messages:
            return 0
        body = {"messages": messages, "reported": reported, "clock": datetime.now(UTC).isoformat()}
        status = 0
        answer: Any = None
        async for attempt in self._retrying("sending the outbox"):
            with attempt:
                status, answer = await self._request("POST", "/api/link/messages/", json=body)
        if status == 200:
            accepted = answer["accepted"]
        else:  # 409: out of order (any other answer was raised as Refused or Retryable)
            details = answer["error"].get("details", {})
            accepted = details.get("accepted", [])
        for item in accepted:
            if item["status"] == "refused":
                log.warning("the central refused message %s: %s", item["sequence"], item["answer"])
        if accepted:
            await _db(venue_side.acknowledge)(venue_id=venue_id, up_to=accepted[-1]["sequence"])
        if status == 409:
            expected = int(answer["error"]["details"]["expected"])
            acked, again = await _db(venue_side.rewind)(venue_id=venue_id, expected=expected)
            log.warning(
                "the central expects message %d: %d marked sent, %d to send again", expected, acked, again
            )
        self.sent += len(accepted)
        return len(accepted)

    async def sender(self) -> None:
        while not self.stop.is_set():
            try:
                if not await self.send_once():
                    await self.sleep(self.config.poll_seconds)
            except Exception:
                if self.stop.is_set():
                    return
                log.exception("the sender failed; it starts again")
                await self.sleep(self.config.backoff_max_seconds)

    # --- the follower ---------------------------------------------------------------------------------------

    async def catch_up(self, stream: str) -> None:
        """Fetch and apply `stream` from this installation's position until nothing is left."""
        while not self.stop.is_set():
            position = (await _db(venue_side.positions)([stream]))[stream]
            url = f"/api/link/streams/{quote(stream, safe='')}/"
            page: Any = None
            async for attempt in self._retrying(f"catching up {stream}"):
                with attempt:
                    _status, page = await self._request("GET", url, params={"after": position})
            entries = page["entries"] if page else []
            if not entries:
                return
            applied = await _db(venue_side.apply_entries)(stream=stream, entries=entries)
            self.applied += applied.applied

    async def catch_up_all(self) -> None:
        for stream in list(self.followed):
            await self.catch_up(stream)

    async def _beat(self, socket: ClientConnection) -> None:
        """Heartbeats on the socket; a catch-up of every stream every HALL_LINK_CATCHUP_SECONDS."""
        loop = asyncio.get_running_loop()
        next_catchup = loop.time() + self.config.catchup_seconds
        while not self.stop.is_set():
            reported = await _db(venue_side.reported)(venue_id=self.config.venue_id)
            frame = {"type": "heartbeat", "reported": reported, "clock": datetime.now(UTC).isoformat()}
            await socket.send(json.dumps(frame))
            if loop.time() >= next_catchup:
                await self.catch_up_all()
                next_catchup = loop.time() + self.config.catchup_seconds
            await self.sleep(self.config.heartbeat_seconds)

    async def _on_frame(self, raw: str | bytes) -> None:
        frame = json.loads(raw)
        if frame.get("type") == "follow":
            self.followed = sorted(frame["streams"])
            log.info("following %s", ", ".join(self.followed))
            await self.catch_up_all()
        elif frame.get("type") == "entry":
            stream = str(frame["stream"])
            applied = await _db(venue_side.apply_entries)(stream=stream, entries=[frame])
            self.applied += applied.applied
            if applied.gap:
                await self.catch_up(stream)

    async def follow_once(self) -> None:
        """One socket's life: open, follow, apply, until it closes or the stop."""
        async with connect(
            self.config.ws_url,
            additional_headers={"Authorization": self.config.authorization},
            open_timeout=self.config.connect_timeout,
            ping_interval=self.config.heartbeat_seconds,
            ping_timeout=self.config.heartbeat_seconds,
            max_size=2**22,
        ) as socket:
            log.info("link socket open")
            beat = asyncio.create_task(self._beat(socket))
            stopping = asyncio.create_task(self.stop.wait())
            try:
                while not self.stop.is_set():
                    receiving = asyncio.ensure_future(socket.recv())
                    done, _pending = await asyncio.wait(
                        {receiving, stopping, beat}, return_when=asyncio.FIRST_COMPLETED
                    )
                    if receiving not in done:
                        receiving.cancel()
                        if beat in done:
                            beat.result()  # its failure closes the socket (reopened by the follower)
                        return
                    await self._on_frame(receiving.result())
            finally:
                beat.cancel()
                stopping.cancel()

    async def follower(self) -> None:
        failures = 0
        while not self.stop.is_set():
            try:
                await self.follow_once()
                failures = 0
            except InvalidStatus as refused:
                log.error(
                    "the central refused the link socket (%s): check HALL_LINK_KEY / HALL_LINK_SECRET",
                    refused.response.status_code,
                )
                failures += 1
            except (
                OSError,
                TimeoutError,
                WebSocketException,
                httpx.TransportError,
                Retryable,
                Refused,
            ) as exc:
                log.warning("link socket lost: %r", exc)
                failures += 1
            except Exception:
                if self.stop.is_set():
                    return
                log.exception("the follower failed; it starts again")
                failures += 1
            if failures:
                await self.sleep(min(self.config.backoff_max_seconds, 0.2 * 2 ** min(failures, 10)))

    # --- the process ----------------------------------------------------------------------------------------

    async def run(self) -> None:
        try:
            await asyncio.gather(self.sender(), self.follower())
        finally:
            await self.client.aclose()


# --- the gaming authority -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class AuthorityConfig:
    url: str  # the authority's base URL (HALL_AUTHORITY_URL, no trailing slash): notices go to <url>/notices
    token: str = ""  # HALL_AUTHORITY_TOKEN: sent as "Authorization: Bearer <token>" when set
    batch: int = 50
    poll_seconds: float = 1.0
    backoff_max_seconds: float = 30.0
    connect_timeout: float = 5.0
    timeout: float = 15.0


class _OutboxSender(_Retrier):
    """What the outbox's one-way senders share (the authority's notices, the regulator's feed): `send_once`
    until nothing is owed (`drain`), or forever until `stop` (`run`), waiting `poll_seconds` when idle and
    starting again after the backoff's cap when a step fails. `idle` is what a sender does when it had
    nothing to send (the feed's heartbeat): True if it did something."""

    what = "the sender"  # in the log line of a failed step
    poll_seconds: float
    client: httpx.AsyncClient

    async def send_once(self) -> int:
        raise NotImplementedError

    async def idle(self) -> bool:
        return False

    async def drain(self) -> int:
        """Send until nothing is owed (tests, a one-off command); how many were accepted."""
        total = 0
        while sent := await self.send_once():
            total += sent
        return total

    async def run(self) -> None:
        try:
            while not self.stop.is_set():
                try:
                    if not await self.send_once() and not await self.idle():
                        await self.sleep(self.poll_seconds)
                except Exception:
                    if self.stop.is_set():
                        return
                    log.exception("%s failed; it starts again", self.what)
                    await self.sleep(self.backoff_max_seconds)
        finally:
            await self.client.aclose()


class AuthoritySender(_OutboxSender):
    """The outbox's authority destination to the gaming authority: each message POSTed to <url>/notices as
    {"venue": licence number, "sequence", "kind", "payload"}, in order per venue, retried like the central's
    (capped exponential backoff with jitter) until the authority answers 200 {"accepted": sequence}; then
    it is marked sent and its personal part erased (halls.link.services.outbox.acknowledge). Nothing of a
    payload is logged: its venue, sequence and kind only."""

    what = "the authority sender"

    def __init__(self, config: AuthorityConfig) -> None:
        super().__init__(config.backoff_max_seconds)
        self.config = config
        self.poll_seconds = config.poll_seconds
        headers = {"Authorization": f"Bearer {config.token}"} if config.token else {}
        self.client = httpx.AsyncClient(
            base_url=config.url,
            headers=headers,
            timeout=httpx.Timeout(config.timeout, connect=config.connect_timeout),
        )
        self.sent = 0

    async def _post(self, message: dict[str, Any]) -> int:
        body = {key: message[key] for key in ("venue", "sequence", "kind", "payload")}
        response = await self.client.post("/notices", json=body)
        if response.status_code >= 500 or response.status_code == 429:
            raise Retryable(f"{response.status_code} from the authority")
        try:
            answer = response.json()
        except ValueError:
            raise Retryable(f"{response.status_code} without JSON from the authority") from None
        if response.status_code != 200 or not isinstance(answer, dict) or "accepted" not in answer:
            raise Refused(response.status_code, _error_code(answer) or "no acceptance")
        return int(answer["accepted"])

    async def send_once(self) -> int:
        """Send the next batch, each message until the authority accepts it; how many were accepted."""
        messages = await _db(venue_side.authority_batch)(limit=self.config.batch)
        accepted = 0
        for message in messages:
            what = f"notice {message['venue']} #{message['sequence']} ({message['kind']}) to the authority"
            sequence = 0
            async for attempt in self._retrying(what):
                with attempt:
                    sequence = await self._post(message)
            await _db(venue_side.acknowledge_authority)(
                venue_id=message["venue_id"], up_to=sequence, kind=message["kind"]
            )
            log.info("the authority accepted %s", what.removesuffix(" to the authority"))
            accepted += 1
        self.sent += accepted
        return accepted


# --- the regulator's node (the feed) ------------------------------------------------------------------------


@dataclass(frozen=True)
class FeedConfig:
    url: str  # the node's base URL (HALL_REGULATOR_URL, no trailing slash)
    batch: int = 200
    poll_seconds: float = 0.2
    heartbeat_seconds: float = 30.0
    backoff_max_seconds: float = 30.0
    connect_timeout: float = 5.0
    timeout: float = 15.0


def _expected(body: Any) -> int | None:
    """The sequence a refusal says the node expects next (its details' "expected"), if it says one."""
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        details = body["error"].get("details") or {}
        if isinstance(details, dict) and isinstance(details.get("expected"), int):
            return int(details["expected"])
    return None


class FeedSender(_OutboxSender):
    """The installation's feed to the regulator's node: `run()` until `stop` is set (see the module's
    docstring). Nothing of a payload is logged: sequences and kinds only."""

    PATH = "/api/regulator/feed/"

    what = "the feed sender"

    def __init__(self, config: FeedConfig) -> None:
        super().__init__(config.backoff_max_seconds)
        self.config = config
        self.poll_seconds = config.poll_seconds
        self.client = httpx.AsyncClient(
            base_url=config.url, timeout=httpx.Timeout(config.timeout, connect=config.connect_timeout)
        )
        self.sent = 0  # messages the node accepted since start
        self.heartbeats = 0
        self._last_sent = -float("inf")  # the loop's clock at the last accepted batch

    async def _post(self, messages: list[dict[str, Any]]) -> tuple[int, Any]:
        response = await self.client.post(self.PATH, json={"messages": messages})
        if response.status_code >= 500 or response.status_code == 429:
            raise Retryable(f"{response.status_code} from the regulator's node")
        try:
            body = response.json()
        except ValueError:
            raise Retryable(f"{response.status_code} without JSON from the regulator's node") from None
        if response.status_code == 200 and isinstance(body, dict) and isinstance(body.get("accepted"), int):
            return 200, body
        expected = _expected(body)
        if response.status_code == 409 and expected is not None and _error_code(body) == "out_of_order":
            return 409, body
        if expected is not None and expected > messages[0]["sequence"]:
            return response.status_code, body  # a refusal after an accepted prefix: that much is sent
        raise Refused(response.status_code, _error_code(body) or "no acceptance")

    async def send_once(self) -> int:
        """Send the next batch (if any) until the node answers it; how many it accepted."""
        messages = await _db(feed_outbox.next_batch)(limit=self.config.batch)
        if not messages:
            return 0
        first, last = messages[0]["sequence"], messages[-1]["sequence"]
        status: int = 0
        answer: Any = None
        async for attempt in self._retrying(f"sending the feed {first}-{last} to the regulator's node"):
            with attempt:
                status, answer = await self._post(messages)
        if status == 200:
            accepted = int(answer["accepted"])
            marked = await _db(feed_outbox.acknowledge)(up_to=accepted)
        else:
            expected = int(_expected(answer) or first)
            marked, again = await _db(feed_outbox.rewind)(expected=expected)
            log.warning(
                "the regulator's node expects message %d (%s): %d marked sent, %d to send again",
                expected,
                _error_code(answer),
                marked,
                again,
            )
            if status != 409:  # refused past what it accepted: the rest waits, retried at the cap
                await self.sleep(self.config.backoff_max_seconds)
        self.sent += marked
        if marked:
            self._last_sent = asyncio.get_running_loop().time()
        return marked

    async def beat_if_idle(self) -> bool:
        """A heartbeat when nothing was sent for HALL_FEED_HEARTBEAT_SECONDS (whether one was written)."""
        now = asyncio.get_running_loop().time()
        if now - self._last_sent < self.config.heartbeat_seconds:
            return False
        self._last_sent = now  # when the feed is off, asked again after the same wait
        if await _db(feed_outbox.heartbeat)() is None:
            return False
        self.heartbeats += 1
        return True

    async def idle(self) -> bool:
        return await self.beat_if_idle()
