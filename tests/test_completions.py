"""The checked-in completion scripts match the tools' Click definitions, and complete live names."""

from __future__ import annotations

import filecmp
import os
import subprocess
import sys

from conftest import tool_path

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_checked_in_completions_are_fresh(tmp_path):
    subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "gen_completions.py"), str(tmp_path)], check=True)
    fresh = sorted(os.path.relpath(os.path.join(d, f), tmp_path) for d, _, fs in os.walk(tmp_path) for f in fs)
    assert fresh, "the generator wrote nothing"
    for rel in fresh:
        checked_in = os.path.join(ROOT, "completions", rel)
        assert os.path.exists(checked_in), f"{rel} is missing: run scripts/gen_completions.py"
        assert filecmp.cmp(checked_in, tmp_path / rel, shallow=False), f"{rel} is stale: run scripts/gen_completions.py"


def test_topic_and_group_names_complete(pk, data_dir):
    pk("pk-topics", "--create", "--topic", "orders")
    pk("pk-topics", "--create", "--topic", "other")
    env = {**pk.env, "COMP_WORDS": "pk-topics --describe --topic or", "COMP_CWORD": "3",
           "_PK_TOPICS_COMPLETE": "bash_complete"}
    out = subprocess.run([tool_path("pk-topics")], env=env, capture_output=True, text=True).stdout
    assert out.split() == ["plain,orders"]


def _complete(tool: str, line: str, env: dict) -> list[str]:
    words = line.split(" ")
    var = "_" + tool.replace("-", "_").upper() + "_COMPLETE"
    env = {**env, "COMP_WORDS": line, "COMP_CWORD": str(len(words) - 1), var: "bash_complete"}
    out = subprocess.run([tool_path(tool)], env=env, capture_output=True, text=True, timeout=60).stdout
    return [item.split(",", 1)[1] for item in out.split()]


def test_run_class_completes_classes_then_the_tools_options(pk, data_dir):
    pk("pk-topics", "--create", "--topic", "orders")
    assert _complete("pk-run-class", "pk-run-class org.apache.kafka.tools.Gro", pk.env) == [
        "org.apache.kafka.tools.GroupsCommand"]
    # after a class name: the options (and live names) of the pk tool that class runs
    assert _complete("pk-run-class", "pk-run-class org.apache.kafka.tools.GroupsCommand --gr", pk.env) == [
        "--group-type"]
    assert _complete("pk-run-class", "pk-run-class -name x org.apache.kafka.tools.TopicCommand --describe --topic or",
                     pk.env) == ["orders"]
    assert _complete("pk-run-class", "pk-run-class kafka.tools.StorageTool feature-dependencies --f", pk.env) == [
        "--feature"]
    assert _complete("pk-run-class", "pk-run-class no.such.Class --", pk.env) == []
    # the argparse4j-style tools complete their options themselves too
    assert _complete("pk-storage", "pk-storage format --c", pk.env) == ["--config", "--cluster-id"]
