"""Every broken flow in the corpus fails with the exact line, column and words expected."""

from __future__ import annotations

from pathlib import Path

import pytest

from roost.errors import FlowError
from roost.flow import read_flow

CORPUS = Path(__file__).parent / "corpus"

# file: (line, col, words that must all appear in the message)
EXPECTED: dict[str, tuple[int, int, tuple[str, ...]]] = {
    "agent_without_provider.yaml": (5, 3, ("agent 'helper'", "no provider")),
    "background_not_bool.yaml": (4, 37, ("background of tool 'r'", "expected true or false")),
    "bad_indent.yaml": (3, 9, ("invalid YAML", "indented deeper than the line above")),
    "bad_int_literal.yaml": (4, 15, ("cannot read", "'ten'")),
    "bad_interrupt.yaml": (5, 16, ("interrupt of agent 'a'", "NEVER, ALWAYS")),
    "bad_merge.yaml": (5, 9, ("'<<'", "mapping")),
    "bad_provider_kind.yaml": (4, 15, ("kind", "openai, openai-responses, anthropic, scripted")),
    "bad_strategy.yaml": (9, 26, ("strategy", "llm, round_robin, random, manual")),
    "billion_laughs.yaml": (8, 6, ("more than 50000 values", "aliases")),
    "binary.yaml": (2, 8, ("binary file",)),
    # Package builtins: builtin#... tools and the builtins: section.
    "builtin_bad_approval.yaml": (4, 21, ("builtins.shell.approval", "never, always")),
    "builtin_bad_host.yaml": (7, 9, ("'https://example.com/api' is no host name", "example.com")),
    "builtin_http_without_hosts.yaml": (9, 9, ("'builtin#http_get' needs the hosts",)),
    "builtin_unknown_tool.yaml": (8, 37, ("'builtin#reed_file'", "did you mean 'read_file'")),
    "channel_member.yaml": (9, 18, ("channel 'inner'", "cannot be a member", "'outer'")),
    "comments_only.yaml": (1, 1, ("empty file",)),
    "compress_out_of_range.yaml": (4, 16, ("compress_at of defaults", "at most 1")),
    "compress_wrong_order.yaml": (5, 21, ("compress_hard_at (0.6)", "below", "compress_at (0.8)")),
    "context_window_too_small.yaml": (
        4,
        58,
        ("context_window 10 of provider 'small'", "system prompt of agent 'a'"),
    ),
    "control_char.yaml": (2, 8, ("U+0007", "not allowed")),
    "custom_tag.yaml": (2, 7, ("tag", "'!secret'", "not allowed")),
    "director_prompt_syntax.yaml": (10, 15, ("director.prompt of channel 'c'", "does not parse")),
    "duplicate_key.yaml": (5, 3, ("duplicate key 'a'", "line 4")),
    "duplicate_node_name.yaml": (7, 3, ("'a'", "both an agent and a channel")),
    "empty.yaml": (1, 1, ("empty file",)),
    "invalid_utf8.yaml": (2, 10, ("invalid UTF-8", "0xe9")),
    "list_doc.yaml": (1, 1, ("must be a mapping", "not a list")),
    "llm_director_without_provider.yaml": (5, 3, ("llm director", "channel 'c'", "provider")),
    "max_background_zero.yaml": (3, 28, ("max_background of defaults", "at least 1")),
    "max_rounds_zero.yaml": (4, 15, ("max_rounds", "at least 1")),
    "max_tokens_text.yaml": (7, 17, ("max_tokens of provider 'gpt'", "expected an integer")),
    "memory_bad_scope.yaml": (4, 10, ("memory.scope", "unknown scope 'my scope!'", "agent")),
    "memory_recall_out_of_range.yaml": (4, 11, ("memory.recall", "at most 50")),
    "memory_tools_without_memory.yaml": (8, 17, ("'memory#store'", "needs a memory: section")),
    "memory_unknown_tool.yaml": (9, 17, ("'memory#stor'", "no memory tool", "'store'")),
    "mcp_server_typo.yaml": (5, 5, ("unknown key 'comand'", "did you mean 'command'")),
    "mcp_unknown_server.yaml": (5, 10, ("no MCP server", "'filesystem'")),
    "mcp_bad_transport.yaml": (
        6,
        16,
        ("transport of MCP server 'weather'", "streamable-http, sse"),
    ),
    "members_not_list.yaml": (6, 14, ("members of channel 'c'", "expected a list")),
    "missing_version.yaml": (1, 1, ("format version", "roost: 1")),
    "newline_in_key.yaml": (8, 28, ("transitions.'a\\nb'[0] of channel 'c'", "expected a string")),
    "no_successor.yaml": (11, 7, ("member 'b'", "no legal successor")),
    "non_string_key.yaml": (4, 3, ("key must be plain text",)),
    "only_self_successor.yaml": (10, 7, ("member 'a'", "no legal successor", "allow_repeat")),
    "provider_missing_model.yaml": (4, 3, ("provider 'claude'", "needs the key 'model'")),
    "provider_without_kind.yaml": (4, 3, ("provider 'gpt'", "needs a 'kind'", "scripted")),
    "python_tag.yaml": (2, 7, ("'!!python/object/apply:os.system'", "not allowed")),
    "recursive_alias.yaml": (3, 7, ("alias refers to its own anchor",)),
    "scalar_doc.yaml": (1, 1, ("must be a mapping", "single value")),
    "scripted_bad_echo.yaml": (6, 22, ("echo", "system, last")),
    "scripted_bad_reply.yaml": (8, 10, ("unknown key 'tool_call'", "did you mean 'tool_calls'")),
    "self_fallback.yaml": (4, 44, ("lists itself as a fallback",)),
    "version_true.yaml": (1, 8, ("unsupported format version", "roost: 1")),
    "bool_for_int.yaml": (3, 24, ("max_rounds of defaults", "expected an integer")),
    "float_for_int.yaml": (3, 24, ("max_rounds of defaults", "expected an integer")),
    "int_for_bool.yaml": (3, 24, ("timestamps of defaults", "expected true or false")),
    "fallback_cycle.yaml": (4, 49, ("fallbacks of provider 'a' lead back to it", "a -> b -> a")),
    "skills_not_names.yaml": (8, 13, ("skills of agent 'a'", "list of skill names, or all")),
    "skill_paths_not_list.yaml": (3, 14, ("skill_paths", "expected a list")),
    "start_from_nothing.yaml": (5, 9, ("start.from", "'ghost'")),
    "start_image_scheme.yaml": (9, 21, ("start.images[1]", "ftp:// is not fetched")),
    "start_images_not_a_list.yaml": (6, 33, ("images of start", "expected a list")),
    "start_missing_to.yaml": (4, 1, ("start needs the key 'to'",)),
    "start_to_nothing.yaml": (4, 25, ("start.to", "'nobody'")),
    "summary_prompt_syntax.yaml": (4, 19, ("summary_prompt of defaults", "does not parse")),
    "summary_provider_unknown.yaml": (4, 21, ("'writter'", "did you mean 'writer'")),
    "temperature_high.yaml": (4, 46, ("temperature of provider 'gpt'", "at most 2")),
    "template_syntax.yaml": (9, 1, ("role of agent 'a'", "does not parse", "endif")),
    "too_deep.yaml": (4, 68, ("nesting deeper",)),
    "tool_bad_python.yaml": (5, 13, ("python of tool 'lookup'", "module:function")),
    "tool_no_kind.yaml": (4, 3, ("tool 'lookup'", "python, flow, mcp or tools")),
    "tool_two_kinds.yaml": (4, 3, ("tool 'lookup'", "only one of", "flow or python")),
    "transition_key_unknown.yaml": (10, 7, ("'q'", "not a member")),
    "transition_unknown.yaml": (11, 11, ("'b' -> 'z'", "not a member")),
    "two_docs.yaml": (3, 1, ("several YAML documents",)),
    "unknown_default_provider.yaml": (4, 13, ("no provider named 'nowhere'",)),
    "unknown_fallback.yaml": (4, 44, ("no provider named 'claude'",)),
    "unknown_group_child.yaml": (10, 17, ("group 'math'", "no tool 'sub'")),
    "unknown_member.yaml": (8, 23, ("member 'critc'", "did you mean 'critic'")),
    "unknown_provider_key.yaml": (4, 23, ("unknown key 'modle' in provider 'gpt'", "'model'")),
    "unknown_provider_ref.yaml": (6, 15, ("no provider named 'gtp'", "did you mean 'gpt'")),
    "unknown_tool_ref.yaml": (8, 25, ("no tool named 'serch'",)),
    "unknown_top_key.yaml": (3, 1, ("unknown key 'agent'", "did you mean 'agents'")),
    "unset_variable.yaml": (7, 14, ("'ROOST_TEST_UNSET_KEY'", "not set")),
    "wrong_version.yaml": (1, 8, ("unsupported format version",)),
    "yaml_syntax.yaml": (5, 1, ("invalid YAML", "the '{' at line 4 is not closed")),
    "yaml_tab.yaml": (4, 1, ("invalid YAML", "tab ('\\t')", "spaces only")),
    # hooks
    "hook_bad_python.yaml": (4, 15, ("hooks.before_tool[0].python", "module:function")),
    "hook_neither.yaml": (7, 11, ("hooks.after_tool[0] of agent 'a'", "python or command")),
    "hook_unknown_stage.yaml": (3, 3, ("unknown key 'before_tools'", "'before_tool'")),
    "approval_not_plan.yaml": (3, 36, ("approval of agent 'a'", "plan")),
}


def test_every_corpus_file_has_an_expectation() -> None:
    files = {p.name for p in CORPUS.glob("*.yaml")}
    assert files == set(EXPECTED)
    assert len(files) >= 40


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_broken_flow_is_reported_where_it_is_wrong(name: str) -> None:
    line, col, words = EXPECTED[name]
    path = CORPUS / name
    with pytest.raises(FlowError) as caught:
        read_flow(path, environ={})
    errors = caught.value.errors
    assert errors, "a broken flow must have at least one error"
    located = [p for p in errors if (p.line, p.col) == (line, col)]
    assert located, f"no error at {line}:{col}; got {[str(p) for p in errors]}"
    message = located[0].message
    for word in words:
        assert word in message, f"{word!r} not in {message!r}"
    assert located[0].file == str(path)
    text = str(caught.value)
    assert text.startswith(f"{path}:"), text
    assert "Traceback" not in text
    assert all("\n" not in p.message for p in caught.value.problems)
