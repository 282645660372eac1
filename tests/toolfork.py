"""A fork server for the suite's short runs of pk's tools.

Why: the suite runs about 5,800 short-lived pk tools (`pk-topics`, `pk-configs`,
`pk-run-class` ...) and a fresh interpreter spends ~70 ms of CPU importing Python, Click and
pk before a tool does anything: measured, 540 CPU-seconds, over a third of the whole suite's
CPU on the 2-core CI machine. Here one server process per xdist worker imports every tool once
and forks for each run. The fork is a real process of its own (pid, arguments, environment,
working directory, stdin/stdout/stderr, exit status) that runs the tool's console-script entry
point and ends through the interpreter's own shutdown (threads joined, atexit, streams
flushed), as the installed script would.

`run` has `subprocess.run`'s signature; conftest.py makes it `subprocess.run` for the tests.
It forks only what cannot tell a fork from a fresh interpreter and hands everything else to
the real `subprocess.run`:
- the program is one of the venv's pk console scripts, except the servers the tests start and
  signal (pk-server-start, pk-zookeeper-server-start, pk-spark and their stop scripts);
- the environment agrees with the server's in everything the interpreter reads at start-up
  (PYTHON*, LANG, LC_*), and no Popen-only option is given (preexec_fn, pass_fds, a new
  session, a shell ...).
`PK_TEST_SPAWN=1` turns the server off: every tool then starts a fresh interpreter. The
installed scripts themselves are run for real by test_tool_entry_points.py.

Protocol (a Unix SOCK_SEQPACKET socket): the client sends one message, a JSON request
(argv, env, cwd) with the three descriptors the tool gets as stdin, stdout and stderr; the
server forks, answers the child's pid, and when the child ends, its return code (negative:
killed by that signal, as subprocess reports it).
"""

from __future__ import annotations

import atexit
import gc
import io
import json
import locale
import os
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

BIN_DIR = os.path.dirname(sys.executable)
# Started and signalled as servers by the tests, or starting a JVM of their own: their few runs
# gain nothing from a fork.
NOT_FORKED = {"pk-server-stop", "pk-zookeeper-server-start", "pk-zookeeper-server-stop", "pk-spark"}
# Servers: forked only through `popen` (a broker's start-up imports were a third of its time
# to listen); `run` waits for a tool's end, which a server does not reach.
SERVERS = {"pk-server-start"}
MESSAGE_BYTES = 1 << 20
real_run = subprocess.run


def _startup_environment(env) -> dict:
    """What of an environment the interpreter reads before any tool code runs."""
    return {k: v for k, v in env.items() if k.startswith(("PYTHON", "LC_")) or k == "LANG"}


def _entry_points() -> dict:
    """Console script name -> its entry point, for pk's scripts in this venv."""
    from importlib.metadata import distribution

    return {ep.name: ep for ep in distribution("pk").entry_points
            if ep.group == "console_scripts" and ep.name not in NOT_FORKED}


# =========================================================================== the server
def serve(path: str):
    """Import every tool, then fork one child per request until stdin closes (the worker
    ended). Returns only in a child: (request, entry point) for `run_child`."""
    sys.path[0] = BIN_DIR  # an installed script's sys.path[0] is its own directory
    entries = {name: ep.load() for name, ep in _entry_points().items()}
    _import_what_tools_import()
    threads = len(os.listdir("/proc/self/task"))
    if threads != 1:  # forking a process with other threads may copy a held lock
        print(f"not ready: {threads} threads after the imports", flush=True)
        return None
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    listener.bind(path)
    listener.listen(64)
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    gc.freeze()  # the forks' collections leave the server's objects alone (no copies of their pages)
    print("ready", flush=True)
    children: dict[int, socket.socket] = {}
    waiting: list[socket.socket] = []
    while True:
        try:
            readable = select.select([sys.stdin, listener, wake_r, *waiting], [], [])[0]
        except InterruptedError:
            continue
        if sys.stdin in readable and not os.read(sys.stdin.fileno(), 1):
            return None  # the worker is gone
        if wake_r in readable:
            os.read(wake_r, 4096)
        _reap(children)
        if listener in readable:
            waiting.append(listener.accept()[0])
        for conn in [c for c in waiting if c in readable]:
            waiting.remove(conn)
            try:
                message, fds, _, _ = socket.recv_fds(conn, MESSAGE_BYTES, 3)
            except OSError:
                message, fds = b"", []
            if not message or len(fds) != 3:
                for fd in fds:
                    os.close(fd)
                conn.close()
                continue
            request = json.loads(message)
            pid = os.fork()
            if pid == 0:
                signal.set_wakeup_fd(-1)
                signal.signal(signal.SIGCHLD, signal.SIG_DFL)
                for sock in (listener, conn, *waiting, *children.values()):
                    sock.close()
                os.close(wake_r)
                os.close(wake_w)
                sys.stdin.close()
                for target, fd in enumerate(fds):
                    os.dup2(fd, target)
                for fd in set(fds) - {0, 1, 2}:
                    os.close(fd)
                return request, entries[request["tool"]]
            for fd in fds:
                os.close(fd)
            children[pid] = conn
            conn.send(json.dumps({"pid": pid}).encode())


