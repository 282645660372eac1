"""The broker's share of a console-producer run: the Produce requests pk-console-producer sends
for a file, captured once and then replayed with no client work at all.

    python bench/replay_produce.py capture BOOTSTRAP TOPIC FILE FRAMES   (keyed lines, TAB)
    python bench/replay_produce.py replay BOOTSTRAP FRAMES [IN_FLIGHT]

`capture` runs pk's console producer in this process, non-idempotent (so that its requests
carry no producer id or sequence and can be sent again), and writes every Produce request's
frame to FRAMES as sent. `replay` sends those frames on one connection, IN_FLIGHT (default 5,
Kafka's max.in.flight.requests.per.connection) at a time, reading each answer: what is left
is the broker's own time for the requests that Kafka's console-producer settings (16 KB
batches) make, a floor that no client sending those batches can go under. bench/remote.py
prints it beside the producers.
"""

from __future__ import annotations

import mmap
import socket
import struct
import sys


def capture(bootstrap: str, topic: str, path: str, frames: str) -> None:
    import pk.commands.backends.wire_produce as wire_produce
    from pk.cli.console_producer import main

    send = wire_produce._send_pieces
    out = open(frames, "wb")

    def recorded(sock, pieces) -> None:
        out.write(b"".join(bytes(p) for p in pieces))
        send(sock, pieces)

    wire_produce._send_pieces = recorded
    sys.argv = ["pk-console-producer", "--bootstrap-server", bootstrap, "--topic", topic,
                "--reader-property", "parse.key=true", "--reader-property", "file=" + path,
                "--producer-property", "enable.idempotence=false"]
    try:
        main()
    except SystemExit as exc:
        if exc.code:
            raise
    finally:
        out.close()


def replay(bootstrap: str, frames: str, in_flight: int = 5) -> int:
    """Send the frames, at most in_flight unanswered; returns how many were answered."""
    host, port = bootstrap.rsplit(":", 1)
    sock = socket.create_connection((host, int(port)))
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    answers = sock.makefile("rb")
    with open(frames, "rb") as f:
        data = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    view = memoryview(data)
    pos = waiting = answered = 0
    while pos < len(view) or waiting:
        if pos < len(view) and waiting < in_flight:
            size = struct.unpack_from(">i", view, pos)[0] + 4
            sock.sendall(view[pos:pos + size])
            pos += size
            waiting += 1
            continue
        size = struct.unpack(">i", answers.read(4))[0]
        answers.read(size)
        waiting -= 1
        answered += 1
    view.release()
    data.close()
    sock.close()
    return answered


if __name__ == "__main__":
    if sys.argv[1] == "capture":
        capture(*sys.argv[2:6])
    else:
        replay(sys.argv[2], sys.argv[3], int(sys.argv[4]) if len(sys.argv) > 4 else 5)
