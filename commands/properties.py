"""Java properties as Kafka's tools read them: `.properties` files and `key=value` options.

- load_properties(path): Utils.loadProps — java.util.Properties.load from an InputStream
  (ISO-8859-1, `\\uXXXX` escapes, `=`/`:`/space separators, continuation lines), through the
  javaproperties package. Failures raise PropertiesError with the first line Java prints.
- parse_key_value_args(args): CommandLineUtils.parseKeyValueArgs — split at the first `=`;
  `key` and `key=` give an empty value; later duplicates win.
- merge_option(props, key, value, given): CommandLineUtils.maybeMergeOptions — an option given
  on the command line wins; otherwise a value already in the properties (from a config file or
  a `--*-property`) is kept; otherwise the option's default is used.
- layered(file, args): a config file overlaid with `key=value` arguments, the order every
  tool uses for `--X.config FILE` + `--X-property k=v` (the arguments win).
"""

from __future__ import annotations

from typing import Iterable, Mapping

from .errors import PropertiesError


def load_properties(path: str) -> dict[str, str]:
    """The properties in a file, as java.util.Properties.load(InputStream) reads them."""
    import javaproperties

    try:
        with open(path, "rb") as f:  # binary: javaproperties decodes Latin-1, as Java does
            return dict(javaproperties.load(f))
    except FileNotFoundError:
        raise PropertiesError(f"java.nio.file.NoSuchFileException: {path}") from None
    except PermissionError:
        raise PropertiesError(f"java.nio.file.AccessDeniedException: {path}") from None
    except IsADirectoryError:
        raise PropertiesError("java.io.IOException: Is a directory") from None
    except javaproperties.InvalidUEscapeError:
        raise PropertiesError("java.lang.IllegalArgumentException: Malformed \\uxxxx encoding.") from None
    except OSError as exc:
        raise PropertiesError(f"java.io.IOException: {exc.strerror}") from None


def parse_key_value_args(args: Iterable[str]) -> dict[str, str]:
    """`key=value` strings to a dict, split at the first `=` (a missing value is empty)."""
    props: dict[str, str] = {}
    for arg in args:
        key, _, value = arg.partition("=")
        props[key] = value
    return props


def layered(config_file: str | None, args: Iterable[str] = ()) -> dict[str, str]:
    """Properties from `config_file` (if given), overlaid with `key=value` arguments."""
    props = load_properties(config_file) if config_file is not None else {}
    props.update(parse_key_value_args(args))
    return props


def merge_option(props: dict[str, str], key: str, value, given: bool) -> None:
    """maybeMergeOptions: set `key` from an option's value unless the option was not given
    and the properties already have the key. A None value removes the key."""
    if given or key not in props:
        if value is None:
            props.pop(key, None)
        else:
            props[key] = java_string(value)


def merge_options(props: dict[str, str], options: Iterable[tuple[str, object, object]]) -> dict[str, str]:
    """merge_option for each (key, explicit value or None, default), in order."""
    for key, explicit, default in options:
        merge_option(props, key, default if explicit is None else explicit, explicit is not None)
    return props


def java_string(value) -> str:
    """How Java's toString() prints an option value (booleans in lower case)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


JAVA_WHITESPACE = "".join(map(chr, range(33)))  # what String.trim() removes: every char <= ' '


def java_trim(text: str) -> str:
    return text.strip(JAVA_WHITESPACE)


def java_bool(props: Mapping[str, str], key: str, default: bool = False) -> bool:
    """A reader-style boolean: true only if the trimmed value equals "true", any case."""
    if key not in props:
        return default
    return java_trim(props[key]).lower() == "true"
