# CMake toolchain file for the WebAssembly build of fourdgs (docs/web.md), with the emscripten
# that Debian packages (apt-get install emscripten). Use it through the presets:
#
#   cmake --preset wasm            single-threaded (runs everywhere)
#   cmake --preset wasm-threads    with threads (browsers need cross-origin isolation)
#
# or directly: cmake -S . -B build-wasm -G Ninja -DCMAKE_TOOLCHAIN_FILE=wasm/toolchain.cmake
#
# It finds emscripten's own toolchain file (EMSCRIPTEN_ROOT, then the root `em-config` names) and
# adds what Debian's packaging needs: emcc's JavaScript passes load acorn from NODE_PATH
# (/usr/share/nodejs), and programs run under node (ctest, through CMAKE_CROSSCOMPILING_EMULATOR)
# read their .wasm from disk, not through node's fetch().
if(NOT FOURDGS_EMSCRIPTEN_ROOT)
  if(DEFINED ENV{EMSCRIPTEN_ROOT})
    set(FOURDGS_EMSCRIPTEN_ROOT "$ENV{EMSCRIPTEN_ROOT}")
  else()
    find_program(FOURDGS_EM_CONFIG em-config)
    if(FOURDGS_EM_CONFIG)
      execute_process(COMMAND ${FOURDGS_EM_CONFIG} EMSCRIPTEN_ROOT
                      OUTPUT_VARIABLE FOURDGS_EMSCRIPTEN_ROOT OUTPUT_STRIP_TRAILING_WHITESPACE)
    endif()
  endif()
  if(NOT EXISTS "${FOURDGS_EMSCRIPTEN_ROOT}/cmake/Modules/Platform/Emscripten.cmake")
    message(FATAL_ERROR "emscripten not found (Debian: apt-get install emscripten; or set EMSCRIPTEN_ROOT)")
  endif()
  set(FOURDGS_EMSCRIPTEN_ROOT "${FOURDGS_EMSCRIPTEN_ROOT}" CACHE PATH "emscripten's root directory")
endif()

find_program(FOURDGS_NODE NAMES node nodejs REQUIRED)
set(CMAKE_CROSSCOMPILING_EMULATOR "${FOURDGS_NODE};--no-experimental-fetch"
    CACHE STRING "Runs the built programs (ctest)")

include("${FOURDGS_EMSCRIPTEN_ROOT}/cmake/Modules/Platform/Emscripten.cmake")

if(EXISTS /usr/share/nodejs/acorn)
  set(CMAKE_C_LINKER_LAUNCHER env NODE_PATH=/usr/share/nodejs)
  set(CMAKE_CXX_LINKER_LAUNCHER env NODE_PATH=/usr/share/nodejs)
endif()
