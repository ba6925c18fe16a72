// SPDX-License-Identifier: Apache-2.0
// COMPILE CHECK ONLY: definitions of the stub entry points of gurobi_c.h and mosek.h in this
// directory. They exist so that each declaration is also compiled as a definition (a declaration
// that drifted from itself, or a typo, fails here), and they fail every call so that nothing
// could ever be solved through them. The object library compiling this file is never linked.
#include <gurobi_c.h>
#include <mosek.h>

namespace {
constexpr int stub_error = 10024;  // GRB_ERROR_NOT_SUPPORTED
constexpr MSKrescodee stub_rescode = MSK_RES_ERR_MISSING_LICENSE_FILE;
}  // namespace

extern "C" {

int GRBemptyenv(GRBenv** envP) {
  *envP = nullptr;
  return stub_error;
}
int GRBstartenv(GRBenv*) { return stub_error; }
void GRBfreeenv(GRBenv*) {}
const char* GRBgeterrormsg(GRBenv*) { return "compile-check stub: no Gurobi"; }
GRBenv* GRBgetenv(GRBmodel*) { return nullptr; }
void GRBversion(int* majorP, int* minorP, int* technicalP) { *majorP = *minorP = *technicalP = 0; }
int GRBsetintparam(GRBenv*, const char*, int) { return stub_error; }
int GRBsetdblparam(GRBenv*, const char*, double) { return stub_error; }
int GRBXloadmodel(GRBenv*, GRBmodel** modelP, const char*, int, int, int, double, double*, char*,
                  double*, size_t*, int*, int*, double*, double*, double*, char*, char**, char**) {
  *modelP = nullptr;
  return stub_error;
}
int GRBoptimize(GRBmodel*) { return stub_error; }
int GRBfreemodel(GRBmodel*) { return 0; }
int GRBgetintattr(GRBmodel*, const char*, int*) { return stub_error; }
int GRBgetdblattr(GRBmodel*, const char*, double*) { return stub_error; }
int GRBgetdblattrarray(GRBmodel*, const char*, int, int, double*) { return stub_error; }

MSKrescodee MSK_makeenv(MSKenv_t* env, const char*) {
  *env = nullptr;
  return stub_rescode;
}
MSKrescodee MSK_deleteenv(MSKenv_t*) { return MSK_RES_OK; }
MSKrescodee MSK_getversion(MSKint32t* major, MSKint32t* minor, MSKint32t* revision) {
  *major = *minor = *revision = 0;
  return MSK_RES_OK;
}
MSKrescodee MSK_maketask(MSKenv_t, MSKint32t, MSKint32t, MSKtask_t* task) {
  *task = nullptr;
  return stub_rescode;
}
MSKrescodee MSK_deletetask(MSKtask_t*) { return MSK_RES_OK; }
MSKrescodee MSK_appendcons(MSKtask_t, MSKint32t) { return stub_rescode; }
MSKrescodee MSK_appendvars(MSKtask_t, MSKint32t) { return stub_rescode; }
MSKrescodee MSK_putcslice(MSKtask_t, MSKint32t, MSKint32t, const MSKrealt*) { return stub_rescode; }
MSKrescodee MSK_putvarboundslice(MSKtask_t, MSKint32t, MSKint32t, const MSKboundkeye*,
                                 const MSKrealt*, const MSKrealt*) {
  return stub_rescode;
}
MSKrescodee MSK_putconboundslice(MSKtask_t, MSKint32t, MSKint32t, const MSKboundkeye*,
                                 const MSKrealt*, const MSKrealt*) {
  return stub_rescode;
}
MSKrescodee MSK_putacolslice64(MSKtask_t, MSKint32t, MSKint32t, const MSKint64t*, const MSKint64t*,
                               const MSKint32t*, const MSKrealt*) {
  return stub_rescode;
}
MSKrescodee MSK_putobjsense(MSKtask_t, MSKobjsensee) { return stub_rescode; }
MSKrescodee MSK_putdouparam(MSKtask_t, MSKdparame, MSKrealt) { return stub_rescode; }
MSKrescodee MSK_putintparam(MSKtask_t, MSKiparame, MSKint32t) { return stub_rescode; }
MSKrescodee MSK_optimizetrm(MSKtask_t, MSKrescodee* trmcode) {
  *trmcode = stub_rescode;
  return stub_rescode;
}
MSKrescodee MSK_solutiondef(MSKtask_t, MSKsoltypee, MSKbooleant* isdef) {
  *isdef = 0;
  return stub_rescode;
}
MSKrescodee MSK_getsolsta(MSKtask_t, MSKsoltypee, MSKsolstae* solsta) {
  *solsta = MSK_SOL_STA_UNKNOWN;
  return stub_rescode;
}
MSKrescodee MSK_getprimalobj(MSKtask_t, MSKsoltypee, MSKrealt* primalobj) {
  *primalobj = 0.0;
  return stub_rescode;
}
MSKrescodee MSK_getxx(MSKtask_t, MSKsoltypee, MSKrealt*) { return stub_rescode; }

}  // extern "C"
