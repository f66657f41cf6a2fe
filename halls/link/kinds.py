"""Every kind of message on the link: one list, as halls.eventtypes is for events."""

from enum import StrEnum


class LinkKind(StrEnum):
    # venue -> central (the outbox)
    HELLO = "link.hello"  # a venue's first message: its software version and clock (nothing else)
    # central -> venue (streams)
    NOTICE = "link.notice"  # a message for a venue's operator (credential rotated, link paused)
