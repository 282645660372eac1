"""pk-metadata-quorum against a pk-server-start (which keeps no Raft quorum and does not offer
DescribeQuorum, AddRaftVoter or RemoveRaftVoter: every request fails as Kafka's tool fails it
there), its checks before any request, add-controller's reading of a controller configuration
formatted by pk-storage, and the tables of a multi-voter quorum."""

from __future__ import annotations

import subprocess
import time
import uuid

import pytest

from conftest import BrokerProcess, tool_path

UNSUPPORTED = "org.apache.kafka.common.errors.UnsupportedVersionException: The node does not support {}\n"


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    b = BrokerProcess(str(tmp_path_factory.mktemp("quorum") / "data")).start()
    yield b
    b.stop()


def _pk(*args):
    proc = subprocess.run([tool_path("pk-metadata-quorum"), *args], capture_output=True, timeout=60)
    return proc.returncode, proc.stdout.decode(), proc.stderr.decode()


def test_requests_pk_server_does_not_offer(broker, tmp_path):
    b = broker.bootstrap
    for args in (["describe", "--status"], ["describe", "--replication"], ["describe", "--replication",
                                                                           "--human-readable"]):
        assert _pk("--bootstrap-server", b, *args) == (1, "", UNSUPPORTED.format("DESCRIBE_QUORUM"))
    assert _pk("--bootstrap-server", b, "remove-controller", "-i", "1", "-d", "AAAAAAAAAAAAAAAAAAAAAQ") == (
        1, "", UNSUPPORTED.format("REMOVE_RAFT_VOTER"))
    assert _pk("--bootstrap-server", b, "remove-controller", "-i", "1", "-d", "AAAAAAAAAAAAAAAAAAAAAQ",
               "--unregister") == (
        1, "", "Failed to remove KRaft voter 1: The node does not support REMOVE_RAFT_VOTER. To unregister the "
               "controller from the cluster, run `kafka-cluster.sh unregister-controller --id 1`.\n")
    mismatch = ("org.apache.kafka.common.errors.MismatchedEndpointTypeException: The request was sent to an "
                "endpoint of type BROKER, but we wanted an endpoint of type CONTROLLER\n")
    assert _pk("--bootstrap-controller", b, "describe", "--status") == (1, "", mismatch)
    config = _controller_config(tmp_path)
    assert _pk("--bootstrap-server", b, "--command-config", config, "add-controller") == (
        1, "", UNSUPPORTED.format("ADD_RAFT_VOTER"))


