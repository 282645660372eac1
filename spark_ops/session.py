"""Spark for pk-spark: the launch options every subcommand takes (spark-submit's), the Java
check, the SparkSession, a stage-progress line on stderr, and the `spark-submit` command line
for running a subcommand as a Spark application (`--submit`, `--print-command`).

Two ways to run, as in spark-submit's own conventions:
- in-process (default): the CLI builds a SparkSession itself (pyspark starts the JVM through
  the package's spark-submit), with PYSPARK_PYTHON set to this interpreter so that Python
  data-source workers import the same pk, pyarrow and confluent-kafka;
- `--submit`: the pyspark package's `spark-submit` runs a small launcher that calls the same
  CLI, with pk shipped as a zip through `--py-files`, so `--deploy-mode cluster` and real
  cluster masters work (executors still need pyarrow, confluent-kafka, crc32c and cramjam).

Only pk-spark imports this module; pyspark itself is imported when a session is built.
"""

from __future__ import annotations

import hashlib
import importlib
import io
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import threading
import zipfile
from dataclasses import dataclass, field

DEFAULT_MASTER = "local[*]"
DEFAULT_NAME = "pk-spark"
MIN_JAVA = 17
JAVA_HINT = ("install a Java 17 or 21 runtime (Debian/Ubuntu: apt-get install openjdk-17-jre-headless) "
             "or point JAVA_HOME at one")
# pk's packages shipped to Spark with --py-files (the repository's root folders).
PK_PACKAGES = ("cli", "commands", "engine", "spark_ops", "config")

# Quiet Spark's own log (its WARN lines and per-task error dumps) unless --verbose: the CLI
# reports failures itself, in one line.
_LOG4J2 = """\
rootLogger.level = {level}
rootLogger.appenderRef.stderr.ref = stderr
appender.stderr.type = Console
appender.stderr.name = stderr
appender.stderr.target = SYSTEM_ERR
appender.stderr.layout.type = PatternLayout
appender.stderr.layout.pattern = %d{{yy/MM/dd HH:mm:ss}} %p %c{{1}}: %m%n%ex
# pyspark's gateway logs as a shell: at the root's level, Spark prints no "Setting default
# log level" lines on stderr
logger.gateway.name = org.apache.spark.api.python.PythonGatewayServer
logger.gateway.level = {level}
logger.submit.name = org.apache.spark.deploy.SparkSubmit
logger.submit.level = {level}
logger.context.name = org.apache.spark.SparkContext
logger.context.level = {level}
"""


class SessionError(Exception):
    """A problem with the Spark options or the environment: one line for the user."""


@dataclass
class SparkOptions:
    master: str | None = None
    deploy_mode: str | None = None
    conf: list[str] = field(default_factory=list)  # "key=value" as given
    executor_memory: str | None = None
    driver_memory: str | None = None
    name: str | None = None
    submit: bool = False
    print_command: bool = False
    progress: bool = True
    verbose: bool = False

    def conf_pairs(self) -> list[tuple[str, str]]:
        pairs = []
        for item in self.conf:
            key, sep, value = item.partition("=")
            if not sep or not key.strip():
                raise SessionError(f"--conf expects KEY=VALUE, got '{item}'")
            pairs.append((key.strip(), value))
        return pairs

    def check(self) -> None:
        self.conf_pairs()
        if self.deploy_mode not in (None, "client", "cluster"):
            raise SessionError(f"--deploy-mode must be client or cluster, not '{self.deploy_mode}'")
        master = self.master or DEFAULT_MASTER
        if self.deploy_mode == "cluster":
            if master.startswith("local"):
                raise SessionError(f'Cluster deploy mode is not compatible with master "{master}"')
            if not (self.submit or self.print_command):
                raise SessionError("--deploy-mode cluster runs the job through spark-submit: add --submit")
        for opt, value in (("--executor-memory", self.executor_memory), ("--driver-memory", self.driver_memory)):
            if value is not None and not re.fullmatch(r"\d+[kKmMgGtTpP]?[bB]?", value.strip()):
                raise SessionError(f"{opt} expects a size such as 512m or 2g, not '{value}'")


# --------------------------------------------------------------------------- environment
def under_spark_submit() -> bool:
    """True inside an application that spark-submit started (the JVM is already there)."""
    return "PYSPARK_GATEWAY_PORT" in os.environ


