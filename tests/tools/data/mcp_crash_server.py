"""A would-be MCP server that dies at once, saying why on stderr."""

import sys

sys.stderr.write("cannot open the database\n")
sys.exit(3)
