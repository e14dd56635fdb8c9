#include "test_util.h"
static void placeholder(void **state) { (void)state; }
static const struct CMUnitTest tests[] = { cmocka_unit_test(placeholder) };
XS_TEST_MAIN(tests)
