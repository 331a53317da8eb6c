"""Template injection: the classic Jinja2 escapes, planted where a flow puts templates.

Each payload runs in a real ``roost run`` (in this process), as an agent's
role, a channel's role or a director's prompt. The safe outcome is always the
same: the run stops at the documented template error entry (an error from the
node whose template failed, no model called), exit status 3, and nothing
leaks: the marker file the payload would create does not exist and the secret
in the environment appears in no output, event or stored byte. Payloads that
do not even parse are refused by validation, located. The last tests show the
payloads are live: stock Jinja2, unsandboxed, does run them.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

import jinja2
import pytest
import yaml

from roost.templating.budget import TOO_BIG, TOO_LONG

if TYPE_CHECKING:
    from pathlib import Path

    from tests.attacks.conftest import Cli, Said

MARK = "pwned"  # the file, in the working folder, that an escape would write
SECRET_NAME = "ROOST_ATTACK_SECRET"
SECRET = "attack-secret-7c1e9b04"  # in the environment, named by no flow

REFUSED = "template refused by the sandbox: access to attribute "
NO_LOADER = "template failed: TypeError: no loader for this environment specified"
RECURSION = "template failed: RecursionError: maximum recursion depth exceeded"
HUGE_RANGE = "template failed: OverflowError: Range too big."

ESCAPES = [
    # the object graph: from a literal to every class
    ("{{ ''.__class__.__mro__[1].__subclasses__() }}", REFUSED + "'__class__' of 'str'"),
    ("{{ ().__class__.__base__.__subclasses__() }}", REFUSED + "'__class__' of 'tuple'"),
    ("{{ [].__class__.__base__ }}", REFUSED + "'__class__' of 'list'"),
    ("{{ (1).__class__ }}", REFUSED + "'__class__' of 'int'"),
    ("{{ vars.__class__ }}", REFUSED + "'__class__' of 'dict'"),
    ("{{ now.__class__ }}", REFUSED + "'__class__' of 'str'"),
    ("{{ ''.__doc__ }}", REFUSED + "'__doc__' of 'str'"),
    ("{{ members.__getitem__ }}", REFUSED + "'__getitem__' of 'list'"),
    ("{{ ''['__class__'] }}", REFUSED + "'__class__' of 'str'"),
    # Jinja2's own globals, the usual way to reach os
    (f"{{{{ cycler.__init__.__globals__.os.system('touch {MARK}') }}}}", REFUSED + "'__init__'"),
    (f"{{{{ joiner.__init__.__globals__.os.system('touch {MARK}') }}}}", REFUSED + "'__init__'"),
    (f"{{{{ namespace.__init__.__globals__.os.system('touch {MARK}') }}}}", REFUSED + "'__init__'"),
    (f"{{{{ lipsum.__globals__.os.popen('touch {MARK}').read() }}}}", REFUSED + "'__globals__'"),
    (
        f"{{{{ lipsum.__globals__['__builtins__']['open']('{MARK}', 'w').write('x') }}}}",
        REFUSED + "'__globals__'",
    ),
    ("{{ namespace.__call__.__globals__ }}", REFUSED + "'__call__' of 'type'"),
    ("{{ cycler(1).next.__func__ }}", REFUSED + "'__func__' of 'method'"),
    ("{{ joiner().__call__ }}", REFUSED + "'__call__' of 'Joiner'"),
    ("{{ cycler('a').__dict__ }}", REFUSED + "'__dict__' of 'Cycler'"),
    ("{{ ''.join.__self__ }}", REFUSED + "'__self__' of 'builtin_function_or_method'"),
    ("{{ vars.items.__self__ }}", REFUSED + "'__self__' of 'builtin_function_or_method'"),
    ("{% for x in [1] %}{{ loop.__class__ }}{% endfor %}", REFUSED + "'__class__' of 'Loop"),
    # the template's own reference
    ("{{ self.__init__.__globals__ }}", REFUSED + "'__init__' of 'TemplateReference'"),
    ("{{ self.__dict__ }}", REFUSED + "'__dict__' of 'TemplateReference'"),
    (
        "{{ self._TemplateReference__context.cycler.__init__.__globals__"
        f".os.system('touch {MARK}') }}}}",
        REFUSED + "'_TemplateReference__context'",
    ),
    # Flask's and the environment's names are simply not there
    (f"{{{{ lipsum.__globals__.os.environ.{SECRET_NAME} }}}}", REFUSED + "'__globals__'"),
    (f"{{{{ cycler.__init__.__globals__.os.getenv('{SECRET_NAME}') }}}}", REFUSED + "'__init__'"),
    # attribute access by |attr, by other filters' attribute= and by escapes in the name
    ("{{ ''|attr('__class__') }}", REFUSED + "'__class__' of 'str'"),
    ("{{ ()|attr('\\x5f\\x5fclass\\x5f\\x5f') }}", REFUSED + "'__class__' of 'tuple'"),
    ("{{ ''|attr(['_' * 2, 'class', '_' * 2]|join) }}", REFUSED + "'__class__' of 'str'"),
    ("{{ (lipsum|attr('__globals__')).os }}", REFUSED + "'__globals__'"),
    ("{% filter attr('__class__') %}x{% endfilter %}", REFUSED + "'__class__' of 'str'"),
    ("{{ members|selectattr('__class__')|list }}", REFUSED + "'__class__' of 'str'"),
    ("{{ members|sort(attribute='__class__') }}", REFUSED + "'__class__' of 'str'"),
    ("{{ members|groupby('__class__') }}", REFUSED + "'__class__' of 'str'"),
    ("{{ [vars]|map(attribute='__class__.__mro__')|list }}", REFUSED + "'__class__' of 'dict'"),
    # format strings reach attributes too
    ("{{ '{0.__class__}'.format('') }}", REFUSED + "'__class__' of 'str'"),
    ("{{ '{0.__init__.__globals__[os]}'.format(cycler) }}", REFUSED + "'__init__'"),
    ("{{ '{0.__globals__}'.format(lipsum) }}", REFUSED + "'__globals__'"),
    ("{{ '{x.__class__}'.format_map({'x': 1}) }}", REFUSED + "'__class__' of 'int'"),
    ("{{ ('{0.__class__}'|safe).format(1) }}", REFUSED + "'__class__' of 'int'"),
    ("{{ ('{0.__class__}'|attr('format'))(1) }}", REFUSED + "'__class__' of 'int'"),
    ("{% set f = '{0.__class__}'.format %}{{ f(1) }}", REFUSED + "'__class__' of 'int'"),
    ("{{ {'f': '{0.__class__}'.format}.f(1) }}", REFUSED + "'__class__' of 'int'"),
    ("{{ ('{x.__class__}'|attr('format_map'))({'x': 1}) }}", REFUSED + "'__class__' of 'int'"),
    ("{{ 'x'.__format__('>100') }}", REFUSED + "'__format__' of 'str'"),
    ("{{ 'abc'.__mod__ }}", REFUSED + "'__mod__' of 'str'"),
    # passed-in values cannot be changed
    ("{{ vars.lst.append(1) }}", REFUSED + "'append' of 'list'"),
    ("{{ vars.d.update({'a': 2}) }}", REFUSED + "'update' of 'dict'"),
    ("{{ vars.d.clear() }}", REFUSED + "'clear' of 'dict'"),
    # files: there is no loader to read one with
    ("{% include '/etc/passwd' %}", NO_LOADER),
    ("{% import 'flow.yaml' as f %}", NO_LOADER),
    ("{% extends '/etc/passwd' %}", NO_LOADER),
    ("{% from 'flow.yaml' import x %}", NO_LOADER),
    # loops, recursion and sizes
    ("{% for x in range(10**10) %}{% endfor %}", HUGE_RANGE),
    ("{{ range(10**18)|list }}", HUGE_RANGE),
    ("{{ 'x' * 10**9 }}", TOO_BIG),
    ("{% macro m() %}{{ m() }}{% endmacro %}{{ m() }}", RECURSION),
    (
        "{% macro a(n) %}{% macro b(n) %}{{ a(n) }}{% endmacro %}{{ b(n) }}{% endmacro %}"
        "{{ a(1) }}",
        RECURSION,
    ),
    ("{% for i in range(99999) %}{% for j in range(99999) %}{% endfor %}{% endfor %}", TOO_LONG),
    ("{{ '{0:{1}}'.format(1, '>9999999999') }}", TOO_BIG),
]

# Names a template is not given: refused when the flow is read, before anything runs.
NOT_GIVEN = (
    "the template reads '{}', which is not defined "
    "(a template may read vars, name, members, now, last)"
)
UNGIVEN = [
    ("{{ config.items() }}", NOT_GIVEN.format("config")),
    ("{{ request.application.__globals__ }}", NOT_GIVEN.format("request")),
    ("{{ url_for.__globals__ }}", NOT_GIVEN.format("url_for")),
    ("{{ environ." + SECRET_NAME + " }}", NOT_GIVEN.format("environ")),
    ("{{ os.environ }}", NOT_GIVEN.format("os")),
    ("{{ __builtins__ }}", NOT_GIVEN.format("__builtins__")),
    ("{{ vars." + SECRET_NAME + " }}", f"vars.{SECRET_NAME} is not set under vars"),
    ("{{ " + SECRET_NAME + " }}", NOT_GIVEN.format(SECRET_NAME)),
]


VARS = {"persona": "careful", "lst": [1, 2], "d": {"a": 1}}


def two_agents(role: str) -> dict[str, Any]:
    return {
        "roost": 1,
        "name": "escape",
        "vars": VARS,
        "defaults": {"provider": "p"},
        "providers": {"p": {"kind": "scripted", "replies": [{"echo": "system"}, "TERMINATE"]}},
        "agents": {"USER": {"role": "A person."}, "bot": {"role": role}},
        "start": {"from": "USER", "to": "bot", "content": "hi"},
    }


def a_channel(**channel: Any) -> dict[str, Any]:
    flow = two_agents("You help.")
    flow["agents"]["other"] = {"role": "You help too."}
    flow["channels"] = {"room": {"members": ["bot", "other"], **channel}}
    flow["start"]["to"] = "room"
    return flow


def run(cli: Cli, folder: Path, flow: dict[str, Any]) -> tuple[Said, list[dict[str, Any]]]:
    """``roost run`` of ``flow``: what it said, and the events it wrote."""
    (folder / "flow.yaml").write_text(yaml.safe_dump(flow, allow_unicode=True))
    said = cli("run", "flow.yaml", "--no-input", "--events", "run.jsonl")
    events = [json.loads(line) for line in (folder / "run.jsonl").read_text().splitlines()]
    return said, events


def assert_nothing_leaked(folder: Path, said: Said) -> None:
    assert not (folder / MARK).exists()
    assert SECRET not in said.out + said.err
    for path in folder.rglob("*"):
        if path.is_file():
            assert SECRET.encode() not in path.read_bytes(), path.name


def assert_stopped_at_template_error(
    said: Said, events: list[dict[str, Any]], node: str, expected: str
) -> None:
    last = events[-1]
    assert (last["type"], last["from"], last["to"]) == ("error", node, "USER")
    assert last["content"].startswith(expected), last["content"]
    assert not [event for event in events if event["type"] == "llm_call"]
    assert said.code == 3
    assert said.lines[0] == f"roost: error at {node}: {last['content']}"


@pytest.fixture(autouse=True)
def _secret(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(SECRET_NAME, SECRET)


@pytest.mark.parametrize(("payload", "expected"), ESCAPES, ids=[p for p, _ in ESCAPES])
def test_an_escape_in_a_role_stops_at_a_template_error(
    cli: Cli, tmp_path: Path, payload: str, expected: str
) -> None:
    said, events = run(cli, tmp_path, two_agents(payload))
    assert_stopped_at_template_error(said, events, "bot", expected)
    assert_nothing_leaked(tmp_path, said)


@pytest.mark.parametrize(("payload", "expected"), UNGIVEN, ids=[p for p, _ in UNGIVEN])
def test_a_name_no_template_is_given_is_refused_before_the_run(
    cli: Cli, tmp_path: Path, payload: str, expected: str
) -> None:
    (tmp_path / "flow.yaml").write_text(yaml.safe_dump(two_agents(payload), allow_unicode=True))
    said = cli("run", "flow.yaml", "--no-input", "--events", "run.jsonl")
    assert said.code == 2
    [line] = said.lines
    assert re.fullmatch(r"flow\.yaml:\d+:\d+: error: role of agent 'bot': (.*)", line)
    assert line.endswith(f": error: role of agent 'bot': {expected}"), line
    assert not (tmp_path / "run.jsonl").exists()
    assert_nothing_leaked(tmp_path, said)


IN_A_CHANNEL = [
    (payload, expected)
    for payload, expected in ESCAPES
    if payload.startswith(("{{ ''.__class__", "{{ cycler.__init__", "{{ lipsum.__globals__.os"))
    or "_TemplateReference__context" in payload
    or payload.startswith(("{{ ''|attr('__class__')", "{{ '{0.__class__}'", "{% include"))
    or payload.startswith("{% macro m()")
]


@pytest.mark.parametrize("where", ["role", "prompt"])
@pytest.mark.parametrize(("payload", "expected"), IN_A_CHANNEL, ids=[p for p, _ in IN_A_CHANNEL])
def test_an_escape_in_a_director_stops_at_the_channels_error(
    cli: Cli, tmp_path: Path, where: str, payload: str, expected: str
) -> None:
    director = {"strategy": "llm", "provider": "p"}
    channel = {"role": payload, "director": director}
    if where == "prompt":
        channel = {"director": {**director, "prompt": payload}}
    said, events = run(cli, tmp_path, a_channel(**channel))
    assert_stopped_at_template_error(said, events, "room", expected)
    assert_nothing_leaked(tmp_path, said)


UNPARSED = [
    ("{% debug %}", "Encountered unknown tag 'debug'."),
    ("{% do vars.lst.append(1) %}", "Encountered unknown tag 'do'."),
    ("{{ ''.__class__ ", "unexpected end of template, expected 'end of print statement'."),
    ("{% for x in range(3) %}", "Unexpected end of template."),
    ("{% raw %}{{ cycler.__init__ }}", "Missing end of raw directive"),
]


@pytest.mark.parametrize(("payload", "problem"), UNPARSED, ids=[p for p, _ in UNPARSED])
def test_a_payload_that_does_not_parse_is_refused_located_before_any_run(
    cli: Cli, tmp_path: Path, payload: str, problem: str
) -> None:
    text = yaml.safe_dump(two_agents(payload), allow_unicode=True, sort_keys=False)
    (tmp_path / "flow.yaml").write_text(text)
    line = next(n for n, row in enumerate(text.splitlines(), 1) if "role:" in row and "{" in row)
    for command in (("validate", "flow.yaml"), ("run", "flow.yaml", "--no-input")):
        said = cli(*command)
        (shown,) = (said.out + said.err).splitlines()  # validate prints to stdout, run to stderr
        assert said.code == 2 and "Traceback" not in shown
        assert shown.startswith(f"flow.yaml:{line}:"), shown
        assert f"error: role of agent 'bot': template does not parse: {problem}" in shown
    assert not (tmp_path / ".roost").exists()  # nothing ran, nothing was stored


def test_template_syntax_in_data_is_never_rendered(cli: Cli, tmp_path: Path) -> None:
    # Vars and a model's reply are data: a template sees them as text.
    payload = "{{ cycler.__init__.__globals__ }}{{ 7 * 7 }}"
    flow = two_agents("You are {{ vars.persona }}.")
    flow["vars"]["persona"] = payload
    flow["start"]["content"] = "{{ vars.persona }}"  # the start message is a template too
    flow["providers"]["p"]["replies"] = [{"echo": "system"}, {"echo": "last"}, "TERMINATE"]
    flow["agents"]["USER"]["provider"] = "p"
    said, events = run(cli, tmp_path, flow)
    assert said.code == 0, said.err
    sent = [(e["from"], e["content"]) for e in events if e["type"] == "message"]
    assert sent[:3] == [
        ("USER", payload),  # the start content as written
        ("bot", f"You are {payload}."),  # the role rendered once: the var stays text
        ("USER", f"You are {payload}."),  # a reply shown in the next request, as text
    ]
    assert_nothing_leaked(tmp_path, said)


def test_a_reply_shown_to_a_director_prompt_is_not_rendered(cli: Cli, tmp_path: Path) -> None:
    payload = "{{ lipsum.__globals__ }}{{ 6 * 7 }}"
    flow = a_channel(director={"strategy": "llm", "provider": "d"}, max_rounds=1)
    flow["providers"]["d"] = {"kind": "scripted", "replies": [{"echo": "last"}, "bot"]}
    flow["vars"]["persona"] = payload
    flow["start"]["content"] = "{{ vars.persona }}"
    said, events = run(cli, tmp_path, flow)
    assert said.code == 0, said.err
    first = next(e for e in events if e["type"] == "llm_call")
    assert payload in first["response"]["text"] and "42" not in first["response"]["text"]
    assert_nothing_leaked(tmp_path, said)


LIVE = [payload for payload, _ in ESCAPES if MARK in payload]


@pytest.mark.parametrize("payload", LIVE)
def test_the_payloads_are_live_outside_the_sandbox(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, payload: str
) -> None:
    # The control: stock Jinja2, unsandboxed, does write the mark (or reads the secret).
    monkeypatch.chdir(tmp_path)
    jinja2.Environment().from_string(payload).render(vars=VARS)
    assert (tmp_path / MARK).exists()


def test_the_secret_reading_payloads_are_live_outside_the_sandbox() -> None:
    for payload, _ in ESCAPES:
        if "__globals__.os" in payload and SECRET_NAME in payload:
            assert jinja2.Environment().from_string(payload).render() == SECRET
