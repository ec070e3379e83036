/* The npm package's module has no code of its own: it is the C ABI (fourdgs.h) over the core
 * library, linked with the functions wasm/CMakeLists.txt exports. */
typedef int fourdgs_module_has_no_code_of_its_own;
