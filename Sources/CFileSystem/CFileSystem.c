#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>
#include <sys/syscall.h>
#include "CFileSystem.h"

int foldersync_rename_noreplace(const char *from, const char *to) {
#if defined(__linux__) && defined(SYS_renameat2)
#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1 << 0)
#endif
    return (int)syscall(SYS_renameat2, AT_FDCWD, from, AT_FDCWD, to, RENAME_NOREPLACE);
#else
    errno = ENOSYS;
    return -1;
#endif
}

#if defined(__linux__)
#include <sys/vfs.h>
#include <stdint.h>
#endif

int foldersync_open_beneath(int dirfd, const char *path, int flags, unsigned int mode) {
#if defined(__linux__) && (defined(SYS_openat2) || defined(__x86_64__) || defined(__aarch64__))
#ifndef SYS_openat2
#define SYS_openat2 437
#endif
    /* struct open_how of <linux/openat2.h>, which older headers lack. */
    struct { uint64_t flags; uint64_t mode; uint64_t resolve; } how = {
        (uint64_t)(unsigned int)flags, (uint64_t)mode, 0x04 /* RESOLVE_NO_SYMLINKS */ | 0x08 /* RESOLVE_BENEATH */
    };
    long fd = syscall(SYS_openat2, dirfd, path, &how, sizeof(how));
    return (int)fd;
#else
    (void)dirfd; (void)path; (void)flags; (void)mode;
    errno = ENOSYS;
    return -1;
#endif
}

int foldersync_is_fuse(const char *path) {
#if defined(__linux__)
    struct statfs info;
    return statfs(path, &info) == 0 && info.f_type == 0x65735546; /* FUSE_SUPER_MAGIC */
#else
    (void)path;
    return 0;
#endif
}

int foldersync_start_writeback(int fd, long long offset, long long length) {
#if defined(__linux__)
    return sync_file_range(fd, (off_t)offset, (off_t)length, SYNC_FILE_RANGE_WRITE);
#else
    (void)fd; (void)offset; (void)length;
    return 0;
#endif
}

int foldersync_renameat_noreplace(int fromdir, const char *from, int todir, const char *to) {
#if defined(__linux__) && defined(SYS_renameat2)
#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1 << 0)
#endif
    return (int)syscall(SYS_renameat2, fromdir, from, todir, to, RENAME_NOREPLACE);
#else
    errno = ENOSYS;
    return -1;
#endif
}
