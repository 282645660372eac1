"""Retention and compaction on Kafka's schedule.

Kafka's log manager checks retention first log.initial.task.delay.ms after start-up (30 s),
then every log.retention.check.interval.ms (5 min); its log cleaner looks for logs dirty
enough to compact every log.cleaner.backoff.ms (15 s). The broker does the same, so a
record older than retention.ms stays readable until the next check after it was written
(appends in the broker run no check: the engine's append-time checks are off,
Engine.retention_on_append). Each check is recorded in the retention-check checkpoint,
which the bundled engine's own schedule shares. The log start offsets are checkpointed every
log.flush.start.offset.checkpoint.interval.ms (1 min) and at shutdown, as Kafka's log manager does.
"""

from __future__ import annotations

import logging
import time

log = logging.getLogger("pk.broker")


class LogUpkeep:
    def __init__(self, broker):
        self.broker = broker
        self.engine = broker.engine
        self.engine.retention_on_append = False
        config = broker.config
        now = time.monotonic()
        self._retention_every = config.get_int("log.retention.check.interval.ms") / 1000.0
        self._next_retention = now + config.get_int("log.initial.task.delay.ms") / 1000.0
        self._clean_every = config.get_int("log.cleaner.backoff.ms") / 1000.0
        self._cleaner = config.get_bool("log.cleaner.enable")
        self._next_clean = now + self._clean_every
        self._start_checkpoint_every = config.get_int("log.flush.start.offset.checkpoint.interval.ms") / 1000.0
        self._next_start_checkpoint = now + self._start_checkpoint_every
        self.engine.checkpoint_log_start_offsets()  # a data dir older than the file gets it at start
        self.engine.recover_failed_logs()  # (after a halt on a failed write: LogManager's recovery)

    async def tick(self) -> None:
        now = time.monotonic()
        if now >= self._next_retention:
            self._next_retention = now + self._retention_every
            deleted = self.engine.enforce_retention()
            if deleted:
                log.info("Retention deleted %d segment(s)", deleted)
        if self._cleaner and now >= self._next_clean:
            self._next_clean = now + self._clean_every
            cleaned = self.engine.clean()  # compacted topics whose dirty ratio is reached
            if cleaned:
                log.info("Log cleaner rewrote %d segment(s)", cleaned)
        if now >= self._next_start_checkpoint:
            self._next_start_checkpoint = now + self._start_checkpoint_every
            self.engine.checkpoint_log_start_offsets()

    def close(self) -> None:
        try:
            self.engine.checkpoint_log_start_offsets()
        except OSError as exc:  # a clean shutdown goes on (the next start reads the entries kept)
            log.warning("Cannot write the log start offset checkpoint: %s", exc)
