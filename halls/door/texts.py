"""What a person reads of the door's refusals, in their language (the pure modules name problems only)."""

from __future__ import annotations

from django.utils.functional import Promise
from django.utils.translation import gettext_lazy as _

from halls.door.documents import Problem
from halls.door.registerfile import FileProblem, RegisterFileError

DOCUMENT_PROBLEMS: dict[Problem, Promise] = {
    Problem.UNKNOWN_KIND: _(
        "The document type is not one the door reads (DNI, NIE, passport, EU identity card)."
    ),
    Problem.BAD_FORMAT: _("The document number is not well formed."),
    Problem.BAD_CHECK_LETTER: _("The document number's check letter is wrong."),
    Problem.UNKNOWN_COUNTRY: _("The issuing country is not an ISO 3166 country code."),
    Problem.NOT_SPANISH: _("A DNI or NIE is issued by Spain: its country must be ES or left blank."),
    Problem.NOT_EU_ID_CARD: _(
        "An identity card is accepted only from a state of the EU, the EEA or Switzerland; show a passport."
    ),
    Problem.BIRTH_IN_FUTURE: _("The date of birth is in the future."),
}

FILE_PROBLEMS: dict[FileProblem, Promise] = {
    FileProblem.EMPTY: _("The file is empty."),
    FileProblem.BAD_HEADER: _(
        "The first line is not the register's header (REGISTER, code, jurisdiction, version, issue date)."
    ),
    FileProblem.BAD_LINE: _("The line does not have three fields (document type, number, country)."),
    FileProblem.BAD_DOCUMENT: _("The line's document is refused"),
    FileProblem.NO_TRAILER: _("The file ends without its END line: it is truncated."),
    FileProblem.BAD_TRAILER: _("The END line is not END, count, SHA-256."),
    FileProblem.COUNT_MISMATCH: _(
        "The END line's count is not the number of lines in the file: it is truncated."
    ),
    FileProblem.DIGEST_MISMATCH: _(
        "The END line's SHA-256 is not that of the file's lines: the file is damaged or altered."
    ),
    FileProblem.AFTER_TRAILER: _("Something follows the END line."),
    FileProblem.NOT_TEXT: _("The line is not UTF-8 text."),
}


def document_problem(problem: Problem) -> str:
    return str(DOCUMENT_PROBLEMS[problem])


def file_problem(error: RegisterFileError) -> str:
    """The refusal of a register file: its line and what is wrong there, never the line's content."""
    what = str(FILE_PROBLEMS[error.problem])
    if error.document_problem is not None:
        what = _("%(what)s: %(why)s") % {"what": what, "why": document_problem(error.document_problem)}
    return str(_("Line %(line)d: %(what)s") % {"line": error.line, "what": what})
