// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief The general problem: each job chooses among options that consume bundles of resources.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <Eigen/Core>

#include "popalloc/error.hpp"
#include "popalloc/utility/concept.hpp"
#include "popalloc/utility/job_parameters.hpp"
#include "popalloc/value_range.hpp"

namespace popalloc {

/// \brief One resource consumed by an option: `amount` units per unit of time on the option.
struct consumption {
  std::int32_t resource = 0;
  double amount = 0.0;
};

/// \brief maximize sum_i f_i(t_i), t_i = sum_o a_o x_o over the options o of job i,
/// x >= 0, sum_o x_o <= 1 per job, sum_o c_oj x_o <= R_j for every resource j.
///
/// An option is, for example, a network path (it uses every link on it) or a multi-resource
/// placement. Build it job by job: add_job(), then add_option() for that job's options.
template <class Scalar = double>
class bundle_problem {
 public:
  using scalar_type = Scalar;

  explicit bundle_problem(Eigen::VectorXd capacity) : capacity_(std::move(capacity)) {
    job_option_offset_.push_back(0);
    option_consumption_offset_.push_back(0);
  }

  /// \brief Starts a new job; following add_option() calls belong to it. Returns its index.
  std::int64_t add_job(job_parameters parameters = {}) {
    weight_.push_back(static_cast<Scalar>(parameters.weight));
    target_.push_back(static_cast<Scalar>(parameters.target));
    job_option_offset_.push_back(job_option_offset_.back());
    return static_cast<std::int64_t>(weight_.size()) - 1;
  }

  /// \brief Adds an option with value rate `value` to the last job added.
  /// \throws invalid_problem if no job was added yet or a resource index is out of range.
  void add_option(double value, const std::vector<consumption>& uses) {
    if (weight_.empty()) throw invalid_problem("add_option() before add_job()");
    for (const auto& c : uses) {
      if (c.resource < 0 || c.resource >= capacity_.size())
        throw invalid_problem("option of job " + std::to_string(weight_.size() - 1) +
                              " uses unknown resource " + std::to_string(c.resource));
      consumption_resource_.push_back(c.resource);
      consumption_amount_.push_back(static_cast<Scalar>(c.amount));
    }
    option_value_.push_back(static_cast<Scalar>(value));
    option_consumption_offset_.push_back(static_cast<std::int64_t>(consumption_resource_.size()));
    ++job_option_offset_.back();
  }

  Eigen::Index jobs() const { return static_cast<Eigen::Index>(weight_.size()); }
  Eigen::Index resources() const { return capacity_.size(); }
  std::int64_t options() const { return static_cast<std::int64_t>(option_value_.size()); }

  const Eigen::VectorXd& capacity() const { return capacity_; }
  Eigen::VectorXd& capacity() { return capacity_; }
  const std::vector<Scalar>& weight() const { return weight_; }
  const std::vector<Scalar>& target() const { return target_; }
  const std::vector<std::int64_t>& job_option_offset() const { return job_option_offset_; }
  const std::vector<Scalar>& option_value() const { return option_value_; }
  const std::vector<std::int64_t>& option_consumption_offset() const {
    return option_consumption_offset_;
  }
  const std::vector<std::int32_t>& consumption_resource() const { return consumption_resource_; }
  const std::vector<Scalar>& consumption_amount() const { return consumption_amount_; }

  /// \brief Throws invalid_problem unless the data is usable by `Utility`.
  template <class Utility>
  void validate(const Utility& /*utility*/) const {
    detail::check_utility<Utility>();
    if (jobs() == 0) throw invalid_problem("problem has no jobs");
    if (resources() == 0) throw invalid_problem("problem has no resources");
    for (Eigen::Index j = 0; j < resources(); ++j)
      if (!detail::in_value_range(capacity_[j]) || capacity_[j] < 0)
        throw invalid_problem("capacity[" + std::to_string(j) + "] must be >= 0 and " +
                              detail::value_range_text());
    for (Eigen::Index i = 0; i < jobs(); ++i) {
      const auto w = static_cast<double>(weight_[static_cast<std::size_t>(i)]);
      if (!detail::in_value_range(w) || w < 0 || (Utility::requires_positive_weight && w == 0))
        throw invalid_problem("weight of job " + std::to_string(i) + " must be " +
                              (Utility::requires_positive_weight ? "> 0" : ">= 0") + " and " +
                              detail::value_range_text());
      if (!(std::abs(static_cast<double>(target_[static_cast<std::size_t>(i)])) <= value_max))
        throw invalid_problem("target of job " + std::to_string(i) +
                              " must be finite and within [-1e60, 1e60]");
      bool usable = false;
      for (auto o = job_option_offset_[static_cast<std::size_t>(i)];
           o < job_option_offset_[static_cast<std::size_t>(i) + 1]; ++o) {
        const auto a = static_cast<double>(option_value_[static_cast<std::size_t>(o)]);
        if (!detail::in_value_range(a) || a < 0)
          throw invalid_problem("option value of job " + std::to_string(i) + " must be >= 0 and " +
                                detail::value_range_text());
        bool open = true;
        for (auto k = option_consumption_offset_[static_cast<std::size_t>(o)];
             k < option_consumption_offset_[static_cast<std::size_t>(o) + 1]; ++k) {
          const auto c = static_cast<double>(consumption_amount_[static_cast<std::size_t>(k)]);
          if (!detail::in_value_range(c) || c < 0)
            throw invalid_problem("consumption of an option of job " + std::to_string(i) +
                                  " must be >= 0 and " + detail::value_range_text());
          if (c > 0 && capacity_[consumption_resource_[static_cast<std::size_t>(k)]] == 0)
            open = false;
        }
        if (open && a > 0) usable = true;
      }
      if (Utility::requires_positive_throughput && !usable)
        throw invalid_problem("job " + std::to_string(i) +
                              " has no option with positive value on open resources");
    }
  }

 private:
  Eigen::VectorXd capacity_;
  std::vector<Scalar> weight_, target_;
  std::vector<std::int64_t> job_option_offset_;
  std::vector<Scalar> option_value_;
  std::vector<std::int64_t> option_consumption_offset_;
  std::vector<std::int32_t> consumption_resource_;
  std::vector<Scalar> consumption_amount_;
};

}  // namespace popalloc
