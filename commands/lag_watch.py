"""pk-consumer-groups --describe --watch SECONDS (pk only): the groups' lag, fetched again every
interval, with what one --describe cannot show: how the lag moves.

Per partition: LAG (log end offset minus committed offset, as --describe), LAG-CHANGE since the
last interval, CONSUME-RATE (records/s: the committed offset's advance over the interval),
PRODUCE-RATE (the log end offset's) and ETA, the time to catch up at those rates:

    ETA = LAG / (CONSUME-RATE - PRODUCE-RATE)   when the lag is > 0 and the group gains on it
    "0s"                                        when the lag is 0 (caught up)
    "∞"                                         when the lag is > 0 and the group does not gain
    "-"                                         at the first interval (no rates yet), or with
                                                no committed offset

Per group, a TOTAL row sums the partitions and ends with a sparkline (▁▂▃▄▅▆▇█) of the
group's total lag over the last HISTORY intervals, scaled from 0 to their highest value.

On a terminal the screen is cleared and the table redrawn each interval; otherwise (a pipe, a
file) every interval appends its rows, each prefixed with the interval's UTC time, after one
header line, with no escape codes: whitespace-separated columns, "-" for an empty cell, so
`awk` can read them. The rows come from the same collection --describe prints
(ConsumerGroupService.collect_group_offsets); nothing Kafka prints changes.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from .consumer_groups import MISSING, ConsumerGroupService, GroupOptions, java_order

HISTORY = 20
SPARKS = "▁▂▃▄▅▆▇█"
CLEAR = "\x1b[H\x1b[2J"  # cursor home, clear the screen
COLUMNS = ("GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG", "LAG-CHANGE",
           "CONSUME-RATE", "PRODUCE-RATE", "ETA", "TREND")
TOTAL = "TOTAL"


def parse_seconds(text: str) -> float:
    """--watch's value: a number of seconds > 0; ValueError with the line to print."""
    try:
        seconds = float(text)
    except ValueError:
        seconds = float("nan")
    if not seconds > 0 or seconds == float("inf"):
        raise ValueError(f"--watch takes a number of seconds > 0, not '{text}'")
    return seconds


@dataclass
class Row:
    """One partition (or a group's TOTAL, topic TOTAL) at one interval."""
    group: str
    topic: str
    partition: int | None
    offset: int | None  # committed; None: none committed
    end: int | None
    lag: int | None
    lag_change: int | None = None
    consume_rate: float | None = None
    produce_rate: float | None = None
    eta_s: float | None = None  # seconds; inf: never at these rates; None: not known
    trend: str | None = None  # the TOTAL row's sparkline


@dataclass
class Tracker:
    """The previous interval's offsets per partition and each group's lag history."""
    history: int = HISTORY
    _last: dict = field(default_factory=dict)  # (group, topic, partition) -> (t, offset, end, lag)
    _totals: dict = field(default_factory=dict)  # group -> [total lag, ...]

    def update(self, t: float, groups: list[tuple[str, list[tuple]]]) -> list[Row]:
        """Rows for one interval at time `t` (seconds) from each group's --describe rows
        (group, topic, partition, offset, end, lag, ...)."""
        out = []
        for group, raw in groups:
            rows = [self._row(t, r) for r in raw]
            out += rows
            out.append(self._total(group, rows))
        return out

    def _row(self, t: float, raw: tuple) -> Row:
        group, topic, partition, offset, end, lag = raw[:6]
        offset = None if offset is None or offset < 0 else offset
        lag = lag if offset is not None else None
        row = Row(group, topic, partition, offset, end, lag)
        key = (group, topic, partition)
        last = self._last.get(key)
        self._last[key] = (t, offset, end, lag)
        if last is None or t <= last[0]:
            return row
        dt = t - last[0]
        _, last_offset, last_end, last_lag = last
        if lag is not None and last_lag is not None:
            row.lag_change = lag - last_lag
        if offset is not None and last_offset is not None:
            row.consume_rate = (offset - last_offset) / dt
        if end is not None and last_end is not None:
            row.produce_rate = (end - last_end) / dt
        row.eta_s = eta(lag, row.consume_rate, row.produce_rate)
        return row

    def _total(self, group: str, rows: list[Row]) -> Row:
        def total(values):
            values = list(values)
            return None if not values or any(v is None for v in values) else sum(values)

        lags = [r.lag for r in rows if r.lag is not None]
        row = Row(group, TOTAL, None, None, None, sum(lags) if lags else None,
                  total(r.lag_change for r in rows if r.lag is not None),
                  total(r.consume_rate for r in rows if r.offset is not None),
                  total(r.produce_rate for r in rows if r.end is not None))
        if row.lag_change is not None or not rows:
            row.eta_s = eta(row.lag, row.consume_rate, row.produce_rate)
        history = self._totals.setdefault(group, [])
        history.append(row.lag or 0)
        del history[:-self.history]
        row.trend = sparkline(history)
        return row


