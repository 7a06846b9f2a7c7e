#include "bristle/runner/frame_stats.hpp"

#include <algorithm>

namespace bristle {

void FrameStats::add(const StepReport& report) {
  ++steps_;
  cg_iterations_ += report.cg_iterations;
  cg_iterations_max_ = std::max(cg_iterations_max_, report.cg_iterations);
  cg_residual_ = report.cg_residual;
  cg_residual_max_ = std::max(cg_residual_max_, report.cg_residual);
  newton_iterations_ += report.newton_iterations;
}

nlohmann::json energies_to_json(const EnergyBreakdown& energies) {
  nlohmann::json json;
  json["kinetic"] = energies.kinetic;
  json["stretch"] = energies.stretch;
  json["bend"] = energies.bend;
  json["elastic"] = energies.elastic();
  json["gravitational"] = energies.gravity;
  json["load"] = energies.load;
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
  json["energies"] = energies_to_json(energies);
  *this = FrameStats();
  return json;
}

}  // namespace bristle
