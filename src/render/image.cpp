#include "bristle/render/image.hpp"

#include <cairo.h>

#include <cstring>

#include "bristle/render/render_error.hpp"

namespace bristle {

Image read_png(const std::string& path) {
  cairo_surface_t* surface = cairo_image_surface_create_from_png(path.c_str());
  const cairo_status_t status = cairo_surface_status(surface);
  if (status != CAIRO_STATUS_SUCCESS) {
    cairo_surface_destroy(surface);
    throw RenderError("cannot read PNG '" + path + "': " + cairo_status_to_string(status));
  }
  cairo_surface_flush(surface);
  const cairo_format_t format = cairo_image_surface_get_format(surface);
  Image image;
  image.width = cairo_image_surface_get_width(surface);
  image.height = cairo_image_surface_get_height(surface);
  const int stride = cairo_image_surface_get_stride(surface);
  const unsigned char* data = cairo_image_surface_get_data(surface);
  image.pixels.resize(static_cast<std::size_t>(image.width) * image.height);
  for (int y = 0; y < image.height; ++y) {
    for (int x = 0; x < image.width; ++x) {
      Rgb8& out = image.pixels[static_cast<std::size_t>(y) * image.width + x];
      if (format == CAIRO_FORMAT_ARGB32 || format == CAIRO_FORMAT_RGB24) {
        std::uint32_t p;
        std::memcpy(&p, data + static_cast<std::ptrdiff_t>(y) * stride + 4 * x, 4);
        out = Rgb8{static_cast<std::uint8_t>((p >> 16) & 0xff),
                   static_cast<std::uint8_t>((p >> 8) & 0xff), static_cast<std::uint8_t>(p & 0xff)};
      } else if (format == CAIRO_FORMAT_A8) {
        const std::uint8_t a = data[static_cast<std::ptrdiff_t>(y) * stride + x];
        out = Rgb8{a, a, a};
      } else {
        cairo_surface_destroy(surface);
        throw RenderError("cannot read PNG '" + path + "': unsupported pixel format");
      }
    }
  }
  cairo_surface_destroy(surface);
  return image;
}

void write_png(const Image& image, const std::string& path) {
  cairo_surface_t* surface =
      cairo_image_surface_create(CAIRO_FORMAT_RGB24, image.width, image.height);
  if (cairo_surface_status(surface) != CAIRO_STATUS_SUCCESS) {
    cairo_surface_destroy(surface);
    throw RenderError("cannot allocate an image of " + std::to_string(image.width) + "x" +
                      std::to_string(image.height) + " pixels");
  }
  cairo_surface_flush(surface);
  const int stride = cairo_image_surface_get_stride(surface);
  unsigned char* data = cairo_image_surface_get_data(surface);
  for (int y = 0; y < image.height; ++y) {
    for (int x = 0; x < image.width; ++x) {
      const Rgb8 c = image.at(x, y);
      const std::uint32_t p = 0xff000000u | (std::uint32_t{c.r} << 16) |
                              (std::uint32_t{c.g} << 8) | std::uint32_t{c.b};
      std::memcpy(data + static_cast<std::ptrdiff_t>(y) * stride + 4 * x, &p, 4);
    }
  }
  cairo_surface_mark_dirty(surface);
  const cairo_status_t status = cairo_surface_write_to_png(surface, path.c_str());
  cairo_surface_destroy(surface);
  if (status != CAIRO_STATUS_SUCCESS) {
    throw RenderError("cannot write PNG '" + path + "': " + cairo_status_to_string(status));
  }
}

}  // namespace bristle
