"""pk-zookeeper-shell against Kafka 2.8.2's own zookeeper-shell.sh (ZooKeeperMainWithTlsSupportForKafka
on ZooKeeper 3.5.9's shell), on the same ZooKeeper (the session's `zookeeper` fixture).

Each tool runs the same commands in a subtree of its own (/ozk-k-<run> for Kafka's, /ozk-p-<run>
for pk's); stdout, stderr and the exit status of every command must be the same once the base
path and what differs between two znodes' lives (zxids, times) are normalised. Kafka's shell
runs in the session's shared Kafka 2.8 tool JVM, one command line a call, as the script runs it
(`-server host:port cmd args`), and the interactive form with the commands on stdin.

The differences that stay are pk's rules or its choices (README, "Per tool"): ZooKeeper's usage
text lists only the commands (and create's flags) pk has: compared as the lines pk prints.
"""

from __future__ import annotations

import re
import subprocess
import uuid

from conftest import tool_path

SHELL_CLASS = "org.apache.zookeeper.ZooKeeperMainWithTlsSupportForKafka"

# One-shot commands, in order; {B} is the tool's own base znode.
COMMANDS = [
    ["create", "{B}", "top"],
    ["create", "{B}/a", "hello"],
    ["create", "{B}/empty"],
    ["create", "-s", "{B}/seq-", "x"],
    ["create", "{B}/acl", "d", "world:anyone:rw"],
    ["create", "{B}/a"],
    ["create", "{B}/x/y"],
    ["set", "{B}/a", "changed"],
    ["set", "-s", "{B}/a", "again"],
    ["set", "{B}/nope", "v"],
    ["delete", "{B}"],
    ["delete", "-v", "5", "{B}/a"],
    ["get", "{B}/a"],
    ["get", "-s", "{B}/a"],
    ["get", "{B}/empty"],
    ["get", "{B}/nope"],
    ["ls", "{B}"],
    ["ls", "-s", "{B}"],
    ["ls", "-w", "{B}"],
    ["ls2", "{B}"],
    ["stat", "{B}/a"],
    ["stat", "{B}/nope"],
    ["getAcl", "{B}/acl"],
    ["getAcl", "-s", "{B}/a"],
    ["getAcl", "{B}/nope"],
    ["sync", "{B}"],
    ["ls"],
    ["get"],
    ["set", "{B}/a"],
    ["ls", "-x", "/"],
    ["ls", "nope"],
    ["rmr", "{B}/nope"],
    ["deleteall", "{B}/nope"],
    ["create", "{B}/ro", "x", "world:anyone:r"],
    ["set", "{B}/ro", "y"],
    ["create", "{B}/ro/c"],
    ["getAcl", "{B}/ro"],
    ["delete", "{B}/ro"],
    ["create", "{B}/bad", "x", "bogus:x:r"],
    ["create", "{B}/zz", "x", "world:anyone:zz,digest:u:h=:cdrwa"],
    ["getAcl", "{B}/zz"],
    ["delete", "{B}/zz"],
    ["create", "{B}/nc", "x", "nocolon"],
    ["delete", "{B}/empty"],
    ["deleteall", "{B}/acl"],
    ["ls", "{B}"],
]

# The same shell reading its commands from stdin.
SESSION = """\
ls {B}
get {B}/a

create {B}/s "two words"
get '{B}/s'
ls nope
get {B}/nope
ls -x {B}
printwatches off
ls {B}
printwatches on
quit
ls {B}
"""


# A session-state notice (connected, closed) comes from ZooKeeper's event thread whenever the
# event arrives: before, between or after the commands' output, or not at all when the
# shell exits first. Where it falls is timing, in Kafka's shell as in pk's, so it is dropped.
# The notice is two println calls ("\nWATCHER::", then "\nWatchedEvent ..."), and the main
# thread's output can fall between them (seen in CI: a `set -s` stat line between the two), so
# each half is dropped on its own.
_STATE_NOTICE = re.compile(r"\n?WATCHER::\n|\n?WatchedEvent state:\w+ type:None path:null\n")


