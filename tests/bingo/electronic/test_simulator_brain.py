"""The simulated terminal's decisions (bingo.electronic.simulator.TerminalBrain), driven by a fake clock and
hand-made answers and frames: no server. The runs against a real server are test_simulator_live.py and the
demo's test."""

from __future__ import annotations

import time
from decimal import Decimal
from typing import Any

from bingo.electronic.simulator import (
    Call,
    Report,
    SimConfig,
    TerminalBrain,
    TerminalProfile,
)

ROOM, OWN = "room.7", "terminal.3"


def brain(**config: Any) -> TerminalBrain:
    profile = TerminalProfile(index=0, device_id=11, token="t0k3n", card_number="1234567890123452")
    return TerminalBrain(profile, SimConfig(**{"buy_probability": 1.0, **config}), now=0.0)


def snapshot(*, seqs: tuple[int, int] = (5, 2), selling: int | None = 40, held: int = 0) -> dict[str, Any]:
    return {
        "rules": {"purchase_sizes": [1, 2, 3], "max_cards": 6, "card_price": "0.50"},
        "selling": None
        if selling is None
        else {
            "game": selling,
            "number": 4,
            "sales_close_at": time.time() + 30,
            "card_price": "0.50",
            "mine": held,
        },
        "drawing": None,
        "card": {
            "balance": "20.00",
            "games": [{"game": selling, "cards": [{"card": n} for n in range(held)]}] if selling else [],
        },
        "seqs": {ROOM: seqs[0], OWN: seqs[1]},
    }


def start(b: TerminalBrain, snap: dict[str, Any]) -> list[Call]:
    """hello, card, snapshot answered; what the brain asks next."""
    calls = b.on_connect(0.0)
    assert [c.kind for c in calls] == ["hello"]
    calls = b.on_answer(calls[0], 200, {"ok": True}, 0.1)
    assert [c.kind for c in calls] == ["card"]
    calls = b.on_answer(calls[0], 200, {"balance": "20.00"}, 0.2)
    assert [c.kind for c in calls] == ["snapshot"]
    after = b.on_answer(calls[0], 200, snap, 0.3)
    assert b.ready
    return after


def frame(stream: str, seq: int, kind: str, **data: Any) -> dict[str, Any]:
    return {"stream": stream, "seq": seq, "type": kind, "at": time.time() - 0.05, "data": data}


def purchase_of(calls: list[Call]) -> Call:
    (call,) = [c for c in calls if c.kind == "purchase"]
    return call


def test_buys_once_per_game_from_the_allowed_sizes() -> None:
    b = brain(buy_spread=0.0, sizes=(2, 4))
    call = purchase_of(start(b, snapshot()) + b.tick(1.0))
    assert call.body is not None
    assert call.body["cards"] == 2  # 4 is not a purchase size of the speciality
    assert call.body["game"] == 40
    answer = {"cards": [{"card": 1}, {"card": 2}], "balance": "19.00", "replayed": False}
    assert [c.kind for c in b.on_answer(call, 201, answer, 1.1)] == []
    assert b.tick(2.0) == []  # once per game
    assert b.stats.purchases_ok == 1
    assert b.stats.spent == Decimal("1.00")
    assert b.balance == Decimal("19.00")


def test_a_game_already_bought_in_the_snapshot_is_not_bought_again() -> None:
    b = brain(buy_spread=0.0)
    assert [c.kind for c in start(b, snapshot(held=3)) + b.tick(1.0)] == []


def test_an_unanswered_purchase_goes_again_with_the_same_key() -> None:
    b = brain(buy_spread=0.0, purchase_timeout=5.0, retry_after=1.0)
    first = purchase_of(start(b, snapshot()) + b.tick(1.0))
    assert b.on_answer(first, 503, None, 1.2) == []  # busy: again after retry_after
    again = purchase_of(b.tick(2.3))
    assert again.key == first.key
    assert again.body == first.body
    assert b.tick(3.0) == []  # in flight: no third try before purchase_timeout
    third = purchase_of(b.tick(7.4))
    assert third.key == first.key
    b.on_answer(third, 200, {"cards": [{"card": 1}], "balance": "19.50", "replayed": True}, 7.5)
    assert b.stats.purchases_sent == 1
    assert b.stats.purchase_retries == 2
    assert b.stats.purchases_replayed == 1
    assert b.idle


def test_a_final_refusal_stops_buying_for_that_game() -> None:
    b = brain(buy_spread=0.0)
    call = purchase_of(start(b, snapshot()) + b.tick(1.0))
    b.on_answer(call, 409, {"code": "sales_closed", "detail": "closed"}, 1.1)
    assert b.tick(5.0) == []
    assert b.stats.refused_codes == {"sales_closed": 1}


