"""The bugs ``bench/mutants.py`` plants, one at a time: none of them may go unnoticed.

Each entry names the file, the exact text it replaces (found exactly once in that
file, or the tool stops and names the entry), the replacement, the tests that should
catch it (most likely killer first: ``-x`` stops at the first failure) and what the
bug would break. When code moves, update ``old`` (and ``new``) to the new text.

A mutant that can change no behaviour (an equivalent mutant) is not listed; a
comment where it would be says why, so that nobody adds it back.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Mutant:
    """One planted bug: ``old`` replaced by ``new`` in ``file``, and the tests to run."""

    name: str
    file: str
    old: str
    new: str
    tests: tuple[str, ...]
    why: str = ""


# The tests each area's mutants run (in this order), by what they exercise.
CHANNEL = (
    "tests/nodes/test_channel_caps.py",
    "tests/nodes/test_directors.py",
    "tests/nodes/test_channel_plan.py",
    "tests/nodes/test_human.py",
    "tests/nodes/test_agent.py",
    "tests/engine/test_channel_steps.py",
)
PAIR = (
    "tests/engine/test_interpreter_pair.py",
    "tests/engine/test_interpreter.py",
    "tests/nodes/test_agent.py",
)
TOOL_LOOP = ("tests/engine/test_tool_loop.py", "tests/engine/test_unfinished.py")
HOOK_RUNS = ("tests/engine/test_hooks.py", "tests/engine/test_plan_mode.py")
STOPPED = ("tests/engine/test_unfinished.py", "tests/engine/test_state.py")
SECRETS = (
    "tests/engine/test_secrets_in_events.py",
    "tests/attacks/test_masked_cuts.py",
    "tests/engine/test_runner.py",
)
FINISH = ("tests/providers/test_finish_in_runs.py", "tests/providers/test_edges.py")
REPLAY = (
    "tests/engine/test_replay.py",
    "tests/engine/recorded/test_tools.py",
    "tests/store/test_replay_diff.py",
)
JSONL = ("tests/store/test_jsonl.py", "tests/store/test_contract.py")
SQL = ("tests/store/test_contract.py", "tests/store/test_sql.py")
FORKS = ("tests/store/test_fork_points.py", "tests/store/test_sql.py", "tests/store/test_cli.py")
EDGES = ("tests/providers/test_edges.py", "tests/providers/test_faults.py")
WIRE = (
    "tests/providers/test_contract.py",
    "tests/providers/test_anthropic.py",
    "tests/providers/test_openai_chat.py",
    "tests/providers/test_openai_responses.py",
    "tests/providers/test_edges.py",
)

CHANNEL_PY = "roost/nodes/channel.py"
DIRECTORS_PY = "roost/nodes/directors.py"
INTERPRETER_PY = "roost/engine/interpreter.py"
REPLIES_PY = "roost/engine/_replies.py"
TOOL_LOOP_PY = "roost/engine/tool_loop.py"
CALLS_PY = "roost/engine/calls.py"
STATE_PY = "roost/runstate/_fold.py"
REPLAY_PY = "roost/engine/replay.py"

ENGINE = [
    # -- channels: the caps and the director (nodes/channel.py, engine/directors.py)
    Mutant(
        "channel-cap-general",
        CHANNEL_PY,
        "if channel_count(state, config, channel) >= config.max_rounds:",
        "if channel_count(state, config, channel) > config.max_rounds:",
        CHANNEL,
        "the channel's cap on the path taken once a member is at its own cap (missed before)",
    ),
    Mutant(
        "channel-cap-fast",
        CHANNEL_PY,
        "if total >= plan.config.max_rounds:",
        "if total > plan.config.max_rounds:",
        CHANNEL,
        "the channel's cap on the planned fast path",
    ),
    Mutant(
        "channel-member-at-cap-leaves-plan",
        CHANNEL_PY,
        "if count >= cap:  # a member at its own cap",
        "if count > cap:  # a member at its own cap",
        CHANNEL,
        "a member at its own cap would still be a candidate of the plan",
    ),
    Mutant(
        "channel-only-candidate-asks",
        CHANNEL_PY,
        "    if len(found) == 1:\n"
        '        return ChannelTurn(found, chosen=found[0], by="only_candidate", routes=routes)\n',
        "",
        CHANNEL,
        "the director would be asked to choose among one candidate",
    ),
    Mutant(
        "director-member-cap",
        DIRECTORS_PY,
        "if sent.get((m, channel), 0) < cap]",
        "if sent.get((m, channel), 0) <= cap]",
        CHANNEL,
        "a member at its own cap stays a candidate",
    ),
    Mutant(
        "director-allow-repeat",
        DIRECTORS_PY,
        "if not config.director.allow_repeat:",
        "if config.director.allow_repeat:",
        CHANNEL,
        "the last speaker may speak again unless allow_repeat is set, and not when it is",
    ),
    Mutant(
        "director-transitions",
        DIRECTORS_PY,
        "found = [m for m in found if m in allowed]",
        "found = [m for m in found if m not in allowed]",
        CHANNEL,
        "transitions name who may not follow instead of who may",
    ),
    Mutant(
        "director-round-robin-order",
        DIRECTORS_PY,
        "member = members[(start + step) % count]",
        "member = members[(start - step) % count]",
        CHANNEL,
        "round robin goes backwards through the members",
    ),
    Mutant(
        "director-validation",
        DIRECTORS_PY,
        "return name if name in found else None",
        "return name if name else None",
        CHANNEL,
        "the director's model may name anyone, a non-candidate included",
    ),
    Mutant(
        "director-retry-label",
        DIRECTORS_PY,
        'return chosen, "llm_retry"',
        'return chosen, "llm"',
        CHANNEL,
        "a choice made after the corrective retry is recorded as a first answer",
    ),
    Mutant(
        "manual-choice-not-a-candidate",
        "roost/nodes/human.py",
        "    if name not in found:\n        raise RunStateError(\n"
        '            f"{name!r} may not speak next in {channel}; answer with one of: {choices}"\n'
        "        )\n",
        "",
        CHANNEL,
        "a person may name a member who may not speak next",
    ),
    # -- two agents: caps, markers, pauses (engine/interpreter.py)
    Mutant(
        "pair-cap-after-reply",
        INTERPRETER_PY,
        "self.state.pair_count(frm, to) >= self._max_rounds:\n"
        '            self.ends.terminate(to, "max_rounds")',
        "self.state.pair_count(frm, to) > self._max_rounds:\n"
        '            self.ends.terminate(to, "max_rounds")',
        PAIR,
        "two agents exchange one message more than max_rounds",
    ),
    Mutant(
        "pair-cap-after-resume",
        INTERPRETER_PY,
        "self.state.pair_count(frm, to) >= self._max_rounds:\n"
        '            self.ends.terminate(frm, "max_rounds")',
        "self.state.pair_count(frm, to) > self._max_rounds:\n"
        '            self.ends.terminate(frm, "max_rounds")',
        PAIR,
        "feedback given at the pair's cap is recorded and answered",
    ),
    Mutant(
        "channel-cap-after-resume",
        INTERPRETER_PY,
        "channel_count(self.state, channel, frm) >= channel.max_rounds:",
        "channel_count(self.state, channel, frm) > channel.max_rounds:",
        CHANNEL,
        "feedback to a member who spoke the channel's last message goes on past the cap",
    ),
    Mutant(
        "member-cap-after-feedback",
        INTERPRETER_PY,
        "self.state.sent.get((to, frm), 0) >= self._max_rounds:",
        "self.state.sent.get((to, frm), 0) > self._max_rounds:",
        CHANNEL,
        "a member at its own cap answers feedback anyway",
    ),
    Mutant(
        "interrupt-or-human",
        INTERPRETER_PY,
        "if word == INTERRUPT or to in self._humans:",
        "if word == INTERRUPT and to in self._humans:",
        PAIR,
        "INTERRUPT, or a reply to a person, no longer pauses the run on its own",
    ),
    Mutant(
        "start-to-itself",
        INTERPRETER_PY,
        "    if frm == to:\n"
        '        raise UsageError(f"{flow.name}: the start goes from {frm!r} to itself; '
        'give another --to")\n',
        "",
        ("tests/engine/test_runner.py", "tests/cli/test_run_commands.py"),
        "a run may start with a message from a node to itself",
    ),
    Mutant(
        "cut-reply-read-for-marker",
        INTERPRETER_PY,
        'step = self._after_reply(frm, to, "" if self.caller.last_cut else text)',
        "step = self._after_reply(frm, to, text)",
        FINISH,
        "an answer cut at max_tokens is read for TERMINATE or INTERRUPT",
    ),
    Mutant(
        "redo-cut-read-for-marker",
        INTERPRETER_PY,
        "cut = isinstance(before, LlmCallEvent) and bool(before.response and before.response.cut)",
        "cut = False",
        (*FINISH, *STOPPED),
        "a retry after a dead process reads a cut answer for a marker",
    ),
    Mutant(
        "no-rounds-allowed",
        REPLIES_PY,
        "final = max_rounds <= 0",
        "final = max_rounds < 0",
        TOOL_LOOP,
        "max_tool_calls 0 lets the tools a model asks for run",
    ),
    # -- the tool loop: caps, approval, results (engine/tool_loop.py)
    Mutant(
        "tool-cap",
        TOOL_LOOP_PY,
        "final = turn.rounds >= job.max_rounds",
        "final = turn.rounds > job.max_rounds",
        TOOL_LOOP,
        "one tool round more than max_tool_calls",
    ),
    Mutant(
        "tool-limit-note-without-rounds",
        TOOL_LOOP_PY,
        "if final and turn.rounds:",
        "if final:",
        TOOL_LOOP,
        "the limit note is sent although no tool ran",
    ),
    Mutant(
        "approval-asked-once",
        TOOL_LOOP_PY,
        "asked = [c for c in todo if c.id not in turn.refused and c.id not in turn.decisions]",
        "asked = [c for c in todo if c.id not in turn.refused and c.id in turn.decisions]",
        TOOL_LOOP,
        "a tool needing approval runs without asking",
    ),
    Mutant(
        "approval-word",
        TOOL_LOOP_PY,
        "    return approval(answer).approved",
        '    return answer.strip().lower().startswith("y")',
        TOOL_LOOP,
        '"yesterday" (or "yes, but") approves a call; only yes or y may',
    ),
    Mutant(
        "approval-refusal",
        TOOL_LOOP_PY,
        'if (tool.approval or plan) and not _approved(decisions.get(call.id, "")):',
        'if (tool.approval or plan) and _approved(decisions.get(call.id, "")):',
        TOOL_LOOP,
        "a refused call runs and an approved one is refused",
    ),
    # hooks and plan mode
    Mutant(
        "hook-asked-twice",
        "roost/engine/hooks.py",
        "for hook in hooks[turn.hooked.get(call.id, 0) :]:",
        "for hook in hooks:",
        HOOK_RUNS,
        "a run resumed after a plan's approval asks its before_tool hooks again",
    ),
    Mutant(
        "hook-refusal-ignored",
        STATE_PY,
        'turn.refused[call_id] = hook.reason or ""',
        "turn.changed.pop(call_id, None)",
        HOOK_RUNS,
        "a call a before_tool hook refused runs all the same",
    ),
    Mutant(
        "plan-not-asked",
        TOOL_LOOP_PY,
        "if job.plan and calls:",
        "if job.plan and not calls:",
        HOOK_RUNS,
        "an agent in plan mode runs its calls without asking",
    ),
    Mutant(
        "rewrite-not-shown",
        "roost/nodes/agent.py",
        'return entry if text is None else entry.model_copy(update={"content": text})',
        "return entry",
        HOOK_RUNS,
        "an agent is shown the message as written, not as its before_reply hook rewrote it",
    ),
    Mutant(
        "direct-output-error",
        TOOL_LOOP_PY,
        "and tool.direct_output and not outcome.is_error:",
        "and tool.direct_output:",
        TOOL_LOOP,
        "a failing direct_output tool's error becomes the reply",
    ),
    Mutant(
        "result-cut-at-limit",
        TOOL_LOOP_PY,
        "len(message.content) > limit:",
        "len(message.content) >= limit:",
        TOOL_LOOP,
        "a result exactly at tool_result_limit is cut",
    ),
    Mutant(
        "masked-then-cut",
        TOOL_LOOP_PY,
        "return self.redact(text)[:limit] if self.redact else text[:limit]",
        "return self.redact(text[:limit]) if self.redact else text[:limit]",
        ("tests/attacks/test_masked_cuts.py", *TOOL_LOOP),
        "a cut through a secret leaves its first characters unmasked",
    ),
    # -- model calls and recording (engine/calls.py, engine/recorder.py)
    Mutant(
        "recorded-answer-route",
        CALLS_PY,
        "if call.node != node or call.provider != provider_name:",
        "if call.node != node and call.provider != provider_name:",
        STOPPED,
        "a redo uses an answer recorded for another node of the same provider",
    ),
    Mutant(
        "last-call-keeps-tool-calls",
        "roost/engine/call_records.py",
        "if calls and keep_calls else ()",
        "if calls else ()",
        TOOL_LOOP,
        "the tool calls of the last, tool-less call are recorded and run",
    ),
    Mutant(
        "masked-stream-holds-too-little",
        CALLS_PY,
        "max((len(s) for s in redact.secrets), default=1) - 1",
        "max((len(s) for s in redact.secrets), default=1) - 2",
        SECRETS,
        "a secret split across streamed chunks reaches the terminal",
    ),
    Mutant(
        "cut-flag-not-recorded",
        "roost/engine/call_records.py",
        '"cut": response.cut,\n            "refused": response.refused,\n            "notes"',
        '"cut": False,\n            "refused": response.refused,\n            "notes"',
        FINISH,
        "an answer cut at max_tokens is recorded as whole",
    ),
    Mutant(
        "recorder-mask-message",
        "roost/engine/recorder.py",
        "        if self._redact is not None:\n            content = self._redact(content)\n",
        "",
        SECRETS,
        "a message's secret reaches the log unmasked",
    ),
    # -- state, redo and replay (engine/state.py, engine/unfinished.py, engine/replay.py)
    Mutant(
        "state-pair-both-directions",
        STATE_PY,
        "pair_key = key if frm <= to else (to, frm)",
        "pair_key = key",
        PAIR,
        "an agent's view of a pair holds one direction only",
    ),
    Mutant(
        "state-round-per-result",
        STATE_PY,
        "        if not turn.awaiting:\n            turn.rounds += 1",
        "        turn.rounds += 1",
        TOOL_LOOP,
        "each tool result counts as a round, so the tool cap comes early",
    ),
    Mutant(
        "state-approval-per-call",
        STATE_PY,
        "    turn.decisions.pop(result.id, None)\n",
        "",
        TOOL_LOOP,
        "an approval also answers a later call that reuses the id",
    ),
    Mutant(
        "state-resume-approval",
        STATE_PY,
        'if isinstance(pending, InterruptEvent) and pending.reason == "tool_approval":',
        'if isinstance(pending, InterruptEvent) and pending.reason != "tool_approval":',
        TOOL_LOOP,
        "a person's approval is not kept for the call it answers",
    ),
    Mutant(
        "state-select-count",
        STATE_PY,
        "selects[channel] = selects.get(channel, 0) + 1",
        "selects[channel] = selects.get(channel, 0)",
        CHANNEL,
        "every random draw of a channel uses the same generator",
    ),
    Mutant(
        "state-usage-either-count",
        STATE_PY,
        "if usage is not None and (usage.prompt_tokens or usage.completion_tokens):",
        "if usage is not None and (usage.prompt_tokens and usage.completion_tokens):",
        ("tests/engine/test_runner.py", "tests/engine/test_state.py"),
        "a call that counted only prompt (or only completion) tokens is left out of the total",
    ),
    Mutant(
        "unfinished-usable-answer",
        "roost/engine/unfinished.py",
        "return not call.response.tool_calls",
        "return True",
        STOPPED,
        "a redo takes a recorded answer with tool calls for the reply text",
    ),
    Mutant(
        "replay-divergence",
        REPLAY_PY,
        "if old is None or new is None or comparable(old) != comparable(new):",
        "if old is None or new is None:",
        REPLAY,
        "a replay that differs in content (not length) is reported identical",
    ),
    Mutant(
        "replay-stop-points",
        REPLAY_PY,
        "if isinstance(event, RetryEvent) and not isinstance(before, ErrorEvent | FlowEvent):",
        "if isinstance(event, RetryEvent) and isinstance(before, ErrorEvent | FlowEvent):",
        REPLAY,
        "a replay does not stop where the recorded process died",
    ),
    Mutant(
        "replay-stop-reached",
        "roost/engine/recorded/stops.py",
        "if self.points and position >= self.points[0]:",
        "if self.points and position > self.points[0]:",
        REPLAY,
        "a replay stops one event after the recorded process did",
    ),
    # -- what an agent is shown (nodes/agent.py)
    Mutant(
        "pair-view-roles",
        "roost/nodes/agent.py",
        "            if entry.from_ == speaker:\n                messages.append(AssistantMessage",
        "            if entry.from_ != speaker:\n                messages.append(AssistantMessage",
        PAIR,
        "an agent's own messages are shown as the other's",
    ),
    Mutant(
        "channel-view-direct",
        "roost/nodes/agent.py",
        "if history[i].from_ == channel)",
        "if history[i].from_ != channel)",
        CHANNEL,
        "a member is not shown what the channel (a person's feedback) said to it",
    ),
]

STORE = [
    Mutant(
        "jsonl-unterminated-tail",
        "roost/store/jsonl.py",
        'self._unterminated = 0 < valid_end == len(data) and not data.endswith(b"\\n")',
        "self._unterminated = False",
        JSONL,
        "a whole last event without its newline: the next append joins it, two events lost"
        " (missed before)",
    ),
    Mutant(
        "jsonl-torn-tail-kept",
        "roost/store/jsonl.py",
        "if size > self._valid_end:",
        "if size < self._valid_end:",
        JSONL,
        "a torn last line is not cut before the next append, which then joins it",
    ),
    Mutant(
        "jsonl-bad-middle-line",
        "roost/store/jsonl.py",
        "if data[end:].strip():",
        "if not data[end:].strip():",
        JSONL,
        "an invalid line in the middle is taken for a torn tail and the rest dropped",
    ),
    Mutant(
        "jsonl-second-writer",
        "roost/store/jsonl.py",
        "if size != self._size:",
        "if size < self._size:",
        (*JSONL, "tests/store/test_concurrency.py"),
        "a file another writer grew is not read again: two events share a seq",
    ),
    Mutant(
        "sql-optimistic-seq",
        "roost/store/sqllog.py",
        "            if cursor.rowcount != 1:\n                raise self._conflict(first)\n",
        "",
        SQL,
        "an append that does not start where the run ends is stored, leaving a gap",
    ),
    Mutant(
        "sql-next-seq-advance",
        "roost/store/sqllog.py",
        "advance = (first + len(events), delta.status",
        "advance = (first + len(events) - 1, delta.status",
        SQL,
        "the run row's next_seq lags one behind the events",
    ),
    Mutant(
        "sql-fork-of-fork-stop",
        "roost/store/sqllog.py",
        "stop = fork_at if stop is None else min(stop, fork_at)",
        "stop = fork_at if stop is None else max(stop, fork_at)",
        SQL,
        "a fork of a fork reads its grandparent's events past the fork point",
    ),
    Mutant(
        "sql-find-ambiguous-prefix",
        "roost/store/sql.py",
        "if len(found) == 1 and ref:",
        "if len(found) >= 1 and ref:",
        SQL,
        "a prefix that names several runs picks one of them",
    ),
    Mutant(
        "second-run-start",
        "roost/store/checks.py",
        "if isinstance(event, RunStartEvent) and event.seq != 0:",
        "if isinstance(event, RunStartEvent) and event.seq > 1:",
        (*JSONL, "tests/store/test_store_errors.py", "tests/attacks/test_store_attacks.py"),
        "a run_start at seq 1 splices a second run into the log",
    ),
    Mutant(
        "seq-column-max",
        "roost/store/checks.py",
        "if not 0 <= seq < COLUMN_MAX:",
        "if not 0 <= seq <= COLUMN_MAX:",
        (*SQL, "tests/attacks/test_store_attacks.py"),
        "a seq the PostgreSQL column cannot hold reaches the database",
    ),
    Mutant(
        "summary-unlisted-event-keeps-status",
        "roost/store/summary.py",
        "status = STATUS_AFTER.get(event.type, status)",
        'status = STATUS_AFTER.get(event.type, "running")',
        ("tests/test_run_status.py", *SQL),
        "a run paused, then given another flow (or a fork at 1), is listed as running",
    ),
    Mutant(
        "fork-at-the-end",
        "roost/store/forks.py",
        "if at < 1 or at > count:",
        "if at < 1 or at >= count:",
        FORKS,
        "a fork at the end of a run is refused",
    ),
    Mutant(
        "fork-inside-a-step",
        "roost/store/forks.py",
        "    if stamp != events[at - 1].ts:\n        return None\n",
        "",
        FORKS,
        "a fork point between two steps is taken for one inside a step",
    ),
    Mutant(
        "url-secret-param",
        "roost/store/urls.py",
        "if _SECRET_PARAM.search(key):",
        "if _SECRET_PARAM.match(key):",
        ("tests/store/test_store_errors.py", "tests/store/test_sql.py"),
        "a secret query parameter whose name does not start with the word (sslpassword) shows",
    ),
]

PROVIDERS = [
    Mutant(
        "responses-early-end",
        "roost/providers/openai_responses.py",
        'raise broken_stream(settings, "response.completed")',
        "final = {}",
        EDGES,
        "a Responses stream that ends before response.completed is an answer (missed before)",
    ),
    Mutant(
        "chat-tool-name-join",
        "roost/providers/_toolcalls.py",
        "call.name = name if not call.name else call.name + name",
        "call.name = name",
        ("tests/providers/test_toolcalls.py", *EDGES),
        "a tool name split across stream fragments keeps its last piece only (missed before)",
    ),
    Mutant(
        "chat-early-end",
        "roost/providers/openai_chat.py",
        'raise broken_stream(settings, "finish_reason")',
        'finish = "stop"',
        EDGES,
        "a Chat stream closed before its finish_reason is an answer",
    ),
    Mutant(
        "anthropic-early-end",
        "roost/providers/anthropic.py",
        'raise broken_stream(settings, "message_stop")',
        "pass",
        EDGES,
        "an Anthropic stream closed before message_stop is an answer",
    ),
    Mutant(
        "toolcalls-same-index-new-id",
        "roost/providers/_toolcalls.py",
        "(not call_id or not current.id or call_id == current.id)",
        "(not call_id or not current.id or call_id != current.id)",
        ("tests/providers/test_toolcalls.py", *EDGES),
        "calls told apart by id only (every index 0) are joined into one",
    ),
    Mutant(
        "toolcalls-repeated-arguments",
        "roost/providers/_toolcalls.py",
        "if fragment == self.arguments and _is_json(fragment):",
        "if fragment == self.arguments or _is_json(fragment):",
        ("tests/providers/test_toolcalls.py", *EDGES),
        "an argument fragment that is JSON by itself is dropped",
    ),
    Mutant(
        "cut-reasons",
        "roost/providers/_http.py",
        "cut=finish_reason in CUT_REASONS,",
        'cut=finish_reason == "length",',
        FINISH,
        "Anthropic max_tokens and Responses max_output_tokens are not flagged as cut",
    ),
    Mutant(
        "refusal-text-flag",
        "roost/providers/_http.py",
        "refused=refusal or finish_reason in REFUSAL_REASONS,",
        "refused=finish_reason in REFUSAL_REASONS,",
        FINISH,
        "a refusal the model gave as text, with finish stop, is not marked",
    ),
    Mutant(
        "anthropic-pause-limit",
        "roost/providers/anthropic.py",
        "len(parts) > MAX_PAUSES:",
        "len(parts) >= MAX_PAUSES:",
        EDGES,
        "a paused turn is continued one time fewer than MAX_PAUSES",
    ),
    Mutant(
        "retry-after-text-shown",
        "roost/providers/_retry.py",
        "                if sink.emitted:\n"
        "                    raise _interrupted(failure.error, attempts) from exc\n",
        "",
        EDGES,
        "a stream that broke after text was shown is asked again, saying things twice",
    ),
    Mutant(
        "retry-count",
        "roost/providers/_retry.py",
        "last = retry == settings.max_retries",
        "last = retry == settings.max_retries - 1",
        EDGES,
        "one retry fewer than max_retries",
    ),
    # No mutant of the retry-after headers read in providers/_errors.py: they are read
    # for HTTP errors only, which roost's own loop never retries (the SDKs retry those,
    # honouring the headers themselves), so the delay they give is never waited.
    Mutant(
        "error-masked-then-cut",
        "roost/providers/_errors.py",
        "return _short(redact(text, settings.secrets))",
        "return redact(_short(text), settings.secrets)",
        ("tests/providers/test_errors_masking.py", *EDGES),
        "a server error cut through a key shows the key's first characters",
    ),
    Mutant(
        "vendor-key-to-other-server",
        "roost/providers/_common.py",
        "api_key = LOCAL_SERVER_KEY if config.base_url else _vendor_key(key_env, context)",
        "api_key = _vendor_key(key_env, context)",
        (
            "tests/providers/test_common.py::test_the_vendors_key_is_never_sent_to_another_server",
            *WIRE,
            "tests/providers/test_cli_errors.py",
        ),
        "OPENAI_API_KEY is sent to whatever server base_url names",
    ),
    Mutant(
        "fallback-after-text-shown",
        "roost/providers/fallback.py",
        "            except StreamInterruptedError as error:\n"
        "                error.attempts = (*attempts, *error.attempts)\n"
        "                raise\n",
        "",
        ("tests/providers/test_fallback.py", *EDGES),
        "a fallback answers again after the first provider's text was shown",
    ),
    Mutant(
        "history-missing-result",
        "roost/providers/_history.py",
        "out.append(result if result is not None else _missing(call))",
        "out.extend([result] if result is not None else [])",
        ("tests/providers/test_history.py", *WIRE),
        "a tool call left without a result is sent unanswered, which the APIs refuse",
    ),
    Mutant(
        "chat-reasoning-current-loop",
        "roost/providers/openai_chat.py",
        "reasoning = own.parts(message) if index >= loop_start else ()",
        "reasoning = own.parts(message) if index > loop_start else ()",
        WIRE,
        "the reasoning of the tool loop's first answer is not sent back",
    ),
    Mutant(
        "anthropic-cache-written-tokens",
        "roost/providers/anthropic.py",
        'prompt=check("input_tokens", usage.get("input_tokens")) + cached + written,',
        'prompt=check("input_tokens", usage.get("input_tokens")) + cached,',
        (*WIRE, "tests/providers/test_usage_bounds.py"),
        "tokens written to Anthropic's cache are left out of the prompt count",
    ),
]

TEMPLATES = ("tests/templating/test_template_limits.py", "tests/templating/test_template_work.py")

TEMPLATING = [
    Mutant(
        "template-output-cap",
        "roost/templating/environment.py",
        "if written > MAX_OUTPUT:",
        "if written >= MAX_OUTPUT:",
        TEMPLATES,
        "an output of exactly 1 MiB is refused",
    ),
    Mutant(
        "template-value-cap",
        "roost/templating/budget.py",
        "    if size > MAX_SIZE:\n        raise TemplateLimitError(TOO_BIG)\n    spend(",
        "    if size > 8 * MAX_SIZE:\n        raise TemplateLimitError(TOO_BIG)\n    spend(",
        TEMPLATES,
        "a template may build a value of several MiB",
    ),
    Mutant(
        "template-codecs",
        "roost/templating/environment.py",
        "        if attr in _CODEC_METHODS:\n            return False\n",
        "",
        ("tests/templating/test_template_work.py", "tests/attacks/test_sandbox_escapes.py"),
        "encode and decode reach codecs that take seconds in one uninterruptible call",
    ),
    Mutant(
        "template-loop-steps",
        "roost/templating/budget.py",
        "            budget.left -= steps\n",
        "",
        TEMPLATES,
        "a loop's iterations cost no steps: only the deadline stops an endless render",
    ),
    Mutant(
        "template-product-bits",
        "roost/templating/operators.py",
        "check_number_bits(left.bit_length() + right.bit_length())",
        "check_number_bits(max(left.bit_length(), right.bit_length()))",
        TEMPLATES,
        "a product of two long numbers is allowed past the digits a number may have",
    ),
]

# -- the rooms built since the first wave: each list is one room (``--room leases``)

LEASES_PY = "roost/store/leases.py"
LEASE_TESTS = ("tests/store/test_leases.py",)

LEASES = [
    Mutant(
        "lease-live-taken",
        LEASES_PY,
        "| (LEASES.c.expires < now)",
        "| (LEASES.c.expires > now)",
        LEASE_TESTS,
        "a second worker takes a run whose lease is alive: two workers step one run",
    ),
    Mutant(
        "lease-released-with-mail",
        LEASES_PY,
        "            if self._count(conn, run_id):\n                return False\n",
        "",
        LEASE_TESTS,
        "a worker gives its lease back with messages waiting: nobody delivers them",
    ),
    Mutant(
        "lease-queue-limit",
        LEASES_PY,
        "if waiting >= limit:",
        "if waiting > limit:",
        LEASE_TESTS,
        "a run's inbox takes one message more than its limit",
    ),
    Mutant(
        "lease-due-takes-live",
        LEASES_PY,
        ".where(LEASES.c.active.is_(True), LEASES.c.expires < now)",
        ".where(LEASES.c.active.is_(True))",
        LEASE_TESTS,
        "a worker takes over runs whose worker is alive, not only those whose worker died",
    ),
    Mutant(
        "lease-due-takes-idle",
        LEASES_PY,
        ".where(LEASES.c.active.is_(True), LEASES.c.expires < now)",
        ".where(LEASES.c.expires < now)",
        LEASE_TESTS,
        "a worker takes over runs that have no work to do",
    ),
    Mutant(
        "lease-release-keeps-work",
        LEASES_PY,
        ".values(owner=None, expires=0.0, active=False, cancel=False)",
        ".values(owner=None, expires=0.0, cancel=False)",
        LEASE_TESTS,
        "a released run still reads as having work: another worker takes it up again",
    ),
    Mutant(
        "lease-renew-others",
        LEASES_PY,
        ".where(LEASES.c.run.in_(chunk), LEASES.c.owner == self.owner)",
        ".where(LEASES.c.run.in_(chunk))",
        LEASE_TESTS,
        "a worker that lost a lease keeps it alive and never learns it lost it",
    ),
    Mutant(
        "lease-cancel-dead-worker",
        LEASES_PY,
        "                    LEASES.c.expires >= time.time(),\n",
        "",
        LEASE_TESTS,
        "a cancel is said to reach a worker that died: nobody stops the run",
    ),
    Mutant(
        "lease-inbox-order",
        LEASES_PY,
        "            .order_by(INBOX.c.id)\n",
        "            .order_by(INBOX.c.id.desc())\n",
        LEASE_TESTS,
        "messages are delivered newest first",
    ),
    Mutant(
        "lease-own-not-renewed",
        LEASES_PY,
        "                    | (LEASES.c.owner == self.owner)\n",
        "",
        LEASE_TESTS,
        "a worker cannot take its own lease again: it gives up a run it still holds",
    ),
]

MEMORY_PY = "roost/store/memory.py"
FORK_MEMORY_PY = "roost/engine/fork_memory.py"
MEMORY_TESTS = ("tests/store/test_memory.py", "tests/engine/test_fork_memory.py")

MEMORY = [
    Mutant(
        "fork-memory-later-moment",
        FORK_MEMORY_PY,
        "min(as_of, self.memory_at)",
        "max(as_of, self.memory_at)",
        MEMORY_TESTS,
        "a fork asked for a moment after its fork point sees what other runs wrote since",
    ),
    Mutant(
        "fork-memory-earlier-moment",
        FORK_MEMORY_PY,
        "return self.memory_at if as_of is None else min(as_of, self.memory_at)",
        "return self.memory_at",
        MEMORY_TESTS,
        "a fork asked for a moment before its fork point sees what was written after it",
    ),
    Mutant(
        "fork-memory-own-writes-as-of",
        FORK_MEMORY_PY,
        "(as_of is None or event.ts <= as_of)",
        "(as_of is None or event.ts >= as_of)",
        MEMORY_TESTS,
        "a fork reading its memory as of a moment sees its own later writes, not its earlier",
    ),
    Mutant(
        "fork-memory-forgotten-shown",
        FORK_MEMORY_PY,
        "return (mine + [entry for entry in found if entry.key not in own])[:limit]",
        "return (mine + found)[:limit]",
        MEMORY_TESTS,
        "a key a fork forgot or replaced is still recalled from the shared memory",
    ),
    Mutant(
        "memory-as-of-older-version",
        MEMORY_PY,
        "n.at <= :as_of AND n.id > m.id",
        "n.at <= :as_of AND n.id < m.id",
        MEMORY_TESTS,
        "memory read as of a moment gives a key's first version, not the one of that moment",
    ),
    Mutant(
        "memory-forget-missing",
        MEMORY_PY,
        "            if not self._retire(connection, scope, key):\n                return False\n",
        "            self._retire(connection, scope, key)\n",
        MEMORY_TESTS,
        "forgetting a key that is not there says it was forgotten",
    ),
    Mutant(
        "memory-timeline-as-of",
        MEMORY_PY,
        "upper = min(\n",
        "upper = max(\n",
        MEMORY_TESTS,
        "a timeline read as of a moment and until a later one shows entries kept after it",
    ),
    # Not listed: dropping "AND latest" from _RETIRE changes nothing, as only the
    # latest version of a key is ever marked latest (setting false on the others again).
    Mutant(
        "fork-memory-entries-forgotten-shown",
        FORK_MEMORY_PY,
        "seen = [entry for entry in shared if entry.key not in own]",
        "seen = list(shared)",
        MEMORY_TESTS,
        "a fork lists the keys it forgot, and a key it replaced twice",
    ),
]

COMPACTION_PY = "roost/engine/compaction.py"
WINDOW_PY = "roost/context_window.py"
COMPACTION_TESTS = ("tests/engine/test_compaction.py", "tests/test_context_window.py")

COMPACTION = [
    Mutant(
        "compaction-no-cut-after-failed-summary",
        COMPACTION_PY,
        "if summarised is False or self.estimate(asker) > hard:",
        "if self.estimate(asker) > hard:",
        COMPACTION_TESTS,
        "a summary that failed leaves the request too long: the model refuses it",
    ),
    Mutant(
        "compaction-summary-takes-latest",
        COMPACTION_PY,
        "last = len(thread.indices) - 1  # the latest entry too",
        "last = len(thread.indices)  # the latest entry too",
        COMPACTION_TESTS,
        "the message the agent answers is summarised away with the older ones",
    ),
    Mutant(
        "compaction-summary-takes-first",
        COMPACTION_PY,
        "start = max(base.covered, 1)  # the first entry is always shown",
        "start = max(base.covered, 0)  # the first entry is always shown",
        COMPACTION_TESTS,
        "the conversation's first message (the task) is summarised away",
    ),
    Mutant(
        "compaction-summary-one-more",
        COMPACTION_PY,
        "entries = [history[i] for i in thread.indices[start:covered]]",
        "entries = [history[i] for i in thread.indices[start : covered + 1]]",
        COMPACTION_TESTS,
        "the summary is written of one message more than it replaces (still shown after it)",
    ),
    Mutant(
        "window-placeholder-at-one",
        WINDOW_PY,
        "        if self.covered <= 1:\n",
        "        if self.covered < 1:\n",
        COMPACTION_TESTS,
        "a view that left nothing out says that 0 earlier messages were left out",
    ),
    Mutant(
        "window-ratio-unbounded",
        WINDOW_PY,
        "return min(max(self.chars / self.tokens, low), high)",
        "return max(self.chars / self.tokens, low)",
        COMPACTION_TESTS,
        "a provider reporting few tokens makes the estimates of every request tiny",
    ),
    Mutant(
        "window-trim-latest-round",
        WINDOW_PY,
        "if seq >= last_answer:",
        "if seq > last_answer:",
        COMPACTION_TESTS,
        "the latest answer's reasoning is trimmed, though its API wants it back unchanged",
    ),
    Mutant(
        "window-covered-off-by-one",
        WINDOW_PY,
        "shown = sizes[0] + (total - sizes[covered - 1])",
        "shown = sizes[0] + (total - sizes[covered - 2])",
        COMPACTION_TESTS,
        "a compacted view is counted one message bigger than it is",
    ),
    # Not listed: ``break`` made ``continue`` in trimmable changes nothing (every seq after
    # the latest answer is after it too).
]

TOOLS_FILES_PY = "roost/tools/builtin_files.py"
TOOLS_HTTP_PY = "roost/tools/builtin_http.py"
TOOLS_SHELL_PY = "roost/tools/builtin_shell.py"
FILE_TESTS = ("tests/tools/test_builtin_files.py",)
HTTP_TESTS = ("tests/tools/test_builtin_http.py",)
SHELL_TESTS = ("tests/tools/test_builtin_shell.py",)

BUILTIN_TOOLS = [
    Mutant(
        "files-sibling-of-root",
        TOOLS_FILES_PY,
        "if not target.is_relative_to(root):",
        "if not str(target).startswith(str(root)):",
        FILE_TESTS,
        "a path into a sibling folder whose name starts with the root's (root2) is let through",
    ),
    Mutant(
        "files-read-cut-at-limit",
        TOOLS_FILES_PY,
        "data = _read_at_most(fd, self.max_bytes + 1)",
        "data = _read_at_most(fd, self.max_bytes)",
        FILE_TESTS,
        "a file over max_bytes is read cut short instead of refused",
    ),
    Mutant(
        "files-append-past-limit",
        TOOLS_FILES_PY,
        "if append and _size(target) + len(data) > self.max_bytes:",
        "if append and len(data) > self.max_bytes:",
        FILE_TESTS,
        "appending grows a file past max_bytes",
    ),
    Mutant(
        "files-listing-one-more",
        TOOLS_FILES_PY,
        "if len(lines) == self.max_entries:",
        "if len(lines) == self.max_entries + 1:",
        FILE_TESTS,
        "a listing shows one entry more than max_entries",
    ),
    Mutant(
        "http-wildcard-suffix",
        TOOLS_HTTP_PY,
        "return host.endswith(allowed[1:]) and len(host) > len(allowed) - 1",
        "return host.endswith(allowed[2:]) and len(host) > len(allowed) - 2",
        HTTP_TESTS,
        "*.example.com lets badexample.com through",
    ),
    Mutant(
        "http-redirect-unchecked",
        TOOLS_HTTP_PY,
        "target = _allowed(response.url.join(location), settings.hosts)",
        "target = response.url.join(location)",
        HTTP_TESTS,
        "a redirect leads to a host the flow does not allow",
    ),
    Mutant(
        "http-one-redirect-short",
        TOOLS_HTTP_PY,
        "for _ in range(MAX_REDIRECTS + 1):",
        "for _ in range(MAX_REDIRECTS):",
        HTTP_TESTS,
        "an answer reached by five redirects is refused",
    ),
    Mutant(
        "shell-output-not-cut",
        TOOLS_SHELL_PY,
        "self.kept.extend(chunk[: self.limit - len(self.kept)])",
        "self.kept.extend(chunk)",
        SHELL_TESTS,
        "a command's output goes past max_output",
    ),
    Mutant(
        "shell-failure-not-flagged",
        TOOLS_SHELL_PY,
        'return f"{output.text()}[exit status {process.returncode}]", process.returncode != 0',
        'return f"{output.text()}[exit status {process.returncode}]", False',
        SHELL_TESTS,
        "a command that failed reads as a success to the model and the hooks",
    ),
    Mutant(
        "http-html-refused",
        TOOLS_HTTP_PY,
        'kind.startswith("text/")',
        'kind == "text/plain"',
        HTTP_TESTS,
        "an HTML page is refused as not text",
    ),
    Mutant(
        "shell-env-not-the-flows",
        TOOLS_SHELL_PY,
        "return {**passed, **settings.env}",
        "return {**settings.env, **passed}",
        SHELL_TESTS,
        "a variable the flow sets for its commands (LANG, HOME) is replaced by roost's own",
    ),
]

SKILLS_PY = "roost/flow/skills.py"
SKILL_TESTS = ("tests/flow/test_skills.py", "tests/engine/test_skills.py")

SKILLS = [
    Mutant(
        "skills-farther-wins",
        SKILLS_PY,
        "found.skills.setdefault(skill.name, skill)",
        "found.skills[skill.name] = skill",
        SKILL_TESTS,
        "the user's skill of a name replaces the flow's own",
    ),
    Mutant(
        "skills-oversize-cut",
        SKILLS_PY,
        "data = handle.read(MAX_SKILL_BYTES + 1)",
        "data = handle.read(MAX_SKILL_BYTES)",
        SKILL_TESTS,
        "a SKILL.md over the size limit is read cut short instead of refused",
    ),
    Mutant(
        "skills-body-holds-the-line",
        SKILLS_PY,
        'return "".join(lines[1:index]), "".join(lines[index + 1 :])',
        'return "".join(lines[1:index]), "".join(lines[index:])',
        SKILL_TESTS,
        "a skill's instructions start with the front matter's closing line",
    ),
    Mutant(
        "skills-catalogue-unasked",
        SKILLS_PY,
        "if names is None or name in names",
        "if names is None or name",
        SKILL_TESTS,
        "agents are told of skills no agent lists",
    ),
    Mutant(
        "skills-all-ignored",
        SKILLS_PY,
        '        if agent.skills == "all":\n            return None\n',
        '        if agent.skills == "all":\n            continue\n',
        SKILL_TESTS,
        "an agent listing all skills is told of none (unless others list them)",
    ),
    Mutant(
        "skills-place-itself",
        SKILLS_PY,
        "    if own.is_file():\n        return [own]\n",
        "",
        SKILL_TESTS,
        "a skill_paths entry that is itself a skill folder is not found",
    ),
    Mutant(
        "skills-description-limit",
        SKILLS_PY,
        "if len(description) > MAX_DESCRIPTION:",
        "if len(description) >= MAX_DESCRIPTION:",
        SKILL_TESTS,
        "a description of exactly the longest length allowed is refused",
    ),
]

HOOKS_PY = "roost/engine/hooks.py"
HOOK_TESTS = ("tests/engine/test_hooks.py",)

HOOKS = [
    Mutant(
        "hooks-asked-after-refusal",
        HOOKS_PY,
        "                if call.id in turn.refused:\n                    break\n",
        "",
        HOOK_TESTS,
        "the before_tool hooks after one that refused a call are asked all the same",
    ),
    Mutant(
        "hooks-change-not-passed-on",
        HOOKS_PY,
        "arguments = turn.changed.get(call.id, call.arguments)",
        "arguments = call.arguments",
        HOOK_TESTS,
        "a before_tool hook sees the arguments the model wrote, not those the hook before left",
    ),
    Mutant(
        "hooks-after-refusal-ignored",
        HOOKS_PY,
        '            if decision.decision == "refuse":\n'
        '                return decision.reason or "", True, decided\n',
        "",
        HOOK_TESTS,
        "a result an after_tool hook refused reaches the model",
    ),
    Mutant(
        "hooks-after-error-flag",
        HOOKS_PY,
        '"result": {"content": content, "is_error": is_error},',
        '"result": {"content": content, "is_error": False},',
        HOOK_TESTS,
        "an after_tool hook is told a failed call succeeded",
    ),
    Mutant(
        "hooks-reply-rewrite-not-passed-on",
        HOOKS_PY,
        '"content": state.rewrites.get(key, entry.content),',
        '"content": entry.content,',
        HOOK_TESTS,
        "a before_reply hook sees the message as written, not as the hook before rewrote it",
    ),
    Mutant(
        "hooks-reply-asked-after-refusal",
        HOOKS_PY,
        "            if key in state.refusals:\n                break\n",
        "",
        HOOK_TESTS,
        "the before_reply hooks after one that refused a message are asked all the same",
    ),
    Mutant(
        "hooks-replay-first-decision",
        "roost/engine/recorded/decisions.py",
        "event = waiting.popleft()",
        "event = waiting[0]",
        HOOK_TESTS,
        "a replay answers every message a before_reply hook saw with its first decision",
    ),
]

BACKGROUND_PY = "roost/engine/background.py"
BACKGROUND_TESTS = ("tests/engine/test_background.py",)

BACKGROUND = [
    Mutant(
        "background-flow-cap",
        BACKGROUND_PY,
        "if open_tasks >= flow_cap:",
        "if open_tasks > flow_cap:",
        BACKGROUND_TESTS,
        "a run opens one background task more than max_background",
    ),
    Mutant(
        "background-agent-cap",
        BACKGROUND_PY,
        "own >= agent_cap:",
        "own > agent_cap:",
        BACKGROUND_TESTS,
        "an agent opens one background task more than its max_background",
    ),
    Mutant(
        "background-id-reused",
        BACKGROUND_PY,
        "self._numbered = max(self._numbered, self._started()) + 1",
        "self._numbered = self._numbered + 1",
        BACKGROUND_TESTS,
        "a run continued in another process names a new task like one it started before",
    ),
    Mutant(
        "background-revived-twice",
        BACKGROUND_PY,
        "            if task.task not in self._jobs:\n    ",
        "",
        BACKGROUND_TESTS,
        "a task still running is started again: its child run runs twice",
    ),
    Mutant(
        "background-crash-is-success",
        BACKGROUND_PY,
        'return f"the background task failed: {error_text(exc)}", True',
        'return f"the background task failed: {error_text(exc)}", False',
        BACKGROUND_TESTS,
        "a child run that crashed is delivered as finished",
    ),
    Mutant(
        "background-open-shown-done",
        BACKGROUND_PY,
        'ended.get(key, "running")',
        'ended.get(key, "done")',
        BACKGROUND_TESTS,
        "roost show lists a task still running as done",
    ),
]

FLOWTEST_TESTS = ("tests/flowtest/test_cases.py", "tests/flowtest/test_cli.py")

FLOWTEST = [
    Mutant(
        "flowtest-invalid-hidden-by-failure",
        "roost/flowtest/session.py",
        "        if self.invalid:\n            return 2\n        return 1 if self.failed else 0",
        "        if self.failed:\n            return 1\n        return 2 if self.invalid else 0",
        FLOWTEST_TESTS,
        "an invalid test file beside a failing case exits 1, as if every file had loaded",
    ),
    Mutant(
        "flowtest-all-invalid-usage",
        "roost/flowtest/session.py",
        "if not files and not outcome.invalid:",
        "if not files:",
        FLOWTEST_TESTS,
        "test files that are all invalid are reported as no test files at all",
    ),
    Mutant(
        "flowtest-arguments-any",
        "roost/flowtest/cases.py",
        "return all(key in call.arguments and call.arguments[key] == value",
        "return any(key in call.arguments and call.arguments[key] == value",
        FLOWTEST_TESTS,
        "tool_called passes when one of the expected arguments matches",
    ),
    Mutant(
        "flowtest-only-first-call",
        "roost/flowtest/cases.py",
        "for one in wanted if isinstance(wanted, list) else [wanted]:",
        "for one in (wanted if isinstance(wanted, list) else [wanted])[:1]:",
        FLOWTEST_TESTS,
        "tool_called with a list checks only its first call",
    ),
    Mutant(
        "flowtest-chosen-prefix",
        "roost/flowtest/cases.py",
        "if chosen == expect.chosen:",
        "if chosen[: len(expect.chosen)] == expect.chosen:",
        FLOWTEST_TESTS,
        "chosen passes when the directors chose more than expected",
    ),
    Mutant(
        "flowtest-contains-flipped",
        "roost/flowtest/cases.py",
        "(got is None or final.contains not in got)",
        "(got is None or final.contains in got[1:])",
        FLOWTEST_TESTS,
        "final.contains fails for a message that starts with the text",
    ),
]

PRICING_TABLE_PY = "roost/pricing/_table.py"
PRICING_COSTS_PY = "roost/pricing/_costs.py"
PRICING_TESTS = ("tests/test_pricing.py",)

PRICING = [
    Mutant(
        "pricing-variant-any-suffix",
        PRICING_TABLE_PY,
        'and name.startswith(key) and name[len(key)] in "-:@"',
        "and name.startswith(key)",
        PRICING_TESTS,
        "gpt-4.5 is priced as gpt-4",
    ),
    Mutant(
        "pricing-cached-over-prompt",
        PRICING_COSTS_PY,
        "cached = min(usage.cached_tokens, usage.prompt_tokens)",
        "cached = usage.cached_tokens",
        PRICING_TESTS,
        "more cached tokens reported than prompt tokens make a call cost less than nothing",
    ),
    Mutant(
        "pricing-cached-charged-twice",
        PRICING_COSTS_PY,
        "(usage.prompt_tokens - cached) * price.input",
        "usage.prompt_tokens * price.input",
        PRICING_TESTS,
        "cached tokens are charged at the full price and the cached one",
    ),
    Mutant(
        "pricing-flow-cached-free",
        PRICING_TABLE_PY,
        "cached = setting.cached_input if setting.cached_input is not None else setting.input",
        "cached = setting.cached_input if setting.cached_input is not None else 0.0",
        PRICING_TESTS,
        "a flow price without cached_input makes cached tokens free",
    ),
    Mutant(
        "pricing-first-attempt",
        PRICING_COSTS_PY,
        'if attempts and attempts[-1].outcome == "ok":\n        return str(attempts[-1].provider)',
        'if attempts and attempts[-1].outcome == "ok":\n        return str(attempts[0].provider)',
        PRICING_TESTS,
        "a fallback's answer is priced as the provider that failed",
    ),
    Mutant(
        "pricing-unpriced-not-counted",
        PRICING_COSTS_PY,
        "return RunCost(self.amount, self.estimated, self.unpriced + 1)",
        "return RunCost(self.amount, self.estimated, self.unpriced)",
        PRICING_TESTS,
        "calls of unknown price are left out of a run's cost without saying so",
    ),
    # Not listed: ``len(key) > best_length`` made ``>=`` in known_model changes nothing: two
    # different keys of one length cannot both start the same name.
]

TELEMETRY_TESTS = ("tests/telemetry/test_spans.py",)
GENAI_PY = "roost/telemetry/genai.py"

TELEMETRY = [
    Mutant(
        "telemetry-first-provider",
        GENAI_PY,
        "answered_by = attempts[-1].provider if attempts else event.provider",
        "answered_by = attempts[0].provider if attempts else event.provider",
        TELEMETRY_TESTS,
        "after a fallback, the span names the provider that failed as the one that answered",
    ),
    Mutant(
        "telemetry-last-call-tokens",
        GENAI_PY,
        "totals[name] = (before if isinstance(before, int) else 0) + getattr(usage, field)",
        "totals[name] = getattr(usage, field)",
        TELEMETRY_TESTS,
        "a reply's token totals are those of its last model call, not of all of them",
    ),
    Mutant(
        "telemetry-placeholder-model",
        GENAI_PY,
        'if isinstance(model, str) and "${" not in model:',
        "if isinstance(model, str):",
        TELEMETRY_TESTS,
        "a span's requested model reads ${MODEL} instead of the model asked for",
    ),
    Mutant(
        "telemetry-first-failure",
        GENAI_PY,
        "for attempt in reversed(event.attempts):",
        "for attempt in event.attempts:",
        TELEMETRY_TESTS,
        "a failed call's error type is how its first attempt failed, not its last",
    ),
    Mutant(
        "telemetry-open-turn-not-failed",
        "roost/telemetry/spans.py",
        "turn.error = turn.error or error",
        "turn.error = turn.error",
        TELEMETRY_TESTS,
        "a reply cut short by a run that stopped at an error reads as a success",
    ),
    # Not listed: dropping ``or 1`` in spans._bits changes an id only when sha256 gives
    # 64 zero bits, which no run id does.
]

# -- serve/ and batch/: texts that other work moves least (the one-turn rule, the worker
# count, what counts as finished); their tests are named one by one, as the rest of those
# files start servers.
QUEUE_TESTS = "tests/serve/test_queue.py::"

SERVE = [
    Mutant(
        "serve-choice-takes-every-answer",
        "roost/serve/session.py",
        'if pending.reason in ("tool_approval", "tool_plan", "manual_select"):',
        'if pending.reason in ("tool_approval", "tool_plan"):',
        (QUEUE_TESTS + "test_an_approval_a_plan_or_a_choice_takes_one_answer_of_those_waiting",),
        "a run waiting for a choice of speaker is given every queued answer as one name",
    ),
    Mutant(
        "serve-approval-takes-every-answer",
        "roost/serve/session.py",
        'if pending.reason in ("tool_approval", "tool_plan", "manual_select"):',
        'if pending.reason in ("tool_plan", "manual_select"):',
        (QUEUE_TESTS + "test_an_approval_a_plan_or_a_choice_takes_one_answer_of_those_waiting",),
        "an approval is answered with every queued answer joined: neither yes nor no",
    ),
    Mutant(
        "serve-turn-spans-senders",
        "roost/serve/session.py",
        "            if turn:\n                break\n",
        "",
        (
            QUEUE_TESTS
            + "test_messages_from_another_sender_are_refused_before_a_turn_and_end_it_after",
        ),
        "a message from someone else in the middle of a turn is dropped, and the turn runs past it",
    ),
    Mutant(
        "serve-unnamed-sender-refused",
        "roost/serve/session.py",
        "if message.sender is not None and message.sender != pending.from_:",
        "if message.sender != pending.from_:",
        (QUEUE_TESTS + "test_a_persons_turn_takes_every_message_waiting_from_them_in_order",),
        "a message sent without naming who speaks is refused instead of answering the pause",
    ),
    Mutant(
        "serve-pause-kind-unnamed",
        "roost/serve/rows.py",
        '"reason": pending.reason or "human",',
        '"reason": pending.reason,',
        (QUEUE_TESTS + "test_what_a_paused_run_waits_for_names_the_kind_of_pause",),
        "a run paused for a person says it waits for no kind of answer (null)",
    ),
]

BATCH_TESTS = "tests/batch/test_batch.py::"

BATCH = [
    Mutant(
        "batch-one-worker",
        "roost/batch/local.py",
        "range(min(concurrency, len(todo)))",
        "range(min(1, len(todo)))",
        (BATCH_TESTS + "test_concurrency_n_runs_n_rows_at_once",),
        "--concurrency N runs one row at a time",
    ),
    Mutant(
        "batch-paused-not-finished",
        "roost/batch/plan.py",
        "stored.get(item.run_id) in FINISHED",
        'stored.get(item.run_id) == "terminated"',
        (
            BATCH_TESTS
            + "test_a_row_that_ended_paused_counts_as_finished_when_the_batch_runs_again",
        ),
        "a row whose run ended paused is run again by the next batch command",
    ),
    Mutant(
        "batch-paused-is-a-failure",
        "roost/batch/rows.py",
        'FINISHED = ("terminated", "paused")',
        'FINISHED = ("terminated",)',
        (
            BATCH_TESTS
            + "test_a_row_that_ended_paused_counts_as_finished_when_the_batch_runs_again",
        ),
        "a row that ended paused (waiting for a person) fails the batch",
    ),
    Mutant(
        "batch-failures-exit-0",
        "roost/batch/session.py",
        "return 3 if self.failed else 0",
        "return 0",
        (BATCH_TESTS + "test_running_again_runs_only_the_rows_without_a_finished_run",),
        "a batch whose rows failed exits 0, and CI takes it for a success",
    ),
    Mutant(
        "batch-retry-new-run",
        "roost/batch/local.py",
        "new = item.run_id not in plan.stored",
        "new = True",
        (BATCH_TESTS + "test_running_again_runs_only_the_rows_without_a_finished_run",),
        "a row that failed is not retried from its run: the next command cannot store it",
    ),
]


SAME_ORIGIN = ("tests/attacks/test_same_origin.py",)

# roost serve without a token: only requests by its own names, from its own page.
SERVE_ACCESS = [
    Mutant(
        "access-any-name",
        "roost/serve/access.py",
        "            return ipaddress.ip_address(name).is_loopback\n        except ValueError:\n"
        "            return False",
        "            return ipaddress.ip_address(name).is_loopback\n        except ValueError:\n"
        "            return True",
        SAME_ORIGIN,
        "a request naming any host is served: a rebound name reads the API",
    ),
    Mutant(
        "access-origin-port",
        "roost/serve/access.py",
        "return (parts.hostname.lower(), port) == (name, given or _DEFAULT_PORTS[parts.scheme])",
        "return parts.hostname.lower() == name",
        SAME_ORIGIN,
        "a page of the same host on another port passes for the server's own",
    ),
    Mutant(
        "access-websocket-origin",
        "roost/serve/access.py",
        'changes = scope["type"] == "websocket" or scope.get("method", "GET") not in SAFE_METHODS',
        'changes = scope.get("method", "GET") not in SAFE_METHODS',
        SAME_ORIGIN,
        "a WebSocket of another site streams a run and approves its tool calls",
    ),
    Mutant(
        "access-post-is-safe",
        "roost/serve/access.py",
        'SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})',
        'SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS", "POST"})',
        SAME_ORIGIN,
        "a cross-site POST starts, retries or cancels runs",
    ),
]

# The edges a person touches first: a run's answer, batch files, costs, keys.
EDGES_CLI = [
    Mutant(
        "answer-keeps-marker",
        "roost/runstate/_history.py",
        'text = without_marker(entry.content, rule_of(entry.from_) if rule_of else "end")',
        "text = entry.content",
        ("tests/test_run_answer.py",),
        "a run whose person says TERMINATE answers TERMINATE",
    ),
    Mutant(
        "answer-ignores-markers-rule",
        "roost/runstate/_history.py",
        'rule_of(entry.from_) if rule_of else "end"',
        '"end"',
        ("tests/test_run_answer.py",),
        "a flow with markers: whole loses the TERMINATE its answer says as text",
    ),
    Mutant(
        "batch-out-stem",
        "roost/batch/results.py",
        'inputs.with_name(f"{inputs.name}.results.jsonl")',
        'inputs.with_name(f"{inputs.stem}.results.jsonl")',
        ("tests/attacks/test_batch_inputs.py",),
        "a.csv and a.jsonl write over each other's results",
    ),
    Mutant(
        "cost-unrounded",
        "roost/pricing/_costs.py",
        "    return round(amount, COST_DECIMALS)\n",
        "    return amount\n",
        ("tests/batch/test_batch.py",),
        "a cost is written with the float's noise (1.5149999999999999e-05)",
    ),
    Mutant(
        "deep-row-unbounded",
        "roost/batch/inputs.py",
        "if item is None or _deeper_than(item, MAX_DEPTH):",
        "if item is None:",
        ("tests/attacks/test_batch_inputs.py",),
        "a row's vars nested 900 deep crash the batch with a RecursionError",
    ),
    Mutant(
        "csv-lenient",
        "roost/batch/inputs.py",
        "reader = csv.reader(rest, strict=True)",
        "reader = csv.reader(rest)",
        ("tests/attacks/test_batch_inputs.py",),
        "a quote never closed swallows every later row without a word",
    ),
    Mutant(
        "invalid-rows-retried",
        "roost/cli/batch_command.py",
        "    if invalid:\n",
        "    if False:\n",
        ("tests/attacks/test_batch_inputs.py",),
        "an invalid row is only told to run again, which cannot fix it",
    ),
    Mutant(
        "keyless-run-stored",
        "roost/cli/run_commands.py",
        "    refuse_keyless(flow)\n",
        "",
        ("tests/providers/test_keys.py",),
        "a run without its provider's key is stored, then stops at its first call",
    ),
    Mutant(
        "error-said-twice",
        "roost/cli/console.py",
        "            if self.error_told_at_end:\n                return\n",
        "",
        ("tests/providers/test_keys.py",),
        "the error a run stops at is printed in the transcript and again at the end",
    ),
    Mutant(
        "events-folder-refused",
        "roost/cli/logs.py",
        "            folder.mkdir(parents=True, exist_ok=True)\n",
        "            raise OSError(2, 'No such file or directory')\n",
        ("tests/cli/test_run_commands.py",),
        "--events recordings/x.jsonl fails when recordings/ does not exist yet",
    ),
]

# One source for each derived fact: the resolver, the system prompt, the clock, the stamp.
ONE_SOURCE = [
    Mutant(
        "refs-server-before-entry",
        "roost/flow/tool_refs.py",
        "    if entry is not None:\n        if child is None:",
        "    if entry is not None and not (child and parent in flow.mcp_servers):\n"
        "        if child is None:",
        ("tests/flow/test_tool_refs.py",),
        "a Python tool X no longer comes before the MCP server X in X#tool",
    ),
    Mutant(
        "refs-memory-without-section",
        "roost/flow/tool_refs.py",
        "    if flow.memory is None:\n        raise UnresolvedReference(",
        "    if flow.memory is None and False:\n        raise UnresolvedReference(",
        ("tests/flow/test_tool_refs.py", "tests/flow/test_corpus.py"),
        "memory#... resolves in a flow without a memory: section",
    ),
    Mutant(
        "declared-approval-dropped",
        "roost/tools/declared.py",
        '    approval = config.approval == "always"',
        "    approval = False",
        ("tests/tools/test_declared.py",),
        "a replay offers a tool that asks for approval as one that does not",
    ),
    Mutant(
        "system-prompt-no-skills",
        "roost/nodes/agent.py",
        "    listed = skills() if flow.agents[agent].skills else ()",
        "    listed = skills() if flow.agents[agent].skills and strict else ()",
        ("tests/engine/test_skills.py",),
        "the context estimate leaves the skills list out again",
    ),
    Mutant(
        "now-iso-drops-zero-fraction",
        "roost/events/_texts.py",
        '    return f"{prefix}{nanos // 1000:06d}Z"',
        '    return f"{prefix}{nanos // 1000:06d}Z" if nanos // 1000 else prefix[:-1] + "Z"',
        ("tests/store/test_sql.py",),
        "a time at a whole second is written without its fraction",
    ),
    Mutant(
        "stamped-log-stamps-nothing",
        "roost/ports.py",
        "        return event.model_copy(update=unset) if unset else event",
        "        return event",
        ("tests/tools/test_subflows.py", "tests/batch/test_batch.py"),
        "a child run no longer names its parent, a batch row's run its batch",
    ),
]

# Speed work that changed how a result is found: the graph checks without networkx.
SPEED = [
    # Runner.events()' bookkeeping, one note per task for the whole loop (call_cursors.py).
    Mutant(
        "cursor-call-after-seen",
        "roost/engine/_call_cursors.py",
        "        at = bisect.bisect_left(self._epochs, epoch)\n",
        "        at = bisect.bisect_right(self._epochs, epoch)\n",
        ("tests/engine/test_call_cursors.py",),
        "a consumer made just before start() and run after it misses that whole call",
    ),
    Mutant(
        "cursor-seen-renoted",
        "roost/engine/_call_cursors.py",
        "            if task not in seen:\n                seen[task] = self.epoch\n",
        "            seen[task] = self.epoch\n",
        ("tests/engine/test_call_cursors.py",),
        "a consumer made before two calls sees only the last: its making is dated anew",
    ),
    Mutant(
        "cursor-past-all-forgotten",
        "roost/engine/_call_cursors.py",
        "        at = bisect.bisect_left(self._epochs, tasks.oldest())\n",
        "        at = len(self._epochs)\n",
        ("tests/engine/test_call_cursors.py",),
        "a consumer made before many calls loses them: calls a living task follows are dropped",
    ),
    Mutant(
        "graph-reach-one-route",
        "roost/flow/graph.py",
        "                reached.add(v)\n                todo.append(v)\n",
        "                reached.add(v)\n",
        ("tests/flow/test_validate_all.py", "tests/flow"),
        "an agent two routes away from the start is warned about as unreachable",
    ),
    Mutant(
        "graph-loops-skipped",
        "roost/flow/graph.py",
        "    if not uncapped:\n        return\n",
        "    if uncapped:\n        return\n",
        ("tests/flow/test_load.py",),
        "a loop of agents that nothing caps is no longer warned about",
    ),
    # The director's transcript, kept with the channel's thread and extended (issue 27).
    Mutant(
        "transcript-lines-not-kept",
        "roost/runstate/_history.py",
        "            lines += new\n",
        "",
        ("tests/nodes/test_directors.py",),
        "every choice adds the whole transcript again: a director sees messages twice",
    ),
    Mutant(
        "transcript-text-not-extended",
        "roost/runstate/_history.py",
        '            self._text += "".join([text + "\\n" for text in new])\n',
        '            self._text = "".join([text + "\\n" for text in new])\n',
        ("tests/nodes/test_directors.py",),
        "a director's prompt shows only the messages since its last choice",
    ),
    Mutant(
        "transcript-lines-unended",
        "roost/runstate/_history.py",
        '"".join([text + "\\n" for text in new])',
        '"\\n".join(new)',
        ("tests/nodes/test_directors.py",),
        "the built-in prompt runs a choice's new lines into the next ones",
    ),
    Mutant(
        "transcript-nothing-said-lost",
        DIRECTORS_PY,
        "transcript_text(state, channel) or NOTHING_SAID",
        "transcript_text(state, channel)",
        ("tests/nodes/test_directors.py",),
        "a director asked before anyone spoke is shown an empty conversation",
    ),
    # The call of a provider that never waits, unobserved, sets nothing up (issue 27).
    Mutant(
        "unwatched-calls-ignore-observers",
        "roost/engine/calls.py",
        'watched = limits.observers or getattr(provider, "takes_turns", True)',
        'watched = getattr(provider, "takes_turns", True)',
        ("tests/engine/test_call_observers.py",),
        "a server's metrics never hear of the calls of a scripted provider",
    ),
    Mutant(
        "unwatched-failure-untold",
        "roost/engine/calls.py",
        "            if limited is not None:\n                limited.failed = True\n",
        "",
        ("tests/engine/test_call_observers.py",),
        "a failed call is reported to the observers as one that answered",
    ),
]

# A person's keys and what a person is told (issue 24: approvals, compaction said, the
# window a server names, the small things at the edges).
EDGES_PERSON = [
    Mutant(
        "approval-y",
        "roost/approval.py",
        'APPROVE = ("yes", "y")',
        'APPROVE = ("yes",)',
        ("tests/test_approval.py",),
        "a person's y refuses the call instead of approving it",
    ),
    Mutant(
        "approval-no-is-a-reason",
        "roost/approval.py",
        'REFUSE = ("no", "n")',
        "REFUSE: tuple[str, ...] = ()",
        ("tests/test_approval.py",),
        "a plain no is given to the model as the reason 'no'",
    ),
    Mutant(
        "window-learnt",
        "roost/runstate/_fold.py",
        "    limit = limit_in(error)\n    if limit is not None:",
        "    limit = limit_in(error)\n    if False:",
        ("tests/providers/test_context_overflow.py",),
        "the limit a server names in its refusal is not learnt: the table's window stays",
    ),
    Mutant(
        "window-learnt-used",
        "roost/engine/compaction.py",
        "return limit if learned is None or limit is None else min(limit, learned)",
        "return limit",
        ("tests/providers/test_context_cli.py",),
        "the learnt limit is shown but requests are not fitted to it",
    ),
    Mutant(
        "window-anthropic-wording",
        "roost/context_window.py",
        '    r"> ?(\\d[\\d,]*) maximum",\n',
        "",
        ("tests/test_context_window_limits.py",),
        "Anthropic's 'N tokens > M maximum' names no limit",
    ),
    Mutant(
        "compact-must-shrink",
        "roost/engine/compaction.py",
        "        if tokens_after >= before:\n            return False\n",
        "",
        ("tests/engine/test_compaction.py",),
        "a compaction that makes the view bigger is recorded",
    ),
    Mutant(
        "mcp-own-python",
        "roost/tools/mcp_tool.py",
        "    if command in _OWN_PYTHON and sys.executable:",
        "    if False:",
        ("tests/tools/test_example_flow.py",),
        "an MCP command python3 starts whichever python3 is first on PATH",
    ),
    Mutant(
        "replay-file-missing",
        "roost/flowtest/cases.py",
        "    if not loaded.replay.is_file():",
        "    if False:",
        ("tests/flowtest/test_cases.py",),
        "a missing recording fails with a stack of words, not its own one line",
    ),
    Mutant(
        "memory-scope-form",
        "roost/cli/memory_command.py",
        "    if not _SCOPE.fullmatch(scope):",
        "    if False:",
        ("tests/store/test_memory_cli.py",),
        "a --scope in no form a run writes silently lists nothing",
    ),
    Mutant(
        "misplaced-key",
        "roost/flow/schema_errors.py",
        "                if places\n",
        "                if False\n",
        ("tests/flow/test_validate_all.py",),
        "max_rounds on an agent suggests max_background",
    ),
    Mutant(
        "unquoted-colon-in-braces",
        "roost/flow/yamlerrors.py",
        '        if char == ":" and ": " in entry:',
        "        if False:",
        ("tests/flow/test_validate_all.py",),
        "{role: You are: a helper} is reported as an unclosed '{'",
    ),
    Mutant(
        "import-keeps-times",
        "roost/store/sql.py",
        "            conn.execute(update(RUNS).where(RUNS.c.id == log.run_id).values(**times))",
        "            pass",
        ("tests/store/test_sql.py",),
        "an imported run is shown as created when it was imported",
    ),
]

# Issue 25 (hardening, second pass): ids, recorded flows, images, shell, unfinished replays.
SHARED_IDS = ("tests/attacks/test_shared_call_ids.py",)
RECORDED_ENV = ("tests/attacks/test_recorded_env.py",)
IMAGE_BYTES = ("tests/attacks/test_image_bytes.py",)
IMAGE_DOWNLOADS = ("tests/attacks/test_image_downloads.py",)
SHELL_ESCAPE = ("tests/attacks/test_shell_escape.py",)
HARDENING_ENGINE = [
    Mutant(
        "shared-call-ids",
        "roost/messages.py",
        "        if call.id in seen:\n",
        "        if False:\n",
        SHARED_IDS,
        "two calls of one answer under one id: the second runs unasked, recorded under the first",
    ),
    Mutant(
        "shared-ids-streamed",
        "roost/providers/_toolcalls.py",
        "        if current is not None or index < 0:\n",
        "        if True:\n",
        ("tests/providers/test_toolcalls.py", *SHARED_IDS),
        "a streamed call at a new index is folded into an earlier call of the same id",
    ),
    Mutant(
        "replay-unfinished-end",
        REPLAY_PY,
        "    end = [recorded[-1].seq + 1] if unfinished else []\n",
        "    end = []\n",
        ("tests/engine/test_unfinished.py",),
        "a run killed mid-step replays past its end and diverges at a call it never recorded",
    ),
    Mutant(
        "replay-reads-environment",
        REPLAY_PY,
        "load_recorded_flow(record.text, record.path)",
        "__import__('roost.flow').flow.load_flow_text(record.text, record.path)",
        RECORDED_ENV,
        "a run file's public_env prints your variable in the replay diff",
    ),
    Mutant(
        "served-flow-reads-environment",
        "roost/serve/flowdir.py",
        'key = ("own" if self._holds(path, text) else "recorded", path, text_hash(text))',
        'key = ("own", path, text_hash(text))',
        RECORDED_ENV,
        "an imported run's graph shows the server's variables",
    ),
    Mutant(
        "image-hash-unchecked",
        "roost/ports.py",
        "    if actual != digest:\n",
        "    if False:\n",
        IMAGE_BYTES,
        "bytes kept under a hash they do not have poison it for the genuine image",
    ),
    Mutant(
        "image-nosniff",
        "roost/serve/app.py",
        '            "X-Content-Type-Options": "nosniff",\n',
        "",
        IMAGE_BYTES,
        "a browser may sniff an image's bytes for a page",
    ),
    Mutant(
        "image-download-deadline",
        "roost/engine/images.py",
        "            asyncio.timeout(seconds),\n",
        "            asyncio.timeout(None),\n",
        IMAGE_DOWNLOADS,
        "a server trickling an image's bytes holds the run start past its deadline",
    ),
    Mutant(
        "image-download-pool",
        "roost/engine/images.py",
        "        return await loop.run_in_executor(_downloads(), start_images, flow)\n",
        "        return await asyncio.to_thread(start_images, flow)\n",
        IMAGE_DOWNLOADS,
        "slow downloads take the default pool every other run start works in",
    ),
    Mutant(
        "shell-subreaper",
        "roost/tools/builtin_shell.py",
        "    libc.prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER\n",
        "",
        SHELL_ESCAPE,
        "a process that calls setsid outlives the command",
    ),
]

SERVE_LOAD_TESTS = ("tests/attacks/test_serve_load.py",)
SERVE_LOAD = [
    Mutant(
        "summary-reads-live-state-in-thread",
        "roost/serve/_reads.py",
        "runner.state.next_seq == info.next_seq and _on_loop():\n",
        "runner.state.next_seq == info.next_seq:\n",
        ("tests/serve/test_hub.py",),
        "GET /runs/{id} may show a run terminated while its row does not count its tokens yet",
    ),
    # The heartbeat stops only a session that really lost its lease (serve/hub.py).
    Mutant(
        "renew-stops-leaving-session",
        "roost/serve/hub.py",
        "                if session is held[run_id] and not session.leaving:\n",
        "                if session is held[run_id]:\n",
        ("tests/serve/test_hub.py",),
        "a run whose session is handing its lease back is cancelled as if another worker took it",
    ),
    Mutant(
        "retry-refused-while-lease-comes-back",
        "roost/serve/hub.py",
        "        await self._let_go(run_id)\n",
        "",
        ("tests/serve/test_hub.py",),
        "a retry sent as POST /cancel is answered is refused as busy (409) on a slow machine",
    ),
    Mutant(
        "renew-stops-next-session",
        "roost/serve/hub.py",
        "                if session is held[run_id] and not session.leaving:\n",
        "                if session is not None and not session.leaving:\n",
        ("tests/serve/test_hub.py",),
        "the session that took a run up again is cancelled for the last one's lease: a step lost",
    ),
    Mutant(
        "serve-late-message-kept",
        "roost/serve/session.py",
        "            await self._drop(queued, state.status)\n",
        "",
        SERVE_LOAD_TESTS,
        "a message that comes during a run's last step is never dropped: the session "
        "cannot release the lease and the server spins",
    ),
    Mutant(
        "serve-stream-limit",
        "roost/serve/_broadcast.py",
        "        if open_ >= self.streams_per_client:",
        "        if open_ > 10**9:",
        SERVE_LOAD_TESTS,
        "one client may open streams without end",
    ),
    Mutant(
        "serve-stepper-takes-messages",
        "roost/serve/hub.py",
        "        if holder.alive(time.time()) and not takes_messages(holder.owner):",
        "        if False:",
        SERVE_LOAD_TESTS,
        "a message to a run the command line steps is queued for a second stepper",
    ),
    Mutant(
        "serve-child-lease",
        "roost/serve/hub.py",
        "            self.stepping.hold(child_id, group=run_id)  # until the parent's step ends\n",
        "            pass\n",
        SERVE_LOAD_TESTS,
        "a sub-flow run its parent's step drives can be retried beside it",
    ),
    Mutant(
        "store-list-limit",
        "roost/store/sql.py",
        "        if limit is not None:\n            query = query.limit(limit)\n",
        "",
        ("tests/store/test_listing.py",),
        "a page of runs reads every run",
    ),
    Mutant(
        "store-since-reads-all",
        "roost/store/sqllog.py",
        ".where(EVENTS.c.run == self._run_id, EVENTS.c.seq > after)",
        ".where(EVENTS.c.run == self._run_id, EVENTS.c.seq >= after)",
        ("tests/store/test_listing.py", *SERVE_LOAD_TESTS),
        "a read of a run's new events gives one old event again",
    ),
    Mutant(
        "store-since-limit-dropped",
        "roost/store/sqllog.py",
        "        if limit is not None:\n            query = query.limit(limit)\n        with",
        "        with",
        ("tests/store/test_since.py",),
        "a page of a run's new events is every new event: a long catch-up is one huge read",
    ),
    Mutant(
        "store-since-whole-log",
        "roost/store/sqllog.py",
        "        if info is None or (info.fork_at is not None and after < info.fork_at):",
        "        if True:",
        ("tests/store/test_since.py", "tests/serve/test_reads.py"),
        "reading a run's new events reads its whole log again",
    ),
    Mutant(
        "store-since-fork-prefix",
        "roost/store/sqllog.py",
        "        if info is None or (info.fork_at is not None and after < info.fork_at):",
        "        if info is None:",
        ("tests/store/test_since.py",),
        "a fork's new events, read from before its fork point, leave out the shared ones",
    ),
    Mutant(
        "serve-state-whole-log",
        "roost/serve/_reads.py",
        "        if kept is None or kept[0] > end:",
        "        if True:",
        ("tests/serve/test_reads.py",),
        "the state of a run stepped elsewhere is folded from its whole log at every step",
    ),
    Mutant(
        "serve-state-new-events-skipped",
        "roost/serve/_reads.py",
        "            for event in events:\n                apply(state, event)\n",
        "",
        ("tests/serve/test_reads.py",),
        "the state a stream shows of a run stepped elsewhere stays where it was first read",
    ),
    Mutant(
        "serve-wake-while-leaving",
        "roost/serve/hub.py",
        "            if not session.leaving:\n                return  # its session takes",
        "            if True:\n                return  # its session takes",
        ("tests/serve/test_queue.py",),
        "a message sent while the session hands the lease back waits in a run nobody steps",
    ),
    Mutant(
        "serve-cost-counted-twice",
        "roost/serve/_reads.py",
        "                self._costs[info.id] = (events[-1].seq + 1 if events else seq, tally)",
        "                self._costs[info.id] = (seq, tally)",
        ("tests/serve/test_reads.py",),
        "a run's cost counts its calls again at every read",
    ),
]


EDGES_LEFT = [
    Mutant(
        "chat-keyless-not-refused",
        "roost/cli/chat_command.py",
        "    refuse_keyless(flow)  # before a run is stored: its first model call could only fail"
        "\n",
        "",
        ("tests/providers/test_keys.py",),
        "roost chat stores a run of a flow whose provider has no key, to fail at its first call",
    ),
    Mutant(
        "flowtest-keyless-case-runs",
        "roost/flowtest/cases.py",
        "        if keyless is not None:  # no run is made: its first call could not be answered\n",
        "        if False:\n",
        ("tests/providers/test_keys.py",),
        "a flow test case reaching a keyless provider fails at its first call, not naming the key",
    ),
    Mutant(
        "channel-answer-named-as-channel",
        "roost/cli/person.py",
        "return self.in_channel(event.from_) if self.answers(event) else event.from_",
        "return event.from_",
        ("tests/cli/test_run_commands.py",),
        "a person's answer in a channel reads as the channel's (room → critic)",
    ),
    Mutant(
        "channel-person-always-you",
        "roost/cli/person.py",
        "return found[0] if len(found) == 1 else YOU",
        "return YOU",
        ("tests/cli/test_run_commands.py",),
        "the flow's person is never named in a channel's answer",
    ),
    Mutant(
        "channel-interrupt-waits-for-channel",
        "roost/cli/person.py",
        'return f"{self.person} (in {event.from_})"',
        "return event.from_",
        ("tests/cli/test_run_commands.py",),
        "roost show says a member waits for the channel, not for the person",
    ),
]


FRONT_DOOR_TESTS = ("tests/test_pause.py", "tests/test_api.py")
FRONT_DOOR = [
    # -- what roost.run hands its callers: values, and a Pause's answers (roost/runview.py)
    Mutant(
        "view-shares-interrupts",
        "roost/runview.py",
        "        return entry.model_copy(deep=True)\n",
        "        return entry\n",
        FRONT_DOOR_TESTS,
        "a caller changing a pause's tool call changes the run's interrupt",
    ),
    Mutant(
        "pause-approve-refuses",
        "roost/runview.py",
        'return PauseAnswer("yes", self.interrupt.seq)',
        'return PauseAnswer("no", self.interrupt.seq)',
        FRONT_DOOR_TESTS,
        "approve() refuses the call",
    ),
    Mutant(
        "pause-refuse-drops-reason",
        "roost/runview.py",
        'return PauseAnswer(said or "no", self.interrupt.seq)',
        'return PauseAnswer("no", self.interrupt.seq)',
        FRONT_DOOR_TESTS,
        "refuse(reason) does not tell the model why",
    ),
    Mutant(
        "pause-refuse-yes-approves",
        "roost/runview.py",
        "if said.lower() in APPROVE:",
        "if False:",
        FRONT_DOOR_TESTS,
        "refuse('yes') approves the call",
    ),
    Mutant(
        "pause-let-answer-anywhere",
        "roost/runview.py",
        'self._only("person", "let_answer()")',
        'self._only(self.kind, "let_answer()")',
        FRONT_DOOR_TESTS,
        "let_answer() at a tool approval refuses the call silently",
    ),
    Mutant(
        "pause-stale-answer",
        "roost/runview.py",
        "if reply.seq != pause.interrupt.seq:",
        "if False:",
        FRONT_DOOR_TESTS,
        "an earlier pause's answer answers a later one",
    ),
    Mutant(
        "pause-no-choices",
        "roost/runview.py",
        'choices=choices if kind == "manual_choice" else ()',
        "choices=()",
        FRONT_DOOR_TESTS,
        "a manual choice does not say who may speak",
    ),
    Mutant(
        "result-no-cost",
        "roost/driving.py",
        "return view_of(state, run_cost(runner.log.load()))",
        "return view_of(state)",
        FRONT_DOOR_TESTS,
        "the result's cost is always zero",
    ),
    Mutant(
        "replay-ignores-flow",
        "roost/api.py",
        "None if flow is None else _as_flow(flow)",
        "None",
        FRONT_DOOR_TESTS,
        "roost.replay(log, flow) replays under the recorded flow",
    ),
]


STRUCTURED_TESTS = (
    "tests/engine/test_structured_replies.py",
    "tests/providers/test_structured.py",
    "tests/providers/test_structured_runs.py",
)
STRUCTURED = [
    # -- structured replies: the format on each wire, the check, the second ask
    Mutant(
        "structured-never-checked",
        "roost/engine/calls.py",
        "    return reply_problem(reply_format, without_marker(answer.message.content, rule))\n",
        "    return None\n",
        STRUCTURED_TESTS,
        "a reply that does not follow its reply_format is kept as if it did",
    ),
    Mutant(
        "structured-tool-answers-checked",
        "roost/engine/calls.py",
        "    if answer.message.tool_calls and keep_calls:\n        return None\n",
        "    if False:\n        return None\n",
        STRUCTURED_TESTS,
        "an answer asking for tools is checked as the reply: the tool loop is cut short",
    ),
    Mutant(
        "structured-follow-up-without-the-reply",
        "roost/engine/calls.py",
        "            AssistantMessage(content=answer.message.content, provider=provider_name),\n",
        "",
        STRUCTURED_TESTS,
        "the model is asked again without being shown the reply that failed",
    ),
    Mutant(
        "structured-format-not-digested",
        "roost/engine/calls.py",
        "        extra = reply_format.model_dump_json().encode()\n",
        '        extra = b""\n',
        STRUCTURED_TESTS,
        "a replay under a flow with another reply_format sees no change in the requests",
    ),
    Mutant(
        "structured-chat-format-unsent",
        "roost/providers/openai_chat.py",
        '        body["response_format"] = _response_format(request.reply_format)\n',
        "        pass\n",
        STRUCTURED_TESTS,
        "Chat Completions is never asked for structured output",
    ),
    Mutant(
        "structured-responses-format-unsent",
        "roost/providers/openai_responses.py",
        '        body["text"] = {\n',
        '        body["_text"] = {\n',
        STRUCTURED_TESTS,
        "the Responses API is never asked for structured output",
    ),
    Mutant(
        "structured-strict-always",
        "roost/engine/structured.py",
        "strict=_strict(schema))",
        "strict=True)",
        STRUCTURED_TESTS,
        "OpenAI is sent strict: true for schemas its strict mode refuses",
    ),
    Mutant(
        "structured-every-claude-through-a-tool",
        "roost/providers/anthropic.py",
        '    return _BEFORE_OUTPUT_FORMAT.match(model.removeprefix("anthropic.")) is not None\n',
        "    return True\n",
        STRUCTURED_TESTS,
        "models with structured outputs are asked through a tool instead of output_config",
    ),
    Mutant(
        "structured-reply-tool-unforced",
        "roost/providers/anthropic.py",
        '    forced = {"type": "any"} if has_tools else {"type": "tool", "name": reply_format.name}'
        "\n",
        '    forced = {"type": "auto"}\n',
        STRUCTURED_TESTS,
        "an older Claude may answer in prose instead of calling the reply tool",
    ),
    Mutant(
        "structured-reply-tool-not-streamed",
        "roost/providers/anthropic.py",
        "            sink(piece)  # the reply itself, carried by a tool: shown as it comes\n",
        "            pass\n",
        STRUCTURED_TESTS,
        "a reply carried by the reply tool is shown only once it is whole",
    ),
    Mutant(
        "structured-reply-tool-kept-as-a-call",
        "roost/providers/anthropic.py",
        "                return _reply_of_tool(joined, reply_tool) if reply_tool else joined\n",
        "                return joined\n",
        STRUCTURED_TESTS,
        "the reply tool's call reaches the tool loop instead of being the reply",
    ),
]

WORKSPACE_TESTS = ("tests/test_workspace.py", "tests/test_driving.py")
WORKSPACE = [
    # -- where stored runs are wired (roost/workspace.py)
    Mutant(
        "workspace-child-lease-not-held",
        "roost/workspace.py",
        "                hold(run_id)\n",
        "                pass\n",
        WORKSPACE_TESTS,
        "a sub-flow run's lease is not held while its parent's step runs",
    ),
    Mutant(
        "workspace-children-in-memory",
        "roost/workspace.py",
        "            child_log=self.child_logs(hold),\n",
        "            child_log=None,\n",
        WORKSPACE_TESTS,
        "a stored run's sub-flow runs are lost with the process",
    ),
    Mutant(
        "workspace-memory-for-every-flow",
        "roost/workspace.py",
        "return self.memory if may_remember(flow) else None",
        "return self.memory",
        WORKSPACE_TESTS,
        "a flow that cannot remember is handed the store's memory",
    ),
    Mutant(
        "workspace-never-closes",
        "roost/workspace.py",
        "self._own = store is None",
        "self._own = False",
        WORKSPACE_TESTS,
        "roost.run keeps the store it opened for memory open after the run",
    ),
    Mutant(
        "workspace-beside-ignores-log-store",
        "roost/workspace.py",
        "            return cls(store=log.store)\n",
        "            return cls(resolve_url(None))\n",
        WORKSPACE_TESTS,
        "a run from Python on a stored log remembers in another store",
    ),
    Mutant(
        "workspace-beside-settles-late",
        "roost/workspace.py",
        "        return cls(resolve_url(None))\n",
        "        return cls(None)\n",
        WORKSPACE_TESTS,
        "which store memory_bank() names changes with ROOST_DB after it was made",
    ),
    Mutant(
        "workspace-images-not-told",
        "roost/workspace.py",
        "images=images if images is not None else images_of(log),",
        "images=images_of(log),",
        WORKSPACE_TESTS,
        "a batch row's start images are kept in memory, not in the store",
    ),
    Mutant(
        "continue-images-every-answer",
        "roost/cli/run_commands.py",
        "session.finish(session.drive(lambda runner: runner.continue_(first, images=images)))",
        "session.finish(session.drive(lambda runner: runner.continue_(first, images=images),"
        " images=images))",
        ("tests/engine/test_images.py",),
        "roost continue --image sends its images with the second --answer too",
    ),
    # runner_in_memory's child_log=MemoryLog is the Runner's own default: changing it to
    # None is an equivalent mutant, so it is not listed.
    # -- one way to drive a run (roost/driving.py)
    Mutant(
        "drive-none-answers",
        "roost/driving.py",
        "        if said is None:\n            break\n",
        '        if said is None:\n            said = ""\n',
        WORKSPACE_TESTS,
        "an answerer returning None lets the node answer instead of leaving the run paused",
    ),
    Mutant(
        "drive-images-every-answer",
        "roost/driving.py",
        "        images = ()\n",
        "",
        WORKSPACE_TESTS,
        "continue --image sends its images with every answer",
    ),
    Mutant(
        "drive-refusal-swallowed",
        "roost/driving.py",
        "if refused is None or not refused(error):",
        "if refused is not None and not refused(error):",
        WORKSPACE_TESTS,
        "a refused answer is dropped silently and the run left as it was",
    ),
    Mutant(
        "drive-first-step-skipped",
        "roost/driving.py",
        "state = runner.state if first is None else await first(runner)",
        "state = runner.state",
        WORKSPACE_TESTS,
        "roost.run never starts the run",
    ),
    Mutant(
        "callback-not-awaited",
        "roost/driving.py",
        "            return await reply\n",
        "            return None\n",
        WORKSPACE_TESTS,
        "an async answer callback leaves every pause unanswered",
    ),
]

LANGGRAPH_TESTS = ("tests/importers/test_langgraph.py",)
AG2_LOG_TESTS = ("tests/importers/test_ag2_log.py",)
IMPORTERS = [
    Mutant(
        "import-names-not-unique",
        "roost/importers/derive.py",
        "        while name in taken:",
        "        while False:",
        ("tests/importers/test_import.py",),
        "two speakers whose names clean to the same node name share one agent",
    ),
    Mutant(
        "import-group-without-channel",
        "roost/importers/derive.py",
        "    return len(speakers) > 2 or repeats",
        "    return repeats",
        ("tests/importers/test_import.py",),
        "a group chat of three is imported as a two-agent chat",
    ),
    Mutant(
        "import-person-taken-for-model",
        "roost/importers/agentchat.py",
        "            human = source in asked",
        "            human = False",
        ("tests/importers/test_import.py",),
        "a person's answer through a UserProxyAgent is replayed as a model's reply",
    ),
    Mutant(
        "import-tool-error-lost",
        "roost/importers/agentchat.py",
        'str(result.get("call_id")), text_of(result.get("content")), bool(result.get("is_error"))',
        'str(result.get("call_id")), text_of(result.get("content")), False',
        ("tests/importers/test_import.py",),
        "a failing tool recorded by AgentChat is imported as one that worked",
    ),
    Mutant(
        "import-orphan-result-kept",
        "roost/importers/common.py",
        'raise ImportFormatError(f"{where}: tool result for {call_id!r} names no call")',
        "None",
        ("tests/importers/test_import.py",),
        "a tool result naming no call is silently dropped instead of refused",
    ),
    Mutant(
        "import-size-unchecked",
        "roost/importers/__init__.py",
        "    if size > MAX_BYTES:",
        "    if False:",
        ("tests/importers/test_import.py",),
        "a file over 200 MB is read instead of refused by its size",
    ),
    Mutant(
        "import-times-dropped",
        "roost/importers/derive.py",
        "            current = recorded[said] or current",
        "            current = current",
        ("tests/importers/test_import.py",),
        "the recorded times of an imported run's messages are replaced by the first one",
    ),
    Mutant(
        "import-otel-agent-name-ignored",
        "roost/importers/otel.py",
        '        name = current.attrs.get("gen_ai.agent.name")',
        "        name = None",
        ("tests/importers/test_import.py",),
        "the speaker of a GenAI chat span is not read from gen_ai.agent.name",
    ),
    Mutant(
        "import-source-not-recorded",
        "roost/importers/derive.py",
        '            data["imported"] = {**talk.source, "notes": list(talk.notes)}',
        "            pass",
        ("tests/importers/test_import.py",),
        "an imported run's run_start does not say where it came from",
    ),
    Mutant(
        "import-text-run-as-template",
        "roost/importers/derive.py",
        '    if not any(mark in text for mark in ("{{", "{%", "{#")):',
        "    if True:",
        ("tests/importers/test_import.py",),
        "a recorded role or start message with template syntax is rendered as a template",
    ),
    Mutant(
        "import-text-reads-environment",
        "roost/importers/derive.py",
        '        return value.replace("${", "$${")',
        "        return value",
        ("tests/importers/test_import.py",),
        "a recorded ${NAME} is filled from the environment when the derived flow loads",
    ),
    Mutant(
        "import-langgraph-pickle-not-named",
        "roost/importers/langgraph.py",
        '    if kind == "pickle":',
        "    if False:",
        LANGGRAPH_TESTS,
        "a pickled LangGraph value is refused without saying that roost never loads pickles",
    ),
    Mutant(
        "import-langgraph-nodes-unread",
        "roost/importers/langgraph.py",
        '    return task_path.rsplit(", ", 1)[-1].strip() or INPUT',
        "    return INPUT",
        LANGGRAPH_TESTS,
        "the node that wrote a LangGraph message is not its speaker",
    ),
    Mutant(
        "import-langgraph-person-taken-for-model",
        "roost/importers/langgraph.py",
        "            human = bool(build.turns) or (written is not None and written.resumed)",
        "            human = False",
        LANGGRAPH_TESTS,
        "a person's answer to a LangGraph interrupt is replayed as a model's reply",
    ),
    Mutant(
        "import-langgraph-tool-error-lost",
        "roost/importers/langgraph.py",
        '    return message.get("status") == "error"',
        "    return False",
        LANGGRAPH_TESTS,
        "a ToolMessage with status error is imported as a tool that worked",
    ),
    Mutant(
        "import-langgraph-missing-thread-taken",
        "roost/importers/langgraph.py",
        "    if thread is not None and thread not in threads:",
        "    if False:",
        LANGGRAPH_TESTS,
        "--thread naming no thread is not refused with the list of threads",
    ),
    Mutant(
        "import-langgraph-times-misread",
        "roost/importers/langgraph.py",
        "    moment = datetime.fromtimestamp((ticks - UUID_EPOCH) / 10**7, UTC)",
        "    moment = datetime.fromtimestamp((ticks - UUID_EPOCH) / 10**6, UTC)",
        LANGGRAPH_TESTS,
        "a checkpoint id's time is read in the wrong unit",
    ),
    Mutant(
        "import-langgraph-shared-system-dropped",
        "roost/importers/langgraph.py",
        "            if system and speaker not in talk.roles:",
        "            if False:",
        LANGGRAPH_TESTS,
        "a system message in a LangGraph state gives no speaker its role",
    ),
    Mutant(
        "import-ag2-log-reread",
        "roost/importers/ag2_log.py",
        "        seen = len(chat) + 1",
        "        seen = 0",
        AG2_LOG_TESTS,
        "each logged request's whole chat is read again, so earlier messages repeat",
    ),
    Mutant(
        "import-ag2-log-not-detected",
        "roost/importers/__init__.py",
        '    if fmt == "ag2" and is_sqlite(path):',
        "    if False:",
        AG2_LOG_TESTS,
        "an AG2 runtime_logging database is read as JSON",
    ),
]

DRAIN_TESTS = ("tests/serve/test_drain.py",)
METRICS_TESTS = ("tests/serve/test_production.py",)
LIMITS_TESTS = ("tests/providers/test_limits.py", "tests/serve/test_production.py")
BATCH_DRAIN = "tests/batch/test_drain.py::"
BATCH_DRAIN_TESTS = ("tests/batch/test_drain.py",)
WAIT_SHOWN_TESTS = (
    "tests/batch/test_progress.py",
    "tests/cli/test_limit_waits.py",
    "tests/serve/test_limit_waits.py",
)
SERVE_PRODUCTION = [
    # docs/deploying.md's nginx configuration, which tests/serve/test_proxy.py runs as written.
    Mutant(
        "proxy-no-websocket-upgrade",
        "docs/deploying.md",
        "        proxy_set_header Upgrade $http_upgrade;\n",
        "",
        ("tests/serve/test_proxy.py",),
        "a browser's WebSocket through the documented proxy is never upgraded",
    ),
    Mutant(
        "proxy-503-not-retried",
        "docs/deploying.md",
        "proxy_next_upstream error timeout http_503;",
        "proxy_next_upstream error timeout;",
        ("tests/serve/test_proxy.py",),
        "during a rolling restart half the probes and reads get the draining worker's 503",
    ),
    Mutant(
        "proxy-upstream-one-worker",
        "docs/deploying.md",
        "    server 127.0.0.1:8002 max_fails=1 fail_timeout=5s;\n",
        "    server 127.0.0.1:8002 max_fails=1 fail_timeout=5s down;\n",
        ("tests/serve/test_proxy.py",),
        "the second worker is never used: a restart of the first takes the service down",
    ),
    Mutant(
        "serve-ready-while-draining",
        "roost/serve/app.py",
        "        if hub.accepting:\n",
        "        if True:\n",
        DRAIN_TESTS,
        "a draining worker says it is ready: the load balancer keeps sending it work",
    ),
    Mutant(
        "serve-drain-takes-work",
        "roost/serve/hub.py",
        "        if not self.accepting:\n            raise Draining(",
        "        if False:\n            raise Draining(",
        DRAIN_TESTS,
        "a draining worker starts new runs and takes messages it will not finish",
    ),
    Mutant(
        "serve-drain-no-grace",
        "roost/serve/hub.py",
        "        while pending and not hurried.done()",
        "        while False and not hurried.done()",
        DRAIN_TESTS,
        "a drain cancels the steps in flight at once: every deploy repeats their model calls",
    ),
    Mutant(
        "serve-drain-keeps-lease",
        "roost/serve/session.py",
        "        leases.hand_back(self.run_id)\n        return True",
        "        return True",
        DRAIN_TESTS,
        "a drained run with messages waiting keeps its lease: another worker waits it out",
    ),
    Mutant(
        "serve-sigterm-kills",
        "roost/serve/server.py",
        "        loop.call_soon_threadsafe(self._on_signal)",
        "        super().handle_exit(sig, frame)",
        DRAIN_TESTS,
        "SIGTERM stops the server at once and kills it (exit -15) instead of draining",
    ),
    Mutant(
        "serve-metrics-open",
        "roost/serve/guard.py",
        '"/ready", "/openapi.json"',
        '"/ready", "/metrics", "/openapi.json"',
        METRICS_TESTS,
        "anyone reads a server's metrics (its flows, providers and costs) without a token",
    ),
    Mutant(
        "serve-metrics-no-cost",
        "roost/serve/metrics.py",
        "        if amount:\n",
        "        if False:\n",
        METRICS_TESTS,
        "the cost by provider and flow stays at zero",
    ),
    Mutant(
        "limits-no-concurrency",
        "roost/providers/limits.py",
        "asyncio.Semaphore(self.max_concurrency) if self.max_concurrency else None",
        "None",
        LIMITS_TESTS,
        "max_concurrency is ignored: every run sends at once",
    ),
    Mutant(
        "limits-429-no-pause",
        "roost/providers/limits.py",
        "        if seconds:\n            self.paused_until",
        "        if False:\n            self.paused_until",
        LIMITS_TESTS,
        "a 429's retry-after holds back only the refused call: the other runs keep hitting it",
    ),
    Mutant(
        "limits-wait-unrecorded",
        "roost/providers/limits.py",
        "    return round(call.waited, 3) if call is not None and call.waited else None",
        "    return None",
        LIMITS_TESTS,
        "a call's wait for its limits is not on its llm_call",
    ),
    Mutant(
        "batch-drain-starts-rows",
        "roost/batch/local.py",
        "        while queue and not drain.stopping:",
        "        while queue:",
        (BATCH_DRAIN + "test_sigterm_lets_the_rows_running_finish_and_starts_no_other",),
        "a batch sent SIGTERM goes on starting rows until every row ran",
    ),
    Mutant(
        "batch-drain-no-grace",
        "roost/batch/drain.py",
        "            pending = await _first(pending, self._hurry, self.grace)",
        "            pass",
        (BATCH_DRAIN + "test_sigterm_lets_the_rows_running_finish_and_starts_no_other",),
        "SIGTERM cancels the rows in flight at once: their model calls are made again next time",
    ),
    Mutant(
        "batch-drain-endless-grace",
        "roost/batch/drain.py",
        "            if left is not None and left <= 0:\n                break",
        "            if False:\n                break",
        (BATCH_DRAIN + "test_past_the_grace_a_row_s_step_is_cancelled_and_retried_next_time",),
        "--grace is not kept: a drained batch waits for its slowest row however long it takes",
    ),
    Mutant(
        "batch-drain-cancel-unrecorded",
        "roost/batch/drain.py",
        "            runner.cancel()  # recorded",
        "            pass  # recorded",
        (BATCH_DRAIN + "test_past_the_grace_a_row_s_step_is_cancelled_and_retried_next_time",),
        "a row cut off by the drain has no cancelled step recorded: it is left running",
    ),
    Mutant(
        "batch-drain-second-signal-ignored",
        "roost/batch/drain.py",
        "        if self.stopping:\n            self._hurry.set()",
        "        if False:\n            self._hurry.set()",
        (BATCH_DRAIN + "test_a_second_sigterm_cuts_the_grace_short",),
        "a second SIGTERM does not end the grace: the batch cannot be hurried",
    ),
    Mutant(
        "batch-drain-skipped-lost",
        "roost/batch/session.py",
        "    outcome.results.update(not_run(plan, store, todo, outcome.results))",
        "    pass",
        BATCH_DRAIN_TESTS,
        "the results file leaves out the rows a stopped batch did not run",
    ),
    Mutant(
        "batch-sigterm-kills",
        "roost/batch/drain.py",
        "    loop.add_signal_handler(signal.SIGTERM, drain.stop)",
        "    loop.add_signal_handler(signal.SIGTERM, lambda: None)",
        BATCH_DRAIN_TESTS,
        "SIGTERM does not stop the batch at all",
    ),
    Mutant(
        "limits-waiting-run-uncounted",
        "roost/providers/limits.py",
        "    if run is not None:\n        waiting_runs[run] += step",
        "    if False:\n        waiting_runs[run] += step",
        WAIT_SHOWN_TESTS,
        "a run's summary never says its calls wait for a provider's limits",
    ),
    Mutant(
        "batch-bar-waiting-hidden",
        "roost/batch/progress.py",
        "        if count:\n            shown.append",
        "        if False:\n            shown.append",
        WAIT_SHOWN_TESTS,
        "the batch's progress bar never shows the calls waiting for a provider's limits",
    ),
    Mutant(
        "run-usage-waits-hidden",
        "roost/cli/console.py",
        "        + limit_waits(events)\n",
        "\n",
        WAIT_SHOWN_TESTS,
        "roost run's usage line never says its calls waited for a provider's limits",
    ),
    Mutant(
        "run-wait-unsaid",
        "roost/providers/limits.py",
        "        if waits_told and must_wait:",
        "        if False:",
        ("tests/cli/test_limit_waits.py",),
        "roost run says nothing while a call waits for a provider's limits",
    ),
    Mutant(
        "batch-ray-sigterm-kills",
        "roost/batch/ray_tasks.py",
        "        previous = signal.signal(signal.SIGTERM, lambda signum, frame: drain.stop())",
        "        previous = signal.getsignal(signal.SIGTERM)",
        ("tests/batch/test_ray.py::test_sigterm_drains_a_batch_on_the_cluster",),
        "SIGTERM kills a batch on Ray: no results file, the row in flight left running",
    ),
]

STUDIO_CORPUS = ("tests/studio/test_roundtrip.py", "tests/studio/test_corpus.py")
STUDIO_API = ("tests/studio/test_api.py",)
STUDIO_NODES = ("tests/studio/test_nodes.py",)
STUDIO = [
    # -- roost studio: edits written back into the author's YAML (roost/studio/)
    Mutant(
        "studio-late-read-shown",
        "roost/studio/studio.js",
        "if (!read || wantedFlow !== name) return;",
        "if (!read) return;",
        ("tests/studio/test_page.py",),
        "a file's read that answers after another was picked is shown over the picked one",
    ),
    Mutant(
        "studio-whole-dump",
        "roost/studio/roundtrip.py",
        "return merged if _reads_as(yaml, merged, wanted) else after",
        "return after",
        STUDIO_CORPUS,
        "ruamel's whole dump is written: lines the edit never reached are reflowed",
    ),
    Mutant(
        "studio-tail-dropped",
        "roost/studio/roundtrip.py",
        "and len(node):\n        _give_tail(node, next(reversed(node)),",
        "and not len(node):\n        _give_tail(node, next(reversed(node)),",
        STUDIO_CORPUS,
        "a new key's map loses the comments and blank lines that followed its last item",
    ),
    Mutant(
        "studio-comment-gap-lost",
        "roost/studio/roundtrip.py",
        "token.column = max(0, token.column + len(str(new)) - len(str(old)))",
        "token.column = max(0, token.column)",
        STUDIO_CORPUS,
        "a longer value pushes its end-of-line comment against it",
    ),
    Mutant(
        "studio-anchor-dropped",
        "roost/studio/roundtrip.py",
        "        anchor.always_dump = True",
        "        anchor.always_dump = False",
        STUDIO_CORPUS,
        "an anchor nothing refers to any more vanishes from the file",
    ),
    Mutant(
        "studio-no-conflict",
        "roost/studio/routes.py",
        "    if base == now:\n        return None",
        "    if True:\n        return None",
        STUDIO_API,
        "an edit made on an old read overwrites the author's change on disk",
    ),
    Mutant(
        "studio-dry-run-writes",
        "roost/studio/routes.py",
        "    if not dry_run and edited != text:",
        "    if edited != text:",
        STUDIO_API,
        "a dry run writes the file",
    ),
    Mutant(
        "studio-not-a-flow-written",
        "roost/studio/roundtrip.py",
        "    if not isinstance(wanted, dict):",
        "    if False:",
        STUDIO_API,
        "an edit that leaves no mapping is answered as if it applied",
    ),
    Mutant(
        "studio-new-flow-through-a-link",
        "roost/studio/files.py",
        "    if not parent.is_relative_to(folder.root) or not parent.is_dir():",
        "    if not parent.is_dir():",
        STUDIO_API,
        "a new flow is written through a folder link out of the flows folder",
    ),
    Mutant(
        "studio-on-every-server",
        "roost/studio/routes.py",
        "    if enabled:",
        "    if True:",
        STUDIO_API,
        "a plain roost serve lets clients rewrite its flow files",
    ),
    Mutant(
        "studio-browser-without-terminal",
        "roost/cli/studio_command.py",
        "    if sys.stdout.isatty() and port:",
        "    if port:",
        ("tests/studio/test_command.py",),
        "a studio started by a script or a service opens a browser",
    ),
    # -- the studio page's server side: node renames and removals, whole-text edits
    Mutant(
        "studio-rename-skips-members",
        "roost/studio/nodes.py",
        "        ops += _member_renames(path, channel, old, new)\n",
        "",
        STUDIO_NODES,
        "a renamed agent is left under its old name in the channels' members",
    ),
    Mutant(
        "studio-rename-skips-route-targets",
        "roost/studio/nodes.py",
        '            elif isinstance(successor, dict) and successor.get("to") == old:',
        "            elif False:",
        STUDIO_NODES,
        "a route's to still names the node by its old name",
    ),
    Mutant(
        "studio-rename-skips-transition-key",
        "roost/studio/nodes.py",
        "    if old in transitions:  # after the successors",
        "    if False:  # after the successors",
        STUDIO_NODES,
        "the transitions of a renamed member stay under its old name",
    ),
    Mutant(
        "studio-rename-skips-start",
        "roost/studio/nodes.py",
        '    return [_replace(f"/start/{key}", new) for key in ("from", "to") '
        "if start.get(key) == old]",
        "    return []",
        STUDIO_NODES,
        "the start message still goes to the node's old name",
    ),
    Mutant(
        "studio-rename-takes-a-taken-name",
        "roost/studio/nodes.py",
        "    if any(isinstance(flow.get(k), dict) and new in flow[k] for k in KINDS):",
        "    if False:",
        STUDIO_NODES,
        "a rename onto another node's name overwrites that node",
    ),
    Mutant(
        "studio-rename-moves-to-the-end",
        "roost/studio/roundtrip.py",
        "            if renamed is not None:",
        "            if False:",
        STUDIO_NODES,
        "a renamed key moves to the end of its mapping: its whole block changes in git diff",
    ),
    Mutant(
        "studio-delete-keeps-members",
        "roost/studio/nodes.py",
        '            ops += [{"op": "remove", "path": f"{path}/members/{i}"} '
        "for i in reversed(found)]",
        "            pass",
        STUDIO_NODES,
        "a removed agent is still listed as a channel's member",
    ),
    Mutant(
        "studio-rename-without-base",
        "roost/studio/routes.py",
        "    changed = _changed(name, text, body.base)\n    if changed is not None:\n"
        "        return changed\n    try:\n        flow = read_json(text)",
        "    try:\n        flow = read_json(text)",
        STUDIO_NODES,
        "a rename made on an old read overwrites the file changed on disk",
    ),
    Mutant(
        "studio-text-and-ops",
        "roost/studio/routes.py",
        "    if body.text is not None and body.ops:",
        "    if False:",
        STUDIO_NODES,
        "an edit with both a text and ops writes one and drops the other silently",
    ),
    Mutant(
        "studio-page-on-every-server",
        "roost/serve/app.py",
        "return HTMLResponse(page_html(hub.config.studio),",
        "return HTMLResponse(page_html(True),",
        STUDIO_API,
        "a plain roost serve's page offers to edit its flow files",
    ),
    Mutant(
        "studio-graph-read-on-every-server",
        "roost/serve/app.py",
        "            if not hub.config.studio:",
        "            if False:",
        STUDIO_API,
        "a plain server answers GET /flows/graph with a flow file's text",
    ),
    Mutant(
        "studio-problem-unplaced",
        "roost/studio/roundtrip.py",
        "    before = [place for place in found if (place[0], place[1]) <= (line, column)]",
        "    before = [place for place in found if place[0] < line]",
        STUDIO_NODES,
        "a problem is shown at the key before its own",
    ),
]


# -- routes: conditions, the routed turn, the record a replay reads, validation
ROUTE_TESTS = ("tests/engine/test_routes.py", "tests/flow/test_routes.py")
ROUTE_CHECK_TESTS = ("tests/flow/test_route_checks.py",)
LAST_TESTS = ("tests/nodes/test_roles.py",)
ROUTES = [
    Mutant(
        "route-contains-inverted",
        "roost/flow/routes.py",
        "return condition.contains in text",
        "return condition.contains not in text",
        ROUTE_TESTS,
        "a contains condition would hold when the text lacks it",
    ),
    Mutant(
        "route-matches-anchored",
        "roost/flow/routes.py",
        "return _regex(condition.matches).search(text) is not None",
        "return _regex(condition.matches).match(text) is not None",
        ROUTE_TESTS,
        "matches would only look at the text's start, not anywhere",
    ),
    Mutant(
        "route-gt-inclusive",
        "roost/flow/routes.py",
        "return number and value > condition.gt",
        "return number and value >= condition.gt - 1",
        ROUTE_TESTS,
        "gt would hold of values that are not above the bound",
    ),
    Mutant(
        "route-not-ignored",
        "roost/flow/routes.py",
        "return not holds(condition.not_, text, data, python)",
        "return holds(condition.not_, text, data, python)",
        ROUTE_TESTS,
        "not would hold exactly when its condition does",
    ),
    Mutant(
        "route-dotted-path-flat",
        "roost/flow/routes.py",
        'for key in dotted.split("."):\n        if not isinstance(node, dict) or key not in node:',
        "for key in [dotted]:\n        if not isinstance(node, dict) or key not in node:",
        ROUTE_TESTS,
        "a nested field (meta.tone) would never be found in the data",
    ),
    Mutant(
        "route-terminate-ignored",
        CHANNEL_PY,
        "if any(r.held and r.to == ROUTE_END for r in routes):",
        "if False:",
        ROUTE_TESTS,
        "a route to TERMINATE that holds would not end the run",
    ),
    Mutant(
        "route-held-dropped",
        CHANNEL_PY,
        "allowed = (*plain, *(r.to for r in routes if r.held))",
        "allowed = (*plain, *(r.to for r in routes if not r.held))",
        ROUTE_TESTS,
        "the targets of the routes that did not hold would be the candidates",
    ),
    Mutant(
        "route-replay-calls-python",
        "roost/engine/recorded/decisions.py",
        "if not has_python(route.when):",
        "if True:",
        ROUTE_TESTS,
        "a replay would call a python condition again instead of reading the record",
    ),
    Mutant(
        "route-data-not-recorded",
        "roost/engine/interpreter.py",
        "data = self._data(frm, text) if frm in self._formats else None",
        "data = None",
        ROUTE_TESTS,
        "a structured reply's data would not reach the message event",
    ),
    Mutant(
        "route-manual-ignores-routes",
        "roost/nodes/directors.py",
        "if routes is None and isinstance(pending, InterruptEvent):",
        "if False:",
        ROUTE_TESTS,
        "a manual director's person would be offered members whose routes did not hold",
    ),
    Mutant(
        "route-check-enum-skipped",
        "roost/flow/route_checks.py",
        'if "equals" in condition.model_fields_set and condition.equals not in enum:',
        'if "equals" in condition.model_fields_set and condition.equals in enum:',
        ROUTE_CHECK_TESTS,
        "an equals outside the field's enum would pass validation",
    ),
    Mutant(
        "route-check-target-skipped",
        "roost/flow/route_checks.py",
        "if route.to != ROUTE_END and route.to not in members:",
        "if route.to != ROUTE_END and route.to in members and False:",
        ROUTE_CHECK_TESTS,
        "a route to no member would pass validation",
    ),
    Mutant(
        "route-last-into-channel-as-pair",
        "roost/nodes/roles.py",
        "    thread = state.inbox_of(to) if to in flow.channels else state.pair_thread(node, to)",
        "    thread = state.pair_thread(node, to)",
        LAST_TESTS,
        "a member's role or a director's prompt reading last sees nothing in a channel",
    ),
    Mutant(
        "route-last-without-data",
        "roost/nodes/roles.py",
        """"content": entry.content, "data": data}""",
        """"content": entry.content, "data": None}""",
        LAST_TESTS,
        "a template reading last.data never sees a structured reply's fields",
    ),
    Mutant(
        "route-count-by-entry-position",
        "roost/visualize/dot.py",
        "                taken = run.taken[(name, source, routes)] if run is not None else None",
        "                taken = run.taken[(name, source, position)] if run is not None else None",
        ("tests/visualize/test_dot_routes.py",),
        "a route after a plain name shows another route's count",
    ),
    Mutant(
        "route-batch-data-dropped",
        "roost/batch/rows.py",
        "        data=state.answer_data,\n",
        "",
        ("tests/batch/test_structured_results.py",),
        "batch results leave out the answer's structured data",
    ),
    Mutant(
        "route-batch-csv-data-raw",
        "roost/batch/results.py",
        """            fields["data"] = json.dumps(fields["data"], ensure_ascii=False)""",
        """            fields["data"] = str(fields["data"])""",
        ("tests/batch/test_structured_results.py",),
        "a CSV's data column holds Python's text of the object, not JSON",
    ),
]

GRADED = ("tests/flowtest/test_graded.py",)
ROUTE_EXPECT = ("tests/flowtest/test_routes_expect.py",)

GRADED_TESTS = [
    Mutant(
        "graded-pass-at-strict",
        "roost/flowtest/cases.py",
        "    if passed >= needed:\n        return [], []",
        "    if passed > needed:\n        return [], []",
        GRADED,
        "a repeated case that passes exactly pass_at of its runs fails",
    ),
    Mutant(
        "graded-repeat-ignored",
        "roost/flowtest/spec.py",
        "        runs = repeat or self.case.repeat",
        "        runs = self.case.repeat",
        GRADED,
        "--repeat N runs each case as often as the file says, not N times",
    ),
    Mutant(
        "graded-tools-any-order",
        "roost/flowtest/cases.py",
        "    made = iter(calls)  # each wanted name is looked for after the one before it",
        "    made = calls  # each wanted name is looked for after the one before it",
        GRADED,
        "tools_in_order passes calls made in another order",
    ),
    Mutant(
        "graded-tokens-unchecked",
        "roost/flowtest/cases.py",
        "    if expect.max_tokens is not None and tokens > expect.max_tokens:",
        "    if False:",
        GRADED,
        "max_tokens passes a run that used more",
    ),
    Mutant(
        "graded-judge-fail-ignored",
        "roost/flowtest/cases.py",
        "    failures += [verdict.line() for verdict in verdicts if not verdict.passed]",
        "    failures += []",
        GRADED,
        "a judge that says fail does not fail the case",
    ),
    Mutant(
        "graded-verdict-unchecked",
        "roost/flowtest/judging.py",
        "        jsonschema.validate(data, VERDICT)\n",
        "",
        GRADED,
        "a judge's reply that is not a verdict is taken as one",
    ),
    Mutant(
        "graded-person-not-carried-in-replay",
        "roost/engine/replay.py",
        "            await runner.note(event)  # a flow test's judge or simulated person, "
        "as recorded",
        "            pass",
        GRADED,
        "a case run with a judge or a simulated person does not replay identical",
    ),
    Mutant(
        "graded-person-sees-own-words-as-told",
        "roost/flowtest/person.py",
        "        if event.from_ == node:",
        "        if event.from_ != node:",
        GRADED,
        "the simulated person sees the conversation from the assistant's side",
    ),
    Mutant(
        "graded-approvals-ignored",
        "roost/flowtest/cases.py",
        '        if pause.kind == "tool_approval" and case.approvals:',
        '        if pause.kind == "tool_approval" and False:',
        GRADED,
        "approvals: do not answer tool approvals",
    ),
    Mutant(
        "graded-data-values-ignored",
        "roost/flowtest/cases.py",
        "            key in data and has_subset(data[key], value) for key, value in wanted.items()",
        "            key in data for key, value in wanted.items()",
        ROUTE_EXPECT,
        "data: passes a structured reply whose fields have other values",
    ),
    Mutant(
        "graded-route-order-ignored",
        "roost/flowtest/cases.py",
        "    if taken == wanted:",
        "    if sorted(taken) == sorted(wanted):",
        ROUTE_EXPECT,
        "route: passes the routes taken in another order",
    ),
    Mutant(
        "graded-route-source-is-channel",
        "roost/flow/routes.py",
        "                source = latest[channel]",
        "                source = channel",
        ROUTE_EXPECT,
        "a route taken is named after the channel, not the member whose reply took it",
    ),
    Mutant(
        "graded-route-names-unchecked",
        "roost/flowtest/spec.py",
        '        self._check_routes(flow, case.expect, (*where, "expect", "route"))\n',
        "",
        ROUTE_EXPECT,
        "an expected route naming no agent is not an error of the test file",
    ),
    Mutant(
        "diff-route-not-named",
        "roost/cli/diff_command.py",
        '    return f"{shown}, route {route.name}: {route.when}" if route is not None else shown',
        "    return shown",
        ("tests/cli/test_diff.py",),
        "roost diff shows a routed choice without the route that made it",
    ),
    Mutant(
        "diff-parted-routes-silent",
        "roost/cli/diff_command.py",
        "    if parted:\n        out.print(escape(parted))\n",
        "",
        ("tests/cli/test_diff.py",),
        "roost diff does not say which route each run took from where they part",
    ),
    Mutant(
        "graded-own-secrets-unmasked",
        "roost/flowtest/outside.py",
        "    redact = Redactor(flow.secrets | outside.secrets)",
        "    redact = Redactor(flow.secrets)",
        GRADED,
        "a value a test file's own provider read from the environment shows in its run",
    ),
    Mutant(
        "graded-own-unset-ignored",
        "roost/flowtest/spec.py",
        "                self.problems += self.own.unset.get(name, [])",
        "                pass",
        GRADED,
        "a judge or person needing an unset variable fails at run time, not in the test file",
    ),
    Mutant(
        "graded-note-not-notified",
        "roost/engine/runner.py",
        "            self._notify([stamped])  # shown and streamed like the events of a call\n",
        "",
        ("tests/engine/test_call_cursors.py",),
        "a judge's or a simulated person's call never reaches events() nor on_event",
    ),
    Mutant(
        "diff-same-when-longer",
        "roost/cli/diff_command.py",
        "        if a is None or b is None or seen(a) != seen(b):",
        "        if a is not None and b is not None and seen(a) != seen(b):",
        ("tests/cli/test_diff.py",),
        "roost diff calls a run the same as its longer fork",
    ),
    Mutant(
        "compare-order-not-mapped-back",
        "roost/flowtest/compare.py",
        '    chosen = "tie" if prefer == "tie" else shown[int(prefer) - 1]',
        '    chosen = "tie" if prefer == "tie" else ("a", "b")[int(prefer) - 1]',
        ("tests/cli/test_compare.py",),
        "the judge's choice of the first answer shown counts for A whatever it was shown",
    ),
    Mutant(
        "compare-same-answers-counted",
        "roost/flowtest/compare.py",
        "        return self.a.final != self.b.final",
        "        return True",
        ("tests/cli/test_compare.py",),
        "rows whose answers are the same count as changed",
    ),
]

# Budgets: kept before the money is spent, folded from the log, replayed.
BUDGET_PY = "roost/engine/budget.py"
BUDGET_TESTS = ("tests/budgets/test_budget_run.py", "tests/budgets/test_budget_checks.py")

SERVE_BUDGET_TESTS = ("tests/serve/test_budgets.py",)

BUDGETS = [
    Mutant(
        "page-budget-standing-dropped",
        "roost/visualize/run_page.py",
        "return {e.seq: budget_words(e) for e in decisions}, budget_lines(fold(events))",
        "return {e.seq: budget_words(e) for e in decisions}, []",
        ("tests/budgets/test_budget_page.py",),
        "the run page of a run a budget stopped never says where its limits stood",
    ),
    Mutant(
        "page-budget-words-dropped",
        "roost/visualize/run_page.py",
        "return {e.seq: budget_words(e) for e in decisions}, budget_lines(fold(events))",
        "return {}, budget_lines(fold(events))",
        ("tests/budgets/test_budget_page.py",),
        "the run page shows a budget's decision as raw JSON, not in words",
    ),
    Mutant(
        "runs-budget-earliest-decision",
        "roost/store/sql.py",
        "select(EVENTS.c.run, func.max(column))",
        "select(EVENTS.c.run, func.min(column))",
        ("tests/store/test_latest_of_type.py", "tests/budgets/test_budget_cli.py"),
        "roost runs shows a run's first budget decision, not what it did last",
    ),
    Mutant(
        "runs-budget-one-statement",
        "roost/store/sql.py",
        "for start in range(0, len(run_ids), _PART):",
        "for start in range(0, min(len(run_ids), 1), _PART):",
        ("tests/store/test_latest_of_type.py",),
        "past the first few hundred runs, roost runs shows no budget decision",
    ),
    Mutant(
        "budget-estimate-ignored",
        BUDGET_PY,
        "else spent + adds > allowed",
        "else spent > allowed",
        BUDGET_TESTS,
        "the call that passes the limit is made: a run spends more than its budget",
    ),
    Mutant(
        "budget-limit-refused-when-reached",
        BUDGET_PY,
        "else spent + adds > allowed",
        "else spent + adds >= allowed",
        BUDGET_TESTS,
        "a limit of five calls makes four",
    ),
    Mutant(
        "budget-no-message-overhead",
        BUDGET_PY,
        "prompt += MESSAGE_TOKENS * (len(request.messages) + 1)",
        "prompt += 0",
        BUDGET_TESTS,
        "short messages are underestimated and a run of them passes its cost limit",
    ),
    Mutant(
        "budget-answer-not-estimated",
        BUDGET_PY,
        "answer = (config.max_tokens if config is not None else None) or ASSUMED_MAX_TOKENS",
        "answer = 0",
        BUDGET_TESTS,
        "the answer's tokens are left out of the estimate: the last call passes the limit",
    ),
    Mutant(
        "budget-agent-scope-dropped",
        BUDGET_PY,
        "return (None, node) if own else (None,)",
        "return (None,)",
        BUDGET_TESTS,
        "an agent's own budget is never kept",
    ),
    Mutant(
        "budget-switch-never",
        BUDGET_PY,
        "if target is not None and target != provider:",
        "if False:",
        BUDGET_TESTS,
        "switch_to stops the run instead of going on with the cheaper provider",
    ),
    Mutant(
        "budget-tool-round-not-counted",
        "roost/engine/tool_loop.py",
        "self.budget.before_tools(job.agent, len(todo))",
        "self.budget.before_tools(job.agent, 0)",
        BUDGET_TESTS,
        "a round of tool calls runs past the tool_calls limit",
    ),
    Mutant(
        "budget-fallback-attempts-not-counted",
        "roost/runstate/_fold.py",
        'spent.model_calls += len(data["attempts"]) or 1',
        "spent.model_calls += 1",
        BUDGET_TESTS,
        "a fallback's calls are free of the model_calls limit",
    ),
    Mutant(
        "budget-paused-time-counted",
        "roost/runstate/_fold.py",
        "    _stop_clock(state, interrupt.ts)\n",
        "",
        BUDGET_TESTS,
        "the hours a run sat paused count toward its seconds",
    ),
    Mutant(
        "budget-subflow-not-counted",
        "roost/runstate/_fold.py",
        "state.subflows.add(spent_from(result.spent))",
        "pass",
        BUDGET_TESTS,
        "a sub-flow's spending is left out of its parent's budget",
    ),
    Mutant(
        "budget-raised-ignored",
        "roost/runstate/_fold.py",
        "state.raised[(budget.agent, budget.limit)] = budget.allowed",
        "pass",
        BUDGET_TESTS,
        "a person's new limit is not kept: the run asks again at once",
    ),
    Mutant(
        "budget-batch-never-full",
        "roost/batch/local.py",
        "if budget is not None and spent >= budget:",
        "if False:",
        ("tests/budgets/test_budget_batch.py",),
        "a batch goes on starting rows after its budget is spent",
    ),
    Mutant(
        "budget-unpriced-accepted",
        "roost/flow/budget_checks.py",
        "return price_of(config)[0] is None",
        "return False",
        BUDGET_TESTS,
        "a cost limit is accepted on a provider whose price is unknown, and never kept",
    ),
    # The server's budgets: set by POST /runs, answered by a message, shown in the summary.
    Mutant(
        "serve-budget-not-recorded",
        "roost/serve/hub.py",
        "runner.set_budget(budget)  # recorded with the start",
        "pass  # recorded with the start",
        SERVE_BUDGET_TESTS,
        "POST /runs takes a budget and the run spends past it",
    ),
    Mutant(
        "serve-budget-unpriced-accepted",
        "roost/serve/hub.py",
        "check_budget(flow, budget)  # so does",
        "pass  # so does",
        SERVE_BUDGET_TESTS,
        "a budget is taken on a flow whose prices are unknown, where it can never be kept",
    ),
    Mutant(
        "serve-budget-zero-taken",
        "roost/serve/schemas.py",
        "Field(gt=0, allow_inf_nan=False, strict=True)",
        "Field(ge=0, allow_inf_nan=False, strict=True)",
        SERVE_BUDGET_TESTS,
        "a budget of 0 is taken: the run stops before its first call",
    ),
    Mutant(
        "serve-budget-text-taken",
        "roost/serve/schemas.py",
        "Field(gt=0, allow_inf_nan=False, strict=True)",
        "Field(gt=0, allow_inf_nan=False)",
        SERVE_BUDGET_TESTS,
        'a budget written as text ("0.5") or true is taken as a number',
    ),
    Mutant(
        "serve-budget-answer-unchecked",
        "roost/serve/hub.py",
        "budgets.check_answer(self.reads.state(run_id)[1], content)",
        "pass",
        SERVE_BUDGET_TESTS,
        "an answer to a budget that is no new limit is accepted, and refused only later",
    ),
    Mutant(
        "serve-budget-left-not-subtracted",
        "roost/budget_text.py",
        "return max(self.allowed - self.spent, 0.0)",
        "return self.allowed",
        (*SERVE_BUDGET_TESTS, "tests/budgets/test_budget_page.py"),
        "the summary says the whole limit is left after spending",
    ),
    Mutant(
        "serve-budget-asked-not-shown",
        "roost/serve/rows.py",
        '"budget": budgets.asked(state),',
        '"budget": None,',
        SERVE_BUDGET_TESTS,
        "a run paused by its budget does not say which limit asks",
    ),
    Mutant(
        "serve-budget-late-answer-crashes",
        "roost/serve/session.py",
        "except (RunStateError, UsageError) as error:",
        "except RunStateError as error:",
        SERVE_BUDGET_TESTS,
        "a wrong answer queued during a step stops the run's session; the run hangs",
    ),
]

SOURCES_TESTS = (
    "tests/engine/test_clock.py",
    "tests/engine/test_skills.py",
    "tests/engine/test_replay.py",
)
SOURCES = [
    # -- a Runner's sources, and a replay's from the record (engine/sources.py, engine/recorded/)
    Mutant(
        "sources-never-bound",
        "roost/engine/sources.py",
        "            if isinstance(source, Bound):\n                source.bind(run)\n",
        "            pass\n",
        SOURCES_TESTS,
        "no recorded source learns where the run stands: a replay cannot answer a tool call",
    ),
    Mutant(
        "recorded-clock-live-time",
        "roost/engine/recorded/world.py",
        "return self._times.get(_next_seq(self._run)) or now_iso()",
        "return now_iso()",
        ("tests/engine/test_clock.py",),
        "a replay stamps its events with the time now, not the times the run recorded",
    ),
    Mutant(
        "recorded-skills-latest-ignored",
        "roost/engine/recorded/world.py",
        "index = bisect.bisect_right(self._seqs, _next_seq(self._run)) - 1",
        "index = len(self._seqs) - 1",
        ("tests/engine/test_skills.py",),
        "a replay shows the skills list recorded last in the run, not the one in force then",
    ),
    # Left out as equivalent on every reachable path: RecordedTools.answer finds the call
    # open at the same seq (in_flight) and also pops each answered pair from by_seq; either
    # alone gives each call its own result (tests/engine/test_recorded_sources.py), so a
    # mutant dropping one of the two survives by the other.
    Mutant(
        "limit-free-turn-counted-as-wait",
        "roost/providers/limits.py",
        "waited = time.monotonic() - began if must_wait else 0.0",
        "waited = time.monotonic() - began",
        ("tests/providers/test_limits.py",),
        "a call that took its turn at once is reported as waiting when the machine is slow",
    ),
    Mutant(
        "legacy-digest-not-asked",
        "roost/engine/calls.py",
        "legacy = self.legacy_digests is not None and self.legacy_digests()",
        "legacy = False",
        ("tests/engine/test_digests.py",),
        "a run recorded before whole-request digests replays as changed at its first call",
    ),
    Mutant(
        "recorded-flow-not-marked",
        "roost/flow/loader.py",
        "    flow._from_record = True\n",
        "",
        ("tests/attacks/test_context_globs.py",),
        "a run file's flow reads context files outside the folder its replay runs in",
    ),
]

MUTANTS: list[Mutant] = [
    *ENGINE,
    *STORE,
    *PROVIDERS,
    *TEMPLATING,
    *LEASES,
    *MEMORY,
    *COMPACTION,
    *BUILTIN_TOOLS,
    *SKILLS,
    *HOOKS,
    *BACKGROUND,
    *FLOWTEST,
    *PRICING,
    *TELEMETRY,
    *SERVE,
    *BATCH,
    *SERVE_ACCESS,
    *EDGES_CLI,
    *ONE_SOURCE,
    *SPEED,
    *EDGES_PERSON,
    *HARDENING_ENGINE,
    *SERVE_LOAD,
    *EDGES_LEFT,
    *FRONT_DOOR,
    *STRUCTURED,
    *WORKSPACE,
    *ROUTES,
    *IMPORTERS,
    *SERVE_PRODUCTION,
    *STUDIO,
    *GRADED_TESTS,
    *BUDGETS,
    *SOURCES,
]
