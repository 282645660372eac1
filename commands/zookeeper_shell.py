"""ZooKeeper's command-line shell (zkCli) over kazoo, as Kafka 2.8's zookeeper-shell.sh runs it
(ZooKeeperMainWithTlsSupportForKafka on ZooKeeper 3.5's ZooKeeperMain).

The texts are ZooKeeper 3.5's: results on stdout, "Created <path>" and errors on stderr, the
watcher's "WATCHER::" notices, the stat block with Java's Date format, ACLs in jute's CSV form.
A command's status is 0, 1 for a failed one, 127 for an unknown one; the shell exits with the
last command's status.
"""

from __future__ import annotations

import logging
import os
import re
import socket
import sys
import time
import warnings
from dataclasses import dataclass, field
from typing import Callable

from kazoo.client import KazooClient
from kazoo.exceptions import (
    BadVersionError,
    InvalidACLError,
    KazooException,
    NoAuthError,
    NodeExistsError,
    NoNodeError,
    NotEmptyError,
    NoChildrenForEphemeralsError,
)
from kazoo.handlers.threading import KazooTimeoutError
from kazoo.security import ACL, Id

CONNECT_TIMEOUT_S = 5.0
# kazoo logs its connection troubles; the shell reports them in ZooKeeper's words instead.
logging.getLogger("kazoo").addHandler(logging.NullHandler())
logging.getLogger("kazoo").propagate = False
# kazoo warns when the chroot does not exist; ZooKeeper's shell says nothing until a command fails.
warnings.filterwarnings("ignore", message="No chroot path exists")

OK, FAILED, UNKNOWN_COMMAND = 0, 1, 127



# What ZooKeeper 3.5's shell prints for a KeeperException, by kazoo's exception type.
_KEEPER_ERRORS = {
    NoNodeError: "Node does not exist: {path}",
    NodeExistsError: "Node already exists: {path}",
    NotEmptyError: "Node not empty: {path}",
    BadVersionError: "version No is not valid : {path}",
    NoAuthError: "Authentication is not valid : {path}",
    NoChildrenForEphemeralsError: "Ephemerals cannot have children: {path}",
    InvalidACLError: "KeeperErrorCode = InvalidACL for {path}\nAcl is not valid : {path}",
}


def _keeper_error_text(command: str, exc: Exception, path: str) -> str:
    if command == "get" and isinstance(exc, NoNodeError):  # ZooKeeper 3.5's get lets the exception through
        return f"org.apache.zookeeper.KeeperException$NoNodeException: KeeperErrorCode = NoNode for {path}"
    template = _KEEPER_ERRORS.get(type(exc))
    if template is None:
        return f"KeeperErrorCode = {type(exc).__name__.removesuffix('Error')} for {path}"
    return template.format(path=path)

class UsageError(Exception):
    """A command line ZooKeeper's parser refuses: str() is the line it prints."""


@dataclass
class Parsed:
    name: str
    flags: dict[str, str | bool] = field(default_factory=dict)
    args: list[str] = field(default_factory=list)
    acls: list[ACL] | None = None  # create's ACL argument
    notes: list[str] = field(default_factory=list)  # what parsing the ACL skipped, printed when run


@dataclass(frozen=True)
class Spec:
    usage: str  # ZooKeeper's usage line for the command
    flags: dict[str, bool]  # option -> takes a value
    min_args: int  # positional arguments required


