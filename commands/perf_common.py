"""What the two performance tools share: Java's number and date formatting, the metrics
table and the clock.

The numbers are computed with the same double arithmetic, in the same order, as the Java tools
and printed with Java's `%f` rounding (`java_fixed`); dates follow java.text.SimpleDateFormat
(`JavaDateFormat`).
"""

from __future__ import annotations

import re
import time
from decimal import ROUND_HALF_UP, Decimal

from .errors import ILLEGAL_ARGUMENT, JavaError


def now_ms() -> int:
    """The wall clock in milliseconds (System.currentTimeMillis)."""
    return time.time_ns() // 1_000_000


# --------------------------------------------------------------------------- Java formatting
def config_file(path: str | None) -> dict[str, str]:
    """A perf tool's --command-config file (none: {}); an unreadable file dies as Kafka's tool
    does, with the exception Java's Properties.load threw."""
    if path is None:
        return {}
    from .errors import PropertiesError
    from .properties import load_properties

    try:
        return load_properties(path)
    except PropertiesError as exc:
        java_class, _, message = str(exc).partition(": ")
        raise JavaError(java_class, message) from None


def java_fixed(value: float, decimals: int) -> str:
    """String.format("%.<decimals>f", value): Java rounds the shortest decimal form of the
    double half-up (Python's % rounds the binary value); NaN and infinities as Java spells them."""
    if value != value:
        return "NaN"
    if value in (float("inf"), float("-inf")):
        return "Infinity" if value > 0 else "-Infinity"
    quantum = Decimal(1).scaleb(-decimals)
    return f"{Decimal(repr(float(value))).quantize(quantum, rounding=ROUND_HALF_UP):f}"


def java_div(a: float, b: float) -> float:
    """a / b with Java's double semantics (x/0.0 is ±Infinity or NaN, not an exception)."""
    if b == 0:
        if a == 0 or a != a:
            return float("nan")
        negative = (a < 0) != (str(float(b)).startswith("-"))
        return float("-inf") if negative else float("inf")
    return a / b


def java_int_cast(n: int) -> int:
    """(int) of a Java long: keep the low 32 bits, signed."""
    return ((n + 2**31) % 2**32) - 2**31


def java_long_div(a: int, b: int) -> int:
    """Java's long division (truncates toward zero; / by zero is an ArithmeticException)."""
    if b == 0:
        raise JavaError("java.lang.ArithmeticException", "/ by zero")
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


_JAVA_INT_RE = re.compile(r"[+-]?\d+\Z")


def java_parse_number(text: str, bits: int) -> int | None:
    """Integer.valueOf / Long.valueOf: an optional sign and decimal digits; None if invalid."""
    if not _JAVA_INT_RE.match(text):
        return None
    value = int(text)
    if not -2**(bits - 1) <= value < 2**(bits - 1):
        return None
    return value


# --------------------------------------------------------------------------- SimpleDateFormat
_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September",
           "October", "November", "December")
_DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
_PATTERN_LETTERS = "GyMdkHmsSEDFwWahKzZYuXL"  # SimpleDateFormat.patternChars (Java 8+)


