// Written by scripts/lazy-libraries.py: do not edit. 27 functions of <sqlite3.h>, each calling
// the library's own, which is loaded on the first call (see lazy_library.h).
#include <sqlite3.h>

#include "lazy_library.h"

static const char *const rivulet_sqlite_names[] = {
    "sqlite3_bind_blob",
    "sqlite3_bind_double",
    "sqlite3_bind_int64",
    "sqlite3_bind_null",
    "sqlite3_bind_text",
    "sqlite3_busy_timeout",
    "sqlite3_changes",
    "sqlite3_clear_bindings",
    "sqlite3_close",
    "sqlite3_column_blob",
    "sqlite3_column_bytes",
    "sqlite3_column_count",
    "sqlite3_column_double",
    "sqlite3_column_int64",
    "sqlite3_column_name",
    "sqlite3_column_text",
    "sqlite3_column_type",
    "sqlite3_errmsg",
    "sqlite3_errstr",
    "sqlite3_exec",
    "sqlite3_extended_result_codes",
    "sqlite3_finalize",
    "sqlite3_open_v2",
    "sqlite3_prepare_v2",
    "sqlite3_progress_handler",
    "sqlite3_reset",
    "sqlite3_step",
};
static const char *const rivulet_sqlite_files[] = {"libsqlite3.so.0", "libsqlite3.so", NULL};
static void *rivulet_sqlite_pointers[27];
static struct rivulet_lazy_library rivulet_sqlite_library = {
    "libsqlite3-0 (SQLite)", rivulet_sqlite_files, rivulet_sqlite_names, rivulet_sqlite_pointers, 27, 0, NULL, "",
};

const char *rivulet_sqlite_load_error(void) { return rivulet_lazy_load_error(&rivulet_sqlite_library); }

static inline void *rivulet_sqlite_function(int index) { return rivulet_lazy_function(&rivulet_sqlite_library, index); }

int sqlite3_bind_blob(sqlite3_stmt *p0, int p1, const void *p2, int p3, void (*p4)(void *)) { return ((__typeof__(&sqlite3_bind_blob))rivulet_sqlite_function(0))(p0, p1, p2, p3, p4); }
int sqlite3_bind_double(sqlite3_stmt *p0, int p1, double p2) { return ((__typeof__(&sqlite3_bind_double))rivulet_sqlite_function(1))(p0, p1, p2); }
int sqlite3_bind_int64(sqlite3_stmt *p0, int p1, sqlite3_int64 p2) { return ((__typeof__(&sqlite3_bind_int64))rivulet_sqlite_function(2))(p0, p1, p2); }
int sqlite3_bind_null(sqlite3_stmt *p0, int p1) { return ((__typeof__(&sqlite3_bind_null))rivulet_sqlite_function(3))(p0, p1); }
int sqlite3_bind_text(sqlite3_stmt *p0, int p1, const char *p2, int p3, void (*p4)(void *)) { return ((__typeof__(&sqlite3_bind_text))rivulet_sqlite_function(4))(p0, p1, p2, p3, p4); }
int sqlite3_busy_timeout(sqlite3 *p0, int p1) { return ((__typeof__(&sqlite3_busy_timeout))rivulet_sqlite_function(5))(p0, p1); }
int sqlite3_changes(sqlite3 *p0) { return ((__typeof__(&sqlite3_changes))rivulet_sqlite_function(6))(p0); }
int sqlite3_clear_bindings(sqlite3_stmt *p0) { return ((__typeof__(&sqlite3_clear_bindings))rivulet_sqlite_function(7))(p0); }
int sqlite3_close(sqlite3 *p0) { return ((__typeof__(&sqlite3_close))rivulet_sqlite_function(8))(p0); }
const void *sqlite3_column_blob(sqlite3_stmt *p0, int p1) { return ((__typeof__(&sqlite3_column_blob))rivulet_sqlite_function(9))(p0, p1); }
int sqlite3_column_bytes(sqlite3_stmt *p0, int p1) { return ((__typeof__(&sqlite3_column_bytes))rivulet_sqlite_function(10))(p0, p1); }
int sqlite3_column_count(sqlite3_stmt *p0) { return ((__typeof__(&sqlite3_column_count))rivulet_sqlite_function(11))(p0); }
double sqlite3_column_double(sqlite3_stmt *p0, int p1) { return ((__typeof__(&sqlite3_column_double))rivulet_sqlite_function(12))(p0, p1); }
sqlite3_int64 sqlite3_column_int64(sqlite3_stmt *p0, int p1) { return ((__typeof__(&sqlite3_column_int64))rivulet_sqlite_function(13))(p0, p1); }
const char *sqlite3_column_name(sqlite3_stmt *p0, int p1) { return ((__typeof__(&sqlite3_column_name))rivulet_sqlite_function(14))(p0, p1); }
const unsigned char *sqlite3_column_text(sqlite3_stmt *p0, int p1) { return ((__typeof__(&sqlite3_column_text))rivulet_sqlite_function(15))(p0, p1); }
int sqlite3_column_type(sqlite3_stmt *p0, int p1) { return ((__typeof__(&sqlite3_column_type))rivulet_sqlite_function(16))(p0, p1); }
const char *sqlite3_errmsg(sqlite3 *p0) { return ((__typeof__(&sqlite3_errmsg))rivulet_sqlite_function(17))(p0); }
const char *sqlite3_errstr(int p0) { return ((__typeof__(&sqlite3_errstr))rivulet_sqlite_function(18))(p0); }
int sqlite3_exec(sqlite3 *p0, const char *p1, int (*p2)(void *, int, char **, char **), void *p3, char **p4) { return ((__typeof__(&sqlite3_exec))rivulet_sqlite_function(19))(p0, p1, p2, p3, p4); }
int sqlite3_extended_result_codes(sqlite3 *p0, int p1) { return ((__typeof__(&sqlite3_extended_result_codes))rivulet_sqlite_function(20))(p0, p1); }
int sqlite3_finalize(sqlite3_stmt *p0) { return ((__typeof__(&sqlite3_finalize))rivulet_sqlite_function(21))(p0); }
int sqlite3_open_v2(const char *p0, sqlite3 **p1, int p2, const char *p3) { return ((__typeof__(&sqlite3_open_v2))rivulet_sqlite_function(22))(p0, p1, p2, p3); }
int sqlite3_prepare_v2(sqlite3 *p0, const char *p1, int p2, sqlite3_stmt **p3, const char **p4) { return ((__typeof__(&sqlite3_prepare_v2))rivulet_sqlite_function(23))(p0, p1, p2, p3, p4); }
void sqlite3_progress_handler(sqlite3 *p0, int p1, int (*p2)(void *), void *p3) { ((__typeof__(&sqlite3_progress_handler))rivulet_sqlite_function(24))(p0, p1, p2, p3); }
int sqlite3_reset(sqlite3_stmt *p0) { return ((__typeof__(&sqlite3_reset))rivulet_sqlite_function(25))(p0); }
int sqlite3_step(sqlite3_stmt *p0) { return ((__typeof__(&sqlite3_step))rivulet_sqlite_function(26))(p0); }
