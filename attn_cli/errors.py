"""One exception family for every expected failure, each with its exit code.

The CLI catches `AttnError` in one place and prints `attn-cli: error: <message>`
as a single line on stderr, so no expected failure ever shows a traceback. The
table of exit codes is part of the public contract (README, "Exit codes").
"""

from __future__ import annotations


class AttnError(Exception):
    """An expected failure: the message names the problem and the fix."""

    exit_code = 1

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class UsageError(AttnError):
    """An option value or combination of options that cannot work."""

    exit_code = 2


class InputError(AttnError):
    """The sentence itself cannot be attended: empty, all unknown words, ..."""

    exit_code = 3


class VectorsError(AttnError):
    """The vector source is missing, unreadable or malformed."""

    exit_code = 4


PIPE_CLOSED = 141  # 128 + SIGPIPE: what a shell reports for `yes | head`

EXIT_CODES = {
    0: "success",
    1: "internal error (a bug: please report it with the command line)",
    UsageError.exit_code: "bad option or option combination",
    InputError.exit_code: "the sentence cannot be attended (empty, every word out of vocabulary, word not found) "
                          "or compared (too few sentences, no shared word)",
    VectorsError.exit_code: "vector source missing, unreadable or malformed",
    130: "interrupted (Ctrl-C)",
    PIPE_CLOSED: "stdout closed early (e.g. piped into head): stopped quietly",
}
