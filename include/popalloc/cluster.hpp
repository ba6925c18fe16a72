// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief Everything of popalloc's cluster-scheduling layer (namespace popalloc::cluster): Gavel's
/// policies with POP (`allocate`), space sharing (`allocate_packed`), the job generator, traces
/// and the round-based simulator (docs/cluster-scheduling.md).
#pragma once

#include "popalloc/cluster/class_policies.hpp"
#include "popalloc/cluster/cluster_spec.hpp"
#include "popalloc/cluster/combinations.hpp"
#include "popalloc/cluster/dense_simplex.hpp"
#include "popalloc/cluster/instance.hpp"
#include "popalloc/cluster/job.hpp"
#include "popalloc/cluster/job_generator.hpp"
#include "popalloc/cluster/level_bisection.hpp"
#include "popalloc/cluster/level_policies.hpp"
#include "popalloc/cluster/packed_lp.hpp"
#include "popalloc/cluster/packed_policies.hpp"
#include "popalloc/cluster/policies.hpp"
#include "popalloc/cluster/policy.hpp"
#include "popalloc/cluster/policy_support.hpp"
#include "popalloc/cluster/round_mechanism.hpp"
#include "popalloc/cluster/separable_policies.hpp"
#include "popalloc/cluster/sim_policy.hpp"
#include "popalloc/cluster/simulator.hpp"
#include "popalloc/cluster/throughputs.hpp"
#include "popalloc/cluster/trace.hpp"
