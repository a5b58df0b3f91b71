#!/usr/bin/env python3
"""Clients that try to lock others out of an NBD server, for bench/nbd-hardening.

  hostile_clients.py HOST PORT [IDLE] [NONREADERS] [BIGREADERS]

Opens IDLE connections that never send a byte of handshake, NONREADERS clients that pipeline 1 MiB
reads and never read a reply, and BIGREADERS that ask for 32 MiB reads and never read them; holds
them until stdin closes (or the process is killed). Prints READY once all are in place.
"""
import os, socket, struct, sys, threading, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lockout_attacks import go  # noqa: E402  (the same NBD_OPT_GO handshake)


def flood(s, size, count):
    try:
        for i in range(count):
            s.sendall(struct.pack(">IHHQQI", 0x25609513, 0, 0, i, (i * size) % (512 << 20), size))
    except OSError:
        pass  # the server stopped reading us (back-pressure) or hung up

def main():
    host, port = sys.argv[1], int(sys.argv[2])
    idle_n = int(sys.argv[3]) if len(sys.argv) > 3 else 200
    nonreaders = int(sys.argv[4]) if len(sys.argv) > 4 else 4
    big = int(sys.argv[5]) if len(sys.argv) > 5 else 8
    keep = []
    for _ in range(idle_n):
        try:
            keep.append(socket.create_connection((host, port)))
        except OSError:
            pass
    time.sleep(1.2)  # silent past the grace in which raid serve keeps a client of the same user
    for n, size, count in ((nonreaders, 1 << 20, 100000), (big, 32 << 20, 1000)):
        for _ in range(n):
            s = go(host, port)
            keep.append(s)
            threading.Thread(target=flood, args=(s, size, count), daemon=True).start()
    print("READY", flush=True)
    sys.stdin.read()

if __name__ == "__main__":
    main()
