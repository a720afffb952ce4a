/* SPDX-License-Identifier: GPL-2.0-or-later */
/* state.json: every heavy flow, a bounded number of the others, the count. */
#include <dirent.h>
#include <errno.h>
#include <json-c/json.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <cmocka.h>

#include "caad/macro.h"
#include "caad/plan.h"
#include "caad/state.h"
#include "caad/sysfs.h"

static void test_bounded_list(void **state)
{
	const size_t n = CAAD_STATE_LIGHT_MAX + 44 + 2;
	_cleanup_free_ struct caad_flow *flows = calloc(n, sizeof(*flows));
	_cleanup_free_ char *text = NULL;
	struct caad_decision *dec = calloc(2, sizeof(*dec));
	struct caad_plan *plan = NULL;
	char dir[] = "/tmp/caad-test-state.XXXXXX", path[sizeof(dir) + 16];
	json_object *root, *list, *x;
	struct dirent *de;
	DIR *d;

	assert_non_null(flows);
	assert_non_null(dec);
	for (size_t i = 0; i < n; i++)
		flows[i] = (struct caad_flow){ .id = 1000 + i, .family = AF_INET, .consumer_cpu = -1, .proc_cpu = -1,
			                       .rx_queue = -1 };
	/* two heavy flows at the end, past the light ones listed */
	for (size_t k = 0; k < 2; k++)
		dec[k] = (struct caad_decision){ .flow = n - 2 + k, .flow_id = flows[n - 2 + k].id, .steer_cpu = 3,
			                         .relation = CAAD_RELATION_PEER_CORE_SAME_LLC, .reason = "why",
			                         .considered = "" };
	/* the last one moved to rx queue 5 by an ntuple rule */
	dec[1].ntuple = true;
	dec[1].queue = 5;
	dec[1].held = true;
	assert_int_equal(caad_plan_from_decisions(dec, 2, 0, &plan), 0);

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/state.json", dir);
	assert_int_equal(caad_state_write(path, flows, n, NULL, plan, "enforce"), 0);
	assert_int_equal(caad_read_file(path, &text), 0);
	root = json_tokener_parse(text);
	assert_non_null(root);
	assert_true(json_object_object_get_ex(root, "n_flows", &x));
	assert_int_equal(json_object_get_int64(x), n);
	assert_true(json_object_object_get_ex(root, "flows_omitted", &x));
	assert_int_equal(json_object_get_int64(x), 44);
	assert_true(json_object_object_get_ex(root, "flows", &list));
	assert_int_equal(json_object_array_length(list), CAAD_STATE_LIGHT_MAX + 2);
	/* the heavy ones are there, with their decision */
	size_t heavy = 0;
	for (size_t i = 0; i < json_object_array_length(list); i++) {
		json_object *fl = json_object_array_get_idx(list, i), *h;
		assert_true(json_object_object_get_ex(fl, "heavy", &h));
		if (json_object_get_boolean(h)) {
			heavy++;
			bool last = heavy == 2;

			assert_true(json_object_object_get_ex(fl, "steer_cpu", &h));
			assert_int_equal(json_object_get_int(h), 3);
			assert_true(json_object_object_get_ex(fl, "held", &h));
			assert_int_equal(json_object_get_boolean(h), last);
			assert_true(json_object_object_get_ex(fl, "shares_queue", &h));
			assert_false(json_object_get_boolean(h));
			assert_true(json_object_object_get_ex(fl, "ntuple_queue", &h));
			if (last)
				assert_int_equal(json_object_get_int(h), 5);
			else
				assert_null(h); /* JSON null */
			/* its id as shown: the hash of the socket's address, never the address */
			char want[32], raw[32];
			snprintf(want, sizeof(want), "%#llx",
			         (unsigned long long)caad_flow_public_id(flows[n - 3 + heavy].id));
			snprintf(raw, sizeof(raw), "%#llx", (unsigned long long)flows[n - 3 + heavy].id);
			assert_true(json_object_object_get_ex(fl, "id", &h));
			assert_string_equal(json_object_get_string(h), want);
			assert_string_not_equal(want, raw);
		}
	}
	assert_int_equal(heavy, 2);
	json_object_put(root);
	/* the temporary file it was written to went away: state.json alone */
	d = opendir(dir);
	assert_non_null(d);
	while ((de = readdir(d)))
		if (!streq(de->d_name, ".") && !streq(de->d_name, ".."))
			assert_string_equal(de->d_name, "state.json");
	closedir(d);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(rmdir(dir), 0);
	caad_plan_free(plan);
}

/* An empty name is no directory (it was read past its end). */
static void test_mkdir_p(void **state)
{
	char dir[] = "/tmp/caad-test-mkdir.XXXXXX", path[sizeof(dir) + 16];

	assert_int_equal(caad_mkdir_p("", 0755), -ENOENT);
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/a/b", dir);
	assert_int_equal(caad_mkdir_p(path, 0755), 0);
	assert_int_equal(caad_mkdir_p(path, 0755), 0);
	assert_int_equal(rmdir(path), 0);
	path[strlen(path) - 2] = '\0';
	assert_int_equal(rmdir(path), 0);
	assert_int_equal(rmdir(dir), 0);
}

static void test_unwritable(void **state)
{
	struct caad_flow f = { .id = 1, .consumer_cpu = -1, .proc_cpu = -1, .rx_queue = -1 };

	assert_int_equal(caad_state_write("/nonexistent-dir/state.json", &f, 1, NULL, NULL, "enforce"), -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bounded_list),
		cmocka_unit_test(test_unwritable),
		cmocka_unit_test(test_mkdir_p),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
