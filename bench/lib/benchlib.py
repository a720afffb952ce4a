# SPDX-License-Identifier: GPL-2.0-or-later
"""Shared pieces of caad's benchmarks (bench/affinity-matrix, observer,
reaction, memory): root check, the testbed lock, a netns/veth testbed of
the bench's own, cleanup on every exit, /proc/stat and TCP counter deltas,
iperf3 runs, caad runs, statistics and output files.

Only namespaces made here are touched: never the host's own NICs or IRQs
(except with affinity-matrix --nic, which the operator names). The one
global setting a bench may change (net.core.rps_sock_flow_entries,
kernel.bpf_stats_enabled) is saved first and restored on every exit.
"""
import argparse
import csv
import fcntl
import json
import math
import os
import platform
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

BENCH_DIR = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))
REPO = os.path.dirname(BENCH_DIR)
LOCK_PATH = '/tmp/caad-testbed.lock'
PROG = os.path.basename(sys.argv[0])
USER_HZ = os.sysconf('SC_CLK_TCK')


def log(msg):
    print(f'# {msg}', flush=True)


def warn(msg):
    print(f'{PROG}: warning: {msg}', file=sys.stderr, flush=True)


def die(msg, code=1):
    print(f'{PROG}: {msg}', file=sys.stderr, flush=True)
    sys.exit(code)


# ---- cleanup on every exit ------------------------------------------------

_cleanups = []


def at_cleanup(fn, *args):
    """Run fn(*args) on exit (normal, error, SIGINT/SIGTERM/SIGHUP), last registered first."""
    entry = (fn, args)
    _cleanups.append(entry)
    return entry


def cancel_cleanup(entry):
    """Drop a cleanup registered by at_cleanup() (its job was done)."""
    for i in range(len(_cleanups) - 1, -1, -1):
        if _cleanups[i] is entry:
            del _cleanups[i]
            return


def run_cleanups():
    while _cleanups:
        fn, args = _cleanups.pop()
        try:
            fn(*args)
        except Exception as e:  # keep cleaning up
            warn(f'cleanup {getattr(fn, "__name__", fn)}: {e}')


def _on_signal(signum, _frame):
    # SystemExit unwinds through finally blocks and then the cleanups in bench_main()
    print(f'{PROG}: got signal {signum}', file=sys.stderr, flush=True)
    raise SystemExit(128 + signum)


def install_signal_handlers():
    for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(s, _on_signal)


def bench_main(fn):
    """Run fn() with cleanups on every way out."""
    install_signal_handlers()
    rc = 0
    try:
        rc = fn() or 0
    except SystemExit as e:
        rc = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        if isinstance(e.code, str):
            print(e.code, file=sys.stderr)
    except KeyboardInterrupt:
        rc = 130
    finally:
        # a second signal during cleanup must not leave namespaces behind
        for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(s, signal.SIG_IGN)
        if rc and _cleanups:
            log(f'exiting ({rc}): stopping what runs, removing the namespaces, restoring settings')
        run_cleanups()
    sys.exit(rc)


# ---- preconditions --------------------------------------------------------

def require_root(what='network namespaces, RPS masks and BPF'):
    if os.geteuid() != 0:
        die(f'must run as root ({what}); try: sudo {sys.argv[0]} {" ".join(sys.argv[1:])}'.rstrip())


def require_tools(*tools):
    missing = [t for t in tools if not shutil.which(t)]
    if missing:
        die(f'missing {", ".join(missing)} (scripts/install-deps.sh installs them)')


def default_caad():
    for c in (os.environ.get('CAAD'),
              os.path.join(os.environ['CAAD_BUILD_ROOT'], 'src/caad/caad') if os.environ.get('CAAD_BUILD_ROOT') else None,
              os.path.join(REPO, 'build-bench/src/caad/caad'),
              os.path.join(REPO, 'build/src/caad/caad')):
        if c and os.access(c, os.X_OK):
            return c
    return os.path.join(REPO, 'build/src/caad/caad')


def newest_source():
    """(mtime, path) of the newest C source, header or BPF program of this
    tree: what a built binary must be newer than to contain it."""
    newest = (0.0, None)
    for top in ('src', 'include', 'bpf', 'bench'):
        for d, _, files in os.walk(os.path.join(REPO, top)):
            for name in files:
                if name.endswith(('.c', '.h')):
                    path = os.path.join(d, name)
                    try:
                        newest = max(newest, (os.stat(path).st_mtime, path))
                    except OSError:
                        pass
    return newest


def warn_if_stale(binary):
    """Say so when BINARY is older than a source of this tree: the figures
    would be of another build than the commit they are recorded with
    (bench/run-all rebuilds build-bench/; a bench run alone does not)."""
    try:
        built = os.stat(binary).st_mtime
    except OSError:
        return
    mtime, path = newest_source()
    if not path or mtime <= built:
        return
    d = os.path.dirname(os.path.abspath(binary))
    while d != '/' and not os.path.exists(os.path.join(d, 'build.ninja')):
        d = os.path.dirname(d)
    how = f'ninja -C {d}' if d != '/' else 'rebuild it'
    warn(f'{binary} is older than {os.path.relpath(path, REPO)}: it may not contain this tree\'s changes ({how})')


def check_caad(path):
    if not os.access(path, os.X_OK):
        die(f'caad binary not found at {path} (build it: meson setup build && ninja -C build, or pass --caad PATH)')
    warn_if_stale(path)
    return os.path.realpath(path)


# ---- the testbed lock -------------------------------------------------------

_lock_fd = None


