"""Every SDK client a process makes shares one TLS context, which still verifies servers."""

from __future__ import annotations

import ssl

from roost.providers._common import Settings
from roost.providers._retry import AttemptHooks, shared_ssl_context


def hooks(name: str) -> AttemptHooks:
    return AttemptHooks(Settings(name=name, kind="openai", model="m", key_env="OPENAI_API_KEY"))


def test_clients_share_one_tls_context_that_verifies_certificates() -> None:
    first = hooks("a").client_options()["verify"]
    second = hooks("b").client_options()["verify"]
    assert first is second is shared_ssl_context()  # the authorities are loaded once
    assert isinstance(first, ssl.SSLContext)
    assert first.verify_mode == ssl.CERT_REQUIRED and first.check_hostname
    assert first.cert_store_stats()["x509_ca"] > 0