def eta(lag: int | None, consume_rate: float | None, produce_rate: float | None) -> float | None:
    if lag is None:
        return None
    if lag == 0:
        return 0.0
    if consume_rate is None or produce_rate is None:
        return None
    gain = consume_rate - produce_rate
    return lag / gain if gain > 0 else float("inf")


def sparkline(values: list[int]) -> str:
    top = max(values, default=0)
    if top <= 0:
        return SPARKS[0] * len(values)
    return "".join(SPARKS[min(len(SPARKS) - 1, round(v / top * (len(SPARKS) - 1)))] for v in values)


# --------------------------------------------------------------------------- rendering
def duration_text(seconds: float | None) -> str:
    if seconds is None:
        return MISSING
    if seconds == float("inf"):
        return "∞"
    s = int(round(seconds))
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    if s < 86400:
        return f"{s // 3600}h{s % 3600 // 60:02d}m"
    return f"{s // 86400}d{s % 86400 // 3600:02d}h"


def cells(row: Row) -> list[str]:
    def text(v):
        return MISSING if v is None else str(v)

    def rate(v):
        return MISSING if v is None else f"{v:.1f}/s"

    change = MISSING if row.lag_change is None else f"{row.lag_change:+d}"
    return [row.group, row.topic, text(row.partition), text(row.offset), text(row.end), text(row.lag), change,
            rate(row.consume_rate), rate(row.produce_rate), duration_text(row.eta_s), row.trend or MISSING]


def table(rows: list[Row], columns=COLUMNS) -> list[str]:
    grid = [list(columns)] + [cells(r) for r in rows]
    widths = [max(len(line[i]) for line in grid) for i in range(len(columns))]
    return [" ".join(c.ljust(w) for c, w in zip(line, widths)).rstrip() for line in grid]


# --------------------------------------------------------------------------- the loop
class LagWatch:
    def __init__(self, backend, options: GroupOptions, seconds: float, write, terminal: bool,
                 clock=time.monotonic, wall=time.time, sleep=time.sleep):
        self.service = ConsumerGroupService(backend, options, console=None)
        self.backend = backend
        self.options = options
        self.seconds = seconds
        self.write = write  # writes text and flushes
        self.terminal = terminal
        self.tracker = Tracker()
        self.clock, self.wall, self.sleep = clock, wall, sleep
        self._plain_header = False

    def group_ids(self) -> list[str]:
        if self.options.all_groups:
            return self.service.list_group_ids()
        return sorted(dict.fromkeys(self.options.group), key=java_order)

    def collect(self) -> list[tuple[str, list[tuple]]]:
        ids = self.group_ids()
        described = self.backend.describe_groups(ids) if ids else {}
        return [(g, self.service.collect_group_offsets(described[g]) if described[g].state != "Dead" else [])
                for g in ids if g in described]

    def interval(self) -> None:
        groups = self.collect()
        rows = self.tracker.update(self.clock(), groups)
        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(self.wall()))
        lines = table(rows)
        if self.terminal:
            head = f"Every {self.seconds:g}s: consumer group lag ({len(groups)} group(s))    {stamp}    Ctrl-C exits"
            self.write(CLEAR + head + "\n\n" + "\n".join(lines) + "\n")
            return
        width = len(stamp)
        text = ""
        if not self._plain_header:
            text += "TIME".ljust(width) + " " + lines[0] + "\n"
            self._plain_header = True
        self.write(text + "".join(f"{stamp} {line}\n" for line in lines[1:]))

    def run(self, intervals: int | None = None) -> None:
        """Until interrupted (KeyboardInterrupt goes to the caller), or `intervals` times."""
        done = 0
        next_at = self.clock()
        while intervals is None or done < intervals:
            self.interval()
            done += 1
            if intervals is not None and done >= intervals:
                return
            # a slow interval delays the next one rather than bunching those after it
            next_at = max(next_at + self.seconds, self.clock())
            self.sleep(max(0.0, next_at - self.clock()))


def watch(open_backend, options: GroupOptions, seconds: float, stdout) -> None:
    """Run on the backend `open_backend()` gives until Ctrl-C (SIGINT), then exit 0 quietly.
    Failures (the cluster's, a closed stdout) go to the caller as --describe's do."""
    import sys

    terminal = stdout.isatty()

    def write(text: str) -> None:
        stdout.write(text)
        stdout.flush()

    backend = None
    try:
        backend = open_backend()
        LagWatch(backend, options, seconds, write, terminal).run()
    except KeyboardInterrupt:
        import signal

        signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl-C must not break the closing
    finally:
        if backend is not None:
            try:
                backend.close()
            except Exception:  # noqa: BLE001 - stopping: a failure to close changes nothing now
                pass
    sys.exit(0)