# The commands pk's shell has, with ZooKeeper 3.5's usage lines (the order of its help).
SPECS: dict[str, Spec] = {
    "close": Spec("close ", {}, 0),
    "create": Spec("create [-s] [-e] path [data] [acl]", {"s": False, "e": False}, 1),
    "delete": Spec("delete [-v version] path", {"v": True}, 1),
    "deleteall": Spec("deleteall path", {}, 1),
    "get": Spec("get [-s] [-w] path", {"s": False, "w": False}, 1),
    "getAcl": Spec("getAcl [-s] path", {"s": False}, 1),
    "ls": Spec("ls [-s] [-w] [-R] path", {"s": False, "w": False, "R": False}, 1),
    "ls2": Spec("ls2 path [watch]", {}, 1),
    "printwatches": Spec("printwatches on|off", {}, 0),
    "quit": Spec("quit ", {}, 0),
    "rmr": Spec("rmr path", {}, 1),
    "set": Spec("set [-s] [-v version] path data", {"s": False, "v": True}, 2),
    "stat": Spec("stat [-w] path", {"w": False}, 1),
    "sync": Spec("sync path", {}, 1),
}

USAGE_HEAD = "ZooKeeper -server host:port cmd args"


def usage_text() -> str:
    return USAGE_HEAD + "\n" + "".join(f"\t{SPECS[name].usage}\n" for name in sorted(SPECS, key=str.lower))


# ZooKeeper's interactive tokenizer: words, or "..." / '...' taken whole without the quotes.
_TOKEN = re.compile(r"""\s*([^"']\S*|"[^"]*"|'[^']*')\s*""")


def split_line(line: str) -> list[str]:
    words = []
    for match in _TOKEN.finditer(line):
        word = match.group(1)
        if len(word) >= 2 and word[0] == word[-1] and word[0] in "\"'":
            word = word[1:-1]
        words.append(word)
    return words


def parse(words: list[str]) -> Parsed | None:
    """A command line as ZooKeeper's commons-cli parser reads it; None for an unknown command,
    UsageError for one it refuses."""
    if not words or words[0] not in SPECS:
        return None
    spec = SPECS[words[0]]
    parsed = Parsed(words[0])
    rest = words[1:]
    i = 0
    while i < len(rest):
        word = rest[i]
        if word.startswith("-") and len(word) > 1 and not word.lstrip("-").isdigit():
            name = word.lstrip("-")
            if name not in spec.flags:
                raise UsageError(f"org.apache.commons.cli.UnrecognizedOptionException: Unrecognized option: {word}")
            if spec.flags[name]:
                if i + 1 >= len(rest):
                    raise UsageError(f"org.apache.commons.cli.MissingArgumentException: Missing argument for option: {name}")
                parsed.flags[name] = rest[i + 1]
                i += 1
            else:
                parsed.flags[name] = True
        else:
            parsed.args.append(word)
        i += 1
    if len(parsed.args) < spec.min_args:
        raise UsageError(spec.usage)
    if parsed.args and spec.min_args and not parsed.args[0].startswith("/"):
        raise UsageError("Path must start with / character")
    if parsed.name == "create" and len(parsed.args) > 2:
        parsed.acls, notes = parse_acls(parsed.args[2])
        if not parsed.acls:  # refused by the client before anything is sent
            raise UsageError("\n".join(notes + ["KeeperErrorCode = InvalidACL", "Acl is not valid : null"]))
        parsed.notes = notes
    if "v" in parsed.flags and not _is_java_int(str(parsed.flags["v"])):
        # ZooKeeper 3.5 dies with this exception (and its stack trace).
        raise UsageError(f'java.lang.NumberFormatException: For input string: "{parsed.flags["v"]}"')
    return parsed


def _is_java_int(text: str) -> bool:
    try:
        return -2 ** 31 <= int(text) < 2 ** 31
    except ValueError:
        return False


# --------------------------------------------------------------------------- output formats
def _hex(value: int) -> str:
    """Java's Long.toHexString: lower case, two's complement for negatives."""
    return f"0x{value & 0xFFFFFFFFFFFFFFFF:x}"


def _java_date(millis: int) -> str:
    """java.util.Date.toString() in the local time zone: `Thu Nov 26 00:39:49 UTC 2026`."""
    return time.strftime("%a %b %d %H:%M:%S %Z %Y", time.localtime(millis / 1000))


