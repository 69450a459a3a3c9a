"""Errors the front door reports as bad input (exit status 2), never with a traceback."""

from __future__ import annotations


class InputError(ValueError):
    """A file, argument, parameter or experiment id the user gave is not usable.

    The message is one paragraph naming the file, key or argument, what is wrong
    and what is allowed.
    """


class Terminated(KeyboardInterrupt):
    """The process was asked to stop (SIGTERM); handled like Ctrl-C, exit status 143."""
