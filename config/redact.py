"""Device tokens never reach a log: ``install()`` (called by config.asgi, so every web process has it) puts a
filter on the servers' loggers that writes ``[redacted]`` for the value of every ``token`` query parameter.
"""

from __future__ import annotations

import logging
import re
from typing import Any

REDACTED = "[redacted]"
# token=... in a URL's query string, or at the start of a bare one (gunicorn's %(q)s).
_TOKEN = re.compile(r"(?i)((?:^|[?&])(?:token|device_token)=)[^&\s\"']*")
# Machines may authenticate with ``?token=`` in their socket's URL (machines.consumers); uvicorn logs every
# request and handshake with its query string (access log, "WebSocket <path>" at INFO), as gunicorn does.
SERVER_LOGGERS = ("uvicorn.access", "uvicorn.error", "gunicorn.access", "gunicorn.error", "django.server")


def redact(text: str) -> str:
    return _TOKEN.sub(lambda m: m.group(1) + REDACTED, text)


def _redact_value(value: Any) -> Any:
    return redact(value) if isinstance(value, str) else value


class RedactTokens(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.msg, str):
            record.msg = redact(record.msg)
        if isinstance(record.args, dict):
            record.args = {key: _redact_value(value) for key, value in record.args.items()}
        elif isinstance(record.args, tuple):
            record.args = tuple(_redact_value(value) for value in record.args)
        return True


_FILTER = RedactTokens()


def install() -> None:
    """Put the filter on the servers' loggers (records are filtered by the logger they are logged on)."""
    for name in SERVER_LOGGERS:
        logger = logging.getLogger(name)
        if _FILTER not in logger.filters:
            logger.addFilter(_FILTER)
