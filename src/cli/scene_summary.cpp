#include "bristle/cli/scene_summary.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <sstream>

namespace bristle::cli {

namespace {

constexpr double kPi = 3.14159265358979323846;

void consider(Extreme& extreme, double value, bool larger_wins, const Scene& scene, int rod, int index) {
  const bool better = extreme.rod < 0 || (larger_wins ? value > extreme.value : value < extreme.value);
  if (!better) return;
  extreme.value = value;
  extreme.rod = rod;
  extreme.rod_name = scene.model.rods[rod].name;
  extreme.index = index;
}

std::string number(double value, int digits = 4) {
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), "%.*g", digits, value);
  return buffer;
}

std::string where(const Extreme& extreme, const char* what) {
  return "rod \"" + extreme.rod_name + "\" " + what + " " + std::to_string(extreme.index);
}

nlohmann::json extreme_json(const Extreme& extreme) {
  if (extreme.rod < 0) return nullptr;
  return {{"value", extreme.value}, {"rod", extreme.rod_name}, {"index", extreme.index}};
}

}  // namespace

SceneSummary summarize_scene(const Scene& scene) {
  SceneSummary s;
  const Model& model = scene.model;
  s.name = scene.name;
  s.source = scene.source_path;
  s.dimension = model.dimension;
  s.static_mode = scene.mode == SolverMode::Static;
  s.rods = static_cast<int>(model.rods.size());
  s.loads = static_cast<int>(model.loads.size());
  s.colliders = static_cast<int>(model.colliders.size());
  s.rod_contact = model.rod_contact;
  s.free_dofs = model.layout.free_dof_count();
  s.dt = scene.time.dt;
  s.frame_dt = scene.time.frame_dt;
  s.duration = scene.time.duration;
  s.steps_per_frame = scene.time.steps_per_frame();
  // A static scene writes the initial state and the equilibrium, and takes no time steps.
  s.frames = s.static_mode ? 2 : scene.time.frame_count();
  s.steps = s.static_mode ? 0 : static_cast<long long>(s.frames - 1) * s.steps_per_frame;

  for (int r = 0; r < s.rods; ++r) {
    const Rod& rod = model.rods[r];
    if (rod.twist) ++s.twisting_rods;
    const int n = rod.vertex_count();
    s.vertices += n;
    s.edges += rod.edge_count();
    s.fixed_vertices += static_cast<int>(rod.fixed.size());
    if (rod.fixed.empty()) ++s.unheld_rods;
    for (int i = 0; i < n; ++i) s.total_mass += rod.vertex_mass(i);
    auto inverse_mass = [&](int i) { return rod.is_fixed(i) ? 0.0 : 1.0 / rod.vertex_mass(i); };
    for (int j = 0; j < rod.edge_count(); ++j) {
      const double length = rod.rest_lengths[j];
      s.total_length += length;
      consider(s.smallest_edge, length, false, scene, r, j);
      const double k = rod.stretch_stiffness(j);
      consider(s.stiffest_stretch, k, true, scene, r, j);
      const double omega2 = k * (inverse_mass(j) + inverse_mass(j + 1));
      if (omega2 > 0) consider(s.fastest_stretch_hz, std::sqrt(omega2) / (2 * kPi), true, scene, r, j);
    }
    // A rod with twist bends about both principal axes of its section: the stiffer one bounds
    // the stiffest bend, the softer one sets the first mode. Without twist, I2 (rod.hpp).
    const CrossSection section = rod.material.section();
    const double i_section = section.second_moment_2();
    const double i_stiff = rod.twist ? std::max(section.second_moment_1(), i_section) : i_section;
    const double i_soft = rod.twist ? std::min(section.second_moment_1(), i_section) : i_section;
    for (int i = 1; i + 1 < n; ++i) {
      const double k = rod.material.youngs_modulus * i_stiff / rod.voronoi_length(i);
      consider(s.stiffest_bend, k, true, scene, r, i);
      if (rod.is_fixed(i)) continue;
      const double lever = 1.0 / rod.rest_lengths[i - 1] + 1.0 / rod.rest_lengths[i];
      const double omega2 = k * lever * lever * inverse_mass(i);
      consider(s.fastest_bend_hz, std::sqrt(omega2) / (2 * kPi), true, scene, r, i);
    }
    // First bending mode of a uniform cantilever clamped at vertex 0 (two fixed vertices at the
    // root): f1 = 1.8751^2 / (2 pi L^2) sqrt(E I / (rho A)), Euler-Bernoulli.
    if (rod.fixed.size() >= 2 && rod.fixed[0] == 0 && rod.fixed[1] == 1 && n > 2) {
      const double length = rod.rest_length();
      const double beta = 1.8751040687;
      const double f1 = beta * beta / (2 * kPi * length * length) *
                        std::sqrt(rod.material.youngs_modulus * i_soft / rod.material.linear_density());
      consider(s.first_mode_hz, f1, true, scene, r, 0);
    }
  }
  return s;
}

