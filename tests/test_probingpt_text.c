/* Tests of probingpt's text handling: the exact float parser against strtof, field splitting as
 * Moses does it, alignment points, and float formatting that reads back the same float. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ppt_text.h"
#include "probingpt.h"

static int same_float(float a, float b) { return memcmp(&a, &b, sizeof a) == 0; }

static void check_against_strtof(const char *s)
{
    char *end;
    float want = strtof(s, &end);
    /* decimals only: hex floats (which strtof reads) are refused, as by common/smt_num */
    int valid = *s && *end == '\0' && isfinite(want) && !strpbrk(s, "xX");
    float got = 12345.0f;
    int rc = ppt_parse_float(s, s + strlen(s), &got);
    if (valid) {
        cr_assert_eq(rc, 0, "'%s' rejected", s);
        cr_assert(same_float(got, want), "'%s': got %.9g, strtof %.9g", s, (double)got, (double)want);
    } else {
        cr_assert_eq(rc, -1, "'%s' accepted as %.9g", s, (double)got);
    }
}

Test(ppt_float, fixed_cases)
{
    const char *cases[] = {"0", "-0", "1", "0.5", "0.000196475", "0.00483908", "1e-05", "1.5e-07",
                           "3.0781e-10", "2.02653e-07", "16777216", "16777217", "16777215.5",
                           "0.1", "0.2", "0.3", "1234567", "1.23457e+06", "9999999", "0.99999994",
                           "1e10", "1e-10", "1e11", "1e-11", "3.4028235e38", "1e39", "1e-46",
                           "1.17549435e-38", "1.4e-45", "+2.5", ".5", "5.", "-.5e1", "1e", "1e+",
                           "", "-", ".", "abc", "1x", "0x10", "inf", "nan", "-inf", "1..2", "1e5.5",
                           "00000000000000000000000000000000001", "0.0000000000000000000000000001",
                           "123456789012345678901234567890", "4.9406564584124654e-324"};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        check_against_strtof(cases[i]);
}

Test(ppt_float, random_decimals_match_strtof)
{
    srand(42);
    char buf[64];
    for (int i = 0; i < 300000; i++) {
        int form = rand() % 4;
        unsigned long m = (unsigned long)rand() % (form == 3 ? 100000000ul : 10000000ul);
        int e = rand() % 24 - 14;
        if (form == 0)
            snprintf(buf, sizeof buf, "%.*g", 1 + rand() % 9, (double)rand() / RAND_MAX * pow(10, e));
        else if (form == 1)
            snprintf(buf, sizeof buf, "%lue%d", m, e);
        else if (form == 2)
            snprintf(buf, sizeof buf, "0.%0*lu", 1 + rand() % 12, m);
        else
            snprintf(buf, sizeof buf, "%lu.%lu", m / 1000, m % 1000);
        check_against_strtof(buf);
    }
}

Test(ppt_float, format_reads_back)
{
    srand(7);
    char buf[32];
    for (int i = 0; i < 200000; i++) {
        uint32_t bits = (uint32_t)rand() << 16 ^ (uint32_t)rand();
        float v;
        memcpy(&v, &bits, sizeof v);
        if (!isfinite(v))
            continue;
        int n = ppt_format_float(buf, v);
        float back;
        cr_assert_eq(ppt_parse_float(buf, buf + n, &back), 0, "%s", buf);
        cr_assert(same_float(back, v) || (v == 0 && back == 0), "%s", buf);
    }
    ppt_format_float(buf, 0.000196475f);
    cr_assert_str_eq(buf, "0.000196475");
    ppt_format_float(buf, 1234567.0f);
    cr_assert_str_eq(buf, "1234567");
    ppt_format_float(buf, 1e-05f);
    cr_assert_str_eq(buf, "1e-05");
}

static int split(const char *s, ppt_span *f, ppt_span *rest)
{
    return ppt_split_fields(s, strlen(s), f, rest);
}

static int span_is(ppt_span s, const char *want)
{
    return (size_t)(s.e - s.b) == strlen(want) && memcmp(s.b, want, strlen(want)) == 0;
}

Test(ppt_fields, split_as_moses)
{
    ppt_span f[PPT_FIELDS_MAX], rest;
    cr_assert_eq(split("a b ||| c ||| 0.5 1", f, &rest), 3);
    cr_assert(span_is(f[0], "a b") && span_is(f[1], "c") && span_is(f[2], "0.5 1"));
    cr_assert_eq(split("x ||| y ||| 1 ||| 0-0 ||| 1 1 1 ||| |||", f, &rest), 6);
    cr_assert(span_is(f[4], "1 1 1") && span_is(rest, " |||"));
    cr_assert_eq(split("x ||| ||| 1", f, &rest), 3);
    cr_assert(span_is(f[1], ""));
    cr_assert_eq(split("just words", f, &rest), 1);
    cr_assert_eq(split("a || b | c ||| d", f, &rest), 2);
    cr_assert(span_is(f[0], "a || b | c"));
    cr_assert_eq(split("", f, &rest), 1);
    cr_assert(span_is(f[0], ""));
    /* carriage returns ending a line are line ending: a dump read again is the same table */
    cr_assert_eq(split("a ||| b ||| 1\r\r", f, &rest), 3);
    cr_assert(span_is(f[2], "1"));
    cr_assert_eq(split("x ||| y ||| 1 ||| 0-0 ||| 1 1 1 ||| z\r\r\r", f, &rest), 6);
    cr_assert(span_is(rest, " z"));
    cr_assert_eq(split("a\r ||| b", f, &rest), 2);
    cr_assert(span_is(f[0], "a\r"), "inside a line a carriage return is text");
}

Test(ppt_fields, alignment_points)
{
    uint8_t p[16];
    ppt_span bad;
    const char *s = "0-0 1-2  10-3";
    ppt_span sp = {s, s + strlen(s)};
    cr_assert_eq(ppt_parse_alignment(sp, p, 8, &bad), 3);
    cr_assert(p[4] == 10 && p[5] == 3);
    const char *badcases[] = {"0-", "-1", "0-0-0", "a-1", "255-0", "1000-1", "0_0", "0-0 x"};
    for (size_t i = 0; i < sizeof badcases / sizeof *badcases; i++) {
        ppt_span b = {badcases[i], badcases[i] + strlen(badcases[i])};
        cr_assert_eq(ppt_parse_alignment(b, p, 8, &bad), -1, "%s", badcases[i]);
    }
}