def _normalise(text: str, base: str) -> str:
    text = _STATE_NOTICE.sub("", text.replace(base, "{B}"))
    text = re.sub(r"(cZxid|mZxid|pZxid) = 0x[0-9a-f]+$", r"\1 = 0x?", text, flags=re.M)
    dates = re.findall(r"^(?:ctime|mtime) = (.*)$", text, flags=re.M)
    for date in dates:  # java.util.Date.toString()
        assert re.fullmatch(r"[A-Z][a-z]{2} [A-Z][a-z]{2} \d\d \d\d:\d\d:\d\d \S+ \d{4}", date), date
    return re.sub(r"^(ctime|mtime) = .*$", r"\1 = ?", text, flags=re.M)


def _pk(zookeeper: str, *args: str, input: str | None = None):
    r = subprocess.run([tool_path("pk-zookeeper-shell"), zookeeper, *args], input=input, capture_output=True,
                       text=True, timeout=60)
    return r.returncode, r.stdout, r.stderr


def _kafka(kafka28_tools, zookeeper: str, *args: str, input: str = ""):
    r = kafka28_tools.run_class(SHELL_CLASS, "-server", zookeeper, *args, input=input, timeout=60)
    return r.returncode, r.out, r.err


def test_one_shot_commands_match_kafka(zookeeper, kafka28_tools):
    run = uuid.uuid4().hex[:8]
    bases = {"kafka": f"/ozk-k-{run}", "pk": f"/ozk-p-{run}"}
    for command in COMMANDS:
        answers = {}
        for who, base in bases.items():
            args = [a.replace("{B}", base) for a in command]
            code, out, err = _pk(zookeeper, *args) if who == "pk" else _kafka(kafka28_tools, zookeeper, *args)
            answers[who] = (code, _normalise(out, base), _normalise(err, base))
        assert answers["pk"] == answers["kafka"], command

    # ls -R walks the tree in the server's order of children (ls sorts them, ls2 does not).
    trees = {}
    for who, base in bases.items():
        code, out, err = _pk(zookeeper, "ls", "-R", base) if who == "pk" else _kafka(kafka28_tools, zookeeper, "ls", "-R", base)
        trees[who] = (code, _normalise(out, base), err)
    assert trees["pk"] == trees["kafka"]


def test_unknown_command_matches_kafka(zookeeper, kafka28_tools):
    """Status 127, the usage on stderr: every line of pk's is in Kafka's (pk lists only the
    commands it has) and the last line is the same."""
    kafka = _kafka(kafka28_tools, zookeeper, "bogus")
    pk = _pk(zookeeper, "bogus")
    drop = _STATE_NOTICE.sub
    assert (pk[0], drop("", pk[1])) == (kafka[0], drop("", kafka[1])) == (127, drop("", kafka[1]))
    kafka_lines, pk_lines = kafka[2].splitlines(), pk[2].splitlines()
    assert pk_lines[-1] == kafka_lines[-1] == "Command not found: Command not found bogus"
    # pk's create has no container (-c) or TTL (-t) nodes: kazoo cannot create them.
    assert "\tcreate [-s] [-e] [-c] [-t ttl] path [data] [acl]" in kafka_lines
    pk_usage = {line.replace("[-e] path", "[-e] [-c] [-t ttl] path") for line in pk_lines[1:-1]}
    assert pk_usage <= set(kafka_lines[1:-1])
    assert len(pk_lines) > 10


def test_interactive_session_matches_kafka(zookeeper, kafka28_tools):
    run = uuid.uuid4().hex[:8]
    answers = {}
    for who, base in {"kafka": f"/ozi-k-{run}", "pk": f"/ozi-p-{run}"}.items():
        assert _pk(zookeeper, "create", base, "top")[0] == 0
        assert _pk(zookeeper, "create", f"{base}/a", "hello")[0] == 0
        session = SESSION.replace("{B}", base)
        code, out, err = _pk(zookeeper, input=session) if who == "pk" else _kafka(kafka28_tools, zookeeper, input=session)
        answers[who] = (code, _normalise(out, base), _normalise(err, base))
    assert answers["pk"] == answers["kafka"]
    # The end of stdin without quit: the last command's status.
    for session, code in (("ls /\nget /ozi-nope\n", 1), ("get /ozi-nope\nls /\n", 0)):
        assert _pk(zookeeper, input=session)[0] == _kafka(kafka28_tools, zookeeper, input=session)[0] == code
