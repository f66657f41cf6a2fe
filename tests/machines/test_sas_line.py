"""machines.sasbridge.line: the serial layer of the SAS bridge, on a real pty pair (no Django).

The test line carries the wake-up bit of each character explicitly (a flag byte), so a simulated machine
can tell the start of a host message; a flag that is neither is a framing error, counted, and the reader
realigns. The UART line sets MARK parity for the wake-up byte and SPACE for the rest (a pty accepts the
termios settings and passes the bytes, which is what can be checked without a serial port)."""

from __future__ import annotations

import os
from typing import Any

import serial

from machines import sas
from machines.sasbridge.line import FLAG_NONE, FLAG_WAKEUP, FramedLine, UartLine, make_pty, open_line


def test_the_test_line_carries_the_wake_up_bit_of_the_first_byte_only() -> None:
    master, path = make_pty()
    machine, host = FramedLine(master), open_line(f"framed:{path}")
    try:
        poll = sas.encode_selected_meters_request(1, [sas.METER_TOTAL_COIN_IN])
        host.send(poll, wakeup=True)
        got = [machine.read(1.0) for _ in poll]
        assert [c for c in got if c is not None] == [(b, i == 0) for i, b in enumerate(poll)]
        assert machine.read(0.05) is None
        machine.send(b"\x01\x02", wakeup=False)
        assert [host.read(1.0), host.read(1.0)] == [(1, False), (2, False)]
    finally:
        host.close()
        machine.close()


def test_a_bad_flag_is_a_framing_error_and_the_reader_realigns() -> None:
    master, path = make_pty()
    machine, host = FramedLine(master), open_line(f"framed:{path}")
    try:
        os.write(host.fileno(), bytes([0x7E, FLAG_WAKEUP, 0x81, FLAG_NONE, 0x00]))
        assert machine.read(1.0) == (0x81, True)
        assert machine.read(1.0) == (0x00, False)
        assert machine.framing_errors == 1
        machine.send(b"\x05", wakeup=False)
        assert host.discard() == 1  # what nobody asked for is dropped before the next poll
    finally:
        host.close()
        machine.close()


def test_the_uart_line_marks_the_wake_up_byte_by_parity() -> None:
    """On pyserial's loop:// port (a pty refuses mark/space parity's termios flag): each write is recorded
    with the parity the port had when it went out."""
    line = UartLine("loop://")
    sent: list[tuple[str, bytes]] = []
    write = line.port.write

    def recording(data: bytes) -> Any:
        sent.append((line.port.parity, bytes(data)))
        return write(data)

    line.port.write = recording
    try:
        assert line.port.baudrate == 19200
        assert (line.port.bytesize, line.port.stopbits) == (serial.EIGHTBITS, serial.STOPBITS_ONE)
        line.send(bytes([0x01, 0x1C]), wakeup=True)
        line.send(bytes([0x81]), wakeup=True)
        assert sent == [
            (serial.PARITY_MARK, b"\x01"),
            (serial.PARITY_SPACE, b"\x1c"),
            (serial.PARITY_MARK, b"\x81"),
        ]
        assert line.port.parity == serial.PARITY_SPACE  # back to SPACE after the wake-up byte
        # The loop port hears what was sent: read back as bytes whose 9th bit the host does not see.
        assert [line.read(1.0) for _ in range(3)] == [(0x01, False), (0x1C, False), (0x81, False)]
        assert line.read(0.01) is None
    finally:
        line.close()
