"""roost's command line: parse, call the API, print, exit with the error's code.

Each command lives in a module of its own and registers itself on ``app``,
imported only when that command runs (see ``roost.cli.app``); ``main`` catches
roost's base error once and prints it as one line.
"""

from __future__ import annotations

import contextlib
import os
import sys

import typer
from typer.exceptions import TyperException

from roost.cli.app import app
from roost.errors import RoostError


def main(argv: list[str] | None = None) -> None:
    """Entry point of the ``roost`` console script."""
    for argument in sys.argv[1:] if argv is None else argv:
        if not _is_text(argument):
            # Bytes that are not UTF-8 (the shell passes them through) can be neither
            # recorded, stored nor printed: refused here, once, for every command.
            shown = ascii(argument)[1:-1]
            print(f"roost: error: argument '{shown}' is not valid UTF-8 text", file=sys.stderr)
            sys.exit(2)
    try:
        # Without standalone mode the parser returns an Exit's code instead of exiting.
        code = app(args=argv, prog_name="roost", standalone_mode=False)
        sys.stdout.flush()  # a full disk or a closed pipe shows here, not at exit
    except RoostError as error:
        print(str(error), file=sys.stderr)
        sys.exit(error.exit_code)
    except (typer.Abort, KeyboardInterrupt):
        print("roost: interrupted", file=sys.stderr)
        sys.exit(130)
    except typer.Exit as exit_:
        sys.exit(exit_.exit_code)
    except TyperException as error:
        sys.exit(_usage_error(error))
    except OSError as error:  # writing the output failed: /dev/full, a closed pipe
        sys.exit(_output_failed(error))
    if isinstance(code, int) and code:
        sys.exit(code)


def _is_text(argument: str) -> bool:
    """Whether ``argument`` can be recorded as text; ASCII, the common case, without a look."""
    if argument.isascii():
        return True
    from roost.events import valid_text  # the event models: not for every ``roost --help``

    return valid_text(argument) == argument


def _output_failed(error: OSError) -> int:
    """One line about the failed write, and no second complaint when Python exits."""
    # What is still buffered would fail again at exit: let it go nowhere instead.
    with contextlib.suppress(OSError, ValueError):
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    if isinstance(error, BrokenPipeError):
        return 0  # the reader stopped reading (roost runs | head): nothing went wrong
    print(f"roost: error: cannot write the output: {error.strerror or error}", file=sys.stderr)
    return 1


def _usage_error(error: TyperException) -> int:
    """Bad use of the command line: one line (or the help when no command was given), exit 2."""
    message = error.format_message() if hasattr(error, "format_message") else str(error)
    if type(error).__name__ == "NoArgsIsHelpError":
        print(message, file=sys.stderr)  # the message is the help text itself
    else:
        print(f"roost: error: {message.splitlines()[0] if message else error}", file=sys.stderr)
    return 2
