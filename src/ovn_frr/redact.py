"""Secrets never printed: BGP passwords are masked in logs (messages and tracebacks), status,
trace and errors.

Two nets: the values of the node config's secrets, wherever they appear (an error message
of FRR that quotes a config line, an exception's text), and any ``password WORD`` in text
(a line read back from FRR whose secret is not, or no longer, in the config).
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterable
from typing import Any

MASK = "****"
#: what follows ``password``: the rest of the line in FRR's ``neighbor X password LINE``, or
#: a quoted value in a repr or JSON (``'password': 'x'``, ``"password": "x"``, ``password=x``)
PASSWORD = re.compile(
    r"""(\bpassword(?:['"]?\s*[:=]\s*['"]?|\s+))(?!\*\*\*\*)[^\s'",}][^\n'",}]*"""
)
#: shorter secrets are masked by the pattern only (replacing every "ab" would garble logs)
MIN_VALUE = 4


class Redactor:
    def __init__(self, secrets: Iterable[str | None] = ()) -> None:
        forms = set()
        for s in secrets:
            if s and len(s) >= MIN_VALUE:  # as is, and as a repr or JSON would escape it
                forms |= {s, repr(s)[1:-1], json.dumps(s)[1:-1]}
        self._secrets = sorted(forms, key=len, reverse=True)

    def text(self, text: str) -> str:
        for secret in self._secrets:
            if secret in text:
                text = text.replace(secret, MASK)
        return PASSWORD.sub(rf"\g<1>{MASK}", text)

    def doc(self, value: Any) -> Any:
        """A JSON document with every string in it redacted."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {self.doc(k): self.doc(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [self.doc(v) for v in value]
        return value


class RedactingFilter(logging.Filter):
    """Masks secrets in a record's message and traceback before any handler formats it."""

    def __init__(self, redactor: Redactor) -> None:
        super().__init__()
        self.redactor = redactor
        self._formatter = logging.Formatter()

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # a bad format call: logged as what it is, not raised here
            message = f"{record.msg!r} % {record.args!r} (bad logging arguments)"
        record.msg = self.redactor.text(message)
        record.args = None
        if record.exc_info and not record.exc_text:
            record.exc_text = self._formatter.formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = self.redactor.text(record.exc_text)
        if record.stack_info:
            record.stack_info = self.redactor.text(record.stack_info)
        return True


def install(redactor: Redactor, logger: logging.Logger | None = None) -> None:
    """Filter every handler of ``logger`` (the root logger: where all records end up)."""
    for handler in (logger or logging.getLogger()).handlers:
        for old in [f for f in handler.filters if isinstance(f, RedactingFilter)]:
            handler.removeFilter(old)
        handler.addFilter(RedactingFilter(redactor))
