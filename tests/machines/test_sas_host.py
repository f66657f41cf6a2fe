"""machines.sasbridge.host against the simulated machine's logic (machines.sasbridge.egm.Egm) in one
process, through a line that hands each host message to the machine and its answer back at once: the SAS
cycle's decisions, deterministic and fast (the real processes over a pty: tests/e2e/test_sas_bridge.py).
No Django."""

from __future__ import annotations

import collections
from typing import Any

from machines import sas
from machines.sasbridge.counters import Counters
from machines.sasbridge.egm import Egm
from machines.sasbridge.gate import PlayGate
from machines.sasbridge.host import SasHost, Timing

LEVELS = [("Mayor", 200_000), ("Menor", 20_000)]


class DirectLine:
    """The machine answers on the spot; `drop_next` loses the next answer (a timeout on the wire)."""

    framing_errors = 0

    def __init__(self, egm: Egm, clock: list[float]) -> None:
        self.egm, self.clock = egm, clock
        self.inbox: collections.deque[int] = collections.deque()
        self.drop_next = 0

    def send(self, data: bytes, *, wakeup: bool) -> None:
        assert wakeup  # every host message starts with the wake-up bit
        answer = self.egm.answer(data, self.clock[0])
        if answer is None:
            return
        if self.drop_next:
            self.drop_next -= 1
            return
        self.inbox.extend(answer)

    def read(self, timeout: float) -> tuple[int, bool] | None:
        return (self.inbox.popleft(), False) if self.inbox else None

    def discard(self) -> int:
        n = len(self.inbox)
        self.inbox.clear()
        return n

    def fileno(self) -> int:
        return -1

    def close(self) -> None:
        pass


class Rig:
    def __init__(self, *, welcomed: bool = True) -> None:
        self.clock = [1000.0]
        self.egm = Egm(address=1, denom_cents=20, seed=7)
        self.line = DirectLine(self.egm, self.clock)
        self.sent: list[dict[str, Any]] = []
        self.once: set[str] = set()
        self.counters = Counters()
        self.gate = PlayGate(5.0, self.clock[0])  # the hall's word on play (LP 0x01/0x02)
        if welcomed:
            self.gate.welcomed("in_service", "")
        self.host = SasHost(
            self.line,
            address=1,
            denom_cents=20,
            group=1,
            asset="M-1",
            emit=self.emit,
            remember=self.remember,
            counters=self.counters,
            timing=Timing(meters_every=5.0, levels_stale=1.0),
            gate=self.gate,
        )

    def emit(self, message: dict[str, Any], once: str | None = None) -> int:
        if once is not None and not self.remember(once):
            return 0
        self.sent.append(message)
        return len(self.sent)

    def remember(self, key: str) -> bool:
        if key in self.once:
            return False
        self.once.add(key)
        return True

    def run(self, seconds: float, *, hall: bool = True, step: float = 0.01) -> None:
        end = self.clock[0] + seconds
        while self.clock[0] < end:
            if hall:
                self.host.set_levels(LEVELS)
                self.host.levels_at = self.clock[0]
            self.egm.tick(self.clock[0])
            self.host.cycle(self.clock[0])
            self.clock[0] += step

    def count(self, name: str) -> int:
        return int(self.counters.snapshot()["counters"].get(name, 0))

    def of(self, kind: str) -> list[dict[str, Any]]:
        return [m for m in self.sent if m["type"] == kind]


def test_every_game_is_one_play_and_the_meters_agree() -> None:
    rig = Rig()
    rig.egm.command({"cmd": "play", "count": 200, "every": 0.05}, rig.clock[0], None)  # type: ignore[arg-type]
    rig.run(20)
    plays = rig.of("play")
    assert len(plays) == 200 == rig.egm.games_played
    assert sum(int(p["bet"].replace(".", "")) for p in plays) == rig.egm.coin_in * 20
    last = rig.of("meters")[-1]
    assert last["games_played"] == 200 and last["coin_in"] == f"{rig.egm.coin_in * 20 / 100:.2f}"
    assert rig.count("meter_mismatch") == 0


