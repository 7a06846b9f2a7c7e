// Reader of `colliders`: planes, spheres, capsules and boxes, each with a friction
// coefficient. The keys a collider may hold depend on its "type".

#include <string>

#include "bristle/scene/scene_blocks.hpp"

namespace bristle {
namespace {

const std::vector<std::string> kColliderTypes = {"plane", "sphere", "capsule", "box"};

std::vector<std::string> collider_keys(const std::string& type) {
  if (type == "plane") return {"type", "point", "normal", "friction"};
  if (type == "sphere") return {"type", "center", "radius", "friction"};
  if (type == "capsule") return {"type", "a", "b", "radius", "friction"};
  return {"type", "center", "half_extents", "rotation", "friction"};
}

struct Rotation {
  Vec3 axis = Vec3::UnitZ();  // unit
  double angle = 0.0;         // [rad]
};

// Rotation of a box from its local axes to the world. 3D: {"axis": vector, "angle": rad};
// 2D: {"angle": rad} about z, the only axis a planar box can turn about.
Rotation read_rotation(const JsonValue& value, int dimension) {
  const ObjectReader reader = dimension == 3 ? value.object({"axis", "angle"}) : value.object({"angle"});
  Rotation rotation;
  rotation.angle = reader.require("angle").number();
  if (dimension == 3) rotation.axis = reader.require("axis").direction(3);
  return rotation;
}

void read_box(const ObjectReader& reader, int dimension, Collider& c, nlohmann::json& expanded) {
  c.type = ColliderType::Box;
  c.center = reader.require("center").vector(dimension);
  const JsonValue half_extents = reader.require("half_extents");
  c.half_extents = half_extents.vector(dimension);
  if (!(c.half_extents.head(dimension).minCoeff() > 0.0)) half_extents.fail_expected("positive half extents");
  Rotation rotation;
  if (const auto r = reader.find("rotation")) rotation = read_rotation(*r, dimension);
  c.rotation = Eigen::AngleAxisd(rotation.angle, rotation.axis).toRotationMatrix();

  expanded["center"] = vector_json(c.center, dimension);
  expanded["half_extents"] = vector_json(c.half_extents, dimension);
  expanded["rotation"] = {{"angle", rotation.angle}};
  if (dimension == 3) expanded["rotation"]["axis"] = vector_json(rotation.axis, 3);
}

// Reads the keys particular to the collider's type into `c` and `expanded`.
void read_shape(const ObjectReader& reader, const std::string& type, int dimension, Collider& c,
                nlohmann::json& expanded) {
  if (type == "plane") {
    c.type = ColliderType::Plane;
    c.point = reader.require("point").vector(dimension);
    c.normal = reader.require("normal").direction(dimension);
    expanded["point"] = vector_json(c.point, dimension);
    expanded["normal"] = vector_json(c.normal, dimension);
  } else if (type == "sphere") {
    c.type = ColliderType::Sphere;
    c.center = reader.require("center").vector(dimension);
    c.radius = reader.require("radius").non_negative_number();
    expanded["center"] = vector_json(c.center, dimension);
    expanded["radius"] = c.radius;
  } else if (type == "capsule") {
    c.type = ColliderType::Capsule;
    c.a = reader.require("a").vector(dimension);
    c.b = reader.require("b").vector(dimension);
    c.radius = reader.require("radius").non_negative_number();
    expanded["a"] = vector_json(c.a, dimension);
    expanded["b"] = vector_json(c.b, dimension);
    expanded["radius"] = c.radius;
  } else {
    read_box(reader, dimension, c, expanded);
  }
}

}  // namespace

ReadResult<std::vector<Collider>> read_colliders(const JsonValue& value, int dimension) {
  ReadResult<std::vector<Collider>> result{{}, nlohmann::json::array()};
  for (const JsonValue& entry : value.elements("an array of colliders")) {
    const std::string type = entry.type_of(kColliderTypes);
    const ObjectReader reader = entry.object(collider_keys(type));
    Collider collider;
    nlohmann::json expanded = {{"type", type}};
    read_shape(reader, type, dimension, collider, expanded);
    if (const auto friction = reader.find("friction")) collider.friction = friction->non_negative_number();
    expanded["friction"] = collider.friction;
    result.value.push_back(collider);
    result.expanded.push_back(expanded);
  }
  return result;
}

}  // namespace bristle
