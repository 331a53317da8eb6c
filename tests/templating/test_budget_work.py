"""Templates pay for native work at what it costs, and no render outlives its deadline.

Each attack here did real work for a handful of counted steps before (a hash
table whose keys all collide, numbers read and printed in quadratic time). No test measures time:
each would finish, or fail another way, without the bound it checks.
"""

from __future__ import annotations

import pytest

from roost.engine import Runner
from roost.ports import MemoryLog
from roost.templating import TemplateLimitError, budget, render_template
from tests.flow.conftest import load
from tests.templating.conftest import TOO_LONG

P = 2**61 - 1  # ints that differ by a multiple of P have the same hash


def limit_error(source: str) -> str:
    with pytest.raises(TemplateLimitError) as caught:
        render_template(source, vars={})
    return str(caught.value)


@pytest.mark.parametrize(
    "source",
    [
        # Hash tables whose keys all collide: n keys, n * n / 2 probes.
        f"{{{{ range(0, {P} * 2000, {P})|unique|list|length }}}}",
        f"{{{{ {{}}.fromkeys(range(0, {P} * 2000, {P}))|length }}}}",
        f"{{{{ dict(range(0, {P} * 2000, {P})|groupby('real'))|length }}}}",
        "{{ " + "{" + ", ".join(f"{P * k}: 1" for k in range(1, 2001)) + "}|length }}",
        # Numbers turned into text and back, quadratic in their digits.
        "{% set s = '9' * 4000 %}{% for i in range(300) %}{% if s|int %}{% endif %}{% endfor %}",
        "{% set n = 7 ** 4700 %}{% for i in range(300) %}{% if n|string %}{% endif %}{% endfor %}",
        "{% set n = 7 ** 4700 %}{% for i in range(300) %}{% set m = n // 3 - 1 %}{% endfor %}",
        # Formats read in Python a brace at a time.
        "{% set f = '{{}}' * 25000 %}{% for i in range(50) %}{% set x = f.format() %}{% endfor %}",
        "{% set f = '%%' * 25000 %}{% for i in range(50) %}{% set x = f % () %}{% endfor %}",
        # Lazy filters: each item read through six of them is work six times over.
        "{{ range(100000)" + "|map(attribute='real')" * 6 + "|list|length }}",
    ],
)
def test_native_work_is_counted_at_its_cost(source: str) -> None:
    assert limit_error(source) == TOO_LONG


def test_the_same_work_in_small_amounts_is_fine() -> None:
    source = (
        "{{ [3, 1, 3]|unique|list }} {{ {1: 'a', 2: 'b'}[2] }} {{ dict(a=1) }} "
        "{{ {}.fromkeys([1, 2])|length }} {{ '42'|int + 1 }} {{ 10 ** 30 // 7 - 1 }} "
        "{{ '{}-{}'.format(1, 2) }} {{ '%d%%' % 5 }} {{ range(3)|map('string')|join }}"
    )
    expected = "[3, 1] b {'a': 1} 2 43 142857142857142857142857142856 1-2 5% 012"
    assert render_template(source) == expected


@pytest.fixture
def no_time(monkeypatch: pytest.MonkeyPatch) -> str:
    """Every render is past its deadline at its first look at the clock."""
    monkeypatch.setattr(budget, "DEADLINE", -1.0)
    return budget.TOO_SLOW


def test_the_deadline_stops_a_render(no_time: str) -> None:
    assert no_time == "the template ran too long (more than 10 seconds)"
    assert limit_error("{% for i in range(1000) %}{% endfor %}") == no_time
    assert limit_error("{{ range(1000)|map('string')|join }}") == no_time


async def test_a_render_past_its_deadline_is_an_error_entry(no_time: str) -> None:
    flow = load(
        """
        roost: 1
        defaults: {provider: mock}
        providers: {mock: {kind: scripted, replies: [hello]}}
        agents:
          USER: {role: A person.}
          bot: {role: "{% for i in range(1000) %}{% endfor %}You help."}
        start: {from: USER, to: bot, content: go}
        """
    )
    log = MemoryLog("r")
    state = await Runner(flow=flow, log=log).start()
    assert state.status == "error"
    last = log.load()[-1]
    assert (last.type, last.from_, last.to, last.content) == ("error", "bot", "USER", no_time)