def _import_what_tools_import() -> None:
    """The modules the tools import when they run (most import their backend, the engine or
    confluent-kafka only then): pk's own but Spark's, and the client library."""
    import importlib
    import pkgutil

    import confluent_kafka  # noqa: F401
    for package in ("pk.cli", "pk.commands", "pk.engine"):
        for module in pkgutil.walk_packages(importlib.import_module(package).__path__, package + "."):
            importlib.import_module(module.name)


def _reap(children: dict) -> None:
    while children:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        conn = children.pop(pid, None)
        if conn is not None:
            try:
                conn.send(json.dumps({"returncode": os.waitstatus_to_exitcode(status)}).encode())
            except OSError:
                pass  # the client gave up (a timeout killed the child)
            conn.close()


def _std_stream(fd: int, like: io.TextIOWrapper) -> io.TextIOWrapper:
    """A standard stream on `fd` made as the interpreter makes it at start-up (pylifecycle's
    create_stdio): buffered, newline "\\n", stdout line-buffered on a terminal, stderr always."""
    binary = io.open(fd, "rb" if fd == 0 else "wb", -1, closefd=False)
    binary.raw.name = ("<stdin>", "<stdout>", "<stderr>")[fd]
    line_buffering = fd == 2 or (fd == 1 and binary.raw.isatty())
    return io.TextIOWrapper(binary, encoding=like.encoding, errors=like.errors, newline="\n",
                            line_buffering=line_buffering)


def run_child(request: dict, entry) -> None:
    """In the forked child: become the tool's process and run its entry point as the console
    script does. The interpreter's shutdown ends the process: SystemExit's code, a traceback
    and status 1 for an uncaught exception."""
    templates = (sys.__stdin__, sys.__stdout__, sys.__stderr__)
    sys.stdin, sys.stdout, sys.stderr = (_std_stream(fd, templates[fd]) for fd in range(3))
    sys.__stdin__, sys.__stdout__, sys.__stderr__ = sys.stdin, sys.stdout, sys.stderr
    os.environ.clear()
    os.environ.update(request["env"])
    time.tzset()  # the C library read TZ when the server started
    if request["cwd"] is not None:
        os.chdir(request["cwd"])
    sys.argv = request["argv"]
    try:
        code = entry()
    except SystemExit as exc:
        code = exc.code
    except KeyboardInterrupt:  # the interpreter ends by the signal itself
        sys.excepthook(*sys.exc_info())
        _shut_down(None)
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)
        code = 1
    except BaseException:
        sys.excepthook(*sys.exc_info())
        code = 1
    os._exit(_shut_down(code))


def _shut_down(code) -> int:
    """The interpreter's exit, but for tearing down its modules: the fork has every module of
    every tool, and freeing them all would cost it more than a fresh interpreter's whole run.
    Non-daemon threads are joined, atexit functions run, SystemExit's code becomes the status
    (printed when it is not a number), stdout and stderr are flushed (a failing flush: 120)."""
    if code is None:
        status = 0
    elif isinstance(code, int):
        status = code & 0xFF
    else:
        print(code, file=sys.stderr)
        status = 1
    threading._shutdown()
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:
            status = 120
    return status


# =========================================================================== the client
class _Server:
    """This worker's fork server: started at its first use, stopped by pid at exit."""

    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="pk-toolfork-")
        self.path = os.path.join(self.dir, "socket")
        self.proc = subprocess.Popen([sys.executable, __file__, self.path], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True)
        self.ready = self.proc.stdout.readline().strip() == "ready"
        self.environment = _startup_environment(os.environ)
        self.tools = set(_entry_points()) if self.ready else set()
        atexit.register(self.stop)

    def stop(self) -> None:
        if self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
        shutil.rmtree(self.dir, ignore_errors=True)


