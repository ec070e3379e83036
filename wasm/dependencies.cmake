# The WebAssembly build's dependencies (included by the top-level CMakeLists.txt when the
# toolchain is emscripten; docs/web.md). zstd, lz4 and libdeflate are compiled here from Debian's
# own sources, which wasm/fetch-codec-sources.sh unpacks into wasm/third_party/ with
# `apt-get source`: the build downloads nothing. They get the target names the native build's
# find_package / pkg-config give, so the rest of the build is the same.
set(FOURDGS_CODEC_SOURCES "${CMAKE_CURRENT_LIST_DIR}/third_party" CACHE PATH
    "Where wasm/fetch-codec-sources.sh unpacked zstd, lz4 and libdeflate")
set(fourdgs_zstd_dir "${FOURDGS_CODEC_SOURCES}/libzstd-1.5.4+dfsg2/lib")
set(fourdgs_lz4_dir "${FOURDGS_CODEC_SOURCES}/lz4-1.9.4/lib")
set(fourdgs_deflate_dir "${FOURDGS_CODEC_SOURCES}/libdeflate-1.14")
foreach(dir ${fourdgs_zstd_dir} ${fourdgs_lz4_dir} ${fourdgs_deflate_dir})
  if(NOT EXISTS "${dir}")
    message(FATAL_ERROR "${dir} is missing: run wasm/fetch-codec-sources.sh first")
  endif()
endforeach()

# Threads (FOURDGS_WASM_THREADS): every object, the codecs' included, is compiled with -pthread,
# since a wasm module's memory is shared or not as a whole. A browser then needs cross-origin
# isolation (COOP/COEP headers) to run it; the single-thread build runs everywhere.
option(FOURDGS_WASM_THREADS "Build the WebAssembly module with threads (-pthread)" OFF)
set(FOURDGS_WASM_PTHREAD_POOL 8 CACHE STRING "Workers started with a threaded module")
if(FOURDGS_WASM_THREADS)
  add_compile_options(-pthread)
  add_link_options(-pthread -sPTHREAD_POOL_SIZE=${FOURDGS_WASM_PTHREAD_POOL})
endif()
set(THREADS_PREFER_PTHREAD_FLAG ON)
find_package(Threads REQUIRED)

# Size and speed (docs/web.md, "Size"): an optimized build compiles every object for size (-Oz),
# except the code a decode spends its time in, which it compiles for speed (-O3): libdeflate's
# decompressor and these library sources (the stream decoder, the chunk decoders and
# dequantization, the keyframe-delta composition, §3 evaluation). zstd's and lz4's decoders force
# their hot functions inline, and decode as fast at -Oz. -O3 everywhere makes the package's
# module 70 % larger; -Oz everywhere makes a seek eight times slower. Two details:
#  - emcc adds -fno-inline-functions to any command line with -Oz (or -Os) on it, whatever -O
#    follows, and without inlining std::vector's growth calls a function per element: both
#    option sets turn inlining back on.
#  - the linker keeps the first copy it meets of a template the sources share (std::vector's
#    growth, say), and a copy compiled for size fills a buffer element by element: the module
#    links these sources' objects ahead of the libraries (wasm/CMakeLists.txt), so their copies
#    are the ones kept (all but the keyframe-delta composition's: see below).
# Native builds are not affected.
set(FOURDGS_WASM_SPEED_SOURCES streams/codec.cpp streams/stream.cpp decode/decode.cpp
    scene/reconstruct.cpp)
set(fourdgs_wasm_optimized $<NOT:$<CONFIG:Debug>>)
add_compile_options("$<${fourdgs_wasm_optimized}:-Oz;-finline-functions>")
set(FOURDGS_WASM_SPEED_OPTIONS "$<${fourdgs_wasm_optimized}:-O3;-finline-functions>")
foreach(source ${FOURDGS_WASM_SPEED_SOURCES})
  set_property(SOURCE ${PROJECT_SOURCE_DIR}/src/${source} APPEND PROPERTY COMPILE_OPTIONS
               ${FOURDGS_WASM_SPEED_OPTIONS})
