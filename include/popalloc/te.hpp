// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief Everything of popalloc's traffic-engineering layer (namespace popalloc::te):
/// topologies, traffic matrices, paths, the price and LP solvers and POP
/// (docs/traffic-engineering.md).
#pragma once

#include "popalloc/te/demands_csv.hpp"
#include "popalloc/te/flow.hpp"
#include "popalloc/te/graphml.hpp"
#include "popalloc/te/instance.hpp"
#include "popalloc/te/load_topology.hpp"
#include "popalloc/te/lp_model.hpp"
#include "popalloc/te/node_link_json.hpp"
#include "popalloc/te/paths.hpp"
#include "popalloc/te/plan_json.hpp"
#include "popalloc/te/pop.hpp"
#include "popalloc/te/price_solver.hpp"
#include "popalloc/te/topology.hpp"
#include "popalloc/te/traffic_matrix.hpp"
#include "popalloc/te/xml_reader.hpp"
