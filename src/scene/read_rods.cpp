// Reader of `rods`: each entry's material, vertices (given or generated), fixed vertices
// and rest shape. A brush generator turns one entry into many rods, named "<name>_<k>".

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <string>

#include "bristle/scene/scene_blocks.hpp"
#include "bristle/scene/suggest.hpp"

namespace bristle {
namespace {

// Two vertices closer than this, relative to their coordinates, differ only by rounding.
constexpr double kCoincidentTolerance = 1e-12;
// Consecutive edges this close to antiparallel fold the rod back on itself.
constexpr double kFoldTolerance = 1e-10;

struct RodMaterial {
  Material material;
  nlohmann::json expanded;  // the name, or the inline object with every key
  std::string pointer;      // a named material's definition; "" when inline
};

RodMaterial read_rod_material(const JsonValue& value, const MaterialTable& materials) {
  if (value.is_object()) {
    auto inline_material = read_material(value);
    return {inline_material.value, inline_material.expanded, ""};
  }
  if (!value.is_string()) value.fail_expected("a material name or an inline material object");
  const std::string name = value.string();
  const auto it = materials.find(name);
  if (it != materials.end()) return {it->second, name, pointer_append("/materials", name)};

  std::vector<std::string> names;
  for (const auto& [known, material] : materials) names.push_back(known);
  std::string hint = did_you_mean(name, names);
  if (hint.empty())
    hint = names.empty() ? std::string("; the scene defines no materials")
                         : "; \"materials\" defines " + std::to_string(names.size()) + " (e.g. \"" +
                               names.front() + "\")";
  value.fail("unknown material " + quoted_text(name) + hint);
}

std::vector<Vec3> read_vertices(const JsonValue& value, int dimension) {
  const std::string expected = "an array of at least 2 vertices";
  const std::vector<JsonValue> elements = value.elements(expected);
  if (elements.size() < 2) value.fail_expected(expected);
  std::vector<Vec3> vertices;
  vertices.reserve(elements.size());
  for (const JsonValue& element : elements) vertices.push_back(element.vector(dimension));
  return vertices;
}

struct Degeneracy {
  int vertex;
  std::string message;
};

// Zero-length edges (stretch and bending divide by edge lengths) and edges that fold back
// exactly (a turning angle of pi has no bending direction).
std::optional<Degeneracy> find_degeneracy(const std::vector<Vec3>& x) {
  const int n = static_cast<int>(x.size());
  // Finite inputs can still give points or edges beyond a double (a generator from -1e308
  // to 1.8e308): nothing downstream could compute with them.
  for (int i = 0; i < n; ++i)
    if (!x[i].allFinite())
      return Degeneracy{i, "vertex " + std::to_string(i) + " is not a finite point (its coordinates overflow a double)"};
  for (int j = 0; j + 1 < n; ++j)
    if (!std::isfinite((x[j + 1] - x[j]).norm()))
      return Degeneracy{j + 1, "edge " + std::to_string(j) + " is longer than a double can hold"};
  for (int j = 0; j + 1 < n; ++j) {
    const double length = (x[j + 1] - x[j]).norm();
    const double scale = std::max(x[j].cwiseAbs().maxCoeff(), x[j + 1].cwiseAbs().maxCoeff());
    if (length == 0.0 || length <= kCoincidentTolerance * scale)
      return Degeneracy{j + 1, "vertex " + std::to_string(j + 1) + " coincides with vertex " +
                                   std::to_string(j) + ": edge " + std::to_string(j) +
                                   " has zero length"};
  }
  for (int i = 1; i + 1 < n; ++i) {
    const Vec3 e0 = x[i] - x[i - 1], e1 = x[i + 1] - x[i];
    if (e0.dot(e1) < 0.0 && e0.cross(e1).norm() <= kFoldTolerance * e0.norm() * e1.norm())
      return Degeneracy{i, "the rod folds back on itself at vertex " + std::to_string(i) +
                               " (turning angle pi): bending has no direction there"};
  }
  return std::nullopt;
}

std::vector<int> read_fixed(const JsonValue& value, int vertex_count) {
  std::vector<int> fixed;
  for (const JsonValue& element : value.elements("an array of vertex indices")) {
    const std::int64_t index = element.integer();
    if (index < 0 || index >= vertex_count)
      element.fail_expected("a vertex index in [0, " + std::to_string(vertex_count - 1) +
                            "] (the rod has " + std::to_string(vertex_count) + " vertices)");
    if (std::find(fixed.begin(), fixed.end(), index) != fixed.end())
      element.fail("vertex " + std::to_string(index) + " is listed twice");
    fixed.push_back(static_cast<int>(index));
  }
  return fixed;
}

nlohmann::json vertices_json(const std::vector<Vec3>& vertices, int dimension) {
  nlohmann::json out = nlohmann::json::array();
  for (const Vec3& v : vertices) out.push_back(vector_json(v, dimension));
  return out;
}

/// Reads the entries one by one, keeping what must hold across them: unique names and the
/// scene's vertex budget.
class RodsReader {
 public:
  RodsReader(int dimension, const MaterialTable& materials)
      : dimension_(dimension), materials_(materials) {}