endforeach()
# The keyframe-delta composition is compiled for speed too, but linked from the archive, after
# the sources above: linked first, its copies of the templates it shares with the size-compiled
# rest (its own ChunkBins and id walks, which the decoders do not use) were kept for the whole
# module, 7.7 KB gzipped more (252,651 against 244,969 bytes), past the budget. The templates
# it shares with the decoders keep the decoders' copies, which are compiled for speed.
set_property(SOURCE ${PROJECT_SOURCE_DIR}/src/decode/keyframe_composition.cpp APPEND PROPERTY
             COMPILE_OPTIONS ${FOURDGS_WASM_SPEED_OPTIONS})

# C++ outside the library may use exceptions (the C ABI's catch, the tests, the conformance
# tool); the library's own targets add -fno-exceptions after this, which wins.
add_compile_options($<$<COMPILE_LANGUAGE:CXX>:-fexceptions>)
add_link_options(-fexceptions)
# Programs (tests, the conformance tool, benchmarks) run under node with the host's files
# (NODERAWFS), a growing heap, and exit when main returns. The npm package's module sets
# FOURDGS_WASM_MODULE on its target and its own link options (wasm/CMakeLists.txt).
add_link_options("$<$<NOT:$<BOOL:$<TARGET_PROPERTY:FOURDGS_WASM_MODULE>>>:-sNODERAWFS=1;-sALLOW_MEMORY_GROWTH=1;-sEXIT_RUNTIME=1;-sTOTAL_STACK=8388608>")

