"""Small file-system primitives the engine builds its crash safety on."""

from __future__ import annotations

import contextlib
import fcntl
import os

from .errors import PathOutsideDataDirError


def inside(root: str, *parts: str) -> str:
    """`root` joined with `parts`, refused unless it resolves inside `root`.

    The second line of defence behind name validation: every path the engine creates or
    removes (partition directories and their delete markers, topic metadata, group files,
    checkpoints) goes through here, so neither a `..`/absolute part nor a symlink (a topic
    directory pointing elsewhere) makes it write or delete outside the data directory. Costs a
    realpath, so it guards creation and removal, not the per-record read and append paths.
    """
    path = os.path.join(root, *parts)
    base = os.path.realpath(root)
    resolved = os.path.realpath(path)
    if resolved != base and not resolved.startswith(base.rstrip(os.sep) + os.sep):
        raise PathOutsideDataDirError(f"Refusing to use {path}: it resolves to {resolved}, outside {base}")
    return path


_SYNC_FILE_RANGE_WRITE = 2  # linux/fs.h: start writing the range out, do not wait for it
_libc = None  # loaded at the first writeback: ctypes is not worth importing for short runs


def start_writeback(fd: int, offset: int, length: int) -> None:
    """Ask the kernel to start writing a range of a file to the disk now, without waiting for it
    (Linux's sync_file_range with SYNC_FILE_RANGE_WRITE). A writer that fsyncs at its end (the
    bundled engine's producer, at close) then finds most of its data written already, instead of
    waiting for all of it there: the disk works while the producer encodes. Only a hint: where
    the call does not exist or fails, the fsync does all the work as before."""
    global _libc
    if _libc is None:
        try:
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            call = libc.sync_file_range
            call.argtypes = (ctypes.c_int, ctypes.c_longlong, ctypes.c_longlong, ctypes.c_uint)
            _libc = call
        except (OSError, AttributeError, ImportError):
            _libc = False
    if _libc:
        _libc(fd, offset, length, _SYNC_FILE_RANGE_WRITE)


def fsync_dir(path: str) -> None:
    """Make a rename or unlink inside `path` durable."""
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def atomic_write(path: str, data: bytes, *, durable: bool = True) -> None:
    """Replace `path` with `data` so that readers and crashes see the old or the new file whole.

    Write a temp file beside it, fsync, rename over, fsync the directory.
    """
    directory = os.path.dirname(path) or "."
    # A short temp name: `path` itself may already be near the 255-byte name limit.
    tmp = os.path.join(directory, f".tmp.{os.getpid()}.{os.urandom(4).hex()}")
    try:
        with open(tmp, "wb") as f:
            f.write(data)
            if durable:
                f.flush()
                os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):  # a full disk must not also keep the partial temp file
            os.unlink(tmp)
        raise
    if durable:
        fsync_dir(directory)


def file_stamp(path: str) -> tuple | None:
    """What says a kept file changed since it was read: (mtime, size, inode), None while it
    does not exist. pk's stores replace their files with atomic_write, so a rewrite is a new
    inode even within one mtime tick."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    return (st.st_mtime_ns, st.st_size, st.st_ino)


@contextlib.contextmanager
def locked(path: str, *, shared: bool = False):
    """Hold an OS file lock (flock) on `path` for the duration of the block.

    flock locks are released by the kernel when the holder dies, so a killed process never
    leaves a partition or the topic table locked.
    """
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_SH if shared else fcntl.LOCK_EX)
        yield fd
    finally:
        os.close(fd)  # closing the last descriptor drops the lock
