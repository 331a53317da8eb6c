"""Flows that tests in more than one room run: written once, here."""

from __future__ import annotations

# A sub-flow that remembers what it is told, in the memory shared as "guests".
NOTE_SUBFLOW = """\
roost: 1
name: note
description: Remembers what a guest likes.
memory: {scope: guests}
providers:
  script:
    kind: scripted
    replies:
      - tool_calls:
          - name: memory__store
            arguments: {key: tea, content: The guest drinks green tea., importance: 0.9}
      - Noted.
agents:
  USER: {interrupt: ALWAYS}
  clerk: {provider: script, functions: [memory#store]}
start: {from: USER, to: clerk}
"""

# A channel whose next speaker a person names.
MANUAL_CHANNEL = """
    roost: 1
    agents:
      x: {role: X.}
      y: {role: Y.}
      USER: {role: A person.}
    channels:
      team:
        members: [x, y]
        max_rounds: 1
        role: You direct.
        director: {strategy: manual}
    start: {from: USER, to: team, content: "Who speaks?"}
"""

# A sub-flow whose model repeats what it is sent: its answer shows what was recalled.
ASK_SUBFLOW = """\
roost: 1
name: ask
description: Answers from what is remembered.
memory: {scope: guests}
providers:
  echo: {kind: scripted, replies: [{echo: last}]}
agents:
  USER: {interrupt: ALWAYS}
  clerk: {provider: echo}
start: {from: USER, to: clerk}
"""

# The parent has no memory of its own: only its sub-flows (note.yaml, ask.yaml) do.
MEMORY_PARENT = """\
roost: 1
name: front-desk
providers:
  script:
    kind: scripted
    replies:
      - {tool_calls: [{name: TOOL, arguments: {message: "MESSAGE"}}]}
      - Done.
tools:
  note: {flow: note.yaml}
  ask: {flow: ask.yaml}
agents:
  guest: {interrupt: ALWAYS}
  desk: {provider: script, functions: [note, ask]}
start: {from: guest, to: desk, content: Hello.}
"""

# A host who stores what the guest drinks, in the memory shared as "guests".
TELL_TEA = """\
roost: 1
name: tea-house
memory: {scope: guests}
providers:
  script:
    kind: scripted
    replies:
      - tool_calls:
          - name: memory__store
            arguments: {key: tea, content: The guest drinks green tea., importance: 0.9}
      - Noted. TERMINATE
agents:
  guest: {provider: script}
  host: {provider: script, functions: [memory#store]}
start: {from: guest, to: host, content: "I only drink green tea."}
"""

# A host whose model repeats what it is sent: its answer shows what was recalled.
ASK_TEA = """\
roost: 1
name: tea-order
memory: {scope: guests}
providers:
  echo: {kind: scripted, replies: [{echo: last}]}
agents:
  guest: {interrupt: ALWAYS}
  host: {provider: echo}
start: {from: guest, to: host, content: "Which tea should I make?"}
"""