def find_java() -> tuple[str, int]:
    """The java executable Spark will use and its major version; SessionError when unusable."""
    home = os.environ.get("JAVA_HOME")
    if home:
        java = os.path.join(home, "bin", "java")
        if not os.access(java, os.X_OK):
            raise SessionError(f"pk-spark needs Java to run Spark, but JAVA_HOME={home} has no bin/java: "
                               + JAVA_HINT)
    else:
        java = shutil.which("java")
        if java is None:
            raise SessionError("pk-spark needs Java to run Spark, and there is no java on PATH (JAVA_HOME "
                               "is not set): " + JAVA_HINT)
    try:
        out = subprocess.run([java, "-version"], capture_output=True, timeout=30)
        text = (out.stderr + out.stdout).decode(errors="replace")
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise SessionError(f"pk-spark cannot run {java}: {exc}; " + JAVA_HINT) from None
    match = re.search(r'version "(\d+)(?:\.(\d+))?', text)
    if not match:
        raise SessionError(f"pk-spark cannot tell the version of {java}: " + JAVA_HINT)
    major = int(match.group(1))
    if major == 1 and match.group(2):  # 1.8 -> 8
        major = int(match.group(2))
    if major < MIN_JAVA:
        raise SessionError(f"Spark 4 needs Java {MIN_JAVA} or later, and {java} is Java {major}: " + JAVA_HINT)
    return java, major


def pyspark_home() -> str:
    import importlib.util

    spec = importlib.util.find_spec("pyspark")
    if spec is None or not spec.submodule_search_locations:
        raise SessionError("pk-spark needs the pyspark package: pip install 'pyspark>=4'")
    return list(spec.submodule_search_locations)[0]


def spark_env(master: str | None) -> dict[str, str]:
    """Environment for the JVM and the Python workers (set before a session or spark-submit):
    this interpreter for Python workers, the pyspark package as SPARK_HOME unless another
    valid one is set, and a loopback address for local masters (no "resolves to a loopback
    address" warning) and for standalone masters on loopback (their executors, on this
    machine, must reach the driver there)."""
    env = {"PYSPARK_PYTHON": os.environ.get("PYSPARK_PYTHON") or sys.executable}
    home = os.environ.get("SPARK_HOME")
    env["SPARK_HOME"] = home if home and os.path.isfile(os.path.join(home, "bin", "spark-submit")) \
        else pyspark_home()
    if on_loopback(master or DEFAULT_MASTER):
        env["SPARK_LOCAL_IP"] = os.environ.get("SPARK_LOCAL_IP") or "127.0.0.1"
    return env


def on_loopback(master: str) -> bool:
    """True for local masters and spark:// masters whose every host is a loopback name."""
    if master.startswith("local"):
        return True
    if not master.startswith("spark://"):
        return False
    hosts = [hp.rsplit(":", 1)[0].strip("[]") for hp in master[len("spark://"):].split(",")]
    return all(h == "localhost" or h == "::1" or h.startswith("127.") for h in hosts)


