"""The built-in tools' settings: http_get's hosts are bare host names, kept in lower case."""

from __future__ import annotations

import pydantic
import pytest

from roost.flow.models import BuiltinHttp


def test_hosts_are_names_or_wildcards_of_names_in_lower_case() -> None:
    http = BuiltinHttp.model_validate({"hosts": ["Example.COM", "*.api.example.com", "localhost"]})
    assert http.hosts == ["example.com", "*.api.example.com", "localhost"]


@pytest.mark.parametrize(
    "host", ["https://example.com", "example.com:443", "example.com/api", "a..b", "-x.com", "*"]
)
def test_a_host_with_a_scheme_a_port_or_a_path_is_refused(host: str) -> None:
    with pytest.raises(pydantic.ValidationError, match="is no host name"):
        BuiltinHttp.model_validate({"hosts": [host]})
