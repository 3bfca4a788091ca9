// Written by scripts/lazy-libraries.py: do not edit. 32 functions of <postgresql/libpq-fe.h>, each calling
// the library's own, which is loaded on the first call (see lazy_library.h).
#include <postgresql/libpq-fe.h>

#include "lazy_library.h"

static const char *const rivulet_postgres_names[] = {
    "PQcancel",
    "PQclear",
    "PQcmdTuples",
    "PQconnectdbParams",
    "PQconsumeInput",
    "PQerrorMessage",
    "PQexec",
    "PQexecParams",
    "PQfinish",
    "PQflush",
    "PQfname",
    "PQfreeCancel",
    "PQfreemem",
    "PQftype",
    "PQgetCancel",
    "PQgetCopyData",
    "PQgetResult",
    "PQgetisnull",
    "PQgetvalue",
    "PQnfields",
    "PQntuples",
    "PQputCopyData",
    "PQputCopyEnd",
    "PQresultErrorField",
    "PQresultStatus",
    "PQsendQueryParams",
    "PQserverVersion",
    "PQsetNoticeProcessor",
    "PQsetSingleRowMode",
    "PQsocket",
    "PQsslInUse",
    "PQstatus",
};
static const char *const rivulet_postgres_files[] = {"libpq.so.5", "libpq.so", NULL};
static void *rivulet_postgres_pointers[32];
static struct rivulet_lazy_library rivulet_postgres_library = {
    "libpq5 (PostgreSQL's client library)", rivulet_postgres_files, rivulet_postgres_names, rivulet_postgres_pointers, 32, 0, NULL, "",
};

const char *rivulet_postgres_load_error(void) { return rivulet_lazy_load_error(&rivulet_postgres_library); }

static inline void *rivulet_postgres_function(int index) { return rivulet_lazy_function(&rivulet_postgres_library, index); }

int PQcancel(PGcancel *p0, char *p1, int p2) { return ((__typeof__(&PQcancel))rivulet_postgres_function(0))(p0, p1, p2); }
void PQclear(PGresult *p0) { ((__typeof__(&PQclear))rivulet_postgres_function(1))(p0); }
char *PQcmdTuples(PGresult *p0) { return ((__typeof__(&PQcmdTuples))rivulet_postgres_function(2))(p0); }
PGconn *PQconnectdbParams(const char *const *p0, const char *const *p1, int p2) { return ((__typeof__(&PQconnectdbParams))rivulet_postgres_function(3))(p0, p1, p2); }
int PQconsumeInput(PGconn *p0) { return ((__typeof__(&PQconsumeInput))rivulet_postgres_function(4))(p0); }
char *PQerrorMessage(const PGconn *p0) { return ((__typeof__(&PQerrorMessage))rivulet_postgres_function(5))(p0); }
PGresult *PQexec(PGconn *p0, const char *p1) { return ((__typeof__(&PQexec))rivulet_postgres_function(6))(p0, p1); }
PGresult *PQexecParams(PGconn *p0, const char *p1, int p2, const Oid *p3, const char *const *p4, const int *p5, const int *p6, int p7) { return ((__typeof__(&PQexecParams))rivulet_postgres_function(7))(p0, p1, p2, p3, p4, p5, p6, p7); }
void PQfinish(PGconn *p0) { ((__typeof__(&PQfinish))rivulet_postgres_function(8))(p0); }
int PQflush(PGconn *p0) { return ((__typeof__(&PQflush))rivulet_postgres_function(9))(p0); }
char *PQfname(const PGresult *p0, int p1) { return ((__typeof__(&PQfname))rivulet_postgres_function(10))(p0, p1); }
void PQfreeCancel(PGcancel *p0) { ((__typeof__(&PQfreeCancel))rivulet_postgres_function(11))(p0); }
void PQfreemem(void *p0) { ((__typeof__(&PQfreemem))rivulet_postgres_function(12))(p0); }
Oid PQftype(const PGresult *p0, int p1) { return ((__typeof__(&PQftype))rivulet_postgres_function(13))(p0, p1); }
PGcancel *PQgetCancel(PGconn *p0) { return ((__typeof__(&PQgetCancel))rivulet_postgres_function(14))(p0); }
int PQgetCopyData(PGconn *p0, char **p1, int p2) { return ((__typeof__(&PQgetCopyData))rivulet_postgres_function(15))(p0, p1, p2); }
PGresult *PQgetResult(PGconn *p0) { return ((__typeof__(&PQgetResult))rivulet_postgres_function(16))(p0); }
int PQgetisnull(const PGresult *p0, int p1, int p2) { return ((__typeof__(&PQgetisnull))rivulet_postgres_function(17))(p0, p1, p2); }
char *PQgetvalue(const PGresult *p0, int p1, int p2) { return ((__typeof__(&PQgetvalue))rivulet_postgres_function(18))(p0, p1, p2); }
int PQnfields(const PGresult *p0) { return ((__typeof__(&PQnfields))rivulet_postgres_function(19))(p0); }
int PQntuples(const PGresult *p0) { return ((__typeof__(&PQntuples))rivulet_postgres_function(20))(p0); }
int PQputCopyData(PGconn *p0, const char *p1, int p2) { return ((__typeof__(&PQputCopyData))rivulet_postgres_function(21))(p0, p1, p2); }
int PQputCopyEnd(PGconn *p0, const char *p1) { return ((__typeof__(&PQputCopyEnd))rivulet_postgres_function(22))(p0, p1); }
char *PQresultErrorField(const PGresult *p0, int p1) { return ((__typeof__(&PQresultErrorField))rivulet_postgres_function(23))(p0, p1); }
ExecStatusType PQresultStatus(const PGresult *p0) { return ((__typeof__(&PQresultStatus))rivulet_postgres_function(24))(p0); }
int PQsendQueryParams(PGconn *p0, const char *p1, int p2, const Oid *p3, const char *const *p4, const int *p5, const int *p6, int p7) { return ((__typeof__(&PQsendQueryParams))rivulet_postgres_function(25))(p0, p1, p2, p3, p4, p5, p6, p7); }
int PQserverVersion(const PGconn *p0) { return ((__typeof__(&PQserverVersion))rivulet_postgres_function(26))(p0); }
PQnoticeProcessor PQsetNoticeProcessor(PGconn *p0, PQnoticeProcessor p1, void *p2) { return ((__typeof__(&PQsetNoticeProcessor))rivulet_postgres_function(27))(p0, p1, p2); }
int PQsetSingleRowMode(PGconn *p0) { return ((__typeof__(&PQsetSingleRowMode))rivulet_postgres_function(28))(p0); }
int PQsocket(const PGconn *p0) { return ((__typeof__(&PQsocket))rivulet_postgres_function(29))(p0); }
int PQsslInUse(PGconn *p0) { return ((__typeof__(&PQsslInUse))rivulet_postgres_function(30))(p0); }
ConnStatusType PQstatus(const PGconn *p0) { return ((__typeof__(&PQstatus))rivulet_postgres_function(31))(p0); }
