"""Every kind of message on the link: one list, as halls.eventtypes is for events."""

from enum import StrEnum


class LinkKind(StrEnum):
    # venue -> central (the outbox)
    # a venue's link process started: {"software": version, "started_at": ISO time} (recorded on VenueLink)
    HELLO = "link.hello"
    # central -> venue (streams)
    # a message for a venue's operator (credential rotated, link paused):
    # {"text": str, "level": "info" | "warning"} (stored in LinkNotice, listed by `manage.py link_notices`)
    NOTICE = "link.notice"
