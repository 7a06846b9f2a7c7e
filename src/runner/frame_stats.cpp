#include "bristle/runner/frame_stats.hpp"

#include <algorithm>
#include <cmath>

namespace bristle {

void FrameStats::add(const StepReport& report) {
  ++steps_;
  cg_iterations_ += report.cg_iterations;
  cg_iterations_max_ = std::max(cg_iterations_max_, report.cg_iterations);
  cg_residual_ = report.cg_residual;
  cg_residual_max_ = std::max(cg_residual_max_, report.cg_residual);
  newton_iterations_ += report.newton_iterations;
  substeps_ += report.substeps;
  if (!report.converged) ++unconverged_steps_;
  unconverged_rods_ += report.unconverged_rods;
  rod_contact_last_ = report.rod_contact;
  rod_min_gap_ = std::min(rod_min_gap_, report.rod_contact.min_gap);
  rod_min_gap_fraction_ = std::min(rod_min_gap_fraction_, report.rod_contact.min_gap_fraction);
  ccd_limited_ += report.ccd_limited;
  rod_crossings_ += report.rod_crossings;
  if (report.constraints) {
    constraints_ = true;
    contact_rows_ = report.contact_rows;
    contacts_pressed_ = report.contacts_pressed;
    contact_rows_max_ = std::max(contact_rows_max_, report.contact_rows);
    impulse_sweeps_ += report.impulse_sweeps;
    impulse_residual_max_ = std::max(impulse_residual_max_, report.impulse_residual);
  }

  // Contact: only models with colliders report any (their report lists every collider).
  const ContactReport& contact = report.contact;
  if (contact.colliders.empty()) return;
  if (!has_contact_) {
    normal_sum_.assign(contact.colliders.size(), 0.0);
    friction_sum_.assign(contact.colliders.size(), 0.0);
    has_contact_ = true;
  }
  for (std::size_t c = 0; c < contact.colliders.size(); ++c) {
    normal_sum_[c] += contact.colliders[c].normal_force;
    friction_sum_[c] += contact.colliders[c].friction_force;
  }
  contact_solves_ += contact.solves;
  contact_rod_solves_ += contact.rod_solves;
  if (!contact.converged) ++contact_unconverged_;
  max_penetration_ = std::max(max_penetration_, contact.max_penetration);
  max_penetration_fraction_ = std::max(max_penetration_fraction_, contact.max_penetration_fraction);
  max_friction_excess_ = std::max(max_friction_excess_, contact.max_friction_excess);
  last_contact_ = contact;
}

nlohmann::json contact_stats_json(const ContactReport& last, const std::vector<double>& normal_sum,
                                  const std::vector<double>& friction_sum, int steps, long long solves,
                                  int unconverged, double max_penetration, double max_penetration_fraction) {
  nlohmann::json json;
  json["count"] = last.contact_count();
  json["max_penetration"] = max_penetration;
  json["max_penetration_fraction"] = max_penetration_fraction;
  json["solves"] = solves;
  json["unconverged"] = unconverged;
  nlohmann::json colliders = nlohmann::json::array();
  for (std::size_t c = 0; c < last.colliders.size(); ++c) {
    const ColliderContactStats& s = last.colliders[c];
    const double per_step = steps > 0 ? 1.0 / steps : 0.0;
    colliders.push_back({{"contacts", s.contacts},
                         {"sticking", s.sticking},
                         {"normal_force", s.normal_force},
                         {"friction_force", s.friction_force},
                         {"force", {s.force.x(), s.force.y(), s.force.z()}},
                         {"normal_force_mean", c < normal_sum.size() ? normal_sum[c] * per_step : 0.0},
                         {"friction_force_mean", c < friction_sum.size() ? friction_sum[c] * per_step : 0.0}});
  }
  json["colliders"] = std::move(colliders);
  return json;
}

nlohmann::json energies_to_json(const EnergyBreakdown& energies) {
  nlohmann::json json;
  json["kinetic"] = energies.kinetic;
  json["stretch"] = energies.stretch;
  json["bend"] = energies.bend;
  if (energies.has_twist) json["twist"] = energies.twist;
  json["elastic"] = energies.elastic();
  json["gravitational"] = energies.gravity;
  json["load"] = energies.load;
  if (energies.has_rod_contact) json["contact"] = energies.contact;
  json["potential"] = energies.potential();
  json["total"] = energies.total();
  return json;
}

nlohmann::json FrameStats::take(const EnergyBreakdown& energies) {
  nlohmann::json json;
  json["steps"] = steps_;
  json["cg_iterations"] = cg_iterations_;
  json["cg_iterations_max"] = cg_iterations_max_;
  json["cg_residual"] = cg_residual_;
  json["cg_residual_max"] = cg_residual_max_;
  json["newton_iterations"] = newton_iterations_;
  json["substeps"] = substeps_;
  json["unconverged_steps"] = unconverged_steps_;
  json["unconverged_rod_steps"] = unconverged_rods_;
  json["energies"] = energies_to_json(energies);
  if (has_contact_) {
    json["contact"] = contact_stats_json(last_contact_, normal_sum_, friction_sum_, steps_, contact_solves_,
                                         contact_unconverged_, max_penetration_, max_penetration_fraction_);
    json["contact"]["rod_solves"] = contact_rod_solves_;
    json["contact"]["max_friction_excess"] = max_friction_excess_;
  }
  if (energies.has_rod_contact) {
    nlohmann::json rod{{"pairs", rod_contact_last_.pairs},
                       {"candidates", rod_contact_last_.candidates},
                       {"overlapping", rod_contact_last_.overlapping},
                       {"ccd_limited", ccd_limited_},
                       {"crossings", rod_crossings_}};
    // Only when two segments came within reach (otherwise the smallest gap is +inf).
    if (std::isfinite(rod_min_gap_)) rod["min_gap"] = rod_min_gap_;
    if (std::isfinite(rod_min_gap_fraction_)) rod["min_gap_fraction"] = rod_min_gap_fraction_;
    json["rod_contact"] = std::move(rod);
  }
  if (constraints_)
    json["impulses"] = {{"rows", contact_rows_},
                        {"rows_max", contact_rows_max_},
                        {"pressed", contacts_pressed_},
                        {"sweeps", impulse_sweeps_},
                        {"residual_max", impulse_residual_max_}};
  *this = FrameStats();
  return json;
}

}  // namespace bristle
