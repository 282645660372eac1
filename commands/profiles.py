"""Saved cluster profiles: named clusters kept as Kafka `.properties` files.

A profile is `$XDG_CONFIG_HOME/pk/NAME.properties` (default `~/.config/pk/`), in Kafka's own
properties format so it also serves as a `--command-config` for Kafka's tools: either
`bootstrap.servers=` plus any client configuration (security.protocol, sasl.*, ssl.*), or pk's
own `pk.data.dir=` for the bundled engine (a key Kafka's clients ignore with a warning). The
current profile's name is kept in the file `current` beside them.

Files hold secrets, so they are written 0600 in a 0700 directory and a rewrite never widens a
file's mode; a profile readable by group or others is used with one warning, as ssh warns of a
wide key file. Names are restricted to a charset with no path separator, so a name can never
reach outside the directory.
"""

from __future__ import annotations

import os
import re
import stat
import sys

from .properties import load_properties

BOOTSTRAP_KEY = "bootstrap.servers"
DATA_DIR_KEY = "pk.data.dir"  # pk's own key: the bundled engine's data directory
CURRENT_FILE = "current"
SUFFIX = ".properties"
NAME_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
MASK = "********"

# A key is secret when one of its words (split at '.', '-', '_') is one of these, or it
# contains "password" or "secret" anywhere (ssl.key.password, sasl.jaas.config,
# sasl.oauthbearer.client.credentials.client.secret, ssl.keystore.key, a delegation token).
_SECRET_WORDS = frozenset({"password", "passwd", "secret", "token", "key", "jaas", "credentials",
                           "credential", "auth", "pass"})
_SECRET_PARTS = ("password", "secret")


class ProfileError(Exception):
    """A profile cannot be used or written: str() is the one line the CLI prints."""


def config_dir() -> str:
    """$XDG_CONFIG_HOME/pk, else ~/.config/pk (the XDG spec ignores a relative XDG_CONFIG_HOME)."""
    base = os.environ.get("XDG_CONFIG_HOME", "")
    if not os.path.isabs(base):
        base = os.path.join(os.path.expanduser("~"), ".config")
    return os.path.join(base, "pk")


def check_name(name: str) -> str:
    if not NAME_PATTERN.fullmatch(name or ""):
        raise ProfileError(f"Invalid profile name '{name}': use letters, digits, '.', '_' and '-' "
                           f"(at most 64, not starting with '.', '_' or '-')")
    return name


def path_of(name: str) -> str:
    return os.path.join(config_dir(), check_name(name) + SUFFIX)


def names() -> list[str]:
    try:
        entries = os.listdir(config_dir())
    except OSError:
        return []
    return sorted(e[:-len(SUFFIX)] for e in entries
                  if e.endswith(SUFFIX) and NAME_PATTERN.fullmatch(e[:-len(SUFFIX)]))


class Profile:
    """A loaded profile (a plain class: a dataclass costs every tool's start-up a millisecond)."""

    __slots__ = ("name", "path", "props")

    def __init__(self, name: str, path: str, props: dict[str, str]):
        self.name, self.path, self.props = name, path, props

    @property
    def bootstrap(self) -> str | None:
        return self.props.get(BOOTSTRAP_KEY) or None

    @property
    def data_dir(self) -> str | None:
        return self.props.get(DATA_DIR_KEY) or None

    @property
    def client_props(self) -> dict[str, str]:
        """The client configuration beyond where the cluster is."""
        return {k: v for k, v in self.props.items() if k not in (BOOTSTRAP_KEY, DATA_DIR_KEY)}


def validate(props: dict[str, str]) -> None:
    """A profile names exactly one place: a cluster's bootstrap servers or a data directory."""
    bootstrap, data_dir = props.get(BOOTSTRAP_KEY, "").strip(), props.get(DATA_DIR_KEY, "").strip()
    if bootstrap and data_dir:
        raise ProfileError(f"A profile has either {BOOTSTRAP_KEY} or {DATA_DIR_KEY}, not both")
    if not bootstrap and not data_dir:
        raise ProfileError(f"A profile needs {BOOTSTRAP_KEY} (a cluster) or {DATA_DIR_KEY} (the bundled engine)")
    if data_dir and len(props) > 1:
        extra = sorted(k for k in props if k != DATA_DIR_KEY)
        raise ProfileError(f"A {DATA_DIR_KEY} profile takes no client configuration (found {', '.join(extra)})")


_warned: set[str] = set()