def format_stat(stat) -> str:
    return (f"cZxid = {_hex(stat.czxid)}\nctime = {_java_date(stat.ctime)}\n"
            f"mZxid = {_hex(stat.mzxid)}\nmtime = {_java_date(stat.mtime)}\n"
            f"pZxid = {_hex(stat.pzxid)}\ncversion = {stat.cversion}\n"
            f"dataVersion = {stat.version}\naclVersion = {stat.aversion}\n"
            f"ephemeralOwner = {_hex(stat.ephemeralOwner)}\ndataLength = {stat.dataLength}\n"
            f"numChildren = {stat.numChildren}\n")


_CSV_ESCAPES = {"\0": "%00", "\n": "%0A", "\r": "%0D", ",": "%2C", "}": "%7D", "%": "%25"}


def _csv(text: str) -> str:
    """A string as jute's CSV archive writes it (ACL ids print this way)."""
    return "'" + "".join(_CSV_ESCAPES.get(c, c) for c in text)


# ZooDefs.Perms bits in the order ZooKeeper's CLI prints and reads them.
_PERMS = (("c", 4), ("d", 8), ("r", 1), ("w", 2), ("a", 16))


def format_acl(acl: ACL) -> str:
    perms = "".join(letter for letter, bit in _PERMS if acl.perms & bit)
    return f"{_csv(acl.id.scheme)},{_csv(acl.id.id)}\n: {perms}\n"


def parse_acls(text: str) -> tuple[list[ACL], list[str]]:
    """`scheme:id:perms[,...]` as ZooKeeper's AclParser reads it: the ACLs, and the lines it
    prints about what it skipped (a malformed entry, an unknown permission letter)."""
    acls, notes = [], []
    for entry in text.split(","):
        first, last = entry.find(":"), entry.rfind(":")
        if first == -1 or last == -1 or first == last:
            notes.append(f"{entry} does not have the form scheme:id:perm")
            continue
        perms = 0
        for letter in entry[last + 1:]:
            if letter in dict(_PERMS):
                perms |= dict(_PERMS)[letter]
            else:
                notes.append(f"Unknown perm type: {letter}")
        acls.append(ACL(perms, Id(entry[:first], entry[first + 1:last])))
    return acls, notes


_EVENT_TYPES = {"CREATED": "NodeCreated", "DELETED": "NodeDeleted", "CHANGED": "NodeDataChanged",
                "CHILD": "NodeChildrenChanged"}


def watcher_notice(state: str, kind: str, path: str | None) -> str:
    """ZooKeeperMain's watcher print: `WATCHER::` and the event, each after an empty line."""
    return f"\nWATCHER::\n\nWatchedEvent state:{state} type:{kind} path:{'null' if path is None else path}\n"


# --------------------------------------------------------------------------- the shell
def _any_reachable(server: str) -> bool:
    """Whether some host of a connect string (`h1:p1,h2:p2/chroot`) accepts a TCP connection."""
    for hostport in server.split("/", 1)[0].split(","):
        host, _, port = hostport.strip().rpartition(":")
        try:
            with socket.create_connection((host.strip("[]") or "localhost", int(port or 2181)), timeout=2):
                return True
        except (OSError, ValueError):
            continue
    return False