def test_a_lost_answer_is_asked_again_and_the_machine_sends_the_same_exception() -> None:
    rig = Rig()
    rig.egm.command({"cmd": "play", "count": 50, "every": 0.05}, rig.clock[0], None)  # type: ignore[arg-type]
    for _ in range(30):
        rig.run(0.1)
        rig.line.drop_next = 1
    rig.run(5)
    assert len(rig.of("play")) == 50 == rig.egm.games_played
    assert rig.egm.stats["implied_nack"] >= 1
    assert rig.count("no_answer") >= 1


def test_a_hit_reported_twice_is_one_hit_and_the_hand_pay_resets_on_request() -> None:
    rig = Rig()
    rig.egm.command({"cmd": "play", "count": 5, "every": 0.05}, rig.clock[0], None)  # type: ignore[arg-type]
    rig.run(1)
    rig.egm.command({"cmd": "hit", "level": 2, "twice": True}, rig.clock[0], None)  # type: ignore[arg-type]
    rig.egm.command({"cmd": "play", "count": 1}, rig.clock[0], None)  # type: ignore[arg-type]
    rig.run(1)
    assert [h["level"] for h in rig.of("hit")] == ["Menor"]
    assert rig.count("hit_duplicate") == 1
    assert rig.host.handpay is not None and rig.egm.handpay is not None
    rig.host.request_handpay_reset()
    rig.run(0.5)
    assert rig.egm.handpay is None and rig.egm.jackpot_cents == 20_000
    assert rig.count("handpay_resets") == 1 and rig.count("handpay_reset_reported") == 1


def test_a_hit_of_a_level_the_machine_is_not_linked_to_is_not_reported() -> None:
    rig = Rig()
    rig.egm.levels = {1: 100, 2: 200, 3: 300}  # the machine knows a third level the hall never sent
    rig.egm.command({"cmd": "hit", "level": 3}, rig.clock[0], None)  # type: ignore[arg-type]
    rig.egm.command({"cmd": "play", "count": 1}, rig.clock[0], None)  # type: ignore[arg-type]
    rig.run(1)
    assert rig.of("hit") == []
    assert rig.count("hit_unlinked_level") == 1


def test_no_broadcast_from_the_hall_the_machine_locks_and_unlocks_when_it_returns() -> None:
    rig = Rig()
    rig.run(1)
    assert rig.egm.levels == {1: 200_000, 2: 20_000}
    rig.run(5.5, hall=False)  # the hall's levels go stale after 1 s: the bridge stops broadcasting
    assert not rig.egm.link_locked
    rig.run(1.0, hall=False)
    assert rig.egm.link_locked and rig.count("machine_link_lost") == 1
    rig.run(0.5)
    assert not rig.egm.link_locked


def test_a_meter_going_backwards_is_refused_and_counted_once() -> None:
    rig = Rig()
    rig.egm.command({"cmd": "play", "count": 20, "every": 0.05}, rig.clock[0], None)  # type: ignore[arg-type]
    rig.run(8)
    before = len(rig.of("meters"))
    rig.egm.command({"cmd": "backwards"}, rig.clock[0], None)  # type: ignore[arg-type]
    rig.run(6)
    assert rig.count("meter_backwards") == 1
    assert all(m["coin_in"] != "0.00" for m in rig.of("meters")[before:])


def test_corrupted_and_truncated_answers_are_counted_and_read_again() -> None:
    rig = Rig()
    rig.run(0.1)
    rig.egm.command({"cmd": "corrupt", "count": 1}, rig.clock[0], None)  # type: ignore[arg-type]
    rig.egm.command({"cmd": "truncate", "count": 1}, rig.clock[0], None)  # type: ignore[arg-type]
    rig.host.next_meters = 0
    rig.run(0.5)
    assert rig.count("bad_crc") == 1 and rig.count("truncated") == 1
    assert rig.count("meters_read") >= 2
    assert sas.check_crc(sas.frame(1, 0x2F, b"\x00"))