  void read_entry(const JsonValue& entry, std::size_t index);
  ReadResult<std::vector<RodSpec>>& result() { return result_; }

 private:
  std::string claim_name(const ObjectReader& reader, const std::string& name, bool generated);
  void count_vertices(const ObjectReader& reader, std::size_t count);

  int dimension_;
  const MaterialTable& materials_;
  std::map<std::string, std::string> name_owner_;  // rod name -> pointer of the entry using it
  long long vertex_total_ = 0;
  ReadResult<std::vector<RodSpec>> result_{{}, nlohmann::json::array()};
};

std::string RodsReader::claim_name(const ObjectReader& reader, const std::string& name, bool generated) {
  const auto [it, inserted] = name_owner_.emplace(name, reader.pointer());
  if (!inserted)
    reader.fail_at("name", "duplicate rod name " + quoted_text(name) +
                               (generated ? " (made by this brush)" : "") + ": " + it->second +
                               " already uses it; rod names must be unique");
  return name;
}

// Whether a rest shape bends: some vertex lies off the line through the end vertices by more
// than 1e-5 of the rod's length. A straight line given with rounded coordinates stays far
// closer (7 significant digits: about 1e-7 of it), though its turning angles, rounding over
// an edge, can reach 1e-5 rad; a kink or a curve of any use departs by far more.
bool rest_shape_is_curved(const std::vector<Vec3>& vertices) {
  constexpr double kStraightness = 1e-5;  // of the rod's length
  if (vertices.size() < 3) return false;
  double length = 0.0;
  for (std::size_t i = 1; i < vertices.size(); ++i) length += (vertices[i] - vertices[i - 1]).norm();
  const Vec3 first = vertices.front(), chord = vertices.back() - first;
  const double chord_length = chord.norm();
  for (const Vec3& x : vertices) {
    const Vec3 offset = x - first;
    const double off_line =
        chord_length > 0.0 ? offset.cross(chord).norm() / chord_length : offset.norm();  // a closed loop: from its end
    if (off_line > kStraightness * length) return true;
  }
  return false;
}

void RodsReader::count_vertices(const ObjectReader& reader, std::size_t count) {
  vertex_total_ += static_cast<long long>(count);
  if (vertex_total_ > kMaxSceneVertices)
    reader.value().fail("the scene would have more than " + std::to_string(kMaxSceneVertices) +
                        " vertices");
}

void RodsReader::read_entry(const JsonValue& entry, std::size_t index) {
  const ObjectReader reader =
      entry.object({"name", "material", "vertices", "generator", "fixed", "rest", "pose", "twist", "material_normal",
                    "rest_twist", "twist_fixed"});
  const std::string name = reader.has("name") ? reader.require("name").name() : "rod" + std::to_string(index);
  const RodMaterial material = read_rod_material(reader.require("material"), materials_);
  std::string rest = "initial";
  if (const auto r = reader.find("rest")) rest = r->choice({"initial", "straight"});
  // Discrete elastic rods (twist DOFs and material frames) are 3D.
  bool twist = false;
  const bool twist_given = reader.has("twist");
  if (const auto t = reader.find("twist")) {
    twist = t->boolean();
    if (twist && dimension_ != 3) reader.fail_at("twist", "rods twist only in 3D scenes (\"dimension\": 3)");
  } else if (const auto g = reader.find("generator"); g && dimension_ == 3) {
    // A curly brush's bristles are helices: with material frames they keep their handedness
    // (docs/scene-format.md, "Curly bristles"). A curl in 2D is refused by the generator.
    twist = g->is_object() && g->json().contains("curl");
  }
  Vec3 material_normal = Vec3::Zero();
  // These keys ask for material frames in so many words ("twist": true, or a curly brush),
  // even on a rod curved at rest that twists by default: the scene schema can check that.
  if (const auto m = reader.find("material_normal")) {
    if (!twist) reader.fail_at("material_normal", "a material normal orients the frame of a rod with \"twist\": true");
    material_normal = m->direction(3);
  }
  double rest_twist = 0.0;
  if (const auto t = reader.find("rest_twist")) {
    rest_twist = t->number();
    if (!twist) reader.fail_at("rest_twist", "a rest twist is a twist rate of a rod with \"twist\": true");
  }
  nlohmann::json twist_fixed_expanded;
  Rod::TwistEnd twist_ends[2] = {Rod::TwistEnd::Default, Rod::TwistEnd::Default};
  std::optional<JsonValue> twist_fixed = reader.find("twist_fixed");
  if (twist_fixed) {
    const ObjectReader ends = twist_fixed->object({"root", "tip"});
    if (!twist) reader.fail_at("twist_fixed", "\"twist_fixed\" says which end edges of a rod with \"twist\": true hold their twist");
    twist_fixed_expanded = nlohmann::json::object();
    const char* names[2] = {"root", "tip"};
    for (int k = 0; k < 2; ++k)
      if (const auto end = ends.find(names[k])) {
        const bool held = end->boolean();
        twist_ends[k] = held ? Rod::TwistEnd::Fixed : Rod::TwistEnd::Free;
        twist_fixed_expanded[names[k]] = held;
      }
  }

  // The geometry: one rod of given vertices, or the rods a generator makes.
  if (reader.has("vertices") && reader.has("generator"))
    reader.fail_at("generator", "give either \"vertices\" or \"generator\", not both");
  if (!reader.has("vertices") && !reader.has("generator"))
    reader.fail_at("vertices", "missing required key \"vertices\" (or \"generator\")");
  std::vector<std::vector<Vec3>> shapes;
  bool is_brush = false;
  const bool given = reader.has("vertices");
  if (given) {
    shapes.push_back(read_vertices(reader.require("vertices"), dimension_));
  } else {
    GeneratorOutput generated =
        read_generator(reader.require("generator"), dimension_, material.material.radius);
    shapes = std::move(generated.rods);
    is_brush = generated.is_brush;
  }

  // A pose places the middle and last vertex of a 3-vertex rod (read_pose.cpp); the given
  // vertices are checked first, since they set the bone lengths.
  nlohmann::json pose_expanded;
  std::string pose_warning;
  if (const auto p = reader.find("pose")) {
    if (is_brush) reader.fail_at("pose", "a pose places one 3-vertex rod, not the bristles of a brush");
    if (const auto bad = find_degeneracy(shapes.front())) {
      if (given)
        entry.source().fail(pointer_append(reader.pointer_to("vertices"), static_cast<std::size_t>(bad->vertex)),
                            bad->message);
      reader.fail_at("generator", bad->message);
    }
    PoseResult posed = read_pose(*p, shapes.front(), dimension_);
    shapes.front() = std::move(posed.vertices);
    pose_expanded = std::move(posed.expanded);
    pose_warning = std::move(posed.warning);
  }

  // A brush clamps its bristles' roots unless told otherwise. Every bristle of a brush has
  // the same vertex count, so one check of the indices covers them all.
  std::vector<int> fixed;
  if (const auto f = reader.find("fixed")) fixed = read_fixed(*f, static_cast<int>(shapes.front().size()));
  else if (is_brush) fixed = {0, 1};
  // Holding an end edge's twist needs that end's vertex held: a free end has nothing to hold
  // its frame against.
  if (twist_fixed) {
    const int last = static_cast<int>(shapes.front().size()) - 1;
    const int end_vertex[2] = {0, last};
    const char* names[2] = {"root", "tip"};
    for (int k = 0; k < 2; ++k)
      if (twist_ends[k] == Rod::TwistEnd::Fixed &&
          std::find(fixed.begin(), fixed.end(), end_vertex[k]) == fixed.end())
        twist_fixed->source().fail(pointer_append(twist_fixed->pointer(), std::string(names[k])),
                                   std::string("holding the ") + names[k] + " edge's twist needs vertex " +
                                       std::to_string(end_vertex[k]) + " fixed (list it in \"fixed\")");
  }

  for (std::size_t k = 0; k < shapes.size(); ++k) {
    std::vector<Vec3>& vertices = shapes[k];
    if (const auto bad = find_degeneracy(vertices)) {
      if (given)
        entry.source().fail(pointer_append(reader.pointer_to("vertices"), static_cast<std::size_t>(bad->vertex)),
                            bad->message);
      reader.fail_at("generator", bad->message);
    }
    const std::string rod_name = claim_name(reader, is_brush ? name + "_" + std::to_string(k) : name, is_brush);
    count_vertices(reader, vertices.size());

    // Right by default: a 3D rod at rest in a curved shape keeps that shape only with material
    // frames (without them its rest turning angles are unsigned, and a helix unwinds under
    // gravity, an arc spins about its root tangent). Unless told otherwise, such a rod twists.
    const bool twists_by_default = dimension_ == 3 && rest == "initial" && rest_shape_is_curved(vertices);
    const bool rod_twist = twist || (!twist_given && twists_by_default);

    // A section with two bending stiffnesses bends right only in material frames (2D rods bend
    // in the plane, with I2: docs/physics.md, "Cross-sections").
    const CrossSection section = material.material.section();
    if (section.anisotropic() && dimension_ == 3 && !rod_twist)
      reader.fail_at("material", std::string("the material's ") + section.type_name() +
                                     " cross-section bends differently about its two axes; in 3D such a rod needs "
                                     "\"twist\": true (material frames), or give a round section");
    nlohmann::json expanded = {{"name", rod_name},
                               {"material", material.expanded},
                               {"vertices", vertices_json(vertices, dimension_)},
                               {"fixed", fixed},
                               {"rest", rest}};
    if (rod_twist) expanded["twist"] = true;
    else if (twists_by_default) expanded["twist"] = false;  // told not to: the expanded scene says so too
    if (!material_normal.isZero()) expanded["material_normal"] = vector_json(material_normal, 3);
    if (rest_twist != 0.0) expanded["rest_twist"] = rest_twist;
    if (!twist_fixed_expanded.is_null()) expanded["twist_fixed"] = twist_fixed_expanded;
    // The vertices above are already posed; posing them again gives the same (the bones and
    // the target are unchanged), so the expanded scene reloads to the same rod.
    if (!pose_expanded.is_null()) expanded["pose"] = pose_expanded;
    result_.expanded.push_back(std::move(expanded));
    RodSpec spec{rod_name, material.material, std::move(vertices), fixed,
                 rest == "straight" ? RestShape::Straight : RestShape::Initial, {}, reader.pointer(),
                 material.pointer.empty() ? reader.pointer_to("material") : material.pointer};
    spec.twist = rod_twist;
    spec.material_normal = material_normal;
    spec.rest_twist = rest_twist;
    spec.twist_root = twist_ends[0];
    spec.twist_tip = twist_ends[1];
    if (!pose_warning.empty()) spec.warnings.push_back(pose_warning);
    result_.value.push_back(std::move(spec));
  }
}

}  // namespace

ReadResult<std::vector<RodSpec>> read_rods(const JsonValue& value, int dimension,
                                           const MaterialTable& materials) {
  const std::string expected = "a non-empty array of rods";
  const std::vector<JsonValue> entries = value.elements(expected);
  if (entries.empty()) value.fail_expected(expected);
  RodsReader reader(dimension, materials);
  for (std::size_t i = 0; i < entries.size(); ++i) reader.read_entry(entries[i], i);
  return std::move(reader.result());
}

nlohmann::json vector_json(const Vec3& v, int dimension) {
  nlohmann::json out = nlohmann::json::array();
  for (int k = 0; k < dimension; ++k) out.push_back(v[k]);
  return out;
}

}  // namespace bristle
