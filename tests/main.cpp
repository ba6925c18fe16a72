// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief doctest entry point shared by popalloc_tests and popalloc_tests_thrust.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>
