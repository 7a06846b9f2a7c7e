#pragma once
/// An RGB image in memory, and PNG files in (through cairo) and out (libpng). Tests read rendered PNGs
/// back with read_png.

#include <cstdint>
#include <string>
#include <vector>

namespace bristle {

struct Rgb8 {
  std::uint8_t r = 0, g = 0, b = 0;
  friend bool operator==(const Rgb8& x, const Rgb8& y) {
    return x.r == y.r && x.g == y.g && x.b == y.b;
  }
  friend bool operator!=(const Rgb8& x, const Rgb8& y) { return !(x == y); }
};

struct Image {
  int width = 0;
  int height = 0;
  std::vector<Rgb8> pixels;  ///< row-major, top row first

  Rgb8 at(int x, int y) const { return pixels[static_cast<std::size_t>(y) * width + x]; }
};

/// Decode a PNG file (cairo_image_surface_create_from_png). Alpha, if any, is composited
/// over black as cairo stores it (premultiplied); rendered frames are opaque. Throws
/// RenderError when the file cannot be read or decoded.
Image read_png(const std::string& path);

/// Encode an opaque 8-bit RGB PNG (libpng, zlib level 2, the "sub" filter). Throws RenderError when the file
/// cannot be written.
void write_png(const Image& image, const std::string& path);

}  // namespace bristle
