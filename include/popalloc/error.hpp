// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief Exceptions for misuse and environment failures. Numerical outcomes are statuses
/// (see status.hpp), never exceptions.
#pragma once

#include <stdexcept>
#include <string>

namespace popalloc {

/// \brief Base class of every exception popalloc throws.
class error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// \brief The problem data is invalid (NaN/inf, negative values, mismatched sizes, empty problem).
class invalid_problem : public error {
 public:
  using error::error;
};

/// \brief A solver option is out of range.
class invalid_options : public error {
 public:
  using error::error;
};

/// \brief The compute backend failed (for example device memory exhausted).
class backend_error : public error {
 public:
  using error::error;
};

}  // namespace popalloc
