"""What finds English on a Spanish page (issue 26): every text a person sees (text nodes of visible
elements, the page's title, placeholders, tooltips, labels for screen readers, the options of its lists)
checked against

- the catalogue: a text that is an English msgid of locale/es whose Spanish differs (a msgid with
  placeholders matched as a pattern, "Card %(serial)s is not sold…" matching "Card 16 is not sold…");
- English sentences the catalogue never saw (a pure core's f-string, a hard-coded reason): two or more
  English function words in one text ("has", "the", "still", "needs" …, none of them a Spanish word);
- Django's own English (its core and admin catalogues: "Not Found"), and a model's name as Django makes it
  up when the model gives none ("Cashier settingss", "Staff role" in "Agregar Staff role adicional");
- a raw error code (a stable code a service raises, e.g. `insufficient_balance`) shown as text.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import django
from django.apps import apps
from django.utils.text import camel_case_to_spaces
from playwright.async_api import Page

ROOT = Path(__file__).resolve().parents[2]
CATALOGUES = [ROOT / "locale" / "es" / "LC_MESSAGES" / name for name in ("django.po", "djangojs.po")]
SOURCES = ["halls", "bingo", "jackpots", "machines"]
DJANGO = Path(django.__file__).resolve().parent
DJANGO_CATALOGUES = [
    DJANGO / "conf" / "locale" / "es" / "LC_MESSAGES" / "django.po",
    DJANGO / "contrib" / "admin" / "locale" / "es" / "LC_MESSAGES" / "django.po",
    DJANGO / "contrib" / "auth" / "locale" / "es" / "LC_MESSAGES" / "django.po",
]
APPS = ("halls", "bingo", "jackpots", "machines", "demo")

# English words that are no Spanish words (and no proper names a hall uses): two of them in one text make it
# an English sentence. ("a", "no", "de", "con" … are Spanish too and left out.)
ENGLISH_ONLY = frozenset(
    [
        "the",
        "has",
        "have",
        "had",
        "is",
        "are",
        "was",
        "were",
        "been",
        "being",
        "this",
        "that",
        "these",
        "those",
        "with",
        "still",
        "needs",
        "need",
        "must",
        "each",
        "once",
        "all",
        "which",
        "your",
        "you",
        "not",
        "of",
        "at",
        "and",
        "or",
        "for",
        "by",
        "from",
        "to",
        "in",
        "on",
        "it",
        "its",
        "be",
        "can",
        "cannot",
        "will",
        "would",
        "should",
        "there",
        "here",
        "what",
        "when",
        "where",
        "who",
        "why",
        "how",
        "than",
        "then",
        "into",
        "only",
        "already",
        "yet",
        "any",
        "more",
        "some",
        "no",
        "longer",
        "does",
        "did",
        "done",
    ]
)
# Django's own English that no catalogue has (its fallback error pages).
DJANGO_BUILT_IN = frozenset({"Not Found", "Server Error (500)", "403 Forbidden", "Bad Request (400)"})
# Texts left alone: what is English on purpose in a Spanish page (the language switch names English).
ALLOWED = frozenset({"English"})

# Every visible text of the page, as a list of strings (JavaScript run in the page).
VISIBLE_TEXTS = """
() => {
  const out = [];
  // Left out: scripts, preformatted data, and what a form holds (a JSON field's data is no text of the
  // page's language). <code> is read: a person reads it too (a raw error code there is a raw code shown).
  const skip = new Set(["SCRIPT", "STYLE", "NOSCRIPT", "TEMPLATE", "PRE", "TEXTAREA"]);
  const visible = (el) => {
    if (!el || !(el instanceof Element)) { return false; }
    if (el.closest("[hidden], [aria-hidden=true]")) { return false; }
    const shown = {checkOpacity: true, checkVisibilityCSS: true};
    if (el.checkVisibility && !el.checkVisibility(shown)) { return false; }
    return el.getClientRects().length > 0;
  };
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  let node;
  while ((node = walker.nextNode())) {
    const parent = node.parentElement;
    if (!parent || skip.has(parent.tagName) || parent.closest("pre")) { continue; }
    const text = node.textContent.replace(/\\s+/g, " ").trim();
    if (text && visible(parent)) { out.push(text); }
  }
  const described = "[placeholder], [title], [aria-label], input[type=submit], option";
  document.querySelectorAll(described).forEach((el) => {
    const shown = el.tagName === "OPTION" ? visible(el.closest("select")) : visible(el);
    if (!shown) { return; }
    ["placeholder", "title", "aria-label"].forEach((name) => {
      const value = (el.getAttribute(name) || "").trim();
      if (value) { out.push(value); }
    });
    if (el.tagName === "OPTION" || el.type === "submit") {
      const value = (el.tagName === "OPTION" ? el.textContent : el.value || "").replace(/\\s+/g, " ").trim();
      if (value) { out.push(value); }
    }
  });
  if (document.title) { out.push(document.title.trim()); }
  return out;
}
"""


def _entries(path: Path) -> list[tuple[str, str]]:
    """(msgid, Spanish) pairs of a .po file (the first form of a plural; fuzzy ones left out)."""
    pairs = []
    for block in path.read_text(encoding="utf-8").split("\n\n"):
        if "#, fuzzy" in block:
            continue
        fields: dict[str, str] = {}
        key = ""
        for line in block.splitlines():
            match = re.match(r'^(msgctxt|msgid|msgid_plural|msgstr|msgstr\[0\])\s+"(.*)"$', line)
            if match:
                key = match.group(1)
                fields[key] = match.group(2)
            elif line.startswith('"') and key:
                fields[key] += line[1:-1]
        msgid = fields.get("msgid", "")
        spanish = fields.get("msgstr", fields.get("msgstr[0]", ""))
        if msgid:
            pairs.append((msgid.replace('\\"', '"').replace("\\n", " "), spanish.replace('\\"', '"')))
    return pairs


PLACEHOLDER = re.compile(r"%\(\w+\)[sd]|%[sd]|\{\{ ?\w+ ?\}\}|\{\w+\}")


@dataclass(frozen=True)
class Catalogue:
    spanish: frozenset[
        str
    ]  # every translation: a text that is one is Spanish ("Red", a network, is no colour)
    exact: frozenset[str]
    patterns: tuple[re.Pattern[str], ...]
    codes: frozenset[str]
    model_names: tuple[re.Pattern[str], ...]


def _plain(text: str) -> str:
    return text.strip().rstrip(":.…").strip()


@cache
def english_catalogue() -> Catalogue:
    exact: set[str] = set()
    patterns: list[re.Pattern[str]] = []
    translations: set[str] = set()
    for path in CATALOGUES:
        for msgid, spanish in _entries(path):
            translations.add(_plain(" ".join(spanish.split())))
            if not spanish or _plain(spanish) == _plain(msgid) or not re.search(r"[A-Za-z]{2}", msgid):
                continue
            if PLACEHOLDER.search(msgid):
                literal = [re.escape(part) for part in PLACEHOLDER.split(" ".join(msgid.split()))]
                words = re.sub(r"\W+", "", PLACEHOLDER.sub("", msgid))
                if len(words) >= 4:  # "%(a)s · %(b)s" says nothing in any language
                    patterns.append(re.compile("^" + ".+?".join(literal) + "$"))
            else:
                exact.add(_plain(" ".join(msgid.split())))
    for path in DJANGO_CATALOGUES:
        for msgid, spanish in _entries(path):
            if spanish and _plain(spanish) != _plain(msgid) and not PLACEHOLDER.search(msgid):
                exact.add(_plain(" ".join(msgid.split())))
    exact.update(DJANGO_BUILT_IN)
    return Catalogue(
        frozenset(translations), frozenset(exact), tuple(patterns), error_codes(), made_up_model_names()
    )


def made_up_model_names() -> tuple[re.Pattern[str], ...]:
    """The names Django makes up for the hall's models of two words or more (class name split, an "s" added):
    a text showing one shows a model its name was never given."""
    found = []
    for model in apps.get_models():
        if model.__module__.split(".")[0] not in APPS:
            continue
        name = camel_case_to_spaces(model.__name__)
        if " " not in name:
            continue  # one word ("Terminal", "Ticket") may be Spanish too: the catalogue's check has it
        for made_up in (name, f"{name}s"):
            body = r"\s+".join(re.escape(w) for w in made_up.split())
            found.append(re.compile(rf"(?i)(?<![\w-]){body}(?![\w-])"))
    return tuple(found)


def error_codes() -> frozenset[str]:
    """The stable codes the services raise (`code="insufficient_balance"`), those with an underscore."""
    found: set[str] = set()
    for folder in SOURCES:
        for path in (ROOT / folder).rglob("*.py"):
            found.update(re.findall(r'\bcode="([a-z]+(?:_[a-z]+)+)"', path.read_text(encoding="utf-8")))
    return frozenset(found)


def _is_data(text: str) -> bool:
    """A JSON object or list shown as it is stored (the admin's read-only JSON fields): data, not words."""
    if not text.startswith(("{", "[")):
        return False
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


def english_in(texts: list[str], catalogue: Catalogue | None = None) -> list[str]:
    """The texts that are English on a Spanish page, each with why."""
    catalogue = catalogue or english_catalogue()
    found = []
    for text in dict.fromkeys(texts):
        if text in ALLOWED or _is_data(text):
            continue
        plain = _plain(text)
        words = re.findall(r"[A-Za-zÁÉÍÓÚÑáéíóúñü_]+", text)
        english_words = {w for w in (w.lower() for w in words) if w in ENGLISH_ONLY}
        codes = [w for w in words if w in catalogue.codes]
        if plain in catalogue.exact and plain not in catalogue.spanish:
            found.append(f"{text!r}: an English msgid")
        elif plain not in catalogue.spanish and any(
            p.match(text) or p.match(plain) for p in catalogue.patterns
        ):
            found.append(f"{text!r}: an English msgid with its figures")
        elif any(p.search(plain) for p in catalogue.model_names):
            found.append(f"{text!r}: a model's made-up English name")
        elif len(english_words) >= 2:
            found.append(f"{text!r}: English words {sorted(english_words)}")
        elif codes:
            found.append(f"{text!r}: a raw error code {codes}")
    return found


async def english_on(page: Page) -> list[str]:
    texts: list[str] = await page.evaluate(VISIBLE_TEXTS)
    return english_in(texts)