def test_a_restarted_bridge_learns_the_pending_hand_pay_and_still_resets_it() -> None:
    rig = Rig()
    rig.egm.command({"cmd": "hit", "level": 1}, rig.clock[0], None)  # type: ignore[arg-type]
    rig.run(0.5)
    rig.egm.command({"cmd": "play", "count": 1}, rig.clock[0], None)  # type: ignore[arg-type]
    rig.run(1)
    assert rig.egm.handpay is not None and len(rig.of("hit")) == 1
    restarted = SasHost(
        rig.line,
        address=1,
        denom_cents=20,
        group=1,
        asset="M-1",
        emit=rig.emit,
        remember=rig.remember,
        counters=rig.counters,
    )
    rig.host = restarted
    rig.clock[0] += 2.0  # the reboot: the machine saw its line down
    rig.run(0.2)
    assert restarted.handpay is not None and restarted.hit_reported_unpaid
    restarted.request_handpay_reset()
    rig.run(0.3)
    assert rig.egm.handpay is None
    assert len(rig.of("hit")) == 1


def test_a_bridge_restarted_in_the_middle_of_a_game_still_makes_its_play() -> None:
    rig = Rig()
    store: dict[str, str] = {}
    rig.host.save = store.__setitem__
    rig.egm.command({"cmd": "play", "count": 1, "every": 1.0}, rig.clock[0], None)  # type: ignore[arg-type]
    rig.run(0.2)  # the game has started (its 0x7E read), not ended
    assert rig.host.open_game is not None and store["open_game"]
    restarted = SasHost(
        rig.line,
        address=1,
        denom_cents=20,
        group=1,
        asset="M-1",
        emit=rig.emit,
        remember=rig.remember,
        counters=rig.counters,
        load=store.get,
        save=store.__setitem__,
    )
    rig.host = restarted
    rig.clock[0] += 2.0
    rig.run(1.0)
    assert len(rig.of("play")) == 1 and store["open_game"] == ""


def test_the_hall_lock_disables_play_on_the_machine_and_the_unlock_enables_it() -> None:
    rig = Rig()
    rig.egm.command({"cmd": "play", "count": 400, "every": 0.05}, rig.clock[0], None)  # type: ignore[arg-type]
    rig.run(2)
    assert rig.host.machine_enabled is True and not rig.egm.disabled
    assert rig.egm.stats["startups_again"] == 1  # it was enabled: the startup changed nothing
    rig.gate.locked("operator")
    rig.run(0.05)
    assert rig.egm.disabled and rig.count("machine_disables") == 1
    games = rig.egm.games_played
    rig.run(3)
    assert rig.egm.games_played == games and rig.egm.plays_left > 0  # it plays no more
    assert not rig.egm.link_locked  # the broadcast goes on: the lock-out is the host's, not the link's
    rig.gate.unlocked()
    rig.run(0.05)
    assert not rig.egm.disabled and rig.count("machine_enables") == 2
    rig.run(30)
    plays = rig.of("play")
    assert len(plays) == 400 == rig.egm.games_played
    assert sum(int(p["bet"].replace(".", "")) for p in plays) == rig.egm.coin_in * 20
    assert rig.count("meter_mismatch") == 0
    assert rig.egm.stats["shutdowns"] == 1 and rig.egm.stats["startups"] == 1


def test_a_hand_pay_and_a_hall_lock_are_lifted_each_by_its_own_message() -> None:
    rig = Rig()
    rig.egm.command({"cmd": "hit", "level": 2}, rig.clock[0], None)  # type: ignore[arg-type]
    rig.egm.command({"cmd": "play", "count": 1}, rig.clock[0], None)  # type: ignore[arg-type]
    rig.run(1)
    assert rig.egm.handpay is not None and rig.host.handpay is not None
    rig.gate.locked("operator")
    rig.egm.command({"cmd": "play", "count": 20, "every": 0.05}, rig.clock[0], None)  # type: ignore[arg-type]
    rig.run(0.5)
    assert rig.egm.disabled
    rig.host.request_handpay_reset()  # the hand pay paid: its lock lifted, the hall's lock holds
    rig.run(2)
    assert rig.egm.handpay is None and rig.egm.disabled and rig.egm.games_played == 1
    rig.gate.unlocked()
    rig.run(3)
    assert not rig.egm.disabled and rig.egm.games_played == 21
    assert len(rig.of("hit")) == 1