def test_a_gap_on_a_stream_reloads_the_snapshot_and_counts_the_lost_messages() -> None:
    b = brain(buy_probability=0.0)
    start(b, snapshot(selling=None))
    assert b.on_frame(frame(ROOM, 6, "egame.ball", game=39, ordinal=1, ball=17), 1.0, time.time()) == []
    calls = b.on_frame(frame(ROOM, 9, "egame.ball", game=39, ordinal=4, ball=20), 2.0, time.time())
    assert [c.kind for c in calls] == ["snapshot"]
    assert b.stats.lost == 2
    assert b.stats.gaps == 1
    b.on_answer(calls[0], 200, snapshot(seqs=(9, 2), selling=None), 2.1)
    assert b.stats.recovered == 1
    assert b.stats.balls == 2
    assert len(b.stats.ball_delays) == 2
    assert all(0 < d < 1 for d in b.stats.ball_delays)
    # An event the snapshot already showed is not applied twice.
    b.on_frame(frame(ROOM, 9, "egame.ball", game=39, ordinal=4, ball=20), 2.2, time.time())
    assert b.stats.balls == 2


def test_a_head_ahead_of_the_last_event_reloads_the_snapshot() -> None:
    b = brain(buy_probability=0.0)
    start(b, snapshot(selling=None))
    assert b.on_frame({"type": "stream.head", "stream": OWN, "head": 3}, 1.0, time.time()) == []
    assert b.on_frame({"type": "stream.head", "stream": ROOM, "head": 6}, 1.0, time.time()) == []
    # The room's event arrives within the grace: no snapshot for it; the own stream's never does.
    b.on_frame(frame(ROOM, 6, "egame.ball", game=39, ordinal=1, ball=17), 1.2, time.time())
    assert b.tick(1.5) == []
    calls = b.tick(2.0)
    assert [c.kind for c in calls] == ["snapshot"]
    assert b.stats.heads_ahead == 1
    assert b.on_frame({"type": "stream.head", "stream": ROOM, "head": 5}, 2.1, time.time()) == []
    assert b.tick(3.5) == []


def test_own_messages_that_change_nothing_are_counted() -> None:
    b = brain(buy_probability=0.0)
    start(b, snapshot(selling=None))
    b.on_frame(frame(OWN, 3, "terminal.balance", terminal=3, balance="20.00"), 1.0, time.time())
    assert b.stats.idle_messages == 1
    b.on_frame(
        frame(
            OWN,
            4,
            "terminal.prize",
            terminal=3,
            game=39,
            code="linea",
            ordinal=12,
            card=5,
            amount="1.50",
            balance="21.50",
        ),
        1.1,
        time.time(),
    )
    assert b.stats.idle_messages == 1
    assert b.stats.prizes == 1
    assert b.stats.prize_amount == Decimal("1.50")
    assert b.balance == Decimal("21.50")


def test_the_balance_check_compares_what_it_saw_with_the_server() -> None:
    b = brain(buy_spread=0.0)
    call = purchase_of(start(b, snapshot()) + b.tick(1.0))
    b.on_answer(call, 201, {"cards": [{"card": 1}], "balance": "19.50"}, 1.1)
    b.on_frame(
        frame(
            OWN,
            3,
            "terminal.prize",
            terminal=3,
            game=40,
            code="bingo",
            ordinal=40,
            card=1,
            amount="4.00",
            balance="23.50",
        ),
        9.0,
        time.time(),
    )
    report = Report.from_brains([b], seconds=10)
    report.check_balances([b], {11: Decimal("23.50")})
    assert (report.balance_checked, report.balance_mismatched) == (1, 0)
    report.check_balances([b], {11: Decimal("25.50")})
    assert report.balance_mismatched == 1
    assert report.balance_unexplained == Decimal("2.00")
    assert Report.from_json(report.to_json()).to_json() == report.to_json()


def test_a_purchase_goes_as_a_frame_on_the_open_socket_and_its_answer_comes_back_by_key() -> None:
    """As the page buys (bingo.electronic.purchase_frames): the other calls stay on HTTP."""
    import asyncio
    import json

    from bingo.electronic.simulator import PURCHASE_ANSWER, _Caller

    class Socket:
        def __init__(self) -> None:
            self.sent: list[dict[str, Any]] = []

        async def send(self, text: str) -> None:
            self.sent.append(json.loads(text))

    class Http:
        def __init__(self) -> None:
            self.paths: list[str] = []

        async def request(self, method: str, path: str, body: bytes = b"") -> tuple[int, Any]:
            self.paths.append(path)
            return 200, {"ok": True}

        async def close(self) -> None:
            pass

    b = brain(buy_spread=0.0)
    call = purchase_of(start(b, snapshot()) + b.tick(1.0))

    async def main() -> tuple[Socket, Http]:
        socket, http = Socket(), Http()
        caller = _Caller(b, http, lambda: 1.5, asyncio.Event())  # type: ignore[arg-type]
        caller.opened(socket)
        caller.put([call])
        await asyncio.sleep(0.01)
        assert socket.sent == [{"type": "purchase", **(call.body or {})}]
        answer = {"cards": [{"card": 1}, {"card": 2}], "balance": "19.00", "replayed": False}
        caller.on_answer_frame({"type": PURCHASE_ANSWER, "key": "another", "status": 201, "result": {}})
        caller.on_answer_frame({"type": PURCHASE_ANSWER, "key": call.key, "status": 201, "result": answer})
        caller.closed()
        caller.put([call])  # the socket closed: over HTTP
        await asyncio.sleep(0.01)
        await caller.close()
        return socket, http

    socket, http = asyncio.run(main())
    assert b.stats.purchases_ok == 1 and b.balance == Decimal("19.00")
    assert http.paths == ["/api/electronic/terminal/purchase/"]
    assert len(socket.sent) == 1