class Shell:
    """One ZooKeeper session and the commands run in it."""

    def __init__(self, server: str, out=None, err=None):
        self.server = server
        self.out = out or sys.stdout
        self.err = err or sys.stderr
        self.print_watches = True
        self.zk: KazooClient | None = None

    # -- session
    def connect(self) -> bool:
        if not _any_reachable(self.server):
            return False  # fail at once, as ZooKeeper's client does on a refused connection
        self.zk = KazooClient(hosts=self.server, timeout=30.0)
        try:
            self.zk.start(timeout=CONNECT_TIMEOUT_S)
        except KazooTimeoutError:
            self.zk.stop()
            self.zk.close()
            self.zk = None
            return False
        self._notice("SyncConnected", "None", None)
        return True

    def close(self, notify: bool) -> None:
        if self.zk is None:
            return
        self.zk.stop()
        self.zk.close()
        self.zk = None
        if notify:
            self._notice("Closed", "None", None)

    def _notice(self, state: str, kind: str, path: str | None) -> None:
        if self.print_watches:
            self._print(watcher_notice(state, kind, path))

    def _watch(self, event) -> None:
        self._notice("SyncConnected", _EVENT_TYPES.get(event.type, "None"), event.path)

    def _print(self, text: str) -> None:
        try:
            self.out.write(text)
            self.out.flush()
        except BrokenPipeError:
            # The reader went away: go on without output, as the JVM's System.out does.
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, self.out.fileno())
            os.close(devnull)

    def _error(self, text: str) -> None:
        self.err.write(text + "\n")
        self.err.flush()

    # -- commands
    def run(self, parsed: Parsed) -> int:
        """Run one parsed command; its status."""
        handler: Callable[[Parsed], None] = getattr(self, "_cmd_" + parsed.name)
        path = parsed.args[0] if parsed.args else "/"
        try:
            handler(parsed)
        except KazooException as exc:
            self._error(_keeper_error_text(parsed.name, exc, path))
            return FAILED
        return OK

    def _watcher(self, parsed: Parsed):
        return self._watch if parsed.flags.get("w") else None

    def _cmd_ls(self, parsed: Parsed) -> None:
        path = parsed.args[0]
        if parsed.flags.get("R"):
            self._print("".join(line + "\n" for line in self._tree(path)))
            return
        children = sorted(self.zk.get_children(path, watch=self._watcher(parsed)))
        text = "[" + ", ".join(children) + "]"
        if parsed.flags.get("s"):
            # ZooKeeper 3.5 prints the stat straight after the list, with no line break,
            # and an empty line after it.
            self._print(text + format_stat(self.zk.exists(path)) + "\n")
        else:
            self._print(text + "\n")

    def _tree(self, path: str) -> list[str]:
        lines = [path]
        for child in self.zk.get_children(path):  # the server's order, as ZooKeeper's ls -R
            lines += self._tree(path.rstrip("/") + "/" + child)
        return lines

    def _cmd_ls2(self, parsed: Parsed) -> None:
        self._error("'ls2' has been deprecated. Please use 'ls [-s] path' instead.")
        path = parsed.args[0]
        watch = self._watch if len(parsed.args) > 1 else None  # any second word asks for a watch
        children, stat = self.zk.get_children(path, watch=watch, include_data=True)
        self._print("[" + ", ".join(children) + "]\n" + format_stat(stat))  # ls2: the server's order

    def _cmd_get(self, parsed: Parsed) -> None:
        data, stat = self.zk.get(parsed.args[0], watch=self._watcher(parsed))
        text = "null" if data is None else data.decode("utf-8", errors="replace")
        self._print(text + "\n" + (format_stat(stat) if parsed.flags.get("s") else ""))

    def _cmd_stat(self, parsed: Parsed) -> None:
        stat = self.zk.exists(parsed.args[0], watch=self._watcher(parsed))
        if stat is None:
            raise NoNodeError()
        self._print(format_stat(stat))

    def _cmd_create(self, parsed: Parsed) -> None:
        path = parsed.args[0]
        data = parsed.args[1].encode() if len(parsed.args) > 1 else None
        for note in parsed.notes:
            self._error(note)
        created = self.zk.create(path, data, acl=parsed.acls, ephemeral=bool(parsed.flags.get("e")),
                                 sequence=bool(parsed.flags.get("s")))
        self._error(f"Created {created}")

    def _cmd_set(self, parsed: Parsed) -> None:
        version = int(parsed.flags.get("v", -1))
        stat = self.zk.set(parsed.args[0], parsed.args[1].encode(), version=version)
        if parsed.flags.get("s"):
            self._print(format_stat(stat))

    def _cmd_delete(self, parsed: Parsed) -> None:
        self.zk.delete(parsed.args[0], version=int(parsed.flags.get("v", -1)))

    def _cmd_deleteall(self, parsed: Parsed) -> None:
        path = parsed.args[0]
        if self.zk.exists(path) is None:
            raise NoNodeError()
        self.zk.delete(path, recursive=True)

    def _cmd_rmr(self, parsed: Parsed) -> None:
        self._error("The command 'rmr' has been deprecated. Please use 'deleteall' instead.")
        self._cmd_deleteall(parsed)

    def _cmd_getAcl(self, parsed: Parsed) -> None:
        acls, stat = self.zk.get_acls(parsed.args[0])
        self._print("".join(format_acl(acl) for acl in acls) + (format_stat(stat) if parsed.flags.get("s") else ""))

    def _cmd_sync(self, parsed: Parsed) -> None:
        self.zk.sync(parsed.args[0])
        self._print("Sync is OK\n")

    def _cmd_printwatches(self, parsed: Parsed) -> None:
        if not parsed.args:
            self._print(f"printwatches is {'on' if self.print_watches else 'off'}\n")
        else:
            self.print_watches = parsed.args[0] == "on"

    def _cmd_close(self, parsed: Parsed) -> None:
        self.close(notify=True)


