list(APPEND BRISTLE_SOURCES
  src/io/json_text.cpp
  src/io/json_parse.cpp
  src/io/atomic_file.cpp
  src/io/frame_layout.cpp
  src/io/crc32.cpp
  src/io/deflate.cpp
  src/io/npy.cpp
  src/io/npz.cpp
  src/io/frame_json.cpp
  src/io/frame_npz.cpp
  src/io/frame_writer.cpp
  src/io/output_reader.cpp
  src/io/compare.cpp)