def cache_dir() -> str:
    """Where generated files live (log4j config, the pk zip for --py-files, the launcher)."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    for path in (os.path.join(base, "pk", "spark"),
                 os.path.join(tempfile.gettempdir(), f"pk-spark-{os.getuid()}")):
        try:
            os.makedirs(path, exist_ok=True)
            if os.access(path, os.W_OK):
                return path
        except OSError:
            continue
    raise SessionError(f"Cannot create a cache directory under {base} or {tempfile.gettempdir()}")


def _write_once(path: str, data: bytes) -> str:
    if not os.path.exists(path):
        tmp = f"{path}.{os.getpid()}.tmp"
        with open(tmp, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    return path


def log4j_file(verbose: bool) -> str:
    level = "warn" if verbose else "fatal"
    text = _LOG4J2.format(level=level).encode()
    digest = hashlib.sha256(text).hexdigest()[:8]
    return _write_once(os.path.join(cache_dir(), f"log4j2-{level}-{digest}.properties"), text)


# --------------------------------------------------------------------------- the session
def build_session(opts: SparkOptions):
    """A SparkSession for these options, with pk's data sources registered."""
    env = spark_env(opts.master)
    os.environ.update(env)
    pairs = opts.conf_pairs()
    given = {k for k, _ in pairs}
    from pyspark.sql import SparkSession

    builder = SparkSession.builder
    if not under_spark_submit():
        # Launch settings only count before the JVM starts, which happens right here.
        builder = builder.master(opts.master or DEFAULT_MASTER).appName(opts.name or DEFAULT_NAME)
        if opts.deploy_mode:
            builder = builder.config("spark.submit.deployMode", opts.deploy_mode)
        if opts.driver_memory:
            builder = builder.config("spark.driver.memory", opts.driver_memory)
        if opts.executor_memory:
            builder = builder.config("spark.executor.memory", opts.executor_memory)
        java_opts = f"-Dlog4j2.configurationFile={log4j_file(opts.verbose)}"
        user = dict(pairs).get("spark.driver.extraJavaOptions")
        builder = builder.config("spark.driver.extraJavaOptions", f"{java_opts} {user}" if user else java_opts)
        given.add("spark.driver.extraJavaOptions")
        defaults = {"spark.ui.showConsoleProgress": "false"}
        master = opts.master or DEFAULT_MASTER
        if master.startswith("local"):  # a short job here: no web UI, few shuffle partitions
            defaults["spark.ui.enabled"] = "false"
            cores = _local_cores(master)
            defaults["spark.sql.shuffle.partitions"] = str(max(cores, 1))
            defaults["spark.default.parallelism"] = str(max(cores, 1))
        for key, value in defaults.items():
            if key not in given:
                builder = builder.config(key, value)
    for key, value in pairs:
        if key != "spark.driver.extraJavaOptions" or under_spark_submit():
            builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("WARN" if opts.verbose else "FATAL")
    from .datasource import register

    register(spark)
    return spark


def _local_cores(master: str) -> int:
    match = re.fullmatch(r"local(?:\[(\*|\d+)(?:,\s*\d+)?\])?", master.strip())
    if match is None or match.group(1) == "*":
        return os.cpu_count() or 1
    return int(match.group(1) or 1)


