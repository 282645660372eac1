"""pk-streams-application-reset against Kafka 4.4's kafka-streams-application-reset on the
shared Kafka 4.4 broker: the same steps for two application ids of the same length (Kafka's
tool as "ot-srk", pk as "ot-srp") on the same input and intermediate topics, compared line by
line with the application id normalised, then the offsets each left committed; usage errors
by Kafka's first stderr line."""

from __future__ import annotations

import re

from conftest import Runner
from kafka_oracle import wait_for_leaders

IN, MID = "ot-sr-in", "ot-sr-mid"
INFERRED = re.compile(r"(Deleting inferred internal topics )\[(.*)\]")


def same_app(out: str) -> str:
    """pk's output with its application id as Kafka's; the inferred internal topics sorted, as
    both tools list them in the hash order of their names, which differ by the application id."""
    out = out.replace("ot-srp", "ot-srk")
    return INFERRED.sub(lambda m: m.group(1) + "[" + ", ".join(sorted(m.group(2).split(", "))) + "]", out)


def test_reset_steps_match_kafka(kafka, kafka_tools, tmp_path):
    b = kafka.bootstrap
    pk = Runner(str(tmp_path / "pk-data"))
    topics = {IN: 3, MID: 2, "ot-srk-store-changelog": 1, "ot-srp-store-changelog": 1,
              "ot-srk-x-repartition": 1, "ot-srp-x-repartition": 1}
    for topic, n in topics.items():
        # --if-not-exists: test_usage_errors_match_kafka may have made IN first (on the same broker)
        r = kafka_tools("kafka-topics", "--bootstrap-server", b, "--create", "--if-not-exists", "--topic", topic,
                        "--partitions", str(n))
        assert r.returncode == 0, r.err
    wait_for_leaders(b, topics)
    for topic in (IN, MID):
        r = kafka_tools("kafka-console-producer", "--bootstrap-server", b, "--topic", topic, "--property",
                        "parse.key=true", input="".join(f"k{i}\tv{i}\n" for i in range(12)))
        assert r.returncode == 0, r.err
    (tmp_path / "plan.csv").write_text(f"{IN},0,1\n{IN},1,100\n{IN},2,-5")
    steps = [
        ["--input-topics", f"{IN},nosuch", "--shift-by", "-2", "--dry-run"],
        ["--input-topics", IN, "--to-offset", "3"],
        ["--input-topics", IN, "--shift-by", "2"],
        ["--input-topics", IN, "--shift-by", "-10", "--dry-run"],
        ["--input-topics", IN, "--to-datetime", "2020-01-01T00:00:00.000"],
        ["--input-topics", IN, "--by-duration", "PT1H"],
        ["--input-topics", IN, "--from-file", str(tmp_path / "plan.csv")],
        ["--input-topics", IN, "--to-latest", "--intermediate-topics", f"{MID},zz", "--dry-run"],
        ["--input-topics", IN, "--to-earliest", "--internal-topics", "{app}-x-repartition"],
        ["--intermediate-topics", MID],
        ["--internal-topics", IN],
        ["--input-topics", IN, "--to-datetime", "2020-01-01"],
        ["--input-topics", IN, "--by-duration", "1H"],
    ]
    for step in steps:
        k = kafka_tools("kafka-streams-application-reset", "--bootstrap-server", b, "--application-id", "ot-srk",
                        *[a.replace("{app}", "ot-srk") for a in step])
        p = pk("pk-streams-application-reset", "--bootstrap-server", b, "--application-id", "ot-srp",
               *[a.replace("{app}", "ot-srp") for a in step])
        assert (p.returncode, same_app(p.out)) == (k.returncode, same_app(k.out)), step
        assert p.err.replace("ot-srp", "ot-srk") == ("" if not k.err else k.err_first + "\n"), step
    k = kafka_tools("kafka-consumer-groups", "--bootstrap-server", b, "--describe", "--offsets", "--group", "ot-srk")
    p = kafka_tools("kafka-consumer-groups", "--bootstrap-server", b, "--describe", "--offsets", "--group", "ot-srp")

    def offsets(out: str) -> list[tuple[str, ...]]:
        return sorted(tuple(line.split()[1:4]) for line in out.splitlines()[1:] if line.strip())

    assert offsets(p.out) == offsets(k.out) and offsets(k.out)


