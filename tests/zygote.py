"""`python zygote.py SOCKET ARGS...` runs `attn-cli ARGS` as a process of its own, forked from one that has loaded
the command line's modules already (`python zygote.py --serve SOCKET`): the run gets this process's open descriptors,
folder, environment, stream encodings and file size limit, and this process ends as it ends. The modules load once,
not at each run; for tests whose point is neither the interpreter's start (a Ctrl-C as modules load) nor a signal
sent to the program (this process does not pass it on)."""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import socket
import sys

LOW = 1024  # descriptors the run is given are numbered below this, as the client had them


def client(path: str, args: list[str]) -> None:
    """Sends the run its arguments, this process's descriptors, the settings of its standard streams (its encodings,
    as the environment made them) and its file size limit; ends with the run's exit code or signal."""
    import resource
    import time

    with socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET) as connection:
        for _ in range(6000):  # the server may still be loading its modules
            try:
                connection.connect(path)
                break
            except (FileNotFoundError, ConnectionRefusedError):
                time.sleep(0.1)
        numbers = [number for number in range(LOW) if number != connection.fileno() and is_open(number)]
        streams = [stream and [stream.encoding, stream.errors, stream.write_through]
                   for stream in (sys.stdin, sys.stdout, sys.stderr)]
        request = {"args": args, "env": dict(os.environ), "cwd": os.getcwd(), "numbers": numbers,
                   "streams": streams, "fsize": resource.getrlimit(resource.RLIMIT_FSIZE)}
        socket.send_fds(connection, [json.dumps(request).encode()], numbers)
        for number in numbers:
            os.close(number)  # the run holds them alone: a pipe ends when the run ends
        code = int(connection.recv(64) or b"1")
    if code < 0:  # ended by a signal: this process ends by it too
        signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
    os._exit(code)


def is_open(number: int) -> bool:
    try:
        os.fstat(number)
    except OSError:
        return False
    return True


def serve(path: str) -> None:
    """Forks a waiter for each request, which forks the run and reports how it ended."""
    import attn_cli.cli.app  # noqa: F401  the modules a run loads

    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # the waiters are reaped as they end
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    listener.bind(path)
    listener.listen(64)
    while True:
        if 0 in select.select([listener, 0], [], [])[0] and not os.read(0, 1):
            return  # the tests' process ended, however it ended (its end of stdin closed): so does this server
        connection, _ = listener.accept()
        if os.fork() == 0:
            listener.detach()
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
            message, descriptors, _, _ = socket.recv_fds(connection, 1 << 20, LOW)
            run = os.fork()
            if run == 0:
                connection.detach()
                become(json.loads(message), descriptors)  # ends as the run ends
            while not (ended := os.waitpid(run, os.WNOHANG))[0]:
                if select.select([connection], [], [], 0.1)[0] and not connection.recv(1):
                    os.kill(run, signal.SIGKILL)  # the client was killed (a test's timeout): so is its run
            with contextlib.suppress(OSError):
                connection.send(str(os.waitstatus_to_exitcode(ended[1])).encode())
            os._exit(0)
        connection.close()


def become(request: dict, descriptors: list[int]) -> None:
    """This process as `python -m attn_cli ARGS` would start: the client's descriptors at its numbers, its folder
    and environment, standard streams made as the interpreter makes them; then the run, and the interpreter's exit."""
    import fcntl
    import io
    import resource
    import tempfile

    from attn_cli.cli import run

    for stream in (sys.stdin, sys.stdout, sys.stderr):
        stream.close()
    moved = [fcntl.fcntl(descriptor, fcntl.F_DUPFD, LOW) for descriptor in descriptors]
    os.closerange(0, LOW)
    for high, number in zip(moved, request["numbers"]):
        os.dup2(high, number)
        os.close(high)
    resource.setrlimit(resource.RLIMIT_FSIZE, request["fsize"])
    sys.dont_write_bytecode = request["fsize"][0] != resource.RLIM_INFINITY  # see conftest.NO_BYTECODE
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    tempfile.tempdir = None  # found again from $TMPDIR
    sys.path[0] = os.getcwd()  # as `python -m` has it

    def stream(number: int) -> io.TextIOWrapper | None:
        if request["streams"][number] is None:
            return None  # closed, as the interpreter leaves it
        encoding, errors, unbuffered = request["streams"][number]
        binary = open(number, "rb" if number == 0 else "wb", buffering=0 if unbuffered else -1)
        return io.TextIOWrapper(binary, encoding=encoding, errors=errors, newline="\n",
                                line_buffering=number == 2 or os.isatty(number), write_through=unbuffered)

    sys.stdin, sys.stdout, sys.stderr = sys.__stdin__, sys.__stdout__, sys.__stderr__ = tuple(map(stream, range(3)))
    sys.argv = [os.path.normpath(os.path.join(run.__code__.co_filename, "..", "..", "__main__.py")),
                *request["args"]]
    run()


if __name__ == "__main__":
    if sys.argv[1] == "--serve":
        serve(sys.argv[2])
    else:
        client(sys.argv[1], sys.argv[2:])
