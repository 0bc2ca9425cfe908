// The translation unit a folder's precompiled test header is built from (see
// scalelab_test_precompiled_header in tests/CMakeLists.txt); the header is all it holds.
