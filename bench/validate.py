"""How long validating a big flow takes, whatever it holds: 1 MiB files built to be slow.

    python bench/validate.py [--size BYTES] [--repeat N] [--only NAME,NAME]

Each case is a flow of about ``--size`` bytes (default 1 MiB, the largest a
flow may be) written to a temporary folder and validated as ``roost validate``
does it (the language, then the tools). The table gives the best wall-clock
and CPU seconds of ``--repeat`` runs, the number of problems found, and how
many carried a did-you-mean hint. The aim: under 2 seconds for every case.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

from roost.errors import FlowError, Problem
from roost.loading import load_flow

if TYPE_CHECKING:
    from collections.abc import Callable

HEAD = "roost: 1\ndefaults: {provider: p}\nproviders: {p: {kind: scripted}}\n"


def fill(head: str, line: Callable[[int], str], size: int, tail: str = "") -> str:
    """``head``, then ``line(0)``, ``line(1)``... while the text stays under ``size`` bytes."""
    parts, total, index = [head], len(head) + len(tail), 0
    while True:
        piece = line(index)
        if total + len(piece) > size:
            return "".join(parts) + tail
        parts.append(piece)
        total += len(piece)
        index += 1


def many_agents(size: int) -> str:
    return fill(HEAD + "agents:\n", lambda i: f"  agent{i}: {{role: You are agent {i}.}}\n", size)


def templated_roles(size: int) -> str:
    head = HEAD + "vars: {p: careful}\nagents:\n"
    return fill(head, lambda i: f'  a{i}: {{role: "You are {{{{ vars.p }}}} #{i}."}}\n', size)


def undefined_template_vars(size: int) -> str:
    return fill(HEAD + "agents:\n", lambda i: f'  a{i}: {{role: "{{{{ vars.x{i} }}}}"}}\n', size)


def unknown_members(size: int) -> str:
    """The reported case: thousands of members, each a near miss of an agent's name."""
    agents = "".join(f"  agent{i}: {{}}\n" for i in range(2000))
    head = f"{HEAD}agents:\n{agents}channels:\n  c:\n    members:\n"
    return fill(head, lambda i: f"      - agnet{i}\n", size)


def unknown_keys(size: int) -> str:
    return fill(HEAD + "agents:\n  a:\n", lambda i: f"    rolle{i}: x\n", size)


def type_errors(size: int) -> str:
    return fill(HEAD + "agents:\n", lambda i: f"  a{i}: {{max_tool_calls: many}}\n", size)


def bad_references(size: int) -> str:
    head = HEAD + "tools:\n  math: {tools: {sqrt: {python: 'm:f'}}}\nagents:\n"
    return fill(head, lambda i: f"  a{i}: {{functions: [math#sqrtt{i}, lokup{i}]}}\n", size)


def long_names(size: int) -> str:
    """Two agents with names of a quarter megabyte, and near misses of them as members."""
    name = "agent" + "x" * (size // 5)
    agents = f"  ? {name}a\n  : {{}}\n  ? {name}b\n  : {{}}\n"  # explicit keys: any length
    return f"{HEAD}agents:\n{agents}channels:\n  c: {{members: [{name}c, {name}d]}}\n"


def yaml_error_at_the_end(size: int) -> str:
    return many_agents(size - 20) + "oops: [unclosed\n"


def aliases(size: int) -> str:
    head = HEAD + "vars:\n  base: &b {a: 1, b: [1, 2, 3], c: {d: e}}\n  list:\n"
    return fill(head, lambda _: "    - *b\n", size)


CASES: dict[str, Callable[[int], str]] = {
    "many agents": many_agents,
    "templated roles": templated_roles,
    "undefined template vars": undefined_template_vars,
    "unknown members": unknown_members,
    "unknown keys": unknown_keys,
    "type errors": type_errors,
    "bad references": bad_references,
    "long names": long_names,
    "YAML error at the end": yaml_error_at_the_end,
    "aliases": aliases,
}


def validate(path: Path) -> list[Problem]:
    try:
        return list(load_flow(path, environ={}).warnings)
    except FlowError as error:
        return error.problems


def measure(path: Path, repeat: int) -> tuple[float, float, list[Problem]]:
    """Best wall-clock and CPU seconds over ``repeat`` validations, and the problems found."""
    best_wall = best_cpu = float("inf")
    problems: list[Problem] = []
    for _ in range(repeat):
        wall, cpu = time.perf_counter(), time.process_time()
        problems = validate(path)
        best_wall = min(best_wall, time.perf_counter() - wall)
        best_cpu = min(best_cpu, time.process_time() - cpu)
    return best_wall, best_cpu, problems


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size", type=int, default=1 << 20)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--only", default="", help="comma-separated case names")
    args = parser.parse_args()
    chosen = [c for c in CASES if not args.only or c in args.only.split(",")]
    print(f"{'case':26} {'bytes':>9} {'wall s':>7} {'cpu s':>6} {'problems':>9} {'hints':>6}")
    with tempfile.TemporaryDirectory() as folder:
        for name in chosen:
            path = Path(folder) / "flow.yaml"
            text = CASES[name](args.size)
            path.write_text(text, encoding="utf-8")
            wall, cpu, problems = measure(path, args.repeat)
            hints = sum("did you mean" in p.message for p in problems)
            size = len(text.encode())
            print(f"{name:26} {size:>9,} {wall:>7.2f} {cpu:>6.2f} {len(problems):>9,} {hints:>6}")


if __name__ == "__main__":
    main()
