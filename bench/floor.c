/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * bench/floor: attach bpf/floor.bpf.c's programs, which do nothing, to the
 * tracepoints where caad's observer runs; print their ids on one line,
 * {"progs": [ID, ...]}; detach and exit at SIGTERM or SIGINT. bench/observer
 * runs it during its statistics streams: the kernel's BPF statistics for
 * these programs are what any program costs on those tracepoints on that
 * machine, against which caad's own programs can be read.
 */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "floor.skel.h"

int main(void)
{
	struct caad_floor_bpf *skel;
	struct bpf_program *prog;
	bool first = true;
	sigset_t stop;
	int r, sig;

	/* before anything can start: a signal now waits for sigwait() */
	sigemptyset(&stop);
	sigaddset(&stop, SIGTERM);
	sigaddset(&stop, SIGINT);
	sigprocmask(SIG_BLOCK, &stop, NULL);

	skel = caad_floor_bpf__open_and_load();
	if (!skel) {
		fprintf(stderr, "bench/floor: loading the programs: %s\n", strerror(errno));
		return 1;
	}
	r = caad_floor_bpf__attach(skel);
	if (r < 0) {
		fprintf(stderr, "bench/floor: attaching the programs: %s\n", strerror(-r));
		caad_floor_bpf__destroy(skel);
		return 1;
	}
	printf("{\"progs\": [");
	bpf_object__for_each_program(prog, skel->obj) {
		struct bpf_prog_info info = {};
		__u32 len = sizeof(info);

		if (bpf_obj_get_info_by_fd(bpf_program__fd(prog), &info, &len) < 0) {
			fprintf(stderr, "bench/floor: %s: %s\n", bpf_program__name(prog), strerror(errno));
			caad_floor_bpf__destroy(skel);
			return 1;
		}
		printf("%s%u", first ? "" : ", ", info.id);
		first = false;
	}
	printf("]}\n");
	fflush(stdout);
	sigwait(&stop, &sig);
	caad_floor_bpf__destroy(skel);
	return 0;
}
