"""The serial layer: how SAS characters go over a wire, for the host (the bridge) and for a simulated machine.

SAS runs at 19200 baud, 8 data bits, 1 stop bit, plus a 9th "wake-up" bit that is set on the first byte
of every host message (the address, or a general poll) and clear on every other byte, either direction.

- `UartLine` is a real UART through pyserial. PC UARTs have no 9th bit: the wake-up bit is emulated with
  the parity bit, MARK parity (1) for the byte that carries it and SPACE parity (0) for the others, switched
  per byte (a termios change between writes, after the previous bytes have left: `flush`). Receiving, the
  host expects the 9th bit clear on everything the machine sends, which SPACE parity accepts. Only the host
  side is implemented on a UART (telling the wake-up bit of received bytes would need the parity-error
  marking of termios, PARMRK, which pyserial does not expose): the simulated machine uses the test line.
- `FramedLine` is the test line, over any file descriptor (one end of a pty pair, a socket): every SAS
  character is two bytes, a flag (0x01 wake-up, 0x00 none) then the byte, so the wake-up bit crosses
  explicitly. A flag that is neither is a framing error: counted, and the reader skips a byte to realign.

Both have the same small interface (`Line`): ``send(data, wakeup=...)`` (the wake-up bit on the first byte
only) and ``read(timeout)`` -> ``(byte, wakeup)`` or None when nothing came in time.
"""

from __future__ import annotations

import os
import select
import time
import tty
from typing import Final, Protocol

BAUD: Final = 19200
# One SAS character on the wire: start + 8 data + wake-up/parity + stop = 11 bits, ~0.57 ms at 19200 baud.
CHAR_SECONDS: Final = 11 / BAUD

FLAG_WAKEUP: Final = 0x01
FLAG_NONE: Final = 0x00


class Line(Protocol):
    framing_errors: int

    def send(self, data: bytes, *, wakeup: bool) -> None: ...

    def read(self, timeout: float) -> tuple[int, bool] | None: ...

    def discard(self) -> int: ...

    def fileno(self) -> int: ...

    def close(self) -> None: ...


class FramedLine:
    """The test line: two bytes a character (flag, byte) over a file descriptor the line owns."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.buffer = bytearray()
        self.framing_errors = 0
        os.set_blocking(fd, False)

    @classmethod
    def open(cls, path: str) -> FramedLine:
        fd = os.open(path, os.O_RDWR | os.O_NOCTTY | os.O_NONBLOCK)
        if os.isatty(fd):
            tty.setraw(fd)
        return cls(fd)

    def fileno(self) -> int:
        return self.fd

    def send(self, data: bytes, *, wakeup: bool) -> None:
        out = bytearray()
        for i, byte in enumerate(data):
            out.append(FLAG_WAKEUP if wakeup and i == 0 else FLAG_NONE)
            out.append(byte)
        view = memoryview(bytes(out))
        while view:
            try:
                written = os.write(self.fd, view)
            except BlockingIOError:
                select.select([], [self.fd], [], 1.0)
                continue
            view = view[written:]

    def _fill(self, timeout: float) -> bool:
        ready, _, _ = select.select([self.fd], [], [], max(timeout, 0.0))
        if not ready:
            return False
        try:
            chunk = os.read(self.fd, 4096)
        except (BlockingIOError, InterruptedError):
            return False
        except OSError:  # a pty whose other end closed (EIO)
            time.sleep(min(timeout, 0.05))
            return False
        if not chunk:
            time.sleep(min(timeout, 0.05))
            return False
        self.buffer += chunk
        return True

    def read(self, timeout: float) -> tuple[int, bool] | None:
        deadline = time.monotonic() + timeout
        while True:
            while len(self.buffer) >= 2:
                flag = self.buffer[0]
                if flag not in (FLAG_WAKEUP, FLAG_NONE):
                    self.framing_errors += 1
                    del self.buffer[0]
                    continue
                byte = self.buffer[1]
                del self.buffer[:2]
                return byte, flag == FLAG_WAKEUP
            left = deadline - time.monotonic()
            if not self._fill(max(left, 0.0)) and left <= 0:
                return None

    def discard(self) -> int:
        """Drop whatever is waiting (a late or unsolicited answer); the characters dropped."""
        while self._fill(0):
            pass
        dropped = len(self.buffer) // 2
        self.buffer.clear()
        return dropped

    def close(self) -> None:
        os.close(self.fd)


class UartLine:
    """A real serial port: 19200 8N1 with the wake-up bit as MARK/SPACE parity (host side)."""

    def __init__(self, port: str, baudrate: int = BAUD) -> None:
        """`port`: a device path, or a pyserial URL (``loop://``: the tests, no port needed)."""
        import serial  # pyserial: only where there is a real port

        self._serial_mod = serial
        self.port = serial.serial_for_url(
            port,
            baudrate=baudrate,
            bytesize=serial.EIGHTBITS,
            parity=serial.PARITY_SPACE,
            stopbits=serial.STOPBITS_ONE,
            timeout=0,
        )
        self.framing_errors = 0

    def fileno(self) -> int:
        return int(self.port.fileno())

    def send(self, data: bytes, *, wakeup: bool) -> None:
        serial = self._serial_mod
        if wakeup and data:
            self.port.parity = serial.PARITY_MARK
            self.port.write(data[:1])
            self.port.flush()  # the address byte leaves with its 9th bit set before parity changes
            self.port.parity = serial.PARITY_SPACE
            data = data[1:]
        if data:
            self.port.write(data)
            self.port.flush()

    def read(self, timeout: float) -> tuple[int, bool] | None:
        self.port.timeout = max(timeout, 0.0)
        got = self.port.read(1)
        return (got[0], False) if got else None

    def discard(self) -> int:
        waiting = int(self.port.in_waiting)
        self.port.reset_input_buffer()
        return waiting

    def close(self) -> None:
        self.port.close()


def open_line(spec: str) -> Line:
    """``uart:/dev/ttyS0`` (a real port), ``framed:/dev/pts/N`` (the test line on a path), ``fd:N``."""
    kind, _, where = spec.partition(":")
    if kind == "uart":
        return UartLine(where)
    if kind == "framed":
        return FramedLine.open(where)
    if kind == "fd":
        return FramedLine(int(where))
    raise ValueError(f"unknown line {spec!r}: uart:PATH, framed:PATH or fd:N")


def make_pty() -> tuple[int, str]:
    """A pty pair in raw mode: the master's fd (kept by the caller) and the slave's path (for the other)."""
    master, slave = os.openpty()
    tty.setraw(master)
    tty.setraw(slave)
    path = os.ttyname(slave)
    # The slave stays open in this process too: a pty whose slave has no opener makes the master read EIO.
    return master, path
