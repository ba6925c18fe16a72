// SPDX-License-Identifier: Apache-2.0
// COMPILE CHECK ONLY. The few entry points of Gurobi's C API (gurobi_c.h) that commercial.cpp
// uses, with the signatures and constants of Gurobi's own header (checked against Gurobi 11-13),
// so that the adapter is compiled in every test build without a Gurobi installation and cannot
// rot unnoticed. Nothing here solves anything: the definitions (commercial_stub.cpp) fail every
// call, and the object library that compiles them is never linked into a program. A real build
// uses Gurobi's header from GUROBI_HOME/include (benchmarks/compare/CMakeLists.txt).
#pragma once

#ifndef POPALLOC_COMPARE_COMMERCIAL_STUB
#error "benchmarks/compare/stub/ is a compile check only: use Gurobi's own gurobi_c.h (GUROBI_HOME)"
#endif

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct _GRBmodel GRBmodel;
typedef struct _GRBenv GRBenv;

#define GRB_ERROR_NO_LICENSE 10009
#define GRB_ERROR_SIZE_LIMIT_EXCEEDED 10010

#define GRB_LESS_EQUAL '<'
#define GRB_MAXIMIZE -1
#define GRB_INFINITY 1e100

#define GRB_OPTIMAL 2
#define GRB_TIME_LIMIT 9

int GRBemptyenv(GRBenv** envP);
int GRBstartenv(GRBenv* env);
void GRBfreeenv(GRBenv* env);
const char* GRBgeterrormsg(GRBenv* env);
GRBenv* GRBgetenv(GRBmodel* model);
void GRBversion(int* majorP, int* minorP, int* technicalP);

int GRBsetintparam(GRBenv* env, const char* paramname, int value);
int GRBsetdblparam(GRBenv* env, const char* paramname, double value);

int GRBXloadmodel(GRBenv* env, GRBmodel** modelP, const char* Pname, int numvars, int numconstrs,
                  int objsense, double objcon, double* obj, char* sense, double* rhs, size_t* vbeg,
                  int* vlen, int* vind, double* vval, double* lb, double* ub, char* vtype,
                  char** varnames, char** constrnames);
int GRBoptimize(GRBmodel* model);
int GRBfreemodel(GRBmodel* model);

int GRBgetintattr(GRBmodel* model, const char* attrname, int* valueP);
int GRBgetdblattr(GRBmodel* model, const char* attrname, double* valueP);
int GRBgetdblattrarray(GRBmodel* model, const char* attrname, int first, int len, double* values);

#ifdef __cplusplus
}
#endif
