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
#endif

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
