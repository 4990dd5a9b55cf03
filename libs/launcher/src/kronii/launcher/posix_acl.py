"""POSIX access ACLs read and written through their extended attribute, without the acl tools.

`kronii up` run as root starts PostgreSQL as a system user. That user needs to walk through the
directories above its data directory and binaries, and nothing more: one `u:<user>:--x` entry on
each directory it cannot pass, instead of opening the directory to every user.
"""

from __future__ import annotations

import errno
import os
import stat
import struct
from pathlib import Path

__all__ = ["ACL_XATTR", "AclEntry", "grant_traverse", "has_acl", "read_acl", "traversable_by"]

ACL_XATTR = "system.posix_acl_access"
_VERSION = 2
_UNDEFINED = 0xFFFFFFFF
USER_OBJ, USER, GROUP_OBJ, GROUP, MASK, OTHER = 0x01, 0x02, 0x04, 0x08, 0x10, 0x20

AclEntry = tuple[int, int, int]  # (tag, permission bits rwx as 4/2/1, uid or gid or _UNDEFINED)


def read_acl(path: Path) -> list[AclEntry]:
    """The access ACL's entries; empty when the file has only its mode bits."""
    try:
        raw = os.getxattr(path, ACL_XATTR, follow_symlinks=False)
    except OSError as error:
        if error.errno in (errno.ENODATA, errno.ENOTSUP, errno.EOPNOTSUPP):
            return []
        raise
    (version,) = struct.unpack_from("<I", raw)
    if version != _VERSION:
        raise OSError(f"unknown POSIX ACL version {version} on {path}")
    return [struct.unpack_from("<HHI", raw, offset) for offset in range(4, len(raw), 8)]


def has_acl(path: Path) -> bool:
    return any(tag in (USER, GROUP) for tag, _, _ in read_acl(path))


def _write_acl(path: Path, entries: list[AclEntry]) -> None:
    # The kernel wants the entries ordered by tag, then by id.
    body = b"".join(struct.pack("<HHI", *entry) for entry in sorted(entries))
    os.setxattr(path, ACL_XATTR, struct.pack("<I", _VERSION) + body, follow_symlinks=False)


def traversable_by(path: Path, uid: int, gid: int) -> bool:
    """Whether `uid` (with primary group `gid` and no other group) may search directory `path`."""
    info = os.stat(path)
    if info.st_uid == uid:
        return bool(info.st_mode & stat.S_IXUSR)
    entries = read_acl(path)
    if not entries:
        if info.st_gid == gid:
            return bool(info.st_mode & stat.S_IXGRP)
        return bool(info.st_mode & stat.S_IXOTH)
    return _acl_allows_search(entries, uid, gid, owning_group=info.st_gid, others=info.st_mode & stat.S_IXOTH)


def _acl_allows_search(
    entries: list[tuple[int, int, int]], uid: int, gid: int, *, owning_group: int, others: int
) -> bool:
    """POSIX.1e's access check for the search bit: the named user's entry, else the groups' (the
    owning group's and the named ones), else others; named entries and groups within the mask."""
    mask = next((perm for tag, perm, _ in entries if tag == MASK), 7)
    for tag, perm, ident in entries:
        if tag == USER and ident == uid:
            return bool(perm & mask & 1)
    groups = [perm for tag, perm, ident in entries if tag == GROUP_OBJ and owning_group == gid]
    groups += [perm for tag, perm, ident in entries if tag == GROUP and ident == gid]
    if groups:
        return any(perm & mask & 1 for perm in groups)
    return bool(others)


def grant_traverse(path: Path, uid: int) -> None:
    """Add (or widen) `u:<uid>:--x` on directory `path`, keeping every other entry."""
    mode = os.stat(path).st_mode
    entries = read_acl(path) or [
        (USER_OBJ, (mode >> 6) & 7, _UNDEFINED),
        (GROUP_OBJ, (mode >> 3) & 7, _UNDEFINED),
        (OTHER, mode & 7, _UNDEFINED),
    ]
    others = [entry for entry in entries if entry[0] != MASK and not (entry[0] == USER and entry[2] == uid)]
    current = next((perm for tag, perm, ident in entries if tag == USER and ident == uid), 0)
    others.append((USER, current | 1, uid))
    # The mask bounds every named entry and the owning group: it must let the new entry through
    # without widening what it allowed before (a fresh ACL: exactly the owning group's bits).
    old_mask = next((perm for tag, perm, _ in entries if tag == MASK), None)
    group_obj = next((perm for tag, perm, _ in entries if tag == GROUP_OBJ), 0)
    mask = (old_mask if old_mask is not None else group_obj) | 1
    others.append((MASK, mask, _UNDEFINED))
    _write_acl(path, others)
