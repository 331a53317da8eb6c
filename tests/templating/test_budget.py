"""Rendering is bounded in steps, sizes and output: a greedy template fails at once, in one line.

No test here measures time: each asks for far more than a render allows and
checks which limit the error names.
"""

from __future__ import annotations

import jinja2
import pytest
from jinja2.sandbox import ImmutableSandboxedEnvironment

from roost.engine import Runner
from roost.ports import MemoryLog
from roost.templating import TemplateLimitError, parse_template, render_template
from tests.flow.conftest import load
from tests.templating.conftest import (
    CONTEXT,
    TOO_BIG,
    TOO_LONG,
    TOO_LONG_NUMBER,
    TOO_MUCH_OUTPUT,
    limit_error,
)


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("{{ lipsum(10**7) }}", TOO_BIG),
        (
            "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}",
            TOO_LONG,
        ),
        ("{{ 'x'|center(10**10) }}", TOO_BIG),
        ("{{ 'a\nb'|indent(10**10) }}", TOO_BIG),
        ("{{ 'a' * 10**10 }}", TOO_BIG),
    ],
)
def test_the_audited_templates_fail_naming_the_limit(source: str, message: str) -> None:
    assert limit_error(source) == message


def doubling(start: str, step: str, then: str = "") -> str:
    """A template growing ``n.v`` from ``start`` by ``step`` 64 times over, then ``then``."""
    loop = f"{{% for i in range(64) %}}{{% set n.v = {step} %}}{{% endfor %}}"
    return f"{{% set n = namespace(v={start}) %}}{loop}{then}"


@pytest.mark.parametrize(
    ("source", "message"),
    [
        # operators
        ("{{ ([1] * 10**10)|length }}", TOO_BIG),
        ("{{ 10 * 'a' * 10**9 }}", TOO_BIG),
        ("{{ (10**100000)**100000 }}", TOO_LONG_NUMBER),
        ("{{ '%10000000000s' % 1 }}", TOO_BIG),
        ("{{ '%*s' % (10**10, 'x') }}", TOO_BIG),
        ("{{ '%.2000000f' % 1.0 }}", TOO_BIG),
        # methods of text and numbers
        ("{{ 'x'.center(10**10) }}", TOO_BIG),
        ("{{ 'x'.ljust(10**10) }}", TOO_BIG),
        ("{{ '1'.zfill(10**10) }}", TOO_BIG),
        ("{{ ('\t' * 1000).expandtabs(10**7) }}", TOO_BIG),
        ("{{ (1).to_bytes(1, 'big').rjust(10**10) }}", TOO_BIG),
        ("{{ (1).to_bytes(10**10, 'big') }}", TOO_BIG),
        ("{% set s = 'x' * 100000 %}{{ s.replace('x', s) }}", TOO_BIG),
        ("{% set s = 'x' * 100000 %}{{ s.join(s) }}", TOO_BIG),
        ("{{ ('x' * 1000).translate({120: 'y' * 10000}) }}", TOO_BIG),
        ("{{ '{:>10000000000}'.format(1) }}", TOO_BIG),
        ("{{ '{0:>{1}}'.format('x', 10**10) }}", TOO_BIG),
        ("{{ ('{:>9999999999}'|safe).format(1) }}", TOO_BIG),
        ("{{ ('x'|safe).center(10**10) }}", TOO_BIG),
        # filters and globals
        ("{% set s = 'x' * 100000 %}{{ s|replace('x', s) }}", TOO_BIG),
        ("{% set s = 'x' * 100000 %}{{ s|list|join(s) }}", TOO_BIG),
        ("{{ '%10000000000s'|format(1) }}", TOO_BIG),
        ("{{ ('a ' * 100000)|wordwrap(1, wrapstring='x' * 1000) }}", TOO_BIG),
        ("{{ [1]|batch(10**10, 'x')|list|length }}", TOO_BIG),
        ("{{ [1]|slice(10**7)|list|length }}", TOO_BIG),
        ("{{ [[1]]|tojson(indent=10**7) }}", TOO_BIG),
        ("{{ 5|round(-10**9) }}", TOO_LONG_NUMBER),
        ("{{ lipsum(100, max=10**9) }}", TOO_BIG),
        ("{% set s = 'x' * 1000000 %}{{ [s] * 10 }}", TOO_BIG),
        ("{% set s = 'x' * 1000000 %}{{ ([s] * 10)|string|length }}", TOO_BIG),
        ("{{ range(100000)|map('string')|map('center', 1000000)|list|length }}", TOO_LONG),
        # growing a value step by step, or reaching it over and over
        (doubling("'x'", "n.v ~ n.v"), TOO_BIG),
        (doubling("'x'", "n.v|replace('x', 'xx')"), TOO_BIG),
        (doubling("[1]", "[n.v, n.v]"), TOO_LONG),
        (doubling("(1,)", "(n.v, n.v)", then="{{ {n.v: 1} }}"), TOO_LONG),
        (doubling("3", "n.v * n.v"), TOO_LONG_NUMBER),
        (
            "{% macro d(s, k) %}{% if k %}{{ d(s ~ s, k - 1) }}{% else %}{{ s|length }}"
            "{% endif %}{% endmacro %}{{ d('x', 64) }}",
            TOO_BIG,
        ),
        (
            "{% macro t(k) %}{% if k %}{{ t(k - 1) }}{{ t(k - 1) }}{% endif %}{% endmacro %}"
            "{{ t(64) }}",
            TOO_LONG,
        ),
        (
            "{% for x in [0] recursive %}{% if x < 64 %}{{ loop([x + 1, x + 1]) }}{% endif %}"
            "{% endfor %}",
            TOO_LONG,
        ),
        (
            "{% macro f(x, k) %}{% if k %}{{ f([x, x], k - 1) }}{% else %}{{ x|length }}"
            "{% endif %}{% endmacro %}{{ f([1], 64) }}",
            TOO_LONG,
        ),
        (
            "{% set big = range(100000)|list %}{% for i in range(100000) %}"
            "{% if -1 in big %}{% endif %}{% endfor %}",
            TOO_LONG,
        ),
        (
            "{% set big = range(100000)|list %}{% for i in range(100000) %}"
            "{% if big[1:] %}{% endif %}{% endfor %}",
            TOO_LONG,
        ),
        (
            "{% set s = 'x' * 1000000 %}{% for i in range(100000) %}{{ s.upper()|length }}"
            "{% endfor %}",
            TOO_LONG,
        ),
        (
            "{% set s %}{% for i in range(100000) %}{{ 'y' * 1000 }}{% endfor %}{% endset %}"
            "{{ s|length }}",
            TOO_LONG,
        ),
        # output
        ("{% for i in range(100000) %}{{ 'x' * 100000 }}{% endfor %}", TOO_MUCH_OUTPUT),
        ("{% for i in range(2) %}{{ 'x' * 600000 }}{% endfor %}", TOO_MUCH_OUTPUT),
    ],
)
def test_other_ways_of_asking_too_much_fail_naming_the_limit(source: str, message: str) -> None:
    assert limit_error(source) == message


