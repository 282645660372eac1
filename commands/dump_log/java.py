"""The Java behaviour DumpLogSegments shows beyond its own code: jopt-simple's option reads,
java.io.File's path forms, Long/Integer parsing, the producer-sequence wrap-around and
ByteBuffer's big-endian reads."""

from __future__ import annotations

import os
import re
import struct

from pk.engine.javacompat import java_split

from ..errors import NUMBER_FORMAT, STRING_INDEX, JavaError

INT_MAX = 2**31 - 1

# ByteBuffer.getShort / getInt / getLong and an int read as unsigned
I16 = struct.Struct(">h")
I32 = struct.Struct(">i")
I64 = struct.Struct(">q")
U32 = struct.Struct(">I")


def value_of(name: str, value, default=None):
    """jopt-simple OptionSet.valueOf: the value, the default, or the "multiple" error."""
    if isinstance(value, (list, tuple)):
        if len(value) > 1:
            raise JavaError("joptsimple.MultipleArgumentsForOptionException",
                            f"Found multiple arguments for option {name}, but you asked for only one")
        value = value[0] if value else None
    return default if value is None else value


def int_value_of(name: str, value, default: int) -> int:
    """valueOf of an Integer option: jopt converts the text only when the tool reads it."""
    value = value_of(name, value)
    if value is None:
        return default
    if isinstance(value, int):
        return value
    text = str(value)
    if re.fullmatch(r"[+-]?\d+", text) and -2**31 <= int(text) < 2**31:
        return int(text)
    raise JavaError("joptsimple.OptionArgumentConversionException",
                    f"Cannot parse argument '{text}' of option {name}")



def java_file(arg: str) -> str:
    """java.io.File(String).toString(): duplicate and trailing slashes removed."""
    path = re.sub("/+", "/", arg)
    if len(path) > 1 and path.endswith("/"):
        path = path[:-1]
    return path


def absolute(path: str) -> str:
    """File.getAbsolutePath: relative paths are resolved against the working directory only."""
    if path.startswith("/"):
        return path
    cwd = os.getcwd()
    return f"{cwd}/{path}" if path else cwd


def file_name(path: str) -> str:
    return path.rsplit("/", 1)[-1]


def sibling(path: str, name: str) -> str:
    """new File(file.getAbsoluteFile.getParent, name)."""
    parent = absolute(path).rsplit("/", 1)[0] or "/"
    return f"{parent.rstrip('/')}/{name}" if parent != "/" else f"/{name}"


def parse_long(text: str) -> int:
    if re.fullmatch(r"[+-]?\d+", text) and -2**63 <= int(text) < 2**63:
        return int(text)
    raise JavaError(NUMBER_FORMAT, f'For input string: "{text}"')


def parse_int(text: str) -> int:
    if re.fullmatch(r"[+-]?\d+", text) and -2**31 <= int(text) < 2**31:
        return int(text)
    raise JavaError(NUMBER_FORMAT, f'For input string: "{text}"')


def start_offset_of(path: str) -> int:
    """file.getName.split("\\\\.")(0).toLong."""
    parts = java_split(file_name(path), r"\.")
    if not parts:
        raise JavaError("java.lang.ArrayIndexOutOfBoundsException", "Index 0 out of bounds for length 0")
    return parse_long(parts[0])


def substring_error(begin: int, end: int, length: int) -> JavaError:
    return JavaError(STRING_INDEX, f"begin {begin}, end {end}, length {length}")


def optional_long(value: int | None) -> str:
    return "OptionalLong.empty" if value is None else f"OptionalLong[{value}]"


def increment_sequence(sequence: int, increment: int) -> int:
    if sequence > INT_MAX - increment:
        return increment - (INT_MAX - sequence) - 1
    return sequence + increment


def decrement_sequence(sequence: int, decrement: int) -> int:
    if sequence < decrement:
        return INT_MAX - (decrement - sequence) + 1
    return sequence - decrement
