"""ISO 3166-1 country codes (alpha-2 and alpha-3), pure: the issuing state of a passport or an ID card.

`alpha2("FRA")` and `alpha2("fr")` are "FR"; an unknown code is None. The codes are pycountry's ISO 3166-1
table (kept with the standard), plus "XK" / "XKX" (Kosovo: a user-assigned code its passports and the EU use).
"""

from __future__ import annotations

import pycountry

# User-assigned codes that travel documents carry and ISO 3166-1 does not list.
_EXTRA_ALPHA3 = {"XK": "XKX"}
_EXTRA_BY_ALPHA3 = {three: two for two, three in _EXTRA_ALPHA3.items()}

# The European Union's member states and the other states whose national identity card is a travel document
# in the Schengen area (EEA and Switzerland): an "EU national ID card" is one of theirs.
_EU = "AT BE BG HR CY CZ DK EE FI FR DE GR HU IE IT LV LT LU MT NL PL PT RO SK SI ES SE IS LI NO CH"
EU_ID_CARD_STATES = frozenset(_EU.split())


def alpha2(code: str) -> str | None:
    """The alpha-2 code of an alpha-2 or alpha-3 code (any case, blanks around ignored); None if unknown."""
    code = code.strip().upper()
    if len(code) == 2:
        if code in _EXTRA_ALPHA3:
            return code
        found = pycountry.countries.get(alpha_2=code)
    elif len(code) == 3:
        if code in _EXTRA_BY_ALPHA3:
            return _EXTRA_BY_ALPHA3[code]
        found = pycountry.countries.get(alpha_3=code)
    else:
        return None
    return None if found is None else str(found.alpha_2)
