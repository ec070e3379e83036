// The Catch2 (v2) test runner; every tests/test_*.cpp adds its cases.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
