"""Identity documents at the door, pure (no Django): what a person shows, read and checked.

`read_document(kind, number, country)` answers a typed `Document` (kind, normalized number, ISO alpha-2
country) or a typed `Refusal` naming the problem; the Django edge (halls.door.texts) turns a refusal into a
sentence in the person's language, never repeating the number. The kinds:

- DNI and NIE: Spain's identity number and foreigner number, their check letter validated by python-stdnum
  (stdnum.es.dni, stdnum.es.nie). Issued by Spain: the country is ES (or left blank). A DNI may also be a
  K, L or M number (a letter, seven digits, the check letter of those seven digits: issued to Spanish
  minors under 14, Spaniards abroad and foreigners without a NIE), which stdnum's DNI refuses: its letter
  is checked with stdnum's DNI check letter of the digits.
- PASSPORT: any state's, by number and issuing state; a plausible number (letters and digits, 5 to 20 of
  them, at least one digit), the state an ISO 3166-1 alpha-2 or alpha-3 code.
- ID_CARD: an EU (EEA, Swiss) national identity card, the same checks, its state one of those. A Spanish
  ID card is the DNI: it is read as one (its check letter validated), so both name the same document.

`lenient_document` is what the door's override (a document the door cannot read) digests: the typed
number normalized, its kind and country as typed, no check at all; never accepted where `read_document`
decides.

`document.key` is the canonical text of a document ("DNI:ES:12345678Z"), what a register's entries are
keyed digests of (`keyed_digest`, HMAC-SHA256 under a secret the caller holds): the product stores no
register's numbers in clear. `age_on(birth, day)` is a person's age in whole years on a day, for the
minor check; a birth date after the day is refused.
"""

from __future__ import annotations

import calendar
import hashlib
import hmac
import re
from dataclasses import dataclass
from datetime import date
from enum import StrEnum

from stdnum.es import dni, nie
from stdnum.exceptions import InvalidChecksum, ValidationError

from halls.door.countries import EU_ID_CARD_STATES, alpha2


class Kind(StrEnum):
    DNI = "DNI"
    NIE = "NIE"
    PASSPORT = "PASSPORT"
    ID_CARD = "ID_CARD"


class Problem(StrEnum):
    """Why a document (or a birth date) is refused."""

    UNKNOWN_KIND = "unknown_kind"  # not one of `Kind`
    BAD_FORMAT = "bad_format"  # wrong characters or length
    BAD_CHECK_LETTER = "bad_check_letter"  # a DNI or NIE whose letter does not match its digits
    UNKNOWN_COUNTRY = "unknown_country"  # not an ISO 3166-1 code
    NOT_SPANISH = "not_spanish"  # a DNI or NIE said to be issued by another state
    NOT_EU_ID_CARD = "not_eu_id_card"  # an identity card of a state outside the EU, EEA and Switzerland
    BIRTH_IN_FUTURE = "birth_in_future"  # a date of birth after the day it is checked on


@dataclass(frozen=True, slots=True)
class Document:
    kind: Kind
    number: str  # normalized: upper case, no blanks, dots or hyphens
    country: str  # ISO 3166-1 alpha-2

    @property
    def key(self) -> str:
        """The canonical text a register's entry digests: the same document always gives the same key."""
        return f"{self.kind.value}:{self.country}:{self.number}"


@dataclass(frozen=True, slots=True)
class Refusal:
    problem: Problem


SPAIN = "ES"
NUMBER_MIN, NUMBER_MAX = 5, 20
_NOISE = re.compile(r"[\s.\-/]")
_PLAUSIBLE = re.compile(r"[A-Z0-9]+")
# A DNI of a Spanish minor under 14 (K), a Spaniard resident abroad (L) or a foreigner without a NIE (M).
_KLM_DNI = re.compile(r"[KLM][0-9]{7}[A-Z]")
_KINDS = {kind.value: kind for kind in Kind}
# Names the register files and the doors may use for a kind, beside its own.
_ALIASES = {"PASAPORTE": Kind.PASSPORT, "IDCARD": Kind.ID_CARD, "ID": Kind.ID_CARD, "TIE": Kind.NIE}


def normalize_number(number: str) -> str:
    """Upper case without blanks, dots, hyphens or slashes: "12.345.678-z" -> "12345678Z"."""
    return _NOISE.sub("", number).upper()


