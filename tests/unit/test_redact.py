"""Secrets are masked in log messages, tracebacks and status/trace documents."""

from __future__ import annotations

import io
import json
import logging

from ovn_frr import config
from ovn_frr.agent import secrets
from ovn_frr.redact import Redactor, install

CFG = config.parse(
    '[bgp]\nasn = 64512\nrouter_id = "192.0.2.1"\n'
    '[[bgp.neighbors]]\naddress = "10.255.0.2"\nremote_as = 65001\npassword = "hunter2 x"\n'
)


def test_log_messages_and_tracebacks_are_masked() -> None:
    logger = logging.getLogger("test-redact")
    logger.propagate = False
    stream = io.StringIO()
    logger.addHandler(logging.StreamHandler(stream))
    install(secrets(CFG), logger)
    batch = "router bgp 64512\n neighbor 10.255.0.2 password hunter2 x\n"
    logger.error("frr_batch_failed batch=%r", batch)
    try:
        raise RuntimeError(f"vtysh: line 2: % Unknown command: {batch.splitlines()[1]}")
    except RuntimeError:
        logger.exception("step failed")
    logger.warning("password from somewhere else: neighbor X password other-secret")
    text = stream.getvalue()
    assert "hunter2" not in text and "other-secret" not in text, text
    assert text.count("****") == 3  # the message, the exception text, the last line
    assert "frr_batch_failed" in text and "RuntimeError" in text


def test_documents_are_masked() -> None:
    doc = {"frr": {"rejected": [{"line": "neighbor 10.255.0.2 password hunter2 x",
                                 "error": "% bad: 'hunter2 x'"}]}, "n": 3}  # fmt: skip
    masked = secrets(CFG).doc(doc)
    assert "hunter2" not in repr(masked)
    assert masked["n"] == 3


def test_short_secrets_are_masked_by_pattern_only() -> None:
    r = Redactor(["ab"])
    assert r.text("table ab password ab") == "table ab password ****"


def test_quoted_and_escaped_forms_are_masked() -> None:
    r = Redactor(["s3cr\u00e9t-1"])
    doc = {"password": "ab", "neighbor": {"password": "s3cr\u00e9t-1"}}
    text = r.text(repr(doc)) + r.text(json.dumps(doc)) + r.text("x password=hunter")
    assert "ab'" not in text and "s3cr" not in text and "hunter" not in text, text


def test_a_bad_logging_call_is_logged_not_raised() -> None:
    logger = logging.getLogger("test-redact-bad")
    logger.propagate = False
    stream = io.StringIO()
    logger.addHandler(logging.StreamHandler(stream))
    install(Redactor(["hunter2-x"]), logger)
    logger.error("%d items, password %s", "many", "hunter2-x")  # wrong type for %d
    assert "bad logging arguments" in stream.getvalue()
    assert "hunter2" not in stream.getvalue()