std::string describe(const SceneSummary& s) {
  std::ostringstream text;
  text << "scene \"" << s.name << "\"" << (s.source.empty() ? "" : " (" + s.source + ")") << ": valid\n";
  text << "  dimension      " << s.dimension << (s.static_mode ? ", static (equilibrium) mode" : "") << "\n";
  text << "  rods           " << s.rods << " (" << s.vertices << " vertices, " << s.edges << " edges, "
       << s.fixed_vertices << " fixed vertices, " << s.free_dofs << " free DOFs)\n";
  // Which rods twist: a 3D rod curved at rest does by default (docs/scene-format.md, "twist").
  if (s.dimension == 3)
    text << "  twist          " << s.twisting_rods << " of " << s.rods << " rods"
         << (s.twisting_rods > 0 ? " (material frames, a twist angle per edge)" : " (none asks for it or is curved at rest without \"twist\": false)")
         << "\n";
  text << "  total length   " << number(s.total_length) << " m\n";
  text << "  total mass     " << number(s.total_mass) << " kg\n";
  if (s.loads || s.colliders) text << "  loads          " << s.loads << ", colliders " << s.colliders << "\n";
  if (s.rod_contact.enabled)
    text << "  rod contact    on, friction " << number(s.rod_contact.friction) << ", self-contact "
         << (s.rod_contact.self ? "on" : "off (segments of one rod pass through each other)") << ", "
         << (s.rod_contact.method == RodContactMethod::Constraints ? "as constraints" : "by a barrier") << "\n";
  else
    text << "  rod contact    off (rods pass through each other)\n";
  text << "  time           dt " << number(s.dt) << " s, frame_dt " << number(s.frame_dt) << " s ("
       << s.steps_per_frame << " steps per frame), duration " << number(s.duration) << " s\n";
  text << "  steps          " << s.steps << "\n";
  text << "  frames         " << s.frames
       << (s.static_mode ? " (frame 0 is the initial state, frame 1 the equilibrium)\n" : " (frame 0 is the initial state)\n");
  if (s.smallest_edge.rod >= 0)
    text << "  smallest edge  " << number(s.smallest_edge.value) << " m (" << where(s.smallest_edge, "edge") << ")\n";
  if (s.stiffest_stretch.rod >= 0)
    text << "  stiffest edge  E A / L = " << number(s.stiffest_stretch.value) << " N/m ("
         << where(s.stiffest_stretch, "edge") << ")\n";
  if (s.stiffest_bend.rod >= 0)
    text << "  stiffest bend  E I / l = " << number(s.stiffest_bend.value) << " N m ("
         << where(s.stiffest_bend, "vertex") << ")\n";

  // Hints: implicit Euler is stable for any dt, but it damps motion whose angular frequency
  // omega has omega dt >~ 1 (the amplitude shrinks by 1 / sqrt(1 + (omega dt)^2) per step).
  const double resolved_hz = s.dt > 0 ? 1.0 / (2 * kPi * s.dt) : 0.0;
  if (s.fastest_stretch_hz.rod >= 0 || s.fastest_bend_hz.rod >= 0)
    text << "  time step      motion faster than about " << number(resolved_hz, 3)
         << " Hz (1 / (2 pi dt)) is damped by implicit Euler (stable for any dt)\n";
  if (s.fastest_stretch_hz.rod >= 0) {
    const double wdt = 2 * kPi * s.fastest_stretch_hz.value * s.dt;
    text << "  fastest edge   ~" << number(s.fastest_stretch_hz.value, 3) << " Hz stretching ("
         << where(s.fastest_stretch_hz, "edge") << "), omega dt = " << number(wdt, 3)
         << (wdt > 1 ? ": stretching is damped out, as intended for nearly inextensible rods" : "") << "\n";
  }
  if (s.fastest_bend_hz.rod >= 0) {
    const double wdt = 2 * kPi * s.fastest_bend_hz.value * s.dt;
    text << "  fastest bend   ~" << number(s.fastest_bend_hz.value, 3) << " Hz (" << where(s.fastest_bend_hz, "vertex")
         << "), omega dt = " << number(wdt, 3) << "\n";
  }
  if (s.first_mode_hz.rod >= 0) {
    const double wdt = 2 * kPi * s.first_mode_hz.value * s.dt;
    text << "  first mode     ~" << number(s.first_mode_hz.value, 3) << " Hz (clamped cantilever estimate, rod \""
         << s.first_mode_hz.rod_name << "\"), omega dt = " << number(wdt, 3) << "\n";
    if (wdt > 0.5)
      text << "  hint: dt is too large to resolve the rods' own swing (omega dt > 0.5): implicit Euler\n"
              "        will damp it strongly; reduce dt if the motion matters, or run `bristle modes`\n";
  }
  if (s.unheld_rods > 0 && s.colliders == 0)
    text << "  note: " << s.unheld_rods << " rod(s) have no fixed vertex and there are no colliders:"
         << " under gravity they fall freely\n";
  return text.str();
}