def test_a_product_is_refused_when_it_would_be_too_long_though_each_factor_is_not() -> None:
    # 10**2000 and 10**2500 have 2,001 and 2,501 digits: each is allowed, as is the product
    # of two of the first (4,001 digits); two of the second would make 5,001.
    assert render_template("{{ (10**2000 * 10**2000)|string|length }}") == "4001"
    assert limit_error("{% set n = 10**2500 %}{% set m = n * n %}") == TOO_LONG_NUMBER
    assert limit_error("{% set n = 10**2500 %}{% set m = n * 10**2500 %}") == TOO_LONG_NUMBER


def test_each_render_has_its_own_budget() -> None:
    loop = "{% for i in range(100000) %}{% endfor %}"
    for _ in range(12):  # more than a million steps in all, but not in one render
        assert render_template(loop * 5) == ""
    assert limit_error(loop * 12) == TOO_LONG


def test_constant_parts_are_bounded_when_the_template_is_parsed() -> None:
    # Jinja2 folds a filter of constants when it compiles: that must not build 10 GB.
    template = parse_template("{{ 'x'|center(10000000000) }}")
    with pytest.raises(TemplateLimitError, match="larger than 1 MiB"):
        template.render()


STOCK = ImmutableSandboxedEnvironment(
    undefined=jinja2.StrictUndefined, autoescape=False, keep_trailing_newline=True
)


