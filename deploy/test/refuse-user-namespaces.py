"""Runs a command under a seccomp filter that refuses new user namespaces the way the container
runtimes' default profiles (Kubernetes' RuntimeDefault) do for a process without CAP_SYS_ADMIN:
clone and unshare with CLONE_NEWUSER fail with EPERM, clone3 with ENOSYS (so libc falls back to
clone). Only that part of the profile is reproduced: it is the part Chromium's sandbox needs.

    python3 refuse-user-namespaces.py <command> [args...]
"""
import ctypes
import os
import platform
import struct
import sys

# (audit arch, clone, unshare, clone3) syscall numbers per machine.
ARCHES = {
    'x86_64': (0xC000003E, 56, 272, 435),
    'aarch64': (0xC00000B7, 220, 97, 435),
}
CLONE_NEWUSER = 0x10000000
LD_W_ABS, JEQ_K, JSET_K, RET_K = 0x20, 0x15, 0x45, 0x06
ALLOW, ERRNO, EPERM, ENOSYS = 0x7FFF0000, 0x00050000, 1, 38
PR_SET_NO_NEW_PRIVS, PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 38, 22, 2


def stmt(code, k):
    return struct.pack('HBBI', code, 0, 0, k)


def jump(code, k, jt, jf):
    return struct.pack('HBBI', code, jt, jf, k)


def main():
    if platform.machine() not in ARCHES:
        sys.exit(f'unsupported machine {platform.machine()}')
    arch, nr_clone, nr_unshare, nr_clone3 = ARCHES[platform.machine()]
    program = [
        stmt(LD_W_ABS, 4),  # seccomp_data.arch
        jump(JEQ_K, arch, 1, 0),
        stmt(RET_K, ALLOW),
        stmt(LD_W_ABS, 0),  # seccomp_data.nr
        jump(JEQ_K, nr_clone3, 0, 1),
        stmt(RET_K, ERRNO | ENOSYS),
        jump(JEQ_K, nr_clone, 1, 0),
        jump(JEQ_K, nr_unshare, 0, 3),
        stmt(LD_W_ABS, 16),  # seccomp_data.args[0], low half: the flags
        jump(JSET_K, CLONE_NEWUSER, 0, 1),
        stmt(RET_K, ERRNO | EPERM),
        stmt(RET_K, ALLOW),
    ]
    code = ctypes.create_string_buffer(b''.join(program))

    class SockFprog(ctypes.Structure):
        _fields_ = [('len', ctypes.c_ushort), ('filter', ctypes.c_void_p)]

    fprog = SockFprog(len(program), ctypes.cast(code, ctypes.c_void_p))
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_void_p, ctypes.c_ulong, ctypes.c_ulong]
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, None, 0, 0) != 0:
        sys.exit('PR_SET_NO_NEW_PRIVS failed')
    if libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0) != 0:
        sys.exit(f'PR_SET_SECCOMP failed: errno {ctypes.get_errno()}')
    os.execvp(sys.argv[1], sys.argv[1:])


main()
