"""pk-storage against Kafka 4.4's kafka-storage (one shared JVM, kafka_tools): the same
commands on the same kind of config, each tool on directories of its own. Compared: exit
status, stdout and stderr (Kafka's usage errors: the last line, as pk prints only that), with
the directory paths, meta.properties' directory.id and date, and random ids blanked. The
meta.properties files must match line by line. Kafka also writes a metadata log
(__cluster_metadata-0), which pk does not keep (README)."""

from __future__ import annotations

import os
import re

from test_oracle_console import run_pk

CLUSTER_ID = "MkU3OEVBNTcwNTJENDM2Qk"


def _config(root: str, name: str, extra: dict) -> str:
    props = {"process.roles": "broker,controller", "node.id": "0", "controller.quorum.voters": "0@127.0.0.1:9093",
             "listeners": "PLAINTEXT://127.0.0.1:9092,CONTROLLER://127.0.0.1:9093",
             "controller.listener.names": "CONTROLLER", "log.dirs": os.path.join(root, name), **extra}
    props = {k: v for k, v in props.items() if v is not None}
    path = os.path.join(root, name + ".properties")
    with open(path, "w") as f:
        f.writelines(f"{k}={v}\n" for k, v in props.items())
    return path


def _norm(text: str, root: str) -> str:
    text = text.replace(root, "<root>")
    text = re.sub(r"directory\.id=[\w-]{22}", "directory.id=<id>", text)
    text = re.sub(r"^[\w-]{22}$", "<uuid>", text, flags=re.M)
    # Kafka formats several empty directories in the order of a hash set of their paths, which
    # changes with the temporary root from run to run: the "Formatting" lines are compared sorted
    lines = text.split("\n")
    formatting = [i for i, line in enumerate(lines) if line.startswith("Formatting ")]
    for i, line in zip(formatting, sorted(lines[i] for i in formatting)):
        lines[i] = line
    return "\n".join(lines)


def _key(rc: int, out: str, err: str, root: str) -> tuple:
    """stderr: the error line (the last, after Kafka's usage lines; the first, before a Java
    stack trace)."""
    lines = _norm(err, root).strip("\n").split("\n")
    err = (lines[-1] if lines[0].startswith("usage:") else lines[0]) if err else ""
    # the credentials' random salts (and so their keys)
    out = re.sub(r"salt=\[[-\d, ]*\], storedKey=\[[-\d, ]*\], serverKey=\[[-\d, ]*\]", "salt=<s>", out)
    return rc, _norm(out, root), err


def _meta(directory: str) -> list[str]:
    with open(os.path.join(directory, "meta.properties")) as f:
        lines = f.read().splitlines()
    return [re.sub(r"directory\.id=[\w-]{22}", "directory.id=<id>", line) for line in lines[2:]]  # after the date