def test_usage_errors_match_kafka(kafka, kafka_tools, tmp_path):
    b = kafka.bootstrap
    pk = Runner(str(tmp_path / "pk-data"))
    # The offset parse errors come after the input topic is found: the test makes it itself (it
    # may run before, or on another worker than, test_reset_steps_match_kafka).
    r = kafka_tools("kafka-topics", "--bootstrap-server", b, "--create", "--if-not-exists", "--topic", IN,
                    "--partitions", "3")
    assert r.returncode == 0, r.err
    wait_for_leaders(b, {IN: 3})
    cases = [
        [],
        ["--bootstrap-server", b],
        ["--application-id", "a", "--to-latest", "--to-offset", "2"],
        ["--application-id", "a", "--shift-by", "1", "--to-earliest"],
        ["--application-id", "a", "--from-file", "f", "--by-duration", "PT1S"],
        ["--application-id", "a", "--bootstrap-server", b, "--input-topics", IN, "--to-offset", "x"],
        ["--application-id", "a", "--bootstrap-server", b, "--input-topics", IN, "--shift-by", "1.5"],
        ["--application-id", "a", "--bogus"],
        ["--application-id", "a", "--bootstrap-server", b, "--command-config", str(tmp_path / "missing")],
    ]
    for args in cases:
        k = kafka_tools("kafka-streams-application-reset", *args)
        p = pk("pk-streams-application-reset", *args)
        assert (p.returncode, p.out, p.err.split("\n")[0]) == (k.returncode, k.out, k.err_first), args
        if args:  # with no arguments at all both print their usage after the line
            assert p.err.count("\n") == 1, args


def test_force_matches_kafka(kafka, kafka_tools, tmp_path):
    """--force with a stopped member in each tool's group (a pk-verifiable-consumer frozen with
    SIGSTOP after joining, its session long): both tools remove it, reset, and print the same;
    without --force both refuse alike (but for the member ids)."""
    from test_streams_resetter import stopped_member

    b = kafka.bootstrap
    pk = Runner(str(tmp_path / "pk-data"))
    topic = "ot-srf-in"
    r = kafka_tools("kafka-topics", "--bootstrap-server", b, "--create", "--topic", topic, "--partitions", "2")
    assert r.returncode == 0, r.err
    wait_for_leaders(b, {topic: 2})
    members = [stopped_member(b, group, topic) for group in ("ot-srk", "ot-srp")]
    try:
        step = ["--input-topics", topic, "--to-earliest"]
        k = kafka_tools("kafka-streams-application-reset", "--bootstrap-server", b, "--application-id", "ot-srk", *step)
        p = pk("pk-streams-application-reset", "--bootstrap-server", b, "--application-id", "ot-srp", *step)
        assert (p.returncode, p.out) == (k.returncode, k.out) == (1, "")

        def refusal(line: str) -> str:
            """Without the member id; the partitions sorted (Kafka's come in a per-JVM order)."""
            line = re.sub(r"\(memberId=[^,]*,", "(memberId=,", line)
            return re.sub(r"topicPartitions=([^)]*)", lambda m: ",".join(sorted(m.group(1).split(","))), line)

        assert refusal(p.err.split("\n")[0].replace("ot-srp", "ot-srk")) == refusal(k.err_first)
        k = kafka_tools("kafka-streams-application-reset", "--bootstrap-server", b, "--application-id", "ot-srk",
                        *step, "--force")
        p = pk("pk-streams-application-reset", "--bootstrap-server", b, "--application-id", "ot-srp", *step, "--force")
        assert (p.returncode, same_app(p.out), p.err) == (k.returncode, same_app(k.out), k.err)
        assert (k.returncode, k.err) == (0, "")
        assert k.out.startswith("Force deleting all active members in the group: ot-srk\n")
        for group in ("ot-srk", "ot-srp"):
            d = kafka_tools("kafka-consumer-groups", "--bootstrap-server", b, "--describe", "--members", "--group",
                            group)
            assert f"Consumer group '{group}' has no active members." in d.out + d.err, group
    finally:
        for m in members:
            m.kill()
            m.wait(timeout=30)
