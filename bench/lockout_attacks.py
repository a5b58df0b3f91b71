#!/usr/bin/env python3
"""The lock-out attacks of the issue "raid serve and its side files are safe on a shared machine",
for bench/lockouts. Every attacker comes back as soon as it is closed or refused, so the pressure
lasts for the whole run.

  lockout_attacks.py HOST PORT idle N       # N clients that finish the handshake (NBD_OPT_GO) and go silent
  lockout_attacks.py HOST PORT trickle N    # N clients sending a 1 MiB write's payload a byte a second
  lockout_attacks.py HOST PORT silent RATE  # RATE connections a second that never send a byte

Prints READY once the first wave is in place; runs until stdin closes (or the process is killed),
then prints how many connections it made and how many the server closed or refused.
"""
import socket, struct, sys, threading, time

IHAVEOPT = 0x49484156454F5054
OPT_GO = 7
REP_ACK = 1
REQUEST_MAGIC = 0x25609513
CMD_WRITE = 1

stop = threading.Event()
made = [0]
closed = [0]
lock = threading.Lock()


def count(which):
    with lock:
        which[0] += 1


def go(host, port):
    s = socket.create_connection((host, port), timeout=30)
    count(made)
    if len(s.recv(18, socket.MSG_WAITALL)) < 18:
        raise OSError("closed in the greeting")
    s.sendall(struct.pack(">I", 3))
    name = b"raid"
    data = struct.pack(">I", len(name)) + name + struct.pack(">H", 0)
    s.sendall(struct.pack(">QII", IHAVEOPT, OPT_GO, len(data)) + data)
    while True:
        hdr = s.recv(20, socket.MSG_WAITALL)
        if len(hdr) < 20:
            raise OSError("closed in the handshake")
        _, _, typ, length = struct.unpack(">QIII", hdr)
        if length:
            s.recv(length, socket.MSG_WAITALL)
        if typ == REP_ACK:
            s.settimeout(None)
            return s
        if typ & 0x80000000:
            raise OSError("GO refused: 0x%x" % typ)


def persistent(host, port, first, hold):
    """One attacker slot: connect and finish the handshake, then hold(s) until the server closes
    it; again, for as long as the run lasts."""
    while not stop.is_set():
        try:
            s = go(host, port)
            hold(s, first)
            s.close()
        except OSError:
            pass
        first.set()
        count(closed)
        time.sleep(0.1)


def idle(s, first):
    first.set()
    s.recv(1)  # silent until the server closes us


def trickle(s, first):
    s.sendall(struct.pack(">IHHQQI", REQUEST_MAGIC, 0, CMD_WRITE, 1, 0, 1 << 20))
    first.set()
    while not stop.is_set():
        s.sendall(b"x")
        time.sleep(1)


def silent(host, port, rate):
    keep = []
    while not stop.is_set():
        try:
            keep.append(socket.create_connection((host, port)))
            count(made)
        except OSError:
            count(closed)
        if len(keep) > 4000:
            keep.pop(0).close()
        time.sleep(1.0 / rate)


def main():
    host, port, mode, n = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
    if mode == "silent":
        threading.Thread(target=silent, args=(host, port, n), daemon=True).start()
        time.sleep(1)
    else:
        hold = {"idle": idle, "trickle": trickle}[mode]
        ready = []
        for _ in range(n):
            first = threading.Event()
            ready.append(first)
            threading.Thread(target=persistent, args=(host, port, first, hold), daemon=True).start()
        for first in ready:
            first.wait(30)
    print("READY", flush=True)
    sys.stdin.read()
    stop.set()
    print("made %d connections, %d closed or refused by the server" % (made[0], closed[0]), flush=True)


if __name__ == "__main__":
    main()