def _controller_config(tmp_path) -> str:
    config = tmp_path / "controller.properties"
    config.write_text(f"node.id=3\nprocess.roles=controller\nlog.dirs={tmp_path / 'meta'},{tmp_path / 'other'}\n"
                      "controller.listener.names=CONTROLLER,C2\nlisteners=CONTROLLER://:9093,C2://h:1\n"
                      "advertised.listeners=CONTROLLER://[::1]:9094\n")
    proc = subprocess.run([tool_path("pk-storage"), "format", "-t", "MkU3OEVBNTcwNTJENDM2Qk", "-c", str(config),
                           "--standalone"], capture_output=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return str(config)


def test_add_controller_dry_run_reads_the_formatted_directory(tmp_path):
    config = _controller_config(tmp_path)
    meta = (tmp_path / "meta" / "meta.properties").read_text()
    directory = next(line.split("=", 1)[1] for line in meta.splitlines() if line.startswith("directory.id="))
    assert _pk("--bootstrap-server", "127.0.0.1:1", "--command-config", config, "add-controller", "--dry-run") == (
        0, f"DRY RUN of adding controller 3 with directory id {directory} and endpoints: CONTROLLER://[::1]:9094, "
           "C2://h:1\n", "")


@pytest.mark.parametrize("config, line", [
    ("process.roles=controller\n", "node.id not found in configuration file. Is this a valid controller "
                                   "configuration file?"),
    ("node.id=-2\nprocess.roles=controller\n", "node.id was negative in configuration file. Is this a valid "
                                               "controller configuration file?"),
    ("node.id=2\nprocess.roles=broker\n", "process.roles did not contain 'controller' in configuration file. Is "
                                          "this a valid controller configuration file?"),
    ("node.id=2\nprocess.roles=controller\n", "Neither metadata.log.dir nor log.dirs were found. Is this a valid "
                                              "controller configuration file?"),
    ("node.id=2\nprocess.roles=controller\nmetadata.log.dir=/nonexistent/x\n",
     "Unable to read meta.properties from /nonexistent/x"),
])
def test_add_controller_refusals(tmp_path, config, line):
    path = tmp_path / "c.properties"
    path.write_text(config)
    assert _pk("--bootstrap-server", "127.0.0.1:1", "--command-config", str(path), "add-controller",
               "--dry-run") == (1, "", line + "\n")


@pytest.mark.parametrize("args, line", [
    ([], "kafka-metadata-quorum: error: too few arguments"),
    (["describe", "--status"], "kafka-metadata-quorum: error: one of the arguments --bootstrap-server "
                               "--bootstrap-controller is required"),
    (["--bootstrap-server", "h:1", "--bootstrap-controller", "h:1", "describe"],
     "kafka-metadata-quorum: error: argument --bootstrap-controller: not allowed with argument --bootstrap-server"),
    (["--bootstrap-server", "h:1", "list"], "kafka-metadata-quorum: error: invalid choice: 'list' (choose from "
                                            "'describe', 'add-controller', 'remove-controller')"),
    (["--bootstrap-server", "h:1", "describe"], "One of --status or --replication must be specified with describe "
                                                "sub-command"),
    (["--bootstrap-server", "h:1", "describe", "--status", "--replication"],
     "Only one of --status or --replication should be specified with describe sub-command"),
    (["--bootstrap-server", "h:1", "describe", "--status", "--human-readable"],
     "The option --human-readable is only supported along with --replication"),
    (["--bootstrap-server", "h:1", "add-controller"],
     "You must supply the configuration file of the controller you are adding when using add-controller."),
    (["--bootstrap-server", "h:1", "--command-config", "/nonexistent.properties", "describe", "--status"],
     "Properties file /nonexistent.properties does not exist."),
    (["--bootstrap-server", "h:1", "remove-controller", "-i", "1"],
     "kafka-metadata-quorum: error: argument --controller-directory-id/-d is required"),
    (["--bootstrap-server", "h:1", "remove-controller", "-i", "x", "-d", "y"],
     "kafka-metadata-quorum: error: argument --controller-id/-i: could not convert 'x' to Integer (For input "
     "string: \"x\")"),
    (["--bootstrap-server", "h:1", "remove-controller", "-i", "-1", "-d", "y"], "Invalid negative --controller-id: -1"),
    (["--bootstrap-server", "h:1", "remove-controller", "-i", "1", "-d", "y"],
     "Failed to parse --controller-directory-id: Input byte[] should at least have 2 bytes for base64 bytes"),
    (["--bootstrap-server", "h:1", "remove-controller", "-i", "1", "-d", "AAAA"],
     "Failed to parse --controller-directory-id: Input string `AAAA` decoded as 3 bytes, which is not equal to "
     "the expected 16 bytes of a base64-encoded UUID"),
    (["--bootstrap-server", "h:1", "describe", "--status", "--foo"],
     "kafka-metadata-quorum: error: unrecognized arguments: '--foo'"),
])
def test_refusals(args, line):
    assert _pk(*args) == (1, "", line + "\n")


def test_remove_controller_dry_run():
    assert _pk("--bootstrap-server", "h:1", "remove-controller", "--controller-id", "2",
               "--controller-directory-id", "_KWDkTahTVaiVVVTaugNew", "--dry-run", "--unregister") == (
        0, "DRY RUN of removing KRaft controller 2 with directory id _KWDkTahTVaiVVVTaugNew\n"
           "DRY RUN of unregistering KRaft controller 2\n", "")


def test_help_exits_zero():
    rc, out, err = _pk("-h")
    assert rc == 0 and out.startswith("usage: kafka-metadata-quorum") and err == ""
    rc, out, err = _pk("--bootstrap-server", "h:1", "remove-controller", "-h")
    assert rc == 0 and "--unregister" in out


def test_tables_of_a_three_voter_quorum():
    """The rendering of a DescribeQuorum answer with followers and an observer (the oracle's
    single combined node has neither)."""
    from pk.commands.metadata_quorum import replication_lines, status_lines

    now = int(time.time() * 1000)
    d1 = uuid.UUID(int=1 << 100)

    def replica(rid, leo, fetch, caught, directory=uuid.UUID(int=0)):
        return {"replica_id": rid, "replica_directory_id": directory, "log_end_offset": leo,
                "last_fetch_timestamp": fetch, "last_caught_up_timestamp": caught}

    quorum = {"leader_id": 2, "leader_epoch": 7, "high_watermark": 100,
              "current_voters": [replica(1, 90, now - 5, now - 50, d1), replica(2, 100, now, now),
                                 replica(3, 95, now - 3, now - 20)],
              "observers": [replica(4, 80, -1, -1)],
              "nodes": {1: [{"name": "CONTROLLER", "host": "c1", "port": 9093}],
                        2: [{"name": "CONTROLLER", "host": "::1", "port": 9093}]}}
    assert status_lines("cid", quorum) == [
        "ClusterId:              cid", "LeaderId:               2", "LeaderEpoch:            7",
        "HighWatermark:          100", "MaxFollowerLag:         10", "MaxFollowerLagTimeMs:   50",
        'CurrentVoters:          [{"id": 1, "directoryId": "AAAAEAAAAAAAAAAAAAAAAA", "endpoints": '
        '["CONTROLLER://c1:9093"]}, {"id": 2, "endpoints": ["CONTROLLER://[::1]:9093"]}, {"id": 3}]',
        'CurrentObservers:       [{"id": 4}]']
    lines = replication_lines(quorum, False)
    assert [line.split("\t")[0].strip() for line in lines] == ["NodeId", "2", "1", "3", "4"]
    assert [line.split("\t")[6].strip() for line in lines] == ["Status", "Leader", "Follower", "Follower", "Observer"]
    assert lines[2].split("\t")[1:4] == ["AAAAEAAAAAAAAAAAAAAAAA", "90          ", "10 "]
    assert lines[4].split("\t")[4:6] == ["-1                ", "-1                   "]
    readable = replication_lines(quorum, True)
    assert readable[2].split("\t")[5].strip().endswith(" ms ago")