_server: _Server | None = None


def _server_for(argv: list[str], env: dict | None, servers: bool = False) -> _Server | None:
    global _server
    if os.environ.get("PK_TEST_SPAWN") or not argv or os.path.dirname(argv[0]) != BIN_DIR:
        return None
    if (os.path.basename(argv[0]) in SERVERS) != servers:
        return None
    if _server is None:
        _server = _Server()
    if not _server.ready or os.path.basename(argv[0]) not in _server.tools:
        return None
    if _startup_environment(os.environ if env is None else env) != _server.environment:
        return None
    return _server


def run(args, *, input=None, capture_output=False, timeout=None, check=False, env=None, cwd=None,
        stdin=None, stdout=None, stderr=None, text=None, universal_newlines=None, encoding=None,
        errors=None, **popen_options):
    """subprocess.run, with pk's short-lived tools forked from the server (module doc)."""
    argv = None if isinstance(args, (str, bytes)) or popen_options else [os.fsdecode(a) for a in args]
    server = _server_for(argv, env) if argv and (cwd is None or os.path.isdir(cwd)) else None
    if server is None:
        return real_run(args, input=input, capture_output=capture_output, timeout=timeout, check=check, env=env,
                         cwd=cwd, stdin=stdin, stdout=stdout, stderr=stderr, text=text,
                         universal_newlines=universal_newlines, encoding=encoding, errors=errors, **popen_options)
    if capture_output:
        if stdout is not None or stderr is not None:
            raise ValueError("stdout and stderr arguments may not be used with capture_output.")
        stdout = stderr = subprocess.PIPE
    text_mode = bool(text or universal_newlines or encoding or errors)
    if input is not None:
        if stdin is not None:
            raise ValueError("stdin and input arguments may not both be used.")
        stdin = subprocess.PIPE
        if text_mode:
            input = input.encode(encoding or locale.getpreferredencoding(False), errors or "strict")
    decode = (encoding or locale.getpreferredencoding(False), errors or "strict") if text_mode else None
    return _fork_run(server, args, argv, input, stdin, stdout, stderr, timeout, check, env, cwd, decode)


def _fork_run(server, args, argv, input, stdin, stdout, stderr, timeout, check, env, cwd, decode):
    ours: list[int] = []  # descriptors this side closes once the child has its own
    pipes: dict[str, int] = {}

    def child_end(spec, name: str, inherit: int) -> int:
        if spec != subprocess.PIPE:
            return _child_fd(spec, inherit, ours)
        r, w = os.pipe()
        fd, pipes[name] = (r, w) if name == "stdin" else (w, r)
        ours.append(fd)
        return fd

    fds = [child_end(stdin, "stdin", 0), child_end(stdout, "stdout", 1)]
    fds.append(fds[1] if stderr == subprocess.STDOUT else child_end(stderr, "stderr", 2))
    try:
        child = ForkedProcess(args, *_fork(server, argv, fds, env, cwd))
    finally:
        for fd in ours:
            os.close(fd)
    deadline = None if timeout is None else time.monotonic() + timeout
    outputs = {"stdout": bytearray(), "stderr": bytearray()}
    try:
        _communicate(pipes, input or b"", outputs, deadline)
        returncode = child.wait(None if deadline is None else max(deadline - time.monotonic(), 0.001))
    except subprocess.TimeoutExpired:
        os.kill(child.pid, signal.SIGKILL)
        _communicate(pipes, b"", outputs, None)
        child.wait()
        raise subprocess.TimeoutExpired(args, timeout, _output(outputs, "stdout", pipes, decode),
                                        _output(outputs, "stderr", pipes, decode)) from None
    finally:
        child._conn.close()
        for fd in pipes.values():
            try:
                os.close(fd)
            except OSError:
                pass
    out, err = _output(outputs, "stdout", pipes, decode), _output(outputs, "stderr", pipes, decode)
    if check and returncode:
        raise subprocess.CalledProcessError(returncode, args, out, err)
    return subprocess.CompletedProcess(args, returncode, out, err)


def _child_fd(spec, inherit: int, opened: list[int]) -> int:
    """The descriptor a child gets for subprocess's None (this side's own), DEVNULL (opened
    here, appended to `opened` for the caller to close), a descriptor or a file."""
    if spec is None:
        return inherit
    if spec == subprocess.DEVNULL:
        opened.append(os.open(os.devnull, os.O_RDWR))
        return opened[-1]
    return spec if isinstance(spec, int) else spec.fileno()


