/* Prints the size of every struct of capi/fourdgs.h the C# binding mirrors, and the offset of
 * each of its fields, as the C compiler lays them out: "<C# struct> <C# field or -> <value>".
 * The C# test compares each line with Marshal.SizeOf / Marshal.OffsetOf. The field list
 * (layout_fields.inc) names the C field beside the C# one; a C field the binding lacks shows up
 * as a size mismatch. */
#include <stddef.h>
#include <stdio.h>

#include <fourdgs/fourdgs.h>

#define S(type, name) printf("%s - %zu\n", name, sizeof(type))
#define F(type, field, name, cs_field) printf("%s %s %zu\n", name, cs_field, offsetof(type, field))

int main(void) {
#include "layout_fields.inc"
    return 0;
}
