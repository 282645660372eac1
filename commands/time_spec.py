"""Points in time as a shell user writes them, for pk-only options such as
pk-console-consumer's --from-time/--to-time: epoch milliseconds, ISO-8601, or a time
relative to now.

- `1764412800000`: epoch milliseconds (digits only);
- `2026-11-29T10:00:00Z`, `2026-11-29T10:00:00+01:00`, `2026-11-29 10:00`, `2026-11-29`:
  ISO-8601; a time without a zone is local time, as date(1) reads one (TZ applies), and a
  date alone is local midnight;
- `-15m`, `-2h`, `-1d`, `-30s`, `-500ms`, `-1w`, `-1h30m`, `+5m`, `now`: relative to the
  moment the tool starts.
"""

from __future__ import annotations

import re
import time
from datetime import datetime, timedelta, timezone

_UNIT_MS = {"ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000, "d": 86_400_000, "w": 604_800_000}
_RELATIVE = re.compile(r"([+-])((?:\d+(?:ms|s|m|h|d|w))+)")
_PART = re.compile(r"(\d+)(ms|s|m|h|d|w)")

_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
EXPECTED = "an ISO-8601 date-time, epoch milliseconds, or a relative time such as -15m, -2h or -1d"


def parse_time(text: str, now_ms: int | None = None) -> int:
    """Epoch milliseconds for `text`; ValueError (with a one-line reason) when it is none of
    the accepted forms."""
    value = text.strip()
    now = int(time.time() * 1000) if now_ms is None else now_ms
    if value.lower() == "now":
        return now
    if value.isdigit():
        return int(value)
    match = _RELATIVE.fullmatch(value.lower())
    if match is not None:
        amount = sum(int(n) * _UNIT_MS[unit] for n, unit in _PART.findall(match.group(2)))
        return now - amount if match.group(1) == "-" else now + amount
    try:
        # Python reads ISO-8601's common forms, 'Z' included; naive means local time
        # (astimezone() on a naive datetime assumes the system's zone, as date(1) does).
        moment = datetime.fromisoformat(value)
    except ValueError:
        raise ValueError(f"'{text}' is not {EXPECTED}") from None
    if moment.tzinfo is None:
        moment = moment.astimezone()
    return (moment - _EPOCH) // timedelta(milliseconds=1)  # exact, no float rounding
