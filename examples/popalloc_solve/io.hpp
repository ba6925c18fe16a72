// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief popalloc-solve's short names for the library's file helpers (popalloc/io/).
#pragma once

#include <popalloc/io/atomic_file.hpp>
#include <popalloc/io/csv.hpp>
#include <popalloc/io/input_error.hpp>
#include <popalloc/io/json.hpp>
#include <popalloc/io/text_file.hpp>

namespace popalloc_solve {

using popalloc::io::append_csv_field;
using popalloc::io::append_number;
using popalloc::io::atomic_output_file;
using popalloc::io::check_field_count;
using popalloc::io::check_output_path;
using popalloc::io::csv_records;
using popalloc::io::fail_at;
using popalloc::io::input_error;
using popalloc::io::parse_non_negative;
using popalloc::io::quoted_field;
using popalloc::io::read_whole_file;
namespace json = popalloc::io::json;

}  // namespace popalloc_solve
