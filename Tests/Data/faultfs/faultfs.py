#!/usr/bin/env python3
"""A pass-through FUSE file system that fails chosen calls, for the store's
real-fault tests (Tests/BadgeKitTests/RealFaultTests.swift).

    faultfs.py SOURCE MOUNTPOINT [--fail OP:PATH:ERRNO ...]

Mounts SOURCE at MOUNTPOINT (in the foreground, until it is unmounted) and
passes every call through, except that OP on PATH (a path inside the mount,
"/" for its root; a shell pattern, so "*" is any path and "/history/*" any
entry of the history) fails with ERRNO (a name: ENOSPC, EIO). OP is one of
write (a file's), fsync (a file's), fsyncdir, link (PATH is the new name),
rename (PATH is the name replaced). Each failure is logged to standard error
as it happens: "faultfs: fsync /x ENOSPC".
Once the kernel has mounted it and asked for its first answer, it says
"faultfs: mounted" on standard output.

A tmpfs never fails an fsync, and no device-mapper is at hand to fail a
disk underneath ext4: the calls here go through the kernel's VFS and FUSE,
as on any file system, and the errors come back from fsync(2), link(2)
and rename(2) as a full or failing disk returns them.

Needs fusepy (PyPI) and libfuse2 with fusermount (Debian's fuse).
"""
import errno
import fnmatch
import os
import sys

from fuse import FUSE, FuseOSError, Operations


class FaultFS(Operations):
    def __init__(self, source, faults):
        self.source = os.path.realpath(source)
        self.faults = faults

    def _full(self, path):
        return os.path.join(self.source, path.lstrip("/"))

    def _fault(self, op, path):
        for (fault_op, fault_path, code) in self.faults:
            if fault_op == op and (fault_path == path or fnmatch.fnmatchcase(path, fault_path)):
                print(f"faultfs: {op} {path} {errno.errorcode[code]}", file=sys.stderr, flush=True)
                raise FuseOSError(code)

    def init(self, path):
        print("faultfs: mounted", flush=True)

    # Metadata
    def getattr(self, path, fh=None):
        st = os.lstat(self._full(path))
        return {key: getattr(st, key) for key in (
            "st_atime", "st_ctime", "st_gid", "st_mode", "st_mtime", "st_nlink", "st_size", "st_uid", "st_ino")}

    def access(self, path, mode):
        if not os.access(self._full(path), mode):
            raise FuseOSError(errno.EACCES)

    def chmod(self, path, mode):
        os.chmod(self._full(path), mode)

    def chown(self, path, uid, gid):
        os.chown(self._full(path), uid, gid)

    def readdir(self, path, fh):
        return [".", ".."] + os.listdir(self._full(path))

    def readlink(self, path):
        return os.readlink(self._full(path))

    def statfs(self, path):
        st = os.statvfs(self._full(path))
        return {key: getattr(st, key) for key in (
            "f_bavail", "f_bfree", "f_blocks", "f_bsize", "f_favail", "f_ffree", "f_files", "f_flag", "f_frsize", "f_namemax")}

    def utimens(self, path, times=None):
        os.utime(self._full(path), times)

    # Names
    def mkdir(self, path, mode):
        os.mkdir(self._full(path), mode)

    def rmdir(self, path):
        os.rmdir(self._full(path))

    def unlink(self, path):
        os.unlink(self._full(path))

    def symlink(self, target, source):
        os.symlink(source, self._full(target))

    def link(self, target, source):
        self._fault("link", target)
        os.link(self._full(source), self._full(target))

    def rename(self, old, new):
        self._fault("rename", new)
        os.rename(self._full(old), self._full(new))

    # Files
    def open(self, path, flags):
        return os.open(self._full(path), flags)

    def create(self, path, mode, fi=None):
        return os.open(self._full(path), os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)

    def read(self, path, size, offset, fh):
        return os.pread(fh, size, offset)

    def write(self, path, data, offset, fh):
        self._fault("write", path)
        return os.pwrite(fh, data, offset)

    def truncate(self, path, length, fh=None):
        os.truncate(self._full(path), length)

    def flush(self, path, fh):
        return 0

    def release(self, path, fh):
        os.close(fh)

    def fsync(self, path, datasync, fh):
        self._fault("fsync", path)
        os.fsync(fh)

    def opendir(self, path):
        return 0

    def releasedir(self, path, fh):
        return 0

    def fsyncdir(self, path, datasync, fh):
        self._fault("fsyncdir", path)
        fd = os.open(self._full(path), os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def main(argv):
    if len(argv) < 3:
        sys.exit(__doc__)
    source, mountpoint = argv[1], argv[2]
    faults = []
    rest = argv[3:]
    while rest:
        if rest[0] != "--fail" or len(rest) < 2:
            sys.exit(f"faultfs: unknown argument {rest[0]!r}")
        op, path, name = rest[1].split(":")
        if op not in ("write", "fsync", "fsyncdir", "link", "rename") or not hasattr(errno, name):
            sys.exit(f"faultfs: bad fault {rest[1]!r}")
        faults.append((op, path, getattr(errno, name)))
        rest = rest[2:]
    FUSE(FaultFS(source, faults), mountpoint, foreground=True, nothreads=True, use_ino=True)


if __name__ == "__main__":
    main(sys.argv)