def _fork(server: _Server, argv: list[str], fds: list[int], env, cwd) -> tuple[int, socket.socket]:
    """Have the server fork a child running argv with these stdin, stdout and stderr; its pid,
    and the connection its return code will come on."""
    request = {"tool": os.path.basename(argv[0]), "argv": argv, "cwd": None if cwd is None else os.fspath(cwd),
               "env": dict(os.environ if env is None else env)}
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    try:
        conn.connect(server.path)
        socket.send_fds(conn, [json.dumps(request).encode()], fds)
        return json.loads(conn.recv(MESSAGE_BYTES))["pid"], conn
    except BaseException:
        conn.close()
        raise


class ForkedProcess:
    """What the tests use of a subprocess.Popen, for a server forked by `popen`."""

    def __init__(self, args, pid: int, conn: socket.socket):
        self.args, self.pid, self._conn = args, pid, conn
        self.returncode: int | None = None

    def _receive(self, timeout: float | None) -> None:
        self._conn.settimeout(timeout)
        try:
            message = self._conn.recv(MESSAGE_BYTES)
        except (BlockingIOError, socket.timeout):
            return
        self.returncode = json.loads(message)["returncode"] if message else -signal.SIGKILL  # (the server died)
        self._conn.close()

    def poll(self) -> int | None:
        if self.returncode is None:
            self._receive(0)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        if self.returncode is None:
            self._receive(timeout)
            if self.returncode is None:
                raise subprocess.TimeoutExpired(self.args, timeout)
        return self.returncode

    def send_signal(self, sig: int) -> None:
        if self.poll() is None:
            os.kill(self.pid, sig)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)


def popen(args, *, stdout=None, stderr=None, env=None, cwd=None):
    """subprocess.Popen(args, stdout=..., stderr=...) for pk's servers (SERVERS), forked from
    the server when `run` would fork a tool; stdin is inherited, stdout and stderr are None,
    DEVNULL, a file, or STDOUT for stderr."""
    argv = [os.fsdecode(a) for a in args]
    server = _server_for(argv, env, servers=True) if cwd is None or os.path.isdir(cwd) else None
    if server is None or subprocess.PIPE in (stdout, stderr):
        return subprocess.Popen(args, stdout=stdout, stderr=stderr, env=env, cwd=cwd)
    opened: list[int] = []
    out = _child_fd(stdout, 1, opened)
    fds = [0, out, out if stderr == subprocess.STDOUT else _child_fd(stderr, 2, opened)]
    try:
        pid, conn = _fork(server, argv, fds, env, cwd)
    finally:
        for fd in opened:
            os.close(fd)
    return ForkedProcess(args, pid, conn)


def _communicate(pipes: dict, data: bytes, outputs: dict, deadline) -> None:
    """Write `data` to the child's stdin pipe (then close it), read its stdout and stderr pipes
    to their end; subprocess.TimeoutExpired at the deadline."""
    readers = {pipes[n]: n for n in ("stdout", "stderr") if n in pipes}
    writer = pipes.pop("stdin", None)
    view = memoryview(data)
    if writer is not None and not view:
        os.close(writer)
        writer = None
    while readers or writer is not None:
        wait = None if deadline is None else deadline - time.monotonic()
        if wait is not None and wait <= 0:
            if writer is not None:
                pipes["stdin"] = writer  # closed by the caller
            raise subprocess.TimeoutExpired([], 0)
        ready_r, ready_w, _ = select.select(list(readers), [] if writer is None else [writer], [], wait)
        for fd in ready_r:
            chunk = os.read(fd, 1 << 16)
            if chunk:
                outputs[readers[fd]] += chunk
            else:
                del readers[fd]
        if writer in ready_w:
            try:
                view = view[os.write(writer, view[:1 << 16]):]
            except BrokenPipeError:
                view = view[:0]  # the child closed its stdin, as subprocess ignores
            if not view:
                os.close(writer)
                writer = None


def _output(outputs: dict, name: str, pipes: dict, decode):
    if name not in pipes:
        return None
    data = bytes(outputs[name])
    if decode is None:
        return data
    return data.decode(*decode).replace("\r\n", "\n").replace("\r", "\n")


if __name__ == "__main__":
    job = serve(sys.argv[1])
    if job is not None:
        run_child(*job)
