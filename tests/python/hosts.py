"""Hosts simulated on one machine, for the tests of jobs that span machines: each host a network
namespace of its own (joined to the others by veth pairs), a hostname of its own (a UTS
namespace per command), and, where asked, a CLOCK_MONOTONIC ahead of the machine's (a time
namespace). Needs root; `two_hosts` skips with the reason otherwise."""

import os
import shutil
import subprocess
import sys
import textwrap

import pytest

# Runs a command in a new time namespace whose CLOCK_MONOTONIC is ahead by argv[1] ns. The
# namespace is for the children of unshare(CLONE_NEWTIME)'s caller, so the command is a child;
# signals to this process go on to it, and its exit status is this one's.
TIME_NAMESPACE = textwrap.dedent(
    """
    import ctypes, os, signal, sys
    ahead = int(sys.argv[1])
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.unshare(0x80) != 0:  # CLONE_NEWTIME
        sys.exit("unshare(CLONE_NEWTIME): " + os.strerror(ctypes.get_errno()))
    with open("/proc/self/timens_offsets", "w") as f:
        f.write(f"monotonic {ahead // 10**9} {ahead % 10**9}\\n")
    child = os.fork()
    if child == 0:
        os.execvp(sys.argv[2], sys.argv[2:])
    for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(s, lambda number, frame: os.kill(child, number))
    _, status = os.waitpid(child, 0)
    code = os.waitstatus_to_exitcode(status)
    sys.exit(128 - code if code < 0 else code)
    """
)


def run(*command):
    return subprocess.run(command, capture_output=True, text=True, timeout=60)


class Host:
    def __init__(self, namespace, address, name, ahead_ns, helper):
        self.namespace, self.address, self.name = namespace, address, name
        self.ahead_ns, self._helper = ahead_ns, helper

    def command(self, argv):
        """argv as run on this host: in its network namespace, with its hostname, on its clock."""
        in_host = ["unshare", "--uts", "sh", "-c", f'hostname {self.name} && exec "$@"', "sh",
                   *map(str, argv)]
        if self.ahead_ns:
            in_host = [sys.executable, str(self._helper), str(self.ahead_ns), *in_host]
        return ["ip", "netns", "exec", self.namespace, *in_host]


def two_hosts(tmp_path, second_ahead_ns):
    """A generator for a fixture: yields [hosta, hostb], hostb's clock second_ahead_ns ahead."""
    if os.geteuid() != 0:
        pytest.skip("network and time namespaces need root")
    for tool in ("ip", "unshare"):
        if not shutil.which(tool):
            pytest.skip(f"`{tool}` is not installed (iproute2, util-linux)")
    if not os.path.exists("/proc/self/timens_offsets"):
        pytest.skip("this kernel has no time namespaces (Linux 5.6+)")
    helper = tmp_path / "time_namespace.py"
    helper.write_text(TIME_NAMESPACE)
    tag = str(os.getpid() % 100000)
    ns = (f"rlscA{tag}", f"rlscB{tag}")
    link = (f"rlsva{tag}", f"rlsvb{tag}")
    addresses = ("10.213.7.1", "10.213.7.2")
    created = []
    try:
        for n in ns:
            r = run("ip", "netns", "add", n)
            if r.returncode != 0:
                pytest.skip(f"cannot create a network namespace: {r.stderr.strip()}")
            created.append(n)
        steps = [("ip", "link", "add", link[0], "type", "veth", "peer", "name", link[1])]
        for n, l, a in zip(ns, link, addresses):
            steps += [("ip", "link", "set", l, "netns", n),
                      ("ip", "-n", n, "addr", "add", f"{a}/24", "dev", l),
                      ("ip", "-n", n, "link", "set", l, "up"),
                      ("ip", "-n", n, "link", "set", "lo", "up")]
        for s in steps:
            r = run(*s)
            if r.returncode != 0:
                pytest.skip(f"cannot join the namespaces ({' '.join(s)}): {r.stderr.strip()}")
        yield [Host(ns[0], addresses[0], "hosta", 0, helper),
               Host(ns[1], addresses[1], "hostb", second_ahead_ns, helper)]
    finally:
        for n in created:  # deleting a namespace deletes its end of the veth pair, and the pair
            run("ip", "netns", "del", n)
