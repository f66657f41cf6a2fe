"""The SAS host bridge (issue 31): a program beside one gaming machine that speaks SAS to it on a serial line
and the product's machine protocol (machines.protocol) to the hall's gateway over its WebSocket.

No Django here (an import-linter contract holds it): the bridge runs on the interface board, not in the hall.

- line: the serial layer, one module: a real UART (pyserial, 9-bit wake-up by mark/space parity) and a
  test line over a pty or socket that carries the wake-up bit explicitly.
- journal: the bridge's local journal (sqlite3): every message read from the machine, with its seq, kept
  until the hall has acknowledged it.
- host: the SAS polling cycle (machines.sas frames).
- hall: the WebSocket side (hello, acks, broadcasts, lock and unlock).
- gate: whether the machine may play as the hall says it (its lock of any reason, its unlock, the hall out of
  reach past a window), which the host passes to the machine as SAS shutdown/startup (LP 0x01/0x02).
- bridge: the program (``python -m machines.sasbridge.bridge``).
- egm: a simulated SAS gaming machine (``python -m machines.sasbridge.egm``) for tests, bench and demo.
"""
