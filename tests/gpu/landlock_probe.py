"""tests/gpu/landlock_probe.py - which write roots CUDA needs under Landlock.

Each case runs a child that applies a Landlock ruleset (the write rights
kaudit handles, supervisor/confine.c) allowing writes beneath the given roots,
then calls cuInit(0) through libcuda; prints the case and cuInit's status
(0 = CUDA_SUCCESS).  With strace on PATH, the denied calls of the
kaudit-like case are printed too.  Run on the GPU machine:
    python3 tests/gpu/landlock_probe.py
"""
import ctypes
import os
import shutil
import subprocess
import sys
import tempfile

WRITE_RIGHTS = (1 << 1) | (1 << 4) | (1 << 5) | (1 << 6) | (1 << 7) | (1 << 8) | (1 << 9) | (1 << 10) | \
    (1 << 11) | (1 << 12) | (1 << 13) | (1 << 14)


class RulesetAttr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64)]


class PathBeneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def child(roots, nnp_only):
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    if libc.prctl(38, 1, 0, 0, 0) != 0:  # PR_SET_NO_NEW_PRIVS
        print("prctl failed", ctypes.get_errno())
    if not nnp_only:
        abi = libc.syscall(444, None, ctypes.c_size_t(0), ctypes.c_uint32(1))
        rights = WRITE_RIGHTS if abi >= 3 else WRITE_RIGHTS & ~(1 << 14)
        attr = RulesetAttr(rights)
        fd = libc.syscall(444, ctypes.byref(attr), ctypes.c_size_t(ctypes.sizeof(attr)), ctypes.c_uint32(0))
        for r in roots:
            if not os.path.exists(r):
                continue
            pfd = os.open(r, os.O_PATH)
            allowed = rights if os.path.isdir(r) else rights & ((1 << 1) | (1 << 14))
            rule = PathBeneath(allowed, pfd)
            if libc.syscall(445, ctypes.c_int(fd), ctypes.c_int(1), ctypes.byref(rule), ctypes.c_uint32(0)) != 0:
                print("add_rule failed", r, ctypes.get_errno())
            os.close(pfd)
        if libc.syscall(446, ctypes.c_int(fd), ctypes.c_uint32(0)) != 0:
            print("restrict_self failed", ctypes.get_errno())
    cuda = ctypes.CDLL("libcuda.so.1")
    rc = cuda.cuInit(0)
    print("cuInit", rc)
    return rc


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "child":
        nnp = sys.argv[2] == "nnp"
        sys.exit(child(sys.argv[3:], nnp))
    home = os.path.expanduser("~")
    work = tempfile.mkdtemp()
    base = [work, home + "/.cache", home + "/.triton", home + "/.nv", "/dev"]
    cases = [
        ("nnp only", "nnp", []),
        ("landlock, everything", "ll", ["/"]),
        ("landlock, kaudit's roots", "ll", base),
        ("... + /tmp", "ll", base + ["/tmp"]),
        ("... + /run", "ll", base + ["/run"]),
        ("... + /var", "ll", base + ["/var"]),
        ("... + /proc", "ll", base + ["/proc"]),
        ("... + /sys", "ll", base + ["/sys"]),
        ("... + $HOME", "ll", base + [home]),
    ]
    for name, mode, roots in cases:
        p = subprocess.run([sys.executable, __file__, "child", mode] + roots, capture_output=True, text=True)
        print("%-28s exit %d: %s" % (name, p.returncode, (p.stdout + p.stderr).strip().replace("\n", " | ")))
    if shutil.which("strace"):
        p = subprocess.run(["strace", "-f", "-e", "trace=%file,%desc", "-o", work + "/st", sys.executable, __file__,
                            "child", "ll"] + base, capture_output=True, text=True)
        for line in open(work + "/st"):
            if "EACCES" in line or "EPERM" in line or "EROFS" in line:
                print("strace:", line.strip()[:200])
    else:
        print("no strace")
    print("ls /dev/nvidia*:", subprocess.run("ls -la /dev/nvidia* /dev/shm | head -20", shell=True,
                                               capture_output=True, text=True).stdout)


if __name__ == "__main__":
    main()
