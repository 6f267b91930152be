#ifndef FOLDERSYNC_CFILESYSTEM_H
#define FOLDERSYNC_CFILESYSTEM_H

/// Renames `from` to `to` only if `to` does not exist (Linux `renameat2(RENAME_NOREPLACE)`).
/// Returns 0 on success, -1 with errno set otherwise (EEXIST when `to` exists,
/// EINVAL or ENOSYS when the file system cannot do it).
int foldersync_rename_noreplace(const char *from, const char *to);

/// `foldersync_rename_noreplace` relative to open folders (`renameat2(RENAME_NOREPLACE)`), so that no path is
/// walked again (the file-manager backend resolves folders without following links).
int foldersync_renameat_noreplace(int fromdir, const char *from, int todir, const char *to);

/// Opens `path` (one or more components separated by `/`) below the open folder `dirfd` in one call, refusing a
/// symbolic link anywhere in it and any way out of `dirfd` (Linux 5.6 `openat2` with `RESOLVE_NO_SYMLINKS |
/// RESOLVE_BENEATH`). Returns the descriptor, or -1 with errno set: ENOSYS where there is no `openat2` (walk the
/// components one by one instead), ELOOP for a link, ENOENT, ENOTDIR…
int foldersync_open_beneath(int dirfd, const char *path, int flags, unsigned int mode);

/// 1 when `path` is on a FUSE file system (its file times and inode numbers may not prove a file unchanged).
int foldersync_is_fuse(const char *path);

/// Starts writing the dirty pages of `length` bytes of `fd` from `offset` to disk without waiting for them
/// (Linux `sync_file_range(SYNC_FILE_RANGE_WRITE)`), so that a later fsync has little left to wait for. Not
/// a durability guarantee. Returns 0, or -1 with errno set; elsewhere than Linux, does nothing and returns 0.
int foldersync_start_writeback(int fd, long long offset, long long length);

/// Puts a SQLite connection (`sqlite3 *`) in the mode SQLite recommends for database files that may come from
/// elsewhere: `SQLITE_DBCONFIG_DEFENSIVE` on (no SQL can corrupt the file: writable_schema, journal_mode=OFF…),
/// `SQLITE_DBCONFIG_TRUSTED_SCHEMA` off (functions of the schema must be innocuous), extension loading off.
/// `sqlite3_db_config` is variadic, which Swift cannot call. Returns SQLITE_OK (0) or SQLite's error code.
int foldersync_sqlite_harden(void *connection);

/// 1 when the connection is defensive and does not trust its schema, 0 otherwise.
int foldersync_sqlite_is_hardened(void *connection);

/// Turns the connection's triggers on (1) or off (0) (`SQLITE_DBCONFIG_ENABLE_TRIGGER`; SQLite expires the
/// connection's prepared statements, which it prepares again at their next use). Returns the state after the call,
/// or -1 when SQLite refused.
int foldersync_sqlite_set_triggers(void *connection, int enabled);

#endif
