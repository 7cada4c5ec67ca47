/*
 * test_kernels_cpu_formats.c — the kernels' own fp32 decoders agree with the exact reference
 * decoder on every code of every small format (the kernels may not include reference/).
 */
#include <math.h>
#include <string.h>

#include <criterion/criterion.h>

#include "kernels/cpu/cpu_kernels.h"
#include "reference/gg_ref.h"

Test(kernels_cpu_formats, every_code_matches_the_reference)
{
    static const enum gg_dtype types[] = {GG_DTYPE_E4M3, GG_DTYPE_E5M2, GG_DTYPE_E4M3FNUZ,
                                          GG_DTYPE_E5M2FNUZ, GG_DTYPE_E2M1, GG_DTYPE_E8M0};
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
        uint32_t codes = types[i] == GG_DTYPE_E2M1 ? 16 : 256;
        float table[256];
        cpu_decode_table(types[i], table);
        for (uint32_t c = 0; c < codes; c++) {
            double want = gg_decode(types[i], c);
            float got = cpu_decode_small(types[i], c);
            cr_expect(memcmp(&table[c], &got, sizeof got) == 0, "%s table[%u]", gg_dtype_name(types[i]), c);
            if (isnan(want))
                cr_expect(isnan(got), "%s code 0x%02x: %g, want NaN", gg_dtype_name(types[i]), c, got);
            else
                cr_expect((double)got == want && !signbit(got) == !signbit(want),
                          "%s code 0x%02x: %a, want %a", gg_dtype_name(types[i]), c, got, want);
        }
    }
}

Test(kernels_cpu_formats, e2m1_nibbles)
{
    const uint8_t packed[2] = {0x2F, 0x71};
    cr_expect_eq(cpu_e2m1_code(packed, 0), 0xF);
    cr_expect_eq(cpu_e2m1_code(packed, 1), 0x2);
    cr_expect_eq(cpu_e2m1_code(packed, 2), 0x1);
    cr_expect_eq(cpu_e2m1_code(packed, 3), 0x7);
}
