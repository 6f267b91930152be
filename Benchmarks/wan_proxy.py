#!/usr/bin/env python3
"""A wide-area link in user space, for benchmark scenario 9: a TCP proxy on 127.0.0.1 that forwards to
TARGET with a one-way delay and a bandwidth limit per direction (this kernel has no `tc netem`).

Usage: wan_proxy.py --target HOST:PORT [--delay SECONDS] [--rate BITS_PER_SECOND]

Each direction is one link shared by every connection, as a home line is: a chunk read at time t starts
to go out when the link is free (not before t), takes len × 8 / rate seconds to go out, and arrives
--delay seconds after it went out. Chunks wait in a delay line, so the delay is paid once per trip, not
once per chunk. A new connection pays one round trip before its first byte leaves, as TCP's handshake does
(the kernel completes the local handshake at once). Prints "port N" once listening; exits on SIGTERM or
when standard input closes.
"""
import argparse
import asyncio
import signal
import socket
import sys

parser = argparse.ArgumentParser()
parser.add_argument("--target", required=True)
parser.add_argument("--delay", type=float, default=0.025)
parser.add_argument("--rate", type=float, default=20e6)
options = parser.parse_args()
target_host, target_port = options.target.rsplit(":", 1)

# Small reads keep the serialisation time of one chunk (about 6.5 ms at 20 Mbit/s) well under the delay.
CHUNK = 16 * 1024
# Bytes read from one side and not yet delivered, per connection and direction, before reading pauses.
QUEUED_LIMIT = 4 * 1024 * 1024


class Link:
    """One direction of the line: when it is next free to send."""

    def __init__(self):
        self.free_at = 0.0

    def schedule(self, now, size):
        """The time a chunk of `size` bytes read at `now` arrives at the other end."""
        start = max(now, self.free_at)
        self.free_at = start + size * 8 / options.rate
        return self.free_at + options.delay


class Waker:
    """Sleeps until a time, early by how late this process's timers have been waking up.

    Measured here, a timer of this proxy, started by a benchmark, fired about 2 ms late on a loaded machine (0.3 ms
    run from a shell), which added 4 ms to every round trip; the lateness is learnt as it goes (a running average).
    """

    def __init__(self):
        self.lateness = 0.0

    async def sleep_until(self, when):
        loop = asyncio.get_running_loop()
        wait = when - self.lateness - loop.time()
        if wait <= 0:
            return
        await asyncio.sleep(wait)
        late = loop.time() - (when - self.lateness)
        self.lateness = min(0.005, max(0.0, 0.9 * self.lateness + 0.1 * late))


waker = Waker()


upstream_link, downstream_link = Link(), Link()


async def pump(reader, writer, link, opened_at):
    """Copies one direction of a connection through `link`, then passes on the end of the stream."""
    loop = asyncio.get_running_loop()
    line = asyncio.Queue()
    queued = 0
    drained = asyncio.Event()
    drained.set()

    async def deliver():
        nonlocal queued
        while True:
            arrival, data = await line.get()
            await waker.sleep_until(arrival)
            if data is None:
                if writer.can_write_eof():
                    writer.write_eof()
                return
            writer.write(data)
            await writer.drain()
            queued -= len(data)
            if queued <= QUEUED_LIMIT:
                drained.set()

    delivering = asyncio.create_task(deliver())
    try:
        while True:
            data = await reader.read(CHUNK)
            now = max(loop.time(), opened_at)
            if not data:
                line.put_nowait((now + options.delay, None))
                break
            queued += len(data)
            line.put_nowait((link.schedule(now, len(data)), data))
            if queued > QUEUED_LIMIT:
                drained.clear()
                await drained.wait()
        await delivering
    except (ConnectionError, OSError):
        delivering.cancel()
        writer.close()


async def connection(client_reader, client_writer):
    loop = asyncio.get_running_loop()
    # SYN out and SYN-ACK back: the client's first byte leaves one round trip after it connected.
    opened_at = loop.time() + 2 * options.delay
    try:
        server_reader, server_writer = await asyncio.open_connection(target_host, int(target_port))
    except OSError:
        client_writer.close()
        return
    for writer in (client_writer, server_writer):
        writer.get_extra_info("socket").setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    try:
        await asyncio.gather(pump(client_reader, server_writer, upstream_link, opened_at),
                             pump(server_reader, client_writer, downstream_link, opened_at),
                             return_exceptions=True)
    except asyncio.CancelledError:
        pass   # the proxy is stopping
    for writer in (client_writer, server_writer):
        writer.close()


async def main():
    loop = asyncio.get_running_loop()
    server = await asyncio.start_server(connection, "127.0.0.1", 0)
    stop = asyncio.Event()
    loop.add_signal_handler(signal.SIGTERM, stop.set)
    try:
        loop.add_reader(sys.stdin.fileno(), lambda: stop.set() if not sys.stdin.buffer.read1(4096) else None)
    except OSError:
        pass   # standard input is not a pipe (a file, /dev/null): SIGTERM only
    print(f"port {server.sockets[0].getsockname()[1]}", flush=True)
    async with server:
        await stop.wait()


asyncio.run(main())