# --------------------------------------------------------------------------- one-shot and interactive
def run_once(server: str, words: list[str], out=None, err=None) -> int:
    """`zookeeper-shell host:port cmd args`: connect, run the command, close; its status."""
    shell = Shell(server, out, err)
    shell._print(f"Connecting to {server}\n")
    try:
        parsed = parse(words)
    except UsageError as exc:
        shell._error(str(exc))
        return FAILED
    if parsed is not None and parsed.name == "quit":
        return OK
    if not shell.connect():
        shell._error(f"KeeperErrorCode = ConnectionLoss for {_path_of(words)}")
        return FAILED
    try:
        if parsed is None:
            shell._error(usage_text() + f"Command not found: Command not found {words[0]}")
            return UNKNOWN_COMMAND
        return shell.run(parsed)
    finally:
        shell.close(notify=False)


def _path_of(words: list[str]) -> str:
    return next((w for w in words[1:] if w.startswith("/")), "/")


# Commands that never talk to the server: ZooKeeper's shell runs them before its session is
# even connected (the connection's notice then comes later, or never if printwatches is off).
LOCAL_COMMANDS = {"printwatches", "quit", "close"}


def run_interactive(server: str, lines, terminal: bool = False, out=None, err=None) -> int:
    """The shell reading commands from `lines` (stdin, or prompted lines on a terminal) until
    quit or their end; the last command's status."""
    shell = Shell(server, out, err)
    shell._print(f"Connecting to {server}\nWelcome to ZooKeeper!\n")
    if not terminal:  # as Kafka 2.8's shell, which has no JLine on its classpath
        shell._print("JLine support is disabled\n")
    status = OK
    session = "new"  # then "open", "failed" or "closed"
    try:
        for line in lines:
            line = line.strip()
            if not line:
                continue
            words = split_line(line)
            try:
                parsed = parse(words)
            except UsageError as exc:
                shell._error(str(exc))
                status = FAILED
                continue
            if parsed is None:
                shell._error(usage_text() + f"Command not found: Command not found {words[0]}")
                status = UNKNOWN_COMMAND
                continue
            if parsed.name == "quit":
                shell.close(notify=True)
                return status
            if parsed.name not in LOCAL_COMMANDS and session == "new":
                session = "open" if shell.connect() else "failed"
            if parsed.name == "close":
                session = "closed"
                status = shell.run(parsed)
            elif parsed.name in LOCAL_COMMANDS:
                status = shell.run(parsed)
            elif session == "closed":
                shell._print("Not connected\n")
                status = OK
            elif session == "failed":
                shell._error(f"KeeperErrorCode = ConnectionLoss for {_path_of(words)}")
                status = FAILED
            else:
                status = shell.run(parsed)
        return status
    finally:
        shell.close(notify=False)
