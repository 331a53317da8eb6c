"""The bounded sandbox: what it refuses to templates outright."""

from __future__ import annotations

import pytest

from roost.errors import TemplateRenderError
from roost.templating import TemplateLimitError, render_template


@pytest.mark.parametrize(
    "source",
    [
        "{{ ('\u4e00' * 5000).encode('idna') }}",
        "{{ 'x'.encode('punycode') }}",
        "{{ 'x'.encode() }}",
        "{{ ('x'|safe).encode('utf-7') }}",
        "{{ (1).to_bytes(2, 'big').decode('punycode') }}",
        "{{ 'x'|attr('encode') }}",
        "{{ 'x'['encode']('idna') }}",
    ],
)
def test_codecs_are_not_available_to_templates(source: str) -> None:
    with pytest.raises(TemplateRenderError) as caught:
        render_template(source)
    assert not isinstance(caught.value, TemplateLimitError)
    message = str(caught.value)
    assert message.startswith("template ")
    assert "'encode'" in message or "'decode'" in message
