// Compiles every public header once with the library's flags (-fno-exceptions -fno-rtti), so a
// header that would not build the way engines build fails here first.
#include "fourdgs/fourdgs.hpp"
