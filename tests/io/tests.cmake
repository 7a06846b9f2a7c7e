list(APPEND BRISTLE_TEST_SOURCES
  io/test_json_text.cpp
  io/test_frame_io.cpp
  io/test_crc32.cpp
  io/test_deflate.cpp
  io/test_npz.cpp
  io/test_frame_npz.cpp
  io/test_frame_directors.cpp
  io/test_compare.cpp
  io/test_damaged_output.cpp)
