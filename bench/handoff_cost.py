"""bench/handoff_cost.py - what handing one call's inputs to the candidate's
process costs (runner/kaudit_party_link.py, hand; kaudit_party.load_handed),
file against sealed memory file, for one tensor of SIZE_GB on DEVICE.

  python3 bench/handoff_cost.py DIR SIZE_GB ROUNDS [DEVICE]

Each round, interleaved: "file" (torch.save into DIR, torch.load from it, as
the hand-off through files does) and "memory" (torch.save into a memfd with
PyTorch's CRC off where it has the switch, sealed, its descriptor passed over
a datagram socket and loaded back mapped where PyTorch maps).  Both ends run
here, one after the other: the candidate's process's own import and
confinement are not in the figures.  One TSV row per round and way: the
seconds to save (runner's end), to load onto DEVICE (candidate's end) and in
all; the loaded tensor is checked against the saved one."""
import fcntl
import os
import socket
import sys
import time

import torch

SEALS = fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW | fcntl.F_SEAL_WRITE | fcntl.F_SEAL_SEAL


def sync(device):
    if device.type == "cuda":
        torch.cuda.synchronize()


def by_file(x, folder, device):
    path = os.path.join(folder, "inputs.pt")
    t0 = time.monotonic()
    torch.save([x], path + ".tmp")
    os.replace(path + ".tmp", path)
    t1 = time.monotonic()
    y = torch.load(path, map_location=device, weights_only=False)
    sync(device)
    t2 = time.monotonic()
    os.unlink(path)
    return t1 - t0, t2 - t1, y


def by_memory(x, folder, device):
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
    t0 = time.monotonic()
    fd = os.memfd_create("kaudit-inputs.pt", os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
    crc = getattr(torch.serialization, "get_crc32_options", None)
    was = crc() if crc else None
    if crc:
        torch.serialization.set_crc32_options(False)
    with os.fdopen(os.dup(fd), "wb") as f:
        torch.save([x], f)
    if crc:
        torch.serialization.set_crc32_options(was)
    fcntl.fcntl(fd, fcntl.F_ADD_SEALS, SEALS)
    socket.send_fds(ours, [b"inputs.pt"], [fd])
    os.close(fd)
    t1 = time.monotonic()
    _, fds, _, _ = socket.recv_fds(theirs, 256, 4)
    try:
        y = torch.load("/proc/self/fd/%d" % fds[0], map_location=device, weights_only=False, mmap=True)
    except (TypeError, RuntimeError):
        os.lseek(fds[0], 0, os.SEEK_SET)
        with os.fdopen(os.dup(fds[0]), "rb") as f:
            y = torch.load(f, map_location=device, weights_only=False)
    sync(device)
    t2 = time.monotonic()
    os.close(fds[0])
    ours.close()
    theirs.close()
    return t1 - t0, t2 - t1, y


def main(argv):
    folder, size_gb, rounds = argv[1], float(argv[2]), int(argv[3])
    device = torch.device(argv[4] if len(argv) > 4 else ("cuda" if torch.cuda.is_available() else "cpu"))
    os.makedirs(folder, exist_ok=True)
    x = torch.randn(int(size_gb * (1 << 30) / 4), device=device)
    print("round\tway\tsave_s\tload_s\ttotal_s\tsame")
    for r in range(rounds):
        for name, way in (("file", by_file), ("memory", by_memory)) if r % 2 == 0 else \
                (("memory", by_memory), ("file", by_file)):
            save_s, load_s, y = way(x, folder, device)
            same = bool(torch.equal(y[0], x))
            del y
            print("%d\t%s\t%.3f\t%.3f\t%.3f\t%s" % (r, name, save_s, load_s, save_s + load_s, same), flush=True)


if __name__ == "__main__":
    main(sys.argv)
