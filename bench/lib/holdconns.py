#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Many concurrent TCP connections that stay open, for bench/memory.

  holdconns.py server PORT NPORTS
      listen on PORT..PORT+NPORTS-1; accept everything; read whatever
      arrives (so that each connection has a reader, as caad's observer
      needs to list it); keep every connection open until killed.
  holdconns.py client ADDR PORT NPORTS N
      open N connections spread over the ports, write 100 bytes on each,
      print "ready N FAILED SECONDS", then on each line of stdin:
      "touch" writes 100 bytes on every connection again and prints
      "touched"; "quit" (or EOF) closes them all and exits.

tests/tools/churn.c makes short connections that close at once; caad's
table only holds open ones, so its size at N flows needs N held open.
A process holds at most PER_PROCESS connections (RLIMIT_NOFILE's hard
limit may be low and not raisable without CAP_SYS_RESOURCE): bench/memory
runs several pairs for more.
"""
import os
import resource
import select
import socket
import sys
import time

PAYLOAD = b'caad bench memory' + b'.' * 83  # 100 bytes


PER_PROCESS = 15000


def raise_nofile(n):
    """Soft RLIMIT_NOFILE up to the hard limit, for n connections."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = n + 256 if hard == resource.RLIM_INFINITY else min(hard, n + 256)
    if soft != resource.RLIM_INFINITY and soft < want:
        resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
    if want < n + 64:
        raise SystemExit(f'error RLIMIT_NOFILE hard limit {hard} is too low for {n} connections')


def server(port, nports):
    raise_nofile(PER_PROCESS)
    ep = select.epoll()
    listeners = {}
    for p in range(port, port + nports):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind(('0.0.0.0', p))
        s.listen(4096)
        s.setblocking(False)
        listeners[s.fileno()] = s
        ep.register(s.fileno(), select.EPOLLIN)
    conns = {}
    print('listening', flush=True)
    while True:
        for fd, ev in ep.poll(1.0, 4096):
            if fd in listeners:
                while True:
                    try:
                        c, _ = listeners[fd].accept()
                    except BlockingIOError:
                        break
                    c.setblocking(False)
                    conns[c.fileno()] = c
                    ep.register(c.fileno(), select.EPOLLIN)
            else:
                c = conns.get(fd)
                if c is None:
                    continue
                try:
                    data = c.recv(4096)
                except BlockingIOError:
                    continue
                except OSError:
                    data = b''
                if not data:
                    ep.unregister(fd)
                    conns.pop(fd).close()


def client(addr, port, nports, n):
    raise_nofile(n)
    socks, failed = [], 0
    t0 = time.monotonic()
    for i in range(n):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            s.connect((addr, port + i % nports))
            s.sendall(PAYLOAD)
            socks.append(s)
        except OSError as e:
            s.close()
            failed += 1
            if failed > n // 100 + 10:
                print(f'error {failed} of {i + 1} connections failed, last: {e}', flush=True)
                return 1
    print(f'ready {len(socks)} {failed} {time.monotonic() - t0:.1f}', flush=True)
    for line in sys.stdin:
        cmd = line.strip()
        if cmd == 'touch':
            for s in socks:
                try:
                    s.sendall(PAYLOAD)
                except OSError:
                    pass
            print('touched', flush=True)
        elif cmd == 'quit':
            break
    for s in socks:
        s.close()
    return 0


def main():
    a = sys.argv[1:]
    if len(a) == 3 and a[0] == 'server':
        return server(int(a[1]), int(a[2]))
    if len(a) == 5 and a[0] == 'client':
        return client(a[1], int(a[2]), int(a[3]), int(a[4]))
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == '__main__':
    sys.exit(main())