def read_kind(kind: str) -> Kind | None:
    text = kind.strip().upper()
    return _KINDS.get(text) or _ALIASES.get(text)


def read_document(kind: str | Kind, number: str, country: str = "") -> Document | Refusal:
    """The document, checked and normalized, or why it is refused (the first problem found)."""
    found = kind if isinstance(kind, Kind) else read_kind(kind)
    if found is None:
        return Refusal(Problem.UNKNOWN_KIND)
    number = normalize_number(number)
    state = alpha2(country) if country.strip() else None
    if country.strip() and state is None:
        return Refusal(Problem.UNKNOWN_COUNTRY)
    if found is Kind.ID_CARD and state == SPAIN:
        found = Kind.DNI  # the Spanish identity card is the DNI
    if found in (Kind.DNI, Kind.NIE):
        if state not in (None, SPAIN):
            return Refusal(Problem.NOT_SPANISH)
        return _spanish(found, number)
    if state is None:
        return Refusal(Problem.UNKNOWN_COUNTRY)
    if found is Kind.ID_CARD and state not in EU_ID_CARD_STATES:
        return Refusal(Problem.NOT_EU_ID_CARD)
    if (
        not NUMBER_MIN <= len(number) <= NUMBER_MAX
        or not _PLAUSIBLE.fullmatch(number)
        or not any(c.isdigit() for c in number)
    ):
        return Refusal(Problem.BAD_FORMAT)
    return Document(found, number, state)


def _spanish(kind: Kind, number: str) -> Document | Refusal:
    if kind is Kind.DNI and _KLM_DNI.fullmatch(number):
        if dni.calc_check_digit(number[1:8]) != number[8]:
            return Refusal(Problem.BAD_CHECK_LETTER)
        return Document(kind, number, SPAIN)
    module = dni if kind is Kind.DNI else nie
    try:
        valid = module.validate(number)
    except InvalidChecksum:
        return Refusal(Problem.BAD_CHECK_LETTER)
    except ValidationError:
        return Refusal(Problem.BAD_FORMAT)
    return Document(kind, valid, SPAIN)


def lenient_document(kind: Kind, number: str, country: str = "") -> Document | Refusal:
    """What a person shows when the door cannot read it (damaged, unsupported): the typed number normalized
    and the country as an ISO code when it is one (else as typed), unchecked; refused only when there is
    nothing to digest (no number, or one too long or not letters and digits)."""
    number = normalize_number(number)
    if not number or len(number) > 2 * NUMBER_MAX or not _PLAUSIBLE.fullmatch(number):
        return Refusal(Problem.BAD_FORMAT)
    typed = country.strip().upper()[:3]
    state = alpha2(typed) if typed else None
    if kind in (Kind.DNI, Kind.NIE) and not typed:
        state = SPAIN
    return Document(kind, number, state or typed)


# What a receipt shows of a document: its last characters, never more (a DNI's last two digits and its
# check letter: the holder recognises it, nobody else learns who it is).
SHOWN_CHARACTERS = 3


def tail(document: Document) -> str:
    """The document's last SHOWN_CHARACTERS characters, what a receipt shows of it."""
    return document.number[-SHOWN_CHARACTERS:]


def masked(kind: str, shown: str, length: int = 9) -> str:
    """A document as a receipt prints it: "DNI ******78Z" (the hidden characters as asterisks)."""
    hidden = "*" * max(length - len(shown), 3)
    return f"{kind} {hidden}{shown}".strip()


def keyed_digest(key: bytes, document: Document) -> bytes:
    """HMAC-SHA256 of the document's canonical text under ``key``: 32 bytes, the number not recoverable
    without the key (a DNI's 10^8 numbers are easily enumerated, so a plain hash would not do)."""
    return hmac.digest(key, document.key.encode("ascii"), hashlib.sha256)


def age_on(birth: date, day: date) -> int | Refusal:
    """Whole years from ``birth`` to ``day``. Born on 29 February, a person completes a year on 28 February
    of a common year (the Civil Code's art. 5: a term ending on a day the month lacks ends on its last)."""
    if birth > day:
        return Refusal(Problem.BIRTH_IN_FUTURE)
    last = calendar.monthrange(day.year, birth.month)[1]
    birthday = date(day.year, birth.month, min(birth.day, last))
    return day.year - birth.year - (1 if day < birthday else 0)
