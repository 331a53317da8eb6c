"""What the run state's tests share."""

from __future__ import annotations

# A flow whose markers: rule (in defaults, and the bot's own) and replies are filled in.
FLOW = """\
roost: 1
name: answers
defaults: {{provider: mock{markers}}}
providers:
  mock: {{kind: scripted, replies: {replies}}}
agents:
  USER: {{role: A person.}}
  bot: {{role: A bot.{own}}}
start: {{from: USER, to: bot, content: Is 2 + 2 four?}}
"""
