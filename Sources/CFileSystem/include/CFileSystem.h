#ifndef FOLDERSYNC_CFILESYSTEM_H
#define FOLDERSYNC_CFILESYSTEM_H

/// Renames `from` to `to` only if `to` does not exist (Linux `renameat2(RENAME_NOREPLACE)`).
/// Returns 0 on success, -1 with errno set otherwise (EEXIST when `to` exists,
/// EINVAL or ENOSYS when the file system cannot do it).
int foldersync_rename_noreplace(const char *from, const char *to);

/// 1 when `path` is on a FUSE file system (its file times and inode numbers may not prove a file unchanged).
int foldersync_is_fuse(const char *path);

#endif