def _ancestors():
    pids, pid = set(), os.getpid()
    while pid > 1:
        pids.add(pid)
        try:
            with open(f'/proc/{pid}/stat') as f:
                pid = int(f.read().rsplit(')', 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            break
    return pids


def _lock_holders(path):
    st = os.stat(path)
    want = (os.major(st.st_dev), os.minor(st.st_dev), st.st_ino)
    holders = set()
    with open('/proc/locks') as f:
        for line in f:
            fields = line.split()
            if '->' in fields or len(fields) < 6:
                continue  # a waiter, not a holder
            try:
                maj, mino, ino = fields[5].split(':')
                if (int(maj, 16), int(mino, 16), int(ino)) == want:
                    holders.add(int(fields[4]))
            except ValueError:
                continue
    return holders


def take_testbed_lock(path=LOCK_PATH, enabled=True):
    """flock the shared testbed lock for the rest of this process. Under an
    outer `flock LOCK ...` (an ancestor holds it) go on without waiting."""
    global _lock_fd
    if not enabled:
        return
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o666)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        if _lock_holders(path) & _ancestors():
            os.close(fd)
            log(f'testbed lock {path} is held by a parent of this process: going on')
            return
        log(f'waiting for the testbed lock {path} (another testbed user holds it)')
        fcntl.flock(fd, fcntl.LOCK_EX)
    _lock_fd = fd


# ---- CPUs -----------------------------------------------------------------

def parse_cpulist(s):
    cpus = set()
    for part in s.replace(' ', '').split(','):
        if not part:
            continue
        if '-' in part:
            a, b = part.split('-', 1)
            cpus.update(range(int(a), int(b) + 1))
        else:
            cpus.add(int(part))
    return sorted(cpus)


def format_cpulist(cpus):
    cpus = sorted(set(cpus))
    out, i = [], 0
    while i < len(cpus):
        j = i
        while j + 1 < len(cpus) and cpus[j + 1] == cpus[j] + 1:
            j += 1
        out.append(str(cpus[i]) if i == j else f'{cpus[i]}-{cpus[j]}')
        i = j + 1
    return ','.join(out)


def online_cpus():
    try:
        with open('/sys/devices/system/cpu/online') as f:
            online = set(parse_cpulist(f.read().strip()))
    except OSError:
        online = set(range(os.cpu_count() or 1))
    return sorted(online & os.sched_getaffinity(0))


def cpu_option(value, what='--cpus'):
    """A CPU list given by the operator, checked against the CPUs that exist."""
    cpus = parse_cpulist(value)
    bad = [c for c in cpus if c not in online_cpus()]
    if not cpus:
        die(f'{what}: empty CPU list')
    if bad:
        die(f'{what}: CPU {format_cpulist(bad)} not online or not allowed here (online: {format_cpulist(online_cpus())})')
    return cpus


def _read_cpu_sysfs(cpu, rel):
    try:
        with open(f'/sys/devices/system/cpu/cpu{cpu}/{rel}') as f:
            return f.read().strip()
    except OSError:
        return None


def cpu_topology(cpu):
    """package, core siblings and LLC siblings of a CPU from sysfs."""
    llc = None
    for idx in range(8):
        lvl = _read_cpu_sysfs(cpu, f'cache/index{idx}/level')
        if lvl is None:
            break
        shared = _read_cpu_sysfs(cpu, f'cache/index{idx}/shared_cpu_list')
        if shared and (llc is None or int(lvl) >= llc[0]):
            llc = (int(lvl), parse_cpulist(shared))
    return {
        'package': _read_cpu_sysfs(cpu, 'topology/physical_package_id'),
        'smt': parse_cpulist(_read_cpu_sysfs(cpu, 'topology/thread_siblings_list') or str(cpu)),
        'llc': llc[1] if llc else online_cpus(),
    }


def representative_cpus(cpus):
    """On a big machine, a few CPUs that show every relation the studies
    compare: a first CPU, its SMT sibling, another core of its LLC, a core in
    another LLC of its package, a core in another package."""
    first = cpus[0]
    t0 = cpu_topology(first)
    pick = [first]

    def add(pred):
        for c in cpus:
            if c not in pick and pred(c, cpu_topology(c)):
                pick.append(c)
                return

    add(lambda c, t: c in t0['smt'])
    add(lambda c, t: c in t0['llc'] and c not in t0['smt'])
    add(lambda c, t: t['package'] == t0['package'] and c not in t0['llc'])
    add(lambda c, t: t['package'] != t0['package'])
    return sorted(pick)


def mask_of(cpus):
    """rps_cpus text for a CPU set: hex in 32-bit groups separated by commas."""
    v = 0
    for c in cpus:
        v |= 1 << c
    groups = []
    while True:
        groups.append(v & 0xffffffff)
        v >>= 32
        if not v:
            break
    return ','.join(f'{g:x}' if i == 0 else f'{g:08x}' for i, g in enumerate(reversed(groups)))


def mask_cpus(text):
    v = int(text.strip().replace(',', '') or '0', 16)
    return [i for i in range(v.bit_length()) if v >> i & 1]


# ---- /proc/stat -------------------------------------------------------------

STAT_FIELDS = ('user', 'nice', 'system', 'idle', 'iowait', 'irq', 'softirq', 'steal')


def read_proc_stat():
    """{'cpu': [...], 0: [...], 1: [...]} in ticks, first 8 fields."""
    out = {}
    with open('/proc/stat') as f:
        for line in f:
            if not line.startswith('cpu'):
                continue
            name, *vals = line.split()
            key = 'cpu' if name == 'cpu' else int(name[3:])
            out[key] = [int(v) for v in vals[:8]] + [0] * (8 - len(vals[:8]))
    return out


def stat_delta(a, b, cpus=None):
    """busy/softirq/steal/total seconds between two read_proc_stat()s, over
    all CPUs (cpus=None) or the given ones; steal_pct of all ticks."""
    keys = ['cpu'] if cpus is None else [c for c in cpus if c in a and c in b]
    d = [0] * 8
    for k in keys:
        for i in range(8):
            d[i] += b[k][i] - a[k][i]
    f = dict(zip(STAT_FIELDS, d))
    total = sum(d)
    busy = f['user'] + f['nice'] + f['system'] + f['irq'] + f['softirq']
    return {
        'busy_s': busy / USER_HZ,
        'softirq_s': f['softirq'] / USER_HZ,
        'steal_s': f['steal'] / USER_HZ,
        'total_s': total / USER_HZ,
        'steal_pct': 100.0 * f['steal'] / total if total else 0.0,
    }


# ---- hardware counters ----------------------------------------------------

_perf_ok = None


def perf_supported():
    """Whether `perf stat` counts cycles and instructions here (often not in VMs)."""
    global _perf_ok
    if _perf_ok is None:
        _perf_ok = False
        if shutil.which('perf'):
            r = subprocess.run(['perf', 'stat', '-x,', '-e', 'cycles,instructions', 'true'],
                               capture_output=True, text=True)
            _perf_ok = r.returncode == 0 and 'not supported' not in r.stderr and \
                '<not counted>' not in r.stderr and bool(re.search(r'^\d+,', r.stderr, re.M))
    return _perf_ok


class PerfStat:
    """perf stat -a for a window, when supported; values() then gives
    {'cycles': n, 'instructions': n} or {}."""

    def __init__(self, outfile):
        self.outfile, self.proc = outfile, None

    def start(self):
        if perf_supported():
            self.proc = subprocess.Popen(['perf', 'stat', '-a', '-x,', '-e', 'cycles,instructions',
                                          '-o', self.outfile, '--', 'sleep', '100000'],
                                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def stop(self):
        if not self.proc:
            return {}
        self.proc.send_signal(signal.SIGINT)
        try:
            self.proc.wait(5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        vals = {}
        try:
            with open(self.outfile) as f:
                for line in f:
                    p = line.strip().split(',')
                    if len(p) >= 3 and p[0].isdigit():
                        vals[p[2].split(':')[0]] = int(p[0])
        except OSError:
            pass
        return vals


# ---- network namespaces -----------------------------------------------------

def sh(*args, check=True, **kw):
    r = subprocess.run(list(args), capture_output=True, text=True, **kw)
    if check and r.returncode != 0:
        raise RuntimeError(f'{" ".join(args)}: {r.stderr.strip() or r.returncode}')
    return r


def _snmp(path_snmp, path_netstat):
    """{'TcpRetransSegs': n, 'TcpExtTCPOFOQueue': n, ...}: what nstat shows, from the same files."""
    out = {}
    for p in (path_snmp, path_netstat):
        try:
            with open(p) as f:
                lines = f.read().splitlines()
        except OSError:
            continue
        for h, v in zip(lines[0::2], lines[1::2]):
            hk, *hn = h.split()
            vk, *vv = v.split()
            if hk != vk:
                continue
            pre = hk.rstrip(':')
            for n, x in zip(hn, vv):
                try:
                    out[pre + n] = int(x)
                except ValueError:
                    pass
    return out


COUNTERS = ('TcpRetransSegs', 'TcpExtTCPOFOQueue')


class Testbed:
    """Namespaces PREFIX-a (sender) and PREFIX-b (receiver), joined by a
    2-queue veth va <-> vb, 10.SUBNET.0.1 <-> .2. A `sleep` kept in each
    namespace (under `ip netns exec`, which mounts the namespace's /sys)
    gives this process that namespace's /sys and /proc/net through
    /proc/PID/root and /proc/PID/net, without forking per read."""

    kind = 'veth'

    def __init__(self, prefix, subnet=201, queues=2):
        self.a, self.b = f'{prefix}-a', f'{prefix}-b'
        self.subnet, self.queues = subnet, queues
        self.dst = f'10.{subnet}.0.2'
        self.iface = 'vb'
        self.keeper = {}
        self.made = False

    def setup(self):
        self.cleanup()
        at_cleanup(self.cleanup)
        self.made = True
        sh('ip', 'netns', 'add', self.a)
        sh('ip', 'netns', 'add', self.b)
        q = str(self.queues)
        sh('ip', 'link', 'add', 'va', 'numtxqueues', q, 'numrxqueues', q, 'netns', self.a, 'type', 'veth',
           'peer', 'name', 'vb', 'numtxqueues', q, 'numrxqueues', q, 'netns', self.b)
        sh('ip', '-n', self.a, 'addr', 'add', f'10.{self.subnet}.0.1/24', 'dev', 'va')
        sh('ip', '-n', self.b, 'addr', 'add', f'{self.dst}/24', 'dev', 'vb')
        for ns in (self.a, self.b):
            sh('ip', '-n', ns, 'link', 'set', 'lo', 'up')
        sh('ip', '-n', self.a, 'link', 'set', 'va', 'up')
        sh('ip', '-n', self.b, 'link', 'set', 'vb', 'up')
        for side, ns in (('a', self.a), ('b', self.b)):
            p = subprocess.Popen(['ip', 'netns', 'exec', ns, 'sleep', 'infinity'], stdin=subprocess.DEVNULL)
            self.keeper[side] = p
        for side in ('a', 'b'):
            deadline = time.monotonic() + 5
            while not os.path.exists(self._sys(side, f'/class/net/{"va" if side == "a" else "vb"}')):
                if time.monotonic() > deadline:
                    raise RuntimeError(f'namespace {side}: /sys not mounted by ip netns exec')
                time.sleep(0.02)

    def cleanup(self):
        for ns in (self.a, self.b):
            if ns not in sh('ip', 'netns', 'list').stdout.split():
                continue
            for sig in (signal.SIGTERM, signal.SIGKILL):
                pids = sh('ip', 'netns', 'pids', ns, check=False).stdout.split()
                for p in pids:
                    try:
                        os.kill(int(p), sig)
                    except (ProcessLookupError, ValueError):
                        pass
                if pids and sig == signal.SIGTERM:
                    time.sleep(0.2)
            sh('ip', 'netns', 'del', ns, check=False)
        for p in self.keeper.values():
            try:
                p.wait(1)
            except subprocess.TimeoutExpired:
                pass
        self.keeper = {}

    def _sys(self, side, rel):
        return f'/proc/{self.keeper[side].pid}/root/sys{rel}'

    def exec_a(self, args):
        return ['ip', 'netns', 'exec', self.a] + list(args)

    def exec_b(self, args):
        return ['ip', 'netns', 'exec', self.b] + list(args)

    def rx_queues(self):
        return [0]  # veth records no rx queue: only rx-0 matters

    def read_q(self, q, name):
        with open(self._sys('b', f'/class/net/vb/queues/rx-{q}/{name}')) as f:
            return f.read().strip()

    def write_q(self, q, name, value):
        with open(self._sys('b', f'/class/net/vb/queues/rx-{q}/{name}'), 'w') as f:
            f.write(str(value))

    def rps(self):
        return self.read_q(0, 'rps_cpus')

    def set_rps(self, cpus):
        for q in self.rx_queues():
            self.write_q(q, 'rps_cpus', mask_of(cpus) if cpus else '0')

    def set_flow_cnt(self, n):
        for q in self.rx_queues():
            self.write_q(q, 'rps_flow_cnt', n)

    def counters(self):
        """TCP counters of both namespaces: {'a': {...}, 'b': {...}}."""
        out = {}
        for side in ('a', 'b'):
            pid = self.keeper[side].pid
            out[side] = _snmp(f'/proc/{pid}/net/snmp', f'/proc/{pid}/net/netstat')
        return out

    def rx_bytes(self):
        """Bytes received on vb (headers included), from the namespace's /proc/net/dev."""
        with open(f'/proc/{self.keeper["b"].pid}/net/dev') as f:
            for line in f:
                name, _, rest = line.partition(':')
                if name.strip() == 'vb':
                    return int(rest.split()[0])
        return None

    def listening(self, port):
        """Whether something listens on TCP port in the receiver namespace."""
        want = f':{port:04X}'
        for name in ('tcp', 'tcp6'):
            try:
                with open(f'/proc/{self.keeper["b"].pid}/net/{name}') as f:
                    for line in f.readlines()[1:]:
                        p = line.split()
                        if p[1].endswith(want) and p[3] == '0A':
                            return True
            except OSError:
                pass
        return False


class NicTestbed:
    """A real NIC the operator named (affinity-matrix --nic): the receiver
    runs here in the root namespace, the sender through --client-cmd (e.g.
    `ssh sender`). RPS masks and rps_flow_cnt are set on every rx queue of
    the NIC and restored on exit."""

    kind = 'nic'

    def __init__(self, iface, addr, client_cmd):
        import shlex
        self.iface, self.dst = iface, addr
        self.client = shlex.split(client_cmd)
        self.saved = {}

    def setup(self):
        base = f'/sys/class/net/{self.iface}/queues'
        if not os.path.isdir(base):
            die(f'--nic {self.iface}: no such interface')
        for q in self.rx_queues():
            for name in ('rps_cpus', 'rps_flow_cnt'):
                self.saved[(q, name)] = self.read_q(q, name)
        at_cleanup(self.cleanup)
        log(f'--nic {self.iface}: saved rps_cpus and rps_flow_cnt of {len(self.rx_queues())} rx queues; restored on exit')

    def cleanup(self):
        for (q, name), v in self.saved.items():
            try:
                self.write_q(q, name, v)
            except OSError as e:
                warn(f'{self.iface} rx-{q} {name}: could not restore {v}: {e}')

    def exec_a(self, args):
        return self.client + list(args)

    def exec_b(self, args):
        return list(args)

    def rx_queues(self):
        base = f'/sys/class/net/{self.iface}/queues'
        return sorted(int(d[3:]) for d in os.listdir(base) if d.startswith('rx-'))

    def read_q(self, q, name):
        with open(f'/sys/class/net/{self.iface}/queues/rx-{q}/{name}') as f:
            return f.read().strip()

    def write_q(self, q, name, value):
        with open(f'/sys/class/net/{self.iface}/queues/rx-{q}/{name}', 'w') as f:
            f.write(str(value))

    rps = Testbed.rps
    set_rps = Testbed.set_rps
    set_flow_cnt = Testbed.set_flow_cnt

    def counters(self):
        return {'a': {}, 'b': _snmp('/proc/self/net/snmp', '/proc/self/net/netstat')}

    def listening(self, port):
        r = sh('ss', '-Hltn', f'sport = :{port}', check=False)
        return bool(r.stdout.strip())


def counter_delta(c0, c1):
    """Retransmits (sender namespace) and out-of-order queueings (receiver)."""
    def d(side, name):
        if name not in c0.get(side, {}) or name not in c1.get(side, {}):
            return None
        return c1[side][name] - c0[side][name]
    return {
        'retrans_segs_a': d('a', 'TcpRetransSegs'),
        'retrans_segs_b': d('b', 'TcpRetransSegs'),
        'ofo_queue_b': d('b', 'TcpExtTCPOFOQueue'),
    }


# ---- global sysctls (saved and restored) --------------------------------------

class SavedSysctl:
    """A global sysctl set for a while: the original value is restored by
    restore() and on any exit."""

    def __init__(self, path):
        self.path = path
        with open(path) as f:
            self.orig = f.read().strip()
        self.changed = False
        at_cleanup(self.restore)

    def set(self, value):
        with open(self.path, 'w') as f:
            f.write(str(value))
        self.changed = True

    def restore(self):
        if self.changed:
            with open(self.path, 'w') as f:
                f.write(self.orig)
            self.changed = False


# ---- processes ----------------------------------------------------------------

def proc_cpu(pid):
    """CPU a task last ran on (field 39 of /proc/PID/stat), or None."""
    try:
        with open(f'/proc/{pid}/stat') as f:
            return int(f.read().rsplit(')', 1)[1].split()[36])
    except (OSError, ValueError, IndexError):
        return None


def threads(pid):
    try:
        return [int(t) for t in os.listdir(f'/proc/{pid}/task')]
    except OSError:
        return []


def cpu_ns(pid):
    """CPU time of all of a process's threads, in ns (schedstat); None when unreadable."""
    total = 0
    for tid in threads(pid):
        try:
            with open(f'/proc/{pid}/task/{tid}/schedstat') as f:
                total += int(f.read().split()[0])
        except (OSError, ValueError, IndexError):
            pass
    return total or None


def status_kib(pid, key):
    try:
        with open(f'/proc/{pid}/status') as f:
            for line in f:
                if line.startswith(key + ':'):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def kill_wait(p, timeout=5):
    if p is None or p.poll() is not None:
        return
    p.terminate()
    try:
        p.wait(timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()


# ---- iperf3 -----------------------------------------------------------------

def iperf_flow(tb, duration, omit=0, app_cpu=None, sender_cpu=None, port=5201, workdir='.',
               on_window=None, sample_app=True, on_sample=None, on_server=None):
    """One iperf3 TCP stream from the sender to the receiver (iperf3 -s
    pinned to app_cpu when given). /proc/stat and the TCP counters are read
    at the end of the omitted seconds and when the client ends; on_window()
    runs at the window start and its result is returned under 'hook';
    on_sample() runs every 100 ms of the window; on_server(pid) once the
    server (pid) listens."""
    srv_cmd = ['iperf3', '-s', '-1', '-J', '-p', str(port)]
    if app_cpu is not None:
        srv_cmd += ['-A', str(app_cpu)]
    srv_out = open(os.path.join(workdir, 'iperf3-server.json'), 'w+')
    srv = subprocess.Popen(tb.exec_b(srv_cmd), stdout=srv_out, stderr=subprocess.STDOUT)
    srv_cleanup = at_cleanup(kill_wait, srv)
    deadline = time.monotonic() + 5
    while not tb.listening(port):
        if srv.poll() is not None or time.monotonic() > deadline:
            kill_wait(srv)
            raise RuntimeError('iperf3 server did not start listening')
        time.sleep(0.02)
    if on_server:
        on_server(srv.pid)
    cli_cmd = ['iperf3', '-c', tb.dst, '-p', str(port), '-t', str(duration), '-J']
    if omit:
        cli_cmd += ['-O', str(omit)]
    if sender_cpu is not None:
        cli_cmd += ['-A', str(sender_cpu)]
    cli_out = open(os.path.join(workdir, 'iperf3-client.json'), 'w+')
    t_start = time.monotonic()
    cli = subprocess.Popen(tb.exec_a(cli_cmd), stdout=cli_out, stderr=subprocess.STDOUT)
    cli_cleanup = at_cleanup(kill_wait, cli)
    app_samples = {}
    window = None
    hook = None
    perf = PerfStat(os.path.join(workdir, 'perf.txt'))
    while cli.poll() is None:
        now = time.monotonic()
        if window is None and now >= t_start + omit + 0.05:
            if on_window:
                hook = on_window()
            window = {'t0': time.monotonic(), 'stat0': read_proc_stat(), 'cnt0': tb.counters()}
            perf.start()
        if window is not None and sample_app:
            c = proc_cpu(srv.pid)
            if c is not None:
                app_samples[c] = app_samples.get(c, 0) + 1
        if window is not None and on_sample:
            on_sample()
        time.sleep(0.1)
    t_end = time.monotonic()
    if window is None:  # the client ended within the omitted seconds
        window = {'t0': t_end, 'stat0': read_proc_stat(), 'cnt0': tb.counters()}
    stat1, cnt1 = read_proc_stat(), tb.counters()
    hw = perf.stop()
    try:
        srv.wait(5)
    except subprocess.TimeoutExpired:
        kill_wait(srv)
    cli_out.seek(0)
    text = cli_out.read()
    res = {'app_cpu_samples': {str(k): v for k, v in sorted(app_samples.items())}}
    try:
        j = json.loads(text)
    except ValueError:
        raise RuntimeError(f'iperf3 client: {text.strip()[-400:]}')
    if 'error' in j:
        raise RuntimeError(f'iperf3 client: {j["error"]}')
    end = j['end']
    recv, sent = end['sum_received'], end['sum_sent']
    res.update({
        'goodput_bps': recv['bits_per_second'],
        'bytes': recv['bytes'],
        'seconds': recv['seconds'],
        'sender_retransmits': sent.get('retransmits'),
        'host_cpu_pct': end.get('cpu_utilization_percent', {}).get('host_total'),
        'remote_cpu_pct': end.get('cpu_utilization_percent', {}).get('remote_total'),
        'window_s': t_end - window['t0'],
        'window_end': t_end,  # monotonic: when the client was seen to end
    })
    st = stat_delta(window['stat0'], stat1)
    res.update({k: st[k] for k in ('busy_s', 'softirq_s', 'steal_pct')})
    gb = res['bytes'] / 1e9
    # the CPU window opens a little before iperf3's measured seconds (their
    # start waits for the connection) and closes when the client is seen
    # to end: its busy time at its own rate, over the measured seconds
    span_s = res['window_s']
    busy = st['busy_s'] * res['seconds'] / span_s if span_s > 0 and res['seconds'] else st['busy_s']
    res['cpu_s_per_gb'] = busy / gb if gb > 0 else None
    res['per_cpu_busy_s'] = {str(c): round(stat_delta(window['stat0'], stat1, [c])['busy_s'], 3)
                             for c in sorted(k for k in stat1 if k != 'cpu')}
    res.update(counter_delta(window['cnt0'], cnt1))
    if hw:
        res['hw_cycles_per_byte'] = hw.get('cycles', 0) / res['bytes'] if res['bytes'] else None
        res['hw_instructions_per_byte'] = hw.get('instructions', 0) / res['bytes'] if res['bytes'] else None
    if app_samples:
        res['app_cpu_seen'] = max(app_samples, key=app_samples.get)
    res['hook'] = hook
    cancel_cleanup(cli_cleanup)
    cancel_cleanup(srv_cleanup)
    cli_out.close()
    srv_out.close()
    return res


# ---- caad ---------------------------------------------------------------------

def placement_support(caad, tmpdir):
    """Which values of [Daemon] Placement= this caad build accepts (checked
    offline: caad --config FILE --simulate with an empty scenario)."""
    scen = os.path.join(tmpdir, 'empty-scenario.json')
    with open(scen, 'w') as f:
        f.write('{"interfaces": [], "flows": []}\n')
    out = {}
    for v in ('prior', 'measure'):
        conf = os.path.join(tmpdir, f'probe-{v}.conf')
        with open(conf, 'w') as f:
            f.write(f'[Daemon]\nPlacement={v}\n')
        r = subprocess.run([caad, '--config', conf, '--simulate', scen], capture_output=True, text=True)
        out[v] = {'accepted': r.returncode == 0, 'message': r.stderr.strip().splitlines()[-1] if r.stderr.strip() else ''}
    return out


_help_cache = {}


def caad_has_option(caad, option):
    """Whether caad --help lists an option (e.g. --state-dir in newer builds)."""
    if caad not in _help_cache:
        _help_cache[caad] = subprocess.run([caad, '--help'], capture_output=True, text=True).stdout
    return option in _help_cache[caad]


def config_keys_accepted(caad, tmpdir, text):
    """Whether caad accepts a config text (checked offline with --simulate)."""
    scen = os.path.join(tmpdir, 'empty-scenario.json')
    with open(scen, 'w') as f:
        f.write('{"interfaces": [], "flows": []}\n')
    conf = os.path.join(tmpdir, 'probe.conf')
    with open(conf, 'w') as f:
        f.write(text)
    r = subprocess.run([caad, '--config', conf, '--simulate', scen], capture_output=True, text=True)
    return r.returncode == 0, r.stderr.strip()


def caad_version(caad):
    r = subprocess.run([caad, '--version'], capture_output=True, text=True)
    return (r.stdout or r.stderr).strip()


def tmpfs_dir():
    """/dev/shm where it is a tmpfs, else None."""
    try:
        with open('/proc/self/mounts') as f:
            return '/dev/shm' if any(l.split()[1:3] == ['/dev/shm', 'tmpfs'] for l in f) else None
    except OSError:
        return None


class Caad:
    """caad --foreground in the receiver namespace with a config of its own
    and a private runtime dir (like tests/integration/steer.sh). The runtime
    dir is on a tmpfs while caad runs, as /run is on a host that runs it
    under systemd: caad rewrites state.json at every scan, which on a disk
    filesystem costs writeback that a host does not pay (bench/observer:
    caad's own CPU time 0.18% of a CPU on this VM's ext4, 0.10% on tmpfs).
    Its files are copied to WORKDIR/rt when caad ends, where self.rt then
    points."""

    def __init__(self, tb, binary, workdir, daemon=None, placement=None, extra=None, state_dir=None):
        self.tb, self.binary, self.workdir = tb, binary, workdir
        self.daemon = dict(daemon or {})
        self.placement = dict(placement or {})
        self.extra = dict(extra or {})  # {section: {key: value}}
        # never the host's /var/lib/caad: verdicts of trials go to a dir of the bench's
        self.state_dir = state_dir or os.path.join(workdir, 'state')
        self.proc = None
        self.rt_kept = self.rt = os.path.join(workdir, 'rt')
        self.conf = os.path.join(workdir, 'caad.conf')
        self.logpath = os.path.join(workdir, 'caad.log')

    def config_text(self):
        lines = ['[Daemon]'] + [f'{k}={v}' for k, v in self.daemon.items()]
        if self.placement:
            lines += ['', '[Placement]'] + [f'{k}={v}' for k, v in self.placement.items()]
        for section, keys in self.extra.items():
            lines += ['', f'[{section}]'] + [f'{k}={v}' for k, v in keys.items()]
        return '\n'.join(lines) + '\n'

    def start(self, timeout=10):
        os.makedirs(self.workdir, exist_ok=True)
        shm = tmpfs_dir()
        if shm:
            self.rt = tempfile.mkdtemp(prefix='caad-bench-rt.', dir=shm)
        with open(self.conf, 'w') as f:
            f.write(self.config_text())
        self.logf = open(self.logpath, 'w')
        argv = [self.binary, '--foreground', '--config', self.conf, '--runtime-dir', self.rt]
        if caad_has_option(self.binary, '--state-dir'):
            os.makedirs(self.state_dir, exist_ok=True)
            argv += ['--state-dir', self.state_dir]
        self.proc = subprocess.Popen(self.tb.exec_b(argv),
                                     stdout=self.logf, stderr=subprocess.STDOUT)
        self._cleanup = at_cleanup(self.kill)
        state = os.path.join(self.rt, 'state.json')
        deadline = time.monotonic() + timeout
        while not (os.path.exists(state) and os.path.getsize(state) > 0):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.kill()
                raise RuntimeError(f'caad did not start (exit {self.proc.returncode}): {self.log_tail()}')
            time.sleep(0.02)
        return self

    @property
    def pid(self):
        return self.proc.pid

    def state(self):
        try:
            with open(os.path.join(self.rt, 'state.json')) as f:
                return json.load(f)
        except (OSError, ValueError):
            return None

    def heavy_flow(self):
        """The fastest heavy flow in state.json, or None."""
        st = self.state() or {}
        fl = [f for f in st.get('flows', []) if f.get('heavy')]
        return max(fl, key=lambda f: f.get('rate_bps', 0)) if fl else None

    def save_state(self, path):
        """Keep a copy of state.json (e.g. the plan at the end of a run)."""
        try:
            shutil.copyfile(os.path.join(self.rt, 'state.json'), path)
        except OSError:
            pass

    def log_tail(self, n=15):
        try:
            with open(self.logpath) as f:
                return ' | '.join(f.read().strip().splitlines()[-n:])
        except OSError:
            return ''

    def stop(self):
        """SIGTERM; returns caad's exit status (0: restored what it changed)."""
        if not self.proc or self.proc.poll() is not None:
            self.keep_rt()
            return self.proc.returncode if self.proc else None
        self.proc.terminate()
        try:
            rc = self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            rc = self.proc.wait()
        self.logf.close()
        cancel_cleanup(self._cleanup)
        self.keep_rt()
        return rc

    def kill(self):
        if self.proc and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.keep_rt()

    def keep_rt(self):
        """The tmpfs runtime dir's files to WORKDIR/rt, once caad ended."""
        if self.rt == self.rt_kept:
            return
        try:
            shutil.copytree(self.rt, self.rt_kept, dirs_exist_ok=True)
        except OSError as e:
            warn(f'caad\'s runtime dir {self.rt} not kept in {self.rt_kept}: {e}')
        shutil.rmtree(self.rt, ignore_errors=True)
        self.rt = self.rt_kept

    def bpf_fds(self):
        """{'progs': [id...], 'maps': [{'id', 'memlock'}...]} from caad's /proc/PID/fdinfo."""
        progs, maps = [], []
        base = f'/proc/{self.pid}/fdinfo'
        for fd in os.listdir(base):
            try:
                with open(f'{base}/{fd}') as f:
                    info = dict(l.split(':', 1) for l in f.read().splitlines() if ':' in l)
            except OSError:
                continue
            info = {k.strip(): v.strip() for k, v in info.items()}
            if 'prog_id' in info:
                progs.append(int(info['prog_id']))
            elif 'map_id' in info:
                maps.append({'id': int(info['map_id']), 'memlock': int(info.get('memlock', 0)),
                             'max_entries': int(info.get('max_entries', 0))})
        return {'progs': sorted(set(progs)), 'maps': sorted({m['id']: m for m in maps}.values(), key=lambda m: m['id'])}


def bpftool_json(*args):
    if not shutil.which('bpftool'):
        return None
    r = subprocess.run(['bpftool', '-j'] + list(args), capture_output=True, text=True)
    if r.returncode != 0:
        return None
    try:
        return json.loads(r.stdout)
    except ValueError:
        return None


# ---- statistics -----------------------------------------------------------------

def median(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def percentile(xs, p):
    """Nearest-rank percentile (p in 0..100) of the values that are not None."""
    xs = sorted(x for x in xs if x is not None)
    if not xs:
        return None
    k = max(0, min(len(xs) - 1, int(-(-p * len(xs) // 100)) - 1))
    return xs[k]


def span(xs):
    xs = [x for x in xs if x is not None]
    return (min(xs), max(xs)) if xs else (None, None)


# the least coverage of the median's interval that settles a verdict
SETTLE_COVERAGE = 0.9


def median_ci(xs, level=0.95):
    """Distribution-free confidence interval of the median of xs: the order
    statistics x(k) and x(n+1-k) with the largest k whose coverage, 1 - 2 P(B
    <= k-1) for B ~ Binomial(n, 1/2), is still at least level. Too few values
    for that level give the range, with its lower coverage (5 values: 93.75%;
    1 value: 0). Returns {'low', 'high', 'coverage', 'n'} or None."""
    xs = sorted(x for x in xs if x is not None)
    n = len(xs)
    if not n:
        return None

    def coverage(k):
        return 1 - 2 * sum(math.comb(n, i) for i in range(k)) / 2 ** n

    k = 1
    while k < n + 1 - k - 1 and coverage(k + 1) >= level:
        k += 1
    return {'low': xs[k - 1], 'high': xs[n - k], 'coverage': coverage(k), 'n': n}


def target(what, value, samples, want, higher=True, lo=None, hi=None):
    """A target checked on a median: met when value is on want's good side
    (>= want where higher is better, else <=); settled when the confidence
    interval of the median of samples (per-round values, or per-repetition
    ratios) lies wholly on one side of want, so that these rounds tell the
    verdict apart from their noise, and covers at least SETTLE_COVERAGE
    (fewer than 5 samples never do: their range covers 87.5% at most; a
    single one 0%). lo/hi: the range shown (default: of samples)."""
    ci = median_ci(samples)
    good = (lambda x: x >= want) if higher else (lambda x: x <= want)
    if lo is None and hi is None:
        lo, hi = span(samples)
    few = ci is not None and ci['coverage'] < SETTLE_COVERAGE
    return {'what': what, 'value': value, 'min': lo, 'max': hi, 'want': want, 'higher_is_better': higher,
            'met': value is not None and good(value), 'ci': ci, 'too_few': few,
            'settled': None if ci is None else good(ci['low']) == good(ci['high']) and not few}


def ci_text(t, nd):
    """'a-b (95%)' of a target's confidence interval, or n/a."""
    ci = t.get('ci')
    if not ci:
        return 'n/a'
    # coverage rounded down: 93.75% is not "94%"
    return f'{ci["low"]:.{nd}f}-{ci["high"]:.{nd}f} ({math.floor(1000 * ci["coverage"]) / 10:g}%, n={ci["n"]})'


def target_line(t, nd=None):
    """A target's line under "What this says": median [range], the median's
    confidence interval, the verdict, and where the interval straddles the
    target, that these rounds do not settle it."""
    if 'value' not in t:  # no figure: said why
        return f'* {t["what"]}: {t.get("status", "no figure")}: NOT measured.'
    v = t['value']
    if nd is None:
        nd = 3 if v is not None and abs(v) < 10 else 1
    line = f'* {t["what"]}: {fmt(v, nd)} [{fmt(t["min"], nd)}-{fmt(t["max"], nd)}]'
    if t.get('ci'):
        line += f'; confidence interval of the median {ci_text(t, nd)}'
    line += f': {verdict(t["met"], t.get("settled"))}.'
    if t.get('settled') is False and t.get('too_few'):
        line += (f' Only {t["ci"]["n"]} rounds: too few for an interval of the median that covers '
                 f'{SETTLE_COVERAGE:.0%}, so they do not tell whether the target is met.')
    elif t.get('settled') is False:
        line += (f' The interval holds values on both sides of {t["want"]:g}: these rounds do not tell on this '
                 'machine whether the target is met.')
    return line


def fmt(x, nd=2, unit=''):
    if x is None:
        return 'n/a'
    return f'{x:.{nd}f}{unit}'


def gbit(bps):
    return None if bps is None else bps / 1e9


# ---- output files ---------------------------------------------------------------

def bpf_stats_on(v):
    """A kernel.bpf_stats_enabled value as recorded (a number, or the
    string a bench read from /proc: "0" is off) is on; not a number: not
    known to be off."""
    try:
        return int(str(v).strip() or 0) != 0
    except ValueError:
        return True


def bpf_stats_enabled():
    """kernel.bpf_stats_enabled now (None: unreadable). On, every BPF
    program's every run takes two clock reads more, caad's in every arm
    (bench/observer turns it on for its statistics arm only)."""
    try:
        with open('/proc/sys/kernel/bpf_stats_enabled') as f:
            return int(f.read().strip() or 0)
    except (OSError, ValueError):
        return None


def machine_info():
    model = None
    r = subprocess.run(['lscpu'], capture_output=True, text=True, env=dict(os.environ, LC_ALL='C'))
    for line in r.stdout.splitlines():
        if line.startswith('Model name:'):
            model = line.split(':', 1)[1].strip()
    with open('/proc/loadavg') as f:
        load = f.read().split()[:3]
    # the source as the bench starts (and builds), not as it ends
    commit = subprocess.run(['git', '-C', REPO, 'rev-parse', '--short', 'HEAD'], capture_output=True, text=True)
    # what the benches write into the tree themselves does not count
    dirty = subprocess.run(['git', '-C', REPO, 'status', '--porcelain', '--untracked-files=no', '--', '.',
                            ':!bench/RESULTS*.md', ':!bench/*.png'], capture_output=True, text=True)
    source = (f'commit {commit.stdout.strip()}{" with uncommitted changes" if dirty.stdout.strip() else ""}'
              if commit.returncode == 0 else None)
    return {
        'source': source,
        'cpu_model': model,
        'nproc': os.cpu_count(),
        'online_cpus': format_cpulist(online_cpus()),
        'kernel': platform.release(),
        'hostname': platform.node(),
        'date_utc': time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime()),
        'loadavg_at_start': ' '.join(load),
        'bpf_stats_enabled': bpf_stats_enabled(),
    }


def default_outdir(name):
    return os.path.join(BENCH_DIR, 'results', f'{name}-{time.strftime("%Y%m%d-%H%M%S")}')


def prepare_outdir(path):
    os.makedirs(path, exist_ok=True)
    return os.path.realpath(path)


def write_json(path, obj):
    tmp = path + '.tmp'
    with open(tmp, 'w') as f:
        json.dump(obj, f, indent=1, sort_keys=False, default=str)
        f.write('\n')
    os.replace(tmp, path)


def write_csv(path, rows, columns=None):
    if columns is None:
        columns = []
        for r in rows:
            for k in r:
                if k not in columns and not isinstance(r[k], (dict, list)):
                    columns.append(k)
    with open(path, 'w', newline='') as f:
        w = csv.DictWriter(f, fieldnames=columns, extrasaction='ignore')
        w.writeheader()
        for r in rows:
            w.writerow({k: ('' if r.get(k) is None else r.get(k)) for k in columns})


def common_args(p, quick_help):
    p.add_argument('--out', metavar='DIR', help='results directory (default: bench/results/NAME-DATE)')
    p.add_argument('--caad', metavar='PATH', default=None,
                   help='caad binary (default: $CAAD, else build-bench/ or build/ of this tree)')
    p.add_argument('--quick', action='store_true', help=quick_help)
    p.add_argument('--no-lock', action='store_true',
                   help=f'do not take {LOCK_PATH} (only when the caller holds it)')
    return p


class Steal:
    """Steal time over a whole bench, from /proc/stat."""

    def __init__(self):
        self.s0, self.t0 = read_proc_stat(), time.monotonic()

    def result(self):
        d = stat_delta(self.s0, read_proc_stat())
        return {'steal_pct': d['steal_pct'], 'busy_pct': 100 * d['busy_s'] / d['total_s'] if d['total_s'] else None,
                'wall_s': time.monotonic() - self.t0}


def verdict(ok, settled=None):
    """met / NOT met, the latter two words where the confidence interval of
    the median straddles the target (settled False): the rounds do not tell
    this verdict apart from their noise."""
    return ('met' if ok else 'NOT met') + (' (not settled)' if settled is False else '')
