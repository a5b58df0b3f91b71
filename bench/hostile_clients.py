#!/usr/bin/env python3
"""Clients that try to lock others out of an NBD server, for bench/nbd-hardening.

  hostile_clients.py HOST PORT [IDLE] [NONREADERS] [BIGREADERS]

Opens IDLE connections that never send a byte of handshake, NONREADERS clients that pipeline 1 MiB
reads and never read a reply, and BIGREADERS that ask for 32 MiB reads and never read them; holds
them until stdin closes (or the process is killed). Prints READY once all are in place.
"""
import socket, struct, sys, threading, time

NBDMAGIC = 0x4e42444d41474943
IHAVEOPT = 0x49484156454F5054
OPT_GO = 7
REP_ACK = 1

def go(host, port):
    s = socket.create_connection((host, port))
    s.recv(18, socket.MSG_WAITALL)
    s.sendall(struct.pack(">I", 3))
    name = b"raid"
    data = struct.pack(">I", len(name)) + name + struct.pack(">H", 0)
    s.sendall(struct.pack(">QII", IHAVEOPT, OPT_GO, len(data)) + data)
    while True:
        hdr = s.recv(20, socket.MSG_WAITALL)
        _, _, typ, length = struct.unpack(">QIII", hdr)
        if length:
            s.recv(length, socket.MSG_WAITALL)
        if typ == REP_ACK:
            return s
        if typ & 0x80000000:
            raise SystemExit("GO refused: 0x%x" % typ)

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
