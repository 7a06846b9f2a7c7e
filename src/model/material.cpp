#include "bristle/model/material.hpp"

namespace bristle {

namespace {
constexpr double kPi = 3.14159265358979323846;
}

double Material::area() const { return kPi * radius * radius; }
double Material::second_moment() const { return 0.25 * kPi * radius * radius * radius * radius; }

}  // namespace bristle
