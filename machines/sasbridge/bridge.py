"""The SAS host bridge as a program: ``python -m machines.sasbridge.bridge --line uart:/dev/ttyS0 ...``.

Three threads: the SAS cycle (machines.sasbridge.host) on the serial line, the hall link
(machines.sasbridge.hall) on the gateway's WebSocket, and /metrics + /status on 127.0.0.1 (when a port is
given). The journal (machines.sasbridge.journal) stands between them: the SAS side appends what it read,
the hall side sends it and marks it done. SIGTERM/SIGINT stop it cleanly; a kill loses nothing the journal
took. Logs are for technicians: frames and counters, never a player's identity (SAS carries none).

The device token: ``--token-file PATH`` (the installer's way: a file of the token alone, readable by its
owner only, mode 0600, refused otherwise as ssh refuses a private key others can read), or ``--token T``
(tests and development: a command line is visible to every user of the board in ``ps``).

Play control: the hall's lock (any reason) disables play on the machine (LP 0x01) and its unlock, or a
welcome in service, enables it (LP 0x02); the hall out of reach for more than ``--hall-lost-after`` seconds
(5 by default, the gateway's own offline window) disables it too, until the hall is back and says the
machine is in service (machines.sasbridge.gate).
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import stat
import threading
import time
from typing import Any
from urllib.parse import quote

from machines.sasbridge.counters import Counters, serve_metrics
from machines.sasbridge.gate import PlayGate
from machines.sasbridge.hall import HallLink
from machines.sasbridge.host import SasHost, Timing
from machines.sasbridge.journal import Journal
from machines.sasbridge.line import open_line

log = logging.getLogger("sasbridge")


def machine_url(base: str, asset: str, token: str, venue: int | None) -> str:
    url = f"{base.rstrip('/')}/ws/machines/{quote(asset, safe='')}/?token={quote(token, safe='')}"
    return url + (f"&venue={venue}" if venue is not None else "")


def batch_url(base: str, venue: int | None) -> str:
    return f"{base}/api/gateway/messages/" + (f"?venue={venue}" if venue is not None else "")


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        description="SAS host bridge: one machine on a serial line, the hall's gateway"
    )
    p.add_argument("--line", required=True, help="uart:/dev/ttyS0, framed:/dev/pts/N or fd:N")
    p.add_argument("--address", type=int, default=1, help="the machine's SAS address (1-127)")
    p.add_argument("--denom-cents", type=int, required=True, help="the machine's accounting denomination")
    p.add_argument("--group", type=int, default=1, help="the SAS progressive group of the link")
    p.add_argument("--hall", required=True, help="the gateway's base URL, ws://host:port")
    p.add_argument("--asset", required=True)
    token = p.add_mutually_exclusive_group(required=True)
    token.add_argument(
        "--token-file",
        help="a file holding the machine's device token, readable by its owner only (chmod 600)",
    )
    token.add_argument(
        "--token",
        help="the device token itself, for tests and development: a command line shows in ps "
        "(never logged; --token=T when it starts with -)",
    )
    p.add_argument("--venue", type=int, default=None)
    p.add_argument("--software-version", default="SAS-BRIDGE-1.0")
    p.add_argument("--journal", required=True, help="the journal's sqlite file")
    p.add_argument("--metrics-port", type=int, default=0)
    p.add_argument("--poll-every", type=float, default=0.04)
    p.add_argument("--response-timeout", type=float, default=0.05)
    p.add_argument("--broadcast-every", type=float, default=0.25)
    p.add_argument("--levels-stale", type=float, default=1.0)
    p.add_argument("--meters-every", type=float, default=30.0)
    p.add_argument("--heartbeat-every", type=float, default=1.0)
    p.add_argument(
        "--hall-lost-after",
        type=float,
        default=5.0,
        help="seconds without the hall before play is disabled on the machine (LP 01) until the hall "
        "says it is in service again (default 5, the gateway's own offline window)",
    )
    p.add_argument("--no-batches", action="store_true", help="send a backlog on the socket only")
    p.add_argument("--log-level", default="INFO")
    args = p.parse_args(argv)
    if args.token_file is not None:
        try:
            args.token = read_token_file(args.token_file)
        except TokenFileError as exc:
            p.error(str(exc))
    if not args.hall_lost_after > 0:
        p.error("--hall-lost-after must be a number of seconds above 0")
    return args


class TokenFileError(ValueError):
    pass


def read_token_file(path: str) -> str:
    """The token in `path` (surrounding whitespace dropped). Refused, as ssh refuses a private key others can
    read: a file that is not a regular file, or whose mode lets its group or others in; an empty one."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError as exc:
        raise TokenFileError(f"cannot open the token file {path!r}: {exc.strerror}") from exc
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise TokenFileError(f"the token file {path!r} is not a regular file")
        mode = stat.S_IMODE(info.st_mode)
        if mode & 0o077:
            raise TokenFileError(
                f"permissions {mode:04o} for the token file {path!r} are too open: it must not be "
                f"accessible by others (its group or anyone else); run chmod 600 {path!r}"
            )
        with os.fdopen(fd, "rb", closefd=False) as handle:
            raw = handle.read(4096)
    finally:
        os.close(fd)
    try:
        token = raw.decode().strip()
    except UnicodeDecodeError as exc:
        raise TokenFileError(f"the token file {path!r} is not UTF-8 text") from exc
    if not token or any(ch.isspace() for ch in token):
        raise TokenFileError(f"the token file {path!r} must hold the token alone, on one line")
    return token