def warn_if_open(path: str) -> None:
    """One warning per file and process when group or others may read it."""
    try:
        mode = stat.S_IMODE(os.stat(path).st_mode)
    except OSError:
        return
    if mode & 0o077 and path not in _warned:
        _warned.add(path)
        sys.stderr.write(f"WARNING: profile file {path} is accessible by others (mode {mode:04o}); "
                         f"it may hold secrets: chmod 600 {path}\n")
        sys.stderr.flush()


def load(name: str, warn: bool = True) -> Profile:
    """The profile NAME; `warn=False` for shell completion, whose stderr lands on the terminal."""
    path = path_of(name)
    if not os.path.isfile(path):
        raise ProfileError(f"Profile '{name}' does not exist (pk-profile list shows them)")
    if warn:
        warn_if_open(path)
    try:
        props = load_properties(path)
    except Exception as exc:  # PropertiesError: one line, the file named
        raise ProfileError(f"Profile '{name}' cannot be read ({path}): {exc}") from None
    return Profile(name, path, props)


def _ensure_dir() -> str:
    folder = config_dir()
    if not os.path.isdir(folder):
        os.makedirs(folder, mode=0o700, exist_ok=True)
        os.chmod(folder, 0o700)  # makedirs' mode is filtered by the umask
    return folder


def render(props: dict[str, str]) -> str:
    """Kafka's properties format, one `key=value` a line, escaped only where
    java.util.Properties.load needs it (a value's `:` and `=` stay as typed, so the file
    reads as a user would write it); anything outside printable ASCII as `\\uXXXX`."""
    return "".join(f"{_escape(k, True)}={_escape(v, False)}\n" for k, v in props.items())


_CONTROL = {"\t": "\\t", "\n": "\\n", "\r": "\\r", "\f": "\\f", "\\": "\\\\"}


def _escape(text: str, key: bool) -> str:
    out = []
    for i, ch in enumerate(text):
        if ch in _CONTROL:
            out.append(_CONTROL[ch])
        elif (key and ch in " =:#!") or (not key and i == 0 and ch == " "):
            out.append("\\" + ch)  # a key's separators; a value's leading space (load skips it)
        elif " " <= ch <= "~":
            out.append(ch)
        else:
            data = ch.encode("utf-16-be")  # Java's chars: a surrogate pair beyond the BMP
            out.extend(f"\\u{int.from_bytes(data[n:n + 2], 'big'):04x}" for n in range(0, len(data), 2))
    return "".join(out)


def write_file(path: str, text: str) -> None:
    """Write `text` to `path` atomically, 0600 at most and never wider than the file it replaces."""
    try:
        mode = stat.S_IMODE(os.stat(path).st_mode) & 0o600
    except FileNotFoundError:
        mode = 0o600
    temp = f"{path}.{os.getpid()}.tmp"
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        os.fchmod(fd, mode)
        with os.fdopen(fd, "w", encoding="latin-1") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(temp, path)
    except BaseException:
        try:
            os.unlink(temp)
        except OSError:
            pass
        raise


def save(name: str, props: dict[str, str]) -> str:
    validate(props)
    _ensure_dir()
    path = path_of(name)
    write_file(path, render(props))
    return path


def delete(name: str) -> None:
    path = path_of(name)
    if not os.path.isfile(path):
        raise ProfileError(f"Profile '{name}' does not exist (pk-profile list shows them)")
    os.unlink(path)
    if current() == name:
        set_current(None)


def current() -> str | None:
    """The name `pk-profile use` saved, if it is still a profile."""
    try:
        with open(os.path.join(config_dir(), CURRENT_FILE), encoding="utf-8") as f:
            name = f.read().strip()
    except OSError:
        return None
    return name if NAME_PATTERN.fullmatch(name) else None


def set_current(name: str | None) -> None:
    path = os.path.join(config_dir(), CURRENT_FILE)
    if name is None:
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass
        return
    _ensure_dir()
    write_file(path, check_name(name) + "\n")


def chosen(explicit: str | None) -> str | None:
    """Which profile applies: --profile, else $PK_PROFILE, else the current profile. The
    current one is a saved default and yields to $PK_DATA_DIR (a shell or test that sets the
    data directory keeps it); --profile and $PK_PROFILE do not."""
    if explicit is not None:
        return explicit
    if os.environ.get("PK_PROFILE"):
        return os.environ["PK_PROFILE"]
    if os.environ.get("PK_DATA_DIR"):
        return None
    return current()


def is_secret(key: str) -> bool:
    lowered = key.lower()
    words = set(re.split(r"[._-]", lowered))
    return bool(words & _SECRET_WORDS) or any(part in lowered for part in _SECRET_PARTS)


def masked(props: dict[str, str]) -> dict[str, str]:
    return {k: (MASK if is_secret(k) and v else v) for k, v in props.items()}
