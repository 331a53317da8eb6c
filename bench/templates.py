"""What rendering and checking a template costs, in microseconds per call.

Roles, director prompts and start messages are rendered in roost's bounded
sandbox each time they are used; a flow's templates are parsed and checked
each time the flow is validated. Four templates, from a role with one value to
a director prompt that loops over the conversation, each:

- rendered (the compiled template is cached, as in a run: the figure is the
  bounded render alone);
- compiled from scratch (the cache is cleared each time: what the first use of
  a template costs);
- checked for undeclared names and unknown filters, as ``roost validate`` does
  (the parsed tree is built anew each time).

Medians of ``--repeat`` rounds of ``--number`` calls each, and the slowest, in
this process's CPU time (which a busy machine disturbs less than wall time).

    python bench/templates.py [--repeat 7] [--number 2000]
"""

from __future__ import annotations

import argparse
import statistics
import time
from functools import partial
from typing import TYPE_CHECKING

from roost.flow.template_checks import PROMPT_NAMES, template_findings, template_tree
from roost.templating import parse_template, render_template

if TYPE_CHECKING:
    from collections.abc import Callable

MEMBERS = ["alice", "bob", "carol", "dave"]
CONVERSATION = [
    {"from": MEMBERS[i % 4], "content": f"Message number {i} of the talk."} for i in range(40)
]
VARS = {"persona": "a patient tutor", "topic": "fractions", "level": 3}
CONTEXT = {
    "vars": VARS,
    "name": "alice",
    "members": MEMBERS,
    "now": "2025-01-01T12:00:00Z",
    "channel": "room",
    "candidates": MEMBERS[1:],
    "conversation": CONVERSATION,
}

TEMPLATES = {
    "plain role": "You are {{ vars.persona }}. Answer the question and show your reasoning.",
    "role with filters": (
        "You are {{ name|title }}, {{ vars.persona|upper }}, talking with "
        "{{ members|reject('equalto', name)|join(', ') }} about {{ vars.topic }} "
        "(level {{ vars.level * 2 }}).\n"
    ),
    "role with a loop": (
        "{% for m in members %}{{ loop.index }}. {{ m }}"
        "{% if m == name %} (you){% endif %}\n{% endfor %}"
        "{% set n = namespace(total=0) %}{% for m in members %}"
        "{% set n.total = n.total + m|length %}{% endfor %}Letters: {{ n.total }}\n"
    ),
    "director prompt": (
        "Channel {{ channel }}. Pick the next speaker among {{ candidates|join(', ') }}.\n"
        "{% for turn in conversation[-20:] %}[{{ turn['from'] }}] "
        "{{ turn.content|truncate(60) }}\n{% endfor %}"
        "{{ {'count': conversation|length, 'last': conversation[-1]['from']}|tojson }}\n"
    ),
}


def per_call(action: Callable[[], object], number: int, repeat: int) -> tuple[float, float]:
    """Median and slowest CPU microseconds per call over ``repeat`` rounds of ``number`` calls."""
    rounds = []
    for _ in range(repeat):
        started = time.process_time()
        for _ in range(number):
            action()
        rounds.append((time.process_time() - started) / number * 1e6)
    return statistics.median(rounds), max(rounds)


def compile_anew(source: str) -> None:
    parse_template.cache_clear()
    parse_template(source)


def check_anew(source: str) -> None:
    template_tree.cache_clear()
    parse_template.cache_clear()
    template_findings(template_tree(source), PROMPT_NAMES, VARS)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--number", type=int, default=2000)
    args = parser.parse_args()
    print(f"{'template':<20} {'render µs':>16} {'compile µs':>16} {'check µs':>16}")
    for label, source in TEMPLATES.items():
        figures = [
            per_call(partial(render_template, source, **CONTEXT), args.number, args.repeat),
            per_call(partial(compile_anew, source), args.number // 10, args.repeat),
            per_call(partial(check_anew, source), args.number // 10, args.repeat),
        ]
        cells = " ".join(f"{median:>8.1f} ({worst:>5.1f})" for median, worst in figures)
        print(f"{label:<20} {cells}")
    print("medians over rounds, the slowest round in brackets")


if __name__ == "__main__":
    main()
