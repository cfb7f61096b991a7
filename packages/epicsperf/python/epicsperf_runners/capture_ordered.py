"""Ordered flushes for the Python capture writers (capture_file.py), the policy of
src/capture/ordered.ts: h5py writes the file through OrderedFile (its "fileobj" driver), which
holds HDF5's writes into the part of the file the last commit left and lets commit() put them
on disk in a safe order, so a process killed during a flush leaves the previous flush readable.

Writes beyond that old end go out at once (nothing points there until the held ones land);
reads see the held writes. commit(): fsync the new space, then the superblock (offset 0), the
other in-place writes in their order, the object headers (OHDR, OCHK) last, fsync."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from _typeshed import ReadableBuffer, WriteableBuffer

PAGE = 64 * 1024


class OrderedFile:
    """A binary file object for h5py.File(fileobj, ...): seek, tell, readinto, write, truncate, flush."""

    def __init__(self, path: str, force: bool) -> None:
        flags = os.O_RDWR | os.O_CREAT | (os.O_TRUNC if force else os.O_EXCL)
        self.fd = os.open(path, flags, 0o644)
        self.pos = 0
        self.old_size = 0           # the end of the file as the last commit left it
        self.size = 0               # the file's size as HDF5 sees it
        self.pending: list[tuple[int, bytes]] = []  # (position, bytes) held in-place writes, in order
        self.pages: dict[int, list[int]] = {}  # page -> indexes in pending
        self.fresh = False          # something was written beyond old_size since the last commit
        self.failure: OSError | None = None  # the first write that failed (a full disk, a file-size limit)

    # --- the file object h5py calls ---

    def seek(self, pos: int, whence: int = 0) -> int:
        self.pos = pos if whence == 0 else self.pos + pos if whence == 1 else self.size + pos
        return self.pos

    def tell(self) -> int:
        return self.pos

    def readable(self) -> bool:
        return True

    def writable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def readinto(self, buf: WriteableBuffer) -> int:
        view = memoryview(buf).cast("B")
        pos, length = self.pos, len(view)
        n = os.preadv(self.fd, [view], pos)
        if n < length:
            view[n:] = bytes(length - n)  # past the end on disk: zeros, as HDF5's own driver reads
        end = pos + n
        hits: set[int] = set()
        for p in range(pos // PAGE, (pos + max(0, length - 1)) // PAGE + 1):
            hits.update(self.pages.get(p, ()))
        for i in sorted(hits):
            wpos, data = self.pending[i]
            a, b = max(wpos, pos), min(wpos + len(data), pos + length)
            if a < b:
                view[a - pos:b - pos] = data[a - wpos:b - wpos]
                end = max(end, b)
        self.pos = pos + (end - pos)
        return end - pos

    def read(self, n: int | None = -1) -> bytes:
        buf = bytearray(max(0, self.size - self.pos) if n is None or n < 0 else n)
        return bytes(buf[:self.readinto(buf)])

    def write(self, data: ReadableBuffer) -> int:
        view = memoryview(data).cast("B")
        pos, length = self.pos, len(view)
        self.pos += length
        self.size = max(self.size, self.pos)
        if pos >= self.old_size and self.failure is None:
            # new space: nothing points here yet, so it goes out now, in order
            self.fresh = True
            try:
                done = 0
                while done < length:
                    done += os.pwrite(self.fd, view[done:], pos + done)
            except OSError as err:
                self.failure = self.failure or err
                raise
            return length
        # in place (or after a failure, when nothing reaches the disk any more): held
        i = len(self.pending)
        self.pending.append((pos, bytes(view)))
        for p in range(pos // PAGE, (pos + max(0, length - 1)) // PAGE + 1):
            self.pages.setdefault(p, []).append(i)
        return length

    def truncate(self, size: int | None = None) -> int:
        size = self.pos if size is None else size
        self.size = size
        if size >= self.old_size and self.failure is None:
            try:
                os.ftruncate(self.fd, size)
            except OSError as err:
                self.failure = self.failure or err
                raise
        return size

    def flush(self) -> None:
        pass  # commit() puts the held writes on disk, once HDF5 has written all of a flush

    # --- the capture writer's side ---

    def commit(self, fsync: bool = True) -> None:
        """Put the held writes on disk in the safe order; raises the write that failed, if any."""
        if self.failure is not None:
            raise self.failure
        held, self.pending, self.pages = self.pending, [], {}
        try:
            if fsync and self.fresh:
                os.fsync(self.fd)
            header = [d[:4] in (b"OHDR", b"OCHK") for _, d in held]
            order = ([w for w in held if w[0] == 0]
                     + [w for w, h in zip(held, header) if w[0] != 0 and not h]
                     + [w for w, h in zip(held, header) if w[0] != 0 and h])
            for pos, data in order:
                done = 0
                while done < len(data):
                    done += os.pwrite(self.fd, memoryview(data)[done:], pos + done)
            if fsync:
                os.fsync(self.fd)
        except OSError as err:
            self.failure = err
            raise
        self.fresh = False
        self.old_size = os.fstat(self.fd).st_size
        self.size = max(self.size, self.old_size)

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1