@pytest.mark.parametrize(
    "source",
    [
        "You are {{ vars.persona }}, talking with {{ members|join(', ') }}.\n",
        "{% for m in members %}{{ loop.index }}. {{ m }}{% if m == name %} (you){% endif %}"
        "{% if not loop.last %}\n{% endif %}{% endfor %}",
        "{% for m in members if m != name %}{{ m }}/{{ loop.length }} {% else %}nobody{% endfor %}",
        "{% for x in vars.tree recursive %}[{{ x.n }}{{ loop(x.children) }}]{% endfor %}",
        "{% macro hi(who, p='!') %}Hi {{ who }}{{ p }}{% endmacro %}{{ hi(name) }}"
        "{% macro box() %}[{{ caller() }}]{% endmacro %}{% call box() %}in{% endcall %}",
        "{{ vars.goods|sum(attribute='price') }} {{ [[1], [2, 3]]|sum(start=[]) }} "
        "{{ vars.goods|map(attribute='name')|join('|') }} {{ vars.goods|groupby('price')|list }}",
        "{{ [3, 1, 2]|sort }} {{ range(7)|batch(3, 'x')|list }} {{ range(7)|slice(3)|list }}",
        "{{ '%s-%05d' % ('a', 42) }} {{ '{} and {:>5}'.format('x', 'y') }} "
        "{{ '%(a)s'|format(a=1) }} {{ 2 ** 10 }} {{ 'ab' * 3 }} {{ [1] * 3 }} {{ 1 + 2 }} "
        "{{ 'a' + 'b' }} {{ [1] + [2] }} {{ 7 // 2 }} {{ 7 % 3 }} {{ -2 ** 2 }}",
        "{{ 'hello world foo bar'|wordwrap(7) }}|{{ 'a\nb'|indent(2, first=True) }}|"
        "{{ 'x'|center(5) }}|{{ 'abcdef'|truncate(5, leeway=0) }}|"
        "{{ 'aaa'|replace('a', 'bb', 2) }}",
        "{{ vars.scores|tojson }} {{ vars.scores|dictsort }} {{ vars.scores|items|list }} "
        "{{ missing|default('none') }} {{ vars.scores.a ~ '-' ~ vars.scores.b }}",
        "{{ members[1:] }} {{ members[::-1] }} {{ name[1:3] }} {{ 'critic' in members }} "
        "{{ 1 < 2 < 3 }} {{ members[0] }} {{ vars['persona'] }} {{ {'a': 1, name: 2} }}",
        "{% set ns = namespace(total=0, seen=[]) %}{% for m in members %}"
        "{% set ns.total = ns.total + 1 %}{% set ns.seen = ns.seen + [m] %}{% endfor %}"
        "{{ ns.total }} {{ ns.seen }}",
        "{% set block %}inner {{ name }}{% endset %}{{ block|upper }}"
        "{% filter upper %}up {{ name }}{% endfilter %}{% with x = 3 %}{{ x }}{% endwith %}",
        "{% autoescape true %}{{ '<b>' }}{{ '<i>'|safe }}{{ '<a>' ~ 'x' }}{% endautoescape %}"
        "{{ ('{0}'|safe).format('<x>') }} {{ ('%s'|safe) % '<y>' }} {{ ('<p>'|safe).center(7) }}",
        "{{ 'a\tb'.expandtabs(4) }}|{{ ', '.join(members) }}|{{ 'x'.zfill(4) }}|"
        "{{ 'aXa'.replace('a', 'bb') }}|{{ 'ab'.translate({97: 'zz'}) }}|"
        "{{ (5).to_bytes(2, 'big') }}",
        "{{ now[:10] }} {{ members|pprint }} {{ {'a': [1, 2]}|string }} {{ (1, 2) }} {{ none }} "
        "{{ 3.14159|round(2) }} {{ 2048|filesizeformat }} {{ [1, 2, 2]|unique|list }} "
        "{{ members|select('in', ['critic', 'editor'])|list }} {{ 'Hi there'|title }}",
        "{% for k, v in vars.scores|dictsort %}{{ k }}={{ v }}{{ loop.cycle(';', ',') }}"
        "{% endfor %}{% set j = joiner(' + ') %}{% for m in members %}{{ j() }}{{ m }}{% endfor %}",
    ],
)
def test_ordinary_templates_render_as_jinja_renders_them(source: str) -> None:
    assert render_template(source, **CONTEXT) == STOCK.from_string(source).render(**CONTEXT)


FLOW = """
roost: 1
name: greedy
defaults: {provider: mock}
providers:
  mock: {kind: scripted, replies: [hello, TERMINATE]}
agents:
  USER: {role: A person.}
  bot: {role: ROLE}
start: {from: USER, to: bot, content: go}
"""


@pytest.mark.parametrize(
    ("role", "message"),
    [
        ("\"{{ 'a' * 10**10 }}\"", TOO_BIG),
        (
            '"{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}"',
            TOO_LONG,
        ),
    ],
)
async def test_a_run_stops_at_an_error_entry_naming_the_limit(role: str, message: str) -> None:
    log = MemoryLog("r")
    runner = Runner(flow=load(FLOW.replace("ROLE", role)), log=log)
    state = await runner.start()
    assert state.status == "error"
    last = log.load()[-1]
    assert (last.type, last.from_, last.to, last.content) == ("error", "bot", "USER", message)
    assert not [e for e in log.load() if e.type == "llm_call"]
    state = await runner.retry()  # the run waits for a retry, which fails the same way
    assert state.status == "error"
    assert log.load()[-1].content == message
