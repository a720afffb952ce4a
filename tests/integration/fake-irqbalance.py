#!/usr/bin/env python3
# A stand-in for irqbalance's control socket (irqbalance >= 1.2 with its UI
# socket): one request per connection, root only (SCM_CREDENTIALS), "setup"
# answered with the banned IRQs, "settings ban irqs A B|NONE" replacing them.
# Usage: fake-irqbalance.py SOCKET STATEFILE [IRQ...]; the banned list is
# written to STATEFILE (space-separated) after every change.
import os, socket, struct, sys

path, state = sys.argv[1], sys.argv[2]
banned = [int(x) for x in sys.argv[3:]]

def save():
    tmp = state + ".tmp"
    with open(tmp, "w") as f:
        f.write(" ".join(str(i) for i in banned) + "\n")
    os.rename(tmp, state)

save()
srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
srv.bind(path)
srv.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)
srv.listen(4)
while True:
    c, _ = srv.accept()
    msg, anc, _, _ = c.recvmsg(500, socket.CMSG_SPACE(12))
    uid = None
    for level, typ, data in anc:
        if level == socket.SOL_SOCKET and typ == socket.SCM_CREDENTIALS:
            _, uid, _ = struct.unpack("iII", data[:12])
    if uid != 0:  # irqbalance ignores anyone but root
        c.close()
        continue
    req = msg.decode()
    if req == "setup":
        c.sendall(("SLEEP 10 " + "".join("IRQ %d LOAD 0 DIFF 0 CLASS 3 " % i for i in banned)
                   + "BANNED 00000000").encode())
    elif req.startswith("settings ban irqs "):
        rest = req[len("settings ban irqs "):]
        banned = [] if rest.startswith("NONE") else [int(x) for x in rest.split()]
        save()
    c.close()
