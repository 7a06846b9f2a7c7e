#include "bristle/render/image.hpp"

#include <cairo.h>
#include <png.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>

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

namespace {

// libpng reports errors by longjmp out of the call; the message is kept for the exception.
struct PngFailure {
  std::string message;
};

void on_png_error(png_structp png, png_const_charp message) {
  static_cast<PngFailure*>(png_get_error_ptr(png))->message = message;
  png_longjmp(png, 1);
}

void on_png_warning(png_structp, png_const_charp) {}

}  // namespace

void write_png(const Image& image, const std::string& path) {
  // libpng directly rather than cairo's writer: cairo leaves zlib at its default level 6 and
  // libpng trying every filter on every row, which took about a tenth of a rendered frame's
  // time. The "sub" filter alone (the pictures are mostly runs of one colour along the rows,
  // which it turns into runs of zeros) and zlib's run-length strategy (matches at distance 1
  // only) give files the same size within 3% in about a third of the time; the run-length
  // strategy is a third faster than zlib level 2 and its files 2% smaller on the demo
  // (docs/rendering.md, "Speed").
  std::FILE* file = std::fopen(path.c_str(), "wb");
  if (!file) throw RenderError("cannot write PNG '" + path + "': " + std::strerror(errno));
  PngFailure failure;
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, &failure, on_png_error, on_png_warning);
  png_infop info = png ? png_create_info_struct(png) : nullptr;
  std::vector<png_bytep> rows(static_cast<std::size_t>(std::max(0, image.height)));
  volatile bool ok = png && info;
  if (ok && setjmp(png_jmpbuf(png)) == 0) {
    png_init_io(png, file);
    png_set_IHDR(png, info, static_cast<png_uint_32>(image.width), static_cast<png_uint_32>(image.height), 8,
                 PNG_COLOR_TYPE_RGB, PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_set_compression_level(png, 1);
    png_set_compression_strategy(png, Z_RLE);
    png_set_filter(png, PNG_FILTER_TYPE_BASE, PNG_FILTER_SUB);
    png_write_info(png, info);
    static_assert(sizeof(Rgb8) == 3, "Rgb8 is three packed bytes");
    for (int y = 0; y < image.height; ++y)
      rows[static_cast<std::size_t>(y)] = reinterpret_cast<png_bytep>(
          const_cast<Rgb8*>(image.pixels.data() + static_cast<std::size_t>(y) * image.width));
    png_write_image(png, rows.data());
    png_write_end(png, nullptr);
  } else {
    ok = false;
  }
  png_destroy_write_struct(png ? &png : nullptr, info ? &info : nullptr);
  const bool closed = std::fclose(file) == 0;
  if (!ok || !closed) {
    throw RenderError("cannot write PNG '" + path + "': " +
                      (failure.message.empty() ? std::string("write failed") : failure.message));
  }
}

}  // namespace bristle