def test_the_hall_in_service_again_leaves_a_hand_pay_pending_to_its_reset() -> None:
    rig = Rig()
    rig.egm.command({"cmd": "hit", "level": 1}, rig.clock[0], None)  # type: ignore[arg-type]
    rig.egm.command({"cmd": "play", "count": 1}, rig.clock[0], None)  # type: ignore[arg-type]
    rig.run(1)
    assert rig.egm.handpay is not None
    rig.gate.locked("hand_pay")
    rig.run(0.2)
    rig.gate.unlocked()
    rig.egm.command({"cmd": "play", "count": 5, "every": 0.05}, rig.clock[0], None)  # type: ignore[arg-type]
    rig.run(1)
    assert not rig.egm.disabled and rig.egm.handpay is not None and rig.egm.games_played == 1
    rig.host.request_handpay_reset()
    rig.run(1)
    assert rig.egm.handpay is None and rig.egm.games_played == 6
    assert len(rig.of("hit")) == 1


def test_the_hall_lost_past_its_window_disables_play_until_it_says_in_service() -> None:
    rig = Rig()
    rig.egm.command({"cmd": "play", "count": 10**6, "every": 0.05}, rig.clock[0], None)  # type: ignore[arg-type]
    rig.run(1)
    rig.gate.lost(rig.clock[0])
    rig.run(4.9)  # within the window the machine plays on
    assert not rig.egm.disabled and rig.count("machine_disables") == 0
    rig.run(0.2)
    assert rig.egm.disabled and rig.count("machine_disables_hall_lost") == 1
    games = rig.egm.games_played
    rig.run(2)
    assert rig.egm.games_played == games
    rig.gate.welcomed("locked", "operator")  # back, but locked by the operator meanwhile: still disabled
    rig.run(1)
    assert rig.egm.disabled and rig.count("machine_enables") == 1
    rig.gate.welcomed("in_service", "")
    rig.run(1)
    assert not rig.egm.disabled and rig.egm.games_played > games


def test_before_the_hall_says_anything_the_machine_is_left_as_it_is_until_the_window() -> None:
    rig = Rig(welcomed=False)
    rig.egm.disabled = True  # as a bridge that disabled it left it, before this one started
    rig.run(4.9)
    assert rig.egm.disabled and rig.egm.stats["startups"] == rig.egm.stats["shutdowns_again"] == 0
    rig.run(0.2)  # the hall never came: the lock-out is said again (the machine ACKs, nothing changes)
    assert rig.egm.disabled and rig.egm.stats["shutdowns_again"] == 1
    rig.gate.welcomed("in_service", "")
    rig.run(0.1)
    assert not rig.egm.disabled


def test_a_machine_that_comes_back_after_not_answering_is_told_again() -> None:
    rig = Rig()
    rig.gate.welcomed("locked", "operator")
    rig.run(0.2)
    assert rig.egm.disabled and rig.count("machine_disables") == 1
    rig.egm.command({"cmd": "mute", "on": True}, rig.clock[0], None)  # type: ignore[arg-type]
    rig.run(0.5)
    rig.egm.disabled = False  # a power cycle that lost it
    rig.egm.command({"cmd": "mute", "on": False}, rig.clock[0], None)  # type: ignore[arg-type]
    rig.run(0.2)
    assert rig.egm.disabled and rig.count("machine_disables") == 2


def test_a_machine_that_nacks_the_lock_out_is_asked_again_later() -> None:
    rig = Rig()
    rig.gate.welcomed("locked", "operator")
    real = rig.egm.answer

    def nack_shutdown(message: bytes, now: float) -> bytes | None:
        if len(message) > 1 and message[1] == sas.LP_SHUTDOWN and rig.clock[0] < 1001.0:
            return bytes([rig.egm.address | sas.NACK_BIT])
        return real(message, now)

    rig.egm.answer = nack_shutdown  # type: ignore[method-assign]
    rig.run(0.5)
    assert not rig.egm.disabled and rig.count("play_control_nack") == 1
    rig.run(1.0)
    assert rig.egm.disabled and rig.count("play_control_nack") == 1