def sas_loop(host: SasHost, stop: threading.Event, every: float) -> None:
    next_at = time.monotonic()
    while not stop.is_set():
        now = time.monotonic()
        try:
            host.cycle(now)
        except Exception:  # one bad cycle must not end the bridge
            host.counters.add("cycle_errors")
            log.exception("SAS cycle failed")
        next_at = max(next_at + every, time.monotonic())
        stop.wait(max(0.0, next_at - time.monotonic()))


def main(argv: list[str] | None = None) -> None:
    args = parse(argv)
    logging.basicConfig(level=args.log_level, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    counters = Counters()
    gate = PlayGate(args.hall_lost_after, time.monotonic())
    journal = Journal(args.journal)
    line = open_line(args.line)
    timing = Timing(
        poll_every=args.poll_every,
        response_timeout=args.response_timeout,
        broadcast_every=args.broadcast_every,
        levels_stale=args.levels_stale,
        meters_every=args.meters_every,
    )
    link: HallLink | None = None

    def emit(message: dict[str, Any], once: str | None = None) -> int:
        seq = journal.append(message, once)
        if seq and link is not None:
            link.notify()
        return seq

    host = SasHost(
        line,
        address=args.address,
        denom_cents=args.denom_cents,
        group=args.group,
        asset=args.asset,
        emit=emit,
        remember=journal.add_once,
        counters=counters,
        timing=timing,
        load=journal.fact,
        save=journal.set_fact,
        gate=gate,
    )
    url = machine_url(args.hall, args.asset, args.token, args.venue)
    http = args.hall.replace("ws://", "http://", 1).replace("wss://", "https://", 1).rstrip("/")
    link = HallLink(
        url,
        journal,
        host,
        counters,
        software_version=args.software_version,
        heartbeat_every=args.heartbeat_every,
        batch_url="" if args.no_batches else batch_url(http, args.venue),
        device_auth=f"Device {args.asset}:{args.token}",
    )
    stop = threading.Event()

    def extra() -> dict[str, Any]:
        return {
            "journal": journal.counts(),
            "handpay": host.handpay is not None,
            "real_time": host.real_time,
            "machine_enabled": host.machine_enabled,
            "hall_lost": gate.hall_lost(time.monotonic()),
        }

    if args.metrics_port:
        serve_metrics(counters, args.metrics_port, extra)

    def finish(signum: int, frame: Any) -> None:
        stop.set()
        link.stop.set()

    signal.signal(signal.SIGTERM, finish)
    signal.signal(signal.SIGINT, finish)
    hall_thread = threading.Thread(target=link.run, name="hall", daemon=True)
    hall_thread.start()
    log.info("bridge for %s on %s, SAS address %d", args.asset, args.line.partition(":")[0], args.address)
    sas_loop(host, stop, args.poll_every)
    hall_thread.join(3)
    journal.close()
    line.close()


if __name__ == "__main__":
    main()
