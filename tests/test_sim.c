#include "test_util.h"
#include <errno.h>
static void sim_smoke(void **state)
{
	struct sim_dev *dev; struct sim_hwq *hq; uint64_t seq;
	struct sim_cmd k = { .kind = SIM_CMD_KERNEL, .duration_ns = 1000000 };
	(void)state;
	assert_int_equal(sim_dev_open(test_dev("smoke"), NULL, &dev), 0);
	assert_int_equal(sim_hwq_create(dev, &hq), 0);
	for (int i = 0; i < 10; i++) assert_int_equal(sim_hwq_launch(hq, &k, &seq), 0);
	assert_int_equal(sim_hwq_wait(hq, seq, 0), 0);
	struct sim_hwq_info info; sim_hwq_info_get(hq, &info);
	printf("busy %lu executed %lu\n", (unsigned long)info.busy_ns, (unsigned long)info.executed);
	sim_hwq_destroy(hq); sim_dev_close(dev);
}
static const struct CMUnitTest tests[] = { cmocka_unit_test(sim_smoke) };
XS_TEST_MAIN(tests)