# The same sources the Debian packages are built from, with the options that fit a browser:
# no assembly (zstd's x86 Huffman decoder), no multi-threaded compression, no legacy zstd frames
# (.4dgs streams are written by zstd ≥ 1.4).
file(GLOB fourdgs_zstd_sources ${fourdgs_zstd_dir}/common/*.c ${fourdgs_zstd_dir}/compress/*.c
     ${fourdgs_zstd_dir}/decompress/*.c)
add_library(fourdgs_wasm_zstd STATIC ${fourdgs_zstd_sources})
target_compile_definitions(fourdgs_wasm_zstd PRIVATE ZSTD_DISABLE_ASM ZSTD_LEGACY_SUPPORT=0
                           XXH_NAMESPACE=ZSTD_ ZSTD_TRACE=0)
target_include_directories(fourdgs_wasm_zstd INTERFACE $<BUILD_INTERFACE:${fourdgs_zstd_dir}>)

add_library(fourdgs_wasm_lz4 STATIC ${fourdgs_lz4_dir}/lz4.c ${fourdgs_lz4_dir}/lz4hc.c)
target_include_directories(fourdgs_wasm_lz4 INTERFACE $<BUILD_INTERFACE:${fourdgs_lz4_dir}>)

# libdeflate keeps its bit buffer in a machine word, size_t, which is 32 bits on wasm32 although
# WebAssembly computes in 64-bit registers as fast: with a 32-bit word the decompressor refills
# twice as often and copies matches 4 bytes at a time. It is compiled here from a copy of its
# sources whose machine word is 64 bits, the code path it runs on x86-64 and arm64 (a seek of the
# bench scene is about 15 % faster).
set(fourdgs_deflate_copy "${CMAKE_BINARY_DIR}/wasm-libdeflate")
file(COPY ${fourdgs_deflate_dir}/lib ${fourdgs_deflate_dir}/libdeflate.h
     DESTINATION ${fourdgs_deflate_copy})
file(READ ${fourdgs_deflate_dir}/common_defs.h fourdgs_defs)
string(REPLACE "typedef size_t machine_word_t;" "typedef unsigned long long machine_word_t;"
       fourdgs_defs_64 "${fourdgs_defs}")
if(fourdgs_defs_64 STREQUAL fourdgs_defs)
  message(FATAL_ERROR "${fourdgs_deflate_dir}/common_defs.h has no 'typedef size_t machine_word_t;'")
endif()
file(WRITE ${fourdgs_deflate_copy}/common_defs.h.new "${fourdgs_defs_64}")
configure_file(${fourdgs_deflate_copy}/common_defs.h.new ${fourdgs_deflate_copy}/common_defs.h
               COPYONLY)  # rewritten only when it changes
file(GLOB fourdgs_deflate_sources ${fourdgs_deflate_copy}/lib/*.c)
add_library(fourdgs_wasm_libdeflate STATIC ${fourdgs_deflate_sources})
target_include_directories(fourdgs_wasm_libdeflate PUBLIC
                           $<BUILD_INTERFACE:${fourdgs_deflate_copy}>)
set_property(SOURCE ${fourdgs_deflate_copy}/lib/deflate_decompress.c
             ${fourdgs_deflate_copy}/lib/zlib_decompress.c ${fourdgs_deflate_copy}/lib/adler32.c
             ${fourdgs_deflate_copy}/lib/crc32.c APPEND PROPERTY COMPILE_OPTIONS
             ${FOURDGS_WASM_SPEED_OPTIONS})

foreach(codec fourdgs_wasm_zstd fourdgs_wasm_lz4 fourdgs_wasm_libdeflate)
  target_compile_options(${codec} PRIVATE -w)  # third-party code: its warnings are not ours
  set_target_properties(${codec} PROPERTIES C_VISIBILITY_PRESET hidden)
endforeach()
install(TARGETS fourdgs_wasm_zstd fourdgs_wasm_lz4 fourdgs_wasm_libdeflate EXPORT fourdgsTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})

set(FOURDGS_ZSTD fourdgs_wasm_zstd)
add_library(PkgConfig::LZ4 ALIAS fourdgs_wasm_lz4)
add_library(PkgConfig::LIBDEFLATE ALIAS fourdgs_wasm_libdeflate)

# No shared libraries on the web. Left unsupported, emscripten would turn each add_library(SHARED)
# into a static archive under the same name as the static variant; allowed, `-shared` links a
# relocatable wasm object under its own name (libfourdgs.so), which programs link like an archive.
set_property(GLOBAL PROPERTY TARGET_SUPPORTS_SHARED_LIBS TRUE)

# Catch2 v2 is one header: the tests use the host's copy through a directory that holds only
# it (the host's /usr/include on the include path would hide emscripten's C library), and its
# CMake module (catch_discover_tests runs the test program through the emulator, node).
if(FOURDGS_BUILD_TESTS)
  find_path(FOURDGS_HOST_CATCH2 catch2/catch.hpp PATHS /usr/include NO_CMAKE_FIND_ROOT_PATH
            REQUIRED)
  find_path(FOURDGS_HOST_CATCH2_CMAKE Catch.cmake PATHS /usr/lib/cmake/Catch2
            /usr/share/cmake/Catch2 NO_CMAKE_FIND_ROOT_PATH REQUIRED)
  set(fourdgs_catch2_dir "${CMAKE_BINARY_DIR}/wasm-catch2")
  file(MAKE_DIRECTORY "${fourdgs_catch2_dir}/include")
  file(CREATE_LINK "${FOURDGS_HOST_CATCH2}/catch2" "${fourdgs_catch2_dir}/include/catch2" SYMBOLIC)
  file(WRITE "${fourdgs_catch2_dir}/Catch2Config.cmake"
       "add_library(Catch2::Catch2 INTERFACE IMPORTED)\n"
       "set_target_properties(Catch2::Catch2 PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "
       "\"${fourdgs_catch2_dir}/include\")\n"
       "list(APPEND CMAKE_MODULE_PATH \"${FOURDGS_HOST_CATCH2_CMAKE}\")\n")
  set(Catch2_DIR "${fourdgs_catch2_dir}" CACHE PATH "" FORCE)
  # Without threads, the test cases that start threads of their own (the player, the
  # prefetcher, a pipe fed by a writer thread, concurrent decodes) cannot run: they carry the tag
  # [threads] and are left out here; the threaded tree runs them.
  if(NOT FOURDGS_WASM_THREADS)
    set(FOURDGS_CATCH_DISCOVER_OPTIONS TEST_SPEC "~[threads]")
  endif()
endif()