def test_storage_against_kafka(kafka_tools, tmp_path):
    # (name, args with {c} for the config path, config overrides)
    scenarios = [
        ("random-uuid", ["random-uuid"], {}),
        ("info-missing", ["info", "-c", "{c}"], {}),
        ("format", ["format", "-t", CLUSTER_ID, "-c", "{c}"], {}),
        ("format-scram", ["format", "-t", CLUSTER_ID, "-c", "{c}", "--add-scram",
                          "SCRAM-SHA-512=[name=alice,password=alice-secret]", "-S",
                          "SCRAM-SHA-256=[name=bob,password=b,iterations=8192]"], {}),
        ("format-two-dirs", ["format", "-t", CLUSTER_ID, "-c", "{c}"], {"log.dirs": "{root}/two-a,{root}/two-b"}),
        ("format-standalone", ["format", "-t", CLUSTER_ID, "-c", "{c}", "--standalone"],
         {"controller.quorum.voters": None, "controller.quorum.bootstrap.servers": "127.0.0.1:9093"}),
        ("format-node-5", ["format", "-t", CLUSTER_ID, "-c", "{c}"], {"node.id": "5",
                                                                     "controller.quorum.voters": "5@127.0.0.1:9093"}),
        ("standalone-with-voters", ["format", "-t", CLUSTER_ID, "-c", "{c}", "--standalone"], {}),
        ("scram-no-equals", ["format", "-t", CLUSTER_ID, "-c", "{c}", "--add-scram", "bogus"], {}),
        ("scram-mechanism", ["format", "-t", CLUSTER_ID, "-c", "{c}", "--add-scram", "SCRAM-SHA-1=[name=a,password=b]"],
         {}),
        ("scram-no-name", ["format", "-t", CLUSTER_ID, "-c", "{c}", "--add-scram", "SCRAM-SHA-256=[password=b]"], {}),
        ("scram-no-password", ["format", "-t", CLUSTER_ID, "-c", "{c}", "--add-scram", "SCRAM-SHA-256=[name=a]"], {}),
        ("scram-iterations", ["format", "-t", CLUSTER_ID, "-c", "{c}", "--add-scram",
                              "SCRAM-SHA-256=[name=a,password=b,iterations=10]"], {}),
        ("config-missing", ["format", "-t", CLUSTER_ID, "-c", "{root}/nope.properties"], {}),
        ("no-command", [], {}),
        ("format-no-id", ["format", "-c", "{c}"], {}),
        ("format-no-config", ["format", "-t", CLUSTER_ID], {}),
        ("info-no-config", ["info"], {}),
        ("format-unknown-option", ["format", "-t", CLUSTER_ID, "-c", "{c}", "--bogus"], {}),
        ("uuid-extra", ["random-uuid", "x"], {}),
        ("mapping", ["version-mapping"], {}),
        ("mapping-release", ["version-mapping", "-r", "3.9-IV0"], {}),
        ("mapping-short-release", ["version-m", "--release-version=4.0"], {}),
        ("mapping-unknown", ["version-mapping", "--release-version", "9.9"], {}),
        ("mapping-no-value", ["version-mapping", "--release-version"], {}),
        ("mapping-extra", ["version-mapping", "extra"], {}),
        ("deps", ["feature-dependencies", "--feature", "eligible.leader.replicas.version=1", "-f",
                  " group.version = 1 ", "-f", "metadata.version=21"], {}),
        ("deps-then-unknown", ["feature-dependencies", "-f", "group.version=1", "-f", "foo=1"], {}),
        ("deps-none", ["feature-dependencies"], {}),
        ("deps-no-equals", ["feature-dependencies", "-f", "x"], {}),
        ("deps-bad-level", ["feature-dependencies", "-f", "a=1=2"], {}),
        ("deps-big-level", ["feature-dependencies", "-f", "group.version=70000"], {}),
        ("deps-level", ["feature-dependencies", "-f", "group.version=9"], {}),
        ("deps-metadata", ["feature-dependencies", "-f", "metadata.version=3"], {}),
    ]
    # Then, on the directories formatted above: again, again ignoring them, and info.
    again = [
        ("format-again", ["format", "-t", CLUSTER_ID, "-c", "{c}"], "format"),
        ("format-ignore", ["format", "-t", CLUSTER_ID, "-c", "{c}", "--ignore-formatted"], "format"),
        ("info", ["info", "-c", "{c}"], "format"),
        ("info-two-dirs", ["info", "-c", "{c}"], "format-two-dirs"),
    ]
    problems = []
    roots = {tool: str(tmp_path / tool) for tool in ("kafka", "pk")}
    configs: dict = {tool: {} for tool in roots}
    results: dict = {}
    for tool, root in roots.items():
        os.makedirs(root)
        for name, args, extra in scenarios:
            extra = {k: v.replace("{root}", root) if v else v for k, v in extra.items()}
            configs[tool][name] = _config(root, name, extra)
    for name, args, _ in scenarios + [(n, a, None) for n, a, _ in again]:
        for tool, root in roots.items():
            source = next((s for n, _, s in again if n == name), name)
            cfg = configs[tool][source]
            argv = [a.replace("{c}", cfg).replace("{root}", root) for a in args]
            if tool == "kafka":
                r = kafka_tools("kafka-storage", *argv)
                results[tool, name] = _key(r.returncode, r.out, r.err, root)
            else:
                r = run_pk("pk-storage", argv)
                results[tool, name] = _key(r.rc, r.out, r.err, root)
        if results["kafka", name] != results["pk", name]:
            problems.append(f"{name}: kafka {results['kafka', name]!r}\n   pk    {results['pk', name]!r}")
    for name in ("format", "format-scram", "format-node-5", "format-standalone"):
        kafka_meta, pk_meta = (_meta(os.path.join(roots[t], name)) for t in roots)
        if kafka_meta != pk_meta:
            problems.append(f"{name} meta.properties: kafka {kafka_meta} pk {pk_meta}")
    assert not problems, "\n".join(problems)
    # Kafka wraps its line (with argparse4j's doubled spaces); pk prints it as one line
    r = kafka_tools("kafka-storage", "bogus")
    assert r.returncode == 1 and " ".join(r.err.split()).endswith(
        "kafka-storage: error: invalid choice: 'bogus' (choose from 'info', 'format', 'version-mapping', "
        "'feature-dependencies', 'random-uuid')")
    assert run_pk("pk-storage", ["bogus"]).key(True) == (
        1, "", "kafka-storage: error: invalid choice: 'bogus' (choose from 'info', 'format', 'version-mapping', "
               "'feature-dependencies', 'random-uuid')\n")
    assert results["pk", "format"][1].endswith("Formatting metadata directory <root>/format with metadata.version "
                                               "4.4-IV2.\n")
