"""Records left in their segment file: what a Fetch answer carries instead of their bytes when
it is large (Kafka's FileRecords), for the server to send with sendfile."""

from __future__ import annotations


class FileRegion:
    """`count` bytes of an open file from `offset`: a Fetch answer's records left in their
    segment, for the server to send with sendfile (Kafka's FileRecords) instead of holding
    them. The protocol layer only counts them; whoever writes the frame closes `file`."""

    __slots__ = ("file", "offset", "count")

    def __init__(self, file, offset: int, count: int):
        self.file, self.offset, self.count = file, offset, count

    def __len__(self) -> int:
        return self.count

    def close(self) -> None:
        self.file.close()