nlohmann::json to_json(const SceneSummary& s) {
  nlohmann::json json;
  json["name"] = s.name;
  json["source"] = s.source;
  json["dimension"] = s.dimension;
  json["mode"] = s.static_mode ? "static" : "dynamic";
  json["rods"] = s.rods;
  json["vertices"] = s.vertices;
  json["edges"] = s.edges;
  json["fixed_vertices"] = s.fixed_vertices;
  json["free_dofs"] = s.free_dofs;
  json["twisting_rods"] = s.twisting_rods;
  json["loads"] = s.loads;
  json["colliders"] = s.colliders;
  json["rod_contact"] = {{"enabled", s.rod_contact.enabled},
                         {"friction", s.rod_contact.friction},
                         {"self", s.rod_contact.self},
                         {"method", s.rod_contact.method == RodContactMethod::Constraints ? "constraints" : "barrier"}};
  json["total_mass"] = s.total_mass;
  json["total_length"] = s.total_length;
  json["dt"] = s.dt;
  json["frame_dt"] = s.frame_dt;
  json["duration"] = s.duration;
  json["steps_per_frame"] = s.steps_per_frame;
  json["steps"] = s.steps;
  json["frames"] = s.frames;
  json["smallest_edge"] = extreme_json(s.smallest_edge);
  json["stiffest_stretch"] = extreme_json(s.stiffest_stretch);
  json["stiffest_bend"] = extreme_json(s.stiffest_bend);
  json["fastest_stretch_hz"] = extreme_json(s.fastest_stretch_hz);
  json["fastest_bend_hz"] = extreme_json(s.fastest_bend_hz);
  json["first_mode_hz_estimate"] = extreme_json(s.first_mode_hz);
  return json;
}

}  // namespace bristle::cli
