"""A real Kafka Streams 4.x application (tests/kafka/streams/WordCountApp.java, compiled by
scripts/kafka-jars) as a client of a broker, with `group.protocol=streams` (KIP-1071).

`StreamsApp` runs one instance in a JVM of its own and follows what it prints ("STATE <state>",
"TASKS <active task ids>") from a reader thread, so a test waits for states, never for time.
"""

from __future__ import annotations

import glob
import os
import signal
import subprocess
import threading
import time

from kafka_oracle import CONF, KAFKA_HOME, KafkaMissing


def streams_home() -> str:
    """.kafka/streams-<newest 4.x>: its libs/ and classes/; KafkaMissing when not fetched."""
    homes = [h for h in glob.glob(os.path.join(KAFKA_HOME, "streams-4.*"))
             if os.path.exists(os.path.join(h, "classes", "WordCountApp.class"))]
    if not homes:
        raise KafkaMissing(f"the Kafka Streams jars and WordCountApp are not in {KAFKA_HOME} (run scripts/kafka-jars)")
    return max(homes, key=lambda h: tuple(int(p) for p in os.path.basename(h)[len("streams-"):].split(".")))


class StreamsApp:
    """One WordCountApp instance: `bootstrap app_id input output`."""

    def __init__(self, bootstrap: str, app_id: str, input_topic: str, output_topic: str, log_path: str):
        home = streams_home()
        classpath = ":".join([os.path.join(home, "libs", "*"), os.path.join(home, "classes")])
        self.command = ["java", "-Xmx192m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
                        f"-Dlog4j2.configurationFile={os.path.join(CONF, 'log4j2-tools.properties')}",
                        "-cp", classpath, "WordCountApp", bootstrap, app_id, input_topic, output_topic]
        self.log_path = log_path
        self.states: list[str] = []
        self.tasks: str | None = None
        self._changed = threading.Condition()
        self.proc: subprocess.Popen | None = None

    def start(self) -> "StreamsApp":
        self._log = open(self.log_path, "ab")
        self.proc = subprocess.Popen(self.command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                     stderr=self._log)
        threading.Thread(target=self._read, daemon=True).start()
        return self

    def _read(self) -> None:
        for raw in self.proc.stdout:
            line = raw.decode(errors="replace").rstrip("\n")
            with self._changed:
                if line.startswith("STATE "):
                    self.states.append(line[6:])
                elif line.startswith("TASKS"):
                    self.tasks = line[6:]
                self._changed.notify_all()
        with self._changed:
            self._changed.notify_all()

    def wait_for(self, condition, timeout: float = 60.0, what: str = "a state") -> None:
        """Until condition(self) holds; AssertionError (with the app's log tail) otherwise."""
        deadline = time.monotonic() + timeout
        with self._changed:
            while not condition(self):
                left = deadline - time.monotonic()
                if left <= 0 or self.proc.poll() is not None:
                    tail = open(self.log_path, errors="replace").read()[-3000:]
                    raise AssertionError(f"WordCountApp: no {what} (states {self.states}, tasks {self.tasks!r}):"
                                         f"\n{tail}")
                self._changed.wait(min(left, 0.5))

    def wait_running(self, timeout: float = 60.0) -> None:
        self.wait_for(lambda app: app.states[-1:] == ["RUNNING"] and bool(app.tasks), timeout, "RUNNING with tasks")

    def kill(self) -> None:
        """SIGKILL: the instance vanishes without leaving the group (its session must expire)."""
        if self.proc is not None and self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
            self._log.close()

    def stop(self, timeout: float = 30.0) -> None:
        """SIGTERM: the app's shutdown hook closes Kafka Streams, which leaves the group."""
        if self.proc is None or self.proc.poll() is not None:
            return
        os.kill(self.proc.pid, signal.SIGTERM)
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            os.kill(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
        self._log.close()
