#include <sqlite3.h>
#include "CFileSystem.h"

int foldersync_sqlite_harden(void *connection) {
    sqlite3 *db = connection;
    int code = sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, 1, (int *)0);
    if (code != SQLITE_OK) return code;
    code = sqlite3_db_config(db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, (int *)0);
    if (code != SQLITE_OK) return code;
    return sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION, 0, (int *)0);
}

int foldersync_sqlite_is_hardened(void *connection) {
    sqlite3 *db = connection;
    int defensive = 0, trusted = 1;
    if (sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, -1, &defensive) != SQLITE_OK) return 0;
    if (sqlite3_db_config(db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, -1, &trusted) != SQLITE_OK) return 0;
    return defensive == 1 && trusted == 0;
}

int foldersync_sqlite_set_triggers(void *connection, int enabled) {
    int state = -1;
    if (sqlite3_db_config((sqlite3 *)connection, SQLITE_DBCONFIG_ENABLE_TRIGGER, enabled, &state) != SQLITE_OK) return -1;
    return state;
}
