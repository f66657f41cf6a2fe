"""Fill a catalogue's translations from a tab-separated file, and list what is still to translate.

    python scripts/translate.py todo [locale/es/LC_MESSAGES/django.po]   # untranslated and fuzzy msgids
    python scripts/translate.py fill translations.tsv [po]               # msgid<TAB>msgstr per line

Filling clears the fuzzy mark of the entries it sets (makemessages guesses fuzzy translations from
similar msgids, usually wrong). Run `make messages` afterwards to compile the .mo files. A msgid with a
plural form takes "singular|plural" as its msgstr.
"""

from __future__ import annotations

import re
import sys

import polib

DEFAULT = "locale/es/LC_MESSAGES/django.po"


def todo(path: str) -> int:
    po = polib.pofile(path)
    pending = [e for e in po if not e.obsolete and (not e.translated() or "fuzzy" in e.flags)]
    for entry in pending:
        print(entry.msgid.replace("\n", "\\n"))
    return 1 if pending else 0


def nplurals(po: polib.POFile) -> int:
    match = re.search(r"nplurals\s*=\s*(\d+)", po.metadata.get("Plural-Forms", ""))
    return int(match.group(1)) if match else 2


def fill(table: str, path: str) -> int:
    po = polib.pofile(path)
    by_id = {e.msgid: e for e in po if not e.obsolete}
    missing = 0
    with open(table, encoding="utf-8") as rows:
        for line in rows:
            if not line.strip() or "\t" not in line:
                continue
            msgid, msgstr = line.rstrip("\n").split("\t", 1)
            msgid, msgstr = msgid.replace("\\n", "\n"), msgstr.replace("\\n", "\n")
            entry = by_id.get(msgid)
            if entry is None:
                print(f"not in {path}: {msgid!r}", file=sys.stderr)
                missing += 1
                continue
            if entry.msgid_plural:
                one, many = msgstr.split("|", 1)
                # Every form past the first is the plural ("nplurals=3" in the djangojs catalogue of es).
                entry.msgstr_plural = {0: one, **{n: many for n in range(1, nplurals(po))}}
            else:
                entry.msgstr = msgstr
            if "fuzzy" in entry.flags:
                entry.flags.remove("fuzzy")
                entry.previous_msgid = None
                entry.previous_msgid_plural = None
                entry.previous_msgctxt = None  # else a lone "#| msgctxt" is left, which msgfmt refuses
    po.save(path)
    return 1 if missing else 0


if __name__ == "__main__":
    args = sys.argv[1:]
    if args[:1] == ["todo"]:
        sys.exit(todo(args[1] if len(args) > 1 else DEFAULT))
    if args[:1] == ["fill"] and len(args) >= 2:
        sys.exit(fill(args[1], args[2] if len(args) > 2 else DEFAULT))
    sys.exit(__doc__)
