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