# --------------------------------------------------------------------------- progress
class ProgressReporter:
    """While a job runs, a line on stderr with its stages done / total (and tasks), from the
    SparkContext's status tracker, polled from a background thread. On a terminal the line
    is redrawn in place; otherwise a new line is written when the figures change."""

    def __init__(self, spark, stream=None, interval: float = 0.5, enabled: bool = True):
        self.sc = spark.sparkContext
        self.stream = stream or sys.stderr
        self.interval = interval
        self.enabled = enabled
        self.tty = hasattr(self.stream, "isatty") and self.stream.isatty()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._last = ""
        self._drawn = False
        self._active: set[int] = set()
        self.seen: list[str] = []  # every line shown, for tests

    def __enter__(self) -> "ProgressReporter":
        if self.enabled:
            self._thread = threading.Thread(target=self._run, name="pk-spark-progress", daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(5)
        if self._drawn and self.tty:
            self.stream.write("\n")
            self.stream.flush()

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            self.tick()
        self.tick()  # the jobs that ended since the last look

    def tick(self) -> None:
        try:
            line = self.snapshot()
        except Exception:  # the JVM going away under us: nothing more to show
            return
        if line and line != self._last:
            self._show(line)

    def _job_line(self, tracker, job_id: int) -> str | None:
        info = tracker.getJobInfo(job_id)
        if info is None:
            return None
        stages = list(info.stageIds)
        done = tasks = tasks_done = 0
        for stage_id in stages:
            stage = tracker.getStageInfo(stage_id)
            if stage is None:
                continue
            tasks += stage.numTasks
            tasks_done += stage.numCompletedTasks
            if stage.numTasks and stage.numCompletedTasks >= stage.numTasks:
                done += 1
        if info.status == "SUCCEEDED":  # skipped stages count as done
            done, tasks_done = len(stages), tasks
        state = "" if info.status == "RUNNING" else f" ({info.status.lower()})"
        return f"job {job_id}: stages {done}/{len(stages)} done, tasks {tasks_done}/{tasks}{state}"

    def snapshot(self) -> str:
        """One line for the jobs running now, and for those that ended since the last call."""
        tracker = self.sc.statusTracker()
        active = set(tracker.getActiveJobsIds())
        ended = self._active - active
        self._active = active
        parts = [line for job_id in sorted(ended | active)
                 if (line := self._job_line(tracker, job_id)) is not None]
        return ("[pk-spark] " + "; ".join(parts)) if parts else ""

    def _show(self, line: str) -> None:
        self._last = line
        self.seen.append(line)
        if self.tty:
            self.stream.write("\r\033[K" + line)
        else:
            self.stream.write(line + "\n")
        self.stream.flush()
        self._drawn = True


# --------------------------------------------------------------------------- spark-submit
LAUNCHER = b'''\
"""Entry point spark-submit runs for pk-spark --submit (generated by pk.spark_ops.session)."""
import sys

from pk.cli.spark import main

sys.argv[0] = "pk-spark"
main()
'''


def package_pk() -> tuple[str, str]:
    """(zip of pk's packages for --py-files, launcher script), written once per content to
    the cache directory so a printed command keeps working."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr(zipfile.ZipInfo("pk/", (1980, 1, 1, 0, 0, 0)), b"")
        for name in PK_PACKAGES:
            module = importlib.import_module(f"pk.{name}")
            root = list(module.__path__)[0]
            for folder, dirs, files in os.walk(root):
                dirs[:] = sorted(d for d in dirs if d != "__pycache__" and not d.startswith("."))
                rel = os.path.relpath(folder, root)
                arc_dir = f"pk/{name}" + ("" if rel == "." else "/" + rel.replace(os.sep, "/"))
                z.writestr(zipfile.ZipInfo(arc_dir + "/", (1980, 1, 1, 0, 0, 0)), b"")
                for fname in sorted(files):
                    if fname.endswith((".py", ".properties")):
                        with open(os.path.join(folder, fname), "rb") as f:
                            info = zipfile.ZipInfo(f"{arc_dir}/{fname}", (1980, 1, 1, 0, 0, 0))
                            info.compress_type = zipfile.ZIP_DEFLATED
                            z.writestr(info, f.read())
    data = buf.getvalue()
    digest = hashlib.sha256(data).hexdigest()[:16]
    directory = cache_dir()
    zip_path = _write_once(os.path.join(directory, f"pk-{digest}.zip"), data)
    launcher = _write_once(os.path.join(directory, "pk_spark_main.py"), LAUNCHER)
    return zip_path, launcher


def spark_submit_path() -> str:
    path = os.path.join(pyspark_home(), "bin", "spark-submit")
    if not os.path.isfile(path):
        raise SessionError(f"The pyspark package has no bin/spark-submit ({path}): reinstall pyspark")
    return path


def submit_command(opts: SparkOptions, app_args: list[str]) -> tuple[list[str], dict[str, str]]:
    """The spark-submit command line (and environment) running `pk-spark <app_args>`."""
    zip_path, launcher = package_pk()
    cmd = [spark_submit_path(), "--master", opts.master or DEFAULT_MASTER]
    if opts.deploy_mode:
        cmd += ["--deploy-mode", opts.deploy_mode]
    cmd += ["--name", opts.name or DEFAULT_NAME]
    if opts.driver_memory:
        cmd += ["--driver-memory", opts.driver_memory]
    if opts.executor_memory:
        cmd += ["--executor-memory", opts.executor_memory]
    pairs = opts.conf_pairs()
    given = {k for k, _ in pairs}
    java_opts = f"-Dlog4j2.configurationFile={log4j_file(opts.verbose)}"
    for key, value in pairs:
        if key == "spark.driver.extraJavaOptions":
            value = f"{java_opts} {value}"
        cmd += ["--conf", f"{key}={value}"]
    if "spark.driver.extraJavaOptions" not in given and opts.deploy_mode != "cluster":
        cmd += ["--conf", f"spark.driver.extraJavaOptions={java_opts}"]
    if "spark.ui.showConsoleProgress" not in given:
        cmd += ["--conf", "spark.ui.showConsoleProgress=false"]
    cmd += ["--py-files", zip_path, launcher, *app_args]
    return cmd, spark_env(opts.master)


def format_command(cmd: list[str], env: dict[str, str]) -> str:
    return " ".join([f"{k}={shlex.quote(v)}" for k, v in sorted(env.items())] + [shlex.join(cmd)])


def run_submit(cmd: list[str], env: dict[str, str]) -> int:
    try:
        return subprocess.run(cmd, env={**os.environ, **env}).returncode
    except OSError as exc:
        raise SessionError(f"Cannot run {cmd[0]}: {exc.strerror}") from None
