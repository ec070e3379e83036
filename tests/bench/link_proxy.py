#!/usr/bin/env python3
"""A network link on loopback, for the playback benchmark (bench_playback, which starts it):
a TCP relay in front of a local web server that delays every byte by half the round trip in
each direction and caps the throughput of all its connections together, as one path of that
round trip and bandwidth would. A new connection costs one round trip before its first byte
goes through, as TCP's handshake does. Python 3 stdlib only.

    link_proxy.py UPSTREAM_PORT [--rtt-ms 50] [--mbit 200]

Listens on an ephemeral port of 127.0.0.1 and prints it on stdout (one line) once listening.
Stops when its stdin closes (the benchmark holds the other end) or on SIGTERM.
"""

import argparse
import asyncio
import signal
import sys
import time


class Link:
    """One direction of the path: bytes leave it one after another at `rate` bytes a second
    (shared by every connection), then take `delay` seconds to arrive."""

    def __init__(self, rate, delay):
        self.rate, self.delay = rate, delay
        self.free_at = 0.0

    def arrival(self, n):
        start = max(time.monotonic(), self.free_at)
        self.free_at = start + n / self.rate
        return self.free_at + self.delay


async def pump(reader, writer, link, ready, window):
    """Relays reader to writer through `link`, holding at most `window` bytes in flight (TCP's
    flow control: a sender never has more than the receive window unacknowledged)."""
    queue = asyncio.Queue()
    in_flight = [0]
    drained = asyncio.Event()

    async def receive():
        while True:
            while in_flight[0] >= window:
                drained.clear()
                await drained.wait()
            data = await reader.read(65536)
            if not data:
                await queue.put(None)
                return
            in_flight[0] += len(data)
            await queue.put((link.arrival(len(data)), data))

    async def send():
        await ready.wait()
        while True:
            item = await queue.get()
            if item is None:
                try:
                    writer.write_eof()
                except (OSError, RuntimeError):
                    pass
                return
            at, data = item
            wait = at - time.monotonic()
            if wait > 0:
                await asyncio.sleep(wait)
            writer.write(data)
            await writer.drain()
            in_flight[0] -= len(data)
            drained.set()

    try:
        await asyncio.gather(receive(), send())
    except (ConnectionError, OSError, asyncio.CancelledError):
        pass
    finally:
        writer.close()


async def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("upstream", type=int)
    ap.add_argument("--rtt-ms", type=float, default=50)
    ap.add_argument("--mbit", type=float, default=200)
    a = ap.parse_args()
    rate = a.mbit * 1e6 / 8
    one_way = a.rtt_ms / 2000.0
    down, up = Link(rate, one_way), Link(rate, one_way)
    # A receive window of twice the path's bandwidth-delay product, as Linux's autotuning grows.
    window = max(65536, int(2 * rate * 2 * one_way))

    async def handle(client_reader, client_writer):
        try:
            up_reader, up_writer = await asyncio.open_connection("127.0.0.1", a.upstream)
        except OSError:
            client_writer.close()
            return
        handshake = asyncio.Event()  # the client's first bytes wait one round trip
        asyncio.get_running_loop().call_later(2 * one_way, handshake.set)
        opened = asyncio.Event()
        opened.set()
        try:
            await asyncio.gather(pump(client_reader, up_writer, up, handshake, window),
                                 pump(up_reader, client_writer, down, opened, window))
        except asyncio.CancelledError:
            pass

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    sys.stdout.write("%d\n" % server.sockets[0].getsockname()[1])
    sys.stdout.flush()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGTERM, stop.set)
    loop.add_reader(sys.stdin.fileno(), lambda: stop.set() if not sys.stdin.buffer.read1(1) else None)
    async with server:
        await stop.wait()
        for task in asyncio.all_tasks() - {asyncio.current_task()}:
            task.cancel()


if __name__ == "__main__":
    asyncio.run(main())
