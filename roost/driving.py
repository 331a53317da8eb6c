"""One way to drive a run: its first step, then its pauses answered until nobody answers.

``drive(runner, first, answerer)`` takes the run's first step (``start``,
``retry``, or None for a run already at a pause), then hands each pause to the
``answerer`` as a frozen ``roost.Pause`` and continues the run with what it
returns, until the run ends, stops at an error, or the answerer returns None
and leaves it paused. An answerer returns what the Pause allows: the text to
say, ``pause.approve()``, ``pause.refuse(reason)``, ``pause.let_answer()``, or
None. The Python callback of ``roost.run`` (``Callback``), the terminal of
``roost run`` and a batch row (``leave_paused``: a row's pauses wait for a
person) are answerers.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Protocol, TypeAlias

from roost.errors import RunStateError
from roost.runview import Pause, PauseAnswer, RunView, pause_of, text_of, view_of

if TYPE_CHECKING:
    from roost.engine import Runner
    from roost.engine.images import LoadedImage
    from roost.runstate import RunState

# What an answerer returns: the text to say, an answer of the pause, or None (stay paused).
Said: TypeAlias = str | PauseAnswer | None
# What ``roost.run``'s ``answer`` may be: a function or a coroutine function of the pause.
Answer: TypeAlias = Callable[[Pause], Said | Awaitable[Said]]
# A run's first step: where the run comes to rest after it.
Step: TypeAlias = Callable[["Runner"], Awaitable["RunState"]]
# Told a continuation the run refused (a name that is no choice); True: ask again.
Refused: TypeAlias = Callable[[RunStateError], bool]


class Answerer(Protocol):
    """Whoever answers a run's pauses: what to continue with, or None to leave it paused."""

    async def __call__(self, pause: Pause, /) -> Said: ...


class Callback:
    """The answerer of a Python function of the pause, plain or async (``roost.run``'s
    ``answer``)."""

    def __init__(self, answer: Answer) -> None:
        self.answer = answer

    async def __call__(self, pause: Pause, /) -> Said:
        reply = self.answer(pause)
        if inspect.isawaitable(reply):
            return await reply
        return reply


async def leave_paused(pause: Pause, /) -> Said:
    """The answerer that answers nothing (a batch row): each pause waits for a person."""
    return None


async def drive(
    runner: Runner,
    first: Step | None,
    answerer: Answerer | None,
    *,
    images: Sequence[LoadedImage] = (),
    refused: Refused | None = None,
) -> RunState:
    """Takes ``first`` (None: the run is at a pause already), then answers each pause with
    ``answerer`` until the run is not paused or the answerer returns None.

    ``images`` go with the first answer. A continuation the run refuses with a
    ``RunStateError`` is raised, unless ``refused(error)`` says to ask again.
    Returns where the run came to rest.
    """
    state = runner.state if first is None else await first(runner)
    while answerer is not None and (pause := pause_at(runner, state)) is not None:
        said = await answerer(pause)
        if said is None:
            break
        state = await _continued(runner, text_of(said, pause), images, refused)
        images = ()
    return state


async def _continued(
    runner: Runner, text: str, images: Sequence[LoadedImage], refused: Refused | None
) -> RunState:
    """The run continued with ``text``; as it was when ``refused`` takes the refusal."""
    try:
        return await runner.continue_(text, images=images)
    except RunStateError as error:
        if refused is None or not refused(error):
            raise
        return runner.state


def view(runner: Runner, state: RunState) -> RunView:
    """``state`` as a value, with what the run's model calls cost so far."""
    from roost.pricing import run_cost

    return view_of(state, run_cost(runner.log.load()))


def pause_at(runner: Runner, state: RunState) -> Pause | None:
    """The pause the run is at, for an answerer; None when it is not paused."""
    if state.status != "paused":
        return None
    pending = state.pending
    choices: tuple[str, ...] = ()
    if pending is not None and pending.from_ in runner.flow.channels:
        from roost.nodes.directors import candidates

        choices = candidates(runner.flow, state, pending.from_)
    return pause_of(view(runner, state), choices)