class JavaDateFormat:
    """java.text.SimpleDateFormat(pattern).format(millis) in the local time zone, US locale.

    The constructor raises JavaError(IllegalArgumentException) for the patterns Java refuses:
    an unknown pattern letter, an unterminated quote, an X run longer than 3."""

    def __init__(self, pattern: str):
        self.pattern = pattern
        self.parts: list[tuple[str, int] | str] = []  # (letter, count) or literal text
        i, n = 0, len(pattern)
        literal: list[str] = []
        in_quote = False
        while i < n:
            c = pattern[i]
            if c == "'":
                if i + 1 < n and pattern[i + 1] == "'":
                    literal.append("'")
                    i += 2
                    continue
                in_quote = not in_quote
                i += 1
                continue
            if in_quote or not ("a" <= c <= "z" or "A" <= c <= "Z"):
                literal.append(c)
                i += 1
                continue
            if c not in _PATTERN_LETTERS:
                raise JavaError(ILLEGAL_ARGUMENT, f"Illegal pattern character '{c}'")
            j = i
            while j < n and pattern[j] == c:
                j += 1
            count = j - i
            if c == "X" and count > 3:
                raise JavaError(ILLEGAL_ARGUMENT, f"invalid ISO 8601 format: length={count}")
            if literal:
                self.parts.append("".join(literal))
                literal = []
            self.parts.append((c, count))
            i = j
        if in_quote:
            raise JavaError(ILLEGAL_ARGUMENT, "Unterminated quote")
        if literal:
            self.parts.append("".join(literal))

    def format(self, millis: int) -> str:
        t = time.localtime(millis // 1000)
        ms = millis % 1000
        out = []
        for part in self.parts:
            if isinstance(part, str):
                out.append(part)
            else:
                out.append(self._field(part[0], part[1], t, ms))
        return "".join(out)

    @staticmethod
    def _num(value: int, count: int) -> str:
        return str(value).zfill(count) if value >= 0 else "-" + str(-value).zfill(count)

    def _field(self, c: str, count: int, t: time.struct_time, ms: int) -> str:
        num = self._num
        if c == "G":
            return "AD" if count < 4 else "Anno Domini"
        if c in "yY":
            year = t.tm_year if c == "y" else _us_week_year(t)
            return num(year % 100, 2) if count == 2 else num(year, count)
        if c in "ML":
            if count >= 4:
                return _MONTHS[t.tm_mon - 1]
            if count == 3:
                return _MONTHS[t.tm_mon - 1][:3]
            return num(t.tm_mon, count)
        if c == "d":
            return num(t.tm_mday, count)
        if c == "D":
            return num(t.tm_yday, count)
        if c == "E":
            return _DAYS[t.tm_wday] if count >= 4 else _DAYS[t.tm_wday][:3]
        if c == "u":
            return num(t.tm_wday + 1, count)
        if c == "F":
            return num((t.tm_mday - 1) // 7 + 1, count)
        if c == "w":
            return num(_us_week_of_year(t), count)
        if c == "W":
            first_dow = (_sunday_based(t.tm_wday) - (t.tm_mday - 1)) % 7
            return num((t.tm_mday - 1 + first_dow) // 7 + 1, count)
        if c == "a":
            return "AM" if t.tm_hour < 12 else "PM"
        if c == "H":
            return num(t.tm_hour, count)
        if c == "k":
            return num(t.tm_hour or 24, count)
        if c == "K":
            return num(t.tm_hour % 12, count)
        if c == "h":
            return num(t.tm_hour % 12 or 12, count)
        if c == "m":
            return num(t.tm_min, count)
        if c == "s":
            return num(t.tm_sec, count)
        if c == "S":
            return num(ms, count)
        if c == "z":
            return t.tm_zone or "GMT"
        offset = (t.tm_gmtoff or 0) // 60
        sign = "-" if offset < 0 else "+"
        hours, minutes = divmod(abs(offset), 60)
        if c == "Z":
            return f"{sign}{hours:02d}{minutes:02d}"
        # X: ISO 8601
        if offset == 0:
            return "Z"
        if count == 1:
            return f"{sign}{hours:02d}"
        if count == 2:
            return f"{sign}{hours:02d}{minutes:02d}"
        return f"{sign}{hours:02d}:{minutes:02d}"


def _sunday_based(tm_wday: int) -> int:
    """Python's Monday=0 weekday to Sunday=0."""
    return (tm_wday + 1) % 7


def _us_week_of_year(t: time.struct_time) -> int:
    """GregorianCalendar.WEEK_OF_YEAR with the US rules (weeks start on Sunday, week 1 is the
    week holding January 1st, so the last days of December can be week 1)."""
    dow = _sunday_based(t.tm_wday)
    jan1 = (dow - (t.tm_yday - 1)) % 7
    days_in_year = 366 if (t.tm_year % 4 == 0 and (t.tm_year % 100 != 0 or t.tm_year % 400 == 0)) else 365
    next_jan1 = (jan1 + days_in_year) % 7
    if next_jan1 != 0 and days_in_year - t.tm_yday < next_jan1:
        return 1  # this week holds next year's January 1st
    return (t.tm_yday - 1 + jan1) // 7 + 1


def _us_week_year(t: time.struct_time) -> int:
    if t.tm_mon == 12 and _us_week_of_year(t) == 1:
        return t.tm_year + 1
    return t.tm_year


# --------------------------------------------------------------------------- metrics
def format_metrics(metrics: dict[tuple[str, str, tuple[tuple[str, str], ...]], object]) -> list[str]:
    """ToolsUtils.printMetrics: a blank line, a header, then `group:name:{tags} : value` sorted
    by that name; doubles as %.3f. Nothing at all for no metrics."""
    if not metrics:
        return []
    rows = {}
    for (group, name, tags), value in metrics.items():
        merged = f"{group}:{name}:{{" + ", ".join(f"{k}={v}" for k, v in tags) + "}"
        rows[merged] = value
    width = max(len(name) for name in rows)
    lines = ["", f"{'Metric Name':<{width}}   Value"]
    for name in sorted(rows):
        value = rows[name]
        text = java_fixed(value, 3) if isinstance(value, float) else str(value)
        lines.append(f"{name:<{width}} : {text}")
    return lines
