// SPDX-License-Identifier: Apache-2.0
// COMPILE CHECK ONLY. The entry points of MOSEK's C API (mosek.h) that commercial.cpp uses, with
// the types and signatures of MOSEK's own header (10 and 11) and the enumeration values of
// MOSEK 11.2, so that the adapter is compiled in every test build without a MOSEK installation.
// Nothing here solves anything: the definitions (commercial_stub.cpp) fail every call, and the
// object library that compiles them is never linked into a program. A real build uses MOSEK's
// header from MOSEK_HOME/h (benchmarks/compare/CMakeLists.txt).
#pragma once

#ifndef POPALLOC_COMPARE_COMMERCIAL_STUB
#error "benchmarks/compare/stub/ is a compile check only: use MOSEK's own mosek.h (MOSEK_HOME)"
#endif

#ifdef __cplusplus
extern "C" {
#endif

typedef int MSKint32t;
typedef long long MSKint64t;  // as in mosek.h; int64_t is long on LP64 Linux
typedef double MSKrealt;
typedef MSKint32t MSKbooleant;
typedef struct mskenv_struct* MSKenv_t;
typedef struct msktask_struct* MSKtask_t;

#define MSK_INFINITY 1.0e30

typedef enum MSKrescode_enum {
  MSK_RES_OK = 0,
  MSK_RES_ERR_MISSING_LICENSE_FILE = 1008,
  MSK_RES_TRM_MAX_TIME = 100001
} MSKrescodee;

typedef enum MSKboundkey_enum {
  MSK_BK_LO = 0,
  MSK_BK_UP = 1,
  MSK_BK_FX = 2,
  MSK_BK_FR = 3,
  MSK_BK_RA = 4
} MSKboundkeye;

typedef enum MSKsoltype_enum { MSK_SOL_ITR = 0, MSK_SOL_BAS = 1, MSK_SOL_ITG = 2 } MSKsoltypee;
typedef enum MSKsolsta_enum { MSK_SOL_STA_UNKNOWN = 0, MSK_SOL_STA_OPTIMAL = 1 } MSKsolstae;
typedef enum MSKobjsense_enum {
  MSK_OBJECTIVE_SENSE_MINIMIZE = 0,
  MSK_OBJECTIVE_SENSE_MAXIMIZE = 1
} MSKobjsensee;
typedef enum MSKdparam_enum { MSK_DPAR_OPTIMIZER_MAX_TIME = 50 } MSKdparame;
typedef enum MSKiparam_enum { MSK_IPAR_NUM_THREADS = 100 } MSKiparame;

MSKrescodee MSK_makeenv(MSKenv_t* env, const char* dbgfile);
MSKrescodee MSK_deleteenv(MSKenv_t* env);
MSKrescodee MSK_getversion(MSKint32t* major, MSKint32t* minor, MSKint32t* revision);

MSKrescodee MSK_maketask(MSKenv_t env, MSKint32t maxnumcon, MSKint32t maxnumvar, MSKtask_t* task);
MSKrescodee MSK_deletetask(MSKtask_t* task);
MSKrescodee MSK_appendcons(MSKtask_t task, MSKint32t num);
MSKrescodee MSK_appendvars(MSKtask_t task, MSKint32t num);
MSKrescodee MSK_putcslice(MSKtask_t task, MSKint32t first, MSKint32t last, const MSKrealt* slice);
MSKrescodee MSK_putvarboundslice(MSKtask_t task, MSKint32t first, MSKint32t last,
                                 const MSKboundkeye* bkx, const MSKrealt* blx, const MSKrealt* bux);
MSKrescodee MSK_putconboundslice(MSKtask_t task, MSKint32t first, MSKint32t last,
                                 const MSKboundkeye* bkc, const MSKrealt* blc, const MSKrealt* buc);
// MSK_putacolslice (without 64) takes 32-bit column pointers; lp_model's are 64-bit.
MSKrescodee MSK_putacolslice64(MSKtask_t task, MSKint32t first, MSKint32t last,
                               const MSKint64t* ptrb, const MSKint64t* ptre, const MSKint32t* asub,
                               const MSKrealt* aval);
MSKrescodee MSK_putobjsense(MSKtask_t task, MSKobjsensee sense);
MSKrescodee MSK_putdouparam(MSKtask_t task, MSKdparame param, MSKrealt parvalue);
MSKrescodee MSK_putintparam(MSKtask_t task, MSKiparame param, MSKint32t parvalue);

MSKrescodee MSK_optimizetrm(MSKtask_t task, MSKrescodee* trmcode);
MSKrescodee MSK_solutiondef(MSKtask_t task, MSKsoltypee whichsol, MSKbooleant* isdef);
MSKrescodee MSK_getsolsta(MSKtask_t task, MSKsoltypee whichsol, MSKsolstae* solsta);
MSKrescodee MSK_getprimalobj(MSKtask_t task, MSKsoltypee whichsol, MSKrealt* primalobj);
MSKrescodee MSK_getxx(MSKtask_t task, MSKsoltypee whichsol, MSKrealt* xx);

#ifdef __cplusplus
}
#endif
